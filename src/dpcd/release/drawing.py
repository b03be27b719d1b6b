"""Drawing a released graph: a DAG or CPDAG on matplotlib axes, and a figure file without timestamps.

An undirected edge (stored as both ``u -> v`` and ``v -> u`` in the package's
PDAG convention) is drawn once as a plain line; directed edges get an arrow.
The layout is deterministic (Kamada-Kawai on the skeleton).

>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import matplotlib.pyplot as plt, networkx as nx
>>> fig, ax = plt.subplots()
>>> sorted(draw_graph(nx.DiGraph([("a", "b"), ("b", "c"), ("c", "b")]), ax))
['a', 'b', 'c']
>>> plt.close(fig)
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

import matplotlib
import networkx as nx
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["draw_graph", "save_figure"]


def _graph_layout(g: nx.DiGraph) -> dict[Hashable, np.ndarray]:
    """Deterministic layout of the skeleton (Kamada-Kawai; a circle when there is no edge)."""
    if g.number_of_nodes() == 0:
        return {}
    skeleton = nx.Graph()
    skeleton.add_nodes_from(sorted(g.nodes, key=str))
    skeleton.add_edges_from(g.edges)
    if skeleton.number_of_edges() == 0 or g.number_of_nodes() < 3:
        return nx.circular_layout(skeleton)
    return nx.kamada_kawai_layout(skeleton)


def draw_graph(
    g: nx.DiGraph,
    ax: Axes,
    pos: Mapping[Hashable, Any] | None = None,
    title: str | None = None,
    *,
    node_color: str = "#f2f2f2",
    edge_color: str = "#333333",
    node_size: int = 900,
    font_size: int = 9,
) -> dict[Hashable, Any]:
    """Draw a DAG or (C)PDAG on ``ax`` and return the node positions used.

    An undirected edge is stored as both ``u -> v`` and ``v -> u``; it is drawn
    once, as a plain line. Other edges get an arrow head. Pass the returned
    positions as ``pos`` to draw a second graph (e.g. the estimate next to the
    truth) with the same layout.
    """
    if not isinstance(g, nx.DiGraph):
        raise TypeError(f"g must be a networkx.DiGraph (undirected edges stored both ways), got {type(g).__name__}")
    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
    if pos is None:
        pos = _graph_layout(g)
    else:
        if not isinstance(pos, Mapping):
            raise TypeError(f"pos must be a dict node -> (x, y), got {type(pos).__name__}")
        missing = [n for n in g.nodes if n not in pos]
        if missing:
            raise ValueError(f"pos has no position for node(s) {missing[:5]}")
    undirected = {frozenset((u, v)) for u, v in g.edges if u != v and g.has_edge(v, u)}
    directed = [(u, v) for u, v in g.edges if frozenset((u, v)) not in undirected]
    undirected_pairs = [tuple(sorted(pair, key=str)) for pair in sorted(undirected, key=lambda p: sorted(map(str, p)))]
    nodes = nx.draw_networkx_nodes(g, pos, ax=ax, node_color=node_color, edgecolors=edge_color, node_size=node_size)
    if nodes is not None:
        nodes.set_zorder(3)  # edges end under the node discs
    for label in nx.draw_networkx_labels(g, pos, ax=ax, font_size=font_size).values():
        label.set_zorder(4)
    if directed:
        nx.draw_networkx_edges(
            g, pos, edgelist=directed, ax=ax, edge_color=edge_color, arrows=True, arrowstyle="-|>",
            arrowsize=14, node_size=node_size, width=1.3,
        )
    if undirected_pairs:
        nx.draw_networkx_edges(
            g.to_undirected(as_view=True), pos, edgelist=undirected_pairs, ax=ax, edge_color=edge_color,
            arrows=False, width=1.3,
        )
    if title is not None:
        ax.set_title(str(title))
    ax.set_axis_off()
    if pos:  # limits from every position given, so graphs sharing ``pos`` line up
        xy = np.array([np.asarray(p, dtype=float)[:2] for p in pos.values()])
        low, high = xy.min(axis=0), xy.max(axis=0)
        pad = 0.12 * np.maximum(high - low, 1e-9) + 0.05
        ax.set_xlim(low[0] - pad[0], high[0] + pad[0])
        ax.set_ylim(low[1] - pad[1], high[1] + pad[1])
    return dict(pos)


def save_figure(fig: Figure, folder: Path, name: str, *, dpi: int = 150) -> tuple[Path, Path]:
    """Write ``folder/name.png`` and ``folder/name.svg`` with no creation date or software stamp."""
    paths = []
    for fmt, metadata in (("png", {"Software": None}), ("svg", {"Date": None, "Creator": None})):
        path = Path(folder) / f"{name}.{fmt}"
        with matplotlib.rc_context({"svg.hashsalt": "dpcd"}):
            fig.savefig(path, format=fmt, dpi=dpi, bbox_inches="tight", metadata=metadata)
        paths.append(path)
    return paths[0], paths[1]

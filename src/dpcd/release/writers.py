"""Writing a release: the graph (JSON, GraphML, DOT, a drawing) and ``privacy.json``, all or nothing.

``graph.json``       nodes, directed and undirected edges (:func:`graph_to_json`)
``graph.graphml``    the same graph for Gephi/yEd/networkx (edge attribute ``type``)
``graph.dot``        Graphviz (undirected edges drawn with ``dir=none``)
``graph.png``/``.svg`` a drawing (optional)
``privacy.json``     the privacy statement (:func:`dpcd.release.api.privacy_report`)
``report.html``      one self-contained page with all of the above in plain words (:mod:`dpcd.release.html`)

:func:`write_outputs` builds the folder in a hidden temporary sibling and
moves it into place with one rename, so a failure at any point leaves nothing.

Examples
--------
>>> import networkx as nx
>>> g = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "b")])
>>> graph_to_json(g)["undirected_edges"], graph_to_json(g)["directed_edges"]
([['b', 'c']], [['a', 'b']])
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from ..graphs import directed_edges, undirected_edges

__all__ = ["GRAPH_FILES", "FIGURE_FILES", "graph_to_json", "graph_to_dot", "jsonable", "write_outputs"]

GRAPH_FILES = ("graph.json", "graph.graphml", "graph.dot", "privacy.json", "report.html")
FIGURE_FILES = ("graph.png", "graph.svg")


def jsonable(value: Any) -> Any:
    """``value`` with numpy scalars, tuples and non-finite floats made JSON-ready."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def graph_to_json(graph: nx.DiGraph, *, graph_type: str = "CPDAG", algorithm: str = "") -> dict[str, Any]:
    """``{"nodes": [...], "directed_edges": [[u, v], ...], "undirected_edges": [[u, v], ...], ...}``.

    An undirected edge (stored both ways in the package's PDAG convention) is
    listed once, its endpoints sorted; directed edges go ``[tail, head]``.
    """
    nodes = [str(v) for v in graph.nodes]
    directed = sorted([str(u), str(v)] for u, v in directed_edges(graph))
    undirected = sorted(sorted([str(u), str(v)]) for u, v in (tuple(e) for e in undirected_edges(graph)))
    return {"graph_type": graph_type, "algorithm": algorithm, "nodes": nodes,
            "directed_edges": directed, "undirected_edges": undirected}


def _dot_id(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def graph_to_dot(graph_json: Mapping[str, Any]) -> str:
    """Graphviz DOT text of a graph in :func:`graph_to_json` form."""
    lines = ["digraph G {"]
    lines += [f"  {_dot_id(v)};" for v in graph_json["nodes"]]
    lines += [f"  {_dot_id(u)} -> {_dot_id(v)};" for u, v in graph_json["directed_edges"]]
    lines += [f"  {_dot_id(u)} -> {_dot_id(v)} [dir=none];" for u, v in graph_json["undirected_edges"]]
    return "\n".join(lines) + "\n}\n"


def _graphml_graph(graph_json: Mapping[str, Any]) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(graph_json["nodes"])
    for u, v in graph_json["directed_edges"]:
        g.add_edge(u, v, type="directed")
    for u, v in graph_json["undirected_edges"]:
        g.add_edge(u, v, type="undirected")
        g.add_edge(v, u, type="undirected")
    g.graph["graph_type"] = graph_json["graph_type"]
    return g


def write_outputs(out: str | os.PathLike[str], graph: nx.DiGraph, privacy: Mapping[str, Any], *,
                  graph_type: str = "CPDAG", algorithm: str = "", title: str | None = None,
                  overwrite: bool = False, draw: bool = True, forecast: Any = None,
                  forecast_note: str = "", timestamp: float | None = None, headline: str = "",
                  warnings: tuple[str, ...] | list[str] = ()) -> dict[str, Path]:
    """Write every output file into ``out``, atomically (all or nothing).

    The files are written into a hidden temporary folder next to ``out`` and
    moved into place with one rename; ``out`` must not exist or be empty
    unless ``overwrite``. ``forecast`` (a :func:`dpcd.forecast.forecast` table) and
    ``forecast_note`` go on ``report.html``, which leads with ``warnings`` and the ``headline`` verdict (public
    inputs only, like every word of the page). ``timestamp`` (seconds since the
    epoch; None: the time of writing) becomes every file's and the folder's
    modification time: a release passes the time it began, before any data
    were read, so that the files do not carry how long the run took (a time
    that depends on the data) to whoever receives them. The file system's
    change time (ctime, and a birth time where it keeps one) cannot be set by
    any program and still records when each file was written: publish the
    files' contents (an archive that stores modification times only, an
    upload), never the folder as it lies on a shared file system. Returns
    ``{file name: final path}``.
    """
    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out must be a folder path, got {type(out).__name__}")
    target = Path(out)
    if target.exists() and not target.is_dir():
        raise ValueError(f"out {os.fspath(out)!r} exists and is not a folder")
    if target.is_dir() and any(target.iterdir()) and not overwrite:
        raise ValueError(f"out {os.fspath(out)!r} is not empty; choose a new folder or pass overwrite")
    parent = target.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent))
    try:
        payload = graph_to_json(graph, graph_type=graph_type, algorithm=algorithm)
        (staging / "graph.json").write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        nx.write_graphml(_graphml_graph(payload), staging / "graph.graphml")
        (staging / "graph.dot").write_text(graph_to_dot(payload), encoding="utf-8")
        (staging / "privacy.json").write_text(json.dumps(jsonable(privacy), indent=2) + "\n", encoding="utf-8")
        svg, aliases = None, {}
        if draw:
            svg, aliases = _draw(graph, staging, title)
        from .html import render_report

        (staging / "report.html").write_text(
            render_report(payload, jsonable(privacy), svg=svg, aliases=aliases, forecast=forecast,
                          forecast_note=forecast_note, headline=headline, warnings=warnings),
            encoding="utf-8")
        if timestamp is not None:
            for path in [*staging.iterdir(), staging]:
                os.utime(path, (timestamp, timestamp))
        if target.exists():
            backup = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=parent))
            backup.rmdir()
            os.replace(target, backup)
            os.replace(staging, target)
            shutil.rmtree(backup, ignore_errors=True)
        else:
            os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {name: target / name for name in GRAPH_FILES + (FIGURE_FILES if draw else ())}


def _draw(graph: nx.DiGraph, folder: Path, title: str | None) -> tuple[str, dict[str, str]]:
    """Write graph.png/graph.svg into ``folder``; return the SVG's ``<svg>`` element for the HTML page and
    ``{id: name}`` for the names drawn as a short id (:func:`dpcd.release.drawing.node_labels`)."""
    from .drawing import graph_figure, save_figure

    fig, drawing = graph_figure(graph, title=title)
    save_figure(fig, folder, "graph")
    text = (folder / "graph.svg").read_text(encoding="utf-8")
    return text[text.index("<svg"):], drawing.aliases

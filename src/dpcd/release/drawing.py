"""Drawing a released graph: a DAG or CPDAG on matplotlib axes, and a figure file without timestamps.

Each node is a rounded box sized to its name, in a font large enough to read
(10 pt in :func:`graph_figure`, the drawing of ``graph.png``, ``graph.svg`` and
``report.html``). An undirected edge (stored as both ``u -> v`` and ``v -> u``
in the package's PDAG convention) is drawn once as a plain line; directed
edges get an arrow.

The layout is deterministic: Kamada-Kawai on the skeleton, turned so its long
side is horizontal and most arrows point down, spread to a size that grows
with the number of nodes, then pushed apart until no two boxes overlap. No
edge is drawn through a node it does not join: an edge whose straight line
would cross another node's box is bent into an arc (``arc3``) whose radius
clears every box, and where no arc does, the node in the way is moved aside.
:func:`edge_node_crossings` checks this geometrically.

A name the installed fonts cannot show (for example CJK column names where no
CJK font is installed) is drawn as a short id such as ``v7``; the drawing's
``aliases`` map each id back to the name, and ``report.html`` lists them.

>>> import networkx as nx
>>> fig, drawing = graph_figure(nx.DiGraph([("a", "b"), ("b", "c"), ("c", "b")]))
>>> sorted(drawing.labels.values()), drawing.directed, drawing.undirected, drawing.crossings()
(['a', 'b', 'c'], [('a', 'b')], [('b', 'c')], [])
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib
import networkx as nx
import numpy as np
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle
from matplotlib.transforms import ScaledTranslation

__all__ = [
    "REPORT_WIDTH_INCHES",
    "LABEL_POINTS",
    "GraphDrawing",
    "font_families",
    "drawable",
    "node_labels",
    "graph_layout",
    "edge_node_crossings",
    "plan_drawing",
    "render",
    "draw_graph",
    "graph_figure",
    "save_figure",
]

REPORT_WIDTH_INCHES = 9.6
"""Widest drawing :func:`graph_figure` aims for: ``report.html`` is 60rem = 960 px = 10 in wide (at 96 px per
inch), and :func:`save_figure` adds 0.1 in around the content, so up to this width the page shows the drawing
at full size and its 10 pt labels stay 10 pt."""

LABEL_POINTS = 10.0
"""Font size of the node labels in :func:`graph_figure`, in points."""

_MARGIN = 0.04  # inches: an edge must keep this far from every box it does not join
_GAP = (0.32, 0.30)  # inches: least free space between two boxes, horizontally and vertically
_BENDS = tuple(s * r for r in (0.12, 0.24, 0.36, 0.5, 0.65, 0.8, 1.0, 1.25) for s in (1, -1))
_WRAP = 18  # characters: longer names are wrapped at spaces, "_", "-" or "." where possible

# Fonts with wide Unicode coverage, used after the default font where they are installed.
_WIDE_FONTS = (
    "Noto Sans CJK JP", "Noto Sans CJK SC", "Noto Sans CJK TC", "Noto Sans CJK KR", "Noto Sans JP", "Noto Sans SC",
    "Noto Sans TC", "Noto Sans KR", "Source Han Sans", "Source Han Sans JP", "Source Han Sans SC",
    "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Droid Sans Fallback", "IPAexGothic", "IPAGothic", "TakaoGothic",
    "VL Gothic", "Microsoft YaHei", "SimHei", "Yu Gothic", "Meiryo", "MS Gothic", "Malgun Gothic", "PingFang SC",
    "Hiragino Sans", "Apple SD Gothic Neo", "Arial Unicode MS", "Noto Sans", "Noto Sans Arabic",
    "Noto Sans Hebrew", "Noto Sans Devanagari", "Noto Sans Thai", "FreeSans", "Unifont",
)


# --------------------------------------------------------------------------- fonts and labels

def font_families() -> list[str]:
    """The font families node labels are drawn with: matplotlib's default sans-serif font, then every
    installed font of a list with wide Unicode coverage (CJK and others), which matplotlib (>= 3.6) falls back
    on glyph by glyph.

    >>> "DejaVu Sans" in font_families()  # matplotlib's own default, shipped with it
    True
    """
    return list(_font_families())


@functools.lru_cache(maxsize=1)
def _font_families() -> tuple[str, ...]:
    default = font_manager.get_font(font_manager.findfont(font_manager.FontProperties(family=["sans-serif"])))
    installed = {entry.name for entry in font_manager.fontManager.ttflist}
    families = [default.family_name]
    families += [name for name in _WIDE_FONTS if name in installed and name not in families]
    return tuple(families)


@functools.lru_cache(maxsize=None)
def _charmap(family: str) -> frozenset[int]:
    try:
        path = font_manager.findfont(font_manager.FontProperties(family=[family]), fallback_to_default=False)
    except ValueError:
        return frozenset()
    return frozenset(font_manager.get_font(path).get_charmap())


def drawable(text: str, families: Sequence[str] | None = None) -> bool:
    """Whether every character of ``text`` has a glyph in one of ``families`` (default :func:`font_families`).

    Line breaks count as drawable; other control characters do not.

    >>> drawable("HYPOVOLEMIA, ε > 0"), drawable("a\\tb")
    (True, False)
    """
    if families is None:
        families = _font_families()
    maps = [_charmap(name) for name in families]
    return all(ch == "\n" or any(ord(ch) in m for m in maps) for ch in str(text))


def _wrap(name: str) -> str:
    """``name`` on several lines when longer than ``_WRAP`` characters, broken after spaces, "_", "-" or ".".

    >>> _wrap("hours_per_week_worked_in_total")
    'hours_per_week_\\nworked_in_total'
    """
    if len(name) <= _WRAP or "\n" in name:
        return name
    lines = [""]
    for token in re.findall(r"[^ _.\-]+[ _.\-]*|[ _.\-]+", name):  # each token ends where a break may go
        if lines[-1] and len(lines[-1] + token.rstrip(" ")) > _WRAP:
            lines[-1] = lines[-1].rstrip(" ")
            lines.append("")
        lines[-1] += token
    lines = [line for line in lines if line]
    return "\n".join(lines) if len(lines) > 1 else name


def node_labels(nodes: Iterable[Hashable], families: Sequence[str] | None = None
                ) -> tuple[dict[Hashable, str], dict[str, str]]:
    """The text drawn for each node, and ``{id: name}`` for the names drawn as a short id.

    A node is drawn with its name (wrapped when long) if the fonts have every
    character of it; otherwise with ``v<k>``, ``k`` its 1-based place in
    ``nodes`` (an id another node already shows is not reused).

    >>> node_labels(["age", "年齢", "v2"], families=["DejaVu Sans"])
    ({'age': 'age', '年齢': 'v2_', 'v2': 'v2'}, {'v2_': '年齢'})
    """
    nodes = list(nodes)
    labels: dict[Hashable, str] = {}
    taken = {str(v) for v in nodes if drawable(str(v), families)}
    aliases: dict[str, str] = {}
    for k, v in enumerate(nodes, start=1):
        name = str(v)
        if drawable(name, families):
            labels[v] = _wrap(name)
            continue
        alias = f"v{k}"
        while alias in taken:
            alias += "_"
        taken.add(alias)
        labels[v] = alias
        aliases[alias] = name
    return labels, aliases


def _drawable_text(text: str, families: Sequence[str]) -> str:
    """``text`` with each character the fonts lack replaced by "?"."""
    return "".join(ch if drawable(ch, families) else "?" for ch in str(text))


def _text_sizes(texts: Mapping[Hashable, str], font_size: float, families: Sequence[str]
                ) -> dict[Hashable, tuple[float, float]]:
    """Width and height in inches of each text as drawn at ``font_size`` points."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = Figure(dpi=72)
    canvas = FigureCanvasAgg(fig)
    renderer = canvas.get_renderer()
    sizes = {}
    for key, text in texts.items():
        artist = fig.text(0, 0, text, fontsize=font_size, family=list(families), parse_math=False,
                          ha="center", va="center", multialignment="center")
        box = artist.get_window_extent(renderer)
        sizes[key] = (box.width / 72.0, box.height / 72.0)
        artist.remove()
    return sizes


def _half_sizes(labels: Mapping[Hashable, str], font_size: float, node_size: float | None,
                families: Sequence[str]) -> dict[Hashable, tuple[float, float]]:
    """Half width and half height in inches of each node's box: its label plus padding."""
    least = math.sqrt(node_size) / 72.0 if node_size else 0.0
    sizes = _text_sizes(labels, font_size, families)
    half = {}
    for key, (w, h) in sizes.items():
        height = max(h + 0.55 * font_size / 72.0, least)
        width = max(w + 0.9 * font_size / 72.0, height, least)
        half[key] = (width / 2.0, height / 2.0)
    return half


# --------------------------------------------------------------------------- geometry

def _edge_path(a: np.ndarray, b: np.ndarray, rad: float, samples: int = 24) -> np.ndarray:
    """Points along the edge from ``a`` to ``b`` as matplotlib's ``arc3,rad=rad`` draws it (a quadratic Bezier
    whose control point is ``rad`` times the chord length off the chord's middle)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if rad == 0:
        return np.vstack([a, b])
    d = b - a
    control = (a + b) / 2.0 + rad * np.array([d[1], -d[0]])
    t = np.linspace(0.0, 1.0, samples + 1)[:, None]
    return (1 - t) ** 2 * a + 2 * (1 - t) * t * control + t ** 2 * b


def _segments_hit_boxes(points: np.ndarray, centres: np.ndarray, half: np.ndarray) -> np.ndarray:
    """For the polyline ``points`` (m+1, 2) and boxes ``centres`` ± ``half`` (k, 2): whether it enters each box.

    Liang-Barsky clipping of every segment against every box, vectorised.
    """
    if len(centres) == 0:
        return np.zeros(0, dtype=bool)
    p0, d = points[:-1, None, :], (points[1:] - points[:-1])[:, None, :]  # (m, 1, 2)
    low, high = centres[None] - half[None], centres[None] + half[None]  # (1, k, 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (low - p0) / d, (high - p0) / d
    flat = d == 0
    inside_flat = (p0 >= low) & (p0 <= high)
    t_enter = np.where(flat, np.where(inside_flat, -np.inf, np.inf), np.minimum(t1, t2))
    t_leave = np.where(flat, np.where(inside_flat, np.inf, -np.inf), np.maximum(t1, t2))
    enter = np.maximum(t_enter.max(axis=2), 0.0)
    leave = np.minimum(t_leave.min(axis=2), 1.0)
    return (enter <= leave).any(axis=0)


class _Boxes:
    """Node boxes as arrays, to test many edge paths against them."""

    def __init__(self, pos: Mapping[Hashable, Any], half_sizes: Mapping[Hashable, tuple[float, float]],
                 margin: float, bounds: tuple[tuple[float, float], tuple[float, float]] | None = None) -> None:
        self.nodes = list(pos)
        self.index = {v: i for i, v in enumerate(self.nodes)}
        self.centres = np.array([np.asarray(pos[v], dtype=float)[:2] for v in self.nodes]).reshape(-1, 2)
        self.half = np.array([half_sizes[v] for v in self.nodes], dtype=float).reshape(-1, 2) + margin
        if bounds is not None:
            self.low, self.high = np.asarray(bounds[0], dtype=float), np.asarray(bounds[1], dtype=float)
        else:
            self.low = (self.centres - self.half).min(axis=0) if self.nodes else np.zeros(2)
            self.high = (self.centres + self.half).max(axis=0) if self.nodes else np.zeros(2)

    def crossed(self, u: Hashable, v: Hashable, rad: float) -> list[Hashable]:
        """The nodes other than ``u`` and ``v`` that the edge ``u - v`` drawn with bend ``rad`` enters."""
        return self._crossed(u, v, _edge_path(self.centres[self.index[u]], self.centres[self.index[v]], rad))

    def fits(self, u: Hashable, v: Hashable, rad: float) -> bool:
        """Whether the edge drawn with bend ``rad`` stays within the drawing (``bounds``, by default the
        rectangle around all the boxes)."""
        path = _edge_path(self.centres[self.index[u]], self.centres[self.index[v]], rad)
        return bool((path >= self.low).all() and (path <= self.high).all())

    def _crossed(self, u: Hashable, v: Hashable, path: np.ndarray) -> list[Hashable]:
        i, j = self.index[u], self.index[v]
        low, high = path.min(axis=0), path.max(axis=0)
        near = np.flatnonzero(((self.centres + self.half) >= low).all(axis=1)
                              & ((self.centres - self.half) <= high).all(axis=1))
        near = near[(near != i) & (near != j)]
        if len(near) == 0:
            return []
        hits = _segments_hit_boxes(path, self.centres[near], self.half[near])
        return [self.nodes[k] for k in near[hits]]


def edge_node_crossings(pos: Mapping[Hashable, Any], half_sizes: Mapping[Hashable, tuple[float, float]],
                        edges: Iterable[tuple[Hashable, Hashable]],
                        bends: Mapping[tuple[Hashable, Hashable], float] | None = None, *,
                        margin: float = _MARGIN) -> list[tuple[Hashable, Hashable, Hashable]]:
    """Every ``(u, v, w)`` where the edge ``u - v`` as drawn passes through node ``w`` it does not join.

    ``pos`` are node centres and ``half_sizes`` the half width and height of
    each node's box, in one unit (inches in a :class:`GraphDrawing`); a box
    counts ``margin`` larger on every side. An edge is the straight line
    between the centres, or the ``arc3`` curve of radius ``bends[(u, v)]``.

    >>> pos = {"s3": (0, 0), "s6": (1, 0.02), "s5": (2, 0)}
    >>> half = {v: (0.2, 0.1) for v in pos}
    >>> edge_node_crossings(pos, half, [("s3", "s5")]), edge_node_crossings(pos, half, [("s3", "s5")], {("s3", "s5"): 0.3})
    ([('s3', 's5', 's6')], [])
    """
    bends = bends or {}
    boxes = _Boxes(pos, half_sizes, margin)
    return [(u, v, w) for u, v in edges for w in boxes.crossed(u, v, float(bends.get((u, v), 0.0)))]


def _route(pos: Mapping[Hashable, Any], half_sizes: Mapping[Hashable, tuple[float, float]],
           edges: Sequence[tuple[Hashable, Hashable]],
           bounds: tuple[tuple[float, float], tuple[float, float]] | None = None
           ) -> tuple[dict[tuple[Hashable, Hashable], float], list]:
    """The bend of each edge (0 when the straight line is clear, else the first arc radius of ``_BENDS``
    that clears every node and stays within the drawing, else the one that crosses fewest) and, for the edges
    no bend clears, the nodes their straight line crosses (as ``(u, v, w)``)."""
    boxes = _Boxes(pos, half_sizes, _MARGIN, bounds)
    bends: dict[tuple[Hashable, Hashable], float] = {}
    left = []
    for u, v in edges:
        crossed = boxes.crossed(u, v, 0.0)
        best = (len(crossed), 0.0)
        for rad in _BENDS if crossed else ():
            if not boxes.fits(u, v, rad):  # an arc bulging out of the drawing would be cut off
                continue
            now = len(boxes.crossed(u, v, rad))
            if now < best[0]:
                best = (now, rad)
            if not now:
                break
        bends[(u, v)] = best[1]
        if best[0]:
            left += [(u, v, w) for w in crossed]  # moving these nodes off the straight line clears the edge
    return bends, left


# --------------------------------------------------------------------------- layout

def _skeleton(g: nx.DiGraph) -> nx.Graph:
    skeleton = nx.Graph()
    skeleton.add_nodes_from(sorted(g.nodes, key=str))
    skeleton.add_edges_from(sorted(((u, v) for u, v in g.edges if u != v), key=lambda e: (str(e[0]), str(e[1]))))
    return skeleton


def _component_layout(skeleton: nx.Graph, members: list, g: nx.DiGraph) -> np.ndarray:
    """One connected component (``members`` sorted by name): Kamada-Kawai with edges about 1 long, turned
    so its long side is horizontal and most directed edges point down."""
    if len(members) == 1:
        return np.zeros((1, 2))
    if len(members) == 2:
        xy = np.array([[0.0, 0.0], [1.0, 0.0]])
    else:
        sub = nx.Graph()
        sub.add_nodes_from(members)
        sub.add_edges_from(sorted(((u, v) for u, v in skeleton.subgraph(members).edges),
                                  key=lambda e: (str(e[0]), str(e[1]))))
        pos = nx.kamada_kawai_layout(sub)
        xy = np.array([pos[v] for v in members], dtype=float)
        index = {v: i for i, v in enumerate(members)}
        lengths = [np.hypot(*(xy[index[u]] - xy[index[v]])) for u, v in sub.edges]
        xy = xy / max(float(np.mean(lengths)), 1e-9)
    return _orient(xy, members, g)


def _base_layout(skeleton: nx.Graph, g: nx.DiGraph) -> np.ndarray:
    """Positions in edge lengths (rows in ``skeleton``'s node order): each connected component laid out on
    its own, then the components packed in rows, largest first, isolated nodes last."""
    nodes = list(skeleton.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    components = sorted((sorted(c, key=str) for c in nx.connected_components(skeleton)),
                        key=lambda c: (-len(c), str(c[0])))
    blocks = [(c, _component_layout(skeleton, c, g)) for c in components]
    area = sum((np.ptp(xy[:, 0]) + 1.0) * (np.ptp(xy[:, 1]) + 1.0) for _, xy in blocks)
    row_width = max(max(np.ptp(xy[:, 0]) for _, xy in blocks), math.sqrt(1.6 * area))
    out = np.zeros((len(nodes), 2))
    x = y = row_height = 0.0
    for members, xy in blocks:
        width, height = np.ptp(xy[:, 0]), np.ptp(xy[:, 1])
        if x > 0 and x + width > row_width + 1e-9:  # next row
            x, y, row_height = 0.0, y - row_height - 1.0, 0.0
        placed = xy - np.array([xy[:, 0].min(), xy[:, 1].max()]) + np.array([x, y])  # top-left corner at (x, y)
        for v, p in zip(members, placed):
            out[index[v]] = p
        x += width + 1.0
        row_height = max(row_height, height)
    return out


def _orient(xy: np.ndarray, nodes: list, g: nx.DiGraph) -> np.ndarray:
    """Turn the layout so its long side is horizontal, then :func:`_flip` it."""
    xy = xy - xy.mean(axis=0)
    if len(xy) > 1:
        _, vectors = np.linalg.eigh(np.cov(xy.T) + 1e-12 * np.eye(2))
        xy = xy @ vectors[:, ::-1]  # first axis: largest spread
    return _flip(xy, nodes, g)


def _flip(xy: np.ndarray, nodes: list, g: nx.DiGraph) -> np.ndarray:
    """Mirror the layout so most directed edges point down and the first node (by name) is on the left half
    (a fixed choice among the mirror images)."""
    xy = xy - xy.mean(axis=0)
    index = {v: i for i, v in enumerate(nodes)}
    drop = sum(xy[index[u], 1] - xy[index[v], 1] for u, v in g.subgraph(nodes).edges
               if u != v and not g.has_edge(v, u))
    if drop < 0:
        xy[:, 1] = -xy[:, 1]
    if len(xy) and xy[0, 0] > 0:
        xy[:, 0] = -xy[:, 0]
    return xy


def _separate(xy: np.ndarray, half: np.ndarray, *, vertical: bool = False, gap: tuple[float, float] = _GAP,
              rounds: int = 400) -> np.ndarray:
    """Push overlapping boxes apart until none overlap: each pair along the line joining their centres, or
    straight up and down when ``vertical`` (which keeps the drawing's width)."""
    xy = xy.copy()
    n = len(xy)
    need = half[:, None, :] + half[None, :, :] + np.asarray(gap)[None, None, :]  # (n, n, 2)
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    for _ in range(rounds):
        d = xy[:, None, :] - xy[None, :, :]
        overlap = (np.abs(d) < need).all(axis=2) & upper
        if not overlap.any():
            break
        with np.errstate(divide="ignore"):
            factor = np.min(need / np.abs(d), axis=2)  # stretch of the centre distance that separates the pair
        push = np.zeros_like(xy)
        for i, j in zip(*np.nonzero(overlap)):
            if vertical:
                side = 1.0 if d[i, j, 1] > 0 or (d[i, j, 1] == 0 and i < j) else -1.0
                step = np.array([0.0, side * (need[i, j, 1] - abs(d[i, j, 1])) / 2.0 * 1.02])
            elif np.all(d[i, j] == 0):
                step = np.array([need[i, j, 0] / 2.0, 0.0])
            else:
                step = (factor[i, j] - 1.0) / 2.0 * d[i, j] * 1.02
            push[i] += step
            push[j] -= step
        xy += push
    return xy


def _fit_width(xy: np.ndarray, half: np.ndarray, max_width: float) -> tuple[np.ndarray, bool]:
    """Squeeze the layout horizontally to ``max_width`` inches (boxes included) if it is wider, then
    separate the boxes vertically; also whether it squeezed."""
    room = max_width - 2 * half[:, 0].max()
    span = float(np.ptp(xy[:, 0]))
    if span <= room + 1e-9 or room <= 0:
        return xy, False
    xy = xy.copy()
    xy[:, 0] = (xy[:, 0] - xy[:, 0].min()) * room / span
    return _separate(xy, half, vertical=True), True


def _natural_width(half: np.ndarray, aspect: float, area: float) -> float:
    """Width of a layout of height/width ``aspect`` that gives every node ``area`` times the area of its box
    and the gaps around it."""
    cells = ((2 * half[:, 0] + _GAP[0] + 0.2) * (2 * half[:, 1] + _GAP[1] + 0.25)).sum() * area
    return float(math.sqrt(cells / max(aspect, 0.05)))


def _spread(base: np.ndarray, half: np.ndarray, nodes: list, g: nx.DiGraph, area: float,
            max_width: float) -> tuple[np.ndarray, bool]:
    """Scale the unit layout to inches so every node has about ``area`` times its box and gaps, at most
    ``max_width`` wide (taller instead), with no two boxes overlapping; also whether it had to be squeezed
    to the width after the boxes were pushed apart."""
    span = np.ptp(base, axis=0) if len(base) > 1 else np.zeros(2)
    if span[0] <= 0:
        return _separate(base, half), False
    widest = 2 * half[:, 0].max()
    natural = _natural_width(half, span[1] / span[0], area)
    if span[1] > 0 and natural > 1.25 * max_width:  # too wide for the page at ease: long side vertical
        base = _flip(base[:, ::-1].copy(), nodes, g)
        span = span[::-1]
        natural = _natural_width(half, span[1] / span[0], area)
    stretch = max(natural - widest, 0.0) / span[0]  # inches per unit, vertically
    room = min(natural, max_width) - widest
    xy = base
    for _ in range(6):  # pushing boxes apart widens the layout: start narrower until it fits
        xy = _separate(base * np.array([max(room, 0.0) / span[0], stretch]), half)
        over = np.ptp(xy[:, 0]) + widest - max_width
        if over <= 1e-9:
            break
        room -= over * 1.1
    return _fit_width(xy, half, max_width)


def _clear_edges(xy: np.ndarray, half: np.ndarray, half_of: Mapping[Hashable, tuple[float, float]], nodes: list,
                 edges: list, max_width: float, squeezed: bool, rounds: int = 40) -> tuple[np.ndarray, int]:
    """Move aside the nodes in the way of edges that no arc clears, a little further each round, keeping the
    boxes apart and the width; the new positions and how many crossings are left."""
    index = {v: i for i, v in enumerate(nodes)}
    left: list = []
    for round_ in range(rounds):
        _, left = _route(dict(zip(nodes, xy)), half_of, edges)
        if not left:
            break
        xy = xy.copy()
        for u, v, w in left:
            a, b, c = xy[index[u]], xy[index[v]], xy[index[w]]
            chord = b - a
            normal = np.array([-chord[1], chord[0]]) / max(np.hypot(*chord), 1e-9)
            offset = float(np.dot(c - a, normal))
            reach = (abs(normal[0]) * half[index[w], 0] + abs(normal[1]) * half[index[w], 1] + _MARGIN + 0.12
                     + 0.01 * round_)
            xy[index[w]] = c + max(reach - abs(offset), 0.05) * (1.0 if offset >= 0 else -1.0) * normal
        xy = _separate(xy, half, vertical=squeezed)
        xy, now = _fit_width(xy, half, max_width)
        squeezed = squeezed or now
    else:
        _, left = _route(dict(zip(nodes, xy)), half_of, edges)
    return xy, len(left)


def graph_layout(g: nx.DiGraph, *, font_size: float = LABEL_POINTS, node_size: float | None = None,
                 max_width: float = REPORT_WIDTH_INCHES) -> dict[Hashable, tuple[float, float]]:
    """Node centres in inches, for boxes labelled at ``font_size`` points: no two boxes overlap and every edge
    can be drawn (straight or as an arc of :data:`_BENDS`) clear of the nodes it does not join.

    Nodes are moved off the straight line of an edge that no arc clears (40
    rounds), and where some remain the layout starts again with more room (3
    tries); a very dense graph with long names (around 45-50 nodes and over 80
    edges in 9.6 inches) can still keep a few edges touching a node, which
    :meth:`GraphDrawing.crossings` reports. The drawing is at most
    ``max_width`` inches wide (unless one box is wider), taller where it needs
    to be, and grows with the number of nodes and the length of their names.
    The same graph gives the same positions.

    >>> pos = graph_layout(nx.path_graph(4, create_using=nx.DiGraph))
    >>> sorted(pos), all(len(p) == 2 for p in pos.values())
    ([0, 1, 2, 3], True)
    """
    if not isinstance(g, nx.DiGraph):
        raise TypeError(f"g must be a networkx.DiGraph (undirected edges stored both ways), got {type(g).__name__}")
    skeleton = _skeleton(g)
    nodes = list(skeleton.nodes)
    if not nodes:
        return {}
    families = _font_families()
    labels, _ = node_labels(list(g.nodes), families)  # numbered in g's order, as plan_drawing does
    half_of = _half_sizes(labels, font_size, node_size, families)
    half = np.array([half_of[v] for v in nodes], dtype=float)
    base = _base_layout(skeleton, g)
    edges = sorted({(u, v) if str(u) <= str(v) else (v, u) for u, v in skeleton.edges},
                   key=lambda e: (str(e[0]), str(e[1])))
    density = max(1.0, len(edges) / len(nodes) / 1.5)  # more edges per node need more room between the nodes
    best: tuple[int, np.ndarray] | None = None
    for attempt in range(3):  # where edges still cross nodes, start again with more room
        xy, squeezed = _spread(base, half, nodes, g, 2.0 * density * 1.7 ** attempt, max_width)
        xy, left = _clear_edges(xy, half, half_of, nodes, edges, max_width, squeezed)
        if best is None or left < best[0]:
            best = (left, xy)
        if not left:
            break
    xy = best[1]
    xy = np.round(xy - xy.min(axis=0), 4)
    return {v: (float(x), float(y)) for v, (x, y) in zip(nodes, xy)}


# --------------------------------------------------------------------------- plan and draw

@dataclass(frozen=True)
class GraphDrawing:
    """Where everything of a drawn graph is, in inches from the axes' lower left corner.

    ``pos`` node centres; ``half_sizes`` half width and height of each node's
    box; ``labels`` the text in each box; ``aliases`` ``{id: name}`` for the
    names drawn as an id; ``directed`` and ``undirected`` the edges (an
    undirected edge once); ``bends`` the ``arc3`` radius of each edge (0 =
    straight); ``font_size`` of the labels in points.
    """

    pos: dict[Hashable, tuple[float, float]]
    half_sizes: dict[Hashable, tuple[float, float]]
    labels: dict[Hashable, str]
    aliases: dict[str, str]
    directed: list[tuple[Hashable, Hashable]]
    undirected: list[tuple[Hashable, Hashable]]
    bends: dict[tuple[Hashable, Hashable], float] = field(default_factory=dict)
    font_size: float = LABEL_POINTS

    def crossings(self, margin: float = _MARGIN) -> list[tuple[Hashable, Hashable, Hashable]]:
        """Every ``(u, v, w)`` where edge ``u - v`` as drawn passes through node ``w``
        (:func:`edge_node_crossings`)."""
        return edge_node_crossings(self.pos, self.half_sizes, self.directed + self.undirected, self.bends,
                                   margin=margin)


def _edges_of(g: nx.DiGraph) -> tuple[list[tuple[Hashable, Hashable]], list[tuple[Hashable, Hashable]]]:
    undirected = {frozenset((u, v)) for u, v in g.edges if u != v and g.has_edge(v, u)}
    directed = [(u, v) for u, v in g.edges if u != v and frozenset((u, v)) not in undirected]
    pairs = [tuple(sorted(pair, key=str)) for pair in sorted(undirected, key=lambda p: sorted(map(str, p)))]
    return directed, pairs  # type: ignore[return-value]


def plan_drawing(g: nx.DiGraph, size: tuple[float, float], pos: Mapping[Hashable, Any] | None = None, *,
                 font_size: float = LABEL_POINTS, node_size: float | None = None) -> GraphDrawing:
    """Place ``g`` in a ``size`` (width, height) inches box: node boxes, labels and edge bends.

    ``pos`` (any unit; default :func:`graph_layout`) is scaled uniformly to
    fill the box with every node box inside it; the scale depends only on
    ``pos`` and ``size``, so graphs sharing ``pos`` line up.
    """
    if not isinstance(g, nx.DiGraph):
        raise TypeError(f"g must be a networkx.DiGraph (undirected edges stored both ways), got {type(g).__name__}")
    families = _font_families()
    if pos is None:
        pos = graph_layout(g, font_size=font_size, node_size=node_size)
    else:
        if not isinstance(pos, Mapping):
            raise TypeError(f"pos must be a dict node -> (x, y), got {type(pos).__name__}")
        missing = [n for n in g.nodes if n not in pos]
        if missing:
            raise ValueError(f"pos has no position for node(s) {missing[:5]}")
    keys = list(pos)
    order = list(g.nodes) + [v for v in keys if v not in g]
    labels, aliases = node_labels(order, families)
    half_all = _half_sizes(labels, font_size, node_size, families)
    width, height = (float(s) for s in size)
    pad = 0.06
    placed: dict[Hashable, tuple[float, float]] = {}
    if keys:
        xy = np.array([np.asarray(pos[v], dtype=float)[:2] for v in keys])
        half = np.array([half_all[v] for v in keys])
        span = np.ptp(xy, axis=0)
        room = np.array([width, height]) - 2 * pad - 2 * half.max(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            scales = np.where(span > 0, room / span, np.inf)
        scale = float(scales.min()) if np.isfinite(scales.min()) else 1.0
        scale = max(scale, 1e-6)
        centre = (xy.max(axis=0) + xy.min(axis=0)) / 2.0
        xy = (xy - centre) * scale + np.array([width, height]) / 2.0
        placed = {v: (float(x), float(y)) for v, (x, y) in zip(keys, xy)}
    node_pos = {v: placed[v] for v in g.nodes}
    half_sizes = {v: half_all[v] for v in g.nodes}
    directed, undirected = _edges_of(g)
    bends, _ = _route(node_pos, half_sizes, directed + undirected, bounds=((0.0, 0.0), (width, height)))
    return GraphDrawing(pos=node_pos, half_sizes=half_sizes, labels={v: labels[v] for v in g.nodes},
                        aliases={a: n for a, n in aliases.items() if any(labels[v] == a for v in g.nodes)},
                        directed=directed, undirected=undirected, bends=bends, font_size=font_size)


def _axes_inches(ax: Axes) -> tuple[float, float]:
    box = ax.get_position()
    fig_w, fig_h = ax.figure.get_size_inches()
    return float(box.width * fig_w), float(box.height * fig_h)


def render(drawing: GraphDrawing, ax: Axes, *, node_color: str = "#f2f2f2", edge_color: str = "#333333") -> None:
    """Draw a planned graph on ``ax``, whose data coordinates become inches (equal aspect)."""
    fig = ax.figure
    families = list(_font_families())
    width, height = _axes_inches(ax)
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_aspect("equal", adjustable="box")
    ax.autoscale(False)
    ax.set_axis_off()
    rounding = drawing.font_size / 72.0 * 0.45
    patches = {}
    for v, (x, y) in drawing.pos.items():
        a, b = drawing.half_sizes[v]
        at = fig.dpi_scale_trans + ScaledTranslation(x, y, ax.transData)  # inches around the node's centre
        ax.add_patch(FancyBboxPatch((-a, -b), 2 * a, 2 * b, facecolor=node_color, edgecolor=edge_color,
                                    boxstyle=f"round,pad=0,rounding_size={min(rounding, b):.4f}", linewidth=1.0,
                                    zorder=3, transform=at))
        patches[v] = Rectangle((-a, -b), 2 * a, 2 * b, transform=at)  # not drawn: where arrows stop (fast to clip)
        ax.text(x, y, drawing.labels[v], fontsize=drawing.font_size, family=families, ha="center", va="center",
                multialignment="center", zorder=4, parse_math=False, clip_on=False)
    for u, v in drawing.directed:
        ax.add_patch(FancyArrowPatch(
            drawing.pos[u], drawing.pos[v], patchA=patches[u], patchB=patches[v], shrinkA=1.0, shrinkB=1.5,
            arrowstyle="-|>", mutation_scale=13, connectionstyle=f"arc3,rad={drawing.bends.get((u, v), 0.0)}",
            color=edge_color, linewidth=1.3, zorder=2))
    if drawing.undirected:  # centre to centre under the opaque boxes, one polyline each
        lines = [_edge_path(np.array(drawing.pos[u]), np.array(drawing.pos[v]), drawing.bends.get((u, v), 0.0))
                 for u, v in drawing.undirected]
        ax.add_collection(LineCollection(lines, colors=edge_color, linewidths=1.3, zorder=2), autolim=False)


def draw_graph(
    g: nx.DiGraph,
    ax: Axes,
    pos: Mapping[Hashable, Any] | None = None,
    title: str | None = None,
    *,
    node_color: str = "#f2f2f2",
    edge_color: str = "#333333",
    node_size: float | None = None,
    font_size: float = LABEL_POINTS,
) -> dict[Hashable, Any]:
    """Draw a DAG or (C)PDAG on ``ax`` and return the node positions used.

    An undirected edge is stored as both ``u -> v`` and ``v -> u``; it is drawn
    once, as a plain line. Other edges get an arrow head. Nodes are boxes
    around their names at ``font_size`` points, at least ``sqrt(node_size)``
    points wide and high. Pass the returned positions as ``pos`` to draw a
    second graph (e.g. the estimate next to the truth) with the same layout.
    The layout fills ``ax``; boxes may touch when ``ax`` is small for the
    graph (:func:`graph_figure` sizes the figure to the graph instead).

    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> sorted(draw_graph(nx.DiGraph([("a", "b"), ("b", "c"), ("c", "b")]), ax))
    ['a', 'b', 'c']
    >>> plt.close(fig)
    """
    if not isinstance(g, nx.DiGraph):
        raise TypeError(f"g must be a networkx.DiGraph (undirected edges stored both ways), got {type(g).__name__}")
    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
    if pos is None:
        pos = graph_layout(g, font_size=font_size, node_size=node_size)
    drawing = plan_drawing(g, _axes_inches(ax), pos, font_size=font_size, node_size=node_size)
    render(drawing, ax, node_color=node_color, edge_color=edge_color)
    if title is not None:
        ax.set_title(_drawable_text(str(title), _font_families()))
    return dict(pos)


def graph_figure(g: nx.DiGraph, title: str | None = None, *, font_size: float = LABEL_POINTS,
                 max_width: float = REPORT_WIDTH_INCHES) -> tuple[Figure, GraphDrawing]:
    """A figure sized to ``g``'s drawing (labels at ``font_size`` points, about ``max_width`` inches wide at
    most) and the drawing's plan, e.g. for :attr:`GraphDrawing.aliases`. Not registered with pyplot."""
    if not isinstance(g, nx.DiGraph):
        raise TypeError(f"g must be a networkx.DiGraph (undirected edges stored both ways), got {type(g).__name__}")
    families = _font_families()
    pad = 0.06
    pos = graph_layout(g, font_size=font_size, max_width=max_width - 2 * pad)
    if pos:
        labels, _ = node_labels(list(g.nodes), families)
        half = _half_sizes(labels, font_size, None, families)
        xy = np.array([pos[v] for v in g.nodes])
        hw = np.array([half[v] for v in g.nodes]).max(axis=0)
        width, height = np.ptp(xy, axis=0) + 2 * hw + 2 * pad
    else:
        width, height = 1.0, 0.5
    band = 0.0
    title_text = None
    if title is not None:
        title_text = _drawable_text(str(title), families)
        title_w, title_h = _text_sizes({0: title_text}, font_size + 1, families)[0]
        width = max(width, title_w + 0.2)
        band = title_h + 0.2
    fig = Figure(figsize=(float(width), float(height + band)))
    ax = fig.add_axes((0.0, 0.0, 1.0, float(height / (height + band))))
    drawing = plan_drawing(g, (float(width), float(height)), pos, font_size=font_size)
    render(drawing, ax)
    if title_text is not None:
        fig.text(0.5, 1.0 - 0.1 / (height + band), title_text, ha="center", va="top", fontsize=font_size + 1,
                 family=list(families), parse_math=False)
    return fig, drawing


def save_figure(fig: Figure, folder: Path, name: str, *, dpi: int = 150) -> tuple[Path, Path]:
    """Write ``folder/name.png`` and ``folder/name.svg`` with no creation date or software stamp."""
    paths = []
    for fmt, metadata in (("png", {"Software": None}), ("svg", {"Date": None, "Creator": None})):
        path = Path(folder) / f"{name}.{fmt}"
        with matplotlib.rc_context({"svg.hashsalt": "dpcd"}):
            fig.savefig(path, format=fmt, dpi=dpi, bbox_inches="tight", metadata=metadata)
        paths.append(path)
    return paths[0], paths[1]

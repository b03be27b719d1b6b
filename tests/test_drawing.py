"""Drawings of a released graph: legible at 30+ nodes, no edge through a node it does not join, any names."""

from __future__ import annotations

import re
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.patches import FancyArrowPatch  # noqa: E402

from dpcd.datasets import bnlearn_dag  # noqa: E402
from dpcd.release import drawing  # noqa: E402


def random_dag(n: int, p: float, seed: int) -> nx.DiGraph:
    """A random DAG on ``s0 … s{n-1}`` (edges from lower to higher index), some edges left undirected."""
    rng = np.random.default_rng(seed)
    g = nx.DiGraph()
    g.add_nodes_from(f"s{i}" for i in range(n))
    for i in range(n):
        for j in range(i + 1, n):
            if rng.random() < p:
                g.add_edge(f"s{i}", f"s{j}")
                if rng.random() < 0.25:
                    g.add_edge(f"s{j}", f"s{i}")
    return g


GRAPHS = {"asia": lambda: bnlearn_dag("asia"), "child": lambda: bnlearn_dag("child"),
          "alarm": lambda: bnlearn_dag("alarm"), "random31": lambda: random_dag(31, 0.1, 7),
          "random11": lambda: random_dag(11, 0.25, 1)}


@pytest.fixture(scope="module", params=sorted(GRAPHS))
def drawn(request):
    g = GRAPHS[request.param]()
    fig, plan = drawing.graph_figure(g, title=f"{request.param}, ε = 1")
    FigureCanvasAgg(fig).draw()
    return g, fig, plan


def _inside_other_box(points: np.ndarray, plan: drawing.GraphDrawing, u, v) -> list:
    """The nodes other than ``u`` and ``v`` whose box holds one of ``points`` (inches)."""
    found = []
    for w, (x, y) in plan.pos.items():
        if w in (u, v):
            continue
        a, b = plan.half_sizes[w]
        if ((np.abs(points[:, 0] - x) <= a) & (np.abs(points[:, 1] - y) <= b)).any():
            found.append(w)
    return found


def test_no_edge_is_drawn_through_a_node_it_does_not_join(drawn):
    g, fig, plan = drawn
    assert plan.crossings() == []
    assert len(plan.directed) + len(plan.undirected) == len({frozenset(e) for e in g.edges})
    t = np.linspace(0.0, 1.0, 2001)[:, None]
    for u, v in plan.directed + plan.undirected:  # the planned curve, densely sampled
        a, b = np.array(plan.pos[u]), np.array(plan.pos[v])
        control = (a + b) / 2 + plan.bends[(u, v)] * np.array([b[1] - a[1], a[0] - b[0]])
        curve = (1 - t) ** 2 * a + 2 * (1 - t) * t * control + t ** 2 * b
        assert _inside_other_box(curve, plan, u, v) == [], (u, v)
    ax = fig.axes[0]
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == len(plan.directed)
    for arrow, (u, v) in zip(arrows, plan.directed):  # what matplotlib actually drew, in data units (inches)
        for polygon in arrow.get_path().to_polygons(closed_only=False):
            points = np.asarray(polygon)
            assert _inside_other_box(points, plan, u, v) == [], (u, v)
            assert (points[:, 0] >= x0).all() and (points[:, 0] <= x1).all(), (u, v)  # no arc cut off
            assert (points[:, 1] >= y0).all() and (points[:, 1] <= y1).all(), (u, v)


def test_drawing_fits_the_report_page_and_labels_are_readable_and_unclipped(drawn, tmp_path):
    g, fig, plan = drawn
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    assert fig.get_figwidth() <= drawing.REPORT_WIDTH_INCHES + 1e-3
    assert len(ax.texts) == g.number_of_nodes() and min(t.get_fontsize() for t in ax.texts) >= 9
    page = fig.bbox
    for text in ax.texts + fig.texts:
        box = text.get_window_extent(renderer)
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1, text
    for text in ax.texts:  # each label inside its node's box
        x, y = text.get_position()
        node = next(v for v, p in plan.pos.items() if p == (x, y))
        a, b = plan.half_sizes[node]
        box = text.get_window_extent(renderer).transformed(ax.transData.inverted())
        assert x - a <= box.x0 and box.x1 <= x + a and y - b <= box.y0 and box.y1 <= y + b
    nodes = list(plan.pos)
    for i, u in enumerate(nodes):  # no two boxes overlap
        for w in nodes[i + 1:]:
            dx, dy = abs(plan.pos[u][0] - plan.pos[w][0]), abs(plan.pos[u][1] - plan.pos[w][1])
            (au, bu), (aw, bw) = plan.half_sizes[u], plan.half_sizes[w]
            assert dx > au + aw or dy > bu + bw, (u, w)
    _, svg = drawing.save_figure(fig, tmp_path, "graph")
    width_pt = float(re.search(r'<svg[^>]*width="([0-9.]+)pt"', svg.read_text()).group(1))
    assert width_pt <= 72 * 10  # report.html is 10 in (960 px) wide: the SVG is shown at full size, 10 pt labels


def test_figure_grows_with_the_number_of_nodes():
    areas = [np.prod(drawing.graph_figure(GRAPHS[name]())[0].get_size_inches()) for name in ("asia", "child", "alarm")]
    assert areas[0] < areas[1] < areas[2]


def test_same_graph_same_bytes(tmp_path):
    g = GRAPHS["random31"]()
    files = []
    for k in range(2):
        folder = tmp_path / str(k)
        folder.mkdir()
        files.append(drawing.save_figure(drawing.graph_figure(g, title="t")[0], folder, "graph"))
    assert [p.read_bytes() for p in files[0]] == [p.read_bytes() for p in files[1]]


def test_an_edge_in_line_with_an_unjoined_node_is_bent_around_it():
    g = nx.DiGraph([("s3", "s5")])
    g.add_node("s6")
    pos = {"s3": (0.0, 0.0), "s6": (1.0, 0.0), "s5": (2.0, 0.0)}
    plan = drawing.plan_drawing(g, (6.0, 3.0), pos)
    assert drawing.edge_node_crossings(plan.pos, plan.half_sizes, [("s3", "s5")]) == [("s3", "s5", "s6")]
    assert plan.bends[("s3", "s5")] != 0 and plan.crossings() == []
    fig, ax = plt.subplots(figsize=(6, 3))
    assert drawing.draw_graph(g, ax, pos=pos) == pos
    (arrow,) = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert "rad=0.0" not in str(arrow.get_connectionstyle().__dict__) and arrow.get_connectionstyle().rad != 0
    plt.close(fig)


def test_cjk_names_draw_without_a_glyph_warning(tmp_path):
    g = nx.DiGraph([("年齢", "性別"), ("性別", "年齢"), ("年齢", "収入"), ("age", "収入")])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig, plan = drawing.graph_figure(g, title="年齢, ε = 1")
        png, svg = drawing.save_figure(fig, tmp_path, "graph")
    assert [str(w.message) for w in caught] == []
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and svg.stat().st_size > 0
    assert plan.labels["age"] == "age"
    if drawing.drawable("年齢性別収入"):  # a CJK font is installed: the names themselves
        assert plan.aliases == {} and plan.labels["年齢"] == "年齢"
    else:  # short ids, listed in report.html
        assert plan.aliases == {"v1": "年齢", "v2": "性別", "v3": "収入"}
        assert [plan.labels[v] for v in ("年齢", "性別", "収入")] == ["v1", "v2", "v3"]


def test_labels_fall_back_to_ids_per_name_and_never_reuse_a_shown_name():
    labels, aliases = drawing.node_labels(["x", "ü", "名前", "v3", "Ω"], families=["DejaVu Sans"])
    assert labels == {"x": "x", "ü": "ü", "名前": "v3_", "v3": "v3", "Ω": "Ω"} and aliases == {"v3_": "名前"}
    assert drawing.drawable("ε δ → —") and not drawing.drawable("年齢", families=["DejaVu Sans"])


def test_long_names_wrap_and_math_is_not_parsed():
    g = nx.DiGraph([("hours_per_week_worked_in_total", "$income$")])
    fig, plan = drawing.graph_figure(g)
    assert "\n" in plan.labels["hours_per_week_worked_in_total"]
    assert plan.labels["hours_per_week_worked_in_total"].replace("\n", "") == "hours_per_week_worked_in_total"
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert "$income$" in texts and not any(t.get_usetex() for t in fig.axes[0].texts)
    assert all(not t._parse_math for t in fig.axes[0].texts)

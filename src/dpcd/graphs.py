"""Graphs: DAG → CPDAG, skeleton, v-structures, Meek rules, and comparison metrics.

Graph convention (used by the whole package)
--------------------------------------------
A DAG is a :class:`networkx.DiGraph`. A PDAG / CPDAG is also an
``nx.DiGraph``: a directed edge ``a → b`` is stored once, and an **undirected
edge** ``a − b`` **is stored as both** ``a → b`` **and** ``b → a``. Node names
are strings (the data's column names). Self-loops are not allowed.

Metrics
-------
Every metric returns a ``dict`` of floats and refuses graphs whose node sets
differ. When a ratio has an empty denominator (e.g. precision of an empty
estimated graph) its value is ``nan``: the ratio is undefined, and averaging
code should decide explicitly how to treat it (``numpy.nanmean`` or a count of
undefined runs). :func:`tpr_fpr_tdr` can instead follow the R package pcalg's
conventions (``convention="pcalg"``).

References
----------
- Verma, T., Pearl, J. (1990). Equivalence and synthesis of causal models. UAI.
- Meek, C. (1995). Causal inference and causal explanation with background
  knowledge. UAI. (Orientation rules R1–R4; R1–R3 are complete without
  background knowledge.)
- Kalisch, M., Mächler, M., Colombo, D., Maathuis, M., Bühlmann, P. (2012).
  Causal inference using graphical models with the R package pcalg. JSS 47(11).
- Xu, Yuan, Wu (2017), Differential Privacy Preserving Causal Graph Discovery,
  Sec. VI (TPR/FPR/TDR) — paper 000 of this compendium.
- Wang, Pang, Song (2020), Towards practical differentially private causal
  graph discovery, footnote 4 (F1) — paper 003; Bhattacharjee, Tandon (2024),
  CURATE, "Evaluation Metric" (F1) — paper 001.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Hashable, Iterable, Literal, Sequence

import networkx as nx
import numpy as np

__all__ = [
    "check_dag",
    "skeleton_edges",
    "directed_edges",
    "undirected_edges",
    "v_structures",
    "to_adjacency",
    "from_adjacency",
    "apply_meek_rules",
    "dag_to_cpdag",
    "d_separated",
    "tpr_fpr_tdr",
    "skeleton_prf",
    "cpdag_pair_prf",
    "shd",
]


# --------------------------------------------------------------------------- helpers


def _check_graph(g: Any, name: str) -> nx.DiGraph:
    if not isinstance(g, nx.DiGraph) or isinstance(g, nx.MultiDiGraph):
        raise TypeError(
            f"{name} must be a networkx.DiGraph (undirected edges stored in both directions), "
            f"got {type(g).__name__}"
        )
    loops = list(nx.selfloop_edges(g))
    if loops:
        raise ValueError(f"{name} must not contain self-loops, found {loops[:3]}")
    return g


def check_dag(g: Any, name: str) -> nx.DiGraph:
    """``g`` if it is a networkx DiGraph without cycles or self-loops, else a ``TypeError``/``ValueError`` naming ``name``."""
    _check_graph(g, name)
    if not nx.is_directed_acyclic_graph(g):
        raise ValueError(
            f"{name} must be a directed acyclic graph; it has a cycle (an undirected edge stored as "
            "a→b and b→a also counts as a cycle — pass a DAG, not a PDAG)"
        )
    return g


def _ordered(a: Hashable, b: Hashable) -> tuple:
    """The pair (a, b) sorted; falls back to sorting by ``repr`` for mixed node types."""
    try:
        return (a, b) if a <= b else (b, a)  # type: ignore[operator]
    except TypeError:
        return (a, b) if repr(a) <= repr(b) else (b, a)


def _sorted_nodes(nodes: Iterable[Hashable]) -> list:
    nodes = list(nodes)
    try:
        return sorted(nodes)
    except TypeError:
        return sorted(nodes, key=repr)


def _adjacent(g: nx.DiGraph, a: Hashable, b: Hashable) -> bool:
    return g.has_edge(a, b) or g.has_edge(b, a)


def _directed_parents(g: nx.DiGraph, v: Hashable) -> set:
    """Nodes u with a one-way edge u → v."""
    succ = g.succ[v]
    return {u for u in g.pred[v] if u not in succ}


def _undirected_neighbours(g: nx.DiGraph, v: Hashable) -> set:
    succ = g.succ[v]
    return {u for u in g.pred[v] if u in succ}


def _check_same_nodes(estimated: nx.DiGraph, true: nx.DiGraph) -> None:
    _check_graph(estimated, "estimated")
    _check_graph(true, "true")
    est_nodes, true_nodes = set(estimated.nodes), set(true.nodes)
    if est_nodes != true_nodes:
        only_est = _sorted_nodes(est_nodes - true_nodes)[:5]
        only_true = _sorted_nodes(true_nodes - est_nodes)[:5]
        raise ValueError(
            "estimated and true must have the same node set; "
            f"only in estimated: {only_est}, only in true: {only_true}"
        )


def _ratio(num: float, den: float) -> float:
    return float(num) / float(den) if den else math.nan


# --------------------------------------------------------------------------- edge sets


def skeleton_edges(g: nx.DiGraph) -> set[frozenset]:
    """Adjacencies of ``g`` as unordered pairs ``frozenset({a, b})``, whatever the marks."""
    _check_graph(g, "g")
    return {frozenset((u, v)) for u, v in g.edges()}


def directed_edges(g: nx.DiGraph) -> set[tuple]:
    """One-way edges ``(a, b)`` of ``g`` (``a → b`` stored without ``b → a``)."""
    _check_graph(g, "g")
    return {(u, v) for u, v in g.edges() if not g.has_edge(v, u)}


def undirected_edges(g: nx.DiGraph) -> set[frozenset]:
    """Undirected edges ``frozenset({a, b})`` of ``g`` (stored as both ``a → b`` and ``b → a``)."""
    _check_graph(g, "g")
    return {frozenset((u, v)) for u, v in g.edges() if g.has_edge(v, u)}


def v_structures(g: nx.DiGraph) -> set[tuple]:
    """Unshielded colliders ``(a, c, b)``: one-way ``a → c ← b`` with ``a``, ``b`` non-adjacent, ``a < b``.

    Only one-way edges count, so on a PDAG undirected edges never form a
    collider. Works on DAGs, PDAGs and CPDAGs (Verma and Pearl 1990).
    """
    _check_graph(g, "g")
    found = set()
    for c in g.nodes:
        parents = _sorted_nodes(_directed_parents(g, c))
        for a, b in itertools.combinations(parents, 2):
            if not _adjacent(g, a, b):
                a, b = _ordered(a, b)
                found.add((a, c, b))
    return found


# --------------------------------------------------------------------------- adjacency


def to_adjacency(g: nx.DiGraph, nodes: Sequence[Hashable] | None = None) -> np.ndarray:
    """Adjacency matrix ``A`` with ``A[i, j] = 1`` iff ``g`` has the edge ``nodes[i] → nodes[j]``.

    An undirected edge gives ``A[i, j] = A[j, i] = 1`` (the package's PDAG
    convention). ``nodes`` fixes the row/column order (default: ``g``'s node
    order) and must list every node of ``g`` exactly once.
    """
    _check_graph(g, "g")
    nodes = list(g.nodes) if nodes is None else list(nodes)
    if len(set(nodes)) != len(nodes):
        raise ValueError("nodes must not contain duplicates")
    if set(nodes) != set(g.nodes):
        missing = _sorted_nodes(set(g.nodes) - set(nodes))[:5]
        extra = _sorted_nodes(set(nodes) - set(g.nodes))[:5]
        raise ValueError(f"nodes must list exactly the nodes of g; missing {missing}, not in g {extra}")
    index = {v: i for i, v in enumerate(nodes)}
    A = np.zeros((len(nodes), len(nodes)), dtype=np.int8)
    if g.number_of_edges():
        rows, cols = zip(*((index[u], index[v]) for u, v in g.edges()))
        A[list(rows), list(cols)] = 1
    return A


def from_adjacency(A: np.ndarray, nodes: Sequence[Hashable]) -> nx.DiGraph:
    """Graph with an edge ``nodes[i] → nodes[j]`` for every non-zero ``A[i, j]``.

    Symmetric non-zero pairs become undirected edges (stored both ways), the
    inverse of :func:`to_adjacency`. The diagonal must be zero.
    """
    A = np.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square 2-D matrix, got shape {A.shape}")
    nodes = list(nodes)
    if len(nodes) != A.shape[0]:
        raise ValueError(f"nodes must have one name per row of A ({A.shape[0]}), got {len(nodes)}")
    if len(set(nodes)) != len(nodes):
        raise ValueError("nodes must not contain duplicates")
    if not np.issubdtype(A.dtype, np.number) and A.dtype != bool:
        raise TypeError(f"A must be numeric or boolean, got dtype {A.dtype}")
    if np.any(np.diagonal(A) != 0):
        raise ValueError("A must have a zero diagonal (self-loops are not allowed)")
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    rows, cols = np.nonzero(A)
    g.add_edges_from((nodes[i], nodes[j]) for i, j in zip(rows.tolist(), cols.tolist()))
    return g


# --------------------------------------------------------------------------- Meek rules / CPDAG


def _meek_orients(g: nx.DiGraph, a: Hashable, b: Hashable) -> bool:
    """Whether one of Meek's rules R1–R3 orients the undirected edge ``a − b`` as ``a → b``."""
    # R1: c → a − b, c and b non-adjacent  ⇒  a → b.
    for c in _directed_parents(g, a):
        if c != b and not _adjacent(g, c, b):
            return True
    # R2: a → c → b and a − b  ⇒  a → b.
    b_parents = _directed_parents(g, b)
    for c in b_parents:
        if c in g.succ[a] and c not in g.pred[a]:
            return True
    # R3: a − c → b, a − d → b, c and d non-adjacent  ⇒  a → b.
    candidates = _sorted_nodes(_undirected_neighbours(g, a) & b_parents)
    for c, d in itertools.combinations(candidates, 2):
        if not _adjacent(g, c, d):
            return True
    return False


def apply_meek_rules(pdag: nx.DiGraph) -> nx.DiGraph:
    """Apply Meek's orientation rules R1–R3 to a fixpoint and return the new PDAG.

    The argument is not modified. Undirected edges (stored both ways) are
    visited in sorted order, repeatedly, until no rule fires:

    - R1: ``c → a − b`` with ``c``, ``b`` non-adjacent ⇒ ``a → b``;
    - R2: ``a → c → b`` with ``a − b`` ⇒ ``a → b``;
    - R3: ``a − c → b``, ``a − d → b``, ``a − b``, ``c``, ``d`` non-adjacent ⇒ ``a → b``.

    R4 is not applied: Meek (1995, Thm. 2–3) shows R1–R3 are complete when
    there is no background knowledge, i.e. starting from a DAG's skeleton and
    v-structures they already yield the CPDAG; R4 only fires once background
    knowledge has oriented edges. Rules only ever orient undirected edges, so
    an inconsistent input (e.g. a PC output with conflicting colliders) never
    gains a bidirected edge; the sorted visiting order makes the result
    deterministic.

    References: Meek, C. (1995). Causal inference and causal explanation with
    background knowledge. UAI, Sec. 2 (rules R1–R4).
    """
    _check_graph(pdag, "pdag")
    g = pdag.copy()
    changed = True
    while changed:
        changed = False
        pairs = _sorted_nodes(
            (_ordered(u, v) for u, v in g.edges() if g.has_edge(v, u) and _ordered(u, v) == (u, v))
        )
        for a, b in pairs:
            if not (g.has_edge(a, b) and g.has_edge(b, a)):
                continue  # oriented earlier in this sweep
            if _meek_orients(g, a, b):
                g.remove_edge(b, a)
                changed = True
            elif _meek_orients(g, b, a):
                g.remove_edge(a, b)
                changed = True
    return g


def dag_to_cpdag(dag: nx.DiGraph) -> nx.DiGraph:
    """The CPDAG (essential graph) of a DAG's Markov equivalence class.

    Skeleton of ``dag``, its unshielded colliders oriented, every other edge
    undirected, then :func:`apply_meek_rules`. Two DAGs are Markov equivalent
    iff they share skeleton and unshielded colliders (Verma and Pearl 1990),
    and R1–R3 orient exactly the edges shared by every member of the class
    (Meek 1995), so the result is the CPDAG. Node order follows ``dag``.
    """
    check_dag(dag, "dag")
    g = nx.DiGraph()
    g.add_nodes_from(dag.nodes(data=True))
    for u, v in dag.edges():
        g.add_edge(u, v)
        g.add_edge(v, u)
    # a parent can belong to several colliders at the same child: collect the edges first
    colliders = v_structures(dag)
    g.remove_edges_from({(c, a) for a, c, _ in colliders} | {(c, b) for _, c, b in colliders})
    return apply_meek_rules(g)


# --------------------------------------------------------------------------- d-separation


def _node_set(dag: nx.DiGraph, value: Any, name: str) -> set:
    if value is None:
        return set()
    try:
        if value in dag:
            return {value}
    except TypeError:  # unhashable collection
        pass
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} = {value!r} is not a node of dag")
    try:
        nodes = set(value)
    except TypeError:
        raise ValueError(f"{name} = {value!r} is not a node of dag") from None
    missing = [v for v in nodes if v not in dag]
    if missing:
        raise ValueError(f"{name} contains node(s) not in dag: {_sorted_nodes(missing)[:5]}")
    return nodes


def d_separated(dag: nx.DiGraph, x: Any, y: Any, S: Iterable[Hashable] | None = ()) -> bool:
    """Whether ``x`` and ``y`` are d-separated by ``S`` in ``dag`` (Pearl 1988).

    ``x`` and ``y`` are nodes or collections of nodes; ``S`` is a collection
    of nodes (``None`` or empty for marginal independence). The sets must be
    disjoint. Wraps :func:`networkx.is_d_separator`.
    """
    check_dag(dag, "dag")
    xs = _node_set(dag, x, "x")
    ys = _node_set(dag, y, "y")
    zs = _node_set(dag, S, "S")
    if not xs or not ys:
        raise ValueError("x and y must each name at least one node")
    for (n1, s1), (n2, s2) in itertools.combinations((("x", xs), ("y", ys), ("S", zs)), 2):
        if s1 & s2:
            raise ValueError(f"{n1} and {n2} must be disjoint; both contain {_sorted_nodes(s1 & s2)[:5]}")
    test = getattr(nx, "is_d_separator", None) or nx.d_separated  # networkx < 3.3 fallback
    return bool(test(dag, xs, ys, zs))


# --------------------------------------------------------------------------- metrics


def tpr_fpr_tdr(
    estimated: nx.DiGraph,
    true: nx.DiGraph,
    *,
    convention: Literal["nan", "pcalg"] = "nan",
) -> dict[str, float]:
    """True positive, false positive and true discovery rates of the skeleton.

    Paper 000 (Xu, Yuan, Wu 2017, Sec. VI) defines

    - TPR = correctly found edges / true edges,
    - FPR = misplaced edges / true gaps (non-adjacent pairs of the true graph),
    - TDR = correctly found edges / found edges,

    and implements its algorithms on the R package pcalg, whose
    ``compareGraphs`` documents exactly these definitions and computes them
    on the **skeletons** (both graphs made undirected). We do the same:
    orientation is ignored, an edge is "correctly found" when the pair is
    adjacent in both graphs.

    Empty denominators: with ``convention="nan"`` (default) the rate is
    ``nan``. With ``convention="pcalg"`` the values of ``compareGraphs`` are
    used: TPR = 0 without true edges, FPR = 1 without true gaps, and TDR = 1
    without found edges.

    Returns ``{"tpr", "fpr", "tdr"}``.
    """
    if convention not in ("nan", "pcalg"):
        raise ValueError(f"convention must be 'nan' or 'pcalg', got {convention!r}")
    _check_same_nodes(estimated, true)
    est = skeleton_edges(estimated)
    tru = skeleton_edges(true)
    p = true.number_of_nodes()
    n_true = len(tru)
    n_gaps = p * (p - 1) // 2 - n_true
    n_found = len(est)
    correct = len(est & tru)
    misplaced = n_found - correct
    tpr, fpr, tdr = _ratio(correct, n_true), _ratio(misplaced, n_gaps), _ratio(correct, n_found)
    if convention == "pcalg":
        tpr = 0.0 if n_true == 0 else tpr
        fpr = 1.0 if n_gaps == 0 else fpr
        tdr = 1.0 if n_found == 0 else tdr
    return {"tpr": tpr, "fpr": fpr, "tdr": tdr}


def _prf(est: set, tru: set) -> dict[str, float]:
    tp = len(est & tru)
    fp = len(est - tru)
    fn = len(tru - est)
    return {
        "precision": _ratio(tp, tp + fp),
        "recall": _ratio(tp, tp + fn),
        "f1": _ratio(2 * tp, 2 * tp + fp + fn),
        "tp": float(tp),
        "fp": float(fp),
        "fn": float(fn),
    }


def skeleton_prf(estimated: nx.DiGraph, true: nx.DiGraph) -> dict[str, float]:
    """Precision, recall and F1 of the estimated skeleton (unordered adjacent pairs).

    precision = tp / (tp + fp), recall = tp / (tp + fn) and
    F1 = 2 tp / (2 tp + fp + fn), the harmonic mean of the two where both
    are defined. Empty denominators give ``nan`` (precision when nothing is
    found, recall when the truth has no edge, F1 only when both graphs are
    empty); an empty estimate against a non-empty truth has F1 = 0. The
    counts are returned too (``"tp"``, ``"fp"``, ``"fn"``), for pooling runs.
    """
    _check_same_nodes(estimated, true)
    return _prf(skeleton_edges(estimated), skeleton_edges(true))


def cpdag_pair_prf(estimated: nx.DiGraph, true: nx.DiGraph) -> dict[str, float]:
    """Precision, recall and F1 on the **directed pairs** of two PDAGs/CPDAGs.

    Each graph is read as its set of ordered pairs ``(a, b)`` — which is
    exactly its edge set under the package convention: ``a → b`` is one pair,
    and an undirected edge ``a − b`` counts as **two** pairs, ``(a, b)`` and
    ``(b, a)``. Precision = |E ∩ E*| / |E|, recall = |E ∩ E*| / |E*|, F1 as in
    papers 001 (CURATE, "Evaluation Metric") and 003 (Priv-PC, footnote 4),
    applied to CPDAG edge sets under this two-pairs convention.

    So an estimated ``a − b`` against a true ``a → b`` scores one true
    positive and one false positive; a reversed edge scores one false
    positive and one false negative. ``nan`` and F1 conventions as in
    :func:`skeleton_prf`; counts ``"tp"``, ``"fp"``, ``"fn"`` are in pairs.
    """
    _check_same_nodes(estimated, true)
    return _prf(set(estimated.edges()), set(true.edges()))


def _mark(g: nx.DiGraph, a: Hashable, b: Hashable) -> str:
    ab, ba = g.has_edge(a, b), g.has_edge(b, a)
    if ab and ba:
        return "-"
    if ab:
        return ">"
    if ba:
        return "<"
    return ""


def shd(estimated: nx.DiGraph, true: nx.DiGraph) -> dict[str, float]:
    """Structural Hamming distance between two PDAGs (Tsamardinos et al. 2006).

    Over all unordered node pairs: a pair adjacent only in ``true`` is
    *missing*, a pair adjacent only in ``estimated`` is *extra*, and a pair
    adjacent in both with a different mark (``a → b`` vs ``b → a``, or
    directed vs undirected) is *misoriented*; each counts 1, and
    ``shd = missing + extra + misoriented``. This is the count of edge
    insertions, deletions and flips of pcalg's ``shd``.

    Returns ``{"shd", "missing", "extra", "misoriented"}`` (floats).
    """
    _check_same_nodes(estimated, true)
    est = skeleton_edges(estimated)
    tru = skeleton_edges(true)
    missing = len(tru - est)
    extra = len(est - tru)
    misoriented = 0
    for pair in est & tru:
        a, b = tuple(pair)
        if _mark(estimated, a, b) != _mark(true, a, b):
            misoriented += 1
    return {
        "shd": float(missing + extra + misoriented),
        "missing": float(missing),
        "extra": float(extra),
        "misoriented": float(misoriented),
    }

"""The PC engine: one skeleton loop, one orientation step, pluggable decisions.

Every constraint-based algorithm of the compendium is this engine plus a
*decider*. The engine owns the loop of the order-independent ("stable") PC
algorithm of Colombo & Maathuis (2014): at the start of each order ℓ the
adjacency sets are frozen; every ordered pair (x, y) still adjacent is tested
against the conditioning sets S ⊆ adj(x) \\ {y} with |S| = ℓ until one of
them declares independence, which removes the edge and stores S as the
separating set of {x, y}. Edges are then oriented: unshielded colliders
x → z ← y where z ∉ sepset(x, y), then Meek's rules R1–R3.

Deciders plug in at these points, so no algorithm copies this loop:

* :meth:`Decider.decide` — per CI test: ``True`` means "independent, remove
  the edge" (non-private PC, Priv-PC, SVT-PC, PCD, CURATE, Marginal-PC);
* :meth:`Decider.candidates` — per pair and order: which neighbours' subsets
  are tried as separating sets (default all; Marginal-PC the strongest);
* :meth:`Decider.dependent_for_all` — per pair and order, before the tests:
  ``True`` when every test of the pair at this order is certain to keep the
  edge without side effects, so the engine counts them instead of asking
  each (PCD's Kendall test on continuous conditioning sets, whose number
  grows like 2^degree);
* :meth:`Decider.decide_node` — per node and order: choose at once which
  neighbours of a node to remove and with which separating sets (EM-PC);
* :meth:`Decider.start_order` — before each order; returning ``False`` stops
  the search (CURATE re-allocates its budget here and stops on budget).

References
----------
Spirtes, Glymour & Scheines (2000), *Causation, Prediction, and Search*.
Colombo & Maathuis (2014), "Order-independent constraint-based causal
structure learning", JMLR 15.
Meek (1995), "Causal inference and causal explanation with background knowledge", UAI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Callable, Mapping, Sequence

import networkx as nx
import numpy as np

from ..ci import TESTS, CIResult, CITester
from ..graphs import apply_meek_rules
from ..validation import check_int, check_probability

__all__ = [
    "Decider",
    "PValueDecider",
    "OracleDecider",
    "PCResult",
    "Skeleton",
    "pc",
    "pc_skeleton",
    "orient",
    "run_pc",
    "node_names_of",
    "worst_case_tests",
    "order_tests_bound",
]


class Decider:
    """Base class of edge deciders; subclass and override what you need.

    A decider may keep per-run state (a privacy ledger, a sparse-vector
    threshold, the remaining budget); create a fresh one for every run.
    """

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        """Return True when X ⫫ Y | S is declared, i.e. the edge x−y is removed."""
        raise NotImplementedError

    def start_order(self, order: int, adjacency: np.ndarray) -> bool:
        """Called before each order with a read-only adjacency matrix; False stops the search."""
        return True

    def candidates(self, x: int, y: int, others: np.ndarray, order: int) -> np.ndarray:
        """The variables whose subsets of size ``order`` ≥ 1 are tried as separating sets of x − y.

        ``others`` is adj(x) \\ {y} at the start of the order (increasing). The
        default keeps all of them (PC); a decider may keep fewer (Marginal-PC:
        the strongest), from its own released values only.
        """
        return others

    def dependent_for_all(self, x: int, y: int, candidates: np.ndarray, order: int) -> bool:
        """Whether ``decide(x, y, S)`` is certainly False for every S ⊆ ``candidates`` with |S| = ``order``.

        Return True only when each of those decisions would be "dependent" with
        no effect but being counted (no noise drawn, no budget spent, no state
        changed): the engine then counts the C(len(candidates), order) tests
        without asking them one by one, and the decider must count them itself
        if it keeps counts. The default, False, asks every test.
        """
        return False

    def collider(self, x: int, z: int, y: int) -> bool:
        """Whether the unshielded triple x − z − y, z outside sepset(x, y), is oriented x → z ← y.

        The default, True, is PC's rule. A noisy decider may ask for evidence
        first (Marginal-PC: x and y dependent given z in its released tables) and
        return False to leave the triple unoriented; it must read only values it
        has released (post-processing).
        """
        return True

    #: set to True in subclasses that implement ``decide_node`` instead of ``decide``
    per_node: bool = False

    #: set to True when ``decide`` gives the same answers whichever process asks and in whatever order the pairs
    #: come (no noise drawn, no state beyond a memo): the engine may then test the pairs of one order in worker
    #: processes (``n_jobs``), each with a copy of the decider
    parallel_safe: bool = False

    def worker_counts(self) -> dict[str, int]:
        """Counters a worker's copy of a ``parallel_safe`` decider accumulated (added back by :meth:`add_counts`)."""
        return {}

    def add_counts(self, counts: Mapping[str, int]) -> None:
        """Add a worker copy's :meth:`worker_counts` to this decider's own."""

    def decide_node(self, x: int, neighbours: np.ndarray, order: int,
                    adjacency: np.ndarray) -> tuple[Mapping[int, tuple[int, ...]], int]:
        """Per-node decisions (EM-PC): ``({y: S, ...}, n_tests)``.

        Returns the neighbours y of x to remove with their separating sets, and
        the number of CI tests computed to decide. ``neighbours`` is x's frozen
        adjacency set at the start of this order; ``adjacency`` is a copy of
        the current adjacency matrix.
        """
        raise NotImplementedError


class PValueDecider(Decider):
    """Non-private decisions: independent when the test's p-value exceeds α.

    A NaN p-value (a test without evidence either way, e.g. Kendall's τ with
    ``degenerate="keep_edge"`` when every stratum is degenerate) is not above α:
    the edge is kept. Parallel-safe with a :class:`~dpcd.ci.CITester` (a pure
    function of the data, memoised per pair; a worker's copy counts its own
    computed tests, added back to ``tester.n_computed``).
    """

    parallel_safe = True

    def worker_counts(self) -> dict[str, int]:
        return {"n_computed": int(getattr(self.tester, "n_computed", 0))}

    def add_counts(self, counts: Mapping[str, int]) -> None:
        if hasattr(self.tester, "n_computed"):
            self.tester.n_computed += int(counts.get("n_computed", 0))

    def __init__(self, tester: Callable[[int, int, tuple[int, ...]], CIResult], alpha: float):
        self.tester = tester
        self.alpha = check_probability(alpha, "alpha")

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        p_value = float(self.tester(x, y, S).p_value)
        return not math.isnan(p_value) and p_value > self.alpha


class OracleDecider(Decider):
    """Perfect decisions from d-separation in a known DAG (for testing and teaching)."""

    def __init__(self, dag: nx.DiGraph, nodes: Sequence[str]):
        self.dag = dag
        self.nodes = list(nodes)

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        names = self.nodes
        return nx.is_d_separator(self.dag, {names[x]}, {names[y]}, {names[s] for s in S})


@dataclass(frozen=True)
class Skeleton:
    """Result of the skeleton phase on variable indices.

    ``adjacency`` is a symmetric boolean matrix; ``sepsets`` maps (i, j) with
    i < j to the separating set found; ``tests_per_order`` counts the CI
    decisions made at each order (node deciders report theirs).
    """

    adjacency: np.ndarray
    sepsets: Mapping[tuple[int, int], tuple[int, ...]]
    tests_per_order: tuple[int, ...]
    stopped_early: bool = False
    stopped_by: str | None = None


@dataclass(frozen=True)
class PCResult:
    """A CPDAG with how it was found.

    ``cpdag``: nx.DiGraph over the variable names, an undirected edge stored as
    both directions. ``skeleton``: set of unordered pairs. ``sepsets``: the
    separating set of every removed pair (by name). ``n_tests``: CI decisions
    made. ``ledger``: the privacy ledger of a private run (None otherwise).
    ``stopped_by``: why the search stopped before running out of tests —
    ``"decider"`` (its budget, e.g. CURATE), ``"max_tests"`` (the next order
    could have exceeded the test cap) or None.
    ``info``: the run's parameters and diagnostics. For a private run the
    released output is the graph (and what the ledger charged); diagnostics
    such as timings or score statistics may be computed without noise and are
    for the data holder, not for release.
    """

    nodes: tuple[str, ...]
    cpdag: nx.DiGraph
    skeleton: frozenset
    sepsets: Mapping[frozenset, tuple[str, ...]]
    n_tests: int
    tests_per_order: tuple[int, ...]
    ledger: object | None = None
    stopped_early: bool = False
    info: dict = field(default_factory=dict)
    stopped_by: str | None = None


def order_tests_bound(adjacency: np.ndarray, order: int) -> int:
    """Most CI decisions one order of the skeleton search can make from ``adjacency``: Σ_x Σ_{y ∈ adj(x)} C(|adj(x)| − 1, order).

    A function of the current graph only (for a private algorithm, of its
    earlier private decisions), so a cap on it is post-processing.

    >>> order_tests_bound(~np.eye(4, dtype=bool), 1)
    24
    """
    degrees = np.asarray(adjacency, dtype=bool).sum(axis=1)
    return int(sum(int(d) * math.comb(int(d) - 1, order) for d in degrees if d - 1 >= order))


def pc_skeleton(n_vars: int, decider: Decider, *, max_order: int | None = None,
                max_tests: int | None = None, n_jobs: int = 1) -> Skeleton:
    """Order-independent PC skeleton search over ``n_vars`` variables driven by ``decider``.

    ``max_tests`` caps the run's CI decisions: an order starts only when the
    decisions made so far plus the most it could make
    (:func:`order_tests_bound`) stay within the cap, so a run stops at the end
    of a complete order (``stopped_by="max_tests"``) and its time is bounded
    whatever the decisions. Order 0 always runs.

    ``n_jobs`` > 1 (or −1: every core) tests the pairs of one order in that
    many worker processes through ``joblib`` (a ``parallel_safe`` decider
    only; on a Dask cluster inside ``joblib.parallel_backend("dask")``).
    Within an order the adjacency sets are frozen, so each pair's decision
    depends on its own tests alone: the pair x < y is tested from x's side,
    then from y's, each side's sets in the sequential order, exactly as one
    process would. Decisions, separating sets and test counts are the same
    for every ``n_jobs``. Worker processes pay off from about 10⁵ rows (a
    pool starts once per process and is reused).
    """
    n_vars = check_int(n_vars, "n_vars", minimum=2)
    if max_order is not None:
        max_order = check_int(max_order, "max_order", minimum=0)
    if max_tests is not None:
        max_tests = check_int(max_tests, "max_tests", minimum=1)
    n_jobs = check_int(n_jobs, "n_jobs", minimum=-1)
    if n_jobs == 0:
        raise ValueError("n_jobs must be a positive number of workers or -1 (every core), got 0")
    if n_jobs != 1 and (decider.per_node or not decider.parallel_safe):
        raise ValueError(f"n_jobs={n_jobs} needs a parallel-safe per-test decider; {type(decider).__name__} is not "
                         "(private deciders draw noise in sequence)")
    adjacency = ~np.eye(n_vars, dtype=bool)
    sepsets: dict[tuple[int, int], tuple[int, ...]] = {}
    tests_per_order: list[int] = []
    stopped_early = False
    stopped_by = None
    order = 0
    while max_order is None or order <= max_order:
        frozen = [np.flatnonzero(adjacency[i]) for i in range(n_vars)]
        if max(len(f) for f in frozen) - 1 < order:
            break
        if order and max_tests is not None and sum(tests_per_order) + order_tests_bound(adjacency, order) > max_tests:
            stopped_early, stopped_by = True, "max_tests"
            break
        if not decider.start_order(order, adjacency.copy()):
            stopped_early, stopped_by = True, "decider"
            break
        n_tests = 0
        if n_jobs != 1:
            n_tests = _parallel_order(decider, frozen, order, adjacency, sepsets, n_jobs)
            tests_per_order.append(n_tests)
            order += 1
            continue
        for x in range(n_vars):
            if len(frozen[x]) - 1 < order:
                continue
            if decider.per_node:
                removed, node_tests = decider.decide_node(x, frozen[x], order, adjacency.copy())
                n_tests += int(node_tests)
                for y, S in removed.items():
                    if not adjacency[x, y]:
                        continue
                    adjacency[x, y] = adjacency[y, x] = False
                    sepsets[(min(x, y), max(x, y))] = tuple(int(s) for s in S)
                continue
            for y in frozen[x]:
                if not adjacency[x, y]:
                    continue  # removed earlier in this order, from y's side
                found, tests = _pair_side(decider, frozen, order, x, int(y))
                n_tests += tests
                if found is not None:
                    adjacency[x, y] = adjacency[y, x] = False
                    sepsets[(min(x, int(y)), max(x, int(y)))] = found
        tests_per_order.append(n_tests)
        order += 1
    return Skeleton(adjacency, sepsets, tuple(tests_per_order), stopped_early, stopped_by)


def _pair_side(decider: Decider, frozen: list[np.ndarray], order: int, x: int, y: int) -> tuple[tuple | None, int]:
    """The tests of pair x − y from x's side at ``order``: (the separating set found or None, tests made)."""
    if len(frozen[x]) - 1 < order:
        return None, 0
    others = frozen[x][frozen[x] != y]
    if order:
        others = decider.candidates(x, y, others, order)
        if decider.dependent_for_all(x, y, others, order):
            return None, math.comb(len(others), order)  # every test keeps the edge: counted, not asked
    n_tests = 0
    for S in combinations(others.tolist(), order):
        n_tests += 1
        if decider.decide(x, y, S):
            return S, n_tests
    return None, n_tests


def _decide_pairs(decider: Decider, frozen: list[np.ndarray], order: int,
                  pairs: list[tuple[int, int]]) -> tuple[list[tuple[tuple | None, int]], dict[str, int]]:
    """Decide ``pairs`` (x < y) at ``order``, each from x's side then y's: outcomes and what the decider counted.

    The counts are this call's own (a worker may run several calls on one copy of the decider).
    """
    before = decider.worker_counts()
    outcomes = []
    for x, y in pairs:
        found, first = _pair_side(decider, frozen, order, x, y)
        if found is None:
            found, second = _pair_side(decider, frozen, order, y, x)
            first += second
        outcomes.append((found, first))
    return outcomes, {k: v - before.get(k, 0) for k, v in decider.worker_counts().items()}


def _parallel_order(decider: Decider, frozen: list[np.ndarray], order: int, adjacency: np.ndarray,
                    sepsets: dict, n_jobs: int) -> int:
    """One order of :func:`pc_skeleton` with its pairs decided in ``n_jobs`` joblib workers; the test count."""
    from joblib import Parallel, delayed, effective_n_jobs

    pairs = [(x, int(y)) for x in range(len(frozen)) for y in frozen[x] if x < y]
    k = max(1, min(len(pairs), 4 * effective_n_jobs(n_jobs)))
    chunks = [pairs[i::k] for i in range(k)]  # interleaved: each worker gets pairs of every node
    done = Parallel(n_jobs=n_jobs, max_nbytes=None)(delayed(_decide_pairs)(decider, frozen, order, chunk) for chunk in chunks)
    n_tests = 0
    for chunk, (outcomes, counts) in zip(chunks, done):
        decider.add_counts(counts)
        for (x, y), (found, tests) in zip(chunk, outcomes):
            n_tests += tests
            if found is not None:
                adjacency[x, y] = adjacency[y, x] = False
                sepsets[(x, y)] = found
    return n_tests


def orient(nodes: Sequence[str], adjacency: np.ndarray,
           sepsets: Mapping[tuple[int, int], tuple[int, ...]],
           collider: Callable[[int, int, int], bool] | None = None) -> nx.DiGraph:
    """Orient a skeleton into a CPDAG: unshielded colliders, then Meek's rules R1–R3.

    A triple x − z − y with x, y non-adjacent becomes x → z ← y when z is not
    in sepset(x, y). When two colliders disagree about an edge (finite-sample
    or noisy decisions can ask for both a → z and z → a), the edge is left
    undirected, so the result does not depend on the order in which the
    colliders are visited (a CPDAG cannot hold the a ↔ z mark pcalg uses for
    such conflicts). With correct CI decisions no conflict arises and the
    result is the true CPDAG. ``collider(x, z, y)``, when given, is asked
    about each such triple (x < y) and may veto it (:meth:`Decider.collider`).
    """
    n = len(nodes)
    arrows: set[tuple[int, int]] = set()  # (a, z): a → z required by some collider
    for z in range(n):
        nbrs = np.flatnonzero(adjacency[z]).tolist()
        for x, y in combinations(nbrs, 2):
            if adjacency[x, y]:
                continue
            if z not in sepsets.get((min(x, y), max(x, y)), ()) and (collider is None or collider(x, z, y)):
                arrows.update(((x, z), (y, z)))
    directed = adjacency.copy()  # directed[i, j] and directed[j, i] both True = undirected
    for a, z in arrows:
        if (z, a) not in arrows:
            directed[z, a] = False
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    rows, cols = np.nonzero(directed)
    graph.add_edges_from((nodes[i], nodes[j]) for i, j in zip(rows.tolist(), cols.tolist()))
    return apply_meek_rules(graph)


def run_pc(nodes: Sequence[str], decider: Decider, *, max_order: int | None = None,
           ledger: object | None = None, info: dict | None = None, max_tests: int | None = None,
           n_jobs: int = 1) -> PCResult:
    """Run the PC engine with ``decider`` over variables named ``nodes``.

    This is the entry point every algorithm module uses: it builds its
    decider (and ledger) and calls ``run_pc``. ``max_order``, ``max_tests``
    and ``n_jobs`` as in :func:`pc_skeleton`.
    """
    nodes = tuple(str(v) for v in nodes)
    skel = pc_skeleton(len(nodes), decider, max_order=max_order, max_tests=max_tests, n_jobs=n_jobs)
    cpdag = orient(nodes, skel.adjacency, skel.sepsets, decider.collider)
    rows, cols = np.nonzero(np.triu(skel.adjacency))
    skeleton = frozenset(frozenset((nodes[i], nodes[j])) for i, j in zip(rows.tolist(), cols.tolist()))
    sepsets = {frozenset((nodes[i], nodes[j])): tuple(nodes[s] for s in S) for (i, j), S in skel.sepsets.items()}
    return PCResult(nodes, cpdag, skeleton, sepsets, int(sum(skel.tests_per_order)), skel.tests_per_order,
                    ledger, skel.stopped_early, dict(info or {}), skel.stopped_by)


def pc(data, *, ci_test: str | Callable = "g2", alpha: float = 0.01, max_order: int | None = None,
       node_names: Sequence[str] | None = None, variant: str = "a", degenerate: str = "independent",
       max_tests: int | None = None, n_jobs: int = 1, distinct: bool | None = None) -> PCResult:
    """Non-private PC: the engine with the p-value decider (independent when p > α).

    Parameters
    ----------
    data : DataFrame or array (rows × variables). Integer category codes for
        "g2", "chi2", "kendall", "spearman"; numbers for "fisherz".
    ci_test : name of a test in :data:`dpcd.ci.TESTS` or a callable
        ``f(data, x, y, S) -> CIResult``.
    alpha : significance level; the edge is removed when p > alpha.
    max_order : largest conditioning-set size (None = no limit).
    max_tests : cap on the CI decisions (None = no cap; see :func:`pc_skeleton`).
    node_names : names of the variables (default: the DataFrame's columns or
        "X1".."Xp").
    variant : Kendall's τ variant for ``ci_test="kendall"``.
    degenerate : for ``ci_test="kendall"`` or ``"fisherz"``, how strata in which X or Y is
        constant count (:data:`dpcd.ci.discrete.DEGENERATE_CONVENTIONS`):
        "independent" (default: they add τ = 0, and a test without an
        informative stratum has p = 1, so the edge is removed) or "keep_edge"
        (the Priv-PC authors' code: they are left out, and a test without an
        informative stratum has p = NaN, so the edge is kept). Deterministic
        nodes (asia's ``either`` = tub OR lung) make every stratum of some tests
        degenerate. For ``ci_test="fisherz"`` the same two conventions apply to a
        singular covariance sub-matrix of (X, Y, S) (p = 1 or NaN), which deep
        variables of dense linear SEMs reach (Tables X–XI of Xu et al. at
        p = 100). Only this non-private PC offers the option: the choice reads
        the data without noise, so the private algorithms and
        :mod:`dpcd.registry` never take it.
    n_jobs : worker processes testing the pairs of one order (:func:`pc_skeleton`;
        −1: every core); the result is the same for every value.
    distinct : discrete tests: count each distinct row once with its
        multiplicity (:class:`~dpcd.ci.CITester`); None (default) does so when
        at most half the rows are distinct. The result is the same either way.

    No privacy: this is the reference every private variant is compared with.

    Examples
    --------
    >>> from dpcd.datasets import load_bnlearn
    >>> from dpcd.graphs import cpdag_pair_prf, dag_to_cpdag
    >>> data, dag = load_bnlearn("cancer", 5000, rng=0)
    >>> result = pc(data, ci_test="g2", alpha=0.01)
    >>> sorted(result.nodes) == sorted(dag.nodes), 0.0 <= cpdag_pair_prf(result.cpdag, dag_to_cpdag(dag))["f1"] <= 1
    (True, True)
    """
    alpha = check_probability(alpha, "alpha")
    discrete = isinstance(ci_test, str) and TESTS.get(ci_test) == "discrete"
    tester = CITester(data, ci_test, variant=variant, degenerate=degenerate,
                      distinct=distinct if discrete else (distinct or False))
    names = node_names_of(data, node_names)
    result = run_pc(names, PValueDecider(tester, alpha), max_order=max_order, max_tests=max_tests, n_jobs=n_jobs)
    test_name = ci_test if isinstance(ci_test, str) else getattr(ci_test, "__name__", "custom")
    return replace(result, info={"ci_test": test_name, "alpha": alpha, "n_computed": tester.n_computed,
                                 "degenerate": degenerate, "distinct_rows": tester.weights is not None})


def worst_case_tests(p: int, max_order: int | None = None) -> int:
    """Most CI tests the PC skeleton search can make on ``p`` variables up to ``max_order``.

    At order k each ordered pair (x, y) is tested against at most C(p − 2, k)
    conditioning sets, so the search makes at most p(p − 1) Σ_{k ≤ m} C(p − 2, k)
    tests, m = min(max_order, p − 2). Data-independent, hence public: the
    privacy plans of per-test algorithms charge this many rounds.

    >>> worst_case_tests(4, 1)
    36
    """
    p = check_int(p, "p", minimum=2)
    last = p - 2 if max_order is None else min(check_int(max_order, "max_order", minimum=0), p - 2)
    return p * (p - 1) * sum(math.comb(p - 2, k) for k in range(last + 1))


def node_names_of(data, node_names: Sequence[str] | None = None) -> list[str]:
    """Variable names: ``node_names`` if given (checked), else DataFrame columns, else X1..Xp."""
    p = np.shape(data)[1]
    if node_names is not None:
        names = [str(v) for v in node_names]
        if len(names) != p:
            raise ValueError(f"node_names has {len(names)} names but data has {p} columns")
        if len(set(names)) != p:
            raise ValueError("node_names must be unique")
        return names
    columns = getattr(data, "columns", None)
    if columns is not None:
        return [str(c) for c in columns]
    return [f"X{i + 1}" for i in range(p)]

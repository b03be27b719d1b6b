"""Datasets: bnlearn networks sampled with a seed, synthetic generators, real data.

Every loader returns a :class:`Dataset`: the data plus the true DAG where one exists.
"""

from __future__ import annotations

import gzip
import importlib.util
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Literal, Sequence

import networkx as nx
import numpy as np
import pandas as pd

from .graphs import check_dag
from .validation import RngLike, as_rng, check_int, check_positive, check_probability

if TYPE_CHECKING:  # pgmpy is imported lazily: importing its readers takes about a second
    from pgmpy.models import DiscreteBayesianNetwork

    from .schema import Schema

__all__ = [
    "Dataset",
    "BNLEARN_NETWORKS",
    "NONLINEAR_FUNCTIONS",
    "load_network",
    "bnlearn_dag",
    "load_bnlearn",
    "bnlearn_structure_summary",
    "random_dag",
    "DEGREE_PROFILES",
    "random_network_dag",
    "sample_random_network",
    "sample_categorical",
    "sample_linear_gaussian",
    "sample_nonlinear",
    "encode_categorical",
]


@dataclass(frozen=True)
class Dataset:
    """Data plus the true causal DAG (``None`` where the truth is unknown).

    ``data`` columns are the DAG's node names. Discrete data are integer codes
    0..k-1; ``categories`` maps each column to its original state labels.
    Unpacks as ``data, dag = dataset``.
    """

    data: pd.DataFrame
    dag: nx.DiGraph | None
    name: str = ""
    kind: Literal["discrete", "continuous"] = "discrete"
    categories: dict[str, list[str]] | None = None
    meta: dict = field(default_factory=dict)

    def __iter__(self) -> Iterator:
        yield self.data
        yield self.dag

    @property
    def levels(self) -> tuple[int, ...]:
        """Domain sizes of discrete data, from the generating model's states (public), in column order."""
        if self.kind != "discrete" or self.categories is None:
            raise ValueError(f"dataset {self.name!r} is not discrete; it has no levels")
        return tuple(len(self.categories[str(c)]) for c in self.data.columns)

    def schema(self, *, sd_bounds: float = 4.0) -> "Schema":
        """The public schema implied by the generating model (never by the sampled values).

        Discrete data: categorical columns with codes "0".."k−1" (the model's
        states). Linear-Gaussian data: numeric columns with bounds ±``sd_bounds``
        times each variable's model standard deviation, from the implied
        covariance (I − W)^{-T} σ² (I − W)^{-1}. Standardised nonlinear data:
        ±``sd_bounds``. Values beyond the bounds are clamped by the schema.
        """
        from .schema import Schema

        names = [str(c) for c in self.data.columns]
        if self.kind == "discrete":
            return Schema.categorical(self.levels, names, ordinal=False)
        if sd_bounds <= 0:
            raise ValueError(f"sd_bounds must be > 0, got {sd_bounds}")
        if self.name == "linear_gaussian" and "weights" in self.meta:
            W = np.asarray(self.meta["weights"], dtype=float)
            inverse = np.linalg.inv(np.eye(W.shape[0]) - W)
            sd = float(self.meta["noise_std"]) * np.sqrt(np.sum(inverse ** 2, axis=0))
            return Schema.numeric([(-sd_bounds * s, sd_bounds * s) for s in sd], names)
        if self.name == "nonlinear" and self.meta.get("standardize"):
            return Schema.numeric([(-sd_bounds, sd_bounds)] * len(names), names)
        raise ValueError(f"dataset {self.name!r} has no public bounds from its model; declare a Schema")


# =========================================================================== bnlearn networks


def _bundled_model_dir() -> Path | None:
    """pgmpy's folder of example models, located without importing pgmpy."""
    spec = importlib.util.find_spec("pgmpy")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "utils" / "example_models"
    return folder if folder.is_dir() else None


def _bundled_network_names() -> tuple[str, ...]:
    folder = _bundled_model_dir()
    if folder is None:
        return ()
    return tuple(sorted(p.name[: -len(".bif.gz")] for p in folder.glob("*.bif.gz")))


BNLEARN_NETWORKS: tuple[str, ...] = _bundled_network_names()
"""Names of the bnlearn networks available offline: the BIF files pgmpy ships
in ``pgmpy/utils/example_models`` (found at import time, sorted by name)."""


def _check_network_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be a string naming a bnlearn network, got {type(name).__name__}")
    key = name.strip().lower()
    if key not in BNLEARN_NETWORKS:
        available = ", ".join(BNLEARN_NETWORKS) or "none (pgmpy's bundled BIF files were not found)"
        raise ValueError(f"name must be one of the bundled bnlearn networks ({available}); got {name!r}")
    return key


@lru_cache(maxsize=None)
def _parsed_network(name: str) -> DiscreteBayesianNetwork:
    """Parse the bundled BIF file once per process (parsing alarm takes about a second)."""
    from pgmpy.readwrite import BIFReader

    folder = _bundled_model_dir()
    assert folder is not None  # guaranteed by _check_network_name
    text = gzip.decompress((folder / f"{name}.bif.gz").read_bytes()).decode("utf-8")
    return BIFReader(string=text).get_model()


def load_network(name: str) -> DiscreteBayesianNetwork:
    """The pgmpy ``DiscreteBayesianNetwork`` of a bundled bnlearn network.

    Read from the BIF files shipped inside pgmpy (``pgmpy.utils.load_model``
    would try to download them), parsed once per process and cached; each call
    returns a copy, so changing it does not affect later calls.

    References: Scutari, M. bnlearn Bayesian network repository,
    https://www.bnlearn.com/bnrepository/ ; pgmpy (Ankan and Textor 2024).
    """
    return _parsed_network(_check_network_name(name)).copy()


def bnlearn_dag(name: str) -> nx.DiGraph:
    """The true DAG of a bundled bnlearn network, nodes (strings) in the model's order."""
    model = _parsed_network(_check_network_name(name))
    dag = nx.DiGraph()
    dag.add_nodes_from(str(v) for v in model.nodes())
    dag.add_edges_from((str(u), str(v)) for u, v in model.edges())
    return dag


# =========================================================================== discrete forward sampling


@dataclass(frozen=True)
class _DiscreteBN:
    """A discrete Bayesian network in the array form the sampler needs.

    ``tables[j]`` has one row per parent configuration and one column per
    state of node ``j``; the row index is the mixed-radix code of the parents'
    states with ``parents[j][0]`` most significant (pgmpy's CPD column order).
    """

    nodes: tuple[str, ...]
    parents: tuple[tuple[int, ...], ...]
    cards: tuple[int, ...]
    tables: tuple[np.ndarray, ...]
    cuts: tuple[np.ndarray, ...]  # interior cumulative probabilities, (k - 1, n_configs)
    order: tuple[int, ...]  # a topological order of node indices


def _topological_order(n_nodes: int, parents: Sequence[Sequence[int]]) -> tuple[int, ...]:
    g = nx.DiGraph()
    g.add_nodes_from(range(n_nodes))
    g.add_edges_from((q, j) for j, pa in enumerate(parents) for q in pa)
    return tuple(nx.lexicographical_topological_sort(g))


def _discrete_bn(
    nodes: Sequence[str],
    parents: Sequence[tuple[int, ...]],
    cards: Sequence[int],
    tables: Sequence[np.ndarray],
) -> _DiscreteBN:
    """Assemble a :class:`_DiscreteBN`, precomputing each CPT's inverse-CDF cut points.

    Cut points are cumulative sums normalised by the row total, so a state
    with probability zero at the end of a row gets a cut point of exactly 1.0
    and can never be drawn (uniforms lie in [0, 1)).
    """
    cuts = []
    for table in tables:
        cum = np.cumsum(table, axis=1)
        cuts.append(np.ascontiguousarray((cum[:, :-1] / cum[:, -1:]).T))
    return _DiscreteBN(
        tuple(nodes),
        tuple(tuple(pa) for pa in parents),
        tuple(int(k) for k in cards),
        tuple(tables),
        tuple(cuts),
        _topological_order(len(nodes), parents),
    )


def _forward_sample(bn: _DiscreteBN, n: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``n`` rows from ``bn``: integer codes, columns in ``bn.nodes`` order.

    Vectorised ancestral sampling: nodes are visited in topological order; for
    each node the parents' sampled codes are combined into a mixed-radix
    configuration code, the matching CPT rows are gathered, and the state is
    drawn by inverse CDF with one uniform per row: the state is the number
    of interior cumulative probabilities ≤ u, accumulated one cut point at a
    time (k − 1 vectorised comparisons). No Python loop over rows.
    """
    X = np.zeros((n, len(bn.nodes)), dtype=np.int64, order="F")
    for j in bn.order:
        parents = bn.parents[j]
        u = rng.random(n)
        column = X[:, j]  # a view: filled in place
        if not parents:
            for cut in bn.cuts[j]:
                column += cut[0] <= u
            continue
        code = X[:, parents[0]].copy()
        for q in parents[1:]:
            code *= bn.cards[q]
            code += X[:, q]
        for cut in bn.cuts[j]:
            column += cut.take(code) <= u
    return X


def _bn_from_pgmpy(model) -> tuple[_DiscreteBN, dict[str, list[str]]]:
    nodes = tuple(str(v) for v in model.nodes())
    index = {v: i for i, v in enumerate(nodes)}
    cpds = {str(c.variable): c for c in model.get_cpds()}
    states = {v: [str(s) for s in cpds[v].state_names[v]] for v in nodes}
    parents, cards, tables = [], [], []
    for v in nodes:
        cpd = cpds[v]
        pa = [str(p) for p in cpd.variables[1:]]
        for p in pa:
            if [str(s) for s in cpd.state_names[p]] != states[p]:
                raise ValueError(
                    f"inconsistent network: the CPD of {v!r} orders the states of parent {p!r} as "
                    f"{cpd.state_names[p]}, the CPD of {p!r} as {states[p]}"
                )
        values = np.asarray(cpd.get_values(), dtype=np.float64)  # (k, n_configs)
        parents.append(tuple(index[p] for p in pa))
        cards.append(int(values.shape[0]))
        tables.append(np.ascontiguousarray(values.T))
    return _discrete_bn(nodes, parents, cards, tables), states


@lru_cache(maxsize=None)
def _network_arrays(name: str) -> tuple[_DiscreteBN, dict[str, list[str]]]:
    return _bn_from_pgmpy(_parsed_network(name))


def load_bnlearn(name: str, n: int, rng: RngLike) -> Dataset:
    """Sample ``n`` rows from a bundled bnlearn network (forward sampling).

    Columns are the node names in the model's order (the order of the
    variable declarations in the BIF file); values are integer codes
    0..k-1 following the state order of the node's CPD, and
    ``categories[node]`` lists those state names. ``dag`` is the true DAG
    (:func:`bnlearn_dag`), ``meta = {"network": name}``.

    Sampling is vectorised ancestral sampling (one uniform per row and node,
    inverse CDF on the CPT row of the row's parent configuration); 100 000
    rows of alarm take well under 0.1 s once the network is parsed (parsing
    takes about a second, once per process).

    Raises ``ValueError`` for an unknown ``name`` (the message lists
    :data:`BNLEARN_NETWORKS`).

    References: Scutari, M. bnlearn Bayesian network repository; Henrion, M.
    (1988), Propagating uncertainty in Bayesian networks by probabilistic
    logic sampling.
    """
    key = _check_network_name(name)
    n = check_int(n, "n", minimum=1)
    rng = as_rng(rng)
    bn, states = _network_arrays(key)
    X = _forward_sample(bn, n, rng)
    data = pd.DataFrame(X, columns=list(bn.nodes))
    return Dataset(
        data=data,
        dag=bnlearn_dag(key),
        name=key,
        kind="discrete",
        categories={v: list(states[v]) for v in bn.nodes},
        meta={"network": key},
    )


def bnlearn_structure_summary(name: str) -> dict[str, Any]:
    """Size of a bundled bnlearn network, for tables like paper 002's Tab. 1.

    Returns ``n_nodes``, ``n_edges``, ``max_in_degree``, ``avg_degree``
    (2|E|/p), ``n_levels`` (dict node → number of states), ``min_levels``,
    ``max_levels`` and ``n_parameters`` (free CPT parameters,
    Σ (k − 1) · number of parent configurations).
    """
    key = _check_network_name(name)
    bn, _ = _network_arrays(key)
    dag = bnlearn_dag(key)
    levels = dict(zip(bn.nodes, bn.cards))
    n_nodes = dag.number_of_nodes()
    return {
        "n_nodes": n_nodes,
        "n_edges": dag.number_of_edges(),
        "max_in_degree": max((d for _, d in dag.in_degree()), default=0),
        "avg_degree": 2 * dag.number_of_edges() / n_nodes if n_nodes else 0.0,
        "n_levels": levels,
        "min_levels": min(levels.values(), default=0),
        "max_levels": max(levels.values(), default=0),
        "n_parameters": int(sum((t.shape[1] - 1) * t.shape[0] for t in bn.tables)),
    }


# =========================================================================== synthetic generators


def _check_synthetic_dag(dag: Any) -> tuple[list[str], dict[str, int]]:
    check_dag(dag, "dag")
    nodes = list(dag.nodes)
    if not nodes:
        raise ValueError("dag must have at least one node")
    bad = [v for v in nodes if not isinstance(v, str)]
    if bad:
        raise TypeError(
            f"dag node names must be strings (they become column names), got {bad[:3]}; "
            "relabel with networkx.relabel_nodes(dag, str)"
        )
    return nodes, {v: i for i, v in enumerate(nodes)}


def _parent_indices(dag: nx.DiGraph, nodes: list[str], index: dict[str, int]) -> list[tuple[int, ...]]:
    """Parents of each node as indices, sorted by the DAG's node order."""
    return [tuple(sorted(index[u] for u in dag.predecessors(v))) for v in nodes]


def random_dag(p: int, sparseness: float, rng: RngLike, *, edges: int | None = None) -> nx.DiGraph:
    """Random DAG on nodes ``"X1"``..``"Xp"`` with expected edge density ``sparseness``.

    A random permutation of the nodes fixes a topological order, and each of
    the p(p−1)/2 node pairs gets an edge (from the earlier to the later node
    in that order) independently with probability s = ``sparseness``, so E[2|E| / (p(p−1))] = s — the sparseness
    of paper 000 (Sec. VI, Table II) and the edge model of R pcalg's
    ``randomDAG`` (which keeps the natural order; the random permutation
    here makes node names uninformative about the causal order). With
    ``edges`` the DAG has exactly that many edges, a uniform choice among the
    pairs (``sparseness`` is then ignored). Edge weights are not drawn here;
    see :func:`sample_linear_gaussian`.

    >>> random_dag(6, 0.2, 0, edges=3).number_of_edges()
    3
    """
    p = check_int(p, "p", minimum=2)
    s = check_probability(sparseness, "sparseness", open_low=False, open_high=False)
    rng = as_rng(rng)
    nodes = [f"X{i + 1}" for i in range(p)]
    order = rng.permutation(p)
    if edges is None:
        upper = np.triu(rng.random((p, p)) < s, k=1)  # upper[i, j]: edge order[i] → order[j]
    else:
        edges = check_int(edges, "edges", minimum=0)
        if edges > p * (p - 1) // 2:
            raise ValueError(f"edges must be at most p(p-1)/2 = {p * (p - 1) // 2}, got {edges}")
        i, j = np.triu_indices(p, k=1)
        chosen = rng.choice(len(i), size=edges, replace=False)
        upper = np.zeros((p, p), dtype=bool)
        upper[i[chosen], j[chosen]] = True
    rows, cols = np.nonzero(upper)
    dag = nx.DiGraph()
    dag.add_nodes_from(nodes)
    dag.add_edges_from((nodes[order[i]], nodes[order[j]]) for i, j in zip(rows.tolist(), cols.tolist()))
    return dag


DEGREE_PROFILES = ("uniform", "hubs")
"""Degree profiles of :func:`random_network_dag`: ``"uniform"`` — every earlier node a parent with the same
probability (degrees near Poisson); ``"hubs"`` — a node's chance of being chosen as a parent grows with the number of
children it already has (preferential attachment), so a few hubs with many children and many nodes of degree 1–2,
as in bnlearn's larger networks."""


def random_network_dag(p: int, rng: RngLike, *, profile: str = "uniform", degree: float = 2.5,
                       max_parents: int = 4) -> nx.DiGraph:
    """A random DAG on ``"X1"``..``"Xp"`` with ``degree`` neighbours per node on average and at most ``max_parents``
    parents per node, in the degree ``profile`` of :data:`DEGREE_PROFILES`.

    Nodes are visited in a random causal order; node k (of those visited) draws Poisson(``degree``/2) parents,
    capped at ``max_parents`` and at k, without replacement among the earlier nodes — uniformly (``"uniform"``) or
    with weights 1 + (children so far) (``"hubs"``). Node names do not reveal the order.

    >>> dag = random_network_dag(40, 0, profile="hubs")
    >>> nx.is_directed_acyclic_graph(dag), max(d for _, d in dag.in_degree()) <= 4
    (True, True)
    """
    p = check_int(p, "p", minimum=2)
    if profile not in DEGREE_PROFILES:
        raise ValueError(f"profile must be one of {DEGREE_PROFILES}, got {profile!r}")
    degree = check_positive(degree, "degree")
    max_parents = check_int(max_parents, "max_parents", minimum=1)
    rng = as_rng(rng)
    nodes = [f"X{i + 1}" for i in range(p)]
    order = [nodes[i] for i in rng.permutation(p)]
    children = np.zeros(p)
    dag = nx.DiGraph()
    dag.add_nodes_from(nodes)
    for k in range(1, p):
        count = min(int(rng.poisson(degree / 2.0)), max_parents, k)
        if count == 0:
            continue
        weights = np.ones(k) if profile == "uniform" else 1.0 + children[:k]
        chosen = rng.choice(k, size=count, replace=False, p=weights / weights.sum())
        children[chosen] += 1
        dag.add_edges_from((order[int(j)], order[k]) for j in chosen)
    return dag


def sample_random_network(p: int, n: int, rng: RngLike, *, profile: str = "uniform", degree: float = 2.5,
                          max_parents: int = 4, level_range: tuple[int, int] = (2, 6),
                          concentration: float = 0.5) -> Dataset:
    """A fresh random categorical Bayesian network and ``n`` rows of it: :func:`random_network_dag` (``p`` nodes, the
    degree ``profile``), states per node uniform on ``level_range`` and every CPT row Dirichlet(``concentration``)
    (:func:`sample_categorical`; 0.5 gives peaked rows, as fitted networks have). The benchmark's held-out random
    networks: drawn anew for every repetition, never used to choose a constant.

    >>> sample = sample_random_network(25, 500, 0, profile="hubs")
    >>> sample.data.shape, sample.name, 2 <= min(sample.levels) and max(sample.levels) <= 6
    ((500, 25), 'random-hubs', True)
    """
    rng = as_rng(rng)
    dag = random_network_dag(p, rng, profile=profile, degree=degree, max_parents=max_parents)
    sample = sample_categorical(dag, n, rng, level_range=level_range, concentration=concentration)
    return replace(sample, name=f"random-{profile}",
                   meta={**sample.meta, "profile": profile, "degree": degree, "max_parents": max_parents})


def _check_level_range(level_range: Any) -> tuple[int, int]:
    try:
        low, high = level_range
    except (TypeError, ValueError):
        raise TypeError(f"level_range must be a pair (min, max) of integers, got {level_range!r}") from None
    low = check_int(low, "level_range[0]", minimum=2)
    high = check_int(high, "level_range[1]", minimum=2)
    if high < low:
        raise ValueError(f"level_range must satisfy level_range[0] <= level_range[1], got {level_range!r}")
    return low, high


def sample_categorical(
    dag: nx.DiGraph,
    n: int,
    rng: RngLike,
    *,
    level_range: tuple[int, int] = (2, 5),
    concentration: float = 1.0,
    cards: Sequence[int] | None = None,
) -> Dataset:
    """Random categorical CPTs on ``dag`` and ``n`` rows sampled from them.

    Each node gets a number of states drawn uniformly from
    ``level_range[0]..level_range[1]`` (inclusive; 2–5 as in paper 000, Sec. VI), and
    each row of its CPT (one per parent configuration) is drawn from a
    symmetric Dirichlet(``concentration``) distribution. Rows are then drawn
    by the same vectorised forward sampler as :func:`load_bnlearn`.

    Columns follow ``dag``'s node order; values are codes 0..k-1 and
    ``categories[node] = ["0", ..., str(k-1)]``. ``meta`` holds ``"levels"``
    (node → k), ``"parents"`` (node → tuple of parent names, most
    significant first) and ``"cpts"`` (node → array with one row per parent
    configuration, indexed by the mixed-radix code of the parents' states,
    first parent most significant; one column per state).

    ``cards`` fixes each node's number of states instead (one integer ≥ 2 per
    node, in ``dag``'s node order; ``level_range`` is then ignored), e.g. the
    categories of a public schema.

    >>> import networkx as nx
    >>> sample = sample_categorical(nx.DiGraph([("a", "b")]), 50, 0, cards=[2, 3])
    >>> sample.levels
    (2, 3)
    """
    nodes, index = _check_synthetic_dag(dag)
    n = check_int(n, "n", minimum=1)
    low, high = _check_level_range(level_range)
    concentration = check_positive(concentration, "concentration")
    rng = as_rng(rng)
    parents = _parent_indices(dag, nodes, index)
    if cards is None:
        cards = tuple(int(k) for k in rng.integers(low, high + 1, size=len(nodes)))
    else:
        if isinstance(cards, (str, bytes)) or not isinstance(cards, Sequence) or len(cards) != len(nodes):
            raise ValueError(f"cards must hold one number of states per node ({len(nodes)}), got {cards!r}")
        cards = tuple(check_int(k, "cards[i]", minimum=2) for k in cards)
    tables = []
    for j, pa in enumerate(parents):
        n_configs = int(np.prod([cards[q] for q in pa], dtype=np.int64))
        tables.append(rng.dirichlet(np.full(cards[j], concentration), size=n_configs))
    X = _forward_sample(_discrete_bn(nodes, parents, cards, tables), n, rng)
    return Dataset(
        data=pd.DataFrame(X, columns=nodes),
        dag=dag.copy(),
        name="categorical",
        kind="discrete",
        categories={v: [str(s) for s in range(cards[j])] for j, v in enumerate(nodes)},
        meta={
            "levels": dict(zip(nodes, cards)),
            "parents": {v: tuple(nodes[q] for q in parents[j]) for j, v in enumerate(nodes)},
            "cpts": dict(zip(nodes, tables)),
            "concentration": concentration,
        },
    )


def _check_weight_range(weight_range: Any) -> tuple[float, float]:
    try:
        low, high = weight_range
    except (TypeError, ValueError):
        raise TypeError(f"weight_range must be a pair (low, high) of numbers, got {weight_range!r}") from None
    low = check_positive(low, "weight_range[0]", allow_zero=True)
    high = check_positive(high, "weight_range[1]", allow_zero=True)
    if high < low:
        raise ValueError(f"weight_range must satisfy 0 <= low <= high, got {weight_range!r}")
    return low, high


def _edge_matrix(dag: nx.DiGraph, index: dict[str, int], values: np.ndarray) -> np.ndarray:
    """p×p matrix with ``values[e]`` at [parent, child] of the e-th edge of ``dag.edges()``."""
    M = np.zeros((len(index), len(index)))
    for (u, v), w in zip(dag.edges(), values):
        M[index[u], index[v]] = w
    return M


def sample_linear_gaussian(
    dag: nx.DiGraph,
    n: int,
    rng: RngLike,
    *,
    weight_range: tuple[float, float] = (0.1, 1.0),
    noise_std: float = 1.0,
    signed: bool = False,
) -> Dataset:
    """Linear-Gaussian structural equation model on ``dag``.

    x_j = Σ_i W[i, j] x_i + ε_j with ε_j ~ N(0, ``noise_std``²) independent and
    every edge weight W[i, j] ~ U(``weight_range``) (times an independent
    random sign when ``signed``). The defaults are those of R pcalg's
    ``randomDAG`` (weights U(0.1, 1)) and ``rmvDAG`` (standard normal
    errors), which paper 000 builds on for its numerical experiments
    (Sec. VI, PrivPC*). The implied covariance is
    (I − W)^{-T} noise_std² (I − W)^{-1}.

    ``kind="continuous"``; columns follow ``dag``'s node order, and
    ``meta["weights"]`` is W as a p×p array in that order (row = cause,
    column = effect), ``meta["noise_std"]`` the noise scale.
    """
    nodes, index = _check_synthetic_dag(dag)
    n = check_int(n, "n", minimum=1)
    low, high = _check_weight_range(weight_range)
    noise_std = check_positive(noise_std, "noise_std")
    if not isinstance(signed, (bool, np.bool_)):
        raise TypeError(f"signed must be True or False, got {type(signed).__name__}")
    rng = as_rng(rng)
    m = dag.number_of_edges()
    weights = rng.uniform(low, high, size=m)
    if signed:
        weights *= rng.choice(np.array([-1.0, 1.0]), size=m)
    W = _edge_matrix(dag, index, weights)
    X = rng.standard_normal((n, len(nodes))) * noise_std
    X = np.asfortranarray(X)
    parents = _parent_indices(dag, nodes, index)
    for j in _topological_order(len(nodes), parents):
        pa = list(parents[j])
        if pa:
            X[:, j] += X[:, pa] @ W[pa, j]
    return Dataset(
        data=pd.DataFrame(X, columns=nodes),
        dag=dag.copy(),
        name="linear_gaussian",
        kind="continuous",
        meta={"weights": W, "noise_std": noise_std, "signed": bool(signed)},
    )


NONLINEAR_FUNCTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "square": np.square,
    "exp": np.exp,
}
"""The link functions φ of paper 002's nonlinear SEM, each chosen with probability 1/5."""


def sample_nonlinear(dag: nx.DiGraph, n: int, rng: RngLike, *, standardize: bool = True) -> Dataset:
    """The nonlinear additive-noise SEM of paper 002 (PCD, Sec. "Causal discovery").

    x_i = φ_i(Σ_j a_ij · pa_ij) + b_i · ε_i with ε_i ~ U(−½, ½),
    a_ij, b_i ~ U(½, 1) and φ_i drawn uniformly from sin, cos, tanh,
    square and exp (probability 20 % each), as in Zhang et al. (2023),
    following Zhang et al. (2011).

    Two choices the paper leaves open, made explicit here:

    - **Root nodes** (no parents): x_i = b_i · ε_i (the paper does not say;
      φ_i(0) would only add a constant). No φ is drawn for roots.
    - **Scale** (``standardize=True``, default): each node's value is
      standardised to sample mean 0 and variance 1 before it feeds its
      children, and the stored column is that standardised value, so every
      column is an exact function of the stored parent columns up to an
      affine map. Without it, chains of exp/square overflow in deep graphs
      (alarm, child). The paper's text is silent on scaling. With
      ``standardize=False`` the raw values are returned and a
      ``ValueError`` is raised if any of them overflows.

    ``kind="continuous"``; columns follow ``dag``'s node order.
    ``meta["functions"]`` maps every non-root node to its φ's name,
    ``meta["weights"]`` is the p×p matrix of a_ij (row = parent, column =
    child), ``meta["noise_scale"]`` the array of b_i (node order).
    """
    nodes, index = _check_synthetic_dag(dag)
    if not isinstance(standardize, (bool, np.bool_)):
        raise TypeError(f"standardize must be True or False, got {type(standardize).__name__}")
    n = check_int(n, "n", minimum=2 if standardize else 1)
    rng = as_rng(rng)
    p = len(nodes)
    names = tuple(NONLINEAR_FUNCTIONS)
    choice = rng.integers(0, len(names), size=p)
    A = _edge_matrix(dag, index, rng.uniform(0.5, 1.0, size=dag.number_of_edges()))
    b = rng.uniform(0.5, 1.0, size=p)
    X = np.asfortranarray(rng.uniform(-0.5, 0.5, size=(n, p)) * b)
    parents = _parent_indices(dag, nodes, index)
    functions: dict[str, str] = {}
    with np.errstate(over="ignore", invalid="ignore"):
        for j in _topological_order(p, parents):
            pa = list(parents[j])
            if pa:
                name = names[choice[j]]
                functions[nodes[j]] = name
                X[:, j] += NONLINEAR_FUNCTIONS[name](X[:, pa] @ A[pa, j])
            if standardize:
                column = X[:, j]
                X[:, j] = (column - column.mean()) / column.std()
    if not np.all(np.isfinite(X)):
        bad = [nodes[j] for j in np.where(~np.isfinite(X).all(axis=0))[0][:5]]
        raise ValueError(
            f"sample_nonlinear overflowed at node(s) {bad} (chains of exp/square grow without bound); "
            "use standardize=True"
        )
    return Dataset(
        data=pd.DataFrame(X, columns=nodes),
        dag=dag.copy(),
        name="nonlinear",
        kind="continuous",
        meta={
            "functions": {v: functions[v] for v in nodes if v in functions},
            "weights": A,
            "noise_scale": b,
            "standardize": bool(standardize),
        },
    )


# =========================================================================== users' data


def encode_categorical(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, list]]:
    """Encode every column of ``frame`` as integer codes 0..k-1 for the discrete tests.

    Codes follow the sorted distinct values of each column (values of mixed
    types are sorted by their string form), and the second return value maps
    each column to that list of labels, so ``labels[col][code]`` recovers the
    original value. Numeric columns are encoded the same way (their distinct
    values become the categories). Missing values are refused: drop or impute
    them first.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas.DataFrame, got {type(frame).__name__}")
    missing = [c for c in frame.columns if frame[c].isna().any()]
    if missing:
        raise ValueError(f"frame has missing values in column(s) {missing[:5]}; drop or impute them first")
    codes: dict[Any, np.ndarray] = {}
    labels: dict[str, list] = {}
    for column in frame.columns:
        values = frame[column]
        distinct = list(pd.unique(values))
        try:
            distinct = sorted(distinct)
        except TypeError:
            distinct = sorted(distinct, key=str)
        categorical = pd.Categorical(values, categories=distinct)
        codes[column] = np.asarray(categorical.codes, dtype=np.int64)
        labels[column] = [v.item() if isinstance(v, np.generic) else v for v in distinct]
    encoded = pd.DataFrame(codes, index=frame.index, columns=frame.columns)
    return encoded, labels

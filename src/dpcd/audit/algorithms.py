"""Audit cases for the private discovery algorithms of :data:`dpcd.registry.ALGORITHMS`, and broken variants.

Each algorithm is audited on neighbours built for the statistic it actually
uses, with the claim stated from its theorem and the parameters passed —
never read back from the run's ledger
(algorithm — statistic and pair; claim and relation):

* **Marginal-PC** — noisy marginal tables: a G² borderline pair, the record differing in every column;
  (``epsilon_total``, ``delta``) (replace), Gaussian DP over the orders (module theorem of
  :mod:`dpcd.discovery.marginal_pc`).
* **MST-PC** — marginal tables as above; (``epsilon_total``, ``delta``) (replace), zCDP composition of MST's
  three steps (module theorem of :mod:`dpcd.discovery.mst_pc`).
* **AIM-PC** — marginal tables as above; (``epsilon_total``, ``delta``) (replace), zCDP filter over AIM's
  rounds (module theorem of :mod:`dpcd.discovery.aim_pc`).
* **EM-PC** — G² distance score: a record that breaks a tie between separating sets on 4 variables;
  ``epsilon_total`` (add/remove), paper 000 Thm. 1.
* **LapMech** — G² borderline, 4 variables; ``epsilon_total`` (add/remove), Laplace on the full table.
* **Priv-PC** — Kendall borderline; T examined tests × ε_t + ε_t/2 open sieve (replace), [WPS20] Thm 1,
  T = p(p − 1)Σ_{k≤m} C(p − 2, k), composed by dp_accounting's PLD.
* **SVT-PC** — Kendall borderline; (p(p − 1)/2 + 1) AboveThreshold runs × ε_e (replace), PLD.
* **Sub-sampled Gaussian PC** — Kendall borderline; T Poisson-sub-sampled Gaussian steps (replace), PLD.
* **CURATE** — Kendall borderline; (``epsilon_total``, ``delta_total``) (replace), Alg. 1.
* **Moment-PC** — covariance: a record at a corner of the box; (``epsilon_total``, ``delta``) (replace),
  Gaussian DP (module theorem of :mod:`dpcd.discovery.moment_pc`).
* **GCM-PC** — feature moments: a record at a corner; (``epsilon_total``, ``delta``) (replace), Gaussian DP
  (module theorem of :mod:`dpcd.discovery.gcm_pc`).
* **GCM-PC (spread pair)** — records near the centre, one corner; the same (the private spreads and the
  moments compose to μ-GDP).
* **PrivPC*** — covariance: a record at a corner of the box; ``epsilon_total`` (replace), Thm. 2 (corrected).
* **NOLEAKS, CURATE-SB** — covariance corner; ε_total, δ = m/n + I·δ (replace), basic composition.
* **PCD** — noiseless-branch pair; ε per noisy comparison × 2 (the paper's accounting; no DP proof).
* **PCD, one Kendall decision x ⫫ y | Z** — Z without ties against one tie (replace); ε per noisy
  comparison: Δ_P = 1 when no stratum holds two rows (:func:`pcd_decision_case`; Z's kind is public, never
  detected).

The compositions are computed with ``dp_accounting`` directly (not with
:class:`dpcd.privacy.PrivacyLedger`, whose accounting is part of what is
audited). Every case takes the claimed total ε: per-round algorithms get the
largest per-round parameter whose worst-case composition is that claim
(:func:`per_round_for`). :func:`broken_algorithm_cases` gives the pre-fix behaviours, which
must be flagged: EM-PC storing the arg-max separating set of un-noised scores,
PrivPC* standardising with the data's own means and standard deviations,
PCD's Kendall decision treating the columns without ties in the data as continuous,
Marginal-PC releasing its order-0 tables without noise (:class:`UnnoisedOrderZero`), MST-PC choosing its tree
by the exact arg-max (:class:`ArgmaxTree`), Moment-PC scaling its noise to the observed range of the records
(:class:`ObservedRangeMoments`), GCM-PC mapping the columns to [−1, 1] by their observed range
(:class:`ObservedRangeGCM`), AIM-PC measuring its marginals without noise (:class:`UnnoisedAim`), private
ANM with training-set or IQR noise below its theorems', and GCM-PC narrowing its box by the exact means and
standard deviations (:class:`ExactSpreadGCM`, on :func:`gcm_spread_case`'s pair, where the correct GCM-PC is
audited too).

Examples
--------
>>> sorted(CASES)[:3]
['aim_pc', 'curate', 'curate_sb']
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ..privacy.calibration import largest_parameter
from ..registry import ALGORITHMS
from ..validation import RngLike, as_rng, check_epsilon
from .anm import TRAINING_BROKEN_FACTOR, anm_iqr_case, anm_training_case
from .events import equals, graph_events, graph_key, observed_outputs
from .neighbours import (
    NeighbouringPair,
    borderline_ci_pair,
    crossing_pair,
    outlier_pair,
    replace_record,
)
from .runner import AuditCase

__all__ = ["AlgorithmRun", "as_published", "ArgmaxTree", "ObservedRangeMoments", "CASES", "PCDKendallDecision",
           "UnnoisedOrderZero", "UnnoisedAim", "ExactSpreadGCM", "mst_flip_pair", "algorithm_case", "broken_algorithm_cases", "gcm_spread_case", "pcd_decision_case",
           "composed_epsilon", "worst_case_test_count", "SIZES"]

SIZES = ("smoke", "quick", "full")


def worst_case_test_count(p: int, max_order: int) -> int:
    """T = p(p − 1)Σ_{k ≤ m} C(p − 2, k): the most CI tests PC can ask (the theorem's count, restated here)."""
    last = min(max_order, p - 2)
    return p * (p - 1) * sum(math.comb(p - 2, k) for k in range(last + 1))


def composed_epsilon(*, delta: float, pure: Sequence[tuple[float, int]] = (), laplace: Sequence[tuple[float, int]] = (),
                     subsampled_gaussian: Sequence[tuple[float, float, int]] = ()) -> float:
    """ε at ``delta`` of the composition of (ε, count) pure steps, (ε, count) Laplace steps and
    (σ, q, count) Poisson-sub-sampled Gaussian steps under replace-one, by ``dp_accounting``'s PLD.

    ``delta = 0`` (pure steps only): basic composition Σ count·ε.
    """
    if delta <= 0:
        if subsampled_gaussian:
            raise ValueError("sub-sampled Gaussian steps need delta > 0")
        return float(sum(e * c for e, c in list(pure) + list(laplace)))
    from dp_accounting import privacy_accountant
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    total = None
    interval = 1e-4
    for eps, count in pure:
        pld = pld_lib.from_privacy_parameters(common.DifferentialPrivacyParameters(epsilon=eps, delta=0.0),
                                              value_discretization_interval=interval).self_compose(count)
        total = pld if total is None else total.compose(pld)
    for eps, count in laplace:
        pld = pld_lib.from_laplace_mechanism(parameter=1.0 / eps,
                                             value_discretization_interval=interval).self_compose(count)
        total = pld if total is None else total.compose(pld)
    for sigma, q, count in subsampled_gaussian:
        pld = pld_lib.from_gaussian_mechanism(
            standard_deviation=sigma, sampling_prob=q, value_discretization_interval=interval,
            neighboring_relation=privacy_accountant.NeighboringRelation.REPLACE_ONE).self_compose(count)
        total = pld if total is None else total.compose(pld)
    basic = float(sum(e * c for e, c in list(pure) + list(laplace)))
    value = float(total.get_epsilon_for_delta(delta)) if total is not None else 0.0
    return min(value, basic) if basic > 0 and not subsampled_gaussian else value


def per_round_for(claim: float, compose: Callable[[float], float]) -> float:
    """The largest per-round parameter x with ``compose(x)`` ≤ ``claim`` (to 0.1 % in ε).

    ``compose`` is the theorem's composition, e.g. :func:`composed_epsilon` of
    the worst-case rounds; used so that every audited claim is the same total ε.
    The search is :func:`dpcd.privacy.calibration.largest_parameter`, the one
    the registry calibrates with.

    >>> round(per_round_for(1.0, lambda x: 4 * x), 3)
    0.25
    """
    return largest_parameter(compose, epsilon=claim, rtol=1e-3)


@dataclass(frozen=True)
class AlgorithmRun:
    """Run the registry algorithm ``algorithm`` on ``data`` with ``kwargs`` and return its graph as a
    :func:`graph_key` (picklable: the algorithm is named, and looked up in :data:`dpcd.registry.ALGORITHMS`).

    ``data_standardised=True`` is a BROKEN wrapper, the pre-fix PrivPC*: each
    column is standardised with the data set's own mean and standard deviation
    (uncharged statistics that one record can move) and records are clipped to
    norm √p, as the paper does; the release then treats ±√p standard units as
    the public box (``standardise="bounds"``, ``clip_norm=1`` in box units).
    """

    algorithm: str
    kwargs: tuple[tuple[str, Any], ...] = ()
    data_standardised: bool = False

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be a registry name, one of {sorted(ALGORITHMS)}; got {self.algorithm!r}")

    def result(self, data: Any, rng: Any) -> Any:
        function = ALGORITHMS[self.algorithm].run
        kwargs = dict(self.kwargs)
        if self.data_standardised:
            array = np.asarray(data, dtype=np.float64)
            standard = (array - array.mean(axis=0)) / np.where(array.std(axis=0) > 0, array.std(axis=0), 1.0)
            data = pd.DataFrame(standard, columns=data.columns) if isinstance(data, pd.DataFrame) else standard
            root = math.sqrt(array.shape[1])
            kwargs.update(bounds=((-root, root),) * array.shape[1], standardise="bounds", clip_norm=1.0)
        return function(data, rng=rng, **kwargs)

    def __call__(self, data: Any, rng: Any) -> frozenset:
        return graph_key(self.result(data, rng))


def _frame(array: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(np.asarray(array), columns=[f"X{j}" for j in range(np.shape(array)[1])])


def _as_frames(pair: NeighbouringPair) -> NeighbouringPair:
    return NeighbouringPair(_frame(pair.data), _frame(pair.neighbour), pair.relation, pair.description, pair.meta)


def _size(size: str, smoke: int, quick: int, full: int) -> int:
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}, got {size!r}")
    return {"smoke": smoke, "quick": quick, "full": full}[size]


def _case(name: str, run: AlgorithmRun, pair: NeighbouringPair, claim: tuple[float, float], note: str, *,
          expect_violation: bool = False) -> AuditCase:
    pair = _as_frames(pair) if not isinstance(pair.data, pd.DataFrame) else pair
    nodes = [str(c) for c in pair.data.columns]
    return AuditCase(name, run, pair, graph_events(nodes), claim[0], claim[1], False, observed_outputs, note=note,
                     expect_violation=expect_violation)


# --------------------------------------------------------------------------- categorical (G², Kendall)


P_VARIABLES = 4
MAX_ORDER = 1


def _em_pc(epsilon: float, rng: np.random.Generator, size: str, sepset: str = "joint") -> AuditCase:
    from .sepset import sepset_tie_pair

    pair = sepset_tie_pair(n=_size(size, 2000, 4000, 6000), rng=rng)
    meta = pair.meta
    total = float(meta["epsilon_total"])
    columns = [str(c) for c in pair.data.columns]
    kwargs = {"levels": tuple(int(meta["levels"][c]) for c in columns), "epsilon_total": total, "epsilon_split": tuple(meta["epsilon_split"]),
              "max_order": meta["max_order"], "alpha": meta["alpha"]}
    broken = sepset != "joint"
    if broken:
        kwargs["unproven"] = {"sepset": sepset}
    run = AlgorithmRun("em_pc", tuple(sorted(kwargs.items())))
    name = "BROKEN EM-PC, separating set from un-noised scores" if broken else "EM-PC"
    return _case(name, run, pair, (total, 0.0),
                 f"epsilon_total = {total:g} (claim, add/remove); split {meta['epsilon_split']}; {pair.description}",
                 expect_violation=broken)


def _lapmech(epsilon: float, rng: np.random.Generator, size: str) -> AuditCase:
    pair = borderline_ci_pair(n=_size(size, 200, 400, 800), alpha=0.05, n_variables=P_VARIABLES, rng=rng,
                              test="g2")
    kwargs = {"levels": (2,) * P_VARIABLES, "epsilon_total": epsilon, "alpha": 0.05, "max_order": MAX_ORDER}
    run = AlgorithmRun("lapmech", tuple(sorted(kwargs.items())))
    return _case("LapMech", run, pair, (epsilon, 0.0), f"epsilon_total = {epsilon:g} (add/remove); "
                 f"{pair.description}")


def _kendall_pair(rng: np.random.Generator, size: str, alpha: float) -> NeighbouringPair:
    return borderline_ci_pair(n=_size(size, 200, 400, 800), alpha=alpha, n_variables=P_VARIABLES, rng=rng,
                              relation="replace", test="kendall")


def _priv_pc(epsilon: float, rng: np.random.Generator, size: str) -> AuditCase:
    delta = 1e-6
    pair = _kendall_pair(rng, size, 0.2)  # two-sided 0.2: Priv-PC thresholds the one-sided p-value at 0.1
    n = len(pair.data)
    tests = worst_case_test_count(P_VARIABLES, MAX_ORDER)

    def compose(e: float) -> float:
        return composed_epsilon(delta=delta, pure=[(e / 2, tests + 1)], laplace=[(e / 2, tests)])

    per_test = per_round_for(epsilon, compose)
    claim = compose(per_test)
    kwargs = {"levels": (2,) * P_VARIABLES, "epsilon_per_test": per_test, "delta": delta, "alpha": 0.2,
              "max_order": MAX_ORDER, "subsample_size": n // 2}
    run = AlgorithmRun("priv_pc", tuple(sorted(kwargs.items())))
    return _case("Priv-PC", run, pair, (claim, delta),
                 f"epsilon_per_test = {per_test:.4g}, at most {tests} examined tests + open sieve, PLD at delta "
                 f"{delta:g} (replace); {pair.description}")


def _svt_pc(epsilon: float, rng: np.random.Generator, size: str) -> AuditCase:
    delta = 1e-6
    pair = _kendall_pair(rng, size, 0.2)
    runs = P_VARIABLES * (P_VARIABLES - 1) // 2 + 1

    def compose(e: float) -> float:
        return composed_epsilon(delta=delta, pure=[(e, runs)])

    per_edge = per_round_for(epsilon, compose)
    claim = compose(per_edge)
    kwargs = {"levels": (2,) * P_VARIABLES, "epsilon_per_edge": per_edge, "delta": delta, "alpha": 0.2,
              "max_order": MAX_ORDER}
    run = AlgorithmRun("svt_pc", tuple(sorted(kwargs.items())))
    return _case("SVT-PC", run, pair, (claim, delta),
                 f"epsilon_per_edge = {per_edge:.4g}, at most {runs} AboveThreshold runs (replace); "
                 f"{pair.description}")


def _subsampled_gaussian(epsilon: float, rng: np.random.Generator, size: str) -> AuditCase:
    delta = 1e-6
    pair = _kendall_pair(rng, size, 0.2)
    q = 0.5
    tests = worst_case_test_count(P_VARIABLES, MAX_ORDER)

    def compose(inverse_sigma: float) -> float:
        return composed_epsilon(delta=delta, subsampled_gaussian=[(1.0 / inverse_sigma, q, tests)])

    sigma = 1.0 / per_round_for(epsilon, compose)
    claim = compose(1.0 / sigma)
    kwargs = {"levels": (2,) * P_VARIABLES, "sigma": sigma, "sampling_rate": q, "delta": delta, "alpha": 0.2,
              "max_order": MAX_ORDER}
    run = AlgorithmRun("subsampled_gaussian", tuple(sorted(kwargs.items())))
    return _case("Sub-sampled Gaussian PC", run, pair, (claim, delta),
                 f"sigma = {sigma:g}, q = {q:g}, at most {tests} steps (replace, PLD); {pair.description}")


def _curate(epsilon: float, rng: np.random.Generator, size: str) -> AuditCase:
    delta = 1e-6
    pair = _kendall_pair(rng, size, 0.05)
    kwargs = {"levels": (2,) * P_VARIABLES, "epsilon_total": epsilon, "delta_total": delta, "alpha": 0.05,
              "max_order": MAX_ORDER}
    run = AlgorithmRun("curate", tuple(sorted(kwargs.items())))
    return _case("CURATE", run, pair, (epsilon, delta),
                 f"epsilon_total = {epsilon:g}, delta_total = {delta:g} (replace); {pair.description}")


def _every_table_moves(pair: NeighbouringPair) -> NeighbouringPair:
    """The replace-one pair with the replaced record differing from the original in **every** column.

    MST-PC and AIM-PC release marginal tables of the columns: a record
    that differs in every column moves every table by two cells, the full L2
    sensitivity √(2M), while the (X₀, X₁) table keeps its borderline move.
    """
    data, neighbour = np.asarray(pair.data), np.asarray(pair.neighbour).copy()
    for row in np.flatnonzero((data != neighbour).any(axis=1)):
        neighbour[row, 2:] = 1 - data[row, 2:]  # binary columns: flip every other (X0 and X1 keep their move)
    return NeighbouringPair(data, neighbour, "replace", pair.description + "; the replaced record also differs in "
                            "every other column (every marginal table moves by its full sensitivity)", pair.meta)


def _worst_interaction_move(pair: NeighbouringPair) -> NeighbouringPair:
    """The replace-one pair with the replaced record changed in as many columns as move Marginal-PC's release most.

    Marginal-PC releases order 0 as every pair's interaction and every margin,
    which a record changed in k columns moves by its full sensitivity, k the
    size of :func:`dpcd.privacy.interactions.worst_columns` (on binary columns
    any k; a record changed in every column moves it less), and the higher
    orders' tables, each of which a count moving in any of its columns moves by
    its full √2. The borderline pair already changes the record in some
    columns (X₀ or X₁, keeping its borderline move); further columns from X₂ on
    are flipped until k are changed. On p = 4 binary columns k = 3, which
    meets every three-way table.
    """
    from ..privacy.interactions import worst_columns

    data, neighbour = np.asarray(pair.data), np.asarray(pair.neighbour).copy()
    size = len(worst_columns([2] * data.shape[1]))
    flipped: set[int] = set()
    for row in np.flatnonzero((data != neighbour).any(axis=1)):
        already = set(np.flatnonzero(data[row] != neighbour[row]).tolist())
        extra = [c for c in range(2, data.shape[1]) if c not in already][:max(size - len(already), 0)]
        neighbour[row, extra] = 1 - data[row, extra]  # binary columns: flip them
        flipped.update(extra)
    return NeighbouringPair(data, neighbour, "replace", pair.description + "; the replaced record also differs in "
                            f"columns {sorted(flipped)}, {size} changed in all (order 0's release moves by its full "
                            "sensitivity, and every table of the higher orders by its)", pair.meta)


@dataclass(frozen=True)
class UnnoisedOrderZero:
    """BROKEN Marginal-PC: the order-0 pair tables are read **without noise** (decided by the textbook G² test).

    The claim stays the run's (ε, δ): the deliberate mistake of measuring one
    order's marginals exactly, which the audit must flag — on the borderline
    pair the edge X₀ − X₁ is removed at order 0 on one data set with
    probability 1 and kept with positive probability on the other.
    """

    epsilon_total: float
    delta: float
    alpha: float = 0.05
    max_order: int = 0
    n_boot: int = 60

    def __call__(self, data: Any, rng: Any) -> frozenset:
        from ..ci.discrete import g2_test
        from ..discovery.marginal_pc import DEFAULT_CANDIDATES, MarginalTablesDecider, order_weights
        from ..discovery.pc import run_pc
        from ..privacy import PrivacyLedger
        from ..privacy.gdp import gdp_mu

        codes = np.asarray(data, dtype=np.int64)
        levels = np.full(codes.shape[1], 2)
        alpha = self.alpha

        class ExactOrderZero(MarginalTablesDecider):
            def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
                if not S:
                    return g2_test(codes, x, y, (), levels=levels).p_value > alpha
                return super().decide(x, y, S)

        mus = gdp_mu(self.epsilon_total, self.delta) * np.sqrt(order_weights(self.max_order))
        decider = ExactOrderZero(codes, levels, mus, alpha=alpha, candidates=DEFAULT_CANDIDATES, screen_alpha=0.01,
                                 n_boot=self.n_boot, rng=as_rng(rng), ledger=PrivacyLedger("replace"),
                                 delta=self.delta)
        names = [str(c) for c in getattr(data, "columns", range(codes.shape[1]))]
        return graph_key(run_pc(names, decider, max_order=self.max_order))


def _marginal_pc(epsilon: float, rng: np.random.Generator, size: str, broken: bool = False) -> AuditCase:
    delta = 1e-6
    pair = _worst_interaction_move(borderline_ci_pair(n=_size(size, 200, 400, 800), alpha=0.05,
                                                      n_variables=P_VARIABLES, rng=rng, relation="replace",
                                                      test="g2"))
    if broken:  # order 0 only, so that the exact order-0 decision is the release
        run: Any = UnnoisedOrderZero(epsilon, delta, max_order=0)
        name = "BROKEN Marginal-PC, order-0 tables without noise"
    else:
        kwargs = {"levels": (2,) * P_VARIABLES, "epsilon_total": epsilon, "delta": delta, "alpha": 0.05,
                  "max_order": MAX_ORDER, "n_boot": 60}
        run = AlgorithmRun("marginal_pc", tuple(sorted(kwargs.items())))
        name = "Marginal-PC"
    return _case(name, run, pair, (epsilon, delta),
                 f"epsilon_total = {epsilon:g}, delta = {delta:g} (replace; Gaussian DP over the orders); "
                 f"{pair.description}", expect_violation=broken)


def _kruskal_tree(codes: np.ndarray, levels: Sequence[int]) -> frozenset:
    """The maximum spanning tree of exact qualities ‖M_ij − n p_i p_jᵀ‖₁ (exact margins), ties by pair order."""
    import networkx as nx

    from ..ci.discrete import marginal_table

    n, d = codes.shape
    probs = [marginal_table(codes, levels, (j,)) / n for j in range(d)]
    graph = nx.Graph()
    graph.add_nodes_from(range(d))
    for i in range(d):
        for j in range(i + 1, d):
            quality = float(np.abs(marginal_table(codes, levels, (i, j)) - n * np.outer(probs[i], probs[j])).sum())
            graph.add_edge(i, j, weight=quality)
    return frozenset(tuple(sorted(e)) for e in nx.maximum_spanning_edges(graph, algorithm="kruskal", data=False))


def mst_flip_pair(*, n: int, rng: RngLike, attempts: int = 200) -> NeighbouringPair:
    """Binary data on four columns where replacing one record changes MST's tree chosen by exact qualities.

    X₁ copies X₀ with 10 % flips (the strongest pair), X₂ follows X₀ or X₁ with
    15 % flips, X₃ is a fair coin: the tree holds X₀ − X₁ and one of X₀ − X₂ and
    X₁ − X₂, nearly tied. The search replaces one record at a time by each of
    the 16 binary records until the exact-argmax tree changes (replace relation).
    """
    generator = as_rng(rng)
    levels = (2, 2, 2, 2)
    records = np.array(list(np.ndindex(*levels)))
    for _ in range(attempts):
        x0 = generator.integers(0, 2, n)
        x1 = x0 ^ (generator.random(n) < 0.1)
        x2 = np.where(generator.random(n) < 0.5, x0, x1) ^ (generator.random(n) < 0.15)
        data = np.column_stack([x0, x1, x2, generator.integers(0, 2, n)]).astype(np.int64)
        tree = _kruskal_tree(data, levels)
        for row in range(n):
            for record in records:
                if np.array_equal(record, data[row]):
                    continue
                neighbour = data.copy()
                neighbour[row] = record
                other = _kruskal_tree(neighbour, levels)
                if other != tree:
                    return replace_record(data, row, record, description=(
                        f"record {row} replaced: the exact-quality tree changes from {sorted(tree)} to "
                        f"{sorted(other)}"), meta={"tree_D": sorted(tree), "tree_D_prime": sorted(other)})
    raise ValueError(f"no tree-flipping record found in {attempts} data sets of n = {n}")


@dataclass(frozen=True)
class ArgmaxTree:
    """BROKEN MST-PC: the tree is the arg-max of the **exact** qualities (no exponential mechanism), the
    marginals are measured as specified and PC runs on the synthetic records; the claim stays the run's (ε, δ)."""

    epsilon_total: float
    delta: float
    alpha: float = 0.01

    def __call__(self, data: Any, rng: Any) -> frozenset:
        import networkx as nx

        from ..discovery import mst_pc as mst
        from ..discovery.pc import pc
        from ..privacy.zcdp import zcdp_rho

        codes = np.asarray(data, dtype=np.int64)
        levels = np.full(codes.shape[1], 2)
        generator = as_rng(rng)
        mu = math.sqrt(2.0 * zcdp_rho(self.epsilon_total, self.delta) / 3.0)
        one_way, sigma1 = mst.measure_one_way(codes, levels, mu=mu, rng=generator)
        tree = nx.Graph(list(_kruskal_tree(codes, levels)))  # the mistake: no exponential mechanism
        tree.add_nodes_from(range(codes.shape[1]))
        tables, sigma2 = mst.measure_tree(codes, levels, sorted(tree.edges), mu=mu, rng=generator)
        synthetic = mst.sample_tree_model(levels, one_way, sigma1, tables, sigma2, tree, len(codes), generator)
        return graph_key(pc(_frame(synthetic), ci_test="g2", alpha=self.alpha))


def _mst_pc(epsilon: float, rng: np.random.Generator, size: str, broken: bool = False) -> AuditCase:
    delta = 1e-6
    n = _size(size, 200, 400, 800)
    if broken:
        pair = mst_flip_pair(n=n, rng=rng)
        return _case("BROKEN MST-PC, tree by the exact arg-max", ArgmaxTree(epsilon, delta), pair, (epsilon, delta),
                     f"epsilon_total = {epsilon:g}, delta = {delta:g} (replace); {pair.description}",
                     expect_violation=True)
    pair = _every_table_moves(borderline_ci_pair(n=n, alpha=0.05, n_variables=P_VARIABLES, rng=rng,
                                                 relation="replace", test="g2"))
    kwargs = {"levels": (2,) * P_VARIABLES, "epsilon_total": epsilon, "delta": delta, "alpha": 0.01}
    run = AlgorithmRun("mst_pc", tuple(sorted(kwargs.items())))
    return _case("MST-PC", run, pair, (epsilon, delta),
                 f"epsilon_total = {epsilon:g}, delta = {delta:g} (replace; zCDP); {pair.description}")


@dataclass(frozen=True)
class UnnoisedAim:
    """BROKEN AIM-PC: every marginal AIM selects is measured **without noise** (its noise × 10⁻⁶); the selection
    keeps its exponential mechanism and the claim stays the run's (ε, δ).

    The deliberate mistake of measuring marginals exactly: the fitted table then
    matches the data's measured marginals, and on the borderline pair PC's
    order-0 decision on X₀ − X₁ follows the data's, removing the edge on one
    data set and keeping it on the other.
    """

    epsilon_total: float
    delta: float
    alpha: float = 0.05
    max_order: int = MAX_ORDER

    def __call__(self, data: Any, rng: Any) -> frozenset:
        from ..discovery import aim_pc as aim

        codes = np.asarray(data, dtype=np.int64)
        model = aim._aim(codes, levels=(2,) * codes.shape[1], epsilon_total=self.epsilon_total, delta=self.delta,
                         rng=as_rng(rng), workload_order=aim.DEFAULT_WORKLOAD_ORDER,
                         rounds_per_column=aim.DEFAULT_ROUNDS_PER_COLUMN, max_cells=aim.DEFAULT_MAX_CELLS,
                         iterations=aim.REFIT_ITERATIONS, final_iterations=aim.FINAL_ITERATIONS, noise_factor=1e-6)
        names = [f"X{j}" for j in range(codes.shape[1])]
        return graph_key(aim.pc_on_table(model.table, names, self.alpha, max_order=self.max_order)[0])


def _aim_pc(epsilon: float, rng: np.random.Generator, size: str, broken: bool = False) -> AuditCase:
    delta = 1e-6
    n = _size(size, 200, 400, 800)
    pair = _every_table_moves(borderline_ci_pair(n=n, alpha=0.05, n_variables=P_VARIABLES, rng=rng,
                                                 relation="replace", test="g2"))
    if broken:
        return _case("BROKEN AIM-PC, marginals measured without noise", UnnoisedAim(epsilon, delta), pair,
                     (epsilon, delta), f"epsilon_total = {epsilon:g}, delta = {delta:g} (replace); "
                     f"{pair.description}", expect_violation=True)
    kwargs = {"levels": (2,) * P_VARIABLES, "epsilon_total": epsilon, "delta": delta, "alpha": 0.05,
              "max_order": MAX_ORDER}
    run = AlgorithmRun("aim_pc", tuple(sorted(kwargs.items())))
    return _case("AIM-PC", run, pair, (epsilon, delta),
                 f"epsilon_total = {epsilon:g}, delta = {delta:g} (replace; zCDP filter); {pair.description}")


# --------------------------------------------------------------------------- numeric (covariance, gradients)


def _box_data(rng: np.random.Generator, n: int) -> np.ndarray:
    """Four variables in [−1, 1]: x1 depends on x0, x2 and x3 independent (public bounds [−1, 1])."""
    z = rng.uniform(-1.0, 1.0, size=(n, P_VARIABLES))
    z[:, 1] = np.clip(0.6 * z[:, 0] + 0.4 * z[:, 1], -1.0, 1.0)
    return z


BOX = ((-1.0, 1.0),) * P_VARIABLES


def _privpc_star(epsilon: float, rng: np.random.Generator, size: str) -> AuditCase:
    data = _box_data(rng, _size(size, 200, 400, 800))
    pair = outlier_pair(data, bound=1.0, x=0, y=1, relation="replace")
    kwargs = {"bounds": BOX, "epsilon_total": epsilon, "alpha": 0.05, "max_order": MAX_ORDER}
    run = AlgorithmRun("privpc_star", tuple(sorted(kwargs.items())))
    return _case("PrivPC*", run, pair, (epsilon, 0.0), f"epsilon_total = {epsilon:g} (replace), public bounds "
                 f"[-1, 1]; {pair.description}")


@dataclass(frozen=True)
class ObservedRangeMoments:
    """BROKEN Moment-PC: the moments' noise is scaled to the **observed** range of the records (the largest
    |x_i| in the data set), not to the public box — a local sensitivity, the PCD mistake; the claim stays the run's."""

    epsilon_total: float
    delta: float
    alpha: float = 0.05
    max_order: int = 1

    def __call__(self, data: Any, rng: Any) -> frozenset:
        from ..discovery import moment_pc as module
        from ..discovery.pc import run_pc
        from ..privacy.gdp import gdp_mu

        box = np.clip(np.asarray(data, dtype=np.float64), -1.0, 1.0)
        n, p = box.shape
        generator = as_rng(rng)
        reach = max(float(np.abs(box).max()), 1e-3)  # the mistake: read from the data
        mu = gdp_mu(self.epsilon_total, self.delta)
        sums, second, sigma = module.noisy_moments(box / reach, mu=mu, rng=generator)
        mean = sums * reach / n
        covariance = second * reach ** 2 / n - np.outer(mean, mean)
        decider = module.MomentDecider(covariance, mean, n, sigma * reach ** 2, alpha=self.alpha, rng=generator,
                                       n_boot=60, protect_tree=False)
        return graph_key(run_pc([f"X{j}" for j in range(p)], decider, max_order=self.max_order))


def _gcm_graph(box: np.ndarray, *, epsilon_total: float, delta: float, alpha: float, max_order: int,
               rng: Any) -> frozenset:
    """GCM-PC's tests on records already mapped onto [−1, 1] (by whatever rule the caller used), with the whole
    budget on the feature moments: the release and the tests of :func:`dpcd.discovery.gcm_pc.gcm_pc` without its
    spread stage."""
    from ..discovery import gcm_pc as module
    from ..discovery.pc import run_pc

    generator = as_rng(rng)
    release = module.feature_release(box, epsilon_total=epsilon_total, delta=delta, rng=generator, spread_share=0.0)
    decider = module.release_decider(release, box.shape[0], alpha=alpha, rng=generator, n_boot=60)
    return graph_key(run_pc([f"X{j}" for j in range(box.shape[1])], decider, max_order=max_order))


@dataclass(frozen=True)
class ObservedRangeGCM:
    """BROKEN GCM-PC: the columns are mapped to [−1, 1] by their **observed** range (the largest |x_i| in the data
    set) before the features are released, not by the public bounds — so the noise fits the data's own spread, a
    local sensitivity (the PCD mistake); the claim stays the run's."""

    epsilon_total: float
    delta: float
    alpha: float = 0.05
    max_order: int = 1

    def __call__(self, data: Any, rng: Any) -> frozenset:
        box = np.clip(np.asarray(data, dtype=np.float64), -1.0, 1.0)
        reach = max(float(np.abs(box).max()), 1e-3)  # the mistake: read from the data
        return _gcm_graph(box / reach, epsilon_total=self.epsilon_total, delta=self.delta, alpha=self.alpha,
                          max_order=self.max_order, rng=rng)


@dataclass(frozen=True)
class ExactSpreadGCM:
    """BROKEN GCM-PC: the narrowed box of every column is read from the data's **exact** mean and standard
    deviation (no noise, no charge) and the whole budget goes to the feature moments — the box then fits the data's
    own spread, which one record moves; the claim stays the run's. Its narrowest box is 2·10⁻⁹ wide, not the
    library's 0.1 (``min_width``), so that the exact spread of records near the centre shows; the calibration of
    the private spread stage itself is audited by :func:`dpcd.audit.spread_cases`."""

    epsilon_total: float
    delta: float
    alpha: float = 0.05
    max_order: int = 1

    def __call__(self, data: Any, rng: Any) -> frozenset:
        from ..discovery.gcm_pc import DEFAULT_SPREAD_K
        from ..privacy.spread import spread_edges, spread_map

        box = np.clip(np.asarray(data, dtype=np.float64), -1.0, 1.0)
        # the mistake: the box read from the data's exact moments, without noise or charge
        edges = spread_edges(box.mean(axis=0), (box ** 2).mean(axis=0), k=DEFAULT_SPREAD_K, min_width=1e-9)
        return _gcm_graph(spread_map(box, edges), epsilon_total=self.epsilon_total, delta=self.delta,
                          alpha=self.alpha, max_order=self.max_order, rng=rng)


def _corner_record_case(name: str, label: str, broken_run: Any, broken_label: str, epsilon: float,
                        rng: np.random.Generator, size: str, broken: bool) -> AuditCase:
    """A case of an algorithm releasing moments of records in the public box [−1, 1]^p (Moment-PC, GCM-PC): records
    near the centre (3 % of its half-width) — noise scaled to the box drowns them, noise scaled to their own range
    does not — and one replaced by a record at a corner, which moves every moment as far as the bounds allow."""
    delta = 1e-6
    data = _box_data(rng, _size(size, 1000, 2000, 4000)) * 0.03
    pair = outlier_pair(data, bound=1.0, x=0, y=1, relation="replace")
    if broken:
        return _case(broken_label, broken_run, pair, (epsilon, delta), f"epsilon_total = {epsilon:g}, "
                     f"delta = {delta:g} (replace); {pair.description}", expect_violation=True)
    kwargs = {"bounds": BOX, "epsilon_total": epsilon, "delta": delta, "alpha": 0.05, "max_order": MAX_ORDER,
              "n_boot": 60}
    return _case(label, AlgorithmRun(name, tuple(sorted(kwargs.items()))), pair, (epsilon, delta),
                 f"epsilon_total = {epsilon:g}, delta = {delta:g} (replace), public bounds [-1, 1]; "
                 f"{pair.description}")


def _gcm_pc(epsilon: float, rng: np.random.Generator, size: str, broken: bool = False) -> AuditCase:
    return _corner_record_case("gcm_pc", "GCM-PC", ObservedRangeGCM(epsilon, 1e-6),
                               "BROKEN GCM-PC, columns scaled by their observed range", epsilon, rng, size, broken)


def gcm_spread_case(epsilon: float, rng: np.random.Generator, size: str, broken: bool = False) -> AuditCase:
    """GCM-PC's private spread stage (:mod:`dpcd.privacy.spread`) on a pair built for it: the records lie within
    0.1 % of the box's half-width around its centre, with X1 depending on X0 — an exact-spread box would blow them up
    (one standard deviation to ±tanh 1 ≈ ±0.76) and find the edge — and one record is replaced by a corner, which
    multiplies every column's standard deviation about thirty-fold, so an uncharged box shrinks the data back below
    the noise."""
    delta = 1e-6
    data = _box_data(rng, _size(size, 1000, 2000, 4000)) * 0.001
    pair = outlier_pair(data, bound=1.0, x=0, y=1, relation="replace")
    if broken:
        return _case("BROKEN GCM-PC, box from the exact means and standard deviations", ExactSpreadGCM(epsilon, delta),
                     pair, (epsilon, delta), f"epsilon_total = {epsilon:g}, delta = {delta:g} (replace); "
                     f"{pair.description}", expect_violation=True)
    kwargs = {"bounds": BOX, "epsilon_total": epsilon, "delta": delta, "alpha": 0.05, "max_order": MAX_ORDER,
              "n_boot": 60}
    return _case("GCM-PC (spread pair)", AlgorithmRun("gcm_pc", tuple(sorted(kwargs.items()))), pair,
                 (epsilon, delta), f"epsilon_total = {epsilon:g}, delta = {delta:g} (replace), public bounds [-1, 1], "
                 f"private spreads (share {_gcm_spread_share():g}); {pair.description}")


def _gcm_spread_share() -> float:
    from ..discovery.gcm_pc import DEFAULT_SPREAD_SHARE

    return DEFAULT_SPREAD_SHARE


def _moment_pc(epsilon: float, rng: np.random.Generator, size: str, broken: bool = False) -> AuditCase:
    return _corner_record_case("moment_pc", "Moment-PC", ObservedRangeMoments(epsilon, 1e-6),
                               "BROKEN Moment-PC, noise scaled to the observed range", epsilon, rng, size, broken)


def _far_outlier_pair(rng: np.random.Generator, n: int) -> NeighbouringPair:
    """D: x1 ≈ 0.9 x0 (strong edge), D′: one record's x0 replaced by 10⁶ (far outside any public bound)."""
    z = rng.normal(size=(n, P_VARIABLES))
    z[:, 1] = 0.9 * z[:, 0] + 0.45 * z[:, 1]
    record = z[0].copy()
    record[0] = 1e6
    return replace_record(z, 0, record, description="one record's X0 replaced by 10^6")


def _privpc_star_observed(epsilon: float, rng: np.random.Generator, size: str) -> AuditCase:
    pair = _far_outlier_pair(rng, _size(size, 300, 500, 1000))
    kwargs = {"epsilon_total": epsilon, "alpha": 0.05, "max_order": MAX_ORDER}
    run = AlgorithmRun("privpc_star", tuple(sorted(kwargs.items())),
                       data_standardised=True)
    return _case("BROKEN PrivPC*, standardised with the data's own mean and sd", run, pair, (epsilon, 0.0),
                 f"epsilon_total = {epsilon:g} (replace); the pre-fix standardisation: the outlier rescales X0 "
                 f"and hides its edge; {pair.description}", expect_violation=True)


def _score_based(name: str, epsilon: float, rng: np.random.Generator, size: str) -> AuditCase:
    n, m, delta, evaluations = _size(size, 300, 400, 600), 50, 1e-5, 10
    data = _box_data(rng, n)
    pair = outlier_pair(data, bound=1.0, x=0, y=1, relation="replace")
    kwargs: dict[str, Any] = {"epsilon_total": epsilon, "delta": delta, "line_search_size": m, "max_iter": 10,
                              "bounds": BOX}
    if name == "noleaks":
        kwargs["max_evaluations"] = evaluations
        claim_delta = m / n + evaluations * delta
    else:
        # the schedule length I is public (Lemma 2): read from the algorithm's privacy map
        iterations = ALGORITHMS[name].privacy_map(epsilon_total=epsilon, delta=delta, n=n,
                                                  line_search_size=m).parameters["iterations"]
        claim_delta = m / n + iterations * delta
    run = AlgorithmRun(name, tuple(sorted(kwargs.items())))
    label = ALGORITHMS[name].label
    return _case(label, run, pair, (epsilon, claim_delta),
                 f"epsilon_total = {epsilon:g}, delta = m/n + I*delta = {claim_delta:.3g} (replace; the line-search "
                 f"subset's delta m/n is large); {pair.description}")


@dataclass(frozen=True)
class _KendallP:
    def __call__(self, data: np.ndarray) -> float:
        from ..ci.rcit import kendall_ci_test

        return float(kendall_ci_test(data, 0, 1).p_value)


@dataclass(frozen=True)
class _LinearPair:
    base: np.ndarray = field(repr=False)

    def __call__(self, strength: float) -> np.ndarray:
        return np.column_stack([self.base[:, 0], strength * self.base[:, 0] + self.base[:, 1]])


def _pcd(epsilon: float, rng: np.random.Generator, size: str) -> AuditCase:
    """PCD with the Kendall test on two variables: D in the noiseless branch p − Δ_P > α, D′ just outside.

    On D the edge is removed with probability 1; on D′ the noisy comparison
    keeps it with positive probability: no finite ε covers that (the paper's
    Thm. 5 accounting claims ε/2 per noisy comparison here, at most 2 comparisons).
    """
    from ..privacy.sensitivity import two_sided_kendall_pvalue_sensitivity

    n = _size(size, 300, 400, 400)
    alpha = 0.05
    sensitivity = two_sided_kendall_pvalue_sensitivity(n)
    base = rng.normal(size=(n, 2))
    base[:, 0] -= base[:, 0].mean()
    candidates = np.array([[a, b] for a in (-3.0, 3.0) for b in (-3.0, 3.0)])
    make, statistic = _LinearPair(base), _KendallP()
    if statistic(make(0.0)) < alpha + sensitivity:
        for _ in range(50):  # a sample without association: shuffle the second column until p is large
            base[:, 1] = rng.permutation(base[:, 1])
            if statistic(make(0.0)) >= alpha + sensitivity + 0.1:
                break
    pair = crossing_pair(make, statistic, target=alpha + sensitivity, candidates=candidates, relation="replace",
                         low=0.0, high=1.0)
    run = AlgorithmRun("pcd", (("alpha", alpha), ("ci_test", "kendall"), ("continuous", True),
                                                     ("epsilon_per_test", epsilon / 2)))
    return _case("PCD", run, pair, (epsilon, 0.0),
                 f"Kendall test, Δ_P = {sensitivity:.3g}: p(D) = {pair.meta['statistic_D']:.4g} ≥ α + Δ_P "
                 f"(noiseless removal), p(D′) = {pair.meta['statistic_D_prime']:.4g}; claim: the paper's "
                 f"accounting, epsilon per noisy comparison (replace)", expect_violation=True)


@dataclass(frozen=True)
class PCDKendallDecision:
    """One decision of PCD's Alg. 1 with the conditional Kendall's τ: is X₀ ⫫ X₁ | X₂? (True = independent).

    Nothing is declared continuous (the public declaration of
    :class:`~dpcd.discovery.pcd.PCDDecider`), so the test is computed. With
    ``detect_continuous=True`` it is the BROKEN pre-fix behaviour: the columns
    without ties **in the data** are treated as continuous, so a test given
    one is "dependent" without noise — a data-dependent, uncharged choice.
    """

    epsilon: float
    alpha: float = 0.05
    detect_continuous: bool = False

    def __call__(self, data: Any, rng: Any) -> bool:
        from ..discovery.pcd import PCDDecider, make_tester

        array = np.asarray(data, dtype=np.float64)
        continuous = ([bool(np.unique(column).size == array.shape[0]) for column in array.T]
                      if self.detect_continuous else False)
        decider = PCDDecider(make_tester(array, "kendall", rng=0), epsilon=self.epsilon, alpha=self.alpha, rng=rng,
                             continuous=continuous)
        return bool(decider.decide(0, 1, (2,)))


def _no_stratum_pair(rng: np.random.Generator, n: int) -> NeighbouringPair:
    """D: X₁ ≈ X₀, X₂ without ties (no stratum of X₂ holds two rows); D′: one record replaced so that X₂ has one tie."""
    x = rng.normal(size=n)
    data = np.column_stack([x, x + 0.5 * rng.normal(size=n), rng.normal(size=n)])
    record = np.array([data[0, 0] + 1.0, data[0, 1] + 1.0, data[0, 2]])  # stratum {0, 1} of X₂, concordant
    return replace_record(data, 1, record, description="record 1 replaced: X2 gets its only tie (a stratum of "
                          "two rows, concordant in X0 and X1)")


def pcd_decision_case(*, epsilon: float = 1.0, rng: RngLike = 0, size: str = "quick",
                      detect_continuous: bool = False) -> AuditCase:
    """PCD's Kendall decision X₀ ⫫ X₁ | X₂ on neighbours that differ in whether X₂ has ties.

    Claim (the paper's Thm. 5, restated): one noisy comparison of Alg. 1 is
    ε-DP when Δ_P bounds how far a replaced record moves p; a p-value moves by
    at most 1, so at Δ_P = 1 the decision holds ε on this pair. On D no
    stratum holds two rows (p = 0), on D′ one does (p ≈ 0.32). The BROKEN
    variant (``detect_continuous``) decides D without noise ("dependent") and
    D′ with noise: no finite ε covers it.
    """
    epsilon = check_epsilon(epsilon)
    pair = _no_stratum_pair(as_rng(rng), _size(size, 100, 200, 400))
    mechanism = PCDKendallDecision(epsilon, detect_continuous=detect_continuous)
    name = ("BROKEN PCD decision, columns without ties treated as continuous" if detect_continuous
            else "PCD decision without a usable stratum")
    return AuditCase(name, mechanism, pair, (equals(True, name="independent"), equals(False, name="dependent")),
                     epsilon, 0.0, False, note=f"epsilon per noisy comparison (replace), Kendall test given X2; "
                     f"{pair.description}", expect_violation=detect_continuous)


CASES: dict[str, Callable[..., AuditCase]] = {
    "em_pc": _em_pc,
    "lapmech": _lapmech,
    "priv_pc": _priv_pc,
    "svt_pc": _svt_pc,
    "subsampled_gaussian": _subsampled_gaussian,
    "curate": _curate,
    "privpc_star": _privpc_star,
    "noleaks": lambda epsilon, rng, size: _score_based("noleaks", epsilon, rng, size),
    "curate_sb": lambda epsilon, rng, size: _score_based("curate_sb", epsilon, rng, size),
    "pcd": _pcd,
    "marginal_pc": _marginal_pc,
    "mst_pc": _mst_pc,
    "aim_pc": _aim_pc,
    "moment_pc": _moment_pc,
    "gcm_pc": _gcm_pc,
}
"""Audit case builder per registry name: ``builder(epsilon, rng, size) -> AuditCase``."""


def algorithm_case(name: str, *, epsilon: float, rng: RngLike, size: str = "quick") -> AuditCase:
    """The :class:`AuditCase` of registry algorithm ``name`` (``epsilon``: its privacy parameter)."""
    if name not in CASES:
        raise ValueError(f"unknown algorithm {name!r}; audit cases exist for {sorted(CASES)}")
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}, got {size!r}")
    return CASES[name](check_epsilon(epsilon), as_rng(rng), size)


def as_published(case: AuditCase, unproven: dict[str, Any], name: str, note: str) -> AuditCase:
    """``case`` with its algorithm run as its paper published it: the same pair, events and claim, the run given
    ``unproven`` (the published-but-unproven option, :func:`dpcd.discovery.algorithm.unproven_options`).

    So that a paper's privacy theorem is audited on the algorithm the paper states, as the corrected one is.
    No outcome is expected: the audit either refutes the claim or does not.

    >>> base = algorithm_case("svt_pc", epsilon=1.0, rng=0, size="smoke")
    >>> as_published(base, {"sensitivity": "reference"}, "SVT-PC as published", "6/sqrt(n)").mechanism.kwargs[-1]
    ('unproven', {'sensitivity': 'reference'})
    """
    run = case.mechanism
    if not isinstance(run, AlgorithmRun):
        raise TypeError(f"case {case.name!r} does not run a registry algorithm")
    kwargs = tuple(sorted((*((k, v) for k, v in run.kwargs if k != "unproven"), ("unproven", dict(unproven)))))
    return replace(case, name=name, mechanism=AlgorithmRun(run.algorithm, kwargs, run.data_standardised),
                   expect_violation=False, note=f"{note}; {case.note}")


def broken_algorithm_cases(*, epsilon: float = 1.0, rng: RngLike = 0, size: str = "quick") -> list[AuditCase]:
    """The pre-fix behaviours, each of which the audit must flag (``expect_violation=True``)."""
    generator = as_rng(rng)
    return [_em_pc(epsilon, generator, size, sepset="argmax"), _privpc_star_observed(epsilon, generator, size),
            pcd_decision_case(epsilon=epsilon, rng=generator, size=size, detect_continuous=True),
            _marginal_pc(epsilon, generator, size, broken=True), _mst_pc(epsilon, generator, size, broken=True),
            _moment_pc(epsilon, generator, size, broken=True),
            anm_training_case(epsilon=epsilon, rng=generator, size=size, sensitivity_factor=TRAINING_BROKEN_FACTOR),
            anm_iqr_case(epsilon=epsilon, rng=generator, size=size, broken=True),
            _gcm_pc(epsilon, generator, size, broken=True), _aim_pc(epsilon, generator, size, broken=True),
            gcm_spread_case(epsilon, generator, size, broken=True)]

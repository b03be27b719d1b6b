"""Paper 002 (Zhang et al. 2023), notebook ``pcd``: Fig. 1 (CI-test error rates), Fig. 2 (networks), Fig. 3 (Sachs).

The algorithm is :mod:`dpcd.discovery.pcd` with the tests of :mod:`dpcd.ci.rcit`.

Variants of every private decision (``variant``, :data:`VARIANTS`)
------------------------------------------------------------------
* ``"published"`` — the declared line that answers the paper's claims: Alg. 1
  with Δ_P from the RCIT score HSIC = tr(KHLH)/(m − 1)² of Def. 4 and its Δ_R
  (Eqs. 3–4), and, for the Kendall baseline, the proven two-sided p-value
  sensitivity. PCD has no DP guarantee in any variant (its Δ_P is a local
  sensitivity; see :mod:`dpcd.discovery.pcd`).
* ``"as_run"`` — the paper-as-run diagnostic (**not DP**): the RCIT score on
  the scale m·HSIC, m times Def. 4's, with the published Δ_R unchanged (the
  scale at which the paper's type II errors are reproduced), and the Kendall
  baseline with the Priv-PC authors' sensitivity 2Φ(6/√n) − 1. The permutation
  p-value does not depend on the scale, but Δ_P compares score differences with
  2Δ_R: on the scale m·HSIC a record moves the score by up to m·Δ_R, so keeping
  Δ_R understates the sensitivity m-fold, even by the paper's own bound, and
  most decisions are taken without noise.

The claims are judged by :func:`fig1_claims`, :func:`fig2_claims`,
:func:`fig3_claims` (qualitative; rules :data:`CLAIM_RULES`) and
:func:`numeric_claims`, all fixed here before any run.

The differentially private line beside PCD (this library's GCM-PC on the
data of Figs. 1–3) lives in :mod:`dpcd_papers.pcd_gcm`, so that changes to
GCM-PC do not change the code fingerprint of PCD's cells.
"""

from __future__ import annotations

import math
from typing import Sequence

import networkx as nx
import numpy as np
import pandas as pd

from dpcd.ci.rcit import RCITTester, permutation_sensitivity
from dpcd.discovery.pc import run_pc
from dpcd.discovery.pcd import PCDDecider, make_tester, pcd_decision
from dpcd.graphs import cpdag_pair_prf, skeleton_edges, skeleton_prf
from dpcd.privacy.sensitivity import reference_pvalue_sensitivity
from dpcd.validation import RngLike, as_rng, check_int

PAPER_EPSILONS = (0.1, 0.2, 0.4, 0.8, 1.0, 2.0, 4.0, 8.0, math.inf)
"""The privacy parameters of Figs. 1–3 (∞ = the non-private test)."""

VARIANTS = ("published", "as_run")
"""``published``: the declared line; ``as_run``: RCIT score × m and Kendall with Δ = 6/√n (not DP)."""
VARIANT_LABELS = {"published": "as published", "as_run": "paper-as-run: RCIT score x m, Kendall 6/sqrt(n) (not DP)"}

__all__ = ["PAPER_EPSILONS", "VARIANTS", "VARIANT_LABELS", "CLAIM_RULES", "sample_ci_case", "CI_CASES",
           "p_and_sensitivity", "AsRunPCDDecider", "ci_error_cell", "discovery_cell", "network_cell", "sachs_cell",
           "sachs_sample",
           "fig1_claims", "fig2_claims", "fig3_claims", "numeric_claims", "companion_type_one", "CI_CASE_BOUNDS",
           "edge_baseline", "graph_metrics", "EXTREME_RECORDS", "eq3_cell", "eq3_claims"]


def _check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    return variant


def p_and_sensitivity(tester, x: int, y: int, S: tuple[int, ...], *, alpha: float,
                      variant: str = "published", continuous: bool | Sequence[bool] = True) -> tuple[float, float]:
    """The p-value of one test and the Δ_P with which Alg. 1 decides it, in ``variant`` (:data:`VARIANTS`).

    ``tester`` is a :func:`dpcd.discovery.pcd.make_tester` tester (RCIT or
    Kendall). "published" is :meth:`dpcd.discovery.pcd.PCDDecider.p_and_sensitivity`;
    "as_run" divides Δ_R by m (the score on the scale m·HSIC with Δ_R kept) for
    RCIT and uses 2Φ(6/√n) − 1 for Kendall. ``continuous`` is the public
    declaration of the continuous columns (every column of the papers' data
    here): a Kendall test given a declared column is (0, 0) — "dependent",
    decided without the data, the paper's rule — in both variants.

    >>> data = sample_ci_case(100, 0)
    >>> tester = make_tester(data, "rcit", rng=1, n_permutations=20)
    >>> p, published = p_and_sensitivity(tester, 0, 1, (), alpha=0.05)
    >>> p_and_sensitivity(tester, 0, 1, (), alpha=0.05, variant="as_run")[1] <= published
    True
    """
    _check_variant(variant)
    if isinstance(tester, RCITTester):
        result = tester.result(x, y, S)
        delta_r = result.score_sensitivity
        if variant == "as_run":
            delta_r = delta_r / result.m
        return result.p_value, permutation_sensitivity(result, alpha=alpha, score_sensitivity=delta_r)
    decider = PCDDecider(tester, epsilon=math.inf, alpha=alpha, rng=0, continuous=continuous)
    p_value, sensitivity = decider.p_and_sensitivity(x, y, S)
    if variant == "as_run" and sensitivity > 0:
        sensitivity = min(1.0, 2.0 * reference_pvalue_sensitivity(tester.n_rows))
    return p_value, sensitivity


class AsRunPCDDecider(PCDDecider):
    """Alg. 1 with the "as_run" Δ_P of :func:`p_and_sensitivity` — a diagnostic, **not DP**."""

    def p_and_sensitivity(self, x: int, y: int, S: tuple[int, ...]) -> tuple[float, float]:
        return p_and_sensitivity(self.tester, x, y, S, alpha=self.alpha, variant="as_run",
                                 continuous=self.continuous)


# Experiment cells of the notebook (Figs. 1–3)


def sample_ci_case(n: int, rng: RngLike, *, n_z: int = 5) -> np.ndarray:
    """Data of Fig. 1: columns (X, Y, Z₁..Z₅) with X ← Z → Y.

    X = sin(ΣZᵢ) + c₁ε_x, Y = sin(ΣZᵢ) + c₂ε_y; Zᵢ, ε_x, ε_y ~ U(−½, ½);
    c₁, c₂ ~ U(½, 1) (Zhang et al. 2023, Sec. "Simulation on CI test").
    """
    n = check_int(n, "n", minimum=3)
    rng = as_rng(rng)
    Z = rng.uniform(-0.5, 0.5, size=(n, n_z))
    c = rng.uniform(0.5, 1.0, size=2)
    noise = rng.uniform(-0.5, 0.5, size=(n, 2))
    signal = np.sin(Z.sum(axis=1))
    X = signal + c[0] * noise[:, 0]
    Y = signal + c[1] * noise[:, 1]
    return np.column_stack([X, Y, Z])


#: (name, x, y, S, H0 true) of the four tests of Fig. 1 on sample_ci_case columns
CI_CASES = {
    "ci": (("type_I", 0, 1, (2, 3, 4, 5, 6), True), ("type_II", 0, 1, (2, 3, 4, 5), False)),
    "independence": (("type_I", 2, 3, (), True), ("type_II", 0, 1, (), False)),
}


def ci_error_cell(*, n: int, case: str, ci_test: str, rng: RngLike, epsilons: Sequence[float] = PAPER_EPSILONS,
                  alpha: float = 0.05, n_permutations: int = 100,
                  variants: Sequence[str] = ("published",)) -> list[dict]:
    """One repetition of Fig. 1: error indicators of the private test for every ε and variant.

    ``case`` = "ci" (type I: X ⫫ Y | Z; type II: X ⫫ Y | Z₁..Z₄) or
    "independence" (type I: Z₁ ⫫ Z₂; type II: X ⫫ Y). The test is computed
    once per data set and decided by :func:`pcd_decision` for every ε and
    every ``variant`` (:data:`VARIANTS`; the decisions of each variant draw
    their own noise). Every column is declared continuous (public: the data
    are drawn from continuous distributions), so Kendall's CI tests are
    "dependent" by the paper's rule.
    """
    if case not in CI_CASES:
        raise ValueError(f"case must be one of {sorted(CI_CASES)}, got {case!r}")
    variants = [_check_variant(v) for v in variants]
    rng = as_rng(rng)
    data_rng, test_rng, noise_rng = rng.spawn(3)
    data = sample_ci_case(n, data_rng)
    tester = make_tester(data, ci_test, rng=test_rng, n_permutations=n_permutations)
    rows = []
    for error, x, y, S, null_true in CI_CASES[case]:
        for variant in variants:
            p_value, sensitivity = p_and_sensitivity(tester, x, y, S, alpha=alpha, variant=variant)
            for epsilon in epsilons:
                independent, noisy = pcd_decision(p_value, sensitivity, alpha=alpha, epsilon=float(epsilon),
                                                  rng=noise_rng)
                wrong = (not independent) if null_true else independent
                rows.append({"error": error, "variant": variant, "epsilon": float(epsilon), "wrong": float(wrong),
                             "noisy": noisy, "p_value": p_value, "sensitivity": sensitivity})
    return rows


CI_CASE_BOUNDS = ((-1.5, 1.5),) * 2 + ((-0.5, 0.5),) * 5
"""Public bounds of :func:`sample_ci_case`'s columns, from its model: |sin| ≤ 1 plus noise of at most ½ for X and Y,
U(−½, ½) for the Zᵢ."""
def edge_baseline(cpdag: nx.DiGraph, truth: nx.DiGraph) -> dict:
    """The estimate's number of skeleton edges m and the expected skeleton F1 of a random graph with as many edges
    (the trivial baseline of the F1 claims, fixed before the run): 2 E[TP]/(t + m), E[TP] = t·m/C over the C pairs
    — the mean of :func:`dpcd.forecast.random_graph_f1`, written out here so that these cells' code fingerprint
    does not take in the forecast and, through it, every algorithm of the registry."""
    edges, true_edges = len(skeleton_edges(cpdag)), len(skeleton_edges(truth))
    pairs = truth.number_of_nodes() * (truth.number_of_nodes() - 1) // 2
    expected = 2.0 * (true_edges * edges / pairs) / (true_edges + edges) if true_edges + edges else 1.0
    return {"edges": edges, "f1_random": expected}


EXTREME_RECORDS = ((1.5, -1.5, 0.5, 0.5, 0.5, 0.5, 0.5), (-1.5, 1.5, -0.5, -0.5, -0.5, -0.5, -0.5),
                   (1.5, 1.5, -0.5, 0.5, -0.5, 0.5, -0.5))
"""Records at corners of :data:`CI_CASE_BOUNDS` that replace one row in :func:`eq3_cell`."""


def eq3_cell(*, m: int, rng: RngLike, lam: float = 1.0) -> list[dict]:
    """Thm. 3 checked directly: one data set of Fig. 1's CI case (``m`` rows), each of :data:`EXTREME_RECORDS`
    replacing a random row, and the change of the RCIT score of X ⫫ Y | Z₁..Z₅ (median bandwidths, as the
    algorithm computes it) against Eq. 3's Δ_R of the data set. A ``ratio`` above 1 refutes the bound.
    """
    from dpcd.ci.rcit import rcit

    m = check_int(m, "m", minimum=10)
    data_rng, pick_rng = as_rng(rng).spawn(2)
    data = sample_ci_case(m, data_rng)
    S = (2, 3, 4, 5, 6)
    first = rcit(data, 0, 1, S, rng=0, n_permutations=1, lam=lam)
    rows = []
    for record in EXTREME_RECORDS:
        other = data.copy()
        other[int(pick_rng.integers(m))] = record
        second = rcit(other, 0, 1, S, rng=0, n_permutations=1, lam=lam)
        change = abs(second.statistic - first.statistic)
        rows.append({"change": change, "bound": first.score_sensitivity,
                     "ratio": change / first.score_sensitivity})
    return rows


def eq3_claims(eq3: pd.DataFrame) -> pd.DataFrame:
    """Cells of ``pcd:thm3:eq3-bounds-the-rcit-score`` from the rows of :func:`eq3_cell` (columns m, ratio).

    >>> eq3_claims(pd.DataFrame({"m": [200, 200, 500], "ratio": [0.1, 0.2, 1.5]}))["holds"].tolist()
    [True, False]
    """
    rows = [{"claim_id": "pcd:thm3:eq3-bounds-the-rcit-score", "cell": f"m={int(m)}", "holds": bool(part.max() <= 1),
             "detail": f"largest change / Delta_R = {part.max():.3g} over {len(part)} replacements"}
            for m, part in eq3.groupby("m")["ratio"]]
    return pd.DataFrame(rows, columns=_CELL_COLUMNS)


def graph_metrics(cpdag: nx.DiGraph, truth: nx.DiGraph, *, directed_truth: bool = True) -> dict:
    """Skeleton precision / recall / F1 of ``cpdag`` against ``truth`` and, with ``directed_truth``, the CPDAG
    edge-pair ones (``pair_*``; skip them for a cyclic truth such as Sachs' consensus graph)."""
    skel = skeleton_prf(cpdag, truth)
    out = {"precision": skel["precision"], "recall": skel["recall"], "f1": skel["f1"]}
    if directed_truth:
        pair = cpdag_pair_prf(cpdag, truth)
        out.update({"pair_precision": pair["precision"], "pair_recall": pair["recall"], "pair_f1": pair["f1"]})
    return out


def discovery_cell(*, data, truth: nx.DiGraph, ci_test: str, rng: RngLike,
                   epsilons: Sequence[float] = PAPER_EPSILONS, alpha: float = 0.05, n_permutations: int = 100,
                   max_order: int | None = None, pair_metrics: bool = True,
                   variants: Sequence[str] = ("published",)) -> list[dict]:
    """PCD on one data set for every ε and variant, sharing the memoised tests: skeleton precision/recall/F1.

    ``data`` is a DataFrame whose columns are the nodes of ``truth``, every
    one declared continuous (public: the nonlinear SEM's noise and Sachs'
    flow-cytometry intensities are continuous quantities), so the Kendall
    baseline follows the paper's rule for continuous conditioning sets. With
    ``pair_metrics`` the CPDAG edge-pair precision/recall/F1 are added
    (``pair_*``; skip for a cyclic consensus graph such as Sachs').
    ``variants``: :data:`VARIANTS` (the non-private ε = ∞ run is the same in
    every variant). Each row also holds ``edges`` (the estimate's skeleton edges)
    and ``f1_random``, the skeleton F1 a random graph with as many edges scores
    in expectation (the F1 claims' trivial baseline).
    """
    variants = [_check_variant(v) for v in variants]
    rng = as_rng(rng)
    test_rng, noise_rng = rng.spawn(2)
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    names = [str(c) for c in frame.columns]
    tester = make_tester(frame.to_numpy(dtype=np.float64), ci_test, rng=test_rng, n_permutations=n_permutations)
    truth = nx.relabel_nodes(truth, {v: str(v) for v in truth.nodes})
    rows = []
    for variant in variants:
        kind = PCDDecider if variant == "published" else AsRunPCDDecider
        for epsilon in epsilons:
            decider = kind(tester, epsilon=float(epsilon), alpha=alpha, rng=noise_rng, continuous=True)
            result = run_pc(names, decider, max_order=max_order)
            row = {"variant": variant, "epsilon": float(epsilon), "n_noisy": decider.n_noisy,
                   "n_tests": result.n_tests, **edge_baseline(result.cpdag, truth),
                   "epsilon_total": decider.ledger().total().epsilon if decider.n_noisy else 0.0}
            row.update(graph_metrics(result.cpdag, truth, directed_truth=pair_metrics))
            rows.append(row)
    return rows


def network_cell(*, network: str, n: int, ci_test: str, rng: RngLike, epsilons: Sequence[float] = PAPER_EPSILONS,
                 alpha: float = 0.05, n_permutations: int = 100, max_order: int | None = None,
                 variants: Sequence[str] = ("published",)) -> list[dict]:
    """One repetition of Fig. 2: nonlinear-SEM data on a bnlearn structure, PCD for every ε.

    Data from :func:`dpcd.datasets.sample_nonlinear` (the paper's generator);
    metrics against the true DAG's skeleton (and CPDAG edge pairs).
    """
    from dpcd.datasets import bnlearn_dag, sample_nonlinear
    from dpcd.graphs import dag_to_cpdag

    rng = as_rng(rng)
    data_rng, run_rng = rng.spawn(2)
    dag = bnlearn_dag(network)
    dataset = sample_nonlinear(dag, n, data_rng)
    return discovery_cell(data=dataset.data, truth=dag_to_cpdag(dag), ci_test=ci_test, rng=run_rng,
                          epsilons=epsilons, alpha=alpha, n_permutations=n_permutations, max_order=max_order,
                          variants=variants)


def sachs_sample(n: int | None, rng: np.random.Generator) -> tuple[pd.DataFrame, nx.DiGraph]:
    """``n`` rows of the Sachs data drawn without replacement in their file order (None or n ≥ 7 466: all rows)
    and the consensus graph (:func:`dpcd_papers.realdata.load_sachs`)."""
    from .realdata import load_sachs

    dataset = load_sachs()
    frame = dataset.data
    if n is not None and n < len(frame):
        frame = frame.iloc[np.sort(rng.choice(len(frame), size=n, replace=False))].reset_index(drop=True)
    return frame, dataset.dag


def sachs_cell(*, n: int | None, ci_test: str, rng: RngLike, epsilons: Sequence[float] = PAPER_EPSILONS,
               alpha: float = 0.05, n_permutations: int = 100, max_order: int | None = None,
               variants: Sequence[str] = ("published",)) -> list[dict]:
    """One repetition of Fig. 3 on the Sachs flow-cytometry data (``n`` rows drawn without replacement; None = all).

    The consensus graph has a directed cycle, so only skeleton precision/recall/F1 are reported.
    """
    data_rng, run_rng = as_rng(rng).spawn(2)
    frame, consensus = sachs_sample(n, data_rng)
    return discovery_cell(data=frame, truth=consensus, ci_test=ci_test, rng=run_rng, epsilons=epsilons,
                          alpha=alpha, n_permutations=n_permutations, max_order=max_order, pair_metrics=False,
                          variants=variants)


# Claims of the paper, judged by rules fixed before the run

CLAIM_RULES = {
    "pcd:fig1a:rcit-type-i-falls-with-epsilon": "per m: RCIT's CI-test type I rate over eps in {4, 8} is below its "
                                                "rate over eps in {0.1, 0.2}",
    "pcd:fig1a:rcit-type-i-falls-with-m": "per eps: RCIT's CI-test type I rate at the largest m is below the rate "
                                          "at the smallest m",
    "pcd:fig1a:kendall-fails-ci-tests": "per (m, eps): Kendall's CI-test type I rate >= 0.9 (it declares "
                                        "dependence)",
    "pcd:fig1c:similar-type-i-at-m200": "per eps: at m = 200 RCIT's and Kendall's independence type I rates "
                                        "differ by at most the two-sample 95 % binomial half-width",
    "pcd:fig1c:kendall-better-type-i-at-m500": "per eps: at m = 500 Kendall's independence type I rate is below "
                                               "RCIT's",
    "pcd:fig1d:rcit-better-type-ii-independence": "per (m, eps): RCIT's independence type II rate is below "
                                                  "Kendall's",
    "pcd:fig2:precision-above-recall": "per (network, n, test, eps): skeleton precision > recall",
    "pcd:fig2:rcit-advantage-grows-with-n": "per (network, eps): RCIT's F1 minus Kendall's F1 is larger at the "
                                            "largest n than at the smallest n",
    "pcd:fig2:rcit-more-advantageous": "per (network, n, eps), eps finite: RCIT's F1 exceeds Kendall's",
    "pcd:fig3:rcit-far-above-kendall": "per eps <= 1: RCIT's F1 exceeds Kendall's by >= 0.1",
    "pcd:fig3:rcit-better-performance": "per eps, eps finite: RCIT's F1 exceeds Kendall's on Sachs",
    "pcd:fig3:low-recall": "per (test, eps): skeleton recall < 0.5",
    "pcd:thm3:eq3-bounds-the-rcit-score": "per m: no searched replacement of one record moves the RCIT score of the "
                                          "Fig. 1 CI test by more than Eq. 3's Delta_R of the data set",
}
"""The rule of each qualitative claim; one cell = one setting named in the rule (means over repetitions)."""

_CELL_COLUMNS = ["claim_id", "cell", "holds", "detail"]


def _eps(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:g}"


def _rates(fig1: pd.DataFrame, variant: str) -> pd.DataFrame:
    part = fig1[fig1["variant"] == variant] if "variant" in fig1.columns else fig1
    return (part.groupby(["case", "error", "ci_test", "n", "epsilon"], as_index=False)
            .agg(rate=("wrong", "mean"), runs=("wrong", "size")))


def fig1_claims(fig1: pd.DataFrame, *, variant: str = "published") -> pd.DataFrame:
    """Cells of the Fig. 1 claims (rules :data:`CLAIM_RULES`) from the rows of :func:`ci_error_cell`.

    ``fig1`` has the columns n, case, ci_test, error, variant, epsilon and
    wrong (one row per repetition); RCIT is ``ci_test="rcit"`` (Eq. 2 as
    written). Returns one row per (claim, cell) with ``holds`` and ``detail``.

    >>> rows = [{"n": n, "case": "ci", "ci_test": "rcit", "error": "type_I", "variant": "published",
    ...          "epsilon": e, "wrong": w} for n, e, w in [(200, 0.1, 1.0), (200, 8.0, 0.0)]]
    >>> fig1_claims(pd.DataFrame(rows))["holds"].tolist()
    [True]
    """
    _check_variant(variant)
    rates = _rates(fig1, variant)
    sizes = sorted(rates["n"].unique())
    rows: list[dict] = []

    def rate(case: str, error: str, test: str, n: int, epsilon: float) -> tuple[float, int]:
        hit = rates[(rates["case"] == case) & (rates["error"] == error) & (rates["ci_test"] == test)
                    & (rates["n"] == n) & (rates["epsilon"] == epsilon)]
        return (float(hit["rate"].iloc[0]), int(hit["runs"].iloc[0])) if len(hit) else (math.nan, 0)

    def add(claim: str, cell: str, holds, detail: str) -> None:
        if holds is not None:
            rows.append({"claim_id": claim, "cell": cell, "holds": bool(holds), "detail": detail})

    ci_rcit = rates[(rates["case"] == "ci") & (rates["error"] == "type_I") & (rates["ci_test"] == "rcit")]
    for n in sizes:
        part = ci_rcit[ci_rcit["n"] == n]
        low = part[part["epsilon"].isin([0.1, 0.2])]["rate"]
        high = part[part["epsilon"].isin([4.0, 8.0])]["rate"]
        if len(low) and len(high):
            add("pcd:fig1a:rcit-type-i-falls-with-epsilon", f"m={n}", high.mean() < low.mean(),
                f"{low.mean():.2f} at eps<=0.2, {high.mean():.2f} at eps>=4")
    epsilons = sorted(rates["epsilon"].unique())
    for epsilon in epsilons:
        if len(sizes) >= 2:
            small, _ = rate("ci", "type_I", "rcit", sizes[0], epsilon)
            large, _ = rate("ci", "type_I", "rcit", sizes[-1], epsilon)
            add("pcd:fig1a:rcit-type-i-falls-with-m", f"eps={_eps(epsilon)}",
                None if math.isnan(small) or math.isnan(large) else large < small,
                f"m={sizes[0]}: {small:.2f}, m={sizes[-1]}: {large:.2f}")
        for n in sizes:
            kendall, _ = rate("ci", "type_I", "kendall", n, epsilon)
            add("pcd:fig1a:kendall-fails-ci-tests", f"m={n}, eps={_eps(epsilon)}",
                None if math.isnan(kendall) else kendall >= 0.9, f"{kendall:.2f}")
            r2, _ = rate("independence", "type_II", "rcit", n, epsilon)
            k2, _ = rate("independence", "type_II", "kendall", n, epsilon)
            add("pcd:fig1d:rcit-better-type-ii-independence", f"m={n}, eps={_eps(epsilon)}",
                None if math.isnan(r2) or math.isnan(k2) else r2 < k2, f"RCIT {r2:.2f}, Kendall {k2:.2f}")
        r1, nr = rate("independence", "type_I", "rcit", 200, epsilon)
        k1, nk = rate("independence", "type_I", "kendall", 200, epsilon)
        if nr and nk:
            pooled = (r1 * nr + k1 * nk) / (nr + nk)
            half = 1.96 * math.sqrt(max(pooled * (1 - pooled), 1e-12) * (1 / nr + 1 / nk))
            add("pcd:fig1c:similar-type-i-at-m200", f"eps={_eps(epsilon)}", abs(r1 - k1) <= half,
                f"RCIT {r1:.2f}, Kendall {k1:.2f} (half-width {half:.2f})")
        r1, _ = rate("independence", "type_I", "rcit", 500, epsilon)
        k1, _ = rate("independence", "type_I", "kendall", 500, epsilon)
        add("pcd:fig1c:kendall-better-type-i-at-m500", f"eps={_eps(epsilon)}",
            None if math.isnan(r1) or math.isnan(k1) else k1 < r1, f"RCIT {r1:.2f}, Kendall {k1:.2f}")
    return pd.DataFrame(rows, columns=_CELL_COLUMNS)


def fig2_claims(fig2: pd.DataFrame, *, variant: str = "published") -> pd.DataFrame:
    """Cells of the Fig. 2 claims from the rows of :func:`network_cell` (means over repetitions).

    >>> rows = [{"network": "x", "n": 500, "ci_test": t, "variant": "published", "epsilon": 1.0,
    ...          "precision": 0.9, "recall": r, "f1": f} for t, r, f in [("rcit", 0.5, 0.6), ("kendall", 0.2, 0.3)]]
    >>> fig2_claims(pd.DataFrame(rows))["holds"].tolist()  # precision > recall twice, RCIT above Kendall
    [True, True, True]
    """
    _check_variant(variant)
    part = fig2[fig2["variant"] == variant] if "variant" in fig2.columns else fig2
    means = part.groupby(["network", "n", "ci_test", "epsilon"], as_index=False)[["precision", "recall", "f1"]].mean()
    rows = [{"claim_id": "pcd:fig2:precision-above-recall",
             "cell": f"{r.network}, n={r.n}, {r.ci_test}, eps={_eps(r.epsilon)}",
             "holds": bool(r.precision > r.recall), "detail": f"{r.precision:.2f} vs {r.recall:.2f}"}
            for r in means.itertuples() if not (math.isnan(r.precision) or math.isnan(r.recall))]
    pairs = means.pivot_table(index=["network", "n", "epsilon"], columns="ci_test", values="f1").reset_index()
    if {"rcit", "kendall"} <= set(pairs.columns):
        rows += [{"claim_id": "pcd:fig2:rcit-more-advantageous", "cell": f"{r.network}, n={r.n}, eps={_eps(r.epsilon)}",
                  "holds": bool(r.rcit > r.kendall), "detail": f"RCIT {r.rcit:.2f}, Kendall {r.kendall:.2f}"}
                 for r in pairs.itertuples() if math.isfinite(r.epsilon) and not (math.isnan(r.rcit)
                                                                                or math.isnan(r.kendall))]
    sizes = sorted(means["n"].unique())
    if len(sizes) >= 2:
        wide = means.pivot_table(index=["network", "epsilon", "n"], columns="ci_test", values="f1").reset_index()
        if {"rcit", "kendall"} <= set(wide.columns):
            wide["advantage"] = wide["rcit"] - wide["kendall"]
            for (network, epsilon), group in wide.groupby(["network", "epsilon"]):
                small = group.loc[group["n"] == sizes[0], "advantage"]
                large = group.loc[group["n"] == sizes[-1], "advantage"]
                if len(small) and len(large):
                    rows.append({"claim_id": "pcd:fig2:rcit-advantage-grows-with-n",
                                 "cell": f"{network}, eps={_eps(epsilon)}",
                                 "holds": bool(large.iloc[0] > small.iloc[0]),
                                 "detail": f"n={sizes[0]}: {small.iloc[0]:+.2f}, n={sizes[-1]}: {large.iloc[0]:+.2f}"})
    return pd.DataFrame(rows, columns=_CELL_COLUMNS)


def fig3_claims(fig3: pd.DataFrame, *, variant: str = "published") -> pd.DataFrame:
    """Cells of the Fig. 3 (Sachs) claims from the rows of :func:`sachs_cell` (means over repetitions).

    >>> rows = [{"ci_test": t, "variant": "published", "epsilon": 1.0, "precision": 0.5, "recall": 0.2, "f1": f}
    ...         for t, f in [("rcit", 0.5), ("kendall", 0.3)]]
    >>> fig3_claims(pd.DataFrame(rows))["holds"].tolist()
    [True, True, True, True]
    """
    _check_variant(variant)
    part = fig3[fig3["variant"] == variant] if "variant" in fig3.columns else fig3
    means = part.groupby(["ci_test", "epsilon"], as_index=False)[["precision", "recall", "f1"]].mean()
    rows = []
    wide = means.pivot(index="epsilon", columns="ci_test", values="f1")
    if {"rcit", "kendall"} <= set(wide.columns):
        for epsilon, row in wide[wide.index <= 1.0].iterrows():
            rows.append({"claim_id": "pcd:fig3:rcit-far-above-kendall", "cell": f"eps={_eps(epsilon)}",
                         "holds": bool(row["rcit"] - row["kendall"] >= 0.1),
                         "detail": f"RCIT {row['rcit']:.2f}, Kendall {row['kendall']:.2f}"})
        for epsilon, row in wide[np.isfinite(wide.index.to_numpy(dtype=float))].iterrows():
            rows.append({"claim_id": "pcd:fig3:rcit-better-performance", "cell": f"eps={_eps(epsilon)}",
                         "holds": bool(row["rcit"] > row["kendall"]),
                         "detail": f"RCIT {row['rcit']:.2f}, Kendall {row['kendall']:.2f}"})
    rows += [{"claim_id": "pcd:fig3:low-recall", "cell": f"{r.ci_test}, eps={_eps(r.epsilon)}",
              "holds": bool(r.recall < 0.5), "detail": f"recall {r.recall:.2f}"} for r in means.itertuples()]
    return pd.DataFrame(rows, columns=_CELL_COLUMNS)


TYPE_II_CLAIMS = (("pcd:fig1b:rcit-type-ii-m200", "ci", "rcit"),
                  ("pcd:fig1b:kendall-type-ii-m200", "ci", "kendall"),
                  ("pcd:fig1d:rcit-type-ii-m200", "independence", "rcit"))
"""The numeric type II claims of Fig. 1 (b, d) at m = 200: (claim id, case, test)."""


def numeric_claims(fig1: pd.DataFrame, fig3: pd.DataFrame, *, variant: str = "published") -> pd.DataFrame:
    """Our value, sd and run count for each numeric claim of the prose (claim ids of ``data/paper_values/pcd.csv``).

    Type II rates at m = 200 (Fig. 1 b, d): per repetition the mean error over
    the ε values of the profile (the paper's "stable ... as ε increases"),
    then mean and sd over repetitions (the independent data sets). Kendall's F1
    on Sachs for ε ≤ 1 (Fig. 3): per repetition the mean over ε ≤ 1.

    >>> fig1 = pd.DataFrame([{"n": 200, "case": "ci", "ci_test": "kendall", "error": "type_II",
    ...                       "variant": "published", "epsilon": e, "repetition": r, "wrong": 0.0}
    ...                      for e in (1.0, 2.0) for r in range(3)])
    >>> numeric_claims(fig1, pd.DataFrame(columns=["ci_test", "variant", "epsilon", "repetition", "f1"]))["value"].tolist()
    [0.0]
    """
    _check_variant(variant)
    rows = []
    for claim, case, test in TYPE_II_CLAIMS:
        part = fig1[(fig1["case"] == case) & (fig1["error"] == "type_II") & (fig1["ci_test"] == test)
                    & (fig1["n"] == 200) & (fig1["variant"] == variant)]
        if len(part):
            per_run = part.groupby("repetition")["wrong"].mean()
            rows.append({"claim_id": claim, "value": float(per_run.mean()), "sd": float(per_run.std(ddof=1))
                         if len(per_run) > 1 else math.nan, "runs": len(per_run)})
    part = fig3[(fig3["ci_test"] == "kendall") & (fig3["variant"] == variant) & (fig3["epsilon"] <= 1.0)]
    if len(part):
        per_run = part.groupby("repetition")["f1"].mean()
        rows.append({"claim_id": "pcd:fig3:kendall-f1-eps-le-1", "value": float(per_run.mean()),
                     "sd": float(per_run.std(ddof=1)) if len(per_run) > 1 else math.nan, "runs": len(per_run)})
    return pd.DataFrame(rows, columns=["claim_id", "value", "sd", "runs"])


def companion_type_one(fig1: pd.DataFrame, *, variant: str = "as_run") -> pd.DataFrame:
    """For each type II claim of :func:`numeric_claims`: the same line's type I error in the same case at m = 200
    (mean over the profile's finite ε), the companion :func:`dpcd_papers.reporting.mark_degenerate_diagnostics`
    reads — a type II error of 0 from a test that rejects every true hypothesis explains nothing.

    >>> fig1 = pd.DataFrame([{"n": 200, "case": "ci", "ci_test": "rcit", "error": "type_I", "variant": "as_run",
    ...                       "epsilon": e, "repetition": 0, "wrong": 1.0} for e in (1.0, 2.0, math.inf)])
    >>> companion_type_one(fig1)[["claim_id", "value"]].values.tolist()
    [['pcd:fig1b:rcit-type-ii-m200', 1.0]]
    """
    _check_variant(variant)
    rows = []
    for claim, case, test in TYPE_II_CLAIMS:
        part = fig1[(fig1["case"] == case) & (fig1["error"] == "type_I") & (fig1["ci_test"] == test)
                    & (fig1["n"] == 200) & (fig1["variant"] == variant) & np.isfinite(fig1["epsilon"].astype(float))]
        if len(part):
            rows.append({"claim_id": claim, "companion": f"the diagnostic's type I error ({case} case, m = 200)",
                         "value": float(part["wrong"].mean())})
    return pd.DataFrame(rows, columns=["claim_id", "companion", "value"])


def qualitative_rows(claims: pd.DataFrame, cells: pd.DataFrame, *, line: str,
                     diagnostic_cells: pd.DataFrame | None = None, diagnostic: str = "") -> pd.DataFrame:
    """:func:`dpcd_papers.reporting.qualitative_rows` for this paper's claims under :data:`CLAIM_RULES`."""
    from .reporting import qualitative_rows as judged

    return judged("pcd", claims, cells, line=line, rules=CLAIM_RULES, diagnostic_cells=diagnostic_cells,
                  diagnostic=diagnostic)

"""Paper 003 (Wang, Pang & Song 2020), notebook ``priv_pc``: Fig. 1 (F1 against privacy cost) and Table 2.

The algorithms are :mod:`dpcd.discovery.priv_pc`, :mod:`dpcd.discovery.svt_pc`,
:mod:`dpcd.discovery.subsampled_gaussian_pc` and :mod:`dpcd.discovery.em_pc`.

Lines of the notebook
---------------------
* the **declared lines** that answer the paper's claims: Priv-PC, SVT-PC and
  the sub-sampled Gaussian baseline with the proven p-value sensitivity
  (``sensitivity="proven"``), and EM-PC (its own proven score bound);
* **diagnostic lines**: the same Kendall algorithms with the authors'
  sensitivity 6/√n (``sensitivity="reference"``: a valid bound for
  unconditional tests, not proven for conditional ones), and
  ``priv_pc_keep_edge`` — Priv-PC with the authors' convention for degenerate
  strata (a test without an informative stratum keeps the edge;
  :data:`dpcd.ci.discrete.DEGENERATE_CONVENTIONS`), which is **not DP**:
  whether a test is degenerate is read from the data without noise and decides
  the edge without any charge.

The claims of Sec. 4.2–4.3 are judged by :func:`fig1_claims` and
:func:`table2_claims`, whose rules are fixed here, before any run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from dpcd.ci import CITester
from dpcd.discovery.kendall_family import (
    KendallPValueQuery,
    SensitivityMode,
    kendall_ledger,
    kendall_run_setup,
    privacy_totals,
    reference_max_order,
)
from dpcd.discovery.pc import PCResult, run_pc
from dpcd.discovery.priv_pc import SieveKendallDecider, priv_pc
from dpcd.privacy.sensitivity import one_sided_kendall_pvalue_sensitivity
from dpcd.privacy.sieve import SieveAndExamine, optimal_subsample_size
from dpcd.validation import RngLike, as_rng

__all__ = [
    "EXPERIMENT_LINES",
    "DIAGNOSTIC_LINES",
    "LABELS",
    "CLAIM_RULES",
    "line_label",
    "accumulated_cost",
    "priv_pc_keep_edge",
    "run_cell",
    "fig1_claims",
    "table2_claims",
    "sensitivity_claims",
    "spearman_after_insertion",
    "spearman_sensitivity_claims",
    "qualitative_rows",
]


EXPERIMENT_LINES = ("priv_pc", "priv_pc_nosub", "svt_pc", "em_pc", "subsampled_gaussian")
"""The algorithms of the paper (registry algorithms plus Priv-PC without sub-sampling)."""
DIAGNOSTIC_LINES = ("priv_pc_keep_edge",)
"""Paper-as-run lines that are not differentially private."""
LABELS = {"priv_pc": "Priv-PC", "priv_pc_nosub": "Priv-PC w/o sub-sampling", "svt_pc": "SVT-PC",
          "em_pc": "EM-PC", "subsampled_gaussian": "SG",
          "priv_pc_keep_edge": "Priv-PC, NaN keeps the edge (not DP)"}
"""Figure and table label of each algorithm."""

CLAIM_RULES = {
    "priv_pc:sec4.2:priv_pc-converges": "per network: Priv-PC's mean F1 at the largest per-test epsilon >= 0.95",
    "priv_pc:sec4.2:em_pc-does-not-converge": "per network: EM-PC's mean F1 at its largest total epsilon < 0.95",
    "priv_pc:sec4.2:priv_pc-beats-em_pc-at-large-cost": "per network: Priv-PC's mean F1 over runs with eps_tot in "
                                                        "[10, 100] > EM-PC's over the same window",
    "priv_pc:sec4.2:em_pc-beats-priv_pc-at-small-cost": "per network: EM-PC's mean F1 over runs with eps_tot <= 3 > "
                                                        "Priv-PC's over the same window",
    "priv_pc:sec4.2:priv_pc-much-better-than-svt_pc": "per network: Priv-PC's mean F1 over eps_tot in [1, 100] "
                                                      "exceeds SVT-PC's by >= 0.1",
    "priv_pc:sec4.2:sg-worse-than-em_pc-and-svt_pc": "per network: SG's mean F1 over eps_tot in [1, 100] < both "
                                                     "EM-PC's and SVT-PC's",
    "priv_pc:sec4.3:priv_pc-faster-than-em_pc": "per network: median CPU seconds of EM-PC > median CPU seconds of "
                                                "Priv-PC (same machine, same rows, per-test/total epsilon 1)",
    "priv_pc:sec4.3:subsampling-speeds-up-priv_pc": "per network: median CPU seconds of Priv-PC w/o sub-sampling > "
                                                    "Priv-PC's",
    "priv_pc:sec4.3:online-queries-speed-up-priv_pc": "per network: median CPU seconds of EM-PC > Priv-PC w/o "
                                                      "sub-sampling's (the first factor alone)",
    "priv_pc:sec4.3:priv_pc-sometimes-faster-than-svt_pc": "per network: median CPU seconds of SVT-PC > Priv-PC's; "
                                                           "'sometimes' = in at least one of the four networks",
    "priv_pc:app-d:thm6-kendall-sensitivity": "per n in {10, 100, 1000}: |tau_a(D') - tau_a(D)| <= 2/(n - 1) on the "
                                              "pair of sensitivity_claims (n records on a decreasing line, one record "
                                              "concordant with all of them added)",
    "priv_pc:app-d:thm7-conditional-kendall-sensitivity": "per n in {10, 100, 1000}: |Z(D') - Z(D)| <= c_tau/sqrt(n - 1) "
                                                          "with the theorem's c_tau at c1 = n (one stratum) on the "
                                                          "same pair",
    "priv_pc:app-e:thm8-spearman-sensitivity": "per n in {10, 100, 1000}: ||rho(D')| - |rho(D)|| <= 30/n on the "
                                               "worst pair searched by spearman_sensitivity_claims (D': D and one "
                                               "record added, every rank position of it, several D)",
    "priv_pc:app-e:thm9-conditional-spearman-sensitivity": "per (n, k) in {10, 100, 1000} x {1, 2}: |Z(D') - Z(D)| "
                                                           "<= c_rho sqrt(k)/sqrt(n - k), c_rho = 31 + 30/c1, on the "
                                                           "worst pair searched the same way within one stratum",
}
"""The rule of each qualitative claim of Sec. 4.2–4.3, fixed before the run (F1 = CPDAG edge pairs
against non-private Kendall PC on the same rows); one cell = one network."""

_CELL_COLUMNS = ["claim_id", "cell", "holds", "detail"]
_CONVERGED = 0.95
_WINDOWS = {"small": (0.0, 3.0), "large": (10.0, 100.0), "axis": (1.0, 100.0)}
_MUCH_BETTER = 0.1


def line_label(algorithm: str, sensitivity: str) -> str:
    """Label of one line: the algorithm's name, with "(authors' Δ)" for the reference sensitivity.

    >>> line_label("priv_pc", "reference"), line_label("em_pc", "proven")
    ("Priv-PC (authors' Δ)", 'EM-PC')
    """
    if algorithm not in LABELS:
        raise ValueError(f"algorithm must be one of {sorted(LABELS)}, got {algorithm!r}")
    if sensitivity not in ("proven", "reference"):
        raise ValueError(f"sensitivity must be 'proven' or 'reference', got {sensitivity!r}")
    label = LABELS[algorithm]
    if sensitivity == "reference" and algorithm not in ("em_pc", "priv_pc_keep_edge"):
        label += " (authors' Δ)"
    return label


def accumulated_cost(results: pd.DataFrame) -> pd.Series:
    """The x-axis of Fig. 1 per run: EM-PC's total ε; SG's tight (PLD) total; the others' advanced composition.

    >>> frame = pd.DataFrame({"algorithm": ["em_pc", "subsampled_gaussian", "priv_pc"], "epsilon": [3.0, 1.0, 1.0],
    ...                       "epsilon_advanced": [0.0, 9.0, 5.0], "epsilon_tight": [0.0, 2.0, 4.0]})
    >>> accumulated_cost(frame).tolist()
    [3.0, 2.0, 5.0]
    """
    for column in ("algorithm", "epsilon", "epsilon_advanced", "epsilon_tight"):
        if column not in results.columns:
            raise ValueError(f"results must have a column {column!r}")
    cost = results["epsilon_advanced"].astype(float).copy()
    em = results["algorithm"] == "em_pc"
    sg = results["algorithm"] == "subsampled_gaussian"
    cost[em] = results.loc[em, "epsilon"].astype(float)
    cost[sg] = results.loc[sg, "epsilon_tight"].astype(float)
    return cost


# --------------------------------------------------------------------------- the not-DP diagnostic


class _KeepEdgeQuery(KendallPValueQuery):
    """The Kendall p-value query with the authors' degenerate-strata convention (NaN = no evidence)."""

    @staticmethod
    def make_tester(codes: np.ndarray, levels) -> CITester:
        return CITester(codes, "kendall", variant="a", levels=levels, degenerate="keep_edge")


class _KeepEdgeDecider(SieveKendallDecider):
    """Sieve-and-examine where a NaN answer keeps the edge, as ``NaN + noise >= T`` is False in the authors' code."""

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        on_subsample = self.query.on_rows(self.mechanism.subsample)(x, y, S)
        if math.isnan(on_subsample):
            return False  # uncharged, data-dependent: the reason this line is not DP
        if not self.mechanism.sieve(on_subsample):
            return False
        on_full = self.query(x, y, S)
        return self.mechanism.examine(-math.inf if math.isnan(on_full) else on_full)


def priv_pc_keep_edge(data, *, levels, epsilon_per_test: float, rng: RngLike, delta: float = 1e-3,
                      alpha: float = 0.20, threshold_tweak: float = 0.02, max_order: int | None = None,
                      node_names: Sequence[str] | None = None,
                      sensitivity: SensitivityMode = "reference") -> PCResult:
    """Priv-PC as the authors' code runs it on degenerate strata — **not differentially private**.

    The conditional Kendall test uses ``degenerate="keep_edge"``: strata in
    which X or Y is constant are left out, and a test without an informative
    stratum answers NaN, which never passes the sieve (the edge is kept). That
    branch reads the data without noise and is charged nothing, so the output
    is not DP whatever the ledger says; the ledger records the charges of the
    other tests as :func:`dpcd.discovery.priv_pc.priv_pc` would. Everything
    else (sub-sample size, sensitivities, threshold tweak) is Priv-PC's.
    Kept out of :mod:`dpcd` on purpose: no registry entry can reach it.

    >>> from dpcd.datasets import load_bnlearn
    >>> sample = load_bnlearn("asia", 20_000, rng=0)
    >>> result = priv_pc_keep_edge(sample.data, levels=sample.levels, epsilon_per_test=1e6, rng=1)
    >>> frozenset({"either", "xray"}) in result.skeleton
    True
    """
    codes, names, max_order, checked = kendall_run_setup(data, node_names, max_order, levels)
    query = _KeepEdgeQuery(codes, checked.levels)
    n, p = codes.shape
    subsample_size = optimal_subsample_size(n, epsilon_per_test)
    order_cap = min(max_order, p - 2)
    full = one_sided_kendall_pvalue_sensitivity(n, query.levels, order_cap, mode=sensitivity)
    sub = one_sided_kendall_pvalue_sensitivity(subsample_size, query.levels, order_cap, mode=sensitivity)
    ledger, _ = kendall_ledger(_unproven(sensitivity), algorithm="priv_pc_keep_edge")
    ledger.mark_not_dp("priv_pc_keep_edge keeps the edge of a test without an informative stratum, an uncharged "
                       "data-dependent decision")
    mechanism = SieveAndExamine(n=n, threshold=alpha / 2.0, threshold_tweak=threshold_tweak, epsilon=epsilon_per_test,
                                sensitivity=full, subsample_sensitivity=sub, subsample_size=subsample_size,
                                rng=as_rng(rng), ledger=ledger)
    result = run_pc(names, _KeepEdgeDecider(query, mechanism), max_order=max_order, ledger=ledger)
    mechanism.finish()
    info = {"algorithm": "priv_pc_keep_edge (not DP)", "epsilon_per_test": epsilon_per_test, "delta": delta,
            "alpha": alpha, "subsample_size": subsample_size, "max_order": max_order,
            "sensitivity_mode": sensitivity, "n_examined": mechanism.n_examined,
            "n_full_tests": query.tester.n_computed, "n_subsample_tests": query.n_subsample_tests}
    return replace(result, info=info)


# --------------------------------------------------------------------------- one cell


def _unproven(sensitivity: SensitivityMode) -> dict[str, str] | None:
    """The library's opt-in for the authors' calibration (``"reference"``); None for the proven one."""
    return {"sensitivity": "reference"} if sensitivity == "reference" else None


def run_cell(*, network: str, n: int, algorithm: str, epsilon: float, rng: RngLike, alpha: float = 0.10,
             threshold_tweak: float = 0.02, delta: float = 1e-3,
             sensitivity: SensitivityMode = "reference", sampling_rate: float = 0.1) -> dict:
    """One run of the Fig. 1 / Table 2 experiment (notebooks/priv_pc.ipynb).

    Samples ``n`` rows of the bnlearn ``network`` with ``rng``, runs
    ``algorithm`` ("priv_pc", "priv_pc_nosub" = Priv-PC with m = n, "svt_pc",
    "em_pc" from :mod:`dpcd.discovery.em_pc`, whose ``epsilon`` is its total
    budget, "subsampled_gaussian" from :mod:`dpcd.discovery.subsampled_gaussian_pc`
    with Poisson rate ``sampling_rate`` and noise multiplier
    σ = ``analytic_gaussian_sigma(2, epsilon, delta)``, the σ with which one
    test *without* sub-sampling would be (ε, δ)-DP under the accountant's
    replace-one pair (shift 2Δ); sub-sampling then lowers the per-test cost, and
    its accumulated cost is ``epsilon_tight``, the PLD total; or the not-DP
    diagnostic "priv_pc_keep_edge", :func:`priv_pc_keep_edge`) at per-test
    ``epsilon``, and scores the CPDAG by CPDAG-pair F1 against the true CPDAG
    (``f1_true``) and against non-private Kendall PC on the same rows at the
    same threshold (``f1_pc``, the paper's convention: "Priv-PC converges to
    PC"); that PC uses the same degenerate-strata convention as the line
    ("keep_edge" for the diagnostic, "independent" otherwise), and
    ``f1_pc_vs_true`` scores it against the truth. ``alpha`` is the paper's
    threshold T on the one-sided p-value; the library's Kendall lines take
    the two-sided level 2T (their ``alpha``). ``sensitivity`` applies to
    the Kendall lines only (EM-PC's score bound is its own). Returns one flat
    dict: scores, privacy totals, CI-test counts, seconds.
    """
    from dpcd.datasets import load_bnlearn
    from dpcd.discovery.pc import pc
    from dpcd.graphs import cpdag_pair_prf, dag_to_cpdag

    from .experiments import timed

    if algorithm not in EXPERIMENT_LINES + DIAGNOSTIC_LINES:
        raise ValueError(f"algorithm must be one of {EXPERIMENT_LINES + DIAGNOSTIC_LINES}, got {algorithm!r}")
    generator = as_rng(rng)
    sample = load_bnlearn(network, n, generator)
    data, dag, levels = sample.data, sample.dag, sample.levels  # the network's domains: public
    codes = np.asarray(data)
    names = list(data.columns)
    truth = dag_to_cpdag(dag)
    max_order = reference_max_order(len(codes), codes.shape[1])
    convention = "keep_edge" if algorithm in DIAGNOSTIC_LINES else "independent"
    reference = pc(codes, ci_test="kendall", alpha=min(2 * alpha, 0.999), max_order=max_order, node_names=names,
                   degenerate=convention)
    cpu_started = time.process_time()  # CPU time of the algorithm's process: robust to other load on the machine
    if algorithm == "em_pc":
        from dpcd.discovery.em_pc import em_pc

        result, seconds = timed(em_pc, codes, levels=levels, epsilon_total=epsilon, alpha=alpha, rng=generator,
                                node_names=names)
        n_full = result.n_tests
    elif algorithm == "subsampled_gaussian":
        from dpcd.discovery.subsampled_gaussian_pc import subsampled_gaussian_pc
        from dpcd.privacy.mechanisms import analytic_gaussian_sigma

        sigma = analytic_gaussian_sigma(2.0, epsilon, delta)
        result, seconds = timed(subsampled_gaussian_pc, codes, levels=levels, sigma=sigma,
                                sampling_rate=sampling_rate, delta=delta, alpha=2 * alpha, rng=generator,
                                max_order=max_order, node_names=names, unproven=_unproven(sensitivity))
        n_full = result.info["n_full_tests"]
    elif algorithm == "svt_pc":
        from dpcd.discovery.svt_pc import svt_pc

        result, seconds = timed(svt_pc, codes, levels=levels, epsilon_per_edge=epsilon, delta=delta, alpha=2 * alpha,
                                rng=generator, max_order=max_order, node_names=names, unproven=_unproven(sensitivity))
        n_full = result.info["n_full_tests"]
    elif algorithm == "priv_pc_keep_edge":
        result, seconds = timed(priv_pc_keep_edge, codes, levels=levels, epsilon_per_test=epsilon, delta=delta,
                                alpha=2 * alpha, threshold_tweak=threshold_tweak, rng=generator, max_order=max_order,
                                node_names=names, sensitivity=sensitivity)
        n_full = result.info["n_full_tests"]
    else:
        size = len(codes) if algorithm == "priv_pc_nosub" else None
        result, seconds = timed(priv_pc, codes, levels=levels, epsilon_per_test=epsilon, delta=delta, alpha=2 * alpha,
                                threshold_tweak=threshold_tweak, subsample_size=size, rng=generator,
                                max_order=max_order, node_names=names, unproven=_unproven(sensitivity))
        n_full = result.info["n_full_tests"]
    cpu_seconds = time.process_time() - cpu_started
    # accounting is done outside the timed run: the tight total is the accountant's cost, not the algorithm's
    totals = privacy_totals(result.ledger, delta)
    return {
        "f1_true": cpdag_pair_prf(result.cpdag, truth)["f1"],
        "f1_pc": cpdag_pair_prf(result.cpdag, reference.cpdag)["f1"],
        "f1_pc_vs_true": cpdag_pair_prf(reference.cpdag, truth)["f1"],
        "seconds": seconds, "cpu_seconds": cpu_seconds, "n_tests": result.n_tests, "n_full_tests": n_full,
        "n_examined": result.info.get("n_examined", result.info.get("n_hits", np.nan)),
        **totals,
    }


# --------------------------------------------------------------------------- claims


def _window_mean(frame: pd.DataFrame, algorithm: str, window: str, column: str) -> float:
    low, high = _WINDOWS[window]
    part = frame[(frame["algorithm"] == algorithm) & (frame["cost"] >= low) & (frame["cost"] <= high)]
    return float(part[column].mean()) if len(part) else math.nan


def _at_largest(frame: pd.DataFrame, algorithm: str, column: str) -> float:
    part = frame[frame["algorithm"] == algorithm]
    if part.empty:
        return math.nan
    return float(part.loc[part["epsilon"] == part["epsilon"].max(), column].mean())


def fig1_claims(results: pd.DataFrame, *, sensitivity: str = "proven", column: str = "f1_pc") -> pd.DataFrame:
    """Per claim of Sec. 4.2 and network: whether it holds (rules :data:`CLAIM_RULES`), and the numbers.

    ``results`` are rows of :func:`run_cell` (columns network, algorithm,
    epsilon, sensitivity, the privacy totals and ``column``). The Kendall lines
    are taken at ``sensitivity`` ("proven": the declared DP lines;
    "reference": the authors' Δ, a diagnostic, which leaves out the claim on
    EM-PC alone); EM-PC has one line. A cell
    whose numbers are missing (no run in the window) is left out. Returns one
    row per (claim, network) with ``claim_id``, ``cell`` (the network), ``holds`` and ``detail``.

    >>> rows = [{"network": "x", "algorithm": a, "epsilon": e, "sensitivity": "proven", "f1_pc": f,
    ...          "epsilon_advanced": c, "epsilon_tight": c}
    ...         for a, e, f, c in [("priv_pc", 4.0, 1.0, 20.0), ("em_pc", 100.0, 0.7, 0.0),
    ...                            ("svt_pc", 4.0, 0.5, 20.0), ("subsampled_gaussian", 50.0, 0.4, 20.0)]]
    >>> table = fig1_claims(pd.DataFrame(rows)).set_index("claim_id")["holds"]
    >>> bool(table["priv_pc:sec4.2:priv_pc-converges"]), bool(table["priv_pc:sec4.2:em_pc-does-not-converge"])
    (True, True)
    """
    if sensitivity not in ("proven", "reference"):
        raise ValueError(f"sensitivity must be 'proven' or 'reference', got {sensitivity!r}")
    keep = (results["algorithm"] == "em_pc") | (results["sensitivity"] == sensitivity)
    frame = results[keep & results["algorithm"].isin(EXPERIMENT_LINES)].copy()
    frame["cost"] = accumulated_cost(frame)
    rows = []

    def add(claim: str, network: str, holds: bool | None, detail: str) -> None:
        if holds is not None:
            rows.append({"claim_id": f"priv_pc:sec4.2:{claim}", "cell": network, "holds": bool(holds),
                         "detail": detail})

    for network, part in frame.groupby("network", sort=False):
        priv = _at_largest(part, "priv_pc", column)
        add("priv_pc-converges", network, None if math.isnan(priv) else priv >= _CONVERGED,
            f"Priv-PC {priv:.2f} at the largest per-test epsilon")
        em = _at_largest(part, "em_pc", column)
        if sensitivity == "proven":  # EM-PC alone: the Kendall calibration does not enter this claim
            add("em_pc-does-not-converge", network, None if math.isnan(em) else em < _CONVERGED,
                f"EM-PC {em:.2f} at its largest total epsilon")
        for claim, window, first, second in (("priv_pc-beats-em_pc-at-large-cost", "large", "priv_pc", "em_pc"),
                                             ("em_pc-beats-priv_pc-at-small-cost", "small", "em_pc", "priv_pc")):
            a, b = _window_mean(part, first, window, column), _window_mean(part, second, window, column)
            add(claim, network, None if math.isnan(a) or math.isnan(b) else a > b,
                f"{LABELS[first]} {a:.2f} vs {LABELS[second]} {b:.2f}")
        priv, svt = _window_mean(part, "priv_pc", "axis", column), _window_mean(part, "svt_pc", "axis", column)
        add("priv_pc-much-better-than-svt_pc", network,
            None if math.isnan(priv) or math.isnan(svt) else priv - svt >= _MUCH_BETTER,
            f"Priv-PC {priv:.2f} vs SVT-PC {svt:.2f}")
        sg, em, svt = (_window_mean(part, a, "axis", column) for a in ("subsampled_gaussian", "em_pc", "svt_pc"))
        add("sg-worse-than-em_pc-and-svt_pc", network,
            None if any(math.isnan(v) for v in (sg, em, svt)) else sg < min(em, svt),
            f"SG {sg:.2f} vs EM-PC {em:.2f}, SVT-PC {svt:.2f}")
    return pd.DataFrame(rows, columns=_CELL_COLUMNS)


def table2_claims(timing: pd.DataFrame, *, column: str = "cpu_seconds") -> pd.DataFrame:
    """Per claim of Sec. 4.3 and network: whether it holds on our timings (median CPU seconds, same machine).

    ``column`` names the time measured (``cpu_seconds`` by the rules; wall-clock ``seconds`` moves with
    whatever else runs on the machine).

    >>> timing = pd.DataFrame({"network": ["x"] * 3, "algorithm": ["priv_pc", "priv_pc_nosub", "em_pc"],
    ...                        "cpu_seconds": [1.0, 2.0, 5.0]})
    >>> table2_claims(timing)["holds"].tolist()
    [True, True, True]
    """
    medians = timing.groupby(["network", "algorithm"], sort=False)[column].median().unstack()
    rows = []
    for network, row in medians.iterrows():
        for claim, slow, fast in (("priv_pc-faster-than-em_pc", "em_pc", "priv_pc"),
                                  ("subsampling-speeds-up-priv_pc", "priv_pc_nosub", "priv_pc"),
                                  ("online-queries-speed-up-priv_pc", "em_pc", "priv_pc_nosub"),
                                  ("priv_pc-sometimes-faster-than-svt_pc", "svt_pc", "priv_pc")):
            if slow in row and fast in row and not (math.isnan(row[slow]) or math.isnan(row[fast])):
                rows.append({"claim_id": f"priv_pc:sec4.3:{claim}", "cell": network,
                             "holds": bool(row[slow] > row[fast]),
                             "detail": f"{LABELS[slow]} {row[slow]:.3f} CPU s vs {LABELS[fast]} {row[fast]:.3f} CPU s "
                                       f"(x{row[slow] / row[fast]:.2f})"})
    return pd.DataFrame(rows, columns=_CELL_COLUMNS)


def sensitivity_claims(sizes: Sequence[int] = (10, 100, 1000)) -> pd.DataFrame:
    """App. D's sensitivity theorems checked on one computed neighbouring pair per n (the paper's relation: add one).

    D: n records on a decreasing line, (aᵢ, bᵢ) = (i, n − 1 − i); D′: D and the record (n, n), concordant with all
    of them. Thm. 6 states that Kendall's τ is 2/(n − 1)-sensitive; the pair moves τ-a by 4/(n + 1). Thm. 7 states
    that the conditional Kendall z-score Z = Σwᵢτᵢ/√Σwⱼ is c_τ/√(n − 1)-sensitive with
    c_τ = 27/(4√c₂) + 9/(2c₁√c₂), c₂ = 9c₁/(2(2c₁ + 5)) and c₁ the smallest stratum (here one stratum, c₁ = n, so
    c_τ → 9/2); the same pair moves Z by about 5.25/√n (the proof builds on Thm. 6's per-stratum bound). Both statistics are computed by :mod:`dpcd.ci` (the tests Priv-PC runs), not by a
    formula of ours. Returns the cells of :data:`CLAIM_RULES` (``claim_id, cell, holds, detail``).

    >>> cells = sensitivity_claims((10, 100))
    >>> cells.groupby("claim_id")["holds"].sum().to_dict()
    {'priv_pc:app-d:thm6-kendall-sensitivity': 0, 'priv_pc:app-d:thm7-conditional-kendall-sensitivity': 1}
    """
    from dpcd.ci.discrete import kendall_tau, kendall_tau_test

    rows = []
    for n in sizes:
        n = int(n)
        if n < 3:
            raise ValueError(f"sizes: every n must be at least 3, got {n}")
        a = np.arange(n)
        b = n - 1 - a
        data = np.column_stack([a, b])
        added = np.vstack([data, [n, n]])
        levels = np.array([n + 1, n + 1])
        tau_change = abs(kendall_tau(added[:, 0], added[:, 1], "a") - kendall_tau(a, b, "a"))
        z_change = abs(kendall_tau_test(added, 0, 1, levels=levels).statistic
                       - kendall_tau_test(data, 0, 1, levels=levels).statistic)
        c2 = 9.0 * n / (2.0 * (2.0 * n + 5.0))
        c_tau = 27.0 / (4.0 * math.sqrt(c2)) + 9.0 / (2.0 * n * math.sqrt(c2))
        for claim, change, bound, name in (
                ("thm6-kendall-sensitivity", tau_change, 2.0 / (n - 1), "|Δτ-a|"),
                ("thm7-conditional-kendall-sensitivity", z_change, c_tau / math.sqrt(n - 1), "|ΔZ|")):
            rows.append({"claim_id": f"priv_pc:app-d:{claim}", "cell": f"n = {n}",
                         "holds": bool(change <= bound + 1e-12),
                         "detail": f"{name} = {change:.4g} vs the theorem's {bound:.4g} (x{change / bound:.2f})"})
    return pd.DataFrame(rows, columns=_CELL_COLUMNS)


def spearman_after_insertion(b_ranks: np.ndarray) -> tuple[float, np.ndarray]:
    """Spearman's ρ of n tie-free records and of every data set made by adding one record.

    ``b_ranks[i]`` is the rank (0-based) of the second value of the record whose first value has rank i. Adding a
    record with ranks (r, s), r, s ∈ {0, …, n}, shifts the records at or above r (first column) and s (second) up
    by one; with eᵢ = i − b_ranks[i] its Σd² is Σeᵢ² + (n − r) + (n − s) + 2Σ_{i≥r}eᵢ − 2Σ_{b≥s}eᵢ
    − 2#{i ≥ r, b ≥ s} + (r − s)², so all (n + 1)² neighbours cost O(n²). Returns ρ(D) and the (n + 1, n + 1)
    array of ρ(D′) (ρ = 1 − 6Σd²/(m(m² − 1)) for m records).

    >>> rho, after = spearman_after_insertion(np.arange(4))
    >>> rho, float(after[4, 4]), round(float(after[4, 0]), 4)  # a concordant record, then the most discordant one
    (1.0, 1.0, 0.0)
    """
    b = np.asarray(b_ranks, dtype=np.int64)
    n = len(b)
    if n < 2 or sorted(b.tolist()) != list(range(n)):
        raise ValueError(f"b_ranks must be a permutation of 0..n-1 with n >= 2, got {b_ranks!r}")
    e = np.arange(n) - b
    m = n + 1
    positions = np.arange(n + 1)
    above_r = np.concatenate([np.cumsum(e[::-1])[::-1], [0]])  # Σ_{i ≥ r} e_i
    e_by_b = np.zeros(n, dtype=np.int64)
    e_by_b[b] = e
    above_s = np.concatenate([np.cumsum(e_by_b[::-1])[::-1], [0]])  # Σ_{b_i ≥ s} e_i
    grid = np.zeros((n + 1, n + 1), dtype=np.int64)
    grid[np.arange(n), b] = 1
    both = grid[::-1, ::-1].cumsum(axis=0).cumsum(axis=1)[::-1, ::-1]  # #{i ≥ r, b_i ≥ s}
    total = ((e * e).sum() + (n - positions)[:, None] + (n - positions)[None, :] + 2 * above_r[:, None]
             - 2 * above_s[None, :] - 2 * both + (positions[:, None] - positions[None, :]) ** 2)
    return float(1.0 - 6.0 * (e * e).sum() / (n * (n * n - 1))), 1.0 - 6.0 * total / (m * (m * m - 1))


def _spearman_bases(n: int) -> list[tuple[str, np.ndarray]]:
    """The data sets the searches start from: increasing, decreasing, a V, and three fixed random orders."""
    rng = np.random.default_rng(8)
    i = np.arange(n)
    v_shape = np.argsort(np.argsort(2 * np.abs(2 * i - (n - 1)) + (2 * i < n - 1), kind="stable"), kind="stable")
    return ([("an increasing line", np.arange(n)), ("a decreasing line", np.arange(n)[::-1].copy()),
             ("a V", v_shape)] + [(f"random order {k}", rng.permutation(n)) for k in range(3)])


def _with_record(b_ranks: np.ndarray, r: int, s: int, stratum: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Integer-coded (a, b, stratum) records of D and D′ = D plus the record at ranks (r, s), as dpcd.ci reads them."""
    n = len(b_ranks)
    a = np.arange(n)
    old = np.column_stack([a + (a >= r), b_ranks + (b_ranks >= s), np.full(n, stratum)])
    return old, np.vstack([old, [r, s, stratum]])


def spearman_sensitivity_claims(sizes: Sequence[int] = (10, 100, 1000)) -> pd.DataFrame:
    """App. E's Spearman theorems checked on the worst neighbouring pair a search finds (relation: add one record).

    Thm. 8 states that Spearman's ρ (Def. 7, |1 − 6Σd²/(n(n² − 1))|) is 30/n-sensitive when D′ adds one record to
    D; its proof bounds the change of each dᵢ² by an increase only, the step that fails in Thm. 6. Thm. 9 states
    that the conditional Z = Σwᵢρᵢ/√Σwⱼ (wᵢ = nᵢ − 1) is c_ρ√k/√(n − k)-sensitive, with c_ρ = 31 + 30/c₁ by the
    proof's last line (c₁ the smallest stratum). For each n, the search starts from six data sets of n tie-free
    records (:func:`_spearman_bases`) and adds a record at every rank position (:func:`spearman_after_insertion`,
    exact, all (n + 1)² neighbours); for Thm. 9 the n records are split into k strata of equal size, the other
    strata increasing or decreasing lines, and the record joins the first. The worst pair found is then computed
    by :mod:`dpcd.ci` (the tests a conditional-Spearman Priv-PC would run), not by the search's formula. A search
    can refute a theorem, never prove it: a cell that holds says "no pair found", with the share of the bound the
    worst pair reached. Returns cells of :data:`CLAIM_RULES` (``claim_id, cell, holds, detail``).

    >>> cells = spearman_sensitivity_claims((10,))
    >>> cells["cell"].tolist(), cells["holds"].tolist()
    (['n = 10', 'n = 10, k = 1', 'n = 10, k = 2'], [True, True, True])
    """
    from dpcd.ci.discrete import spearman_rho_test

    searched: dict[int, list[tuple[str, np.ndarray, float, np.ndarray]]] = {}

    def insertions(size: int) -> list[tuple[str, np.ndarray, float, np.ndarray]]:
        """Each base of ``size`` records with ρ before and after every insertion (computed once per size)."""
        if size not in searched:
            searched[size] = [(name, base, *spearman_after_insertion(base)) for name, base in _spearman_bases(size)]
        return searched[size]

    rows = []
    for n in sizes:
        n = int(n)
        if n < 6:
            raise ValueError(f"sizes: every n must be at least 6 (two strata of three), got {n}")
        worst = (-1.0, None)
        for name, base, rho, after in insertions(n):
            change = np.abs(np.abs(after) - abs(rho))
            r, s = np.unravel_index(int(np.argmax(change)), change.shape)
            if change[r, s] > worst[0]:
                worst = (float(change[r, s]), (name, base, int(r), int(s)))
        name, base, r, s = worst[1]
        old, new = _with_record(base, r, s)
        levels = np.array([n + 1, n + 1, 1])
        computed = abs(abs(spearman_rho_test(new, 0, 1, levels=levels).effect)
                       - abs(spearman_rho_test(old, 0, 1, levels=levels).effect))
        bound = 30.0 / n
        rows.append({"claim_id": "priv_pc:app-e:thm8-spearman-sensitivity", "cell": f"n = {n}",
                     "holds": bool(computed <= bound + 1e-12),
                     "detail": f"worst pair found: {name} of {n} records plus one at ranks ({r}, {s}); "
                               f"||Δρ|| = {computed:.4g} vs the theorem's {bound:.4g} (x{computed / bound:.2f})"})
        for k in (1, 2):
            size = n // k
            best = (-1.0, None)
            for name, base, rho, after in insertions(size):
                for sign in (1.0, -1.0):
                    other = (k - 1) * (size - 1) * sign  # the other strata: ρ = ±1 each, weight size − 1
                    total = k * (size - 1)
                    z_old = ((size - 1) * rho + other) / math.sqrt(total)
                    z_new = (size * after + other) / math.sqrt(total + 1)
                    change = np.abs(z_new - z_old)
                    r, s = np.unravel_index(int(np.argmax(change)), change.shape)
                    if change[r, s] > best[0]:
                        best = (float(change[r, s]), (name, base, int(r), int(s), sign))
            name, base, r, s, sign = best[1]
            old, new = _with_record(base, r, s)
            rest = [np.column_stack([np.arange(size), np.arange(size) if sign > 0 else np.arange(size)[::-1],
                                     np.full(size, j)]) for j in range(1, k)]
            old, new = np.vstack([old, *rest]), np.vstack([new, *rest])
            levels = np.array([size + 1, size + 1, k])
            z_change = abs(spearman_rho_test(new, 0, 1, [2], levels=levels).statistic
                           - spearman_rho_test(old, 0, 1, [2], levels=levels).statistic)
            c_rho = 31.0 + 30.0 / size
            bound = c_rho * math.sqrt(k) / math.sqrt(k * size - k)
            rows.append({"claim_id": "priv_pc:app-e:thm9-conditional-spearman-sensitivity",
                         "cell": f"n = {k * size}, k = {k}", "holds": bool(z_change <= bound + 1e-12),
                         "detail": f"worst pair found: {name} of {size} records in stratum 1 (the others "
                                   f"{'increasing' if sign > 0 else 'decreasing'}) plus one at ranks ({r}, {s}); "
                                   f"|ΔZ| = {z_change:.4g} vs the theorem's {bound:.4g} (x{z_change / bound:.2f})"})
    return pd.DataFrame(rows, columns=_CELL_COLUMNS)


def qualitative_rows(claims: pd.DataFrame, cells: pd.DataFrame, *, line: str,
                     diagnostic_cells: pd.DataFrame | None = None, diagnostic: str = "") -> pd.DataFrame:
    """:func:`dpcd_papers.reporting.qualitative_rows` for this paper's claims under :data:`CLAIM_RULES`."""
    from .reporting import qualitative_rows as judged

    return judged("priv_pc", claims, cells, line=line, rules=CLAIM_RULES, diagnostic_cells=diagnostic_cells,
                  diagnostic=diagnostic)

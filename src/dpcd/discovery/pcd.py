"""PCD: differentially private nonlinear causal discovery (Zhang et al. 2023, Alg. 1).

The PC engine (:func:`dpcd.discovery.pc.run_pc`) with the PCD decider. For each
CI test the decider computes the RCIT permutation p-value ``p`` (or the
conditional Kendall's τ p-value for the baseline) and its sensitivity Δ_P, then

* p > α: if p − Δ_P > α the edge is removed without noise (lines 4–5, 11);
  otherwise ε is charged and the edge is removed when
  ``p + Lap(4Δ_P/ε) ≥ α + Lap(2Δ_P/ε)`` (lines 6–9);
* p ≤ α: if p + Δ_P < α the edge is kept without noise (lines 12–14);
  otherwise ε is charged and the same noisy comparison decides (lines 15–17).

Δ_P for RCIT is the one-sided bound after Cor. 1 (B − p if p ≤ α, p − A if
p > α; :func:`dpcd.rcit.permutation_sensitivity`); for Kendall's τ it is the
p-value sensitivity of :func:`dpcd.rcit.kendall_pvalue_sensitivity`.
Orientation is PC's (colliders, then Meek's rules). ``epsilon=inf`` decides
``p > α`` directly: exactly the non-private PC engine with the same test.

Privacy, stated plainly
-----------------------
Neighbouring relation: replace one record (m public). The paper's Thm. 5 claims
ε-DP per noisy comparison by the sparse vector technique, but **Δ_P is a local
sensitivity** — A, B, p and Δ_R are computed from the private data — and the
choice whether to add noise at all (|p − α| > Δ_P) is itself a data-dependent,
noiseless branch. Calibrating noise to a local sensitivity does not by itself
give ε-differential privacy (Nissim, Raskhodnikova & Smith 2007). The ledger
records the paper's accounting (ε per noisy comparison, basic composition over
the noisy comparisons), labelled as such; it is not a proven guarantee.

References
----------
Zhang, H., Xia, Y., Ren, Y., Guan, J., Zhou, S. (2023). Differentially private
nonlinear causal discovery from numerical data. AAAI. (Alg. 1, Thm. 4–5, Cor. 1.)
Dwork, C., Roth, A. (2014). The algorithmic foundations of differential privacy
(sparse vector technique, Alg. 1 AboveThreshold).
Nissim, K., Raskhodnikova, S., Smith, A. (2007). Smooth sensitivity and sampling in
private data analysis. STOC.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence

import networkx as nx
import numpy as np
import pandas as pd

from .._validation import RngLike, as_data_matrix, as_rng, check_epsilon, check_int, check_probability
from ..citests import CITester
from ..graphs import cpdag_pair_prf, skeleton_prf
from ..privacy import PrivacyLedger
from ..privacy.relation import REPLACE_ONE
from ..rcit import RCITTester, kendall_ci_test, kendall_pvalue_sensitivity, permutation_sensitivity
from .pc import Decider, PCResult, node_names_of, run_pc

__all__ = [
    "CI_TESTS",
    "PCDDecider",
    "ci_error_cell",
    "RELATION",
    "DIFFERENTIALLY_PRIVATE",
    "discovery_cell",
    "network_cell",
    "sachs_cell",
    "make_tester",
    "pcd",
    "pcd_decision",
    "sample_ci_case",
]

CI_TESTS = ("rcit", "rcit_c1", "kendall")
PAPER_EPSILONS = (0.1, 0.2, 0.4, 0.8, 1.0, 2.0, 4.0, 8.0, math.inf)
LEDGER_NOTE = ("paper's accounting (Zhang et al. 2023, Thm. 5): noise calibrated to the LOCAL sensitivity "
               "Delta_P, so not a proven epsilon-DP guarantee")


def pcd_decision(p_value: float, sensitivity: float, *, alpha: float, epsilon: float,
                 rng: np.random.Generator) -> tuple[bool, bool]:
    """One decision of Alg. 1: ``(independent, noise_used)``.

    ``sensitivity`` is Δ_P. ``epsilon=inf`` returns ``(p > α, False)``.
    """
    if math.isinf(epsilon):
        return p_value > alpha, False
    if p_value > alpha:
        if p_value - sensitivity > alpha:
            return True, False
    elif p_value + sensitivity < alpha:
        return False, False
    scale = sensitivity / epsilon
    noisy_p = p_value + (rng.laplace(0.0, 4.0 * scale) if scale > 0 else 0.0)
    noisy_alpha = alpha + (rng.laplace(0.0, 2.0 * scale) if scale > 0 else 0.0)
    return bool(noisy_p >= noisy_alpha), True


def make_tester(data, ci_test: str, *, rng: RngLike, n_permutations: int = 100, lam: float = 1.0):
    """The memoised CI tester of ``ci_test`` on numeric ``data``.

    "rcit": RCIT with λ = ``lam`` in Eq. 2, i.e. a ridge term c = mλ/2 (m/2 at
    the paper's λ = 1). "rcit_c1": RCIT with ridge term c = 1 (λ = 2/m), the
    scikit-learn ``KernelRidge(alpha=1)`` reading of "λ = 1", used to test
    whether the paper meant that. "kendall": the conditional Kendall's τ baseline.
    """
    if ci_test == "rcit":
        return RCITTester(data, rng=rng, n_permutations=n_permutations, lam=lam)
    if ci_test == "rcit_c1":
        return RCITTester(data, rng=rng, n_permutations=n_permutations, lam=2.0 / np.shape(data)[0])
    if ci_test == "kendall":
        return CITester(as_data_matrix(data, kind="numeric"), kendall_ci_test)
    raise ValueError(f"ci_test must be one of {CI_TESTS}, got {ci_test!r}")


class PCDDecider(Decider):
    """The per-test decision of Alg. 1 on a memoised tester (RCIT or Kendall's τ).

    Counts the noisy comparisons (``n_noisy``) and the direct ones
    (``n_direct``); :meth:`ledger` records ε per noisy comparison. The tester
    may be shared between runs with different ε on the same data (its tests
    do not depend on ε); the Laplace draws come from this decider's ``rng``.
    """

    def __init__(self, tester, *, epsilon: float, alpha: float, rng: RngLike):
        self.tester = tester
        self.epsilon = check_epsilon(epsilon, allow_inf=True)
        self.alpha = check_probability(alpha, "alpha")
        self.rng = as_rng(rng)
        self.kind = "rcit" if isinstance(tester, RCITTester) else "kendall"
        self.n_noisy = 0
        self.n_direct = 0

    def p_and_sensitivity(self, x: int, y: int, S: tuple[int, ...]) -> tuple[float, float]:
        if self.kind == "rcit":
            result = self.tester.result(x, y, S)
            return result.p_value, permutation_sensitivity(result, alpha=self.alpha)
        result = self.tester(x, y, S)
        n, k = self.tester.n_rows, int(result.dof or 1)
        sensitivity = kendall_pvalue_sensitivity(n, k) if n - 1 > k else 0.0  # no usable stratum: no data used
        return result.p_value, sensitivity

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        if math.isinf(self.epsilon):
            self.n_direct += 1
            return self.tester(x, y, S).p_value > self.alpha
        p_value, sensitivity = self.p_and_sensitivity(x, y, S)
        independent, noisy = pcd_decision(p_value, sensitivity, alpha=self.alpha, epsilon=self.epsilon,
                                          rng=self.rng)
        if noisy:
            self.n_noisy += 1
        else:
            self.n_direct += 1
        return independent

    def ledger(self) -> PrivacyLedger:
        ledger = PrivacyLedger(neighbouring="replace", public=("m (number of records)", "variable names"))
        if self.n_noisy and not math.isinf(self.epsilon):
            ledger.charge("PCD noisy comparison p + Lap(4 Delta_P/eps) >= alpha + Lap(2 Delta_P/eps)",
                          epsilon=self.epsilon, count=self.n_noisy, kind="pure", note=LEDGER_NOTE)
        return ledger


RELATION = REPLACE_ONE
"""The relation of the paper's accounting (replace one record, m public); not a proven guarantee."""
DIFFERENTIALLY_PRIVATE = False
"""PCD calibrates noise to a local sensitivity: no data-independent plan bounds its privacy loss."""


def pcd(data, *, epsilon_per_test: float, alpha: float = 0.05, ci_test: Literal["rcit", "kendall"] = "rcit",
        rng: RngLike, n_permutations: int = 100, lam: float = 1.0, max_order: int | None = None,
        node_names: Sequence[str] | None = None) -> PCResult:
    """PCD (Zhang et al. 2023, Alg. 1) on numeric ``data``: a CPDAG and its ledger.

    Parameters
    ----------
    data : numeric array or DataFrame (rows × variables).
    epsilon_per_test : ε of each noisy comparison (``math.inf`` = non-private PC with the same test).
    alpha : significance level (edge removed when p > α).
    ci_test : "rcit" (KRR + HSIC, k = ``n_permutations``, λ = ``lam``) or
        "kendall" (conditional Kendall's τ baseline).
    rng : Generator or seed (permutations and Laplace noise).

    Privacy: replace-one-record neighbours, m public; ε is charged once per
    noisy comparison and the ledger's basic-composition total is the paper's
    accounting. Δ_P is a **local** sensitivity, so this is *not* a proven
    ε-DP guarantee (see the module docstring).
    """
    epsilon = check_epsilon(epsilon_per_test, "epsilon_per_test", allow_inf=True)
    alpha = check_probability(alpha, "alpha")
    if ci_test not in CI_TESTS:
        raise ValueError(f"ci_test must be one of {CI_TESTS}, got {ci_test!r}")
    names = node_names_of(data, node_names)
    rng = as_rng(rng)
    test_rng, noise_rng = rng.spawn(2)
    tester = make_tester(data, ci_test, rng=test_rng, n_permutations=n_permutations, lam=lam)
    decider = PCDDecider(tester, epsilon=epsilon, alpha=alpha, rng=noise_rng)
    result = run_pc(names, decider, max_order=max_order)
    info = {"ci_test": ci_test, "alpha": alpha, "epsilon_per_test": epsilon, "n_noisy": decider.n_noisy,
            "n_direct": decider.n_direct, "n_computed": tester.n_computed,
            "privacy": "local-sensitivity calibration (paper's accounting, not a proven guarantee)"}
    return _with(result, ledger=decider.ledger(), info=info)


def _with(result: PCResult, **changes) -> PCResult:
    from dataclasses import replace
    return replace(result, **changes)


# ---------------------------------------------------------------------------
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
                  alpha: float = 0.05, n_permutations: int = 100) -> list[dict]:
    """One repetition of Fig. 1: error indicators of the private test for every ε.

    ``case`` = "ci" (type I: X ⫫ Y | Z; type II: X ⫫ Y | Z₁..Z₄) or
    "independence" (type I: Z₁ ⫫ Z₂; type II: X ⫫ Y). The test is computed
    once per data set and decided by :func:`pcd_decision` for every ε.
    """
    if case not in CI_CASES:
        raise ValueError(f"case must be one of {sorted(CI_CASES)}, got {case!r}")
    rng = as_rng(rng)
    data_rng, test_rng, noise_rng = rng.spawn(3)
    data = sample_ci_case(n, data_rng)
    tester = make_tester(data, ci_test, rng=test_rng, n_permutations=n_permutations)
    rows = []
    for error, x, y, S, null_true in CI_CASES[case]:
        decider = PCDDecider(tester, epsilon=math.inf, alpha=alpha, rng=noise_rng)
        p_value, sensitivity = decider.p_and_sensitivity(x, y, S)
        for epsilon in epsilons:
            independent, noisy = pcd_decision(p_value, sensitivity, alpha=alpha, epsilon=float(epsilon),
                                              rng=noise_rng)
            wrong = (not independent) if null_true else independent
            rows.append({"error": error, "epsilon": float(epsilon), "wrong": float(wrong), "noisy": noisy,
                         "p_value": p_value, "sensitivity": sensitivity})
    return rows


def _metrics(cpdag: nx.DiGraph, truth: nx.DiGraph, *, directed_truth: bool = True) -> dict:
    skel = skeleton_prf(cpdag, truth)
    out = {"precision": skel["precision"], "recall": skel["recall"], "f1": skel["f1"]}
    if directed_truth:
        pair = cpdag_pair_prf(cpdag, truth)
        out.update({"pair_precision": pair["precision"], "pair_recall": pair["recall"], "pair_f1": pair["f1"]})
    return out


def discovery_cell(*, data, truth: nx.DiGraph, ci_test: str, rng: RngLike,
                   epsilons: Sequence[float] = PAPER_EPSILONS, alpha: float = 0.05, n_permutations: int = 100,
                   max_order: int | None = None, pair_metrics: bool = True) -> list[dict]:
    """PCD on one data set for every ε, sharing the memoised tests: skeleton precision/recall/F1.

    ``data`` is a DataFrame whose columns are the nodes of ``truth``. With
    ``pair_metrics`` the CPDAG edge-pair precision/recall/F1 are added
    (``pair_*``; skip for a cyclic consensus graph such as Sachs').
    """
    rng = as_rng(rng)
    test_rng, noise_rng = rng.spawn(2)
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    names = [str(c) for c in frame.columns]
    tester = make_tester(frame.to_numpy(dtype=np.float64), ci_test, rng=test_rng, n_permutations=n_permutations)
    truth = nx.relabel_nodes(truth, {v: str(v) for v in truth.nodes})
    rows = []
    for epsilon in epsilons:
        decider = PCDDecider(tester, epsilon=float(epsilon), alpha=alpha, rng=noise_rng)
        result = run_pc(names, decider, max_order=max_order)
        row = {"epsilon": float(epsilon), "n_noisy": decider.n_noisy, "n_tests": result.n_tests,
               "epsilon_total": decider.ledger().total().epsilon if decider.n_noisy else 0.0}
        row.update(_metrics(result.cpdag, truth, directed_truth=pair_metrics))
        rows.append(row)
    return rows


def network_cell(*, network: str, n: int, ci_test: str, rng: RngLike, epsilons: Sequence[float] = PAPER_EPSILONS,
                 alpha: float = 0.05, n_permutations: int = 100, max_order: int | None = None) -> list[dict]:
    """One repetition of Fig. 2: nonlinear-SEM data on a bnlearn structure, PCD for every ε.

    Data from :func:`dpcd.datasets.sample_nonlinear` (the paper's generator);
    metrics against the true DAG's skeleton (and CPDAG edge pairs).
    """
    from ..datasets import bnlearn_dag, sample_nonlinear
    from ..graphs import dag_to_cpdag

    rng = as_rng(rng)
    data_rng, run_rng = rng.spawn(2)
    dag = bnlearn_dag(network)
    dataset = sample_nonlinear(dag, n, data_rng)
    return discovery_cell(data=dataset.data, truth=dag_to_cpdag(dag), ci_test=ci_test, rng=run_rng,
                          epsilons=epsilons, alpha=alpha, n_permutations=n_permutations, max_order=max_order)


def sachs_cell(*, n: int | None, ci_test: str, rng: RngLike, epsilons: Sequence[float] = PAPER_EPSILONS,
               alpha: float = 0.05, n_permutations: int = 100, max_order: int | None = None) -> list[dict]:
    """One repetition of Fig. 3 on the Sachs flow-cytometry data (``n`` rows drawn without replacement; None = all).

    The consensus graph has a directed cycle, so only skeleton precision/recall/F1 are reported.
    """
    from ..realdata import load_sachs

    rng = as_rng(rng)
    data_rng, run_rng = rng.spawn(2)
    dataset = load_sachs()
    frame = dataset.data
    if n is not None and n < len(frame):
        frame = frame.iloc[np.sort(data_rng.choice(len(frame), size=n, replace=False))].reset_index(drop=True)
    return discovery_cell(data=frame, truth=dataset.dag, ci_test=ci_test, rng=run_rng, epsilons=epsilons,
                          alpha=alpha, n_permutations=n_permutations, max_order=max_order, pair_metrics=False)

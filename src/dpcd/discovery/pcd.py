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
p > α; :func:`dpcd.ci.rcit.permutation_sensitivity`); for Kendall's τ it is the
p-value sensitivity of :func:`dpcd.privacy.sensitivity.two_sided_kendall_pvalue_sensitivity`
(capped at 1, also when no stratum of S holds two rows).
Orientation is PC's (colliders, then Meek's rules). ``epsilon=inf`` decides
``p > α`` directly: exactly the non-private PC engine with the same test.

Continuous conditioning sets (Kendall baseline)
-----------------------------------------------
The conditional Kendall's τ stratifies the rows by the values of S; on a
continuous column every stratum holds one row and the test has nothing to
use. The paper "directly treats all cases as being not conditional
independent". Which columns are continuous is **public**, declared by the user
(``continuous``), never read from the values: a test whose S holds a declared
column is answered "dependent" without reading the data, and a test on
undeclared columns is computed and, when no stratum holds two rows, decided
with noise at Δ_P = 1. (Deciding from the data whether a column has ties —
"no usable stratum, so Δ_P = 0" — would let one record switch a test between
a noiseless "dependent" and a noiseless "independent": an unbounded loss.)

Privacy, stated plainly
-----------------------
Neighbouring relation: replace one record (m public). The paper's Thm. 5 claims
ε-DP per noisy comparison by the sparse vector technique, but **Δ_P is a local
sensitivity** — A, B, p and Δ_R (RCIT) and the number of strata of S (Kendall)
are computed from the private data — and the choice whether to add noise at
all (|p − α| > Δ_P) is itself a data-dependent, noiseless branch. Calibrating noise to a local sensitivity does not by itself
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

Examples
--------
>>> PCD.name, PCD.relation.name, PCD.budget_arg, PCD.proof
('pcd', 'replace', 'epsilon_per_test', 'not DP')
>>> PCD.differentially_private
False
>>> PCD.privacy_map(epsilon_per_test=0.1)
Traceback (most recent call last):
...
ValueError: PCD calibrates its noise to a local sensitivity: it has no data-independent privacy plan
"""

from __future__ import annotations

import math
from typing import Literal, Sequence

import numpy as np

from ..ci.rcit import KendallTester, RCITTester, permutation_sensitivity
from ..privacy import PrivacyLedger, laplace_noise
from ..privacy.relation import REPLACE_ONE, WorstCase
from ..privacy.sensitivity import two_sided_kendall_pvalue_sensitivity
from ..validation import (
    RngLike,
    as_rng,
    check_epsilon,
    check_probability,
)
from .algorithm import PrivateAlgorithm
from .pc import Decider, PCResult, node_names_of, run_pc

__all__ = [
    "PCD",
    "CI_TESTS",
    "PCDDecider",
    "RELATION",
    "declared_continuous",
    "make_tester",
    "pcd",
    "pcd_decision",
]

CI_TESTS = ("rcit", "rcit_c1", "kendall")
"""PCD's CI tests. "kendall" is the same stratified Kendall's τ as :data:`dpcd.ci.TESTS`'s, on numeric columns, with
the PCD paper's rule for a conditioning set without a usable stratum (p = 0: dependent)."""
LEDGER_NOTE = ("paper's accounting (Zhang et al. 2023, Thm. 5): noise calibrated to the LOCAL sensitivity "
               "Delta_P, so not a proven epsilon-DP guarantee")


def pcd_decision(p_value: float, sensitivity: float, *, alpha: float, epsilon: float,
                 rng: np.random.Generator) -> tuple[bool, bool]:
    """One decision of Alg. 1: ``(independent, noise_used)``.

    ``sensitivity`` is Δ_P. As in Alg. 1 (lines 4–17): p > α with p − Δ_P > α
    is "independent" and p ≤ α with p + Δ_P < α "dependent", both without
    noise or charge; every other case is the noisy comparison
    ``p + Lap(4Δ_P/ε) ≥ α + Lap(2Δ_P/ε)``, charged ε — with Δ_P = 0 that is
    ``p ≥ α`` (so p = α is "independent"), still charged, and draws no noise.
    ``epsilon=inf`` returns ``(p > α, False)``: the non-private PC rule.

    >>> rng = np.random.default_rng(0)
    >>> pcd_decision(0.0, 0.0, alpha=0.05, epsilon=1.0, rng=rng)
    (False, False)
    >>> pcd_decision(0.05, 0.0, alpha=0.05, epsilon=1.0, rng=rng)
    (True, True)
    """
    if math.isinf(epsilon):
        return p_value > alpha, False
    if p_value > alpha:
        if p_value - sensitivity > alpha:
            return True, False
    elif p_value + sensitivity < alpha:
        return False, False
    scale = sensitivity / epsilon
    noisy_p = p_value + (laplace_noise(4.0 * scale, rng=rng) if scale > 0 else 0.0)
    noisy_alpha = alpha + (laplace_noise(2.0 * scale, rng=rng) if scale > 0 else 0.0)
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
        return KendallTester(data)
    raise ValueError(f"ci_test must be one of {CI_TESTS}, got {ci_test!r}")


_UNDECLARED = ("ci_test='kendall' needs continuous= (True, False or one flag per column): which columns are "
               "continuous is public, declared by you and never read from the data; a conditional test given an "
               "undeclared tie-free column has no usable stratum and is a coin flip")


def declared_continuous(continuous: bool | Sequence[bool], n_vars: int) -> np.ndarray:
    """The public declaration ``continuous`` as one flag per column (True/False: every column or none).

    >>> declared_continuous(True, 3).tolist()
    [True, True, True]
    >>> declared_continuous([False, True], 2).tolist()
    [False, True]
    """
    if isinstance(continuous, (bool, np.bool_)):
        return np.full(n_vars, bool(continuous))
    flags = np.asarray(continuous)
    if flags.shape != (n_vars,) or flags.dtype != bool:
        raise ValueError(f"continuous must be True, False or {n_vars} booleans (one per column, public), "
                         f"got {continuous!r}")
    return flags.copy()


class PCDDecider(Decider):
    """The per-test decision of Alg. 1 on a memoised tester (RCIT or Kendall's τ).

    Counts the noisy comparisons (``n_noisy``) and the direct ones
    (``n_direct``); :meth:`ledger` records ε per noisy comparison. The tester
    may be shared between runs with different ε on the same data (its tests
    do not depend on ε); the Laplace draws come from this decider's ``rng``.
    ``continuous`` (public; Kendall only, where it must be given) declares the
    continuous columns: a test whose S holds one is "dependent" without
    reading the data (see the module docstring).
    """

    def __init__(self, tester, *, epsilon: float, alpha: float, rng: RngLike,
                 continuous: bool | Sequence[bool] | None = None):
        self.tester = tester
        self.epsilon = check_epsilon(epsilon, allow_inf=True)
        self.alpha = check_probability(alpha, "alpha")
        self.rng = as_rng(rng)
        self.kind = "rcit" if isinstance(tester, RCITTester) else "kendall"
        if continuous is None:
            if self.kind == "kendall":
                raise ValueError(_UNDECLARED)
            continuous = False
        self.continuous = declared_continuous(continuous, tester.n_vars)
        self.n_noisy = 0
        self.n_direct = 0

    def declared_dependent(self, S: tuple[int, ...]) -> bool:
        """True when the Kendall test given ``S`` is "dependent" by the public declaration (S holds a continuous column)."""
        return self.kind == "kendall" and bool(self.continuous[list(S)].any())

    def p_and_sensitivity(self, x: int, y: int, S: tuple[int, ...]) -> tuple[float, float]:
        """p and Δ_P of one test; ``(0.0, 0.0)`` (dependent, no noise, no data read) when :meth:`declared_dependent`."""
        if self.kind == "rcit":
            result = self.tester.result(x, y, S)
            return result.p_value, permutation_sensitivity(result, alpha=self.alpha)
        if self.declared_dependent(S):
            return 0.0, 0.0
        result = self.tester(x, y, S)
        return result.p_value, two_sided_kendall_pvalue_sensitivity(self.tester.n_rows, int(result.dof or 1))

    def dependent_for_all(self, x: int, y: int, candidates: np.ndarray, order: int) -> bool:
        """Settle every Kendall test of (x, y) given S ⊆ ``candidates``, |S| = ``order`` ≥ 1, in bulk when certain.

        When fewer than ``order`` candidates are undeclared (not in the public
        ``continuous``), every such S holds a declared continuous column: the
        C(len(candidates), order) decisions are all "dependent", direct and
        draw no noise, so they are counted here (``n_direct``) and the engine
        skips them — the same graph, counts and random stream as asking each
        one. Nothing here reads the data. Subclasses that change
        :meth:`p_and_sensitivity` must keep ``(0.0, 0.0)`` for declared tests or override this method.
        """
        if order < 1 or self.kind != "kendall":
            return False
        if np.count_nonzero(~self.continuous[np.asarray(candidates, dtype=np.intp)]) >= order:
            return False
        self.n_direct += math.comb(len(candidates), order)
        return True

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        if math.isinf(self.epsilon):
            self.n_direct += 1
            return not self.declared_dependent(S) and self.tester(x, y, S).p_value > self.alpha
        p_value, sensitivity = self.p_and_sensitivity(x, y, S)
        independent, noisy = pcd_decision(p_value, sensitivity, alpha=self.alpha, epsilon=self.epsilon,
                                          rng=self.rng)
        if noisy:
            self.n_noisy += 1
        else:
            self.n_direct += 1
        return independent

    def ledger(self) -> PrivacyLedger:
        public = ("m (number of records)", "variable names")
        if self.kind == "kendall":
            public += ("which columns are continuous",)
        ledger = PrivacyLedger(relation="replace", public=public)
        if self.n_noisy and not math.isinf(self.epsilon):
            ledger.charge("PCD noisy comparison p + Lap(4 Delta_P/eps) >= alpha + Lap(2 Delta_P/eps)",
                          epsilon=self.epsilon, count=self.n_noisy, kind="pure", note=LEDGER_NOTE)
        return ledger


RELATION = REPLACE_ONE
"""The relation of the paper's accounting (replace one record, m public); not a proven guarantee."""


def pcd(data, *, epsilon_per_test: float, alpha: float = 0.05, ci_test: Literal["rcit", "kendall"] = "rcit",
        rng: RngLike, n_permutations: int = 100, lam: float = 1.0, max_order: int | None = None,
        node_names: Sequence[str] | None = None, continuous: bool | Sequence[bool] | None = None,
        max_tests: int | None = None) -> PCResult:
    """PCD (Zhang et al. 2023, Alg. 1) on numeric ``data``: a CPDAG and its ledger.

    Parameters
    ----------
    data : numeric array or DataFrame (rows × variables).
    epsilon_per_test : ε of each noisy comparison (``math.inf`` = non-private PC with the same test).
    alpha : significance level (edge removed when p > α).
    ci_test : "rcit" (KRR + HSIC, k = ``n_permutations``, λ = ``lam``) or
        "kendall" (conditional Kendall's τ baseline).
    rng : Generator or seed (permutations and Laplace noise).
    max_order, max_tests : as in :func:`dpcd.discovery.pc.pc`.
    continuous : public declaration of the continuous columns (True: all,
        False: none, or one flag per column), required by "kendall" and
        ignored by RCIT: a test conditioning on a declared column is
        "dependent" without reading the data (the paper's rule). Undeclared
        columns are always tested — on tie-free values each conditional test
        then has no usable stratum and is a noisy coin flip (Δ_P = 1) — and
        whether a column has ties is never read from the data.

    Privacy: replace-one-record neighbours, m and ``continuous`` public; ε is charged once per
    noisy comparison and the ledger's basic-composition total is the paper's
    accounting. Δ_P is a **local** sensitivity, so this is *not* a proven
    ε-DP guarantee (see the module docstring).

    Examples
    --------
    >>> from dpcd.datasets import random_dag, sample_nonlinear
    >>> data = sample_nonlinear(random_dag(3, 0.7, 0), 300, 1).data
    >>> result = pcd(data, epsilon_per_test=1.0, ci_test="kendall", rng=2, continuous=True)
    >>> result.info["privacy"].startswith("local-sensitivity")
    True
    >>> "which columns are continuous" in result.ledger.public
    True
    """
    epsilon = check_epsilon(epsilon_per_test, "epsilon_per_test", allow_inf=True)
    alpha = check_probability(alpha, "alpha")
    if ci_test not in CI_TESTS:
        raise ValueError(f"ci_test must be one of {CI_TESTS}, got {ci_test!r}")
    names = node_names_of(data, node_names)
    rng = as_rng(rng)
    test_rng, noise_rng = rng.spawn(2)
    tester = make_tester(data, ci_test, rng=test_rng, n_permutations=n_permutations, lam=lam)
    decider = PCDDecider(tester, epsilon=epsilon, alpha=alpha, rng=noise_rng, continuous=continuous)
    result = run_pc(names, decider, max_order=max_order, max_tests=max_tests)
    info = {"algorithm": "pcd", "ci_test": ci_test, "alpha": alpha, "epsilon_per_test": epsilon,
            "n_noisy": decider.n_noisy, "n_direct": decider.n_direct, "n_computed": tester.n_computed,
            "continuous": [name for name, flag in zip(names, decider.continuous) if flag],
            "privacy": "local-sensitivity calibration (paper's accounting, not a proven guarantee)"}
    return _with(result, ledger=decider.ledger(), info=info)


def _with(result: PCResult, **changes) -> PCResult:
    from dataclasses import replace
    return replace(result, **changes)


def _no_worst_case(**parameters) -> WorstCase:
    raise ValueError("PCD calibrates its noise to a local sensitivity: it has no data-independent privacy plan")


PCD = PrivateAlgorithm(
    name="pcd", label="PCD", data="numeric", relation=RELATION, public=("m", "which columns are continuous"),
    budget="per_test", budget_arg="epsilon_per_test", run=pcd, privacy_map=_no_worst_case, proof="not DP",
    theorem="Zhang et al. 2023 (local sensitivity: no DP guarantee)", extra={"ci_test": "kendall", "continuous": True})
"""PCD as a :class:`~dpcd.discovery.algorithm.PrivateAlgorithm` (``proof="not DP"``: ``discover`` refuses it)."""

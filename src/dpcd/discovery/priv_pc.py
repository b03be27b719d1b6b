"""Priv-PC (Wang, Pang & Song 2020, Alg. 2): the PC engine with sieve-and-examine decisions.

Every CI test of the PC skeleton search is a query of one
:class:`dpcd.privacy.sieve.SieveAndExamine` stream: the conditional Kendall's
τ test is first run on a sub-sample of m rows (the *sieve*); only a test
whose noisy p-value reaches α − t there is run on the full data (the
*examine*), and the edge is removed when its noisy p-value reaches α. Each
examined test costs ε (the paper's per-test privacy parameter); tests that
fail the sieve are free, except for the last open sieve (ε/2).

What is thresholded
-------------------
The query is the one-sided p-value p = 1 − Φ(|Z|) of the conditional Kendall
z-score Z = Σwᵢτᵢ/√Σwⱼ (τ-a, no-ties null variance, App. D Def. 6) — half
the two-sided p-value — as in the authors' public code, so their threshold
T = 0.10 (``alpha=0.20``: dpcd's ``alpha`` is always the two-sided level) and
t = 0.02 keep their meaning. Its sensitivity is Φ(Δ_Z) − ½
(:func:`dpcd.privacy.sensitivity.pvalue_sensitivity`) with:

* by default: Δ_Z from
  :func:`dpcd.privacy.sensitivity.conditional_kendall_sensitivity` under
  replace-one with no assumption on the strata, at the largest number of
  strata k any test of the run can have (product of the ``max_order``
  largest domain sizes);
* ``unproven={"sensitivity": "reference"}``: Δ_Z = 6/√n, the authors' code. It is a valid replace-one
  bound for unconditional tests (√w ≤ 1.5√n and Δτ = 4/n) but not proven for
  conditional ones; use it to reproduce the paper (the ledger marks such a run not DP).

Privacy guarantee
-----------------
Neighbouring relation: replace one record; public: n and the variables'
domains. Every round (one examined test) is ε-DP (Thm 1); the run is the
adaptive composition of the rounds plus the open sieve. The guarantee of a
run is :func:`worst_case`'s: that composition over the largest number of
rounds any run can examine. The returned ledger holds the charges of the
rounds this run examined; ``info["epsilon_advanced"]`` is its
advanced-composition total at δ' = δ (the paper's accounting, capped by basic
composition) and ``info["epsilon_tight"]`` the PLD accountant's at δ — what
this run spent, at most the worst case, and not a guarantee by itself (how many
rounds a run examines depends on the data).

References
----------
.. [WPS20] L. Wang, Q. Pang, D. Song. Towards practical differentially private
   causal graph discovery. NeurIPS 2020.
.. [BBG18] B. Balle, G. Barthe, M. Gaboardi. Privacy amplification by subsampling. NeurIPS 2018.

Examples
--------
>>> PRIV_PC.name, PRIV_PC.relation.name, PRIV_PC.budget_arg, PRIV_PC.differentially_private
('priv_pc', 'replace', 'epsilon_per_test', True)
>>> PRIV_PC.privacy_map(epsilon_per_test=0.01, delta=1e-6, p=4, n=1000, max_order=1).epsilon < 1
True
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Sequence

from ..privacy.ledger import PrivacyLedger
from ..privacy.relation import WorstCase
from ..privacy.sensitivity import one_sided_kendall_pvalue_sensitivity
from ..privacy.sieve import SieveAndExamine, optimal_subsample_size
from ..validation import (
    RngLike,
    as_rng,
    check_delta,
    check_epsilon,
    check_int,
    check_probability,
)
from .algorithm import PrivateAlgorithm
from .kendall_family import (
    PUBLIC,
    RELATION,
    KendallPValueQuery,
    kendall_ledger,
    kendall_run_setup,
    privacy_totals,
    reference_max_order,
)
from .pc import Decider, PCResult, run_pc, worst_case_tests

__all__ = [
    "PRIV_PC",
    "priv_pc",
    "worst_case",
    "RELATION",
    "PUBLIC",
    "KendallPValueQuery",
    "SieveKendallDecider",
    "reference_max_order",
    "privacy_totals",
    "kendall_run_setup",
]


class SieveKendallDecider(Decider):
    """Per-test decider: independent when sieve-and-examine says the p-value is above α."""

    def __init__(self, query: KendallPValueQuery, mechanism: SieveAndExamine):
        self.query = query
        self.mechanism = mechanism

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        return self.mechanism.query(lambda rows: self.query.on_rows(rows)(x, y, S),
                                    lambda: self.query(x, y, S))


def _examined_worst_case(name: str, rounds: int, epsilon_per_test: float, delta: float, theorem: str,
                         parameters: dict) -> WorstCase:
    """Plan of a sieve-and-examine run of at most ``rounds`` examined tests (ε/2 sieve + ε/2 examine) plus
    one open sieve (ε/2), composed by the tight PLD accountant at ``delta``."""
    ledger = PrivacyLedger("replace", public=PUBLIC)
    ledger.charge("sieve", epsilon=epsilon_per_test / 2.0, count=rounds, kind="pure")
    ledger.charge("examine", epsilon=epsilon_per_test / 2.0, count=rounds, kind="laplace")
    ledger.charge("sieve (open)", epsilon=epsilon_per_test / 2.0, kind="pure")
    totals = privacy_totals(ledger, delta)
    return WorstCase(name, RELATION, totals["epsilon_tight"], delta, PUBLIC, theorem, "tight", ledger,
                     {**parameters, "rounds": rounds})


def worst_case(*, epsilon_per_test: float, delta: float, p: int, n: int, max_order: int | None = None) -> WorstCase:
    """The data-independent guarantee of any :func:`priv_pc` run on ``p`` variables and ``n`` (public) rows.

    Every examined test is one round (ε-DP, [WPS20, Thm 1]); a run examines at
    most :func:`~dpcd.discovery.pc.worst_case_tests` tests up to ``max_order``
    (default: the authors' cap, a function of the public n and p) and charges
    one more open sieve. The worst case is composed by the tight accountant at δ.

    >>> round(worst_case(epsilon_per_test=0.01, delta=1e-6, p=4, n=1000).epsilon, 3) < 0.01 * 36
    True
    """
    epsilon_per_test = check_epsilon(epsilon_per_test, "epsilon_per_test")
    delta = check_delta(delta)
    p = check_int(p, "p", minimum=2)
    n = check_int(n, "n", minimum=2)
    order = max(p - 2, 0) if max_order is None else check_int(max_order, "max_order", minimum=0)
    return _examined_worst_case("priv_pc", worst_case_tests(p, order), epsilon_per_test, delta,
                                "Wang, Pang & Song 2020, Thm. 1 per examined test (sieve amplified by sub-sampling, "
                                "Balle, Barthe & Gaboardi 2018, Thm. 9; "
                                "Laplace examine), worst-case number of tests composed by the PLD accountant",
                                {"epsilon_per_test": epsilon_per_test, "max_order": order})


def priv_pc(data, *, levels, epsilon_per_test: float, delta: float = 1e-6, alpha: float = 0.20,
            threshold_tweak: float = 0.02, subsample_size: int | None = None, rng: RngLike,
            max_order: int | None = None, node_names: Sequence[str] | None = None,
            max_tests: int | None = None, unproven: Mapping[str, str] | None = None) -> PCResult:
    """Priv-PC [WPS20, Alg. 2] on integer-coded ordinal data.

    Parameters
    ----------
    data : rows × variables of integer category codes (array or DataFrame).
    levels : the public domain sizes (sequence, mapping or :class:`~dpcd.schema.Schema`);
        they fix the table shapes and the number of strata in the sensitivity.
    epsilon_per_test : the per-test privacy parameter ε of the paper: each
        examined CI test costs ε (ε/2 sieve + ε/2 examine). The accumulated
        cost is in the ledger; :func:`worst_case` gives the worst case.
    delta : δ at which the accumulated cost is reported (advanced composition's
        δ' and the tight accountant's target δ).
    alpha : two-sided significance level of the Kendall test. The mechanism
        thresholds the one-sided p-value at T = α/2 (the paper's T = 0.10 is
        α = 0.20): the edge is removed when the noisy one-sided p-value reaches T.
    threshold_tweak : t, on the one-sided scale: the sieve's threshold is T − t (must leave T − t > 0).
    subsample_size : m; None = the optimal size of Sec. 3.2 (clipped to [n/20, n]).
    rng : Generator or seed.
    max_order : largest conditioning set; None = no limit (the authors' cap is
        :func:`~dpcd.discovery.kendall_family.reference_max_order`).
    max_tests : cap on the run's CI decisions (None = none): an order starts only if it cannot exceed it
        (:func:`dpcd.discovery.pc.pc_skeleton`); a function of earlier private decisions, so it costs no budget.
    node_names : variable names (default: DataFrame columns or X1..Xp).
    unproven : ``{"sensitivity": "reference"}`` runs the authors' calibration Δ_Z = 6/√n (see the module
        docstring), proven for unconditional tests only: for reproducing the paper; the ledger then marks
        the run not DP (:data:`dpcd.discovery.kendall_family.UNPROVEN`).

    Returns a :class:`PCResult` whose ``ledger`` is a replace-one
    :class:`PrivacyLedger` (totals on demand: ``privacy_totals(result.ledger,
    delta)`` or ``result.ledger.total(...)``); ``info`` holds the test counts
    (sieved, examined, full-data and sub-sample tests) and the calibration used.

    Privacy: (ε, δ)-DP under replace-one neighbours with n and domains public,
    (ε, δ) being :func:`worst_case`'s (the most rounds any run can examine), by
    [WPS20, Thm 1] per round and composition.
    ``privacy_totals(result.ledger, delta)["epsilon_tight"]`` is what this run
    spent: at most that, and not a guarantee by itself (the number of rounds
    depends on the data).

    Examples
    --------
    >>> from dpcd.datasets import load_bnlearn
    >>> data = load_bnlearn("asia", 20000, rng=0)
    >>> result = priv_pc(data.data, levels=data.levels, epsilon_per_test=1.0, rng=1)
    >>> result.ledger.relation
    'replace'
    """
    epsilon = check_epsilon(epsilon_per_test, "epsilon_per_test")
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    threshold = alpha / 2.0  # the one-sided p-value's threshold T
    threshold_tweak = float(threshold_tweak)
    if not 0 <= threshold_tweak < threshold:
        raise ValueError(f"threshold_tweak must be in [0, alpha/2) so the sieve threshold alpha/2 - t is positive, "
                         f"got {threshold_tweak} with alpha={alpha}")
    codes, names, max_order, query = kendall_run_setup(data, node_names, max_order, levels)
    ledger, sensitivity = kendall_ledger(unproven, algorithm="priv_pc")
    n, p = codes.shape
    if subsample_size is None:
        subsample_size = optimal_subsample_size(n, epsilon)
    subsample_size = check_int(subsample_size, "subsample_size", minimum=2)
    if subsample_size > n:
        raise ValueError(f"subsample_size must be at most n={n}, got {subsample_size}")
    generator = as_rng(rng)
    order_cap = min(max_order, p - 2)
    full_sensitivity = one_sided_kendall_pvalue_sensitivity(n, query.levels, order_cap, mode=sensitivity)
    sub_sensitivity = one_sided_kendall_pvalue_sensitivity(subsample_size, query.levels, order_cap,
                                                           mode=sensitivity)
    mechanism = SieveAndExamine(n=n, threshold=threshold, threshold_tweak=threshold_tweak, epsilon=epsilon,
                                sensitivity=full_sensitivity, subsample_sensitivity=sub_sensitivity,
                                subsample_size=subsample_size, rng=generator, ledger=ledger)
    result = run_pc(names, SieveKendallDecider(query, mechanism), max_order=max_order, ledger=ledger,
                    max_tests=max_tests)
    mechanism.finish()
    info = {
        "algorithm": "priv_pc", "epsilon_per_test": epsilon, "delta": delta, "alpha": alpha,
        "threshold_tweak": threshold_tweak, "subsample_size": subsample_size, "n": n, "max_order": max_order,
        "sensitivity_mode": sensitivity, "sensitivity": full_sensitivity,
        "subsample_sensitivity": sub_sensitivity, "sieve_epsilon": mechanism.sieve_epsilon,
        "n_sieved": mechanism.n_sieved, "n_examined": mechanism.n_examined,
        "n_full_tests": query.tester.n_computed, "n_subsample_tests": query.n_subsample_tests,
    }
    return replace(result, info=info)


PRIV_PC = PrivateAlgorithm(
    name="priv_pc", label="Priv-PC", data="categorical", relation=RELATION, public=PUBLIC, budget="per_test",
    budget_arg="epsilon_per_test", run=priv_pc, privacy_map=worst_case, delta_arg="delta",
    theorem="Wang, Pang & Song 2020, Thm. 1")
"""Priv-PC as a :class:`~dpcd.discovery.algorithm.PrivateAlgorithm`."""

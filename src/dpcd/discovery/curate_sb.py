"""Score-based CURATE (Bhattacharjee & Tandon 2024, Sec. III-B, Alg. 2, Lemma 2).

Private NOTEARS as in :mod:`dpcd.discovery.noleaks`, but gradient evaluation k
gets its own budget ε_k from an increasing-by-design schedule, and the number of
iterations I is the one Lemma 2 allows for ε_Total and the initial budget ε₀:

* additive        ε_k = ε₀(1 + k/I),          I_add = (ε_T + ε₀/2)/(ε₀ + ε₀/2);
* exponential     ε_k = ε₀·exp(k/I),          I_exp = ε_T/(ε₀·e);
* multiplicative  ε_k = ε₀^{1 + k/I},          I_mul = ln ε₀ / ln(1 − ε₀(1 − ε₀)/ε_T)   (ε₀ < 1),
                                               I_mul = ln ε₀ / ln(1 + ε₀(ε₀ − 1)/ε_T)   (ε₀ > 1).

(Lemma 2's forms, k = 0..I − 1. Alg. 2 prints the multiplicative schedule as
ε₀^{1 + k/(I−1)}; ``indexing="algorithm"`` uses that form. In either case I is
then lowered, by counting, until Σ_k ε_k ≤ the gradient budget, so the run's
basic-composition total never exceeds ε_Total.)

Observation (said in the notebook too): for ε₀ < 1 — the regime where the paper
prefers the multiplicative scheme — ε₀^{1 + k/I} *decreases* from ε₀ to ε₀²,
the opposite of the stated intent "later iterations get more budget"; we
implement the published formula.

Privacy: as NOLEAKS (replace one record; n, d, encoding public): every
gradient evaluation is (ε_k, δ)-DP by the analytic Gaussian mechanism and the
line-search subset costs (ln((n+1)/(n+1−m)), m/n); its ε is taken out of
ε_Total before the schedule is built, so the basic-composition total is
≤ ε_Total with δ_total = I·δ + m/n. All charges are in the returned ledger.

References
----------
.. [BT24] P. Bhattacharjee, R. Tandon. CURATE: Scaling-up Differentially
   Private Causal Graph Discovery. 2024.
.. [MJPW22] P. Ma et al. NoLeaks. IEEE TIFS 2022.

Examples
--------
>>> CURATE_SB.name, CURATE_SB.relation.name, CURATE_SB.budget_arg, CURATE_SB.differentially_private
('curate_sb', 'replace', 'epsilon_total', True)
>>> worst = CURATE_SB.privacy_map(epsilon_total=1.0, delta=1e-6, n=10_000)
>>> worst.epsilon <= 1.0, round(worst.delta, 2)   # δ includes m/n = 0.1 of the line-search subset
(True, 0.1)
"""

from __future__ import annotations

import math
from typing import Literal, Sequence

import numpy as np

from ..privacy.relation import WorstCase
from ..validation import RngLike, check_delta, check_epsilon
from .algorithm import PrivateAlgorithm
from .notears import ScoreResult, score_result
from .private_notears import (
    PUBLIC,
    RELATION,
    check_subset_size,
    line_search_charge,
    prepare_run,
    private_notears,
    score_worst_case,
)

__all__ = ["CURATE_SB", "SCHEDULES", "lemma2_iterations", "schedule_budgets", "count_iterations", "curate_sb",
           "worst_case", "RELATION", "PUBLIC"]

Schedule = Literal["multiplicative", "additive", "exponential"]
SCHEDULES: tuple[str, ...] = ("multiplicative", "additive", "exponential")


def _check_schedule(schedule: str) -> str:
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    return schedule


def lemma2_iterations(schedule: Schedule, *, epsilon_total: float, epsilon0: float) -> float:
    """Lemma 2's (real-valued) number of iterations I for ε_Total and ε₀ (Eqs. 17–19)."""
    schedule = _check_schedule(schedule)
    et = check_epsilon(epsilon_total, "epsilon_total")
    e0 = check_epsilon(epsilon0, "epsilon0")
    if schedule == "additive":
        return (et + e0 / 2.0) / (e0 + e0 / 2.0)
    if schedule == "exponential":
        return et / (e0 * math.e)
    if e0 == 1.0:
        return et  # every ε_k = 1
    if e0 < 1.0:
        ratio = e0 * (1.0 - e0) / et
        if ratio >= 1.0:
            raise ValueError(f"epsilon0={e0} is too large for epsilon_total={et}: need ε₀(1 − ε₀) < ε_Total")
        return math.log(e0) / math.log1p(-ratio)
    return math.log(e0) / math.log1p(e0 * (e0 - 1.0) / et)


def schedule_budgets(schedule: Schedule, *, epsilon0: float, iterations: int,
                     indexing: Literal["lemma", "algorithm"] = "lemma") -> np.ndarray:
    """Per-iteration budgets ε_0..ε_{I−1} of a schedule with I = ``iterations``."""
    schedule = _check_schedule(schedule)
    e0 = check_epsilon(epsilon0, "epsilon0")
    if iterations < 1:
        return np.zeros(0)
    k = np.arange(iterations, dtype=float)
    denom = float(iterations)
    if indexing == "algorithm" and schedule == "multiplicative":
        denom = max(iterations - 1.0, 1.0)
    elif indexing not in ("lemma", "algorithm"):
        raise ValueError(f"indexing must be 'lemma' or 'algorithm', got {indexing!r}")
    with np.errstate(over="ignore"):  # a budget beyond the largest double is ∞: no total can afford it
        if schedule == "additive":
            return e0 * (1.0 + k / denom)
        if schedule == "exponential":
            return e0 * np.exp(k / denom)
        return e0 ** (1.0 + k / denom)


def count_iterations(schedule: Schedule, *, epsilon_total: float, epsilon0: float,
                     indexing: Literal["lemma", "algorithm"] = "lemma", start: int | None = None) -> int:
    """Largest I with Σ_{k<I} ε_k(I) ≤ ε_Total, by direct counting (downwards from ``start``,
    default ⌈Lemma 2⌉ + 2, or upwards when that already fits)."""
    et = check_epsilon(epsilon_total, "epsilon_total")
    if start is None:
        try:
            start = int(math.ceil(lemma2_iterations(schedule, epsilon_total=et, epsilon0=epsilon0))) + 2
        except ValueError:
            start = 1
    tol = 1e-12 * et

    def fits(i: int) -> bool:
        with np.errstate(over="ignore"):  # a sum beyond the largest double is ∞ and does not fit
            return i == 0 or float(np.sum(schedule_budgets(schedule, epsilon0=epsilon0, iterations=i,
                                                            indexing=indexing))) <= et + tol

    i = max(int(start), 0)
    if fits(i):
        while fits(i + 1):
            i += 1
        return i
    while i > 0 and not fits(i):
        i -= 1
    return i


def _schedule(schedule: str, grad_budget: float, epsilon0: float | None, indexing: str) -> tuple[np.ndarray, float,
                                                                                               float]:
    """(budgets, ε₀, Lemma 2's I) of a run: data-independent."""
    if grad_budget <= 0:
        raise ValueError("epsilon_total does not exceed the line-search subset's charge; increase it or lower "
                         "line_search_size")
    e0 = grad_budget / 100.0 if epsilon0 is None else check_epsilon(epsilon0, "epsilon0")
    i_lemma = lemma2_iterations(schedule, epsilon_total=grad_budget, epsilon0=e0)
    n_iter = count_iterations(schedule, epsilon_total=grad_budget, epsilon0=e0, indexing=indexing,
                              start=int(math.floor(i_lemma)))
    if n_iter < 1:
        raise ValueError(f"epsilon0={e0} leaves no iteration within the gradient budget {grad_budget:.4g}")
    return schedule_budgets(schedule, epsilon0=e0, iterations=n_iter, indexing=indexing), e0, i_lemma


def worst_case(*, epsilon_total: float, delta: float, n: int, schedule: Schedule = "multiplicative",
               epsilon0: float | None = None, indexing: Literal["lemma", "algorithm"] = "algorithm",
               line_search_size: int = 1000) -> WorstCase:
    """The data-independent guarantee of any :func:`curate_sb` run (basic composition, δ includes m/n).

    >>> worst_case(epsilon_total=1.0, delta=1e-6, n=10_000).epsilon <= 1.0 + 1e-9
    True
    """
    schedule = _check_schedule(schedule)
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    delta = check_delta(delta)
    eps_ls, _ = line_search_charge(*check_subset_size(n, line_search_size))
    budgets, e0, _ = _schedule(schedule, epsilon_total - eps_ls, epsilon0, indexing)
    return score_worst_case("curate_sb", budgets, delta=delta, n=n, line_search_size=line_search_size,
                            theorem="analytic Gaussian per gradient evaluation (Balle & Wang 2018), Lemma 2 schedule, line-search "
                                    "subset as NOLEAKS, basic composition",
                            parameters={"epsilon_total": epsilon_total, "schedule": schedule, "epsilon0": e0,
                                        "iterations": len(budgets)})


def curate_sb(X, *, epsilon_total: float, delta: float, rng: RngLike, schedule: Schedule = "multiplicative",
              epsilon0: float | None = None, indexing: Literal["lemma", "algorithm"] = "algorithm",
              lambda1: float = 0.1, clip: float = 2.0, w_threshold: float = 0.3, line_search_size: int = 1000,
              max_iter: int = 100, node_names: Sequence[str] | None = None, bounds=None) -> ScoreResult:
    """Score-based CURATE: private NOTEARS with an adaptive per-iteration budget schedule.

    Parameters
    ----------
    X : n × d numeric data.
    epsilon_total : ε_Total of the whole run (line-search subset included).
    delta : δ of every gradient evaluation.
    rng : Generator or seed.
    schedule : "multiplicative" (the paper's choice), "additive" or "exponential".
    epsilon0 : initial budget ε₀; default (ε_Total − line-search ε)/100.
    indexing : "algorithm" (Alg. 2's ε₀^{1+k/(I−1)}) or "lemma" (Lemma 2's ε₀^{1+k/I}).
    Other parameters as :func:`dpcd.discovery.noleaks.noleaks` (including public ``bounds``).

    Returns a :class:`~dpcd.discovery.notears.ScoreResult`; ``info`` has the
    schedule, Lemma 2's I and the I actually used.

    Examples
    --------
    >>> from dpcd.datasets import random_dag, sample_linear_gaussian
    >>> data = sample_linear_gaussian(random_dag(3, 0.7, 0), 2000, 1)
    >>> result = curate_sb(data.data, bounds=data.schema(), epsilon_total=2.0, delta=1e-5, rng=2, max_iter=5,
    ...                    line_search_size=100)
    >>> result.info["iterations"] >= 1 and result.ledger.total("basic").epsilon <= 2.0 + 1e-9
    True
    """
    schedule = _check_schedule(schedule)
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    names, X, delta, clip, generator, rows, ledger, eps_ls = prepare_run(
        X, node_names, delta, lambda1, clip, w_threshold, line_search_size, rng, bounds)
    budgets, e0, i_lemma = _schedule(schedule, epsilon_total - eps_ls, epsilon0, indexing)
    n_iter = len(budgets)
    W, info = private_notears(X, budgets, delta=delta, rng=generator, ledger=ledger, lambda1=lambda1, clip=clip,
                              max_iter=max_iter, line_search_rows=rows)
    W = W.copy()
    W[np.abs(W) < w_threshold] = 0.0
    info.update({"algorithm": "curate_sb", "schedule": schedule, "epsilon0": e0, "iterations_lemma2": i_lemma,
                 "iterations": n_iter, "indexing": indexing, "epsilon_line_search": eps_ls, "delta": delta,
                 "epsilon_total": epsilon_total})
    return score_result(W, names, ledger=ledger, info=info)


CURATE_SB = PrivateAlgorithm(
    name="curate_sb", label="CURATE-SB", data="numeric", relation=RELATION, public=PUBLIC, budget="total",
    budget_arg="epsilon_total", run=curate_sb, privacy_map=worst_case, delta_arg="delta", alpha_arg=None,
    theorem="Bhattacharjee & Tandon 2024, Alg. 2", takes_max_order=False, exact_subset=True)
"""CURATE-SB as a :class:`~dpcd.discovery.algorithm.PrivateAlgorithm` (δ = m/n: ``discover`` refuses it)."""

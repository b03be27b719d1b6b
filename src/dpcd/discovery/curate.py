"""Constraint-based CURATE: PC with per-order privacy budgets chosen by optimisation.

CURATE (Bhattacharjee & Tandon 2024, Sec. III-A, Alg. 1) privatises every CI
test of the PC skeleton phase with the Laplace mechanism, but — unlike Priv-PC
or SVT-PC — gives every *order* i its own budget ε_i. Before order i it solves
OPT(ε_Total^(i), e_i, i) (Eq. 3): minimise the error surrogate of Eq. 2,

    Π_{j≥i} q_j^(1) + 1 − Π_{j≥i} (1 − q_j^(2)),
    q_j^(1) = c₁/2 + ½·exp(−T β₁ ε_j / Δ),  q_j^(2) = c₂/2 + ½·exp(−T β₂ ε_j / Δ)
    (Lemma 1),

over ε_i ≥ ε_{i+1} ≥ … ≥ ε_D subject to Σ_j L(t_j, ε_j) ≤ ε_Total^(i), where
t_j = e_i·C(d−2, j) bounds the number of order-j tests and L is advanced
composition of t_j tests at δ'. SLSQP solves it for any number of orders (the
objective is one vectorised function of the vector ε, not a hand-written
formula per d). Order-i tests then use the margin rule on the noisy p-value
f̂ = p + Lap(Δ/ε_i): delete the edge when f̂ > T(1+β₂), keep it when
f̂ < T(1−β₁), otherwise flip a fair coin. After the order, the remaining
budget is reduced by the leakage of the order's **worst-case** test count
t_i^max (below), and the search stops when the δ budget is spent.

Privacy
-------
Neighbouring relation: replace one record (:data:`RELATION`); public: n, the
variables' domains (passed as ``levels``), and the graph left after each order
(post-processing of the private tests). Each CI test is ε_i-DP by the Laplace
mechanism [DR14, Thm 3.6] for a p-value with replace-one L1-sensitivity Δ.
Order i charges t_i^max tests: the most distinct (pair, S) questions the order
can ask given the adjacency at its start, Σ over adjacent pairs {x, y} of
|C(adj(x)∖{y}, i) ∪ C(adj(y)∖{x}, i)| (≤ e_i·C(d − 2, i), the paper's bound),
a function of earlier private outputs only; the number of tests actually run
depends on this order's noisy decisions and is never used for accounting
(the text subtracts the actual count, which makes the budget of later orders
an uncharged function of the data). Order i is then (ε_curate^(i), δ') by
advanced composition of t_i^max tests (exact form t ε(e^ε − 1) + ε√(2t ln 1/δ')
of [DR14, Thm 3.20], capped by basic composition t ε), and orders compose by
basic composition as a privacy filter [RRUV16]: each order's parameters are
chosen from earlier outputs and the run stops before Σ_i ε_curate^(i) exceeds
ε_Total or Σ_i δ' exceeds δ_Total, so every run is (ε_Total, δ_Total)-DP
(:func:`worst_case`; the paper's Fig. 2). The ledger charges t_i^max tests per order.

Deviations from the text (each also noted where it happens):

* the paper writes order-i leakage as t ε² + ε√(2t ln 1/δ'); that drops the
  factor (e^ε − 1)/ε ≥ 1 of the advanced composition theorem and under-states
  the leakage for ε not ≪ 1. ``composition="advanced"`` (default) uses the
  theorem; ``composition="paper"`` reproduces the text (then the reported total
  is the paper's formula, not a proven bound);
* Δ: the paper perturbs the p-value and bounds its sensitivity by
  L_Φ·Δ(τ) with L_Φ = 1/√(2π) (App. VI-B); we use the exact worst case of the
  two-sided p-value 2(1 − Φ(|z|)) for a z-statistic that moves by at most Δ_z,
  2Φ(Δ_z) − 1 (capped at 1), with Δ_z the replace-one sensitivity of the
  conditional Kendall z-statistic of Wang, Pang & Song (2020, Thm 3, with the
  weight change), ``dpcd.privacy.sensitivity.conditional_kendall_sensitivity``;
* the same (pair, S) question asked from both ends of an edge is answered
  once per run (post-processing), so t_j ≤ e_j·C(d−2, j) holds as the paper
  assumes;
* the constants c₁, c₂ of Lemma 1 are unknown in the paper; they default to 0.

References
----------
.. [BT24] P. Bhattacharjee, R. Tandon. CURATE: Scaling-up Differentially
   Private Causal Graph Discovery. 2024 (MLSP 2024).
.. [WPS20] L. Wang, Q. Pang, D. Song. Towards practical differentially private
   causal graph discovery. NeurIPS 2020.
.. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. 2014.
.. [BBG18] B. Balle, G. Barthe, M. Gaboardi. Privacy Amplification by
   Subsampling. NeurIPS 2018.
.. [RRUV16] R. Rogers, A. Roth, J. Ullman, S. Vadhan. Privacy Odometers and
   Filters: Pay-as-you-Go Composition. NeurIPS 2016.

Examples
--------
>>> CURATE.name, CURATE.relation.name, CURATE.budget_arg, CURATE.delta_arg, CURATE.differentially_private
('curate', 'replace', 'epsilon_total', 'delta_total', True)
>>> worst = CURATE.privacy_map(epsilon_total=1.0, p=4)   # the filter stops before ε_Total
>>> worst.epsilon, worst.accountant
(1.0, 'filter')
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Literal, Mapping, Sequence

import numpy as np
from scipy import optimize, special

from ..ci import CITester
from ..privacy import PrivacyLedger, epsilon_for_subsampled, laplace_noise, laplace_scale, subsampled_epsilon
from ..privacy.relation import REPLACE_ONE, WorstCase
from ..privacy.sensitivity import two_sided_kendall_pvalue_sensitivity
from ..schema import public_levels
from ..validation import (
    RngLike,
    as_data_matrix,
    as_rng,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
)
from .algorithm import PrivateAlgorithm, mark_unproven, unproven_options
from .pc import Decider, PCResult, node_names_of, run_pc

__all__ = [
    "CURATE",
    "OptResult",
    "order_leakage",
    "error_surrogate",
    "order_test_bounds",
    "uniform_allocation",
    "optimise_budgets",
    "CurateDecider",
    "curate",
    "worst_case",
    "RELATION",
    "PUBLIC",
    "UNPROVEN",
    "LEFTOVER",
    "order_worst_case_tests",
]

Composition = Literal["advanced", "paper"]
UNPROVEN = {
    "sensitivity": "a declared p-value sensitivity (e.g. the paper's Eq. 16) used even below the proven bound",
    "composition": "Eq. 3 as printed (t eps^2 + ...) under-states the advanced composition theorem",
}
"""CURATE's published-but-unproven steps (``curate(unproven=...)``), each with why it is not DP."""
RELATION = REPLACE_ONE
"""CURATE's guarantee is stated under replace one record, with n public."""
PUBLIC = ("n", "domains")
LEFTOVER = 1e-9
"""An order starts only while more than this share of the run's budget remains (ε_Total, or its sub-sample
equivalent ln(1 + (e^ε_Total − 1)/q) when sub-sampling, the units OPT works in): OPT spends the whole remainder up
to floating-point leftovers (about 10⁻¹² of it), and an order run on such a leftover would give each test a
per-test ε near 10⁻¹⁶ — pure coin flips that delete about half of the remaining edges. Stopping is a function
of the public budgets and test counts only, so it changes no guarantee."""


# --------------------------------------------------------------------------- leakage and error


def _amplify(epsilon: np.ndarray, q: float) -> np.ndarray:
    """ε of an ε-DP step run on a q-sub-sample, per entry: :func:`dpcd.privacy.mechanisms.subsampled_epsilon`
    [BBG18, Thm 9] (entries ≤ 0, which OPT's solver may try, are left as they are)."""
    if q >= 1.0:
        return epsilon
    values = np.asarray(epsilon, dtype=float)
    return np.array([subsampled_epsilon(float(v), q) if v > 0 else float(v) for v in values.ravel()]
                    ).reshape(values.shape)


def order_leakage(t: np.ndarray | float, epsilon: np.ndarray | float, *, delta_prime: float,
                  composition: Composition = "advanced", cap: bool = True) -> np.ndarray | float:
    """ε of t tests of ε each composed at slack δ' (vectorised over t and ε).

    ``"advanced"``: t ε(e^ε − 1) + ε√(2 t ln(1/δ')) [DR14, Thm 3.20];
    ``"paper"``: t ε² + ε√(2 t ln(1/δ')) (Bhattacharjee & Tandon, Eq. 3).
    With ``cap`` the result is min(that, t ε) (basic composition is also a valid
    bound, with δ' not needed). t = 0 gives 0.
    """
    t = np.asarray(t, dtype=float)
    eps = np.asarray(epsilon, dtype=float)
    with np.errstate(over="ignore"):
        mean_term = t * eps * np.expm1(eps) if composition == "advanced" else t * eps ** 2
    out = mean_term + eps * np.sqrt(2.0 * t * math.log(1.0 / delta_prime))
    if cap:
        out = np.minimum(out, t * eps)
    return out if out.ndim else float(out)


def error_surrogate(epsilons: np.ndarray, *, threshold: float, beta1: float, beta2: float,
                    sensitivity: float, c1: float = 0.0, c2: float = 0.0) -> float:
    """Eq. 2: Π_j q_j^(1) + 1 − Π_j (1 − q_j^(2)) with Lemma 1's q's (vectorised)."""
    eps = np.asarray(epsilons, dtype=float)
    q1 = 0.5 * c1 + 0.5 * np.exp(-threshold * beta1 * eps / sensitivity)
    q2 = 0.5 * c2 + 0.5 * np.exp(-threshold * beta2 * eps / sensitivity)
    return float(np.prod(q1) + 1.0 - np.prod(1.0 - q2))


def order_test_bounds(n_edges: int, n_vars: int, order: int, last_order: int) -> np.ndarray:
    """t_j = e_i·C(d−2, j) for j = order..last_order (the paper's data-dependent bound)."""
    j = np.arange(order, last_order + 1)
    return n_edges * special.comb(n_vars - 2, j, exact=False)


def order_worst_case_tests(adjacency: np.ndarray, order: int) -> int:
    """t_i^max: the most distinct (pair, S) tests of order ``order`` given the adjacency at its start.

    Σ over adjacent pairs {x, y} of |C(adj(x)∖{y}, i) ∪ C(adj(y)∖{x}, i)| =
    C(a, i) + C(b, i) − C(c, i) with a, b the two neighbourhood sizes and c
    the number of common neighbours (the sets both ends can ask). A function
    of the adjacency only (earlier private outputs), never of this order's tests.

    >>> order_worst_case_tests(~np.eye(4, dtype=bool), 1)   # complete graph on 4 nodes: 6 pairs, 2 sets each
    12
    """
    adjacency = np.asarray(adjacency, dtype=bool)
    degree = adjacency.sum(axis=1)
    common = adjacency.astype(np.int64) @ adjacency.astype(np.int64)
    rows, cols = np.nonzero(np.triu(adjacency, 1))
    total = 0
    for x, y in zip(rows.tolist(), cols.tolist()):
        a, b, c = int(degree[x]) - 1, int(degree[y]) - 1, int(common[x, y])
        total += math.comb(a, order) + math.comb(b, order) - math.comb(c, order)
    return total


@dataclass(frozen=True)
class OptResult:
    """Solution of OPT(ε_Total^(i), e_i, i).

    ``epsilons``: budgets ε_i ≥ … ≥ ε_D (per test, before sub-sampling
    amplification); ``leakage``: Σ_j L(t_j, ε_j) (≤ ``budget``); ``objective``
    and ``uniform_objective``: Eq. 2 at the solution and at the best uniform
    allocation; ``method``: "slsqp" or "uniform" (SLSQP did not improve on the
    uniform allocation, which is then returned).
    """

    epsilons: np.ndarray
    leakage: float
    objective: float
    uniform_objective: float
    method: str
    budget: float


def _leakage_total(eps: np.ndarray, t: np.ndarray, q: float, delta_prime: float,
                   composition: Composition) -> float:
    return float(np.sum(order_leakage(t, _amplify(eps, q), delta_prime=delta_prime,
                                      composition=composition, cap=False)))


def uniform_allocation(budget: float, t: np.ndarray, *, delta_prime: float, subsample_rate: float = 1.0,
                       composition: Composition = "advanced") -> float:
    """The largest common ε with Σ_j L(t_j, ε) ≤ ``budget`` (bisection, feasible side)."""
    t = np.asarray(t, dtype=float)

    def excess(e: float) -> float:
        return _leakage_total(np.full(t.shape, e), t, subsample_rate, delta_prime, composition) - budget

    low, high = 0.0, max(budget, 1e-12)
    while excess(high) < 0:
        high *= 2.0
        if high > 1e6:
            return high
    for _ in range(200):
        mid = 0.5 * (low + high)
        if excess(mid) <= 0:
            low = mid
        else:
            high = mid
        if high - low <= 1e-15 * max(high, 1e-300):
            break
    return low


def optimise_budgets(budget: float, n_edges: int, n_vars: int, order: int, *, threshold: float = 0.05,
                     beta1: float = 0.1, beta2: float = 0.1, sensitivity: float, delta_prime: float = 1e-12,
                     last_order: int | None = None, subsample_rate: float = 1.0, c1: float = 0.0,
                     c2: float = 0.0, composition: Composition = "advanced") -> OptResult:
    """OPT(ε_Total^(i), e_i, i) of Eq. 3, solved with SLSQP for any number of orders.

    Variables: x_j = ε_j / budget for j = order..last_order (default d − 2);
    constraints Σ_j L(t_j, ε_j') ≤ budget with ε_j' the sub-sampling-amplified
    ε_j (ε_j' = ε_j without sub-sampling) and ε_j ≥ ε_{j+1}. Amplifying each
    test is the paper's formulation and is valid only if every test draws its
    own sub-sample; :func:`curate` runs all tests on one sub-sample, so it
    solves OPT without amplification and amplifies the whole run once. The uniform
    allocation is the starting point; the returned budgets are checked to be
    feasible (scaled down by bisection if SLSQP's tolerance left them slightly
    outside) and are the uniform ones when SLSQP found nothing better.
    """
    budget = check_positive(budget, "budget")
    n_vars = check_int(n_vars, "n_vars", minimum=2)
    order = check_int(order, "order", minimum=0)
    n_edges = check_int(n_edges, "n_edges", minimum=1)
    last = n_vars - 2 if last_order is None else check_int(last_order, "last_order", minimum=order)
    if order > last:
        raise ValueError(f"order must be ≤ last_order ({last}), got {order}")
    sensitivity = check_positive(sensitivity, "sensitivity")
    q = check_probability(subsample_rate, "subsample_rate", open_high=False)
    t = np.maximum(order_test_bounds(n_edges, n_vars, order, last), 1.0)
    kw = dict(threshold=threshold, beta1=beta1, beta2=beta2, sensitivity=sensitivity, c1=c1, c2=c2)
    e_uni = uniform_allocation(budget, t, delta_prime=delta_prime, subsample_rate=q, composition=composition)
    x_uni = np.full(t.shape, e_uni / budget)
    f_uni = error_surrogate(x_uni * budget, **kw)
    m = t.size

    def objective(x: np.ndarray) -> float:
        return error_surrogate(np.maximum(x, 0.0) * budget, **kw)

    def leak_slack(x: np.ndarray) -> float:
        return 1.0 - _leakage_total(np.maximum(x, 0.0) * budget, t, q, delta_prime, composition) / budget

    constraints = [{"type": "ineq", "fun": leak_slack}]
    if m > 1:
        diff = np.eye(m)[:-1] - np.eye(m, k=1)[:-1]  # x_j − x_{j+1} ≥ 0
        constraints.append({"type": "ineq", "fun": lambda x: diff @ x, "jac": lambda x: diff})
    x_best, f_best, method = x_uni, f_uni, "uniform"
    try:
        sol = optimize.minimize(objective, x_uni, method="SLSQP", bounds=[(0.0, None)] * m,
                                constraints=constraints, options={"maxiter": 200, "ftol": 1e-12})
        x = np.maximum.accumulate(np.maximum(sol.x, 0.0)[::-1])[::-1]  # enforce monotone exactly
        if leak_slack(x) < 0:  # pull back onto the feasible side
            lo, hi = 0.0, 1.0
            for _ in range(100):
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if leak_slack(mid * x) >= 0 else (lo, mid)
            x = lo * x
        f = objective(x)
        if np.all(np.isfinite(x)) and f < f_uni and leak_slack(x) >= 0:
            x_best, f_best, method = x, f, "slsqp"
    except (ValueError, ArithmeticError):  # pragma: no cover - SLSQP failures fall back to uniform
        pass
    eps = x_best * budget
    return OptResult(eps, _leakage_total(eps, t, q, delta_prime, composition), f_best, f_uni, method, budget)


# --------------------------------------------------------------------------- sensitivity


# --------------------------------------------------------------------------- decider


class CurateDecider(Decider):
    """Margin-rule Laplace decisions with per-order budgets from OPT (Alg. 1).

    ``start_order`` closes the accounts of the previous order (actual t_i),
    stops when the δ budget or the ε budget is spent, and solves OPT for the
    remaining orders; ``decide`` runs one noisy test (answers to a repeated
    (pair, S) question are reused). Call :meth:`finish` after the engine
    returns to account for the last order.
    """

    def __init__(self, tester: CITester, *, n_vars: int, epsilon_total: float, delta_prime: float,
                 delta_total: float, threshold: float, beta1: float, beta2: float, sensitivity: float,
                 rng: np.random.Generator, ledger: PrivacyLedger, last_order: int, subsample_rate: float = 1.0,
                 c1: float = 0.0, c2: float = 0.0, composition: Composition = "advanced",
                 per_test_sensitivity=None):
        self.tester = tester
        self.per_test_sensitivity = per_test_sensitivity
        self.n_vars = n_vars
        self.remaining = epsilon_total
        self.epsilon_total = epsilon_total
        self.delta_prime = delta_prime
        self.delta_total = delta_total
        self.threshold = threshold
        self.beta1, self.beta2 = beta1, beta2
        self.sensitivity = sensitivity
        self.rng = rng
        self.ledger = ledger
        self.last_order = last_order
        self.q = subsample_rate
        self.c1, self.c2 = c1, c2
        self.composition = composition
        self.order: int | None = None
        self.epsilon: float = 0.0
        self.count = 0
        self.cache: dict = {}
        self.orders: list[dict] = []
        self.delta_spent = 0.0
        self.stop_reason = ""
        self.planned_tests = 0

    def _close_order(self) -> None:
        """Charge the order just finished at its worst case — every test its graph allowed (``planned_tests``),
        never the count it made — and subtract CURATE's leakage of that order from the remaining budget."""
        if self.order is None:
            return
        t, eps = self.planned_tests, self.epsilon  # the order's worst case, never its actual count
        eps_eff = float(_amplify(np.array(eps), self.q)) if self.q < 1 else eps
        leak = order_leakage(t, eps_eff, delta_prime=self.delta_prime, composition=self.composition) if t else 0.0
        delta_i = self.delta_prime if t else 0.0
        if t:
            if self.q < 1:
                self.ledger.charge(f"ci_test_order_{self.order}", epsilon=eps_eff, count=t, kind="pure",
                                   note=f"Laplace eps={eps:.6g} on a {self.q:.4g} sub-sample (amplified)")
            elif self.per_test_sensitivity is None:
                self.ledger.charge(f"ci_test_order_{self.order}", epsilon=eps, count=t, kind="laplace",
                                   sensitivity=self.sensitivity, scale=laplace_scale(self.sensitivity, eps))
            else:
                self.ledger.charge(f"ci_test_order_{self.order}", epsilon=eps, count=t, kind="laplace",
                                   note="Laplace noise Δ(S)/ε_i with Δ(S) from the strata of S")
        self.remaining -= leak
        self.delta_spent += delta_i
        self.orders.append({"order": self.order, "epsilon_test": eps, "tests": self.count,
                            "tests_charged": t, "epsilon_curate": leak, "delta_curate": delta_i,
                            "remaining": self.remaining})
        self.order, self.count = None, 0

    def finish(self) -> None:
        self._close_order()

    def start_order(self, order: int, adjacency: np.ndarray) -> bool:
        self._close_order()
        if order > self.last_order:
            self.stop_reason = "max_order"
            return False
        if self.delta_spent + self.delta_prime > self.delta_total * (1 + 1e-12):
            self.stop_reason = "delta budget spent"
            return False
        if self.remaining <= LEFTOVER * self.epsilon_total:
            self.stop_reason = "epsilon budget spent"
            return False
        n_edges = int(np.triu(adjacency).sum())
        if n_edges == 0:
            return False
        opt = optimise_budgets(self.remaining, n_edges, self.n_vars, order, threshold=self.threshold,
                               beta1=self.beta1, beta2=self.beta2, sensitivity=self.sensitivity,
                               delta_prime=self.delta_prime, last_order=self.last_order, subsample_rate=self.q,
                               c1=self.c1, c2=self.c2, composition=self.composition)
        if not opt.epsilons[0] > 0:
            self.stop_reason = "epsilon budget spent"
            return False
        self.order, self.epsilon, self.count = order, float(opt.epsilons[0]), 0
        self.planned_tests = order_worst_case_tests(adjacency, order)
        self.cache = {}
        return True

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        """CURATE's test: the p-value plus Laplace(Δ(S)/ε_i) at the order's ε_i, compared with the threshold's
        band (above: independent; below: dependent; inside: a fair coin); a repeated test reuses its decision."""
        key = (min(x, y), max(x, y), tuple(sorted(S)))
        if key in self.cache:
            return self.cache[key]
        p = self.tester(x, y, S).p_value
        delta_s = self.sensitivity if self.per_test_sensitivity is None else self.per_test_sensitivity(S)
        noisy = p + laplace_noise(delta_s / self.epsilon, rng=self.rng)
        self.count += 1
        if noisy > self.threshold * (1 + self.beta2):
            decision = True
        elif noisy < self.threshold * (1 - self.beta1):
            decision = False
        else:
            decision = bool(self.rng.random() < 0.5)
        self.cache[key] = decision
        return decision


# --------------------------------------------------------------------------- public entry point


def _deltas(delta_prime: float | None, delta_total: float | None, last: int) -> tuple[float, float]:
    """(δ', δ_Total): δ' defaults to δ_Total/(last + 1) when δ_Total is given, else 1e-12 (the paper's);
    δ_Total defaults to (last + 1)·δ'."""
    if delta_prime is None:
        delta_prime = 1e-12 if delta_total is None else check_delta(delta_total, "delta_total") / (last + 1)
    delta_prime = check_delta(delta_prime, "delta_prime")
    delta_total = (last + 1) * delta_prime if delta_total is None else check_delta(delta_total, "delta_total")
    return delta_prime, delta_total


def worst_case(*, epsilon_total: float, delta_prime: float | None = None, delta_total: float | None = None, p: int,
               max_order: int | None = None) -> WorstCase:
    """The data-independent guarantee of any :func:`curate` run: (ε_Total, δ_Total)-DP under replace-one.

    Per order, advanced composition of its worst-case test count; over orders,
    a basic-composition privacy filter that stops before ε_Total or δ_Total is
    exceeded [RRUV16] (module docstring). δ_Total defaults to (last order + 1)·δ'.

    >>> worst_case(epsilon_total=1.0, p=5).epsilon
    1.0
    """
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    p = check_int(p, "p", minimum=2)
    last = p - 2 if max_order is None else min(check_int(max_order, "max_order", minimum=0), p - 2)
    delta_prime, delta_total = _deltas(delta_prime, delta_total, last)
    delta = min(delta_total, (last + 1) * delta_prime)
    return WorstCase("curate", RELATION, epsilon_total, delta, PUBLIC,
                     "Laplace mechanism per CI test (Dwork & Roth 2014, Thm. 3.6), advanced composition of each "
                     "order's "
                     "worst-case test count (Dwork & Roth 2014, Thm. 3.20), basic-composition filter over orders "
                     "(Rogers, Roth, Ullman & Vadhan 2016)",
                     "filter", None, {"epsilon_total": epsilon_total, "delta_prime": delta_prime,
                                      "delta_total": delta_total, "max_order": last})


def curate(data, *, levels, epsilon_total: float, rng: RngLike, delta_prime: float | None = None,
           delta_total: float | None = None, alpha: float = 0.05, beta1: float = 0.1, beta2: float = 0.1,
           sensitivity: float | None = None, subsample: bool = False, subsample_size: int | None = None,
           max_order: int | None = None, node_names: Sequence[str] | None = None, c1: float = 0.0,
           c2: float = 0.0, max_tests: int | None = None, unproven: Mapping[str, Any] | None = None) -> PCResult:
    """Constraint-based CURATE (Bhattacharjee & Tandon 2024, Alg. 1) with Kendall's τ.

    Parameters
    ----------
    data : rows × variables of integer category codes (DataFrame or array).
    levels : the public domain sizes (sequence, mapping or :class:`~dpcd.schema.Schema`).
    epsilon_total : ε_Total, the budget of the whole skeleton search.
    rng : Generator or seed (Laplace noise, coin flips, sub-sample).
    delta_prime : δ' of advanced composition per order; default δ_Total/(orders)
        when ``delta_total`` is given, else 1e-12 (the paper's).
    delta_total : δ_Total; the search stops before an order whose δ' would
        exceed it. Default (orders)·δ' (never binding).
    alpha : the two-sided significance level, the paper's threshold T compared with the noisy two-sided
        Kendall p-value (paper: 0.05).
    beta1, beta2 : margins β₁, β₂ of the decision rule.
    sensitivity : Δ, L1-sensitivity of the p-value used for every test; default
        :func:`dpcd.privacy.sensitivity.two_sided_kendall_pvalue_sensitivity` of the (sub-)sample size and the
        number of strata of each conditioning set S (public domains), with the
        order-0 value used as Lemma 1's Δ inside OPT. A declared value must cover
        every test, so it is compared with the bound at the widest public
        stratification of the run (the product of the ``max_order`` largest level
        counts) and refused below it: the run would not be differentially private.
    unproven : the paper's unproven steps, for a labelled non-private diagnostic only (:data:`UNPROVEN`):
        ``{"sensitivity": Δ}`` uses Δ even below the proven bound (e.g. the paper's Eq. 16);
        ``{"composition": "paper"}`` plans each order with Eq. 3 as printed (t ε² + …), which under-states
        advanced composition. The result's ``info["differentially_private"]`` is then False and its ledger
        marks the run not DP (:meth:`~dpcd.privacy.PrivacyLedger.mark_not_dp`). Never use it for a release.
    subsample, subsample_size : run every test on one uniform sub-sample of m
        rows (default m = n/10 when ``subsample``). The run is accounted on the
        sub-sample at (ln(1 + (e^ε_Total − 1)/q), δ_Total/q), q = m/n, and
        amplified **once** [BBG18, Thm 9] to (ε_Total, δ_Total); the ledger then
        holds that single amplified charge. (Amplifying each test's ε before
        composing them, as OPT's ``subsample_rate`` does, is not valid when the
        tests share one sub-sample.)
    max_order : largest conditioning-set size (default d − 2).
    max_tests : cap on the run's CI decisions (None = none): an order starts only if it cannot exceed it
        (:func:`dpcd.discovery.pc.pc_skeleton`); a function of earlier private decisions, so it costs no budget.
    c1, c2 : the constants of Lemma 1.

    Returns
    -------
    PCResult whose ``ledger`` holds one Laplace charge per order (its
    worst-case test count) and whose ``info`` has ``orders`` (per order: ε_i,
    tests run, tests charged, ε_curate^(i), δ_curate^(i), remaining budget),
    ``epsilon_curate`` and ``delta_curate`` (the paper's total), and ``stop_reason``.

    Privacy: (Σ_i ε_curate^(i), Σ_i δ_curate^(i))-DP ≤ (ε_Total, δ_Total) under
    replace one record, n and domains public (module docstring, :func:`worst_case`).

    Examples
    --------
    >>> from dpcd.datasets import load_bnlearn
    >>> data = load_bnlearn("cancer", 5000, rng=0)
    >>> result = curate(data.data, levels=data.levels, epsilon_total=1.0, rng=0)
    >>> result.info["epsilon_curate"] <= 1.0
    True
    """
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    threshold = check_probability(alpha, "alpha")
    beta1 = check_positive(beta1, "beta1", allow_zero=True)
    beta2 = check_positive(beta2, "beta2", allow_zero=True)
    if beta1 >= 1:
        raise ValueError(f"beta1 must be < 1 (the keep threshold is T(1 − beta1)), got {beta1}")
    options = unproven_options(unproven, UNPROVEN, algorithm="curate")
    if options.get("composition", "paper") != "paper":  # the proven 'advanced' is the default, not an unproven option
        raise ValueError(f"unproven: composition must be 'paper', got {options['composition']!r}")
    composition = options.get("composition", "advanced")
    if "sensitivity" in options:
        if sensitivity is not None:
            raise ValueError("give sensitivity or unproven={'sensitivity': ...}, not both")
        sensitivity = options["sensitivity"]
    for name, c in (("c1", c1), ("c2", c2)):
        if not (isinstance(c, (int, float)) and 0.0 <= c < 1.0):
            raise ValueError(f"{name} must be in [0, 1), got {c!r}")
    generator = as_rng(rng)
    names = node_names_of(data, node_names)
    codes = as_data_matrix(data, kind="discrete")
    n, d = codes.shape
    levels = public_levels(levels, d, names)
    last = d - 2 if max_order is None else min(check_int(max_order, "max_order", minimum=0), d - 2)
    q = 1.0
    if subsample or subsample_size is not None:
        m = max(n // 10, 2) if subsample_size is None else check_int(subsample_size, "subsample_size", minimum=2)
        if m > n:
            raise ValueError(f"subsample_size must be ≤ n ({n}), got {m}")
        idx = generator.choice(n, size=m, replace=False)
        codes = codes[np.sort(idx)]
        q = m / n
    # With a sub-sample every test sees the same m rows: the run is accounted on the sub-sample at the
    # budget whose single amplification [BBG18, Thm 9] is the request, never test by test.
    epsilon_run = epsilon_total if q >= 1 else epsilon_for_subsampled(epsilon_total, q)
    if delta_total is not None and q < 1:
        delta_total = check_delta(delta_total, "delta_total") / q
        if delta_total >= 1:
            raise ValueError(f"delta_total/q = {delta_total:.3g} must be below 1 with a sub-sample of rate q = {q:.3g}")
    delta_prime, delta_total = _deltas(delta_prime, delta_total, last)
    tester = CITester(np.asfortranarray(codes), "kendall", levels=levels)
    per_test = None
    rows = codes.shape[0]  # n, or the public sub-sample size m
    if sensitivity is None:
        cache: dict[int, float] = {}

        def per_test(S: tuple[int, ...]) -> float:
            k = int(np.prod(levels[list(S)])) if S else 1
            if k not in cache:
                cache[k] = two_sided_kendall_pvalue_sensitivity(rows, k)
            return cache[k]

        sensitivity = per_test(())  # the order-0 value plans OPT (Lemma 1's Δ)
    private = True
    if per_test is None:
        # One declared Δ serves every test, so it must cover the widest stratification the run can meet:
        # the `last` largest public level counts (the bound grows with the number of strata k).
        sensitivity = check_positive(sensitivity, "sensitivity")
        widest = min(math.prod(sorted(int(v) for v in levels)[d - last:]), rows)
        proven = two_sided_kendall_pvalue_sensitivity(rows, widest)
        if sensitivity < proven:
            if "sensitivity" not in options:
                raise ValueError(f"sensitivity={sensitivity:.3g} is below the proven bound {proven:.3g} of the "
                                 f"p-value at this sample size and up to {widest} strata: the run would not be "
                                 "differentially private (unproven={'sensitivity': ...} is only for a labelled "
                                 "non-private diagnostic)")
            private = False
    if composition == "paper":
        private = False
    ledger = PrivacyLedger("replace", public=PUBLIC)
    decider = CurateDecider(tester, n_vars=d, epsilon_total=epsilon_run, delta_prime=delta_prime,
                            delta_total=delta_total, threshold=threshold, beta1=beta1, beta2=beta2,
                            sensitivity=sensitivity, rng=generator, ledger=ledger, last_order=last,
                            subsample_rate=1.0, c1=c1, c2=c2, composition=composition, per_test_sensitivity=per_test)
    result = run_pc(names, decider, max_order=last, ledger=ledger, max_tests=max_tests)
    decider.finish()
    spent = (float(sum(o["epsilon_curate"] for o in decider.orders)),
             float(sum(o["delta_curate"] for o in decider.orders)))
    if q < 1:  # one charge for the whole run on the sub-sample, amplified once
        amplified = (subsampled_epsilon(spent[0], q) if spent[0] > 0 else 0.0, q * spent[1])
        ledger = PrivacyLedger("replace", public=PUBLIC)
        if amplified[0] > 0:
            ledger.charge("CURATE on a uniform sub-sample (amplified once)", epsilon=amplified[0],
                          delta=amplified[1], kind="approx",
                          note=f"run on m = {len(codes)} of n = {n} rows, ({spent[0]:.4g}, {spent[1]:.3g})-DP there")
        spent = amplified
    mark_unproven(ledger, options, UNPROVEN, algorithm="curate")
    result = replace(result, ledger=ledger)
    info = {
        "algorithm": "curate",
        "epsilon_total": epsilon_total,
        "delta_prime": delta_prime,
        "delta_total": delta_total,
        "alpha": threshold,
        "beta1": beta1,
        "beta2": beta2,
        "sensitivity": sensitivity,
        "differentially_private": private,
        "subsample_rate": q,
        "composition": composition,
        "orders": decider.orders,
        "epsilon_curate": spent[0],
        "delta_curate": spent[1],
        "stop_reason": decider.stop_reason,
        "n_computed": tester.n_computed,
    }
    return replace(result, info=info, stopped_early=result.stopped_early or bool(decider.stop_reason))


CURATE = PrivateAlgorithm(
    name="curate", label="CURATE", data="categorical", relation=RELATION, public=PUBLIC, budget="total",
    budget_arg="epsilon_total", run=curate, privacy_map=worst_case, delta_arg="delta_total",
    theorem="Bhattacharjee & Tandon 2024, Alg. 1")
"""CURATE (constraint-based) as a :class:`~dpcd.discovery.algorithm.PrivateAlgorithm`."""

"""AIM-PC: PC on differentially private synthetic data from AIM (McKenna, Mullins, Sheldon & Miklau 2022).

AIM is the adaptive successor of MST (:mod:`dpcd.discovery.mst_pc`). From a
workload of marginals (here every set of ``workload_order`` columns, 3 by
default) it measures all one-way marginals, then, round after round, selects
with the exponential mechanism the marginal of the workload's downward closure
whose current estimate is worst — the quality of a set r is

    q_r = w_r · (‖M_r(D) − M_r(p̂)‖₁ − √(2/π) · σ · |cells of r|),

the L1 error of the model p̂ fitted so far minus the error a measurement at
noise σ is expected to leave, weighted by w_r = Σ_{s ∈ workload} |r ∩ s| —
measures it with the Gaussian mechanism and refits p̂ to every measurement
so far (the least-squares estimator of Private-PGM, by entropic mirror
descent). When a measurement barely moves the estimate (its L1 change below
√(2/π) · σ · cells) the noise is halved and the selection ε doubled
(annealing); the run stops when the budget is spent. AIM-PC then runs PC with
G² (``alpha``) on the fitted distribution scaled to n — the expected counts of
n synthetic records, which :func:`aim_synthetic` draws for a user who wants
the records themselves. Reading the table rather than one draw of it spares PC
a second layer of sampling noise as large as the data's own.

Budget (ρ-zCDP, :mod:`dpcd.privacy.zcdp`): ρ = ``zcdp_rho(ε, δ)``; T =
``rounds_per_column`` · d rounds are planned; a measurement at σ costs 1/σ²
(one replaced record moves a marginal by √2 in L2), a selection at ε costs
ε²/8; the plan gives every round 0.9 ρ/T to the measurement and 0.1 ρ/T to
the selection, the d one-way marginals 0.9 ρ d/T, and the round that would
leave less than two rounds' cost spends all that is left.

Privacy
-------
Relation: replace one record (n public). Public: n, the domain sizes, ε, δ,
``alpha``, ``workload_order``, ``rounds_per_column``, ``max_cells``.

**Theorem.** Any run of :func:`aim_pc` with ``epsilon_total`` = ε and ``delta``
= δ is (ε, δ)-DP under replace-one.

*Proof.* Replacing one record moves one count from one cell to another in
every marginal, so a marginal moves by √2 in L2 and the d one-way tables
together by √(2d): a Gaussian release at σ per cell is 1/σ²-zCDP (d/σ² for the
one-way tables) [BS16, Prop. 1.6]. ‖M_r(D) − M_r(p̂)‖₁ moves by at most 2 (p̂ is
fixed by earlier releases), so q_r moves by at most 2 w_r ≤ Δ = 2 max_r w_r, and
the exponential mechanism with weights exp(ε q / (2Δ)) is ε-bounded-range and
so ε²/8-zCDP [CR21, Lemma 3.2]. Each round's σ and ε are functions of earlier
releases (annealing reads the fitted p̂ only) and of the budget left; the run
measures only while the costs spent so far plus the next round's stay within ρ
(the last round spends exactly what is left, shrunk by 10⁻¹² against
rounding). Zero-concentrated DP is Rényi DP of order a with ε(a) = ρa for every
a > 1, and Rényi DP composes under fully adaptive choice of each step's
parameters while the sum of the chosen costs is bounded by a fixed total (the
Rényi filter, [FZ21, Thm. 3.1]; applied at every order a): the run is ρ-zCDP,
which is (ε, δ)-DP at ρ = zcdp_rho(ε, δ) [CKS20, Prop. 12]. Fitting p̂, PC on
n · p̂ and drawing records read only released and public values:
post-processing. ∎

The run's ledger holds **one** charge, the filter's: (zcdp_epsilon(ρ_spent, δ),
δ) as a generic approximate-DP step, so every total the ledger reports is the
theorem's (ε, δ), which :func:`worst_case` states (the filter spends ρ
exactly). The rounds' own costs (:attr:`AimModel.costs`) are not charged one by
one: their parameters depend on earlier releases, and a composition that treats
them as fixed in advance (the ledger's PLD accountant) is not the theorem.

Deviations from the paper, one sentence each: the estimate is the full
contingency table (Private-PGM's estimator with the table as its graphical
model), so AIM-PC runs only where ∏ |V_i| ≤ ``max_cells`` and refuses larger
domains before reading any data (child, alarm), and the paper's model-size
limit on candidates, a bound on junction-tree size, has no work to do;
replace-one sensitivities (the paper states add/remove: √2 and 2 here where
it has 1); PC reads the fitted table, not one draw of synthetic records.

References
----------
McKenna, Mullins, Sheldon & Miklau (2022), "AIM: An Adaptive and Iterative Mechanism for Differentially Private
Synthetic Data", PVLDB 15(11). McKenna, Sheldon & Miklau (2019), "Graphical-model based estimation and inference for
differential privacy", ICML (Private-PGM).
.. [BS16] Bun & Steinke (2016), TCC. .. [CR21] Cesar & Rogers (2021), ALT. .. [CKS20] Canonne, Kamath & Steinke
(2020), NeurIPS. .. [FZ21] Feldman & Zrnic (2021), "Individual privacy accounting via a Rényi filter", NeurIPS.

Examples
--------
>>> from dpcd.datasets import load_bnlearn
>>> sample = load_bnlearn("cancer", 20_000, rng=0)
>>> result = aim_pc(sample.data, levels=sample.levels, epsilon_total=1.0, delta=1e-6, rng=1)
>>> result.ledger.relation, result.info["rounds"] >= 1, round(result.info["rho_spent"] / result.info["rho"], 9)
('replace', True, 1.0)
>>> AIM_PC.name, AIM_PC.relation.name, AIM_PC.budget_arg, AIM_PC.differentially_private
('aim_pc', 'replace', 'epsilon_total', True)
>>> worst = AIM_PC.privacy_map(epsilon_total=1.0, delta=1e-6, p=5)
>>> worst.epsilon, worst.delta, worst.accountant
(1.0, 1e-06, 'zcdp')
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import special

from ..privacy import PrivacyLedger
from ..privacy.mechanisms import exponential_mechanism, gaussian_noise
from ..privacy.relation import REPLACE_ONE, WorstCase
from ..privacy.zcdp import zcdp_epsilon, zcdp_rho
from ..schema import check_codes, public_levels
from ..validation import RngLike, as_rng, check_delta, check_epsilon, check_int, check_probability
from .algorithm import PrivateAlgorithm
from .counted import as_codes, code_rows, marginal_table, named
from .pc import PCResult, node_names_of, run_pc
from .tables import NoisyTableDecider, all_marginals, check_table_cells

__all__ = ["AIM_PC", "aim_pc", "aim_synthetic", "aim_table", "worst_case", "workload_weights", "fit_table",
           "selection_quality",
           "AimModel", "RELATION", "PUBLIC", "DEFAULT_WORKLOAD_ORDER", "DEFAULT_ROUNDS_PER_COLUMN",
           "DEFAULT_MAX_CELLS", "MEASURE_SHARE", "REFIT_ITERATIONS", "FINAL_ITERATIONS", "pc_on_table"]

RELATION = REPLACE_ONE
PUBLIC = ("n", "domains")
DEFAULT_WORKLOAD_ORDER = 3
"""The workload: every set of this many columns (AIM's experiments use all 3-way marginals)."""
DEFAULT_ROUNDS_PER_COLUMN = 16
"""T = 16 d planned rounds, the paper's default."""
MEASURE_SHARE = 0.9
"""Share of each round's ρ spent on the measurement (the rest on the selection), the paper's α."""
DEFAULT_MAX_CELLS = 1 << 20
"""The estimate is the full table: refuse domains with more cells (decided from the public domain sizes)."""
REFIT_ITERATIONS = 30
"""Mirror-descent steps of each refit after a round's measurement (warm-started from the last fit)."""
FINAL_ITERATIONS = 300
"""Mirror-descent steps of the fit after the last round: the table PC reads."""
GROWTH = 1.25
"""Mirror descent multiplies its step by this after a step that lowers the loss (and halves it until one does)."""
MARGIN = 1e-12
"""The last round spends what is left shrunk by this fraction of ρ, so rounding never exceeds ρ."""
THEOREM = ("AIM (McKenna, Mullins, Sheldon & Miklau 2022): Gaussian measurements (Bun & Steinke 2016, Prop. 1.6) and "
           "exponential-mechanism selections (Cesar & Rogers 2021, Lemma 3.2) under a zCDP budget filter (Feldman & "
           "Zrnic 2021, Thm. 3.1), converted by Canonne, Kamath & Steinke 2020, Prop. 12; PC on the fitted table is "
           "post-processing")


def workload_weights(d: int, order: int) -> dict[tuple[int, ...], float]:
    """AIM's candidates and weights: every non-empty set r of at most ``order`` of ``d`` columns (the workload's
    downward closure), weighted by w_r = Σ_{s ∈ workload} |r ∩ s| over the workload of all ``order``-sets.

    >>> w = workload_weights(4, 2)
    >>> len(w), w[(0,)], w[(0, 1)]
    (10, 3.0, 6.0)
    """
    d = check_int(d, "d", minimum=1)
    order = min(check_int(order, "order", minimum=1), d)
    workload = list(itertools.combinations(range(d), order))
    return {r: float(sum(len(set(r) & set(s)) for s in workload))
            for size in range(1, order + 1) for r in itertools.combinations(range(d), size)}


def selection_quality(exact: dict[tuple[int, ...], np.ndarray], model: dict[tuple[int, ...], np.ndarray],
                      weights: dict[tuple[int, ...], float], sigma: float) -> list[float]:
    """AIM's quality of every candidate r (in the order of ``weights``): w_r (‖M_r(D) − M_r(p̂)‖₁ − √(2/π) σ |r|),
    ``exact`` the data's marginals (counts), ``model`` the fitted ones. One replaced record moves the L1 term by at
    most 2, so q_r by at most 2 w_r (replace-one).

    >>> selection_quality({(0,): np.array([3.0, 1.0])}, {(0,): np.array([2.0, 2.0])}, {(0,): 2.0}, 0.0)
    [4.0]
    """
    penalty = math.sqrt(2.0 / math.pi) * sigma
    return [weight * (float(np.abs(exact[r] - model[r]).sum()) - penalty * exact[r].size)
            for r, weight in weights.items()]


def _plan(rho: float, d: int, rounds_per_column: int) -> tuple[float, float]:
    """(σ, ε) of a planned round: 0.9 ρ/T on the measurement (1/σ²), 0.1 ρ/T on the selection (ε²/8)."""
    rounds = rounds_per_column * d
    return math.sqrt(rounds / (MEASURE_SHARE * rho)), math.sqrt(8.0 * (1.0 - MEASURE_SHARE) * rho / rounds)


def worst_case(*, epsilon_total: float, delta: float, p: int,
               rounds_per_column: int = DEFAULT_ROUNDS_PER_COLUMN) -> WorstCase:
    """The data-independent guarantee of any :func:`aim_pc` run on ``p`` columns: (``epsilon_total``, ``delta``).

    >>> worst = worst_case(epsilon_total=1.0, delta=1e-6, p=8)
    >>> worst.epsilon, worst.accountant, worst.parameters["planned_rounds"]
    (1.0, 'zcdp', 128)
    """
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    delta = check_delta(delta)
    p = check_int(p, "p", minimum=1)
    rounds_per_column = check_int(rounds_per_column, "rounds_per_column", minimum=2)
    rho = zcdp_rho(epsilon_total, delta)
    sigma, eps_round = _plan(rho, p, rounds_per_column)
    return WorstCase("aim_pc", RELATION, epsilon_total, delta, PUBLIC, THEOREM, "zcdp", None,
                     {"epsilon_total": epsilon_total, "delta": delta, "rho": rho, "planned_rounds": rounds_per_column * p,
                      "sigma_planned": sigma, "epsilon_selection_planned": eps_round})


def _loss_and_gradient(theta: np.ndarray, hosts: list) -> tuple[float, np.ndarray]:
    """Σ_r w_r ‖μ_r(p) − y_r‖² and its gradient in p (broadcast to the table), p = softmax(θ).

    ``hosts``: (axes summed out of the table, broadcast shape, items) per maximal measured set h, each item
    (y_r, w_r, axes of h summed out for r, broadcast shape within h): one pass over the table per host for the
    marginals and one for the gradient, whatever the number of sets inside it."""
    p = np.exp(theta - special.logsumexp(theta))
    loss, gradient = 0.0, np.zeros_like(theta)
    for drop, shape, items in hosts:
        host = p.sum(axis=drop) if drop else p
        host_gradient = np.zeros_like(host)
        for y, weight, inner, inner_shape in items:
            diff = (host.sum(axis=inner) if inner else host) - y
            loss += weight * float(np.dot(diff.ravel(), diff.ravel()))
            host_gradient += (2.0 * weight * diff).reshape(inner_shape)
        gradient += host_gradient.reshape(shape)
    return loss, gradient


def _hosts(shape: tuple[int, ...], measurements: dict, n: int) -> list:
    """The measurements grouped under the maximal measured sets that contain them (see :func:`_loss_and_gradient`),
    the targets in probabilities and the weights divided by the largest."""
    d = len(shape)
    largest = max(weight for _, weight in measurements.values())
    maximal = [r for r in measurements if not any(set(r) < set(s) for s in measurements)]
    grouped: dict[tuple[int, ...], list] = {h: [] for h in maximal}
    for attrs, (y, weight) in measurements.items():
        h = next(h for h in maximal if set(attrs) <= set(h))
        inner = tuple(i for i, a in enumerate(h) if a not in attrs)
        grouped[h].append((np.asarray(y, dtype=np.float64) / n, weight / largest, inner,
                           tuple(shape[a] if a in attrs else 1 for a in h)))
    return [(tuple(a for a in range(d) if a not in h), tuple(shape[a] if a in h else 1 for a in range(d)), items)
            for h, items in grouped.items()]


def fit_table(levels: Sequence[int], measurements: dict[tuple[int, ...], tuple[np.ndarray, float]], n: int, *,
              start: np.ndarray | None = None, iterations: int = 300, step: float | None = None,
              tolerance: float = 1e-10) -> tuple[np.ndarray, float]:
    """Private-PGM's estimator on the full table: the distribution p minimising Σ_r W_r ‖n μ_r(p) − ȳ_r‖².

    ``measurements`` maps a column set r (increasing) to (ȳ_r, W_r): the
    inverse-variance average of its noisy measurements (counts, shape
    ``levels[r]``) and the sum of their inverse variances — for Gaussian noise
    the same loss as one term per measurement. Entropic mirror descent on the
    log-table θ (``start``, warm start) with a step that grows by
    :data:`GROWTH` after a step that lowers the loss and halves until one does; stops after ``iterations``
    or when a step lowers the loss by less than ``tolerance`` (relative).
    Returns (θ, the last step). Post-processing: reads only the measurements.

    >>> p = np.array([[0.4, 0.1], [0.1, 0.4]]) * 1000
    >>> theta, _ = fit_table((2, 2), {(0, 1): (p, 1.0)}, 1000, iterations=500)
    >>> np.round(np.exp(theta) / np.exp(theta).sum() * 1000).tolist()
    [[400.0, 100.0], [100.0, 400.0]]
    """
    shape = tuple(int(k) for k in levels)
    if not measurements:
        return (np.zeros(shape) if start is None else start), (1.0 if step is None else step)
    hosts = _hosts(shape, measurements, n)
    theta = np.zeros(shape) if start is None else np.array(start, dtype=np.float64)
    step = 1.0 / (2.0 * sum(w for *_, items in hosts for _, w, _, _ in items)) if step is None else step
    loss, gradient = _loss_and_gradient(theta, hosts)
    for _ in range(iterations):
        for _ in range(60):
            candidate = theta - step * gradient
            new_loss, new_gradient = _loss_and_gradient(candidate, hosts)
            if new_loss < loss:
                break
            step *= 0.5
        else:
            break
        improvement = loss - new_loss
        theta, loss, gradient = candidate, new_loss, new_gradient
        step *= GROWTH
        if improvement <= tolerance * max(loss, 1e-300):
            break
    return theta - theta.max(), step


@dataclass(frozen=True)
class AimModel:
    """The outcome of an AIM run: the fitted table (counts, n · p̂), the measured sets in order, the run's ρ and
    what it spent, the ledger (one charge: the zCDP filter's (ε, δ)), and the zCDP cost of every step in order
    (``(step, ρ_i)``; Σ ρ_i = ``rho_spent``)."""

    table: np.ndarray
    measured: tuple[tuple[int, ...], ...]
    rho: float
    rho_spent: float
    annealed: int
    ledger: PrivacyLedger
    costs: tuple[tuple[str, float], ...]


def _marginals(table: np.ndarray, order: int) -> dict[tuple[int, ...], np.ndarray]:
    out: dict[tuple[int, ...], np.ndarray] = {}
    for size in range(1, order + 1):
        out.update(all_marginals(table, size))
    return out


def aim_table(data, *, levels, epsilon_total: float, delta: float = 1e-6, rng: RngLike,
              workload_order: int = DEFAULT_WORKLOAD_ORDER, rounds_per_column: int = DEFAULT_ROUNDS_PER_COLUMN,
              max_cells: int = DEFAULT_MAX_CELLS, iterations: int = REFIT_ITERATIONS,
              final_iterations: int = FINAL_ITERATIONS) -> AimModel:
    """Run AIM on categorical ``data`` (integer codes) and return the fitted table: (``epsilon_total``,
    ``delta``)-DP under replace-one (the module's theorem).

    ``iterations`` / ``final_iterations``: mirror-descent steps of each refit / of the last one (public).
    Refuses (``ValueError``) domains of more than ``max_cells`` cells before reading the data.
    """
    return _aim(data, levels=levels, epsilon_total=epsilon_total, delta=delta, rng=rng, workload_order=workload_order,
                rounds_per_column=rounds_per_column, max_cells=max_cells, iterations=iterations,
                final_iterations=final_iterations, noise_factor=1.0)


def _aim(data, *, levels, epsilon_total: float, delta: float, rng: RngLike, workload_order: int,
         rounds_per_column: int, max_cells: int, iterations: int, final_iterations: int,
         noise_factor: float) -> AimModel:
    """:func:`aim_table` with every measurement's noise multiplied by ``noise_factor`` (1 in every release; the
    audit's broken variant measures with 1e-6, i.e. without noise, and keeps the claim)."""
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    delta = check_delta(delta)
    workload_order = check_int(workload_order, "workload_order", minimum=1)
    rounds_per_column = check_int(rounds_per_column, "rounds_per_column", minimum=2)
    max_cells = check_int(max_cells, "max_cells", minimum=1)
    codes = as_codes(data)
    n, d = codes.shape
    levels = public_levels(levels, d, node_names_of(data))
    check_table_cells(levels, max_cells, "AIM-PC")
    check_codes(code_rows(codes), levels)
    generator = as_rng(rng)
    order = min(workload_order, d)
    weights = workload_weights(d, order)
    candidates = list(weights)
    exact = {r: marginal_table(codes, levels, r) for r in candidates}
    sensitivity = 2.0 * max(weights.values())
    rho = zcdp_rho(epsilon_total, delta)
    sigma, eps_round = _plan(rho, d, rounds_per_column)
    ledger = PrivacyLedger("replace", public=PUBLIC)
    store: dict[tuple[int, ...], list] = {}

    def measure(r: tuple[int, ...], scale: float) -> None:
        """Release the marginal table of ``r`` with N(0, (``scale`` · noise_factor)²) per cell and fold it into
        the inverse-variance average of every measurement of ``r`` so far (one zCDP round, charged by the caller)."""
        noisy = exact[r] + gaussian_noise(scale * noise_factor, exact[r].shape, rng=generator)
        total = store.setdefault(r, [np.zeros(exact[r].shape), 0.0])
        total[0] += noisy / (scale * noise_factor) ** 2
        total[1] += 1.0 / (scale * noise_factor) ** 2

    def measurements() -> dict[tuple[int, ...], tuple[np.ndarray, float]]:
        return {r: (s / w, w) for r, (s, w) in store.items()}

    for j in range(d):
        measure((j,), sigma)
    spent = d / sigma ** 2
    costs: list[tuple[str, float]] = [("one-way marginals", spent)]
    theta, step = fit_table(levels, measurements(), n, iterations=iterations)
    fitted = np.exp(theta) / np.exp(theta).sum() * n
    model = _marginals(fitted, order)
    measured: list[tuple[int, ...]] = []
    annealed = 0
    while True:
        remaining = rho - spent
        final = remaining < 2.0 * (1.0 / sigma ** 2 + eps_round ** 2 / 8.0)
        if final:
            remaining = max(remaining - MARGIN * rho, 0.0)
            if remaining <= 0.0:
                break
            sigma = math.sqrt(1.0 / (MEASURE_SHARE * remaining))
            eps_round = math.sqrt(8.0 * (1.0 - MEASURE_SHARE) * remaining)
        spent += 1.0 / sigma ** 2 + eps_round ** 2 / 8.0
        penalty = math.sqrt(2.0 / math.pi) * sigma
        quality = selection_quality(exact, model, weights, sigma)
        chosen = candidates[exponential_mechanism(quality, epsilon=eps_round, sensitivity=sensitivity,
                                                  rng=generator)]
        costs.append(("selection (exponential mechanism)", eps_round ** 2 / 8.0))
        measure(chosen, sigma)
        costs.append((f"marginal {chosen}", 1.0 / sigma ** 2))
        measured.append(chosen)
        before = model[chosen]
        theta, step = fit_table(levels, measurements(), n, start=theta, step=step,
                                iterations=final_iterations if final else iterations)
        fitted = np.exp(theta) / np.exp(theta).sum() * n
        if final:
            break
        model = _marginals(fitted, order)  # read by the anneal test now and by the next round's selection
        if float(np.abs(model[chosen] - before).sum()) <= penalty * before.size:
            sigma, eps_round = sigma / 2.0, eps_round * 2.0
            annealed += 1
    ledger.charge("AIM rounds under a zCDP filter", epsilon=zcdp_epsilon(spent, delta, positive=True), delta=delta,
                  kind="approx",
                  note=f"{spent:.6g} of {rho:.6g} zCDP in {len(costs)} adaptively chosen steps (Renyi filter)")
    return AimModel(fitted, tuple(measured), rho, spent, annealed, ledger, tuple(costs))


def aim_synthetic(data, *, levels, epsilon_total: float, delta: float = 1e-6, rng: RngLike,
                  **options) -> pd.DataFrame:
    """n synthetic records (integer codes, the data's columns) drawn from AIM's fitted table: (``epsilon_total``,
    ``delta``)-DP under replace-one; ``options`` as :func:`aim_table`.

    >>> from dpcd.datasets import load_bnlearn
    >>> sample = load_bnlearn("earthquake", 5_000, rng=0)
    >>> aim_synthetic(sample.data, levels=sample.levels, epsilon_total=1.0, rng=0).shape
    (5000, 5)
    """
    generator = as_rng(rng)
    model = aim_table(data, levels=levels, epsilon_total=epsilon_total, delta=delta, rng=generator, **options)
    n = int(round(model.table.sum()))
    p = model.table.ravel() / model.table.sum()
    cells = np.repeat(np.arange(p.size), generator.multinomial(n, p))
    generator.shuffle(cells)
    return pd.DataFrame(np.column_stack(np.unravel_index(cells, model.table.shape)), columns=node_names_of(data))


def aim_pc(data, *, levels, epsilon_total: float, delta: float = 1e-6, alpha: float = 0.01, rng: RngLike,
           workload_order: int = DEFAULT_WORKLOAD_ORDER, rounds_per_column: int = DEFAULT_ROUNDS_PER_COLUMN,
           max_cells: int = DEFAULT_MAX_CELLS, max_order: int | None = None, max_tests: int | None = None,
           node_names: Sequence[str] | None = None) -> PCResult:
    """PC (G², ``alpha``, two-sided) on AIM's fitted table of categorical ``data``: (``epsilon_total``,
    ``delta``)-DP under replace-one (the module's theorem; n and the domains public).

    Parameters as in :func:`dpcd.discovery.mst_pc.mst_pc`, and ``workload_order``, ``rounds_per_column``,
    ``max_cells`` as in :func:`aim_table`. ``info`` holds the rounds run, the measured sets, how often the noise
    was halved, ρ and the ρ spent.
    """
    alpha = check_probability(alpha, "alpha")
    names = node_names_of(data, node_names)
    frame = data if node_names is None else named(data, names)
    model = aim_table(frame, levels=levels, epsilon_total=epsilon_total, delta=delta, rng=rng,
                      workload_order=workload_order, rounds_per_column=rounds_per_column, max_cells=max_cells)
    result, decider = pc_on_table(model.table, names, alpha, max_order=max_order, ledger=model.ledger,
                                  max_tests=max_tests)
    return replace(result, info={"algorithm": "aim_pc", "epsilon_total": epsilon_total, "delta": delta,
                                 "alpha": alpha, "rounds": len(model.measured),
                                 "measured": [tuple(names[j] for j in r) for r in model.measured],
                                 "annealed": model.annealed, "rho": model.rho, "rho_spent": model.rho_spent,
                                 "n_computed": decider.n_computed})


def pc_on_table(table: np.ndarray, names: Sequence[str], alpha: float, *, max_order: int | None = None,
                ledger: PrivacyLedger | None = None, max_tests: int | None = None
                ) -> tuple[PCResult, NoisyTableDecider]:
    """PC with G² tests read from a fitted table of counts (post-processing) and the decider it used.

    >>> table = np.full((2, 2, 2), 125.0)
    >>> len(pc_on_table(table, ["a", "b", "c"], 0.05)[0].skeleton)       # a uniform table: no edge
    0
    """
    decider = NoisyTableDecider(table, alpha)
    return run_pc(list(names), decider, max_order=max_order, ledger=ledger, max_tests=max_tests), decider


def _privacy_map(*, epsilon_total: float, delta: float, p: int, max_order: int | None = None,
                 rounds_per_column: int = DEFAULT_ROUNDS_PER_COLUMN) -> WorstCase:
    return worst_case(epsilon_total=epsilon_total, delta=delta, p=p, rounds_per_column=rounds_per_column)


AIM_PC = PrivateAlgorithm(
    name="aim_pc", label="AIM-PC", data="categorical", relation=RELATION, public=PUBLIC, budget="total",
    budget_arg="epsilon_total", run=aim_pc, privacy_map=_privacy_map, delta_arg="delta", alpha_arg="alpha",
    proof="proven", theorem="McKenna, Mullins, Sheldon & Miklau 2022 (AIM), zCDP filter; PC is post-processing")
"""AIM-PC as a :class:`~dpcd.discovery.algorithm.PrivateAlgorithm`."""

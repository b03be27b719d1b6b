"""NOLEAKS-style differentially private NOTEARS (Ma et al. 2022), and the private
optimiser shared with score-based CURATE.

The linear NOTEARS augmented Lagrangian (:mod:`dpcd.discovery.notears`) is
solved with L-BFGS-B whose gradients are private: every gradient evaluation
computes the least-squares gradient with **per-record** contributions
x_{r,i}·(x_r − x_r W)_j clipped to [−s, s], zeroes the diagonal, and adds
analytic-Gaussian noise N(0, σ²) calibrated to ε_k, δ (Balle & Wang 2018,
the paper's Def. 5 / Eq. 1). The objective that drives the line search is
evaluated on a uniformly drawn subset of m = 1 000 rows, charged once.

Privacy
-------
Neighbouring relation: replace one record; public: n, d, the encoding of the
data. With per-record clipping, replacing one record moves each of the
d(d − 1) released entries of the mean gradient by at most 2s/n, so the ℓ₂
sensitivity is √(d(d − 1))·2s/n — the value NOLEAKS's public artifact uses with
s = 2 (Sec. II of Bhattacharjee & Tandon gives √(d(d−1))·s/n for add/remove).
Each gradient evaluation k is (ε_k, δ)-DP (analytic Gaussian) and is charged
to the ledger; the line-search subset is charged as the artifact does,
(ln((n + 1)/(n + 1 − m)), m/n) — a release of exact statistics of a random
subset, whose δ = m/n is large (0.01 at n = 100 000); it is recorded as an
"approx" charge so that every accountant sees it. Totals: basic composition of
all charges (the papers' accounting) or the ledger's tight accountant.

Deviations from the artifact: it clips the *aggregate* gradient at s, which
does not bound one record's influence; we clip per record (valid sensitivity,
O(n d²) per evaluation). It encodes categories with a frequency-ordered,
truncated-normal model scaled by 20 (the ordering uses private frequencies);
we use :func:`~dpcd.discovery.notears.encode_ordinal` (public domain only).
It draws noise from numpy's global state; we take ``rng``.

References
----------
.. [MJPW22] P. Ma, Z. Ji, Q. Pang, S. Wang. NoLeaks: Differentially Private
   Causal Discovery Under Functional Causal Model. IEEE TIFS 17, 2022.
.. [ZARX18] X. Zheng et al. DAGs with NO TEARS. NeurIPS 2018.
.. [BW18] B. Balle, Y.-X. Wang. Improving the Gaussian Mechanism for
   Differential Privacy. ICML 2018.

Examples
--------
>>> NOLEAKS.name, NOLEAKS.relation.name, NOLEAKS.budget_arg, NOLEAKS.takes_max_order, NOLEAKS.differentially_private
('noleaks', 'replace', 'epsilon_total', False, True)

The line-search subset of m = 1 000 rows puts δ ≈ m/n into the worst case:

>>> worst = NOLEAKS.privacy_map(epsilon_total=1.0, delta=1e-6, n=10_000)
>>> round(worst.epsilon, 9), round(worst.delta, 4)
(1.0, 0.1001)
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..privacy.relation import WorstCase
from ..validation import (
    RngLike,
    check_delta,
    check_epsilon,
    check_int,
)
from .algorithm import PrivateAlgorithm
from .notears import ScoreResult, score_result
from .private_notears import (
    PUBLIC,
    RELATION,
    check_subset_size,
    clipped_gradient,
    gradient_sensitivity,
    line_search_charge,
    prepare_run,
    private_notears,
    score_worst_case,
)

__all__ = ["NOLEAKS", "clipped_gradient", "gradient_sensitivity", "line_search_charge", "private_notears", "noleaks",
           "prepare_run", "worst_case", "RELATION", "PUBLIC", "score_worst_case", "check_subset_size"]

def worst_case(*, epsilon_total: float, delta: float, n: int, max_evaluations: int = 100,
               line_search_size: int = 1000) -> WorstCase:
    """The data-independent guarantee of any :func:`noleaks` run with ``epsilon_total`` (basic composition).

    >>> round(worst_case(epsilon_total=1.0, delta=1e-6, n=10_000).delta, 6)   # m/n = 0.1 from the line-search subset
    0.1001
    """
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    delta = check_delta(delta)
    max_evaluations = check_int(max_evaluations, "max_evaluations", minimum=1)
    eps_ls, _ = line_search_charge(*check_subset_size(n, line_search_size))
    if epsilon_total <= eps_ls:
        raise ValueError(f"epsilon_total={epsilon_total} does not exceed the line-search subset's charge {eps_ls:.4g}")
    budgets = np.full(max_evaluations, (epsilon_total - eps_ls) / max_evaluations)
    return score_worst_case("noleaks", budgets, delta=delta, n=n, line_search_size=line_search_size,
                            theorem="analytic Gaussian per gradient evaluation (Balle & Wang 2018), exact statistics of a random "
                                    "m-row subset (NOLEAKS artifact), basic composition",
                            parameters={"epsilon_total": epsilon_total, "max_evaluations": max_evaluations})


def noleaks(X, *, delta: float, rng: RngLike, epsilon: float | None = None, epsilon_total: float | None = None,
            max_evaluations: int = 100, lambda1: float = 0.1, clip: float = 2.0, w_threshold: float = 0.3,
            line_search_size: int = 1000, max_iter: int = 100, node_names: Sequence[str] | None = None,
            bounds=None) -> ScoreResult:
    """NOLEAKS: private linear NOTEARS with a uniform per-evaluation budget.

    Parameters
    ----------
    X : n × d numeric data (encode categories with ``encode_ordinal``).
    bounds : optional public (lower, upper) per column; the columns are then
        mapped onto [−1, 1] before the run (otherwise used as given).
    delta : δ of every gradient evaluation.
    rng : Generator or seed.
    epsilon : ε of every gradient evaluation (the artifact's setting; the total
        then depends on how many evaluations the optimiser makes, at most
        ``max_evaluations``), or
    epsilon_total : the total to spend: the line-search subset's ε is taken out
        first and the rest split evenly over ``max_evaluations`` evaluations.
    lambda1, w_threshold : ℓ₁ weight and final threshold of NOTEARS.
    clip : per-record clipping bound s (artifact: 2).
    line_search_size : m, rows of the line-search subset (artifact: 1 000).

    Returns a :class:`~dpcd.discovery.notears.ScoreResult` with the ledger
    (replace-one relation; see the module docstring for the guarantee).

    Examples
    --------
    >>> from dpcd.datasets import random_dag, sample_linear_gaussian
    >>> data = sample_linear_gaussian(random_dag(3, 0.7, 0), 2000, 1)
    >>> result = noleaks(data.data, bounds=data.schema(), epsilon_total=2.0, delta=1e-5, rng=2,
    ...                  max_evaluations=5, max_iter=5, line_search_size=100)
    >>> round(result.ledger.total("basic").epsilon, 6) <= 2.0
    True
    """
    if (epsilon is None) == (epsilon_total is None):
        raise ValueError("give exactly one of epsilon (per evaluation) and epsilon_total")
    max_evaluations = check_int(max_evaluations, "max_evaluations", minimum=1)
    names, X, delta, clip, generator, rows, ledger, eps_ls = prepare_run(
        X, node_names, delta, lambda1, clip, w_threshold, line_search_size, rng, bounds)
    if epsilon is not None:
        per_eval = check_epsilon(epsilon)
    else:
        epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
        if epsilon_total <= eps_ls:
            raise ValueError(f"epsilon_total={epsilon_total} does not exceed the line-search subset's charge "
                             f"{eps_ls:.4g}; increase it or lower line_search_size")
        per_eval = (epsilon_total - eps_ls) / max_evaluations
    budgets = np.full(max_evaluations, per_eval)
    W, info = private_notears(X, budgets, delta=delta, rng=generator, ledger=ledger, lambda1=lambda1, clip=clip,
                              max_iter=max_iter, line_search_rows=rows)
    W = W.copy()
    W[np.abs(W) < w_threshold] = 0.0
    info.update({"algorithm": "noleaks", "epsilon_per_evaluation": per_eval, "epsilon_line_search": eps_ls,
                 "delta": delta})
    return score_result(W, names, ledger=ledger, info=info)


NOLEAKS = PrivateAlgorithm(
    name="noleaks", label="NOLEAKS", data="numeric", relation=RELATION, public=PUBLIC, budget="total",
    budget_arg="epsilon_total", run=noleaks, privacy_map=worst_case, delta_arg="delta", alpha_arg=None,
    theorem="Ma et al. 2022", takes_max_order=False, exact_subset=True)
"""NOLEAKS as a :class:`~dpcd.discovery.algorithm.PrivateAlgorithm` (δ = m/n: ``discover`` refuses it)."""

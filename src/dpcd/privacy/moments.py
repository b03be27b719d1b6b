"""One Gaussian mechanism on the sums and second moments of records in the box [−1, 1]^p (replace one record).

A record x of the box contributes v(x) = (x_i; x_i x_j, i < j; x_i²) to the
released sums. For two records every coordinate of v(x) − v(y) is at most 2
in absolute value except the squares, at most 1, so ‖v(x) − v(y)‖₂² ≤ 4p +
4·p(p − 1)/2 + p = 2p² + 3p: the L2 sensitivity under replace-one is
√(2p² + 3p) (:func:`moment_sensitivity`), and N(0, (Δ/μ)²) per released number
is μ-GDP (Dong, Roth & Su 2022, Thm. 2.7). Used by Moment-PC (columns) and
GCM-PC (bounded features of the columns).
"""

from __future__ import annotations

import math

import numpy as np

from ..validation import check_delta, check_epsilon, check_int
from .gdp import gdp_epsilon, gdp_mu
from .ledger import PrivacyLedger
from .mechanisms import gdp_gaussian_mechanism
from .relation import REPLACE_ONE, WorstCase

__all__ = ["moment_sensitivity", "weighted_moment_sensitivity", "noisy_moments", "moment_release_worst_case"]


def moment_sensitivity(p: int) -> float:
    """Replace-one L2 sensitivity of (sums, second moments with the diagonal) of records of [−1, 1]^p: √(2p² + 3p).

    >>> round(moment_sensitivity(20), 3)
    29.326
    """
    p = check_int(p, "p", minimum=1)
    return math.sqrt(2.0 * p * p + 3.0 * p)


def weighted_moment_sensitivity(weights: np.ndarray) -> float:
    """Replace-one L2 sensitivity of (sums, second moments with the diagonal) of records w ∘ x, x ∈ [−1, 1]^p.

    Coordinates move by at most 2w_i (sums), 2w_i w_j (cross moments) and w_i² (squares):
    Δ² = 4 S₂ + 2 S₂² − S₄ with S₂ = Σ w_i², S₄ = Σ w_i⁴ (all ones: 2p² + 3p).

    >>> round(weighted_moment_sensitivity(np.ones(20)), 3) == round(moment_sensitivity(20), 3)
    True
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.size < 1 or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError("weights must be a non-empty 1-D array of finite positive numbers")
    s2, s4 = float(np.sum(w ** 2)), float(np.sum(w ** 4))
    return math.sqrt(4.0 * s2 + 2.0 * s2 * s2 - s4)


def noisy_moments(box: np.ndarray, *, mu: float, rng: np.random.Generator,
                  weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """(noisy column sums, noisy second-moment matrix, noise σ) of records already in [−1, 1]^p: one μ-GDP release.

    ``weights`` (public, positive, one per column): the release is of the records w ∘ x, with
    :func:`weighted_moment_sensitivity`, and the sums and moments are returned divided back by w_i and w_i w_j —
    so column i's sum carries noise σ/w_i and moment (i, j) σ/(w_i w_j): a column with a small weight costs
    little sensitivity and is measured with more noise.
    """
    n, p = box.shape
    upper = np.triu_indices(p)
    w = np.ones(p) if weights is None else np.asarray(weights, dtype=np.float64)
    scaled = box * w
    exact = np.concatenate([scaled.sum(axis=0), (scaled.T @ scaled)[upper]])
    sensitivity = moment_sensitivity(p) if weights is None else weighted_moment_sensitivity(w)
    noisy = gdp_gaussian_mechanism(exact, sensitivity=sensitivity, mu=mu, rng=rng)
    second = np.zeros((p, p))
    second[upper] = noisy[p:]
    second = second + np.triu(second, 1).T
    return noisy[:p] / w, second / np.outer(w, w), sensitivity / mu


def moment_release_worst_case(name: str, charge: str, *, epsilon_total: float, delta: float,
                              public: tuple[str, ...], theorem: str, spread_share: float = 0.0,
                              spread_charge: str = "column spreads") -> WorstCase:
    """The data-independent guarantee of an algorithm whose releases are Gaussian mechanisms at a total
    μ = ``gdp_mu(epsilon_total, delta)``: (``epsilon_total``, ``delta``) under replace-one, whatever their
    sensitivities (σ = Δ/μᵢ). The ledger holds one charge at μ (Moment-PC, GCM-PC), or with ``spread_share`` > 0
    the private spread bounds (``spread_charge``) at μ·√share and the moments at μ·√(1 − share)
    (:func:`dpcd.privacy.spread.narrow_and_charge`), which compose to μ-GDP.

    >>> moment_release_worst_case("x", "moments", epsilon_total=1.0, delta=1e-6, public=("n",), theorem="").epsilon
    1.0
    >>> len(moment_release_worst_case("x", "moments", epsilon_total=1.0, delta=1e-6, public=("n",), theorem="",
    ...                               spread_share=0.1).charges.entries)
    2
    """
    from .spread import split_mu

    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    delta = check_delta(delta)
    mu = gdp_mu(epsilon_total, delta)
    ledger = PrivacyLedger("replace", public=public)
    stages = [(charge, mu)]
    if spread_share:
        first, second = split_mu(mu, spread_share)
        stages = [(spread_charge, first), (charge, second)]
    for label, part in stages:
        ledger.charge(label, epsilon=gdp_epsilon(part, delta), delta=delta, kind="gaussian", sensitivity=1.0,
                      scale=1.0 / part)
    return WorstCase(name, REPLACE_ONE, epsilon_total, delta, public, theorem, "gdp", ledger,
                     {"epsilon_total": epsilon_total, "delta": delta, "mu": mu, "spread_share": float(spread_share)})

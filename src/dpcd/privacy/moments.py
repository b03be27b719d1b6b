"""One Gaussian mechanism on the sums and second moments of records in the box [−1, 1]^p (replace one record).

A record x of the box contributes v(x) = (x_i; x_i x_j, i < j; x_i²) to the
released sums. Coordinate by coordinate, v(x) − v(y) is at most 2 in absolute
value except the squares, at most 1, which gives ‖v(x) − v(y)‖₂² ≤ 2p² + 3p
(:func:`weighted_moment_sensitivity`); but not every cross moment can move by 2
at once: a record of the box has ‖x‖₂² ≤ p, and the bound for records of
bounded norm below (R² = p, b = 1) gives p² + 5p, smaller for p ≥ 2 — the L2
sensitivity under replace-one is √(p² + 5p) (:func:`moment_sensitivity`), and
N(0, (Δ/μ)²) per released number is μ-GDP (Dong, Roth & Su 2022, Thm. 2.7).
Used by Moment-PC (columns) and GCM-PC (bounded features of the columns).

**Records of bounded norm.** If every record r is first scaled onto the ball
‖r‖₂ ≤ R (:func:`clip_record_norms`: r ↦ r·min(1, R/‖r‖₂), a fixed map of one
record, so neighbours stay neighbours), the released vector of two records r, r′
differs by r − r′ in the sums, ‖r − r′‖₂² ≤ (‖r‖ + ‖r′‖)² ≤ 4R², and by the
upper triangle (with the diagonal) of M = rrᵀ − r′r′ᵀ in the second moments,
whose squared length is ½(‖M‖_F² + Σ_i M_ii²) with ‖M‖_F² = ‖r‖⁴ + ‖r′‖⁴ −
2(r·r′)² ≤ 2R⁴ and, if every coordinate satisfies |r_i| ≤ b, Σ_i M_ii² =
Σ_i (r_i² − r′_i²)² ≤ Σ_i r_i⁴ + r′_i⁴ ≤ b²(‖r‖² + ‖r′‖²) ≤ 2b²R²: so
Δ ≤ √(4R² + R⁴ + b²R²) (:func:`norm_moment_sensitivity`). Scaling a record
down keeps every coordinate bound, so the smaller of this and the
coordinate-wise bound holds (:func:`release_sensitivity`: b the largest
weight, R the radius, or √Σw_i² without one). The typical record of many
columns has a squared norm well below the sum of its coordinates' squared
bounds, so a radius between the two buys noise at the price of shrinking the
few records beyond it.
"""

from __future__ import annotations

import math

import numpy as np

from ..validation import check_delta, check_epsilon, check_int
from .gdp import gdp_epsilon, gdp_mu
from .ledger import PrivacyLedger
from .mechanisms import gdp_gaussian_mechanism
from .relation import REPLACE_ONE, WorstCase

__all__ = ["moment_sensitivity", "weighted_moment_sensitivity", "norm_moment_sensitivity", "clip_record_norms",
           "release_sensitivity", "moment_vector", "noisy_moments", "moment_release_worst_case"]


def moment_sensitivity(p: int) -> float:
    """Replace-one L2 sensitivity of (sums, second moments with the diagonal) of records of [−1, 1]^p: √(p² + 5p)
    (:func:`release_sensitivity` with unit weights: the bound of records of norm ≤ √p,
    :func:`norm_moment_sensitivity`, at most the coordinate-wise √(2p² + 3p)).

    >>> round(moment_sensitivity(20), 3)
    22.361
    """
    p = check_int(p, "p", minimum=1)
    return release_sensitivity(np.ones(p))


def weighted_moment_sensitivity(weights: np.ndarray) -> float:
    """Replace-one L2 sensitivity of (sums, second moments with the diagonal) of records w ∘ x, x ∈ [−1, 1]^p.

    Coordinates move by at most 2w_i (sums), 2w_i w_j (cross moments) and w_i² (squares):
    Δ² = 4 S₂ + 2 S₂² − S₄ with S₂ = Σ w_i², S₄ = Σ w_i⁴ (all ones: 2p² + 3p; :func:`release_sensitivity` takes
    the smaller norm bound too).

    >>> weighted_moment_sensitivity(np.ones(20)) == math.sqrt(2 * 20 ** 2 + 3 * 20)
    True
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.size < 1 or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError("weights must be a non-empty 1-D array of finite positive numbers")
    s2, s4 = float(np.sum(w ** 2)), float(np.sum(w ** 4))
    return math.sqrt(4.0 * s2 + 2.0 * s2 * s2 - s4)


def norm_moment_sensitivity(radius: float, coordinate_bound: float = 1.0) -> float:
    """Replace-one L2 sensitivity of (sums, second moments with the diagonal) of records of L2 norm at most
    ``radius`` = R whose coordinates are at most ``coordinate_bound`` = b in absolute value: √(4R² + R⁴ + b²R²)
    (module docstring).

    >>> norm_moment_sensitivity(2.0) == math.sqrt(36.0)
    True
    """
    radius = float(radius)
    bound = float(coordinate_bound)
    if not math.isfinite(radius) or radius <= 0:
        raise ValueError(f"radius must be a finite positive number, got {radius}")
    if not math.isfinite(bound) or bound <= 0:
        raise ValueError(f"coordinate_bound must be a finite positive number, got {bound}")
    return math.sqrt(4.0 * radius ** 2 + radius ** 4 + bound ** 2 * radius ** 2)


def clip_record_norms(records: np.ndarray, radius: float) -> np.ndarray:
    """Every row of ``records`` scaled by min(1, ``radius``/‖row‖₂): rows inside the ball are unchanged.

    >>> clip_record_norms(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0).round(12).tolist()
    [[0.6, 0.8], [0.3, 0.4]]
    """
    records = np.asarray(records, dtype=np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", records, records))
    factor = np.minimum(1.0, float(radius) / np.maximum(norms, np.finfo(np.float64).tiny))
    return records * factor[:, None]


def release_sensitivity(weights: np.ndarray, radius: float | None = None) -> float:
    """L2 sensitivity of :func:`noisy_moments`' release with public ``weights`` and, if given, records scaled onto
    the ball of L2 ``radius``: the smaller of :func:`weighted_moment_sensitivity` and
    :func:`norm_moment_sensitivity` at R = min(``radius``, √S₂) with b the largest weight — every weighted record
    of the box has squared norm at most S₂ = Σ w_i², so the norm bound holds without a radius too, and both bounds
    hold for a scaled record.

    >>> release_sensitivity(np.ones(20)) == norm_moment_sensitivity(math.sqrt(20.0))
    True
    >>> release_sensitivity(np.ones(20), radius=math.sqrt(10.0)) == norm_moment_sensitivity(math.sqrt(10.0))
    True
    """
    w = np.asarray(weights, dtype=np.float64)
    sensitivity = weighted_moment_sensitivity(w)
    reach = math.sqrt(float(np.sum(w ** 2)))
    if radius is not None:
        reach = min(reach, float(radius))
    return min(sensitivity, norm_moment_sensitivity(reach, float(np.max(w))))


def moment_vector(box: np.ndarray, weights: np.ndarray | None = None, radius: float | None = None) -> np.ndarray:
    """The exact vector :func:`noisy_moments` adds its noise to: the sums, then the second moments (i ≤ j, row by
    row) of the records w ∘ x, scaled onto the ball of L2 ``radius`` if given.

    >>> moment_vector(np.array([[1.0, -1.0], [0.5, 0.5]])).tolist()
    [1.5, -0.5, 1.25, -0.75, 1.25]
    """
    box = np.asarray(box, dtype=np.float64)
    scaled = box if weights is None else box * np.asarray(weights, dtype=np.float64)
    if radius is not None:
        scaled = clip_record_norms(scaled, radius)
    return np.concatenate([scaled.sum(axis=0), (scaled.T @ scaled)[np.triu_indices(box.shape[1])]])


def noisy_moments(box: np.ndarray, *, mu: float, rng: np.random.Generator,
                  weights: np.ndarray | None = None,
                  radius: float | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """(noisy column sums, noisy second-moment matrix, noise σ) of records already in [−1, 1]^p: one μ-GDP release.

    ``weights`` (public, positive, one per column): the release is of the records w ∘ x, with
    :func:`release_sensitivity`, and the sums and moments are returned divided back by w_i and w_i w_j —
    so column i's sum carries noise σ/w_i and moment (i, j) σ/(w_i w_j): a column with a small weight costs
    little sensitivity and is measured with more noise. ``radius`` (public): the weighted records are first scaled
    onto the ball of that L2 radius (:func:`clip_record_norms`) and :func:`norm_moment_sensitivity` takes that
    radius (module docstring).
    """
    n, p = box.shape
    upper = np.triu_indices(p)
    w = np.ones(p) if weights is None else np.asarray(weights, dtype=np.float64)
    exact = moment_vector(box, w, radius)
    sensitivity = release_sensitivity(w, radius)
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
        ledger.charge(label, epsilon=gdp_epsilon(part, delta, positive=True), delta=delta, kind="gaussian",
                      sensitivity=1.0,
                      scale=1.0 / part)
    return WorstCase(name, REPLACE_ONE, epsilon_total, delta, public, theorem, "gdp", ledger,
                     {"epsilon_total": epsilon_total, "delta": delta, "mu": mu, "spread_share": float(spread_share)})

"""Statistics of an audit: exact binomial intervals and the lower confidence bound on ε they give.

If a mechanism M is (ε, δ)-DP then for neighbours D, D′ and every event E,
P[M(D) ∈ E] ≤ e^ε P[M(D′) ∈ E] + δ. With a lower confidence bound p̲₀ on the
first probability and an upper bound p̄₁ on the second, ε ≥ ln((p̲₀ − δ)/p̄₁)
at the stated confidence (Ding et al. 2018; Jagielski et al. 2020).

Examples
--------
>>> low, high = clopper_pearson(5, 10)
>>> round(low, 3), round(high, 3)
(0.187, 0.813)
>>> round(epsilon_lower_bound(900, 1000, 100, 1000), 2)
1.99
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from scipy import stats

from ..validation import check_delta, check_probability

__all__ = ["clopper_pearson", "epsilon_lower_bound"]


def clopper_pearson(
    k: Any, n: Any, *, confidence: float = 0.95, side: Literal["two-sided", "lower", "upper"] = "two-sided"
) -> tuple[np.ndarray | float, np.ndarray | float]:
    """Clopper–Pearson (exact binomial) confidence interval for ``k`` successes in ``n`` trials.

    ``side="lower"`` gives a one-sided interval [low, 1] at ``confidence``,
    ``"upper"`` gives [0, high], ``"two-sided"`` puts (1 − confidence)/2 in each
    tail [CP34]. Vectorised over ``k`` and ``n``; returns ``(low, high)``
    (floats for scalar input).
    """
    confidence = check_probability(confidence, "confidence")
    if side not in ("two-sided", "lower", "upper"):
        raise ValueError(f"side must be 'two-sided', 'lower' or 'upper', got {side!r}")
    k_arr = np.asarray(k, dtype=np.float64)
    n_arr = np.asarray(n, dtype=np.float64)
    if np.any(n_arr < 1) or np.any(n_arr != np.round(n_arr)):
        raise ValueError("n must hold positive integers")
    if np.any(k_arr < 0) or np.any(k_arr > n_arr) or np.any(k_arr != np.round(k_arr)):
        raise ValueError("k must hold integers between 0 and n")
    tail = 1.0 - confidence if side != "two-sided" else (1.0 - confidence) / 2.0
    with np.errstate(invalid="ignore"):
        low = np.where(k_arr > 0, stats.beta.ppf(tail, k_arr, n_arr - k_arr + 1), 0.0)
        high = np.where(k_arr < n_arr, stats.beta.ppf(1.0 - tail, k_arr + 1, n_arr - k_arr), 1.0)
    if side == "lower":
        high = np.ones_like(high)
    elif side == "upper":
        low = np.zeros_like(low)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def epsilon_lower_bound(
    k0: Any, n0: Any, k1: Any, n1: Any, *, delta: float = 0.0, confidence: float = 0.95
) -> np.ndarray | float:
    """Lower confidence bound on ε from event counts ``k0/n0`` on D and ``k1/n1`` on D′.

    ε̲ = ln((p̲₀ − δ) / p̄₁) with p̲₀ the one-sided Clopper–Pearson lower bound of
    P[M(D) ∈ E] and p̄₁ the upper bound of P[M(D′) ∈ E], each at error
    (1 − confidence)/2, so that with probability ≥ ``confidence`` every ε for
    which the mechanism is (ε, δ)-DP is ≥ ε̲ (union bound). Clipped at 0
    (no information). Vectorised.
    """
    confidence = check_probability(confidence, "confidence")
    delta = check_delta(delta, allow_zero=True)
    per_side = 1.0 - (1.0 - confidence) / 2.0
    low0, _ = clopper_pearson(k0, n0, confidence=per_side, side="lower")
    _, high1 = clopper_pearson(k1, n1, confidence=per_side, side="upper")
    numerator = np.asarray(low0, dtype=np.float64) - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(numerator > 0, np.log(np.maximum(numerator, 1e-300) / np.asarray(high1)), 0.0)
    bound = np.maximum(bound, 0.0)
    return float(bound) if bound.ndim == 0 else bound

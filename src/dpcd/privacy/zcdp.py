"""Zero-concentrated differential privacy (ρ-zCDP): composition by adding ρ, and its (ε, δ) guarantee.

A mechanism is ρ-zCDP when its Rényi divergence of every order α > 1 between
neighbouring data sets is at most ρα [BS16, Def. 1.1]. Facts used here:

* the Gaussian mechanism N(0, σ²) on a query of L2 sensitivity Δ is
  Δ²/(2σ²)-zCDP [BS16, Prop. 1.6] (the same noise is (Δ/σ)-GDP, :mod:`dpcd.privacy.gdp`);
* the exponential mechanism with weights exp(ε q / (2Δ)) (Δ the sensitivity of
  q) is ε-DP and ε-bounded-range, hence ε²/8-zCDP [CR21, Lemma 3.2];
* adaptive composition adds the ρ's [BS16, Lemma 2.3];
* ρ-zCDP implies (ε, δ)-DP with
  δ(ε) = inf_{α>1} exp((α − 1)(αρ − ε)) / (α − 1) · (1 − 1/α)^α  [CKS20, Prop. 12],
  tighter than the classical ε = ρ + 2√(ρ ln(1/δ)) [BS16, Prop. 1.3].

Computation. Writing α = 1 + e^g, the log of the bound is
L(g) = e^g((ρ − ε) + e^g ρ) − g + α ln σ(g) (σ the logistic function, ln σ(g) =
ln(1 − 1/α); the last two terms are summed without cancellation, and αρ − ε is
formed as (ρ − ε) + (α − 1)ρ because α rounds to 1 at the optimum for large ε), and
dL/dα = (2α − 1)ρ + ln(1 − 1/α) − ε,
which increases with α: the optimal order is the unique root of that
derivative, found by Brent's method on g (g ≤ 700, i.e. α ≤ 1 + e^700; any
order gives a valid bound, so a capped order only loosens it). This replaces a
search over α − 1 ∈ [e^−12, e^12], which could miss the optimum for extreme ε/ρ,
and the final e^L is taken of min(L, 0), so no input overflows. The inverses
search on log ρ and log ε over the doubles' whole range and are moved by ulps to
the safe side (ρ never too large, ε never too small; ``math.inf`` when no
double is large enough).

References
----------
.. [BS16] M. Bun, T. Steinke. *Concentrated Differential Privacy: Simplifications, Extensions, and Lower Bounds.*
   TCC 2016.
.. [CR21] M. Cesar, R. Rogers. *Bounding, Concentrating, and Truncating: Unifying Privacy Loss Composition for Data
   Analytics.* ALT 2021.
.. [CKS20] C. Canonne, G. Kamath, T. Steinke. *The Discrete Gaussian for Differential Privacy.* NeurIPS 2020.

Examples
--------
>>> rho = zcdp_rho(1.0, 1e-6)
>>> round(rho, 5), abs(zcdp_delta(1.0, rho) - 1e-6) < 1e-9
(0.02436, True)
>>> zcdp_epsilon(rho, 1e-6) <= 1.0 + 1e-9
True
"""

from __future__ import annotations

import math

from ..validation import check_delta, check_epsilon, check_positive
from .gdp import largest_level, log_root, smallest_epsilon

__all__ = ["zcdp_delta", "zcdp_epsilon", "zcdp_rho"]

_ORDER_CAP = 700.0
"""Largest g = ln(α − 1) considered (e^g must stay a finite double)."""


def _log_sigmoid(g: float) -> float:
    """ln σ(g) = ln(e^g/(1 + e^g)) = ln(1 − 1/α) for α = 1 + e^g, without overflow or cancellation."""
    return -math.log1p(math.exp(-g)) if g > 0 else g - math.log1p(math.exp(g))


def _log_bound(g: float, epsilon: float, rho: float) -> float:
    """L(g) = (α − 1)(αρ − ε) − ln(α − 1) + α ln(1 − 1/α) at α = 1 + e^g [CKS20, Prop. 12]."""
    a1 = math.exp(g)
    # αρ − ε as (ρ − ε) + (α − 1)ρ: α rounds to 1 when α − 1 < 1e-16 (at the optimum for large ε);
    # −ln(α − 1) + α ln(1 − 1/α) without the cancellation of its two terms near α = 1
    tail = a1 * g - (1.0 + a1) * math.log1p(a1) if g <= 0 else -g - (1.0 + a1) * math.log1p(math.exp(-g))
    return a1 * ((rho - epsilon) + a1 * rho) + tail


def _slope(g: float, epsilon: float, rho: float) -> float:
    """dL/dα = (2α − 1)ρ + ln(1 − 1/α) − ε at α = 1 + e^g (increasing in g), clipped to ±1e300."""
    value = (rho - epsilon) + 2.0 * math.exp(g) * rho + _log_sigmoid(g)
    return min(max(value, -1e300), 1e300)


def _log_zcdp_delta(epsilon: float, rho: float) -> float:
    """min(0, min_g L(g)): the log of :func:`zcdp_delta` (no check of the arguments)."""
    low, high = -1.0, 1.0
    while _slope(low, epsilon, rho) >= 0.0 and low > -1e300:
        low = 2.0 * low - 1.0
    while _slope(high, epsilon, rho) <= 0.0 and high < _ORDER_CAP:
        high = min(2.0 * high + 1.0, _ORDER_CAP)
    if _slope(high, epsilon, rho) <= 0.0:
        best = high
    elif _slope(low, epsilon, rho) >= 0.0:
        best = low
    else:
        best = log_root(lambda g: _slope(g, epsilon, rho), low, high)
    return min(0.0, _log_bound(best, epsilon, rho))


def zcdp_delta(epsilon: float, rho: float) -> float:
    """δ(ε) of ρ-zCDP by the conversion of [CKS20, Prop. 12], minimised over the Rényi order α.

    >>> [f"{zcdp_delta(epsilon, 0.1):.3g}" for epsilon in (0.5, 1.0, 2.0)]   # δ falls as ε grows
    ['0.0771', '0.00893', '4.33e-06']
    >>> zcdp_delta(1e6, 1e300), zcdp_delta(1e300, 1.0)   # no overflow: vacuous, then 0
    (1.0, 0.0)
    """
    epsilon = check_positive(epsilon, "epsilon", allow_zero=True)
    rho = check_positive(rho, "rho")
    return float(math.exp(_log_zcdp_delta(epsilon, rho)))


def zcdp_epsilon(rho: float, delta: float, *, positive: bool = False) -> float:
    """The smallest ε with ρ-zCDP ⇒ (ε, δ)-DP by :func:`zcdp_delta`.

    Tighter than the classical ε = ρ + 2√(ρ ln(1/δ)) [BS16, Prop. 1.3]:

    >>> round(zcdp_epsilon(0.1, 1e-6), 4), round(0.1 + 2 * math.sqrt(0.1 * math.log(1e6)), 4)
    (2.1419, 2.4508)

    Raised by ulps until ``zcdp_delta(ε, rho) <= delta`` holds in floating
    point; ``math.inf`` when no double is large enough. ``positive=True``
    returns the smallest positive normal double instead of 0 (for a ledger
    charge, which needs ε > 0).

    >>> 1e308 <= zcdp_epsilon(1e308, 1e-6) < math.inf   # ε ≥ ρ always; no overflow on the way
    True
    """
    rho = check_positive(rho, "rho")
    delta = check_delta(delta)
    return smallest_epsilon(lambda e: _log_zcdp_delta(e, rho), lambda e: zcdp_delta(e, rho), delta, positive=positive)


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest ρ whose ρ-zCDP guarantee gives (ε, δ)-DP by :func:`zcdp_delta` (nudged below rounding).

    Searched on log ρ over the doubles' whole range, so every finite ε > 0
    is answered; ``ValueError`` when even ρ ≈ 1e-304 exceeds δ (ε below ~1e-150).

    >>> rho = zcdp_rho(2.0, 1e-6)
    >>> round(rho, 4), zcdp_delta(2.0, rho) <= 1e-6, round(zcdp_epsilon(rho, 1e-6), 6)
    (0.0882, True, 2.0)
    >>> f"{zcdp_rho(1e300, 1e-300):.3g}"   # about ε²/(4 ln(1/δ)) would overflow; ρ ≈ ε − 2√(ε ln(1/δ))
    '1e+300'
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    return largest_level(lambda r: _log_zcdp_delta(epsilon, r), lambda r: zcdp_delta(epsilon, r), delta,
                         epsilon=epsilon, what="rho")

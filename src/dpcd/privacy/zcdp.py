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

import numpy as np
from scipy import optimize

from ..validation import check_delta, check_epsilon, check_positive

__all__ = ["zcdp_delta", "zcdp_epsilon", "zcdp_rho"]


def zcdp_delta(epsilon: float, rho: float) -> float:
    """δ(ε) of ρ-zCDP by the conversion of [CKS20, Prop. 12], minimised over the Rényi order α.

    >>> [f"{zcdp_delta(epsilon, 0.1):.3g}" for epsilon in (0.5, 1.0, 2.0)]   # δ falls as ε grows
    ['0.0771', '0.00893', '4.33e-06']
    """
    epsilon = check_positive(epsilon, "epsilon", allow_zero=True)
    rho = check_positive(rho, "rho")

    def log_delta(log_alpha_minus_one: float) -> float:
        a = 1.0 + math.exp(log_alpha_minus_one)
        return ((a - 1.0) * (a * rho - epsilon) - math.log(a - 1.0) + a * math.log1p(-1.0 / a))

    grid = np.linspace(-12.0, 12.0, 481)
    values = [log_delta(g) for g in grid]
    best = int(np.argmin(values))
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    result = optimize.minimize_scalar(log_delta, bounds=(low, high), method="bounded", options={"xatol": 1e-12})
    return float(min(1.0, math.exp(min(result.fun, values[best]))))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The smallest ε with ρ-zCDP ⇒ (ε, δ)-DP by :func:`zcdp_delta`.

    Tighter than the classical ε = ρ + 2√(ρ ln(1/δ)) [BS16, Prop. 1.3]:

    >>> round(zcdp_epsilon(0.1, 1e-6), 4), round(0.1 + 2 * math.sqrt(0.1 * math.log(1e6)), 4)
    (2.1419, 2.4508)
    """
    rho = check_positive(rho, "rho")
    delta = check_delta(delta)
    if zcdp_delta(0.0, rho) <= delta:
        return 0.0
    high = 1.0
    while zcdp_delta(high, rho) > delta:
        high *= 2.0
    return float(optimize.brentq(lambda e: zcdp_delta(e, rho) - delta, 0.0, high, xtol=1e-13, rtol=1e-12))


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest ρ whose ρ-zCDP guarantee gives (ε, δ)-DP by :func:`zcdp_delta` (nudged below rounding).

    >>> rho = zcdp_rho(2.0, 1e-6)
    >>> round(rho, 4), zcdp_delta(2.0, rho) <= 1e-6, round(zcdp_epsilon(rho, 1e-6), 6)
    (0.0882, True, 2.0)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    high = epsilon
    while zcdp_delta(epsilon, high) < delta:
        high *= 2.0
    rho = float(optimize.brentq(lambda r: zcdp_delta(epsilon, r) - delta, 1e-14, high, xtol=1e-16, rtol=1e-13))
    while zcdp_delta(epsilon, rho) > delta:
        rho = math.nextafter(rho, 0.0)
    return rho

"""Gaussian differential privacy (μ-GDP): the exact privacy of composed Gaussian mechanisms.

A mechanism is μ-GDP when distinguishing any two neighbouring data sets from
its output is at least as hard as telling N(0, 1) from N(μ, 1) [DRS22, Def. 2.6].
Three facts make it the natural accountant for algorithms built from Gaussian
noise:

* the Gaussian mechanism adding N(0, σ²) to a query of L2 sensitivity Δ is
  (Δ/σ)-GDP [DRS22, Thm. 2.7], under the relation Δ is stated for;
* the adaptive composition of mechanisms that are μ₁-, …, μ_k-GDP — each for
  every value of the earlier outputs, the μ_i fixed in advance — is
  √(Σ μ_i²)-GDP, exactly [DRS22, Cor. 3.3];
* μ-GDP is (ε, δ(ε))-DP for every ε ≥ 0 with
  δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), and for no smaller δ [DRS22, Cor. 2.13].

So a run that spends μ-GDP is (ε, δ)-DP for exactly the pairs on that curve;
:func:`gdp_mu` inverts it for a requested (ε, δ).

References
----------
.. [DRS22] J. Dong, A. Roth, W. J. Su. *Gaussian Differential Privacy.* JRSS-B 84(1), 2022.

Examples
--------
>>> mu = gdp_mu(1.0, 1e-6)
>>> round(mu, 4), abs(gdp_delta(1.0, mu) - 1e-6) < 1e-12
(0.2367, True)
>>> round(gdp_epsilon(mu, 1e-6), 6)
1.0
"""

from __future__ import annotations

import math

from scipy import optimize, special

from ..validation import check_delta, check_epsilon, check_positive

__all__ = ["gdp_delta", "gdp_epsilon", "gdp_mu", "compose_gdp"]


def _log_phi(x: float) -> float:
    return float(special.log_ndtr(x))


def gdp_delta(epsilon: float, mu: float) -> float:
    """δ(ε) of μ-GDP: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) [DRS22, Cor. 2.13], computed in logs.

    >>> round(gdp_delta(0.0, 1.0), 6)   # ε = 0: the total variation distance of N(0, 1) and N(1, 1)
    0.382925
    """
    epsilon = check_positive(epsilon, "epsilon", allow_zero=True)
    mu = check_positive(mu, "mu")
    first = _log_phi(-epsilon / mu + mu / 2.0)
    second = epsilon + _log_phi(-epsilon / mu - mu / 2.0)
    if second >= first:
        return 0.0
    return float(math.exp(first) * -math.expm1(second - first))


def gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest ε with μ-GDP ⇒ (ε, δ)-DP (0 when δ is already reached at ε = 0).

    >>> gdp_epsilon(0.5, 0.9)
    0.0
    """
    mu = check_positive(mu, "mu")
    delta = check_delta(delta)
    if gdp_delta(0.0, mu) <= delta:
        return 0.0
    hi = 1.0
    while gdp_delta(hi, mu) > delta:
        hi *= 2.0
    return float(optimize.brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, hi, xtol=1e-13, rtol=1e-13))


def gdp_mu(epsilon: float, delta: float) -> float:
    """The largest μ whose μ-GDP guarantee implies (ε, δ)-DP: the noise level a total budget allows.

    δ(ε) increases with μ, so the root is unique; the returned μ satisfies
    ``gdp_delta(epsilon, mu) <= delta`` (it is nudged down past rounding).

    >>> mu = gdp_mu(1.0, 1e-6)
    >>> round(mu, 4), gdp_delta(1.0, mu) <= 1e-6
    (0.2367, True)
    >>> round(gdp_mu(0.5, 1e-6), 4), round(gdp_mu(2.0, 1e-6), 4)   # a larger budget allows a larger μ
    (0.1241, 0.4483)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    hi = 1.0
    while gdp_delta(epsilon, hi) < delta:
        hi *= 2.0
    mu = float(optimize.brentq(lambda m: gdp_delta(epsilon, m) - delta, 1e-12, hi, xtol=1e-15, rtol=1e-14))
    while gdp_delta(epsilon, mu) > delta:
        mu = math.nextafter(mu, 0.0)
    return mu


def compose_gdp(*mus: float) -> float:
    """√(Σ μ_i²): the adaptive composition of μ_i-GDP mechanisms [DRS22, Cor. 3.3].

    >>> compose_gdp(0.3, 0.4)
    0.5
    """
    return math.sqrt(math.fsum(check_positive(m, "mu", allow_zero=True) ** 2 for m in mus))

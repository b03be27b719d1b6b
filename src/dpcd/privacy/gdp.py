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

Every function here accepts every finite ε ≥ 0 and δ ∈ (0, 1): δ(ε) is
evaluated in logs (``log_ndtr``, no e^ε is ever formed) or, where μ/2 + ε/μ < 1
and both Φ's are too close to ½ for that (δ(0) ≈ 0.4μ came out 0 below
μ ≈ 1e-16), as φ(ε/μ) times a Gauss-Legendre integral; the inverses
search on log μ or log ε over the whole range of doubles rather than by
doubling a bracket, which overflowed for ε beyond ~1e308 and lost its lower
end for δ below ~1e-13. Their results are then moved by ulps until they are
on the safe side of the curve (μ never too large, ε never too small), and
an ε beyond the largest double is returned as ``math.inf`` (a true, vacuous
bound). Above ε = :data:`LARGE_EPSILON` (1e10) the exact curve cannot be
evaluated in doubles (its two terms cancel to ~1e-16·√ε), so δ(ε) is replaced
by the upper bound Φ(a⁺) ≥ Φ(a) ≥ δ(ε) with a = μ/2 − ε/μ rounded up by its
error bound, and μ (ε) carries a further relative margin of 1e-12 down (up):
still a correct guarantee, at a cost in noise of 1e-12 of σ.

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
from collections.abc import Callable

import numpy as np
from scipy import integrate, optimize, special

from ..validation import check_delta, check_epsilon, check_positive

__all__ = ["gdp_delta", "gdp_epsilon", "gdp_mu", "compose_gdp"]

LOG_SMALLEST = -700.0
"""log of the smallest μ or ε searched (about 1e-304, a normal double)."""
LOG_LARGEST = math.log(1.7976931348623157e308)
"""log of the largest double: the largest μ or ε searched."""
LOG_ZERO = -1e4
"""Stand-in for log 0 in the searches (any δ below the smallest double is 0)."""
SMALLEST_NORMAL = 2.2250738585072014e-308
"""The smallest positive normal double (``sys.float_info.min``): the ε a ledger records for a (0, δ)-DP step."""
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(24)


def _log_phi(x: float) -> float:
    return float(special.log_ndtr(x))


LARGE_EPSILON = 1e10
"""Above this ε, δ(ε) is evaluated by the upper bound :func:`large_epsilon_log_delta` instead of the exact curve."""
_LARGE_MARGIN = 1e-12
"""Relative margin of :func:`gdp_mu` (down) and :func:`gdp_epsilon` (up) above :data:`LARGE_EPSILON`."""


def large_epsilon_log_delta(epsilon: float, mu: float, log_scale: float = 0.0) -> float:
    """log of an upper bound on δ(ε) of μ-GDP for very large ε: log Φ(a⁺), a⁺ ≥ a = μ/2 − ε/μ.

    δ(ε) = Φ(a) − e^ε Φ(b) ≤ Φ(a) (b = −μ/2 − ε/μ; the subtracted term is ≥ 0, and
    below |a|/|b| ≤ |a|/√(2ε) of Φ(a) here, so the bound is close). At large ε
    the two halves of a = μ/2 − ε/μ nearly cancel (each is about √(ε/2)), so
    a is rounded up by a bound on its floating-point error, (4 + 2|``log_scale``|)
    units in the last place of μ/2 + ε/μ, where ``log_scale`` is the log of the
    quantity μ was obtained from by one exp (it covers that rounding too). The
    exact formula cannot be evaluated there: one ulp of μ moves a by ~1e-16·√ε,
    and ε + log Φ(b) loses everything to cancellation.
    """
    half, ratio = 0.5 * mu, epsilon / mu
    if ratio == math.inf:  # a = −∞ (μ negligible against ε): δ = 0
        return -math.inf
    a_up = (half - ratio) + (4.0 + 2.0 * abs(log_scale)) * 2.0 ** -52 * (half + ratio)
    return _log_phi(a_up)


def log_gaussian_delta(u: float, v: float, epsilon: float) -> float:
    """log(Φ(u − v) − e^ε Φ(−u − v)) for u, v > 0 with 2uv = ε: the Gaussian curve δ(ε) at
    u = μ/2 = Δ/(2σ), v = ε/μ = εσ/Δ (-inf where δ is 0 in floating point). The direct form in ``log_ndtr`` loses about
    1e-16·w³/(2u) relative for w = v − u > 0 (its two terms cancel for small ε and small δ); there the
    cancellation-free integral δ = φ(w) ∫₀^∞ exp(−wt − t²/2)(1 − e^{−2ut}) dt is used (see
    :func:`dpcd.privacy.mechanisms._log_delta_unit`); a tail the quadrature cannot resolve is replaced by
    its upper bound e^{−w·cut}/w. Where u + v < 1 both Φ's are near ½ and ``log_ndtr`` cannot resolve their
    difference (δ(0) ≈ 0.4μ came out 0 below μ ≈ 1e-16); there δ = φ(v)∫_{−u}^{u} e^{vx − x²/2} dx −
    (e^ε − 1)Φ(−u − v), the integral by 24-point Gauss-Legendre; the second term is below v·R(v) < 1 (R the
    Mills ratio) of the first, so they do not cancel badly."""
    if v == math.inf:  # no noise against ε: u − v = −∞, δ = 0
        return -math.inf
    w = v - u
    if w > 0.0 and w * w * w > 2e3 * u:  # products, not w**3, which raises OverflowError for w > 5.6e102
        def integrand(t: float) -> float:
            return math.exp(-w * t - 0.5 * t * t) * -math.expm1(-2.0 * u * t)

        # The integrand decays at least like exp(-w t); split at the bulk.
        cut = min(50.0 / w, 40.0)
        head, _ = integrate.quad(integrand, 0.0, cut, epsabs=0.0, epsrel=2e-14, limit=200)
        tail, *rest = integrate.quad(integrand, cut, math.inf, epsabs=0.0, epsrel=2e-14, limit=200, full_output=1)
        if len(rest) > 2:  # no convergence (a negligible tail): its upper bound ∫ e^{−wt} = e^{−w·cut}/w
            tail = math.exp(-w * cut) / w
        total = head + tail
        if total <= 0.0:
            return -math.inf
        return -0.5 * w * w - 0.5 * math.log(2.0 * math.pi) + math.log(total)
    if u + v < 1.0:  # both Φ's near ½, where log Φ cannot resolve their difference (nor u − v a u ≪ v)
        # Φ(u − v) − Φ(−u − v) = φ(v) ∫_{−u}^{u} e^{vx − x²/2} dx (Gauss-Legendre, exact to rounding for u, v < 1)
        x = u * _GL_NODES
        width = u * float(np.dot(_GL_WEIGHTS, np.exp(v * x - 0.5 * x * x)))
        value = math.exp(-0.5 * v * v) / _SQRT_2PI * width - math.expm1(epsilon) * float(special.ndtr(-u - v))
        return math.log(value) if value > 0.0 else -math.inf
    log_a = _log_phi(u - v)
    diff = epsilon + _log_phi(-u - v) - log_a
    if diff >= 0.0:  # only through rounding once δ has underflowed
        return -math.inf
    return log_a + math.log(-math.expm1(diff))


def _log_gdp_delta(epsilon: float, mu: float) -> float:
    """log δ(ε) of μ-GDP, or -inf when δ(ε) is 0 in floating point (no check of the arguments); above
    :data:`LARGE_EPSILON` the upper bound :func:`large_epsilon_log_delta`."""
    if epsilon > LARGE_EPSILON:
        return large_epsilon_log_delta(epsilon, mu, math.log(mu))
    return log_gaussian_delta(0.5 * mu, epsilon / mu, epsilon)


DELTA_SLACK = 1.0 - 1e-9
"""The inverses (:func:`gdp_epsilon`, :func:`gdp_mu` and their zCDP twins) meet ``delta · DELTA_SLACK`` in floating
point, not ``delta``: the δ curve is computed to about 2·10⁻¹¹ relative near ε = 10¹⁰ (10⁻¹⁶ elsewhere), so the true
δ of the returned value stays at or below the request. It costs nothing measurable in noise."""


def log_root(excess: Callable[[float], float], low: float, high: float) -> float:
    """The root on [low, high] of ``excess``, monotone with a sign change there (Brent on the log scale; shared
    with :mod:`dpcd.privacy.zcdp`)."""
    return float(optimize.brentq(excess, low, high, xtol=1e-14, rtol=4 * 2.0 ** -52, maxiter=500))


def nudged(value: float, fine: Callable[[float], bool], toward: float) -> float:
    """``value`` moved toward ``toward`` (0.0 or math.inf) by ulps, then by growing relative steps (up to a
    factor 0.5 or 1.5), until ``fine(value)``; ``toward`` itself when it is reached first (shared with
    :mod:`dpcd.privacy.zcdp`)."""
    step = 1e-15
    for attempt in range(4000):
        if value == toward or value <= 0.0:
            return toward
        if fine(value):
            return value
        if attempt < 64:
            value = math.nextafter(value, toward)
        else:
            value = value * (1.0 - step) if toward == 0.0 else value * (1.0 + step)
            step = min(2.0 * step, 0.5)
    return toward


def smallest_epsilon(log_delta_at: Callable[[float], float], delta_at: Callable[[float], float], delta: float, *,
                     positive: bool = False) -> float:
    """The smallest ε with ``delta_at(ε) ≤ delta`` for a δ(ε) curve decreasing in ε (its log ``log_delta_at``):
    0 when ε = 0 already meets it (the smallest positive normal double with ``positive``), found on log ε over the
    doubles' range and raised by ulps until ``delta_at(ε) ≤ delta · DELTA_SLACK``; ∞ when no double is large
    enough. The inverse :func:`gdp_epsilon` and :func:`dpcd.privacy.zcdp.zcdp_epsilon` share.

    >>> smallest_epsilon(lambda e: -e, lambda e: math.exp(-e), 0.5) >= math.log(2.0)
    True
    """
    if delta_at(0.0) <= delta:
        return SMALLEST_NORMAL if positive else 0.0
    log_target = math.log(delta)

    def excess(log_epsilon: float) -> float:
        return max(log_delta_at(math.exp(log_epsilon)), LOG_ZERO) - log_target

    if excess(LOG_LARGEST) > 0:
        return math.inf
    if excess(LOG_SMALLEST) <= 0:
        return math.exp(LOG_SMALLEST)
    return nudged(math.exp(log_root(excess, LOG_SMALLEST, LOG_LARGEST)),
                  lambda e: delta_at(e) <= delta * DELTA_SLACK, math.inf)


def largest_level(log_delta_at: Callable[[float], float], delta_at: Callable[[float], float], delta: float, *,
                  epsilon: float, what: str) -> float:
    """The largest level (μ or ρ) with ``delta_at(level) ≤ delta`` for a δ curve increasing in it (its log
    ``log_delta_at``) at a fixed ``epsilon``: found on the log scale over the doubles' range and lowered by ulps
    until ``delta_at(level) ≤ delta · DELTA_SLACK``; the largest double when every level meets it. ``ValueError``
    (naming ``what``, e.g. "Gaussian noise") when even the smallest does not. :func:`gdp_mu` and
    :func:`dpcd.privacy.zcdp.zcdp_rho` share it.

    >>> largest_level(lambda r: math.log(r), lambda r: r, 0.25, epsilon=1.0, what="rho") <= 0.25
    True
    """
    log_target = math.log(delta)

    def excess(log_level: float) -> float:
        return max(log_delta_at(math.exp(log_level)), LOG_ZERO) - log_target

    if excess(LOG_SMALLEST) > 0:
        raise ValueError(f"epsilon={epsilon:g} is too small for delta={delta:g}: no {what} a double can express "
                         "meets it; raise epsilon or delta")
    if excess(LOG_LARGEST) <= 0:
        return math.exp(LOG_LARGEST)
    level = nudged(math.exp(log_root(excess, LOG_SMALLEST, LOG_LARGEST)),
                   lambda v: delta_at(v) <= delta * DELTA_SLACK, 0.0)
    if level <= 0.0:  # pragma: no cover - the root is within ulps of a feasible level
        raise ValueError(f"no {what} meets epsilon={epsilon:g}, delta={delta:g}")
    return level


def gdp_delta(epsilon: float, mu: float) -> float:
    """δ(ε) of μ-GDP: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) [DRS22, Cor. 2.13], computed in logs.

    For every finite ε ≥ 0 and μ > 0 (e^ε is never formed; a δ below the
    smallest double is 0).

    >>> round(gdp_delta(0.0, 1.0), 6)   # ε = 0: the total variation distance of N(0, 1) and N(1, 1)
    0.382925
    >>> gdp_delta(1e300, 1e3)
    0.0
    """
    epsilon = check_positive(epsilon, "epsilon", allow_zero=True)
    mu = check_positive(mu, "mu")
    log_delta = _log_gdp_delta(epsilon, mu)
    return 0.0 if log_delta == -math.inf else float(math.exp(log_delta))


def gdp_epsilon(mu: float, delta: float, *, positive: bool = False) -> float:
    """The smallest ε with μ-GDP ⇒ (ε, δ)-DP (0 when δ is already reached at ε = 0).

    Found on log ε over the doubles' whole range, then raised by ulps until
    ``gdp_delta(ε, mu) <= delta`` holds in floating point, so it is never
    below the exact ε; ``math.inf`` when no double is large enough (μ above
    ~1.9e154). ``positive=True`` returns the smallest positive normal double
    instead of 0, for a ledger charge (which needs ε > 0; a (0, δ)-DP step is
    (ε, δ)-DP for every ε > 0).

    >>> gdp_epsilon(0.5, 0.9), gdp_epsilon(0.5, 0.9, positive=True)
    (0.0, 2.2250738585072014e-308)
    >>> gdp_epsilon(1e155, 1e-6)
    inf
    """
    mu = check_positive(mu, "mu")
    delta = check_delta(delta)
    epsilon = smallest_epsilon(lambda e: _log_gdp_delta(e, mu), lambda e: gdp_delta(e, mu), delta, positive=positive)
    if epsilon > LARGE_EPSILON:  # so that a re-evaluation after rounding (e.g. σ = 1/μ) still verifies
        epsilon *= 1.0 + _LARGE_MARGIN
    return epsilon


def gdp_mu(epsilon: float, delta: float) -> float:
    """The largest μ whose μ-GDP guarantee implies (ε, δ)-DP: the noise level a total budget allows.

    δ(ε) increases with μ, so the root is unique; it is found on log μ over
    the doubles' whole range (every finite ε > 0), and the returned μ satisfies
    ``gdp_delta(epsilon, mu) <= delta`` (it is nudged down past rounding).
    Raises ``ValueError`` when even μ ≈ 1e-304 exceeds δ (ε below ~1e-300).

    >>> mu = gdp_mu(1.0, 1e-6)
    >>> round(mu, 4), gdp_delta(1.0, mu) <= 1e-6
    (0.2367, True)
    >>> round(gdp_mu(0.5, 1e-6), 4), round(gdp_mu(2.0, 1e-6), 4)   # a larger budget allows a larger μ
    (0.1241, 0.4483)
    >>> f"{gdp_mu(1e300, 1e-300):.4g}"   # about √(2ε): no overflow
    '1.414e+150'
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    mu = largest_level(lambda m: _log_gdp_delta(epsilon, m), lambda m: gdp_delta(epsilon, m), delta, epsilon=epsilon,
                       what="Gaussian noise")
    if epsilon > LARGE_EPSILON:  # so that a re-evaluation after rounding (e.g. σ = 1/μ) still verifies
        mu *= 1.0 - _LARGE_MARGIN
    return mu


def compose_gdp(*mus: float) -> float:
    """√(Σ μ_i²): the adaptive composition of μ_i-GDP mechanisms [DRS22, Cor. 3.3] (∞, no guarantee, where the
    sum exceeds the largest double; squares as products, which do not raise ``OverflowError``).

    >>> compose_gdp(0.3, 0.4), compose_gdp(1e200, 1.0)
    (0.5, inf)
    """
    squares = [m * m for m in (check_positive(m, "mu", allow_zero=True) for m in mus)]
    if not all(math.isfinite(square) for square in squares):
        return math.inf
    try:
        return math.sqrt(math.fsum(squares))
    except OverflowError:  # fsum's intermediate overflow: the sum exceeds the largest double
        return math.inf

"""Differential-privacy mechanisms and the closed-form calculus around them.

Every mechanism here is stated for an abstract query whose *sensitivity* the
caller supplies: the sensitivity already encodes the neighbouring relation
(add/remove or replace one record) and what is public, so each guarantee below
holds with respect to exactly the relation under which that sensitivity was
derived (see ``dpcd.privacy.PrivacyLedger`` for recording it).

Contents
--------
* Noise: ``laplace_noise``, ``gaussian_noise`` — the one place where dpcd
  draws privacy noise; every mechanism and algorithm of the package calls them.
* Laplace mechanism: ``laplace_scale``, ``laplace_mechanism``.
* Gaussian mechanism: ``gaussian_sigma`` (classical), ``analytic_gaussian_sigma``
  and ``analytic_gaussian_delta`` (Balle & Wang 2018), ``gaussian_mechanism``;
  ``gdp_gaussian_mechanism`` for noise set by a μ-GDP level (:mod:`dpcd.privacy.gdp`).
* Selection: ``exponential_mechanism_probabilities``, ``exponential_mechanism``,
  ``report_noisy_max``.
* Above threshold / sparse vector: ``SparseVector`` (+ ``SparseVectorExhausted``).
* Amplification by sub-sampling: ``subsampled_epsilon``, ``epsilon_for_subsampled``.
* Composition: ``advanced_composition``, ``advanced_composition_k``.

Floating-point noise
--------------------
Noise is drawn in double precision from numpy's ``Generator``. Mironov (2012)
showed that *publishing* a floating-point Laplace sample ``x + Lap(b)`` can
reveal ``x`` through its low-order bits; the defence is snapping or exact
samplers (as in OpenDP). dpcd never publishes a noisy number: every release is
a graph, a function of comparisons of noisy values with thresholds or with each
other (test decisions, arg-max draws), which the low-order bits change only
with probability of the order of the double-precision spacing. A caller who
publishes the output of :func:`laplace_mechanism` or :func:`gaussian_mechanism`
itself should use an exact sampler instead.

References
----------
.. [DR14] C. Dwork, A. Roth. *The Algorithmic Foundations of Differential
   Privacy.* Foundations and Trends in TCS 9(3-4), 2014.
.. [BW18] B. Balle, Y.-X. Wang. *Improving the Gaussian Mechanism for
   Differential Privacy: Analytical Calibration and Optimal Denoising.* ICML 2018.
.. [DRV10] C. Dwork, G. N. Rothblum, S. Vadhan. *Boosting and Differential
   Privacy.* FOCS 2010.
.. [KOV15] P. Kairouz, S. Oh, P. Viswanath. *The Composition Theorem for
   Differential Privacy.* ICML 2015.
.. [BBG18] B. Balle, G. Barthe, M. Gaboardi. *Privacy Amplification by
   Subsampling: Tight Analyses via Couplings and Divergences.* NeurIPS 2018.
.. [LQS12] N. Li, W. Qardaji, D. Su. *On Sampling, Anonymization, and
   Differential Privacy.* ASIACCS 2012.
.. [LSL17] M. Lyu, D. Su, N. Li. *Understanding the Sparse Vector Technique for
   Differential Privacy.* PVLDB 10(6), 2017.
"""

from __future__ import annotations

import math
import numbers
from typing import Union

import numpy as np
from scipy import optimize

from ..validation import (
    RngLike,
    as_rng,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
)
from .gdp import LARGE_EPSILON, large_epsilon_log_delta, log_gaussian_delta

__all__ = [
    "laplace_noise",
    "gaussian_noise",
    "laplace_scale",
    "laplace_mechanism",
    "gaussian_sigma",
    "analytic_gaussian_sigma",
    "analytic_gaussian_delta",
    "gaussian_mechanism",
    "gdp_gaussian_mechanism",
    "exponential_mechanism_probabilities",
    "exponential_mechanism",
    "report_noisy_max",
    "SparseVector",
    "SparseVectorExhausted",
    "subsampled_epsilon",
    "epsilon_for_subsampled",
    "advanced_composition",
    "advanced_composition_k",
]

ArrayLike = Union[float, np.ndarray, list, tuple]


# --------------------------------------------------------------------------- noise


def laplace_noise(scale: float, size: int | tuple[int, ...] | None = None, *, rng: np.random.Generator,
                  dtype: type = np.float64) -> float | np.ndarray:
    """``Lap(scale)`` noise: one draw (``size=None``) or an array; the package's only Laplace draws.

    ``scale`` is b = Δ₁/ε of the mechanism the caller implements (its ledger
    charge states the guarantee). ``dtype=np.float32`` halves the memory of a
    large table's noise (drawn in double precision, then rounded).

    >>> float(np.mean(np.abs(laplace_noise(2.0, 200_000, rng=np.random.default_rng(0))))).__round__(1)
    2.0
    """
    draw = rng.laplace(0.0, scale, size=size)
    return draw if size is None or dtype is np.float64 else draw.astype(dtype)


def gaussian_noise(sd: float, size: int | tuple[int, ...] | None = None, *,
                   rng: np.random.Generator) -> float | np.ndarray:
    """``N(0, sd²)`` noise: one draw (``size=None``) or an array; the package's only Gaussian privacy draws.

    >>> round(float(np.std(gaussian_noise(3.0, 200_000, rng=np.random.default_rng(0)))), 1)
    3.0
    """
    return rng.normal(0.0, sd, size=size)


# --------------------------------------------------------------------------- helpers


def _as_finite_values(value, name: str = "value") -> tuple[np.ndarray, bool]:
    """Return ``value`` as a float array and whether it was a scalar."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be numeric, got a bool")
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a real number or an array of real numbers") from err
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return array, array.ndim == 0


def _as_scores(scores, name: str = "scores") -> np.ndarray:
    """1-D float array of scores; ±inf allowed, NaN refused."""
    try:
        array = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a 1-D array of real numbers") from err
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} must contain at least one candidate")
    if np.isnan(array).any():
        raise ValueError(f"{name} contains NaN at index {int(np.flatnonzero(np.isnan(array))[0])}")
    return array


def _real_number(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


# --------------------------------------------------------------------------- Laplace


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """Scale ``b = Δ₁/ε`` of the Laplace mechanism.

    Privacy: adding ``Lap(b)`` noise i.i.d. to every coordinate of a query with
    L1-sensitivity ``Δ₁`` is ε-differentially private [DR14, Thm 3.6].

    >>> laplace_scale(2.0, 0.5)   # Δ₁/ε = 2/0.5
    4.0
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    epsilon = check_epsilon(epsilon)
    return sensitivity / epsilon


def laplace_mechanism(
    value: ArrayLike, *, sensitivity: float, epsilon: float, rng: RngLike
) -> float | np.ndarray:
    """Release ``value + Lap(Δ₁/ε)`` (noise i.i.d. per entry).

    Privacy: ε-DP when ``sensitivity`` bounds the L1 norm of the change of the
    *whole* ``value`` (scalar or array) between neighbouring data sets
    [DR14, Def. 3.3 and Thm 3.6].

    Returns a float for a scalar ``value`` and a float array of the same shape
    otherwise.

    >>> round(laplace_mechanism(10.0, sensitivity=1.0, epsilon=1.0, rng=0), 4)
    10.3201
    >>> noisy = laplace_mechanism(np.zeros(100_000), sensitivity=1.0, epsilon=0.5, rng=np.random.default_rng(0))
    >>> noisy.shape, round(float(np.mean(np.abs(noisy))), 1)   # E|Lap(b)| = b = Δ₁/ε = 2
    ((100000,), 2.0)
    """
    scale = laplace_scale(sensitivity, epsilon)
    generator = as_rng(rng)
    array, scalar = _as_finite_values(value)
    noisy = array + laplace_noise(scale, array.shape, rng=generator)
    return float(noisy) if scalar else noisy


# --------------------------------------------------------------------------- Gaussian


def gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Classical Gaussian calibration ``σ = Δ₂·√(2 ln(1.25/δ))/ε``.

    Privacy: (ε, δ)-DP for a query with L2-sensitivity ``Δ₂`` when ε ∈ (0, 1)
    [DR14, Thm 3.22 / Thm A.1]. The proof does not cover ε ≥ 1; use
    :func:`analytic_gaussian_sigma`, which is valid for every ε > 0 and always
    smaller.

    >>> round(gaussian_sigma(1.0, 0.5, 1e-5), 4)   # √(2 ln(1.25e5)) / 0.5
    9.6896
    >>> gaussian_sigma(1.0, 2.0, 1e-5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: epsilon must be < 1 for the classical Gaussian calibration ...; use analytic_gaussian_sigma, ...
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if epsilon >= 1:
        raise ValueError(
            f"epsilon must be < 1 for the classical Gaussian calibration (Dwork & Roth Thm 3.22), "
            f"got {epsilon}; use analytic_gaussian_sigma, which is valid for every epsilon > 0"
        )
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def _log_delta_unit(log_s: float, epsilon: float) -> float:
    """log δ(s) of the Gaussian mechanism with σ/Δ = s = exp(log_s) [BW18, Thm 8].

    δ(s) = Φ(u − v) − e^ε Φ(−u − v) with u = 1/(2s), v = εs (so 2uv = ε).

    Two evaluations, chosen by conditioning (shared with :mod:`dpcd.privacy.gdp`,
    ``log_gaussian_delta``, since μ-GDP is the same curve at u = μ/2, v = ε/μ):

    * direct: log Φ(u − v) + log(1 − exp(ε + log Φ(−u − v) − log Φ(u − v)))
      with ``log_ndtr`` (no underflow, no overflow of e^ε). Its relative error is
      about 1e-16·w³/(2u) for w = v − u > 0, because the two terms cancel when
      u ≪ w (small ε, small δ);
    * cancellation-free: substituting x = w + t and using φ(w + 2u + t)·e^ε =
      φ(w + t)·e^{−2ut} gives the positive integral
      δ = φ(w) ∫₀^∞ exp(−wt − t²/2)·(1 − e^{−2ut}) dt,
      evaluated by adaptive quadrature to ~1e-14 relative error. Used when the
      direct form would lose more than ~1e-13.

    Above ε = :data:`dpcd.privacy.gdp.LARGE_EPSILON` (1e10), neither can be
    evaluated in doubles (u − v cancels to ~1e-16·√ε); there the upper bound
    log Φ((u − v)⁺) of :func:`dpcd.privacy.gdp.large_epsilon_log_delta` (u − v
    rounded up by its error bound, the exp of ``log_s`` included) is returned, so
    a σ calibrated on it is still (ε, δ)-DP.
    """
    if -log_s > 709.0:  # Δ/σ beyond the largest double: no noise to speak of, δ = 1
        return 0.0
    if epsilon > LARGE_EPSILON:
        return large_epsilon_log_delta(epsilon, math.exp(-log_s), log_s)
    s = math.exp(log_s)
    return log_gaussian_delta(0.5 / s, epsilon * s, epsilon)


def analytic_gaussian_delta(sigma: float, *, sensitivity: float, epsilon: float) -> float:
    """Exact δ(ε) of the Gaussian mechanism with noise ``σ`` and L2-sensitivity ``Δ₂``.

    δ = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) [BW18, Thm 8]: the mechanism is
    (ε, δ')-DP exactly for δ' ≥ this value (and the bound is tight).

    The classical σ at ε = 0.5, δ = 1e-5 is in fact (0.5, 1.6e-8)-DP:

    >>> f"{analytic_gaussian_delta(gaussian_sigma(1.0, 0.5, 1e-5), sensitivity=1.0, epsilon=0.5):.2e}"
    '1.61e-08'
    """
    sigma = check_positive(sigma, "sigma")
    sensitivity = check_positive(sensitivity, "sensitivity")
    epsilon = check_epsilon(epsilon)
    return math.exp(_log_delta_unit(math.log(sigma / sensitivity), epsilon))


def analytic_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest σ for which the Gaussian mechanism is (ε, δ)-DP (analytic calibration).

    Solves Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) = δ for σ [BW18, Thm 8 and
    Alg. 1]. The left side depends on σ only through s = σ/Δ and decreases
    strictly in s, so σ = Δ·s* where s* is the root of log δ(s) − log δ, found by
    Brent's method on log s (bracketed by doubling from the classical value). The
    returned σ is
    nudged upwards, if rounding requires it, so that δ(σ) ≤ δ holds exactly in
    floating point. The evaluation of δ(s) avoids the cancellation between the
    two terms (see ``_log_delta_unit``), so the equation holds to ~1e-12 relative
    error on δ even for ε ≈ 1e-4 and δ ≈ 1e-15.

    Privacy: (ε, δ)-DP for every ε > 0, δ ∈ (0, 1), for a query with
    L2-sensitivity ``Δ₂``; never larger than :func:`gaussian_sigma` where the
    classical calibration applies.

    >>> sigma = analytic_gaussian_sigma(1.0, 0.5, 1e-5)
    >>> round(sigma, 4), sigma < gaussian_sigma(1.0, 0.5, 1e-5)
    (7.0318, True)
    >>> analytic_gaussian_delta(sigma, sensitivity=1.0, epsilon=0.5) <= 1e-5   # the target δ is met exactly
    True
    >>> round(analytic_gaussian_sigma(1.0, 2.0, 1e-5), 4)   # also valid for ε ≥ 1
    1.9938
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    log_delta = math.log(delta)

    def excess(log_s: float) -> float:
        return max(_log_delta_unit(log_s, epsilon), -1e300) - log_delta

    # Initial guess: the classical form, which is of the right order for all ε.
    guess = math.log(math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon)
    low, high = guess - 1.0, guess + 1.0
    while excess(low) <= 0.0:  # need δ(low) > δ
        low -= 2.0
    while excess(high) > 0.0:  # need δ(high) ≤ δ
        high += 2.0
    root = optimize.brentq(excess, low, high, xtol=1e-15, rtol=8.9e-16, maxiter=500)
    # Guarantee δ(σ) ≤ δ in floating point (the root may sit one ulp low).
    for _ in range(64):
        if excess(root) <= 0.0:
            break
        root = math.nextafter(root, math.inf)
    if epsilon > LARGE_EPSILON:  # margin for a re-evaluation after rounding (see _log_delta_unit)
        root += 1e-12
    return sensitivity * math.exp(root)


def gaussian_mechanism(
    value: ArrayLike,
    *,
    sensitivity: float,
    epsilon: float,
    delta: float,
    rng: RngLike,
    analytic: bool = True,
) -> float | np.ndarray:
    """Release ``value + N(0, σ²)`` (noise i.i.d. per entry).

    σ comes from :func:`analytic_gaussian_sigma` [BW18] (default) or, with
    ``analytic=False``, from :func:`gaussian_sigma` [DR14, Thm 3.22; needs ε < 1].

    Privacy: (ε, δ)-DP when ``sensitivity`` bounds the L2 norm of the change of
    the whole ``value`` between neighbouring data sets.

    >>> noisy = gaussian_mechanism(np.zeros(100_000), sensitivity=1.0, epsilon=0.5, delta=1e-5, rng=0)
    >>> round(float(noisy.std()), 1), round(analytic_gaussian_sigma(1.0, 0.5, 1e-5), 1)
    (7.0, 7.0)
    """
    if not isinstance(analytic, (bool, np.bool_)):
        raise TypeError(f"analytic must be True or False, got {type(analytic).__name__}")
    sigma = (analytic_gaussian_sigma if analytic else gaussian_sigma)(sensitivity, epsilon, delta)
    generator = as_rng(rng)
    array, scalar = _as_finite_values(value)
    noisy = array + gaussian_noise(sigma, array.shape, rng=generator)
    return float(noisy) if scalar else noisy


def gdp_gaussian_mechanism(value: ArrayLike, *, sensitivity: float, mu: float, rng: RngLike) -> float | np.ndarray:
    """Release ``value + N(0, σ²)`` with σ = ``sensitivity``/``mu`` (noise i.i.d. per entry): μ-GDP.

    Privacy: μ-GDP [Dong, Roth & Su 2022, Thm. 2.7] when ``sensitivity`` bounds
    the L2 norm of the change of the whole ``value`` between neighbouring data
    sets (under the relation it is stated for); compose and convert with
    :mod:`dpcd.privacy.gdp`. The noise is drawn in floating point: use it where
    only a function of the noisy values that is coarse in them (a test
    decision) leaves the algorithm, not to publish the noisy numbers themselves.

    >>> noisy = gdp_gaussian_mechanism(np.zeros(100_000), sensitivity=2.0, mu=0.5, rng=0)
    >>> round(float(noisy.std()), 1)
    4.0
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    mu = check_positive(mu, "mu")
    generator = as_rng(rng)
    array, scalar = _as_finite_values(value)
    noisy = array + gaussian_noise(sensitivity / mu, array.shape, rng=generator)
    return float(noisy) if scalar else noisy


# --------------------------------------------------------------------------- selection


def exponential_mechanism_probabilities(
    scores: ArrayLike, *, epsilon: float, sensitivity: float, monotone: bool = False
) -> np.ndarray:
    """Selection probabilities of the exponential mechanism, computed stably.

    p_i ∝ exp(ε·q_i / (2Δ)), or exp(ε·q_i / Δ) when ``monotone`` (every score
    moves in the same direction between neighbours), normalised by
    log-sum-exp so that large scores neither overflow nor underflow
    [DR14, Def. 3.4 and Thm 3.10; monotone case: the remark after Thm 3.10].

    Infinite scores: if any score is +inf, the +inf candidates share all the
    probability equally and every other candidate gets 0; -inf candidates get 0.
    All scores -inf is an error. NaN is an error.

    Privacy: sampling from these probabilities is ε-DP when ``sensitivity``
    bounds the change of every score between neighbouring data sets (infinite
    scores must then be data-independent, e.g. hard constraints).

    >>> exponential_mechanism_probabilities([0.0, 1.0, 2.0], epsilon=2.0, sensitivity=1.0).round(4).tolist()
    [0.09, 0.2447, 0.6652]
    >>> monotone = exponential_mechanism_probabilities([0.0, 1.0, 2.0], epsilon=2.0, sensitivity=1.0, monotone=True)
    >>> monotone.round(4).tolist()   # exp(ε·q/Δ): sharper than exp(ε·q/(2Δ))
    [0.0159, 0.1173, 0.8668]
    >>> exponential_mechanism_probabilities([0.0, np.inf, 2.0, np.inf], epsilon=2.0, sensitivity=1.0).tolist()
    [0.0, 0.5, 0.0, 0.5]
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive(sensitivity, "sensitivity")
    if not isinstance(monotone, (bool, np.bool_)):
        raise TypeError(f"monotone must be True or False, got {type(monotone).__name__}")
    q = _as_scores(scores)
    top = np.isposinf(q)
    if top.any():
        return top / np.count_nonzero(top)
    finite = np.isfinite(q)
    if not finite.any():
        raise ValueError("scores are all -inf: no candidate can be selected")
    factor = epsilon / (sensitivity if monotone else 2.0 * sensitivity)
    logits = np.full(q.shape, -np.inf)
    logits[finite] = factor * q[finite]
    logits -= logits[finite].max()
    weights = np.exp(logits)  # exp(-inf) = 0 exactly
    return weights / weights.sum()


def exponential_mechanism(
    scores: ArrayLike,
    *,
    epsilon: float,
    sensitivity: float,
    rng: RngLike,
    monotone: bool = False,
) -> int:
    """Draw an index with the exponential mechanism (see
    :func:`exponential_mechanism_probabilities` for the probabilities and the
    guarantee: ε-DP [DR14, Thm 3.10]).

    The draw is by inversion of the cumulative probabilities with one uniform
    variate, so candidates of probability 0 are never returned.

    >>> exponential_mechanism([0.0, 100.0, 0.0], epsilon=1.0, sensitivity=1.0, rng=0)
    1
    >>> rng = np.random.default_rng(0)
    >>> draws = [exponential_mechanism([0.0, 0.0, -np.inf], epsilon=1.0, sensitivity=1.0, rng=rng) for _ in range(1000)]
    >>> np.bincount(draws, minlength=3).tolist()   # the -inf candidate is never drawn
    [473, 527, 0]
    """
    probabilities = exponential_mechanism_probabilities(
        scores, epsilon=epsilon, sensitivity=sensitivity, monotone=monotone
    )
    generator = as_rng(rng)
    cumulative = np.cumsum(probabilities)
    u = generator.random() * cumulative[-1]
    index = int(np.searchsorted(cumulative, u, side="right"))
    return min(index, int(np.flatnonzero(probabilities)[-1]))


def report_noisy_max(
    scores: ArrayLike,
    *,
    epsilon: float,
    sensitivity: float,
    rng: RngLike,
    monotone: bool = False,
) -> int:
    """Index of the largest ``q_i + Lap(b)`` (noise i.i.d. per candidate).

    Scale: ``b = 2Δ/ε`` for scores that may move in different directions
    between neighbours (each by at most Δ), and ``b = Δ/ε`` with
    ``monotone=True`` (all scores move in the same direction, e.g. counts under
    add/remove, which is the setting of [DR14, Claim 3.9] with Δ = 1).

    Privacy: ε-DP; only the index is released, never the noisy values
    [DR14, Claim 3.9]. For general scores the standard argument of Claim 3.9
    needs the winning candidate's noise to absorb a relative shift of 2Δ,
    hence the factor 2.

    >>> report_noisy_max([1.0, 50.0, 3.0], epsilon=1.0, sensitivity=1.0, rng=0)   # a clear winner
    1
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive(sensitivity, "sensitivity")
    if not isinstance(monotone, (bool, np.bool_)):
        raise TypeError(f"monotone must be True or False, got {type(monotone).__name__}")
    q = _as_scores(scores)
    if not np.all(np.isfinite(q)):
        raise ValueError("scores must be finite for report_noisy_max")
    scale = (1.0 if monotone else 2.0) * sensitivity / epsilon
    generator = as_rng(rng)
    return int(np.argmax(q + laplace_noise(scale, q.shape, rng=generator)))


# --------------------------------------------------------------------------- sparse vector


class SparseVectorExhausted(RuntimeError):
    """Raised when a :class:`SparseVector` is queried after its last allowed hit.

    >>> sv = SparseVector(0.0, epsilon=1.0, sensitivity=1.0, rng=0)
    >>> sv.query(1e6)
    True
    >>> try:
    ...     sv.query(0.0)
    ... except SparseVectorExhausted:
    ...     print("budget spent")
    budget spent
    >>> issubclass(SparseVectorExhausted, RuntimeError)
    True
    """


class SparseVector:
    """Above-threshold / sparse vector technique with up to ``max_hits`` positive answers.

    Follows Dwork & Roth's *Sparse* algorithm [DR14, Alg. 2, δ = 0 branch], which
    runs ``c = max_hits`` copies of *AboveThreshold* [DR14, Alg. 1] one after the
    other, each with budget ε/c split as ε₁ = ε₂ = ε/(2c):

    * noisy threshold T̂ = T + Lap(``threshold_scale``) with
      ``threshold_scale = 2cΔ/ε`` (= Δ/ε₁ per copy: the threshold is a
      Δ-sensitive quantity released through the comparison);
    * every query gets fresh noise Lap(``query_scale``) with
      ``query_scale = 4cΔ/ε`` (= 2Δ/ε₂ per copy: the noise on the query that
      crosses must absorb the query's own change Δ plus the threshold's Δ);
      with ``monotone=True`` (all queries move in the same direction between
      neighbours) ``query_scale = 2cΔ/ε`` suffices [LSL17, Alg. 1 and Thm 2, monotonic case];
    * a query answers True ("above") when ``value + ν ≥ T̂``; after each such hit
      that leaves quota the threshold is redrawn as T + Lap(``threshold_scale``)
      — always Laplace, never Gaussian — which starts the next AboveThreshold copy;
    * after ``max_hits`` hits every further query raises
      :class:`SparseVectorExhausted`.

    Privacy: the whole sequence of answers to adaptively chosen queries of
    sensitivity Δ is ε-DP [DR14, Thm 3.23 for one hit, Thm 3.25 (δ = 0) for c
    hits]. With explicit ``threshold_scale`` / ``query_scale`` overrides (papers
    that calibrate differently, e.g. Priv-PC's sub-sampled sieve) the class
    applies exactly those scales and the guarantee is whatever the caller's
    calibration proves; ``epsilon`` is then kept only as the recorded budget.

    The noisy threshold is internal state and is never returned: releasing it
    would void the guarantee.

    Examples
    --------
    With c = 2 hits and ε = 1: threshold noise Lap(2cΔ/ε) = Lap(4), query noise Lap(4cΔ/ε) = Lap(8).

    >>> sv = SparseVector(10.0, epsilon=1.0, sensitivity=1.0, rng=0, max_hits=2)
    >>> sv.threshold_scale, sv.query_scale
    (4.0, 8.0)
    >>> [sv.query(v) for v in (0.0, 100.0, -50.0, 100.0)], sv.hits, sv.n_queries, sv.exhausted
    ([False, True, False, True], 2, 4, True)
    >>> sv.query(0.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpcd.privacy.mechanisms.SparseVectorExhausted: the sparse vector has answered its max_hits=2 ... queries; ...
    """

    def __init__(
        self,
        threshold: float,
        *,
        epsilon: float,
        sensitivity: float,
        rng: RngLike,
        max_hits: int = 1,
        monotone: bool = False,
        threshold_scale: float | None = None,
        query_scale: float | None = None,
    ) -> None:
        self._threshold = _real_number(threshold, "threshold")
        self._epsilon = check_epsilon(epsilon)
        self._sensitivity = check_positive(sensitivity, "sensitivity")
        self._max_hits = check_int(max_hits, "max_hits", minimum=1)
        if not isinstance(monotone, (bool, np.bool_)):
            raise TypeError(f"monotone must be True or False, got {type(monotone).__name__}")
        self._monotone = bool(monotone)
        c = self._max_hits
        if threshold_scale is None:
            self._threshold_scale = 2.0 * c * self._sensitivity / self._epsilon
        else:
            self._threshold_scale = check_positive(threshold_scale, "threshold_scale")
        if query_scale is None:
            factor = 2.0 if self._monotone else 4.0
            self._query_scale = factor * c * self._sensitivity / self._epsilon
        else:
            self._query_scale = check_positive(query_scale, "query_scale")
        self._rng = as_rng(rng)
        self._hits = 0
        self._n_queries = 0
        self._noisy_threshold = self._draw_threshold()

    def _draw_threshold(self) -> float:
        """T + Lap(threshold_scale): the only place the threshold noise is drawn."""
        return self._threshold + float(laplace_noise(self._threshold_scale, rng=self._rng))

    def query(self, value: float) -> bool:
        """Answer one query: True if ``value`` + fresh Laplace noise reaches the noisy threshold.

        Raises :class:`SparseVectorExhausted` once ``max_hits`` hits were answered.
        """
        if self._hits >= self._max_hits:
            raise SparseVectorExhausted(
                f"the sparse vector has answered its max_hits={self._max_hits} above-threshold "
                "queries; its privacy budget is spent, so it cannot answer more"
            )
        value = _real_number(value, "value")
        self._n_queries += 1
        noisy = value + float(laplace_noise(self._query_scale, rng=self._rng))
        if noisy >= self._noisy_threshold:
            self._hits += 1
            if self._hits < self._max_hits:
                self._noisy_threshold = self._draw_threshold()
            return True
        return False

    @property
    def threshold(self) -> float:
        """The public (noise-free) threshold T."""
        return self._threshold

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def sensitivity(self) -> float:
        return self._sensitivity

    @property
    def max_hits(self) -> int:
        return self._max_hits

    @property
    def monotone(self) -> bool:
        return self._monotone

    @property
    def threshold_scale(self) -> float:
        """Laplace scale of the threshold noise (drawn at start and after every hit)."""
        return self._threshold_scale

    @property
    def query_scale(self) -> float:
        """Laplace scale of the fresh per-query noise."""
        return self._query_scale

    @property
    def hits(self) -> int:
        """Number of queries answered True so far."""
        return self._hits

    @property
    def n_queries(self) -> int:
        """Number of queries answered so far (True or False)."""
        return self._n_queries

    @property
    def remaining_hits(self) -> int:
        return self._max_hits - self._hits

    @property
    def exhausted(self) -> bool:
        """True once ``max_hits`` hits were answered (further queries raise)."""
        return self._hits >= self._max_hits

    def __repr__(self) -> str:
        return (
            f"SparseVector(threshold={self._threshold}, epsilon={self._epsilon}, "
            f"sensitivity={self._sensitivity}, max_hits={self._max_hits}, monotone={self._monotone}, "
            f"threshold_scale={self._threshold_scale:.6g}, query_scale={self._query_scale:.6g}, "
            f"hits={self._hits}, n_queries={self._n_queries})"
        )


# --------------------------------------------------------------------------- sub-sampling


def subsampled_epsilon(epsilon: float, q: float) -> float:
    """Privacy of an ε-DP mechanism run on a random sub-sample: ε' = ln(1 + q(e^ε − 1)).

    Holds for a Bernoulli(q) (Poisson) sub-sample under add/remove [LQS12, Thm 1]
    and for a uniformly drawn sub-sample of m = q·n records without replacement
    under replace-one [BBG18, Thm 9]; the δ of an (ε, δ) mechanism becomes q·δ.
    Priv-PC's sieve uses the latter (q = m/n). Computed as log1p(q·expm1(ε)),
    switching to ε + ln(q + (1 − q)e^{−ε}) for large ε to avoid overflow.

    >>> round(subsampled_epsilon(1.0, 0.1), 4)   # ln(1 + 0.1(e − 1)): a 10 % sub-sample amplifies ε = 1
    0.1586
    >>> subsampled_epsilon(1.0, 1.0)   # no sub-sampling, no amplification
    1.0
    """
    epsilon = check_epsilon(epsilon)
    q = check_probability(q, "q", open_high=False)
    if epsilon <= 1.0:
        return math.log1p(q * math.expm1(epsilon))
    return epsilon + math.log(q + (1.0 - q) * math.exp(-epsilon))


def epsilon_for_subsampled(target_epsilon: float, q: float) -> float:
    """Inverse of :func:`subsampled_epsilon`: the ε to spend on the sub-sample so
    that the sub-sampled mechanism is ``target_epsilon``-DP.

    ε = ln(1 + (e^{ε'} − 1)/q) [BBG18, Thm 9; LQS12, Thm 1], e.g. Priv-PC's
    ε' = ln((n/m)(e^{ε/2} − 1) + 1) (Wang et al. 2020, proof of Thm 1).

    >>> round(epsilon_for_subsampled(0.1586, 0.1), 3)
    1.0
    >>> [round(epsilon_for_subsampled(subsampled_epsilon(e, 0.1), 0.1), 10) for e in (0.5, 1.0, 5.0)]
    [0.5, 1.0, 5.0]
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    q = check_probability(q, "q", open_high=False)
    if target_epsilon <= 1.0:
        return math.log1p(math.expm1(target_epsilon) / q)
    return target_epsilon + math.log(1.0 / q - (1.0 / q - 1.0) * math.exp(-target_epsilon))


# --------------------------------------------------------------------------- composition


def advanced_composition(
    epsilons: ArrayLike, deltas: ArrayLike, delta_prime: float
) -> tuple[float, float]:
    """Advanced composition of (ε_i, δ_i)-DP mechanisms (heterogeneous, adaptive).

    ε' = √(2 ln(1/δ') Σ ε_i²) + Σ ε_i (e^{ε_i} − 1),   δ = Σ δ_i + δ'.

    Homogeneous form: [DRV10, Thm III.3], [DR14, Thm 3.20]; the heterogeneous
    form follows from the same martingale argument (per-step mean loss
    ≤ ε_i(e^{ε_i} − 1), range ε_i; see [KOV15, Thm 3.5] for a tighter variant).
    It can exceed basic composition (Σε_i) for few or large ε_i; the ledger
    reports the minimum of the two. ``deltas`` may be a scalar (same δ for all).
    An empty ``epsilons`` returns (0, δ').

    A thousand ε = 0.01 steps: far below the basic Σε_i = 10.

    >>> eps, delta = advanced_composition([0.01] * 1000, 0.0, 1e-6)
    >>> round(eps, 4), delta
    (1.7628, 1e-06)

    For few steps it can exceed Σε_i = 0.3 (the ledger then reports the basic total):

    >>> eps, delta = advanced_composition([0.1, 0.2], [1e-7, 2e-7], 1e-6)
    >>> round(eps, 4), round(delta, 12)
    (1.2302, 1.3e-06)
    >>> advanced_composition([], 0.0, 1e-6)
    (0.0, 1e-06)

    A step with e^{ε_i} beyond the largest double makes the bound ε' = ∞
    (true, and vacuous: the ledger then reports basic composition), without
    an overflow warning:

    >>> advanced_composition([1e3], 0.0, 1e-6)
    (inf, 1e-06)
    """
    delta_prime = check_delta(delta_prime, "delta_prime")
    try:
        eps = np.asarray(epsilons, dtype=np.float64).ravel()
    except (TypeError, ValueError) as err:
        raise TypeError("epsilons must be an array of real numbers") from err
    if eps.size and (not np.all(np.isfinite(eps)) or np.any(eps <= 0)):
        raise ValueError("epsilons must all be finite and > 0")
    try:
        dl = np.asarray(deltas, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError("deltas must be a real number or an array of real numbers") from err
    if dl.ndim == 0:
        dl = np.full(eps.shape, float(dl))
    dl = dl.ravel()
    if dl.shape != eps.shape:
        raise ValueError(f"deltas must be a scalar or have one entry per epsilon ({eps.size}), got {dl.size}")
    if dl.size and (np.isnan(dl).any() or np.any(dl < 0) or np.any(dl >= 1)):
        raise ValueError("deltas must all lie in [0, 1)")
    with np.errstate(over="ignore"):  # e^{ε_i} or ε_i² beyond the largest double: the bound is ∞, not an error
        epsilon = math.sqrt(2.0 * math.log(1.0 / delta_prime) * float(np.sum(eps**2))) + float(
            np.sum(eps * np.expm1(eps))
        )
    return epsilon, float(np.sum(dl)) + delta_prime


def advanced_composition_k(
    epsilon: float, delta: float, k: int, delta_prime: float
) -> tuple[float, float]:
    """k-fold advanced composition of one (ε, δ)-DP mechanism [DR14, Thm 3.20]:

    ε' = √(2k ln(1/δ'))·ε + k·ε(e^ε − 1),   δ_total = k·δ + δ'.

    >>> eps, delta = advanced_composition_k(0.1, 1e-7, 100, 1e-6)
    >>> round(eps, 4), round(delta, 12)
    (6.3082, 1.1e-05)
    >>> round(eps, 10) == round(advanced_composition([0.1] * 100, 1e-7, 1e-6)[0], 10)   # the homogeneous case
    True

    Where e^ε (ε > 709.78) or the product overflows, ε' is ∞ (true and vacuous), not an ``OverflowError``:

    >>> advanced_composition_k(1e3, 0.0, 2, 1e-6)
    (inf, 1e-06)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=True)
    k = check_int(k, "k", minimum=1)
    delta_prime = check_delta(delta_prime, "delta_prime")
    growth = math.expm1(epsilon) if epsilon < 709.0 else math.inf  # e^709 < 1.8e308 < e^710
    eps_total = math.sqrt(2.0 * k * math.log(1.0 / delta_prime)) * epsilon + k * epsilon * growth
    return eps_total, k * delta + delta_prime

"""Tests of dpcd.privacy: mechanisms, calibration, composition and the ledger.

Statistical checks use fixed seeds; tolerances are stated in standard errors of
the estimator (Z = 5, so a correct implementation fails with probability well
below 1e-5 per check for a random seed) or as goodness-of-fit p-value floors.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import comb

from dpcd.privacy import (
    METHODS,
    PrivacyLedger,
    PrivacyTotal,
    SparseVector,
    SparseVectorExhausted,
    advanced_composition,
    advanced_composition_k,
    analytic_gaussian_delta,
    analytic_gaussian_sigma,
    epsilon_for_subsampled,
    exponential_mechanism,
    exponential_mechanism_probabilities,
    gaussian_mechanism,
    gaussian_sigma,
    laplace_mechanism,
    laplace_scale,
    report_noisy_max,
    subsampled_epsilon,
)

Z = 5.0  # tolerance in standard errors
P_FLOOR = 1e-4  # goodness-of-fit p-value floor for fixed-seed distribution checks

mpmath = pytest.importorskip("mpmath")


def balle_wang_delta_mp(sigma: float, sensitivity: float, epsilon: float) -> float:
    """Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) in 60-digit arithmetic."""
    with mpmath.workdps(60):
        s = mpmath.mpf(sigma) / mpmath.mpf(sensitivity)
        e = mpmath.mpf(epsilon)
        return float(mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * s) - e * s))


# --------------------------------------------------------------------------- Laplace


def test_laplace_scale_closed_form():
    assert laplace_scale(2.0, 0.5) == pytest.approx(4.0, rel=1e-15)
    assert laplace_scale(1e-3, 10.0) == pytest.approx(1e-4, rel=1e-15)


def test_laplace_mechanism_moments_and_shape():
    n = 200_000
    sens, eps = 1.5, 0.7
    b = sens / eps
    noisy = laplace_mechanism(np.full(n, 3.0), sensitivity=sens, epsilon=eps, rng=1)
    assert noisy.shape == (n,)
    sd = math.sqrt(2.0) * b
    # SE of the sample mean: sd/√n; of the sample sd: sd·√((κ−1)/(4n)), κ = 6 for Laplace.
    assert abs(noisy.mean() - 3.0) < Z * sd / math.sqrt(n)
    assert abs(noisy.std(ddof=1) - sd) < Z * sd * math.sqrt(5.0 / (4 * n))
    assert stats.kstest(noisy - 3.0, stats.laplace(scale=b).cdf).pvalue > P_FLOOR
    scalar = laplace_mechanism(1.0, sensitivity=1.0, epsilon=1.0, rng=0)
    assert isinstance(scalar, float)
    matrix = laplace_mechanism(np.zeros((3, 4)), sensitivity=1.0, epsilon=1.0, rng=0)
    assert matrix.shape == (3, 4)


def test_laplace_mechanism_reproducible_with_seed():
    a = laplace_mechanism([1.0, 2.0], sensitivity=1.0, epsilon=1.0, rng=42)
    b = laplace_mechanism([1.0, 2.0], sensitivity=1.0, epsilon=1.0, rng=np.random.default_rng(42))
    np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------- Gaussian


def test_classical_gaussian_sigma_closed_form():
    for sens, eps, delta in [(1.0, 0.5, 1e-5), (0.3, 0.1, 1e-8), (2.0, 0.99, 0.01)]:
        expected = sens * math.sqrt(2 * math.log(1.25 / delta)) / eps
        assert gaussian_sigma(sens, eps, delta) == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize("eps", [1.0, 2.5])
def test_classical_gaussian_refuses_large_epsilon(eps):
    with pytest.raises(ValueError, match="epsilon.*analytic_gaussian_sigma"):
        gaussian_sigma(1.0, eps, 1e-5)


GRID_EPS = [1e-4, 1e-2, 0.1, 0.5, 0.99, 1.0, 3.0, 10.0, 100.0]
GRID_DELTA = [1e-15, 1e-10, 1e-6, 1e-3, 0.1, 0.5]
GRID_SENS = [1e-3, 1.0, 25.0]


def test_analytic_gaussian_satisfies_balle_wang_equation_on_grid():
    for eps in GRID_EPS:
        for delta in GRID_DELTA:
            for sens in GRID_SENS:
                sigma = analytic_gaussian_sigma(sens, eps, delta)
                exact = balle_wang_delta_mp(sigma, sens, eps)
                assert abs(exact / delta - 1.0) < 1e-9, (eps, delta, sens)
                # and it is the smallest such σ: slightly less noise breaks (ε, δ).
                assert balle_wang_delta_mp(sigma * (1 - 1e-7), sens, eps) > delta
                if eps < 1:
                    assert sigma < gaussian_sigma(sens, eps, delta)


@settings(max_examples=60, deadline=None)
@given(
    eps=st.floats(1e-4, 200.0),
    log10_delta=st.floats(-15.0, -0.05),
    sens=st.floats(1e-4, 1e4),
)
def test_analytic_gaussian_property(eps, log10_delta, sens):
    delta = 10.0**log10_delta
    sigma = analytic_gaussian_sigma(sens, eps, delta)
    assert abs(balle_wang_delta_mp(sigma, sens, eps) / delta - 1.0) < 1e-9
    # scale equivariance in the sensitivity
    assert sigma == pytest.approx(sens * analytic_gaussian_sigma(1.0, eps, delta), rel=1e-9)
    assert analytic_gaussian_delta(sigma, sensitivity=sens, epsilon=eps) <= delta * (1 + 1e-12)
    if eps < 1:
        assert sigma < gaussian_sigma(sens, eps, delta)


def test_analytic_gaussian_matches_dp_accounting():
    from dp_accounting.gaussian_mechanism import get_sigma_gaussian

    for eps in [0.05, 0.5, 2.0, 8.0]:
        for delta in [1e-9, 1e-5, 0.01]:
            assert analytic_gaussian_sigma(1.0, eps, delta) == pytest.approx(
                get_sigma_gaussian(eps, delta), rel=1e-8
            )


def test_gaussian_mechanism_std():
    n = 200_000
    sens, eps, delta = 2.0, 0.8, 1e-6
    for analytic, sigma in [
        (True, analytic_gaussian_sigma(sens, eps, delta)),
        (False, gaussian_sigma(sens, eps, delta)),
    ]:
        noisy = gaussian_mechanism(np.zeros(n), sensitivity=sens, epsilon=eps, delta=delta, rng=3, analytic=analytic)
        assert abs(noisy.mean()) < Z * sigma / math.sqrt(n)
        assert abs(noisy.std(ddof=1) - sigma) < Z * sigma / math.sqrt(2 * n)
        assert stats.kstest(noisy, stats.norm(scale=sigma).cdf).pvalue > P_FLOOR
    assert isinstance(gaussian_mechanism(0.0, sensitivity=1, epsilon=1, delta=1e-5, rng=0), float)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_mechanism(0.0, sensitivity=1, epsilon=2.0, delta=1e-5, rng=0, analytic=False)


# --------------------------------------------------------------------------- exponential mechanism


def direct_em(scores, eps, sens, monotone=False):
    factor = eps / (sens if monotone else 2 * sens)
    w = np.exp(factor * np.asarray(scores, dtype=float))
    return w / w.sum()


def test_exponential_probabilities_exact():
    scores = [0.0, 1.0, 2.5, -3.0, 0.7]
    for monotone in (False, True):
        got = exponential_mechanism_probabilities(scores, epsilon=1.3, sensitivity=0.5, monotone=monotone)
        np.testing.assert_allclose(got, direct_em(scores, 1.3, 0.5, monotone), rtol=1e-13, atol=0)
    # Large scores: no overflow, invariant under shifts.
    big = np.array(scores) + 1e6
    np.testing.assert_allclose(
        exponential_mechanism_probabilities(big, epsilon=1.3, sensitivity=0.5),
        direct_em(scores, 1.3, 0.5),
        rtol=1e-9,
    )
    tiny = exponential_mechanism_probabilities([-1e308, 0.0], epsilon=1.0, sensitivity=1.0)
    np.testing.assert_array_equal(tiny, [0.0, 1.0])


def test_exponential_probabilities_infinite_scores():
    p = exponential_mechanism_probabilities([1.0, np.inf, -np.inf, np.inf], epsilon=1.0, sensitivity=1.0)
    np.testing.assert_array_equal(p, [0.0, 0.5, 0.0, 0.5])
    p = exponential_mechanism_probabilities([0.0, -np.inf, 1.0], epsilon=2.0, sensitivity=1.0)
    expected = np.array([1.0, 0.0, math.e]) / (1.0 + math.e)
    np.testing.assert_allclose(p, expected, rtol=1e-14)
    with pytest.raises(ValueError, match="all -inf"):
        exponential_mechanism_probabilities([-np.inf, -np.inf], epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="scores.*NaN"):
        exponential_mechanism_probabilities([0.0, np.nan], epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="scores"):
        exponential_mechanism_probabilities([], epsilon=1.0, sensitivity=1.0)


def test_exponential_mechanism_frequencies_chi_square():
    scores = np.array([0.0, 1.0, 2.0, 3.0, -np.inf, 0.5])
    p = exponential_mechanism_probabilities(scores, epsilon=1.0, sensitivity=1.0)
    rng = np.random.default_rng(7)
    n = 20_000
    draws = np.array([exponential_mechanism(scores, epsilon=1.0, sensitivity=1.0, rng=rng) for _ in range(n)])
    counts = np.bincount(draws, minlength=scores.size)
    assert counts[4] == 0  # probability-0 candidate never chosen
    keep = p > 0
    assert stats.chisquare(counts[keep], n * p[keep]).pvalue > P_FLOOR


def test_exponential_mechanism_infinite_winner():
    rng = np.random.default_rng(0)
    picks = {exponential_mechanism([0.0, np.inf, 5.0], epsilon=1.0, sensitivity=1.0, rng=rng) for _ in range(50)}
    assert picks == {1}


def test_report_noisy_max_selection_probability():
    # Two candidates with gap d: P(pick the larger) = P(L0 − L1 < d) for iid Lap(b),
    # = 1 − ½·e^{−d/b}(1 + d/(2b)); this pins the documented scale b.
    d, eps, sens = 1.0, 1.0, 1.0
    rng = np.random.default_rng(11)
    n = 20_000
    for monotone, b in [(False, 2 * sens / eps), (True, sens / eps)]:
        picks = np.array(
            [report_noisy_max([0.0, d], epsilon=eps, sensitivity=sens, rng=rng, monotone=monotone) for _ in range(n)]
        )
        expected = 1 - 0.5 * math.exp(-d / b) * (1 + d / (2 * b))
        assert abs(picks.mean() - expected) < Z * math.sqrt(expected * (1 - expected) / n)
    assert report_noisy_max([0.0, 1e9, 3.0], epsilon=1.0, sensitivity=1.0, rng=0) == 1


# --------------------------------------------------------------------------- sparse vector


def test_sparse_vector_default_scales():
    sv = SparseVector(0.0, epsilon=0.5, sensitivity=0.2, rng=0, max_hits=3)
    assert sv.threshold_scale == pytest.approx(2 * 3 * 0.2 / 0.5)
    assert sv.query_scale == pytest.approx(4 * 3 * 0.2 / 0.5)
    mono = SparseVector(0.0, epsilon=0.5, sensitivity=0.2, rng=0, max_hits=3, monotone=True)
    assert mono.threshold_scale == pytest.approx(2 * 3 * 0.2 / 0.5)
    assert mono.query_scale == pytest.approx(2 * 3 * 0.2 / 0.5)
    custom = SparseVector(1.0, epsilon=0.5, sensitivity=0.2, rng=0, threshold_scale=0.7, query_scale=1.4)
    assert (custom.threshold_scale, custom.query_scale) == (0.7, 1.4)


def test_sparse_vector_halts_after_max_hits():
    sv = SparseVector(0.0, epsilon=1.0, sensitivity=1.0, rng=5, max_hits=2)
    answers = [sv.query(-1e9) for _ in range(10)]
    assert answers == [False] * 10 and sv.hits == 0
    assert sv.query(1e9) is True
    assert sv.query(-1e9) is False
    assert sv.query(1e9) is True
    assert sv.exhausted and sv.hits == 2 and sv.n_queries == 13 and sv.remaining_hits == 0
    with pytest.raises(SparseVectorExhausted, match="max_hits=2"):
        sv.query(0.0)
    assert issubclass(SparseVectorExhausted, RuntimeError)
    assert sv.n_queries == 13  # the refused query is not counted


def test_sparse_vector_first_answer_probability():
    # value = T: P(T + ν ≥ T + ρ) = P(ν ≥ ρ) = 1/2 for independent symmetric noise.
    rng = np.random.default_rng(9)
    n = 20_000
    hits = sum(SparseVector(0.3, epsilon=1.0, sensitivity=1.0, rng=rng).query(0.3) for _ in range(n))
    assert abs(hits / n - 0.5) < Z * math.sqrt(0.25 / n)


def test_sparse_vector_threshold_redraw_is_laplace():
    # Force a hit on every query (tiny query noise, huge value) and record the
    # internal noisy threshold after each redraw: it must be T + Lap(threshold_scale).
    n = 20_000
    T, scale = 2.0, 1.5
    sv = SparseVector(
        T, epsilon=1.0, sensitivity=1.0, rng=21, max_hits=n + 1, threshold_scale=scale, query_scale=1e-12
    )
    redraws = np.empty(n)
    for i in range(n):
        assert sv.query(1e9)
        redraws[i] = sv._noisy_threshold
    noise = redraws - T
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > P_FLOOR
    # A Gaussian of the same variance is rejected overwhelmingly.
    assert stats.kstest(noise, stats.norm(scale=math.sqrt(2) * scale).cdf).pvalue < 1e-6
    # No redraw after the last allowed hit.
    sv2 = SparseVector(0.0, epsilon=1.0, sensitivity=1.0, rng=3, max_hits=1)
    before = sv2._noisy_threshold
    assert sv2.query(1e9) and sv2._noisy_threshold == before


def test_sparse_vector_bad_input():
    with pytest.raises(ValueError, match="epsilon"):
        SparseVector(0.0, epsilon=0.0, sensitivity=1.0, rng=0)
    with pytest.raises(ValueError, match="max_hits"):
        SparseVector(0.0, epsilon=1.0, sensitivity=1.0, rng=0, max_hits=0)
    with pytest.raises(ValueError, match="threshold"):
        SparseVector(float("nan"), epsilon=1.0, sensitivity=1.0, rng=0)
    with pytest.raises(ValueError, match="query_scale"):
        SparseVector(0.0, epsilon=1.0, sensitivity=1.0, rng=0, query_scale=-1.0)
    sv = SparseVector(0.0, epsilon=1.0, sensitivity=1.0, rng=0)
    with pytest.raises(ValueError, match="value"):
        sv.query(float("nan"))
    with pytest.raises(TypeError, match="rng"):
        SparseVector(0.0, epsilon=1.0, sensitivity=1.0, rng=None)


# --------------------------------------------------------------------------- sub-sampling


def test_subsampled_epsilon_closed_form():
    for eps, q in [(0.1, 0.01), (1.0, 0.5), (5.0, 0.2), (0.3, 1.0)]:
        assert subsampled_epsilon(eps, q) == pytest.approx(math.log(1 + q * (math.exp(eps) - 1)), rel=1e-13)
    assert subsampled_epsilon(0.7, 1.0) == pytest.approx(0.7, rel=1e-15)
    # large ε: no overflow, ε + ln q asymptotically
    assert subsampled_epsilon(800.0, 0.1) == pytest.approx(800.0 + math.log(0.1), rel=1e-14)
    # Priv-PC's sieve budget (Wang et al. 2020, Thm 1): ε' = ln((n/m)(e^{ε/2} − 1) + 1).
    n, m, eps = 10_000, 1_000, 1.0
    assert epsilon_for_subsampled(eps / 2, m / n) == pytest.approx(math.log(n / m * (math.exp(eps / 2) - 1) + 1))


@settings(max_examples=100, deadline=None)
@given(eps=st.floats(1e-6, 500.0), q=st.floats(1e-6, 1.0))
def test_subsampled_epsilon_inverse_roundtrip(eps, q):
    amplified = subsampled_epsilon(eps, q)
    assert 0 < amplified <= eps * (1 + 1e-12)
    assert epsilon_for_subsampled(amplified, q) == pytest.approx(eps, rel=1e-9)


def test_subsampled_bad_input():
    with pytest.raises(ValueError, match=r"q must lie in \(0, 1\]"):
        subsampled_epsilon(1.0, 0.0)
    with pytest.raises(ValueError, match="q"):
        subsampled_epsilon(1.0, 1.5)
    with pytest.raises(ValueError, match="target_epsilon"):
        epsilon_for_subsampled(-1.0, 0.5)


# --------------------------------------------------------------------------- composition


def test_advanced_composition_closed_forms():
    eps, delta, k, dp = 0.1, 1e-7, 100, 1e-6
    expected = math.sqrt(2 * k * math.log(1 / dp)) * eps + k * eps * (math.exp(eps) - 1)
    e_k, d_k = advanced_composition_k(eps, delta, k, dp)
    assert e_k == pytest.approx(expected, rel=1e-13) and d_k == pytest.approx(k * delta + dp, rel=1e-13)
    e_h, d_h = advanced_composition([eps] * k, [delta] * k, dp)
    assert (e_h, d_h) == pytest.approx((e_k, d_k), rel=1e-12)
    assert advanced_composition([eps] * k, delta, dp) == pytest.approx((e_k, d_k), rel=1e-12)
    epsilons = np.array([0.1, 0.5, 0.05, 1.0])
    het = math.sqrt(2 * math.log(1 / dp) * np.sum(epsilons**2)) + np.sum(epsilons * np.expm1(epsilons))
    assert advanced_composition(epsilons, [0, 1e-8, 0, 1e-9], dp) == pytest.approx((het, 1.1e-8 + dp), rel=1e-12)
    with pytest.raises(ValueError, match="deltas"):
        advanced_composition([0.1, 0.2], [0.0], dp)
    with pytest.raises(ValueError, match="delta_prime"):
        advanced_composition([0.1], 0.0, 0.0)
    with pytest.raises(ValueError, match="epsilons"):
        advanced_composition([0.1, -0.2], 0.0, 1e-6)


# --------------------------------------------------------------------------- ledger


def test_empty_ledger_totals_zero():
    ledger = PrivacyLedger()
    for method in METHODS:
        total = ledger.total(method)
        assert (total.epsilon, total.delta) == (0.0, 0.0)
    assert ledger.n_charges == 0 and ledger.epsilons().size == 0
    assert ledger.to_frame().empty


def test_ledger_basic_and_advanced_closed_forms():
    ledger = PrivacyLedger(public=("n", "domains"))
    ledger.charge("ci_test", epsilon=0.1, count=200, kind="laplace", sensitivity=0.01, scale=0.1)
    ledger.charge("select", epsilon=0.5, count=4, kind="exponential")
    ledger.charge("cov", epsilon=0.3, delta=1e-6, count=2, kind="gaussian")
    eps = np.array([0.1] * 200 + [0.5] * 4 + [0.3] * 2)
    dls = np.array([0.0] * 204 + [1e-6] * 2)
    np.testing.assert_allclose(ledger.epsilons(), eps)
    np.testing.assert_allclose(ledger.deltas(), dls)
    assert ledger.n_charges == 206 and len(ledger.entries) == 3
    basic = ledger.total("basic")
    assert basic.epsilon == pytest.approx(eps.sum(), rel=1e-14) and basic.delta == pytest.approx(2e-6)
    adv = ledger.total("advanced", delta_prime=1e-5)
    expected = math.sqrt(2 * math.log(1e5) * np.sum(eps**2)) + np.sum(eps * np.expm1(eps))
    assert adv.bound == "advanced"
    assert adv.epsilon == pytest.approx(expected, rel=1e-12) and adv.delta == pytest.approx(2e-6 + 1e-5)


def test_ledger_advanced_capped_by_basic():
    ledger = PrivacyLedger()
    ledger.charge("one", epsilon=1.0, kind="pure")
    total = ledger.total("advanced")
    assert total.bound == "basic" and total.epsilon == 1.0 and total.delta == 0.0


charge_strategy = st.tuples(
    st.sampled_from(["laplace", "exponential", "pure", "approx", "gaussian"]),
    st.floats(0.01, 3.0),
    st.integers(1, 50),
)


@settings(max_examples=80, deadline=None)
@given(charges=st.lists(charge_strategy, min_size=1, max_size=6), delta_prime=st.floats(1e-12, 0.1))
def test_advanced_never_above_basic(charges, delta_prime):
    ledger = PrivacyLedger()
    for kind, eps, count in charges:
        delta = 1e-7 if kind in ("approx", "gaussian") else 0.0
        ledger.charge(kind, epsilon=eps, delta=delta, count=count, kind=kind)
    basic = ledger.total("basic")
    adv = ledger.total("advanced", delta_prime=delta_prime)
    assert adv.epsilon <= basic.epsilon
    assert adv.delta >= basic.delta


def tight_pld_epsilon(multiplier, k, delta, pessimistic):
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    pld = pld_lib.from_laplace_mechanism(parameter=multiplier, pessimistic_estimate=pessimistic).self_compose(k)
    return pld.get_epsilon_for_delta(delta)


def test_ledger_tight_laplace_between_bounds():
    k, eps, dp = 200, 0.1, 1e-6
    ledger = PrivacyLedger()
    ledger.charge("ci_test", epsilon=eps, count=k, kind="laplace")
    tight = ledger.total("tight", delta_prime=dp)
    adv = ledger.total("advanced", delta_prime=dp)
    basic = ledger.total("basic")
    assert tight.bound == "tight" and tight.target_delta == pytest.approx(dp)
    assert tight.epsilon <= adv.epsilon <= basic.epsilon
    # Lower sanity bound: the optimistic PLD estimate is below the true ε.
    optimistic = tight_pld_epsilon(1 / eps, k, dp, pessimistic=False)
    assert optimistic <= tight.epsilon <= optimistic + 1e-2


def test_ledger_tight_matches_pld_accountant_events():
    from dp_accounting import dp_event
    from dp_accounting.pld import PLDAccountant

    ledger = PrivacyLedger()
    ledger.charge("lap", epsilon=0.2, count=30, kind="laplace")
    sigma = gaussian_sigma(1.0, 0.4, 1e-5)
    ledger.charge("gauss", epsilon=0.4, delta=1e-5, count=5, kind="gaussian", sensitivity=1.0, scale=sigma)
    target = 1e-4
    accountant = PLDAccountant()
    accountant.compose(dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(5.0), 30))
    accountant.compose(dp_event.GaussianDpEvent(sigma), 5)
    assert ledger.total("tight", target_delta=target).epsilon == pytest.approx(accountant.get_epsilon(target), rel=1e-9)


def test_ledger_tight_gaussian_against_exact():
    from dp_accounting.gaussian_mechanism import get_epsilon_gaussian

    multiplier, k, target = 3.0, 16, 1e-6
    ledger = PrivacyLedger()
    sigma = multiplier
    eps_one = get_epsilon_gaussian(sigma, 1e-5)
    ledger.charge("g", epsilon=eps_one * (1 + 1e-9), delta=1e-5, count=k, kind="gaussian", sensitivity=1.0, scale=sigma)
    exact = get_epsilon_gaussian(multiplier / math.sqrt(k), target)  # k Gaussians = one with σ/√k
    tight = ledger.total("tight", target_delta=target)
    assert exact <= tight.epsilon <= exact + 1e-2


def kov_delta(eps: float, k: int, eps_total: float) -> float:
    """Exact δ(ε_total) of the k-fold composition of ε-DP randomized response (KOV15)."""
    ls = np.arange(k + 1)
    terms = comb(k, ls) * np.maximum(0.0, np.exp(eps * (k - ls)) - np.exp(eps_total + eps * ls))
    return float(terms.sum() / (1 + math.exp(eps)) ** k)


def test_ledger_tight_pure_is_optimal_composition():
    eps, k, target = 0.5, 12, 1e-3
    ledger = PrivacyLedger()
    ledger.charge("em", epsilon=eps, count=k, kind="exponential")
    tight = ledger.total("tight", target_delta=target)
    assert tight.bound == "tight"
    assert kov_delta(eps, k, tight.epsilon) <= target * (1 + 1e-9)  # valid
    assert kov_delta(eps, k, tight.epsilon - 0.01) > target  # and tight to the grid


def test_ledger_tight_capped_by_basic():
    ledger = PrivacyLedger()
    ledger.charge("one", epsilon=0.50003, kind="pure")  # grid rounding would give 0.5001
    total = ledger.total("tight")
    assert total.epsilon == pytest.approx(0.50003) and total.bound == "basic" and total.delta == 0.0


@settings(max_examples=15, deadline=None)
@given(charges=st.lists(charge_strategy, min_size=1, max_size=4))
def test_tight_never_above_basic(charges):
    ledger = PrivacyLedger()
    for kind, eps, count in charges:
        delta = 1e-7 if kind in ("approx", "gaussian") else 0.0
        ledger.charge(kind, epsilon=eps, delta=delta, count=count, kind=kind)
    tight = ledger.total("tight", value_discretization_interval=1e-3)
    assert tight.epsilon <= ledger.total("basic").epsilon


def test_ledger_charge_validation():
    ledger = PrivacyLedger()
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        ledger.charge("x", epsilon=0.0)
    with pytest.raises(ValueError, match="epsilon"):
        ledger.charge("x", epsilon=float("nan"))
    with pytest.raises(ValueError, match="delta must be 0"):
        ledger.charge("x", epsilon=1.0, delta=1e-5, kind="laplace")
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 1\)"):
        ledger.charge("x", epsilon=1.0, delta=0.0, kind="gaussian")
    with pytest.raises(ValueError, match="delta"):
        ledger.charge("x", epsilon=1.0, delta=1.0, kind="approx")
    with pytest.raises(ValueError, match="kind"):
        ledger.charge("x", epsilon=1.0, kind="renyi")
    with pytest.raises(ValueError, match="count"):
        ledger.charge("x", epsilon=1.0, count=0)
    with pytest.raises(ValueError, match="together"):
        ledger.charge("x", epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="kind='pure'"):
        ledger.charge("x", epsilon=1.0, kind="laplace", sensitivity=1.0, scale=2.0)
    with pytest.raises(ValueError, match="not"):
        ledger.charge("x", epsilon=1.0, delta=1e-5, kind="gaussian", sensitivity=1.0, scale=1.0)
    with pytest.raises(TypeError, match="mechanism"):
        ledger.charge("", epsilon=1.0)
    with pytest.raises(ValueError, match="relation"):
        PrivacyLedger("swap")
    with pytest.raises(ValueError, match="method"):
        ledger.total("renyi")
    with pytest.raises(ValueError, match="target_delta"):
        ledger.total("tight", target_delta=0.0)
    assert len(ledger) == 0  # nothing was recorded by the failed calls


def test_ledger_extend_summary_frame():
    main = PrivacyLedger("replace", public=("n",))
    main.charge("a", epsilon=0.2, count=3, note="order 0")
    sub = PrivacyLedger("replace", public=("domains",))
    sub.charge("b", epsilon=0.1, delta=1e-8, count=2, kind="approx")
    main.extend(sub)
    assert main.public == ("n", "domains") and main.n_charges == 5
    summary = main.summary()
    json.dumps(summary)  # JSON-serialisable
    assert summary["relation"] == "replace" and summary["public"] == ["n", "domains"]
    assert {m["mechanism"]: m["count"] for m in summary["mechanisms"]} == {"a": 3, "b": 2}
    assert set(summary["totals"]) == set(METHODS)
    assert summary["totals"]["basic"]["epsilon"] == pytest.approx(0.8)
    for method in METHODS:
        assert summary["totals"][method]["epsilon"] <= summary["totals"]["basic"]["epsilon"] + 1e-12
    frame = main.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 2
    assert {"mechanism", "epsilon", "delta", "count", "kind", "noise_multiplier"} <= set(frame.columns)
    with pytest.raises(ValueError, match="neighbouring"):
        main.extend(PrivacyLedger("add/remove"))
    assert isinstance(main.total("basic"), PrivacyTotal)


# --------------------------------------------------------------------------- bad input everywhere


BAD_EPSILONS = [0.0, -1.0, float("nan"), float("inf")]


@pytest.mark.parametrize("bad", BAD_EPSILONS)
def test_bad_epsilon_named(bad):
    calls = [
        lambda: laplace_scale(1.0, bad),
        lambda: laplace_mechanism(0.0, sensitivity=1.0, epsilon=bad, rng=0),
        lambda: gaussian_sigma(1.0, bad, 1e-5),
        lambda: analytic_gaussian_sigma(1.0, bad, 1e-5),
        lambda: exponential_mechanism_probabilities([0.0, 1.0], epsilon=bad, sensitivity=1.0),
        lambda: report_noisy_max([0.0, 1.0], epsilon=bad, sensitivity=1.0, rng=0),
        lambda: subsampled_epsilon(bad, 0.5),
        lambda: advanced_composition_k(bad, 0.0, 3, 1e-6),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="epsilon"):
            call()


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_bad_delta_named(bad):
    with pytest.raises(ValueError, match="delta"):
        analytic_gaussian_sigma(1.0, 1.0, bad)
    with pytest.raises(ValueError, match="delta"):
        gaussian_sigma(1.0, 0.5, bad)
    with pytest.raises(ValueError, match="delta"):
        gaussian_mechanism(0.0, sensitivity=1.0, epsilon=1.0, delta=bad, rng=0)


def test_bad_values_and_types():
    with pytest.raises(ValueError, match="sensitivity"):
        laplace_scale(0.0, 1.0)
    with pytest.raises(ValueError, match="value"):
        laplace_mechanism([0.0, np.nan], sensitivity=1.0, epsilon=1.0, rng=0)
    with pytest.raises(TypeError, match="epsilon"):
        laplace_scale(1.0, "1")
    with pytest.raises(TypeError, match="rng"):
        laplace_mechanism(0.0, sensitivity=1.0, epsilon=1.0, rng="seed")
    with pytest.raises(ValueError, match="scores.*NaN"):
        exponential_mechanism([0.0, np.nan], epsilon=1.0, sensitivity=1.0, rng=0)
    with pytest.raises(ValueError, match="scores.*NaN"):
        report_noisy_max([np.nan], epsilon=1.0, sensitivity=1.0, rng=0)
    with pytest.raises(ValueError, match="scores"):
        exponential_mechanism_probabilities(np.zeros((2, 2)), epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="k"):
        advanced_composition_k(0.1, 0.0, 0, 1e-6)


# --------------------------------------------------------------------------- sub-sampled Gaussian charges


def _pld_accountant_epsilon(event, relation: str, delta: float) -> float:
    from dp_accounting import privacy_accountant
    from dp_accounting.pld import pld_privacy_accountant

    rel = privacy_accountant.NeighboringRelation
    accountant = pld_privacy_accountant.PLDAccountant(
        rel.ADD_OR_REMOVE_ONE if relation == "add/remove" else rel.REPLACE_ONE
    )
    accountant.compose(event)
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("relation", ["add/remove", "replace"])
def test_ledger_subsampled_gaussian_matches_pld_accountant(relation):
    from dp_accounting import dp_event

    sigma, q, k, step_delta, target = 2.0, 0.05, 120, 1e-8, 1e-5
    step = dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma))
    one = PrivacyLedger(relation)
    one.charge("ci_test", kind="subsampled_gaussian", sampling_rate=q, noise_multiplier=sigma, delta=step_delta,
               count=k)
    many = PrivacyLedger(relation)
    for _ in range(k):
        many.charge("ci_test", kind="subsampled_gaussian", sampling_rate=q, noise_multiplier=sigma,
                    delta=step_delta)
    expected = _pld_accountant_epsilon(dp_event.SelfComposedDpEvent(step, k), relation, target)
    for ledger in (one, many):
        total = ledger.total("tight", target_delta=target)
        assert total.bound == "tight"
        assert total.epsilon == pytest.approx(expected, rel=1e-9)
    # basic / advanced use one step's (epsilon, delta) from the same accountant
    step_eps = _pld_accountant_epsilon(step, relation, step_delta)
    # the ledger's per-step PLD grid is 1e-3 of the unsampled ε (here ≤ 0.01 wide) instead of the
    # accountant's 1e-4; pessimistic rounding can only raise ε, by at most a few grid widths
    assert step_eps - 1e-9 <= one.entries[0].epsilon <= step_eps + 0.03
    basic = one.total("basic")
    assert basic.epsilon == pytest.approx(k * one.entries[0].epsilon) and basic.delta == pytest.approx(k * step_delta)
    assert one.total("advanced", delta_prime=1e-6).epsilon <= basic.epsilon


def test_ledger_subsampled_gaussian_rdp_accountant_is_looser():
    """Mironov et al.'s RDP accountant (add/remove only) bounds the same composition from above."""
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant

    for sigma, q, k in [(2.0, 0.05, 200), (4.0, 0.3, 30), (1.5, 0.01, 500)]:
        ledger = PrivacyLedger("add/remove")
        ledger.charge("ci_test", kind="subsampled_gaussian", sampling_rate=q, noise_multiplier=sigma, delta=1e-9,
                      count=k)
        tight = ledger.total("tight", target_delta=1e-5).epsilon
        rdp = rdp_privacy_accountant.RdpAccountant()
        rdp.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), k)
        rdp_eps = rdp.get_epsilon(1e-5)
        # both are upper bounds; the RDP-to-DP conversion is the looser one (measured ratio 1.1-1.2 here)
        assert tight <= rdp_eps <= 1.5 * tight


def test_ledger_subsampled_gaussian_composes_with_laplace():
    from dp_accounting import dp_event

    ledger = PrivacyLedger("add/remove")
    ledger.charge("sieve", epsilon=0.5, count=3, kind="laplace")
    ledger.charge("ci_test", kind="subsampled_gaussian", sampling_rate=0.1, noise_multiplier=3.0, delta=1e-9,
                  count=40)
    event = dp_event.ComposedDpEvent([
        dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(2.0), 3),
        dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(3.0)), 40),
    ])
    expected = _pld_accountant_epsilon(event, "add/remove", 1e-5)
    assert ledger.total("tight", target_delta=1e-5).epsilon == pytest.approx(expected, rel=1e-6)


def test_ledger_subsampled_gaussian_full_sampling_is_gaussian():
    """q = 1 under add/remove is the plain Gaussian mechanism with the same noise multiplier."""
    sigma = 2.5
    sub = PrivacyLedger("add/remove")
    sub.charge("t", kind="subsampled_gaussian", sampling_rate=1.0, noise_multiplier=sigma, delta=1e-6, count=7)
    plain = PrivacyLedger("add/remove")
    eps = 1.0
    plain.charge("t", epsilon=eps, delta=analytic_gaussian_delta(sigma, sensitivity=1.0, epsilon=eps),
                 kind="gaussian", sensitivity=1.0, scale=sigma, count=7)
    assert sub.total("tight", target_delta=1e-5).epsilon == pytest.approx(
        plain.total("tight", target_delta=1e-5).epsilon, rel=1e-6)


def test_ledger_subsampled_gaussian_validation():
    ledger = PrivacyLedger()
    sg = {"kind": "subsampled_gaussian", "delta": 1e-6}
    with pytest.raises(ValueError, match="sampling_rate"):
        ledger.charge("x", noise_multiplier=1.0, **sg)
    with pytest.raises(ValueError, match="sampling_rate"):
        ledger.charge("x", noise_multiplier=1.0, sampling_rate=1.5, **sg)
    with pytest.raises(ValueError, match="noise_multiplier"):
        ledger.charge("x", sampling_rate=0.1, **sg)
    with pytest.raises(ValueError, match="delta"):
        ledger.charge("x", kind="subsampled_gaussian", sampling_rate=0.1, noise_multiplier=1.0, delta=0.0)
    with pytest.raises(ValueError, match="below"):
        ledger.charge("x", epsilon=1e-3, sampling_rate=0.1, noise_multiplier=1.0, **sg)
    with pytest.raises(ValueError, match="does not match"):
        ledger.charge("x", sampling_rate=0.1, noise_multiplier=1.0, sensitivity=1.0, scale=2.0, **sg)
    with pytest.raises(ValueError, match="subsampled_gaussian"):
        ledger.charge("x", epsilon=1.0, kind="laplace", sampling_rate=0.1)
    with pytest.raises(TypeError, match="epsilon"):
        ledger.charge("x", kind="laplace")
    assert len(ledger) == 0
    entry = ledger.charge("x", sampling_rate=0.1, sensitivity=0.5, scale=1.0, **sg)
    assert entry.noise_multiplier == pytest.approx(2.0) and entry.sampling_rate == 0.1
    assert "sampling_rate" in ledger.to_frame().columns

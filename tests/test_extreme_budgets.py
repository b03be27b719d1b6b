"""Every legal (ε, δ) gets an answer, never a traceback: the privacy floor and the registry at extreme budgets.

Two kinds of checks:

* the conversions and accountants (``relation.convert``/``needed``, μ-GDP, ρ-zCDP, the analytic Gaussian, the
  ledger's totals, advanced composition) at ε up to 1e300 and δ down to 1e-300: finite or ∞ results, no
  ``OverflowError``/``ZeroDivisionError``/NaN, and — against 400-digit arithmetic — never a guarantee smaller
  than the true one;
* every algorithm of :data:`dpcd.registry.ALGORITHMS`, under both relations, on a small public shape
  (p = 5 columns, n = 10 000 under replace-one): :func:`dpcd.registry.calibrate` and then the algorithm's privacy
  map on the calibrated parameters either give a finite guarantee within the request or refuse with a
  ``ValueError`` (``CalibrationRefused``) that says why — on a fixed grid of corners and on ε, δ drawn
  log-uniformly. Warnings are errors here, so an overflow warning fails too.
"""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcd import registry as reg
from dpcd.privacy import PrivacyLedger, advanced_composition, advanced_composition_k
from dpcd.privacy.calibration import largest_parameter
from dpcd.privacy.gdp import gdp_delta, gdp_epsilon, gdp_mu
from dpcd.privacy.mechanisms import analytic_gaussian_delta, analytic_gaussian_sigma
from dpcd.privacy.relation import convert, needed
from dpcd.privacy.zcdp import zcdp_delta, zcdp_epsilon, zcdp_rho

mpmath = pytest.importorskip("mpmath")

pytestmark = pytest.mark.filterwarnings("error")

P = 5
N = 10_000
EPSILONS = (1e-3, 1.0, 10.0, 50.0, 1e3, 1e6)
DELTAS = (1e-12, 1e-6, 0.1)
RELATIONS = ("replace", "add/remove")
HUGE = (1e6, 1e300)
LIBRARY_MESSAGES = ("math range error", "must have different signs", "division by zero", "overflow", "nan")
"""Phrases of numerical libraries' own errors: a refusal must explain the request, not quote them."""


# --------------------------------------------------------------------------- reference values in 400 digits


def _gaussian_delta_mp(epsilon: float, mu: float):
    """Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ), the exact δ(ε) of μ-GDP (and of the Gaussian with σ/Δ = 1/μ)."""
    with mpmath.workdps(400):
        e, m = mpmath.mpf(epsilon), mpmath.mpf(mu)
        return mpmath.ncdf(m / 2 - e / m) - mpmath.exp(e) * mpmath.ncdf(-m / 2 - e / m)


def _zcdp_delta_mp(epsilon: float, rho: float):
    """inf over α of the Canonne-Kamath-Steinke bound, at the α where its derivative vanishes (by bisection)."""
    with mpmath.workdps(400):
        e, r = mpmath.mpf(epsilon), mpmath.mpf(rho)

        def slope(g):
            a1 = mpmath.exp(g)
            return (1 + 2 * a1) * r + mpmath.log(a1 / (1 + a1)) - e

        low, high = mpmath.mpf(-2000), mpmath.mpf(700)
        for _ in range(200):  # to 1e-57 in g: far below what the flat minimum needs
            mid = (low + high) / 2
            low, high = (mid, high) if slope(mid) < 0 else (low, mid)
        a1 = mpmath.exp(low)
        alpha = 1 + a1
        log_bound = a1 * (alpha * r - e) - low + alpha * mpmath.log(1 - 1 / alpha)
        return min(mpmath.mpf(1), mpmath.exp(log_bound))


# --------------------------------------------------------------------------- relations


@pytest.mark.parametrize("epsilon", [*HUGE, 700.0, 745.0, 1.7e308])
@pytest.mark.parametrize("delta", [0.0, 1e-300, 1e-12, 0.1])
def test_needed_and_convert_never_overflow_and_round_trip_within_the_request(epsilon, delta):
    half, native = needed(epsilon, delta, source="add/remove", target="replace")
    assert half == epsilon / 2 and 0.0 <= native <= delta
    back = convert(half, native, source="add/remove", target="replace")
    assert back[0] <= epsilon and back[1] <= delta  # the round trip never exceeds the request
    forward = convert(epsilon, delta, source="add/remove", target="replace")
    assert 0.0 <= forward[1] <= 1.0 and not math.isnan(forward[0])
    if delta > 0 and epsilon >= 745.0:
        assert forward[1] == 1.0  # (1 + e^ε)δ ≥ 1: the vacuous guarantee, not an error


def test_convert_is_exact_in_logs_where_e_to_the_epsilon_overflows():
    # (1 + e^710)·1e-310 ≈ 0.0223, e^710 beyond the largest double: only through logs; never below the exact value
    eps, delta = convert(710.0, 1e-310, source="add/remove", target="replace")
    with mpmath.workdps(50):
        exact = (1 + mpmath.exp(710)) * mpmath.mpf(1e-310)
    assert eps == 1420.0 and exact <= delta <= exact * (1 + 1e-11)
    # the inverse at 1e6: δ e^{-5e5} underflows to 0, i.e. the add/remove proof must be pure ε/2-DP
    assert needed(1e6, 1e-6, source="add/remove", target="replace") == (5e5, 0.0)
    assert convert(1.0, 1.0, source="add/remove", target="replace") == (2.0, 1.0)  # δ = 1 converts to δ = 1


# --------------------------------------------------------------------------- accountants


@pytest.mark.parametrize("epsilon", [*HUGE, 1e20, 1.7e308])
@pytest.mark.parametrize("delta", [1e-300, 1e-12, 0.1])
def test_gdp_inverses_at_extreme_budgets_are_finite_and_correct(epsilon, delta):
    mu = gdp_mu(epsilon, delta)
    assert math.isfinite(mu) and mu > 0
    assert _gaussian_delta_mp(epsilon, mu) <= delta * (1 + 1e-9)  # μ never too large, even where δ(ε) cancels
    assert 0.0 <= gdp_delta(epsilon, mu) <= delta
    bolder = mu * (1 + 1e-6)
    eps = gdp_epsilon(bolder, delta)
    assert eps >= epsilon * (1 - 1e-9)
    if math.isfinite(eps):
        assert _gaussian_delta_mp(eps, bolder) <= delta * (1 + 1e-9)  # ε never too small


def test_gdp_limits():
    assert gdp_epsilon(1e155, 1e-6) == math.inf  # μ²/2 is beyond the largest double: a true, vacuous bound
    assert gdp_delta(1e300, 1e3) == 0.0 and gdp_delta(1e-300, 1e300) == pytest.approx(1.0)
    assert gdp_epsilon(0.5, 0.9) == 0.0 and gdp_epsilon(0.5, 0.9, positive=True) > 0.0
    mu = gdp_mu(1e-300, 1e-300)  # δ(ε) ≈ 0.4μ for negligible ε: found on log μ far below the old bracket's 1e-12
    assert 0.0 < mu < 1e-15 and _gaussian_delta_mp(1e-300, mu) <= 1e-300


@pytest.mark.parametrize("epsilon", [*HUGE, 1e20, 1.7e308])
@pytest.mark.parametrize("delta", [1e-300, 1e-12, 0.1])
def test_zcdp_inverses_at_extreme_budgets_are_finite_and_correct(epsilon, delta):
    rho = zcdp_rho(epsilon, delta)
    assert math.isfinite(rho) and rho > 0
    assert _zcdp_delta_mp(epsilon, rho) <= delta * (1 + 1e-9)
    assert 0.0 <= zcdp_delta(epsilon, rho) <= delta
    eps = zcdp_epsilon(rho * (1 + 1e-6), delta)
    assert math.isfinite(eps) and eps >= epsilon * (1 - 1e-9)
    assert _zcdp_delta_mp(eps, rho * (1 + 1e-6)) <= delta * (1 + 1e-9)


def test_zcdp_limits():
    assert zcdp_delta(1e6, 1e300) == 1.0 and zcdp_delta(1e300, 1.0) == 0.0  # no overflow of e^L either way
    assert 1.7e308 <= zcdp_epsilon(1.7e308, 1e-300) <= math.inf  # ε ≥ ρ; beyond the largest double it is ∞
    with pytest.raises(ValueError, match="raise epsilon or delta"):
        zcdp_rho(1e-300, 1e-300)


@pytest.mark.parametrize("epsilon", [*HUGE, 1e9])
@pytest.mark.parametrize("delta", [1e-300, 1e-12, 0.1])
def test_analytic_gaussian_at_extreme_budgets(epsilon, delta):
    sigma = analytic_gaussian_sigma(1.0, epsilon, delta)
    assert math.isfinite(sigma) and sigma > 0
    assert _gaussian_delta_mp(epsilon, 1.0 / sigma) <= delta * (1 + 1e-9)
    assert analytic_gaussian_delta(sigma, sensitivity=1.0, epsilon=epsilon) <= delta * (1 + 1e-9)


# --------------------------------------------------------------------------- composition and the ledger


def test_advanced_composition_of_huge_steps_is_infinite_not_an_error():
    assert advanced_composition([1e3, 0.1], 0.0, 1e-6)[0] == math.inf
    assert advanced_composition_k(1e300, 0.0, 3, 1e-6)[0] == math.inf


@pytest.mark.parametrize("epsilon", [*HUGE, 1.5e154])
def test_ledger_totals_at_huge_charges(epsilon):
    ledger = PrivacyLedger("replace")
    ledger.charge("step", epsilon=epsilon, count=3, kind="pure")
    for method in ("basic", "advanced"):
        total = ledger.total(method, delta_prime=1e-6)
        assert total.epsilon == pytest.approx(3 * epsilon) and total.delta <= 1e-6
    gaussian = PrivacyLedger("replace")
    gaussian.charge("noise", epsilon=epsilon, delta=1e-6, kind="gaussian", count=2)
    tight = gaussian.total("tight", target_delta=2e-6)
    assert math.isfinite(tight.epsilon) and tight.epsilon <= 2 * epsilon * (1 + 1e-9)


def test_a_composition_beyond_the_pld_librarys_range_is_reported_by_basic_composition():
    # 300 rounds of ε = 2.5: the PLD library's ε-for-δ clips near ln(largest double) = 709.78 there, which would
    # be below the true tight ε; the ledger reports basic composition instead
    ledger = PrivacyLedger("replace")
    ledger.charge("round", epsilon=2.5, count=300, kind="pure")
    total = ledger.total("tight", target_delta=1e-6, value_discretization_interval=2.5e-3)
    assert total.bound == "basic" and total.epsilon == pytest.approx(750.0)


def test_the_calibration_search_survives_extreme_targets():
    assert largest_parameter(lambda x: 10 * x, epsilon=1e300) > 0  # log(total/ε) as a difference of logs
    assert largest_parameter(lambda x: 0.0 if x < 0.1 else 10 * x, epsilon=1e-3) >= 1e-4  # a (0, δ) plateau
    assert largest_parameter(lambda x: math.nan if x > 1 else x, epsilon=10.0) <= 1  # NaN counts as infeasible


# --------------------------------------------------------------------------- every algorithm of the registry


def _check_request(name: str, relation: str, epsilon: float, delta: float) -> str:
    """Calibrate ``name`` for (ε, δ) under ``relation`` and evaluate its privacy map on the result: "ok" with a
    guarantee within the request, "refused" with a refusal that says why; anything else fails the test."""
    spec = reg.ALGORITHMS[name]
    n = N if relation == "replace" else None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            calibration = reg.calibrate(spec, p=P, n=n, epsilon=epsilon, delta=delta, relation=relation)
            worst = reg.worst_case_of(spec, p=P, n=n, **calibration.kwargs)
        except ValueError as error:  # CalibrationRefused is one
            message = str(error)
            assert message.strip(), f"{name}: an empty refusal"
            assert not any(phrase in message.lower() for phrase in LIBRARY_MESSAGES), f"{name}: {message}"
            return "refused"
    for eps, dlt in (worst.under(relation), (calibration.guarantee["epsilon"], calibration.guarantee["delta"])):
        assert math.isfinite(eps) and math.isfinite(dlt), (name, relation, epsilon, delta, eps, dlt)
        assert 0.0 <= eps <= epsilon * (1 + 1e-6), (name, relation, epsilon, delta, eps)
        assert 0.0 <= dlt <= delta, (name, relation, epsilon, delta, dlt)
    value = calibration.kwargs[spec.budget_arg]
    assert math.isfinite(value) and value > 0, (name, value)
    return "ok"


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("name", sorted(reg.ALGORITHMS))
def test_every_algorithm_answers_every_corner_of_the_budget(name, relation):
    outcomes = {(epsilon, delta): _check_request(name, relation, epsilon, delta)
                for epsilon in EPSILONS for delta in DELTAS}
    spec = reg.ALGORITHMS[name]
    serves = spec.differentially_private and not spec.exact_subset and (
        relation == "replace" or spec.relation.name == "add/remove")
    if serves:  # an algorithm that can make a release at all is calibrated at ε ≥ 1 and δ ≥ 1e-6
        assert all(outcomes[(epsilon, delta)] == "ok" for epsilon in EPSILONS[1:] for delta in DELTAS[1:]), outcomes


@settings(max_examples=5, deadline=None)
@given(log_epsilon=st.floats(min_value=-3.0, max_value=6.0), log_delta=st.floats(min_value=-12.0, max_value=-1.0),
       relation=st.sampled_from(RELATIONS))
@pytest.mark.parametrize("name", sorted(reg.ALGORITHMS))
def test_every_algorithm_answers_budgets_drawn_log_uniformly(name, log_epsilon, log_delta, relation):
    _check_request(name, relation, 10.0 ** log_epsilon, 10.0 ** log_delta)

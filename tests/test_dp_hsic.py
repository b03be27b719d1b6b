"""dpHSIC (:mod:`dpcd.ci.hsic`): the sensitivity against a search for the worst pair, type I error under the null,
the decision as the only release, argument checks, and the audit case with its broken variant."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpcd import audit
from dpcd.audit.ci import ObservedSpreadHSIC, dp_hsic_cases
from dpcd.ci.hsic import (
    DPHSICResult,
    dp_hsic_test,
    fourier_features,
    hsic_norm_sensitivity,
    hsic_norms,
    kernel_diameter,
    noisy_permutation_decision,
)

BOX = (-1.0, 1.0)


def _norm_by_definition(phi: np.ndarray, psi: np.ndarray) -> float:
    """||Ĉ||_HS from explicit feature vectors: (1/m) Σ φ_i ψ_iᵀ − φ̄ ψ̄ᵀ, its Frobenius norm."""
    m = phi.shape[0]
    C = phi.T @ psi / m - np.outer(phi.mean(axis=0), psi.mean(axis=0))
    return float(np.linalg.norm(C))


def _gaussian_norm(x: np.ndarray, y: np.ndarray, bandwidth: float) -> float:
    """||Ĉ||_HS = sqrt(tr(K H L H)) / m from the Gram matrices, written out here independently of dpcd."""
    m = x.size
    K = np.exp(-(x[:, None] - x[None, :]) ** 2 / (2 * bandwidth ** 2))
    L = np.exp(-(y[:, None] - y[None, :]) ** 2 / (2 * bandwidth ** 2))
    H = np.eye(m) - 1.0 / m
    return float(np.sqrt(max(np.trace(K @ H @ L @ H), 0.0)) / m)


def test_the_statistic_and_its_permuted_values_match_the_definition():
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-1, 1, 40), rng.uniform(-1, 1, 40)
    t0, permuted = hsic_norms(x, y, bandwidth=0.5, n_permutations=5, method="exact", rng=1)
    assert t0 == pytest.approx(_gaussian_norm(x, y, 0.5), rel=1e-9)
    assert permuted.shape == (5,) and np.all(permuted >= 0)
    # the rff statistic is the norm of the explicit feature cross-covariance
    t_rff, _ = hsic_norms(x, y, bandwidth=0.5, n_permutations=1, method="rff", n_features=16, rng=2)
    generator = np.random.default_rng(2)
    phi = fourier_features(x[:, None], 0.5, 16, generator)
    psi = fourier_features(y[:, None], 0.5, 16, generator)
    assert t_rff == pytest.approx(_norm_by_definition(phi, psi), rel=1e-9)


@pytest.mark.parametrize("method", ["exact", "rff"])
def test_sensitivity_bounds_every_replacement_found_by_a_search_and_is_approached(method):
    """Exhaustive over a grid of the box: every record of random small data sets replaced by every grid point; the
    observed statistic and the statistics under fixed permutations never move by more than Δ, and the search
    comes within a factor 2 (Gaussian) or 4 (random features) of it."""
    m, bandwidth = 6, 0.1
    grid = np.linspace(-1, 1, 5)
    points = list(itertools.product(grid, grid))
    rng = np.random.default_rng(3)
    delta = hsic_norm_sensitivity(m, method)
    perms = [np.arange(m), rng.permutation(m), rng.permutation(m), np.roll(np.arange(m), 1)]

    if method == "exact":
        def statistic(x, y):
            return _gaussian_norm(x, y, bandwidth)
    else:
        W = np.random.default_rng(4).normal(0.0, 1.0 / bandwidth, size=(1, 8))

        def feature(v):
            angles = v[:, None] @ W
            return np.hstack([np.cos(angles), np.sin(angles)]) / np.sqrt(8)

        def statistic(x, y):
            return _norm_by_definition(feature(x), feature(y))

    largest = 0.0
    for _ in range(12):
        data = rng.choice(grid, size=(m, 2))
        for perm in perms:
            base = statistic(data[:, 0], data[perm, 1])
            for k in range(m):
                for point in points:
                    other = data.copy()
                    other[k] = point
                    largest = max(largest, abs(statistic(other[:, 0], other[perm, 1]) - base))
    assert largest <= delta * (1 + 1e-9)
    # a record unlike all the others moves T by Δ/2 (Gaussian); the random features' signs leave more slack
    assert largest >= {"exact": 0.45, "rff": 0.25}[method] * delta
    assert kernel_diameter(method) ** 2 * 2 * (m - 1) / m ** 2 == pytest.approx(delta)


@pytest.mark.parametrize("epsilon, method, m", [(0.3, "exact", 200), (1.0, "exact", 200), (100.0, "exact", 200),
                                                (1.0, "rff", 300)])
def test_type_one_error_is_at_most_alpha_under_independence(epsilon, method, m):
    """300 independent data sets with X ⫫ Y (one skewed, one bimodal margin): the rejection rate at α = 0.05 stays
    below α + 3 standard errors (0.088)."""
    rng = np.random.default_rng(5)
    runs, alpha = 300, 0.05
    rejections = 0
    for _ in range(runs):
        x = rng.beta(0.5, 2.0, m) * 2 - 1
        y = np.where(rng.random(m) < 0.5, -0.6, 0.6) + 0.2 * rng.normal(size=m)
        rejections += dp_hsic_test(x, y, epsilon=epsilon, bounds_x=BOX, bounds_y=BOX, alpha=alpha,
                                   n_permutations=39, method=method, rng=rng).reject
    assert rejections / runs <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / runs)


def test_power_grows_with_epsilon_on_a_nonlinear_dependence():
    rng = np.random.default_rng(6)
    rates = []
    for epsilon in (0.05, 3.0):
        hits = 0
        for _ in range(40):
            x = rng.uniform(-1, 1, 400)
            y = np.cos(3 * x) * 0.8 + 0.3 * rng.normal(size=400)
            hits += dp_hsic_test(x, y, epsilon=epsilon, bounds_x=BOX, bounds_y=BOX, n_permutations=39,
                                 rng=rng).reject
        rates.append(hits / 40)
    assert rates[0] < 0.5 < rates[1]


def test_only_the_decision_is_released_and_runs_reproduce():
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-1, 1, 100), rng.uniform(-1, 1, 100)
    a = dp_hsic_test(x, y, epsilon=1.0, bounds_x=BOX, bounds_y=BOX, rng=11)
    b = dp_hsic_test(x, y, epsilon=1.0, bounds_x=BOX, bounds_y=BOX, rng=11)
    assert a == b and isinstance(a, DPHSICResult)
    assert a.p_value in (0.0, 1.0) and a.p_value == (0.0 if a.reject else 1.0)
    assert a.noise_scale == pytest.approx(2 * hsic_norm_sensitivity(100) / 1.0)
    assert {"statistic", "p"} .isdisjoint(vars(a))
    # the method is a function of the public m
    big = dp_hsic_test(rng.uniform(-1, 1, 2001), rng.uniform(-1, 1, 2001), epsilon=1.0, bounds_x=BOX,
                       bounds_y=BOX, n_permutations=3, n_features=4, rng=0)
    assert (a.method, big.method) == ("exact", "rff")


def test_values_outside_the_public_bounds_are_clamped_not_read():
    rng = np.random.default_rng(8)
    x, y = rng.uniform(-1, 1, 80), rng.uniform(-1, 1, 80)
    far = x.copy()
    far[0] = 50.0
    edge = x.copy()
    edge[0] = 1.0
    assert (dp_hsic_test(far, y, epsilon=1.0, bounds_x=BOX, bounds_y=BOX, rng=3)
            == dp_hsic_test(edge, y, epsilon=1.0, bounds_x=BOX, bounds_y=BOX, rng=3))


@pytest.mark.parametrize("kwargs, match", [
    ({"epsilon": 0.0}, "epsilon"),
    ({"bounds_x": (1.0, -1.0)}, "bounds_x"),
    ({"bounds_y": "wide"}, "bounds_y"),
    ({"alpha": 1.5}, "alpha"),
    ({"method": "fast"}, "method"),
    ({"n_permutations": 0}, "n_permutations"),
    ({"y": np.zeros(9)}, "same length"),
    ({"x": np.array([0.0, np.nan] * 5)}, "finite"),
])
def test_bad_arguments_are_named(kwargs, match):
    arguments = {"x": np.zeros(10), "y": np.zeros(10), "epsilon": 1.0, "bounds_x": BOX, "bounds_y": BOX, "rng": 0}
    arguments.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        dp_hsic_test(**arguments)


def test_audit_does_not_flag_dp_hsic_and_flags_its_broken_variant():
    correct, broken = dp_hsic_cases(epsilon=1.0, rng=0, size="smoke")
    assert isinstance(broken.mechanism, ObservedSpreadHSIC) and broken.expect_violation
    assert correct.pair.relation == "replace" and correct.vectorised
    result = audit.run_case(correct, n_runs=300_000, rng=1)
    assert not result.violation and result.epsilon_lower < 0.5
    flagged = audit.run_case(broken, n_runs=300_000, rng=1)
    assert flagged.violation and flagged.epsilon_lower >= 1.5


def test_the_audited_decision_is_the_tests_decision():
    """The audit's run (statistics once, then noisy decisions) draws the same decision as dp_hsic_test would with the
    same statistics and noise: both end in noisy_permutation_decision with the scale 2Δ/ε."""
    correct, _ = dp_hsic_cases(epsilon=0.7, rng=2, size="smoke")
    data = correct.pair.neighbour
    t0, permuted = correct.mechanism._statistics(data)
    m = data.shape[0]
    assert correct.mechanism._scale(permuted, m) == pytest.approx(2 * hsic_norm_sensitivity(m) / 0.7)
    a = correct.mechanism(data, np.random.default_rng(4), 50)
    b = noisy_permutation_decision(t0, permuted, scale=2 * hsic_norm_sensitivity(m) / 0.7, alpha=0.05,
                                   rng=np.random.default_rng(4), size=50)
    assert a.tolist() == b.tolist()


def test_order_zero_stage_in_the_pc_engine_stays_within_its_plan_and_refuses_conditioning_sets():
    from dpcd.ci import CITester
    from dpcd.ci.hsic import DPHSICTest, order_zero_worst_case
    from dpcd.discovery.pc import PValueDecider, run_pc

    rng = np.random.default_rng(9)
    x = rng.uniform(-1, 1, 500)
    data = np.column_stack([x, np.cos(3 * x) + 0.2 * rng.normal(size=500), rng.uniform(-1, 1, 500),
                            rng.uniform(-1, 1, 500)])
    bounds = [(-1, 1), (-1.5, 1.5), (-1, 1), (-1, 1)]
    test = DPHSICTest(bounds=bounds, epsilon_per_test=3.0, n_permutations=39, rng=2)
    tester = CITester(data, test)
    result = run_pc(["a", "b", "c", "d"], PValueDecider(tester, 0.5), max_order=0)
    assert test.n_released == 6 <= order_zero_worst_case(4, 3.0) / 3.0
    tester(0, 1, ())  # asked again: the memo answers, nothing new is released
    assert test.n_released == 6
    assert ["a", "b"] in [sorted(edge) for edge in result.skeleton]
    with pytest.raises(ValueError, match="S"):
        test(data, 0, 1, (2,))
    with pytest.raises(ValueError, match="bounds"):
        DPHSICTest(bounds=bounds[:3], epsilon_per_test=1.0, rng=0)(data, 0, 1, ())

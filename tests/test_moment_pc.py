"""Moment-PC: the L2 sensitivity of its moments, the level of its noise-aware test, and runs against the plan."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import dpcd
from dpcd.datasets import random_dag, sample_linear_gaussian
from dpcd.discovery.moment_pc import MOMENT_PC, moment_ci_test, moment_pc, moment_sensitivity, noisy_moments, worst_case
from dpcd.graphs import dag_to_cpdag, skeleton_prf
from dpcd.privacy.gdp import gdp_mu


def _released(x: np.ndarray) -> np.ndarray:
    upper = np.triu_indices(len(x))
    return np.concatenate([x, np.outer(x, x)[upper]])


def test_the_moment_sensitivity_bounds_every_pair_of_records_of_the_box():
    p = 3
    corners = [np.array(v, dtype=float) for v in itertools.product((-1.0, 1.0), repeat=p)]
    rng = np.random.default_rng(0)
    records = corners + [rng.uniform(-1, 1, p) for _ in range(200)] + [np.zeros(p)]
    worst = max(np.linalg.norm(_released(a) - _released(b)) for a in records for b in records)
    # a proven bound, within a factor 1.5 of the largest change found (corners with half the signs flipped)
    assert worst <= moment_sensitivity(p) < 1.5 * worst


def test_the_noise_is_the_sensitivity_over_mu():
    box = np.random.default_rng(1).uniform(-1, 1, size=(500, 4))
    sums, second, sigma = noisy_moments(box, mu=0.5, rng=2)
    assert sigma == pytest.approx(moment_sensitivity(4) / 0.5)
    assert np.allclose(second, second.T) and sums.shape == (4,)


@pytest.mark.parametrize("n_cond", [0, 1])
def test_the_noise_aware_test_holds_its_level_under_the_null(n_cond):
    # X and Y independent given Z (or marginally), moments released with the noise of a p = 3 release at eps = 1
    rng = np.random.default_rng(3)
    n, mu = 5_000, gdp_mu(1.0, 1e-6)
    p_values = []
    for _ in range(300):
        z = rng.normal(size=n)
        if n_cond:  # X <- Z -> Y: dependent, but independent given Z
            columns = [0.6 * z + rng.normal(size=n), 0.6 * z + rng.normal(size=n), z]
        else:
            columns = [rng.normal(size=n), rng.normal(size=n), z]
        box = np.clip(np.column_stack(columns) / 4.0, -1, 1)
        sums, second, sigma = noisy_moments(box, mu=mu, rng=rng)
        mean = sums / n
        covariance = second / n - np.outer(mean, mean)
        p_values.append(moment_ci_test(covariance, mean, n, sigma, 0, 1, (2,) if n_cond else (), rng=rng,
                                       n_boot=150))
    rate = float(np.mean(np.asarray(p_values) <= 0.05))
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 300), rate


def test_a_run_is_charged_its_plan_and_finds_a_linear_gaussian_graph():
    dag = random_dag(8, 0.3, np.random.default_rng(4))
    sample = sample_linear_gaussian(dag, 40_000, np.random.default_rng(5))
    result = moment_pc(sample.data, bounds=sample.schema(), epsilon_total=1.0, rng=6, n_boot=100)
    assert result.ledger.total("tight", target_delta=1e-6).epsilon == pytest.approx(1.0, rel=1e-9)
    assert worst_case(epsilon_total=1.0, delta=1e-6).epsilon == 1.0 and result.ledger.relation == "replace"
    assert skeleton_prf(result.cpdag, dag_to_cpdag(dag))["f1"] >= 0.7
    calibration = dpcd.registry.calibrate(MOMENT_PC, p=8, n=40_000, epsilon=1.0, delta=1e-6)
    assert calibration.guarantee["epsilon"] == 1.0 and calibration.guarantee["accountant"] == "gdp"
    release = dpcd.discover(sample.data, schema=sample.schema(), algorithm="moment_pc", epsilon=1.0, rng=0,
                            progress=False, options=dpcd.ReleaseOptions(forecast_repetitions=0))
    assert release.privacy["spent_this_run"]["totals"]["tight"]["epsilon"] <= 1.0 + 1e-9

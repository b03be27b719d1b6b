"""Tables estimated from every overlapping release (dpcd.ci.denoise) and the tests that read them."""

from itertools import combinations

import numpy as np
import pytest

from dpcd.ci.denoise import ComponentNoise, Measurement, TableEstimator, full_basis
from dpcd.ci.noisy import noisy_table_test
from dpcd.privacy.interactions import pair_interaction_mechanism

LEVELS = [2, 3, 4, 2]


def _table(codes, columns):
    return np.histogramdd(codes[:, list(columns)], bins=[LEVELS[c] for c in columns],
                          range=[(0, LEVELS[c]) for c in columns])[0]


def _releases(codes, rng, *, own=80.0, triple=40.0):
    pairs = {c: _table(codes, c) for c in combinations(range(4), 2)}
    released, sigma, _ = pair_interaction_mechanism(pairs, LEVELS, n=codes.shape[0], mu=1.0, rng=rng)
    measurements = [Measurement(c, t, sigma ** 2, shared_margins=True) for c, t in released.items()]
    for columns in [(0, 1, 2), (1, 2, 3)]:
        exact = _table(codes, columns)
        measurements.append(Measurement(columns, exact + rng.normal(0.0, triple, exact.shape), triple ** 2))
    exact = _table(codes, (0, 1, 2, 3))
    measurements.append(Measurement((0, 1, 2, 3), exact + rng.normal(0.0, own, exact.shape), own ** 2))
    return measurements


def test_the_estimate_is_unbiased_and_its_noise_law_is_the_stated_one():
    rng = np.random.default_rng(3)
    codes = np.column_stack([rng.integers(0, d, size=5_000) for d in LEVELS])
    exact = np.transpose(_table(codes, (0, 1, 2, 3)), (2, 0, 3, 1))
    errors, law = [], None
    for _ in range(300):
        table, law = TableEstimator(LEVELS, 5_000, _releases(codes, rng)).table((2, 0, 3, 1))
        errors.append(table - exact)
    errors = np.asarray(errors)
    draws = law.draw(3_000, rng)
    assert law.cell_variance < 0.5 * 80.0 ** 2                         # the margins gained the other releases
    assert errors.var(axis=0).mean() == pytest.approx(law.cell_variance, rel=0.1)
    assert draws.var(axis=0).mean() == pytest.approx(law.cell_variance, rel=0.05)
    assert np.abs(errors.mean(axis=0)).max() < 4.0 * np.sqrt(law.cell_variance / 300)
    # the covariance between cells too: the table's total is public, so the errors sum to zero
    assert np.abs(errors.reshape(300, -1).sum(axis=1)).max() < 1e-6
    assert np.abs(draws.reshape(3_000, -1).sum(axis=1)).max() < 1e-6


def test_a_lone_table_keeps_its_cells_but_sums_to_the_public_n():
    rng = np.random.default_rng(0)
    noisy = rng.normal(100.0, 10.0, size=(2, 3))
    table, law = TableEstimator([2, 3], 600, [Measurement((0, 1), noisy, 100.0)]).table((0, 1))
    assert np.allclose(table, noisy + (600 - noisy.sum()) / 6)
    assert law.cell_variance == pytest.approx(100.0 * 5 / 6)              # every coordinate but the total


def test_a_released_margin_counts_once_however_many_pair_tables_rebuild_it():
    rng = np.random.default_rng(1)
    codes = np.column_stack([rng.integers(0, d, size=2_000) for d in LEVELS])
    pairs = {c: _table(codes, c) for c in combinations(range(4), 2)}
    released, sigma, _ = pair_interaction_mechanism(pairs, LEVELS, n=2_000, mu=0.5, rng=rng)
    estimator = TableEstimator(LEVELS, 2_000, [Measurement(c, t, sigma ** 2, True) for c, t in released.items()])
    value, variance = estimator.component((1,))
    assert variance == pytest.approx(sigma ** 2)
    assert np.allclose(value, full_basis(3)[:, 1:].T @ released[(0, 1)].sum(axis=0))


def test_bad_measurements_and_requests_name_what_is_wrong():
    with pytest.raises(ValueError, match="sorted and distinct"):
        TableEstimator([2, 2], 10, [Measurement((1, 0), np.ones((2, 2)), 1.0)])
    with pytest.raises(ValueError, match="expected"):
        TableEstimator([2, 2], 10, [Measurement((0, 1), np.ones((2, 3)), 1.0)])
    with pytest.raises(ValueError, match="variance"):
        TableEstimator([2, 2], 10, [Measurement((0, 1), np.ones((2, 2)), 0.0)])
    estimator = TableEstimator([2, 2, 2], 10, [Measurement((0, 1), np.ones((2, 2)), 1.0)])
    with pytest.raises(ValueError, match="distinct"):
        estimator.table((0, 0))
    with pytest.raises(KeyError):
        estimator.table((0, 1, 2))                                     # nothing measured column 2
    with pytest.raises(ValueError, match="shape"):
        noisy_table_test(np.ones((2, 2, 2)), None, rng=0, noise=ComponentNoise(np.ones((2, 2)), (full_basis(2),) * 2))


def _test_p(codes, rng, *, estimated):
    """p-value of column 0 ⫫ column 1 | columns 2, 3 from the four-way release alone or from its estimate."""
    measurements = _releases(codes, rng, own=120.0)
    if estimated:
        table, law = TableEstimator(LEVELS, codes.shape[0], measurements).table((2, 3, 0, 1))
        return noisy_table_test(table.reshape(-1, 2, 3), None, rng=rng, noise=law)
    own = np.transpose(measurements[-1].table, (2, 3, 0, 1)).reshape(-1, 2, 3)
    return noisy_table_test(own, 120.0 ** 2, rng=rng)


def test_the_test_on_an_estimated_table_keeps_its_level_and_gains_power():
    rng = np.random.default_rng(7)
    n = 20_000
    null = [_test_p(np.column_stack([rng.integers(0, d, size=n) for d in LEVELS]), rng, estimated=True)
            for _ in range(120)]
    assert np.mean(np.asarray(null) <= 0.05) < 0.12                     # level 0.05, 120 draws
    power = {True: [], False: []}
    for _ in range(40):
        codes = np.column_stack([rng.integers(0, d, size=n) for d in LEVELS])
        flip = rng.random(n) < 0.06                                      # a weak direct dependence of 1 on 0
        codes[flip, 1] = codes[flip, 0]
        for estimated in power:
            power[estimated].append(_test_p(codes, rng, estimated=estimated) <= 0.05)
    assert np.mean(power[True]) > np.mean(power[False]) + 0.2

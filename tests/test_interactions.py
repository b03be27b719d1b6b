"""Pair tables released as interactions and margins (dpcd.privacy.interactions) and what reads them."""

from __future__ import annotations

from itertools import combinations, product

import numpy as np
import pytest

from dpcd import audit
from dpcd.ci.noisy import noisy_table_test, pair_table_noise, pairwise_screen_test
from dpcd.datasets import load_bnlearn
from dpcd.discovery.counted import marginal_table
from dpcd.discovery.marginal_pc import marginal_pc, order_weights, worst_case
from dpcd.privacy.gdp import gdp_mu
from dpcd.privacy.interactions import (
    centred_basis,
    interaction_sensitivity,
    interaction_vector,
    pair_interaction_mechanism,
    worst_columns,
)


def _tables(codes: np.ndarray, levels) -> dict[tuple[int, int], np.ndarray]:
    return {pair: marginal_table(codes, levels, pair).astype(float) for pair in combinations(range(len(levels)), 2)}


@pytest.mark.parametrize("levels", [(2, 2), (2, 3, 2), (3, 2, 4), (2, 2, 2, 2), (2, 3, 4, 5), (2, 2, 2, 2, 2, 3)])
def test_the_sensitivity_is_the_largest_move_of_any_replaced_record_exhaustively(levels):
    records = np.array(list(product(*(range(d) for d in levels))))
    vectors = np.array([interaction_vector(_tables(r[None], levels), levels) for r in records])
    squared = ((vectors[:, None, :] - vectors[None, :, :]) ** 2).sum(axis=-1)  # every pair of records
    assert np.isclose(squared.max(), interaction_sensitivity(levels) ** 2)
    # the neighbour worst_columns names attains it
    changed = list(worst_columns(levels))
    first = np.zeros(len(levels), dtype=int)
    second = first.copy()
    second[changed] = 1
    move = interaction_vector(_tables(second[None], levels), levels) - interaction_vector(_tables(first[None], levels),
                                                                                        levels)
    assert np.isclose((move ** 2).sum(), interaction_sensitivity(levels) ** 2)
    # never above the full pair tables' sqrt(2M) plus the margins' sqrt(2p)
    pairs = len(levels) * (len(levels) - 1) // 2
    assert interaction_sensitivity(levels) ** 2 <= 2 * pairs + 2 * len(levels)


def test_the_interactions_are_the_smaller_release_on_many_columns_of_few_categories_only():
    assert interaction_sensitivity([2] * 4) ** 2 < 2 * 6
    assert interaction_sensitivity([2, 3, 2]) ** 2 > 2 * 3  # three columns: the margins cost more than they save
    assert interaction_sensitivity([20] * 10) ** 2 > 2 * 45  # many categories: the interaction is nearly the table
    assert interaction_sensitivity([2, 3, 4] * 12) ** 2 < 0.7 * 2 * 36 * 35 / 2
    # Marginal-PC releases the full tables where the interactions would cost more (a choice of public sizes)
    rng = np.random.default_rng(0)
    small = marginal_pc(rng.integers(0, 2, size=(2_000, 3)), levels=[2, 3, 2], epsilon_total=1.0, rng=0, max_order=0)
    assert not small.info["interaction_pairs"]


def test_binary_columns_have_the_closed_form_and_the_bad_inputs_are_named():
    for p in range(2, 40):
        assert np.isclose(interaction_sensitivity([2] * p) ** 2, (p + 2) ** 2 // 4)
    with pytest.raises(ValueError, match="levels"):
        interaction_sensitivity([2])
    with pytest.raises(ValueError, match="levels"):
        interaction_sensitivity([2, 1])
    with pytest.raises(ValueError, match="every pair"):
        pair_interaction_mechanism({(0, 1): np.ones((2, 2))}, [2, 2, 2], n=4, mu=1.0, rng=0)
    with pytest.raises(ValueError, match="shape"):
        interaction_vector({(0, 1): np.ones((2, 3))}, [2, 2])


def test_the_basis_is_orthonormal_and_the_tables_rebuild_exactly_without_noise():
    for d in range(2, 8):
        basis = centred_basis(d)
        assert np.allclose(basis.T @ basis, np.eye(d - 1)) and np.allclose(basis.sum(axis=0), 0.0)
    rng = np.random.default_rng(0)
    levels = (2, 4, 3, 2)
    codes = np.column_stack([rng.integers(0, d, size=500) for d in levels])
    tables = _tables(codes, levels)
    rebuilt, sigma, sensitivity = pair_interaction_mechanism(tables, levels, n=500, mu=1e12, rng=1)
    assert set(rebuilt) == set(tables)
    assert all(np.allclose(rebuilt[k], tables[k], atol=1e-6) for k in tables)
    assert np.isclose(sigma * 1e12, sensitivity) and np.isclose(sensitivity, interaction_sensitivity(levels))


def _analytic_covariance(da: int, db: int, var: float) -> np.ndarray:
    centre = lambda d: np.eye(d) - np.ones((d, d)) / d  # noqa: E731
    return var * (np.kron(centre(da), centre(db)) + np.kron(np.eye(da), np.ones((db, db))) / db ** 2
                  + np.kron(np.ones((da, da)), np.eye(db)) / da ** 2)


def test_the_rebuilt_tables_noise_is_what_the_bootstrap_draws():
    levels = (2, 3, 4)
    tables = _tables(np.zeros((10, 3), dtype=int), levels)
    generator = np.random.default_rng(3)
    draws = [pair_interaction_mechanism(tables, levels, n=10, mu=1.0, rng=generator)[0] for _ in range(6_000)]
    var = interaction_sensitivity(levels) ** 2
    for key in [(0, 1), (1, 2)]:
        noise = np.array([d[key] - tables[key] for d in draws]).reshape(len(draws), -1)
        expected = _analytic_covariance(levels[key[0]], levels[key[1]], var)
        assert np.allclose(np.cov(noise.T), expected, atol=0.08 * var)
        simulated = pair_table_noise((6_000, levels[key[0]], levels[key[1]]), var, np.random.default_rng(4))
        assert np.allclose(np.cov(simulated.reshape(6_000, -1).T), expected, atol=0.08 * var)
    # two tables that share column 0 share its margin's noise: cov of their (0, 0) cells is var / (3 * 4)
    first = np.array([d[(0, 1)][0, 0] for d in draws])
    second = np.array([d[(0, 2)][0, 0] for d in draws])
    assert abs(np.cov(first, second)[0, 1] - var / 12) < 0.05 * var


def test_the_interaction_test_holds_its_level_and_gains_power_over_the_full_tables():
    rng = np.random.default_rng(5)
    levels, n = (2, 2, 2, 2, 2, 2), 20_000
    mu = 0.04  # noise comparable with the dependence (full tables: sigma = sqrt(30) / mu, about 140)
    rejections = {"null": 0, "power_interaction": 0, "power_cells": 0}
    repetitions = 120
    for _ in range(repetitions):
        codes = np.column_stack([rng.integers(0, d, size=n) for d in levels])
        rebuilt, sigma, _ = pair_interaction_mechanism(_tables(codes, levels), levels, n=n, mu=mu, rng=rng)
        rejections["null"] += noisy_table_test(rebuilt[(0, 1)], sigma ** 2, rng=rng, n_boot=100,
                                               noise="interaction") <= 0.05
        dependent = codes.copy()
        flip = rng.random(n) < 0.04
        dependent[flip, 1] = dependent[flip, 0]  # a weak dependence of column 1 on column 0
        tables = _tables(dependent, levels)
        rebuilt, sigma, _ = pair_interaction_mechanism(tables, levels, n=n, mu=mu, rng=rng)
        rejections["power_interaction"] += noisy_table_test(rebuilt[(0, 1)], sigma ** 2, rng=rng, n_boot=100,
                                                            noise="interaction") <= 0.05
        full_sigma = np.sqrt(2 * len(tables)) / mu  # the same mu spent on the full pair tables
        noisy = tables[(0, 1)] + rng.normal(0.0, full_sigma, size=tables[(0, 1)].shape)
        rejections["power_cells"] += noisy_table_test(noisy, full_sigma ** 2, rng=rng, n_boot=100) <= 0.05
    assert rejections["null"] / repetitions <= 0.05 + 0.06
    assert rejections["power_interaction"] > rejections["power_cells"] + 10, rejections


def test_the_noise_models_are_checked_and_the_screen_reads_the_shared_margins():
    table = np.full((1, 2, 2), 1_000.0)
    with pytest.raises(ValueError, match="noise"):
        noisy_table_test(table, 1.0, rng=0, noise="rows")
    with pytest.raises(ValueError, match="strata"):
        noisy_table_test(np.full((2, 2, 2), 1_000.0), 1.0, rng=0, noise="interaction")
    rng = np.random.default_rng(6)
    levels = (2, 2, 3)
    codes = np.column_stack([rng.integers(0, d, size=30_000) for d in levels])
    codes[:, 1] = np.where(rng.random(30_000) < 0.7, codes[:, 0], codes[:, 1])  # 0 -> 1, and 2 apart
    rebuilt, sigma, _ = pair_interaction_mechanism(_tables(codes, levels), levels, n=30_000, mu=1.0, rng=rng)
    p_value = pairwise_screen_test(rebuilt[(0, 1)], rebuilt[(0, 2)], rebuilt[(1, 2)], sigma ** 2, 30_000, rng=7,
                                   noise="interaction")
    assert p_value < 0.01  # 0 and 1 are dependent given 2


def test_marginal_pc_with_interactions_spends_its_order_zero_share_at_the_smaller_sensitivity():
    sample = load_bnlearn("asia", 20_000, rng=0)
    result = marginal_pc(sample.data, levels=sample.levels, epsilon_total=1.0, delta=1e-6, rng=1, max_order=1,
                         interaction_pairs=True)
    order0 = result.info["orders"][0]
    mu0 = gdp_mu(1.0, 1e-6) * np.sqrt(order_weights(1)[0])
    assert np.isclose(order0["sigma"], interaction_sensitivity(sample.levels) / mu0)
    full = marginal_pc(sample.data, levels=sample.levels, epsilon_total=1.0, delta=1e-6, rng=1, max_order=1,
                       interaction_pairs=False)
    assert order0["sigma"] < full.info["orders"][0]["sigma"]
    assert result.info["interaction_pairs"] and not full.info["interaction_pairs"]
    spent = result.ledger.total("tight", target_delta=1e-6).epsilon
    assert spent <= worst_case(epsilon_total=1.0, delta=1e-6, max_order=1).epsilon + 1e-9


def test_the_audit_flags_the_full_tables_worst_case_taken_for_the_interactions_and_not_the_release():
    correct, broken = audit.interaction_cases(epsilon=1.0, delta=1e-5, rng=0)
    assert broken.expect_violation and not correct.expect_violation
    assert audit.run_case(broken, n_runs=40_000, rng=1).violation
    assert not audit.run_case(correct, n_runs=40_000, rng=1).violation

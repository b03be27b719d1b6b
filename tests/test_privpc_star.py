"""PrivPC* (paper 000, Sec. V): Fisher-z PC on a Laplace-noised covariance matrix."""

from __future__ import annotations

import numpy as np
import pytest

from dpcd.datasets import random_dag, sample_linear_gaussian
from dpcd.discovery.pc import pc
from dpcd.discovery.privpc_star import clip_records, covariance_sensitivity, privpc_star, repair_correlation


def _upper_l1(M: np.ndarray) -> float:
    return float(np.abs(M[np.triu_indices(M.shape[0])]).sum())


def test_sensitivity_bound_holds_for_clipped_records():
    """Adding one clipped record changes the upper triangle of Σ by at most p(p+1)/(2(n−1)) in L1."""
    rng = np.random.default_rng(0)
    for p in (2, 5, 12):
        n = 50
        bound = covariance_sensitivity(p, n)
        worst = 0.0
        for _ in range(300):
            record = clip_records(rng.standard_t(2, size=(1, p)) * rng.uniform(0.1, 10), np.sqrt(p))[0]
            change = np.outer(record, record) / (n - 1)
            worst = max(worst, _upper_l1(change))
        assert worst <= bound * (1 + 1e-12)
        # the bound is attained by x = (1, ..., 1)
        ones = np.ones(p)
        assert _upper_l1(np.outer(ones, ones) / (n - 1)) == pytest.approx(bound)


def test_repair_gives_a_positive_definite_correlation_matrix():
    rng = np.random.default_rng(1)
    M = rng.uniform(-1, 1, size=(6, 6))
    M = (M + M.T) / 2
    np.fill_diagonal(M, 1.0)
    assert np.linalg.eigvalsh(M).min() < 0  # not positive definite
    C = repair_correlation(M)
    assert np.linalg.eigvalsh(C).min() > 0
    np.testing.assert_allclose(np.diag(C), 1.0)
    np.testing.assert_allclose(C, C.T)


def test_large_epsilon_equals_non_private_fisher_z_pc():
    dag = random_dag(6, 0.4, 2)
    data = sample_linear_gaussian(dag, 20_000, 2, weight_range=(0.5, 1.0)).data
    reference = pc(data, ci_test="fisherz", alpha=0.01)
    # with a clipping bound no record reaches, PrivPC* at large epsilon is Fisher-z PC
    result = privpc_star(data, epsilon=1e9, rng=3, clip_norm=100.0)
    assert result.info["clipped_records"] == 0
    assert result.skeleton == reference.skeleton
    assert set(result.cpdag.edges) == set(reference.cpdag.edges)


def test_default_clipping_bounds_every_record_by_sqrt_p():
    data = sample_linear_gaussian(random_dag(8, 0.4, 7), 5_000, 7).data
    result = privpc_star(data, epsilon=1.0, rng=8)
    # chi-square(8) exceeds 8 with probability ~0.43: about that share of records is clipped
    assert 0.35 * 5_000 < result.info["clipped_records"] < 0.55 * 5_000


def test_charges_exactly_once_with_theorem_2_sensitivity():
    data = sample_linear_gaussian(random_dag(5, 0.4, 4), 1_000, 4).data
    result = privpc_star(data, epsilon=0.5, rng=5)
    assert result.ledger.n_charges == 1
    assert result.ledger.total("basic").epsilon == pytest.approx(0.5)
    assert result.ledger.entries[0].sensitivity == pytest.approx(5 * 6 / (2 * 999))


def test_bad_input():
    data = sample_linear_gaussian(random_dag(4, 0.5, 6), 300, 6).data
    with pytest.raises(ValueError, match="epsilon"):
        privpc_star(data, epsilon=0.0, rng=0)
    with pytest.raises(ValueError, match="epsilon"):
        privpc_star(data, epsilon=-2.0, rng=0)
    categorical = np.random.default_rng(0).integers(0, 3, size=(300, 4))
    with pytest.raises(TypeError, match="categorical"):
        privpc_star(categorical, epsilon=1.0, rng=0)

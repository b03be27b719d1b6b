"""One RCIT (KRR on |Z| = 2 + HSIC with k = 100 permutations) at m = 2000, and its parts."""

import numpy as np
import pytest

from dpcd import kernels
from dpcd.rcit import rcit


@pytest.mark.benchmark
def test_rcit_m2000_z2_k100(report, best_of):
    rng = np.random.default_rng(0)
    m = 2000
    Z = rng.uniform(-0.5, 0.5, size=(m, 2))
    X = np.sin(Z.sum(axis=1)) + 0.7 * rng.uniform(-0.5, 0.5, size=m)
    Y = np.sin(Z.sum(axis=1)) + 0.7 * rng.uniform(-0.5, 0.5, size=m)
    data = np.column_stack([X, Y, Z])
    result, t_total = best_of(lambda: rcit(data, 0, 1, (2, 3), rng=1, n_permutations=100), repeat=3)
    _, t_krr = best_of(lambda: kernels.krr_factor(Z).residuals(data[:, :2]), repeat=3)
    u, v = kernels.krr_residuals(Z, data[:, :2]).T
    _, t_hsic = best_of(lambda: kernels.hsic_permutation_test(u, v, rng=1), repeat=3)
    _, t_exact = best_of(lambda: kernels.hsic_permutation_test(u, v, rng=1, method="exact"), repeat=1)
    report("RCIT m=2000 |Z|=2 k=100", total_s=t_total, krr_s=t_krr, hsic_lowrank_s=t_hsic,
           hsic_exact_s=t_exact, p_value=result.p_value)
    assert 0.0 <= result.p_value <= 1.0

"""CI tests against causal-learn and scipy, and their input checks."""

import numpy as np
import pytest
from causallearn.utils.cit import CIT
from scipy import stats

from dpcd.ci import (
    CITester,
    chi2_test,
    contingency_table,
    fisher_z_from_matrix,
    fisher_z_test,
    g2_test,
    kendall_tau,
    kendall_tau_test,
    kendall_weights,
    spearman_rho_test,
    stratified_kendall,
)


def _discrete(seed, n=2000, p=5, k=(2, 4)):
    rng = np.random.default_rng(seed)
    levels = rng.integers(k[0], k[1] + 1, size=p)
    data = np.column_stack([rng.integers(0, levels[j], size=n) for j in range(p)])
    # add dependence: X1 depends on X0, X3 on X1 and X2
    data[:, 1] = (data[:, 0] + rng.integers(0, 2, size=n)) % levels[1]
    data[:, 3] = (data[:, 1] + data[:, 2] * (rng.random(n) < 0.5)) % levels[3]
    return data


CASES = [(0, 1, ()), (0, 3, (1,)), (2, 4, (0, 1)), (1, 2, (0, 3, 4)), (3, 4, ())]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("method", ["gsq", "chisq"])
def test_g2_chi2_p_values_equal_causal_learn(seed, method):
    data = _discrete(seed)
    oracle = CIT(data, method)
    ours = g2_test if method == "gsq" else chi2_test
    for x, y, S in CASES:
        assert ours(data, x, y, S).p_value == pytest.approx(oracle(x, y, list(S)), abs=1e-8)


def test_g2_handles_empty_strata_and_zero_dof_like_causal_learn():
    rng = np.random.default_rng(3)
    n = 400
    z = rng.integers(0, 3, size=n)
    x = np.where(z == 0, 0, rng.integers(0, 3, size=n))  # X constant inside stratum z=0
    y = rng.integers(0, 2, size=n)
    w = np.zeros(n, dtype=int)  # a constant variable
    data = np.column_stack([x, y, z, w])
    oracle = CIT(data, "gsq")
    for x_, y_, S in [(0, 1, (2,)), (0, 3, ()), (3, 1, (2,))]:
        assert g2_test(data, x_, y_, S).p_value == pytest.approx(oracle(x_, y_, list(S)), abs=1e-8)
    assert g2_test(data, 0, 3, ()).p_value == 1.0  # zero degrees of freedom
    assert g2_test(data, 0, 3, ()).dof == 0


def test_g2_dof_matches_textbook_on_full_table():
    data = _discrete(4, n=5000, k=(3, 3))
    res = g2_test(data, 0, 2, (4,))
    assert res.dof == (3 - 1) * (3 - 1) * 3


def test_fisher_z_equals_causal_learn():
    rng = np.random.default_rng(5)
    n, p = 500, 6
    W = np.triu(rng.uniform(0.2, 0.9, (p, p)) * (rng.random((p, p)) < 0.5), 1)
    data = rng.normal(size=(n, p)) @ np.linalg.inv(np.eye(p) - W)
    oracle = CIT(data, "fisherz")
    for x, y, S in [(0, 1, ()), (0, 5, (1, 2)), (3, 4, (0, 1, 2)), (2, 5, ())]:
        assert fisher_z_test(data, x, y, S).p_value == pytest.approx(oracle(x, y, list(S)), abs=1e-8)


def test_fisher_z_from_covariance_equals_from_correlation():
    rng = np.random.default_rng(6)
    data = rng.normal(size=(300, 4)) * [1, 3, 0.5, 2]
    data[:, 1] += data[:, 0]
    cov = np.cov(data.T)
    corr = np.corrcoef(data.T)
    a = fisher_z_from_matrix(cov, 300, 0, 1, (2, 3))
    b = fisher_z_from_matrix(corr, 300, 0, 1, (2, 3))
    assert a.p_value == pytest.approx(b.p_value, abs=1e-12)


def test_partial_correlation_matches_regression_residuals():
    rng = np.random.default_rng(7)
    data = rng.normal(size=(1000, 3))
    data[:, 0] += data[:, 2]
    data[:, 1] += 0.5 * data[:, 2] + 0.3 * data[:, 0]
    res = fisher_z_test(data, 0, 1, (2,))
    Z = np.column_stack([np.ones(1000), data[:, 2]])
    rx = data[:, 0] - Z @ np.linalg.lstsq(Z, data[:, 0], rcond=None)[0]
    ry = data[:, 1] - Z @ np.linalg.lstsq(Z, data[:, 1], rcond=None)[0]
    assert res.effect == pytest.approx(np.corrcoef(rx, ry)[0, 1], abs=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_kendall_tau_equals_scipy(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, size=300)
    b = (a + rng.integers(0, 3, size=300)) % 5
    assert kendall_tau(a, b) == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-12)
    c = rng.normal(size=200)
    d = c + rng.normal(size=200)
    assert kendall_tau(c, d) == pytest.approx(stats.kendalltau(c, d).statistic, abs=1e-12)
    # with an empty conditioning set the test's effect is the same statistic
    data = np.column_stack([a, b])
    assert kendall_tau_test(data, 0, 1, (), variant="b").effect == pytest.approx(
        stats.kendalltau(a, b).statistic, abs=1e-12)


def test_kendall_tau_a_by_brute_force():
    rng = np.random.default_rng(8)
    a = rng.integers(0, 3, size=60)
    b = rng.integers(0, 3, size=60)
    i, j = np.triu_indices(60, 1)
    s = np.sign(a[i] - a[j]) * np.sign(b[i] - b[j])
    assert kendall_tau(a, b, variant="a") == pytest.approx(s.sum() / len(i), abs=1e-12)


def test_conditional_kendall_is_inverse_variance_pooled():
    data = _discrete(9, n=3000)
    table = contingency_table(data, 1, 3, (2,))
    strata = data[:, 2]
    taus, ns = [], []
    for level in np.unique(strata):
        rows = strata == level
        taus.append(kendall_tau(data[rows, 1], data[rows, 3], variant="a"))
        ns.append(rows.sum())
    w = kendall_weights(np.array(ns))
    expected = (w * np.array(taus)).sum() / np.sqrt(w.sum())
    assert stratified_kendall(table).statistic == pytest.approx(expected, rel=1e-10)


def test_spearman_equals_scipy_without_conditioning():
    rng = np.random.default_rng(10)
    a = rng.integers(0, 5, size=500)
    b = (a + rng.integers(0, 4, size=500)) % 6
    res = spearman_rho_test(np.column_stack([a, b]), 0, 1, ())
    assert res.effect == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-12)


def test_rank_tests_detect_monotone_dependence_and_accept_independence():
    rng = np.random.default_rng(11)
    a = rng.integers(0, 4, size=4000)
    data = np.column_stack([a, a + rng.integers(0, 3, size=4000), rng.integers(0, 3, size=4000)])
    assert kendall_tau_test(data, 0, 1).p_value < 1e-6
    assert spearman_rho_test(data, 0, 1).p_value < 1e-6
    assert kendall_tau_test(data, 0, 2).p_value > 1e-3


def test_tester_memoises_symmetric_queries():
    data = _discrete(12)
    tester = CITester(data, "g2")
    a = tester(0, 3, (2, 1))
    b = tester(3, 0, (1, 2))
    assert a == b and tester.n_computed == 1


def test_tester_custom_callable():
    data = _discrete(13)
    tester = CITester(data, lambda d, x, y, S: g2_test(d, x, y, S))
    assert tester(0, 1, ()).p_value == g2_test(data, 0, 1, ()).p_value


@pytest.mark.parametrize("bad, message", [
    (np.array([[0.5, 1], [1, 0], [0, 1], [1, 1]]), "integer"),
    (np.array([[np.nan, 1], [1, 0], [0, 1], [1, 1]]), "NaN"),
    (np.array([[-1, 1], [1, 0], [0, 1], [1, 1]]), "non-negative"),
])
def test_discrete_tests_reject_bad_data(bad, message):
    with pytest.raises((ValueError, TypeError), match=message):
        g2_test(bad, 0, 1)


def test_unknown_test_and_numeric_nan_are_refused():
    with pytest.raises(ValueError, match="test must be one of"):
        CITester(np.zeros((5, 2), dtype=int), "gsq")
    bad = np.random.default_rng(0).normal(size=(10, 3))
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fisher_z_test(bad, 0, 1)

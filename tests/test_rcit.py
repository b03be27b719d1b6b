"""RCIT, its score sensitivity Δ_R (Eqs. 3–4) and p-value sensitivity Δ_P (Thm. 4), Kendall baseline."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcd import kernels
from dpcd.ci import kendall_tau_test, rcit
from dpcd.privacy.sensitivity import (
    conditional_kendall_sensitivity,
    pvalue_sensitivity,
    two_sided_kendall_pvalue_sensitivity,
)


def _chain_data(m, rng):
    Z = rng.uniform(-0.5, 0.5, size=(m, 1))
    X = np.sin(3 * Z[:, 0]) + 0.3 * rng.uniform(-0.5, 0.5, size=m)
    Y = np.sin(3 * Z[:, 0]) + 0.3 * rng.uniform(-0.5, 0.5, size=m)
    return np.column_stack([X, Y, Z])


def test_unconditional_rcit_is_the_hsic_test():
    rng = np.random.default_rng(0)
    data = _chain_data(80, rng)
    result = rcit.rcit(data, 0, 1, (), rng=3)
    direct = kernels.hsic_permutation_test(data[:, 0], data[:, 1], rng=3)
    assert result.statistic == direct.statistic and result.p_value == direct.p_value
    assert not result.conditioned


def test_conditional_rcit_uses_krr_residuals():
    rng = np.random.default_rng(1)
    data = _chain_data(80, rng)
    result = rcit.rcit(data, 0, 1, (2,), rng=3, lam=0.5)
    res = kernels.krr_residuals(data[:, [2]], data[:, :2], lam=0.5)
    direct = kernels.hsic_permutation_test(res[:, 0], res[:, 1], rng=3)
    assert result.statistic == pytest.approx(direct.statistic, rel=1e-12)
    assert result.p_value == direct.p_value and result.conditioned


def test_lowrank_krr_leaves_rcit_unchanged():
    # the default (incomplete-Cholesky KRR where its rank is <= m/4) against the exact m x m factor:
    # residuals within 1e-10/c ||t||, so the scores agree to rounding and the p-values are equal
    rng = np.random.default_rng(8)
    m = 500
    Z = rng.uniform(-0.5, 0.5, size=(m, 2))
    X = np.sin(Z.sum(axis=1)) + 0.7 * rng.uniform(-0.5, 0.5, size=m)
    Y = np.sin(Z.sum(axis=1)) + 0.7 * rng.uniform(-0.5, 0.5, size=m)
    data = np.column_stack([X, Y, Z])
    assert kernels.krr_factor(Z, method="auto").method == "lowrank"  # the comparison is not vacuous
    for lam in (1.0, 2.0 / m):
        auto = rcit.RCITTester(data, rng=4, lam=lam)
        exact = rcit.RCITTester(data, rng=4, lam=lam, krr_method="exact")
        a, b = auto.result(0, 1, (2, 3)), exact.result(0, 1, (2, 3))
        assert a.p_value == b.p_value
        assert a.statistic == pytest.approx(b.statistic, rel=1e-9)
        np.testing.assert_allclose(a.permuted, b.permuted, rtol=1e-9, atol=1e-9 * b.statistic)
        c = m * lam / 2
        bound = 1e-10 / c * np.linalg.norm(data, axis=0)
        assert np.all(np.linalg.norm(auto.residuals((2, 3)) - exact.residuals((2, 3)), axis=0) <= bound)
    with pytest.raises(ValueError, match="krr_method"):
        rcit.RCITTester(data, rng=0, krr_method="fast")


def test_tester_memoises_and_shares_residuals():
    rng = np.random.default_rng(2)
    data = np.column_stack([_chain_data(60, rng), rng.normal(size=60)])
    tester = rcit.RCITTester(data, rng=0, n_permutations=10)
    first = tester(0, 1, (2,))
    assert tester(1, 0, [2]) is first or tester(1, 0, [2]) == first
    tester(0, 3, (2,))
    assert tester.n_computed == 2 and len(tester._residuals) == 1
    with pytest.raises(ValueError, match="distinct"):
        tester(0, 0, ())
    with pytest.raises(ValueError, match="out of range"):
        tester(0, 9, ())


def test_eq4_bound_holds_for_random_neighbours():
    # Eq. 4 (Thm. 1, Kusner et al. 2016) is a global bound for kernels in [0, 1] with fixed bandwidths
    rng = np.random.default_rng(3)
    for m in (10, 40):
        bound = rcit.rcit_score_sensitivity(m, conditioned=False)
        assert bound == (12 * m - 11) / (m - 1) ** 2
        worst = 0.0
        for _ in range(200):
            x, y = rng.normal(size=(2, m))
            i = rng.integers(m)
            x2, y2 = x.copy(), y.copy()
            x2[i], y2[i] = rng.normal(scale=5, size=2)
            K, L = kernels.gaussian_gram(x, bandwidth=1.0), kernels.gaussian_gram(y, bandwidth=1.0)
            K2, L2 = kernels.gaussian_gram(x2, bandwidth=1.0), kernels.gaussian_gram(y2, bandwidth=1.0)
            worst = max(worst, abs(kernels.hsic(K, L) - kernels.hsic(K2, L2)))
        assert worst <= bound


def test_eq3_formula_and_bound_for_random_neighbours():
    m, lam, dk, dl = 50, 1.0, 0.3, 0.4
    a, b = 128 / (m**2 * lam**3 * dk**2), 128 / (m**2 * lam**3 * dl**2)
    expected = 2 * (m**2 - m) * (2 - math.exp(-a) - math.exp(-b)) / (m - 1) ** 2
    got = rcit.rcit_score_sensitivity(m, lam=lam, bandwidth_x=dk, bandwidth_y=dl)
    assert got == pytest.approx(expected, rel=1e-12)
    # replace one record of (X, Y, Z) and recompute RCIT with its median bandwidths: the
    # score moves by less than Eq. 3 at these sizes (the replaced row's own residual is
    # not covered by Thm. 2; the margin shrinks like 1/m, see dpcd.ci.rcit)
    rng = np.random.default_rng(4)
    for m in (100, 300):
        ratios = []
        for t in range(15):
            data = _chain_data(m, rng)
            other = data.copy()
            other[rng.integers(m)] = rng.uniform(-1, 1, size=3) if t % 2 else [3.0, -3.0, 0.5]
            first = rcit.rcit(data, 0, 1, (2,), rng=0, n_permutations=1)
            second = rcit.rcit(other, 0, 1, (2,), rng=0, n_permutations=1)
            ratios.append(abs(first.statistic - second.statistic) / first.score_sensitivity)
        assert max(ratios) <= 1.0


def test_permutation_sensitivity_thm4():
    permuted = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    result = rcit.RCITResult(0.45, 0.6, permuted, 1.0, 1.0, 10, 1.0, False)
    p, A, B = rcit.permutation_bounds(0.45, permuted, 0.05)
    assert (p, A, B) == (0.6, 0.5, 0.7)  # thresholds 0.45 +/- 0.1
    assert rcit.permutation_sensitivity(result, alpha=0.05, score_sensitivity=0.05) == pytest.approx(0.1)  # p > a
    assert rcit.permutation_sensitivity(result, alpha=0.7, score_sensitivity=0.05) == pytest.approx(0.1)  # p <= a
    low = rcit.RCITResult(0.45, 0.6, permuted, 1.0, 1.0, 10, 1.0, False)
    assert rcit.permutation_sensitivity(low, alpha=0.05, one_sided=False, score_sensitivity=0.15) == \
        pytest.approx(max(0.6 - 0.3, 0.9 - 0.6))  # thresholds 0.45 +/- 0.3


def test_permutation_sensitivity_bounds_the_p_value_change():
    # Thm. 4 holds whenever the score moves by at most Delta_R: check with the true change as Delta_R
    rng = np.random.default_rng(5)
    m = 60
    for _ in range(20):
        x = rng.normal(size=m)
        y = 0.5 * x + rng.normal(size=m)
        x2 = x.copy()
        x2[rng.integers(m)] = rng.normal(scale=3)
        bw = (1.0, 1.0)
        first = kernels.hsic_permutation_test(x, y, rng=7, bandwidth_x=bw[0], bandwidth_y=bw[1], method="exact")
        second = kernels.hsic_permutation_test(x2, y, rng=7, bandwidth_x=bw[0], bandwidth_y=bw[1], method="exact")
        change = max(abs(first.statistic - second.statistic), np.max(np.abs(first.permuted - second.permuted)))
        result = rcit.RCITResult(first.statistic, first.p_value, first.permuted, 1.0, 1.0, m, 1.0, False)
        bound = rcit.permutation_sensitivity(result, one_sided=False, score_sensitivity=change)
        assert abs(first.p_value - second.p_value) <= bound + 1e-12


def test_kendall_baseline_unconditional_matches_citests():
    rng = np.random.default_rng(6)
    codes = rng.integers(0, 4, size=(300, 2))
    ours = rcit.kendall_ci_test(codes.astype(float), 0, 1)
    ref = kendall_tau_test(codes, 0, 1)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(ref.p_value, rel=1e-12)
    strata = np.column_stack([codes, rng.integers(0, 3, size=300)])
    ours = rcit.kendall_ci_test(strata.astype(float), 0, 1, (2,))
    ref = kendall_tau_test(strata, 0, 1, (2,))
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)


def test_kendall_baseline_continuous_conditioning_is_dependent():
    rng = np.random.default_rng(7)
    data = rng.normal(size=(50, 3))
    result = rcit.kendall_ci_test(data, 0, 1, (2,))
    assert result.p_value == 0.0 and result.dof == 50


def test_kendall_pvalue_sensitivity_reuses_priv_pc_bound():
    expected = 2 * pvalue_sensitivity(conditional_kendall_sensitivity(500, 1, relation="replace"))
    assert two_sided_kendall_pvalue_sensitivity(500) == pytest.approx(expected)


def test_bad_arguments():
    with pytest.raises(ValueError, match="bandwidth"):
        rcit.rcit_score_sensitivity(10, conditioned=True)
    with pytest.raises(ValueError, match="lam"):
        rcit.rcit_score_sensitivity(10, lam=-1, bandwidth_x=1, bandwidth_y=1)
    with pytest.raises(ValueError, match="m"):
        rcit.rcit_score_sensitivity(1, conditioned=False)
    with pytest.raises(ValueError, match="alpha"):
        rcit.permutation_sensitivity(rcit.RCITResult(0.0, 0.5, np.zeros(3), 1, 1, 3, 1, False), alpha=2)
    with pytest.raises(ValueError, match="NaN"):
        rcit.rcit(np.array([[1.0, np.nan], [2.0, 3.0], [3.0, 1.0]]), 0, 1, rng=0)


# ---------------------------------------------------------------------------
# The tester's caches and the faster Kendall paths against the computations they replace


def _network_data(name, m, seed):
    from dpcd.datasets import bnlearn_dag, sample_nonlinear

    return sample_nonlinear(bnlearn_dag(name), m, np.random.default_rng(seed)).data.to_numpy()


def test_tester_caches_never_change_a_result():
    # caches that hold nothing (every residual and factor recomputed) give the same numbers, bit for bit,
    # and the same tests computed one by one from the kernels (exact KRR, HSIC on the residuals) agree
    data = _network_data("asia", 300, 0)
    questions = [(0, 1, ()), (2, 5, (3,)), (6, 7, (3, 5)), (1, 4, (0, 2, 3)), (2, 5, (3,)), (0, 7, (1, 2, 3, 4))]
    cached = rcit.RCITTester(data, rng=11)
    bare = rcit.RCITTester(data, rng=11, residual_cache_bytes=0, factor_cache_bytes=0)
    stream = np.random.default_rng(11)
    for x, y, S in questions:
        a, b = cached.result(x, y, S), bare.result(x, y, S)
        assert a.statistic == b.statistic and a.p_value == b.p_value and np.array_equal(a.permuted, b.permuted)
    assert len(bare._residuals) <= 1 and len(bare._factors) <= 1 and len(cached._residuals) == 4
    for x, y, S in dict.fromkeys(questions):  # the reference, test by test, with the same random stream
        if S:
            resid = kernels.krr_factor(data[:, list(S)], method="exact").residuals(data[:, [x, y]])
            u, v = resid[:, 0], resid[:, 1]
        else:
            u, v = data[:, x], data[:, y]
        ref = kernels.hsic_permutation_test(u, v, rng=stream)
        ours = cached.result(x, y, S)
        assert ours.p_value == ref.p_value
        assert ours.statistic == pytest.approx(ref.statistic, rel=1e-9, abs=1e-15)
        np.testing.assert_allclose(ours.permuted, ref.permuted, rtol=1e-8, atol=1e-14)


def test_cached_residuals_and_factors_are_read_only():
    # a caller writing into what the tester hands out would change later results, differently for cached and
    # evicted entries: the cached arrays refuse writes
    data = _network_data("asia", 200, 1)
    tester = rcit.RCITTester(data, rng=2)
    residuals = tester.residuals((2,))
    with pytest.raises(ValueError, match="read-only"):
        residuals[:, 0] = 0.0
    for S in ((), (2,)):
        factor = tester.factor(0, S)
        for array in (factor.points, factor.centred):
            if array is not None:
                with pytest.raises(ValueError, match="read-only"):
                    array[0] = 0.0
    assert tester.result(0, 1, (2,)).p_value == rcit.RCITTester(data, rng=2).result(0, 1, (2,)).p_value


def test_lru_cache_evicts_the_least_recently_used():
    cache = rcit.LRUCache(max_bytes=30)
    for key in "abc":
        cache.put(key, key.upper(), size=10)
    assert cache.get("a") == "A"
    cache.put("d", "D", size=10)  # evicts b, the least recently used
    assert "b" not in cache and {"a", "c", "d"} <= {k for k in "abcd" if k in cache} and cache.nbytes == 30
    cache.put("e", "E", size=100)  # alone above the bound: kept, everything else evicted
    assert len(cache) == 1 and cache.get("e") == "E" and cache.get("a") is None


def test_untied_tau_is_kendall_tau_bit_for_bit():
    from dpcd.ci.discrete import kendall_tau

    rng = np.random.default_rng(12)
    for n in [2, 3, 7, 40, 333, 1000]:
        for _ in range(5):
            a = rng.normal(size=n)
            b = 0.7 * a + rng.normal(size=n)
            assert rcit._untied_tau_a(a, b) == kendall_tau(a, b, "a")
    tied = np.repeat(np.arange(50.0), 2)
    assert rcit._untied_tau_a(tied, rng.normal(size=100)) is None
    assert rcit._untied_tau_a(rng.normal(size=1001), rng.normal(size=1001)) is None  # the sorting route above 1000
    data = _network_data("cancer", 1000, 3)
    result = rcit.kendall_ci_test(data, 0, 2)
    tau = kendall_tau(data[:, 0], data[:, 2], "a")
    assert result.effect == tau and result.statistic == tau * np.sqrt(float(rcit.kendall_weights(np.array([1000]))[0]))


def test_kendall_without_a_usable_stratum_and_a_tester_on_its_own_copy():
    rng = np.random.default_rng(13)
    data = np.column_stack([rng.normal(size=80), rng.normal(size=80), np.round(rng.normal(size=80)),
                            rng.normal(size=80)])
    tie_free = [True, True, False, True]
    for S in [(2,), (3,), (2, 3), (0, 2)]:
        result = rcit.kendall_ci_test(data, 0 if 0 not in S else 1, 1 if 0 not in S else 3, S)
        holds_a_tie_free_column = any(tie_free[j] for j in S)
        assert holds_a_tie_free_column == (result.p_value == 0.0 and result.dof == 80)
    tester = rcit.KendallTester(data)
    before = tester(0, 1, (2,))
    data[:, 2] = np.arange(80.0)  # the caller reuses its array: the tester keeps the data it was given
    assert tester.data is not data and not tester.data.flags.writeable
    assert rcit.KendallTester(tester.data)(0, 1, (2,)) == before
    rcit_tester = rcit.RCITTester(data, rng=0, n_permutations=10)
    assert rcit_tester.data is not data and not rcit_tester.data.flags.writeable

"""Tests of Priv-PC and SVT-PC (Wang, Pang & Song 2020)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcd.datasets import load_bnlearn
from dpcd.discovery import pc
from dpcd.discovery.priv_pc import (KendallPValueQuery, kendall_pvalue_sensitivity, priv_pc, privacy_totals,
                                    reference_max_order)
from dpcd.discovery.svt_pc import SparseVectorDecider, svt_pc
from dpcd.graphs import skeleton_edges
from dpcd.privacy import PrivacyLedger, reference_pvalue_sensitivity


@pytest.fixture(scope="module")
def asia():
    data, dag = load_bnlearn("asia", 20_000, rng=0)
    return np.asarray(data)


def _same_graph(a, b):
    return set(a.cpdag.edges) == set(b.cpdag.edges)


def test_large_epsilon_equals_non_private_kendall_pc(asia):
    ref = pc(asia, ci_test="kendall", alpha=0.2, max_order=3)  # one-sided p > 0.10 <=> two-sided p > 0.20
    for mode in ("proven", "reference"):
        got = priv_pc(asia, epsilon=1e6, rng=1, max_order=3, sensitivity=mode)
        assert got.info["subsample_size"] == len(asia)
        assert _same_graph(got, ref)
        assert _same_graph(svt_pc(asia, epsilon=1e6, rng=1, max_order=3, sensitivity=mode), ref)


def test_ledger_matches_examined_tests_and_totals(asia):
    res = priv_pc(asia, epsilon=1.0, delta=1e-3, rng=2, max_order=2)
    ledger = res.ledger
    assert ledger.neighbouring == "replace"
    examined = sum(e.count for e in ledger.entries if e.mechanism == "examine")
    assert examined == res.info["n_examined"] > 0
    assert res.info["n_sieved"] == res.n_tests
    assert res.info["n_full_tests"] <= res.info["n_examined"]  # full data only for examined tests
    totals = privacy_totals(ledger, 1e-3)
    basic = totals["epsilon_basic"]
    assert totals["epsilon_advanced"] <= basic + 1e-12
    assert totals["epsilon_tight"] <= basic + 1e-12
    assert res.info["delta"] == 1e-3
    assert ledger.total("advanced", delta_prime=1e-3).delta <= 1e-3 + 1e-15


def test_one_hit_costs_at_most_basic_composition(asia):
    """The reference code reports 5.4 for one hit at ε = 1; a reported total never exceeds basic."""
    res = svt_pc(asia[:, :3], epsilon=1.0, rng=0, max_order=0)
    totals = privacy_totals(res.ledger, 1e-3)
    assert totals["epsilon_advanced"] <= totals["epsilon_basic"] == pytest.approx(
        res.info["n_hits"] + (res.ledger.n_charges - res.info["n_hits"]))


def test_svt_threshold_redraws_are_laplace():
    ledger = PrivacyLedger(neighbouring="replace")
    decider = SparseVectorDecider(lambda x, y, S: 1e6, threshold=0.1, epsilon=1.0, sensitivity=0.01, rng=5,
                                  ledger=ledger)
    draws = []
    for _ in range(2000):
        draws.append(decider._svt._noisy_threshold)
        assert decider.decide(0, 1, ())
    scale = 2 * 0.01 / 1.0
    assert stats.kstest(draws, stats.laplace(loc=0.1, scale=scale).cdf).pvalue > 1e-3
    assert ledger.n_charges == 2000 == decider.n_hits


def test_same_seed_same_result(asia):
    a = priv_pc(asia, epsilon=0.5, rng=9, max_order=2)
    b = priv_pc(asia, epsilon=0.5, rng=9, max_order=2)
    assert _same_graph(a, b) and a.info == b.info


def test_subsampling_reduces_full_data_tests(asia):
    res = priv_pc(asia, epsilon=1.0, rng=3, max_order=2, subsample_size=2000)
    assert res.info["n_subsample_tests"] > res.info["n_full_tests"]
    assert skeleton_edges(res.cpdag) is not None


def test_sensitivity_calibration():
    levels = np.array([2, 2, 2, 3])
    assert kendall_pvalue_sensitivity(10_000, levels, 2, sensitivity="reference") == reference_pvalue_sensitivity(10_000)
    proven0 = kendall_pvalue_sensitivity(10_000, levels, 0)
    proven2 = kendall_pvalue_sensitivity(10_000, levels, 2)
    assert proven2 > proven0  # k = 3 * 2 strata at order 2
    assert reference_max_order(100_000, 8) == 6
    assert reference_max_order(100, 8) == 1


def test_query_is_half_the_two_sided_p(asia):
    q = KendallPValueQuery(asia)
    ref = pc.__globals__["CITester"](asia, "kendall")(0, 1, (2,))
    assert q(0, 1, (2,)) == pytest.approx(ref.p_value / 2)


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=1.0, threshold_tweak=0.2), "threshold_tweak"),
    (dict(epsilon=1.0, subsample_size=10**7), "subsample_size"),
    (dict(epsilon=1.0, delta=0.0), "delta"),
    (dict(epsilon=1.0, sensitivity="loose"), "sensitivity"),
])
def test_bad_input(asia, kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        priv_pc(asia, rng=0, **kwargs)


def test_pvalue_sensitivity_falls_back_to_one_half_with_too_many_strata():
    levels = np.array([6, 6, 6, 6, 6, 6])
    assert kendall_pvalue_sensitivity(1000, levels, 4) == 0.5  # 6^4 = 1296 strata > n − 1
    finite = kendall_pvalue_sensitivity(100_000, levels, 2)
    assert 0 < finite < 0.5

"""Tests of the sub-sampled Gaussian PC baseline (Wang, Pang & Song 2020, Sec. 4.2)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcd.datasets import load_bnlearn
from dpcd.discovery import pc
from dpcd.discovery import subsampled_gaussian_pc as sg_module
from dpcd.discovery.pc import worst_case_tests
from dpcd.discovery.priv_pc import privacy_totals
from dpcd.discovery.subsampled_gaussian_pc import (
    subsample_size_lower_bound,
    subsampled_gaussian_pc,
)
from dpcd.privacy.sensitivity import one_sided_kendall_pvalue_sensitivity


@pytest.fixture(scope="module")
def asia_ds():
    return load_bnlearn("asia", 20_000, rng=0)


@pytest.fixture(scope="module")
def asia(asia_ds):
    return np.asarray(asia_ds.data)


@pytest.fixture(scope="module")
def levels(asia_ds):
    """The public domain sizes of asia (from the network)."""
    return asia_ds.levels


def test_one_charge_per_test(asia, levels):
    res = subsampled_gaussian_pc(asia, levels=levels, sigma=2.0, sampling_rate=0.1, rng=3, max_order=2)
    entries = res.ledger.entries
    assert res.ledger.relation == "replace"
    assert res.ledger.n_charges == res.n_tests == len(entries) > 0
    assert {e.kind for e in entries} == {"subsampled_gaussian"}
    assert all(e.sampling_rate == 0.1 and e.noise_multiplier == 2.0 for e in entries)
    assert res.info["n_full_tests"] == 0 and res.info["n_subsample_tests"] == res.n_tests
    # Poisson sub-samples: mean size within 5 standard errors of qn
    se = np.sqrt(len(asia) * 0.1 * 0.9 / res.n_tests)
    assert abs(res.info["mean_subsample_size"] - 0.1 * len(asia)) < 5 * se
    # Δ is the p-value sensitivity at the sub-sample's public lower bound, below the expected size
    m_lo = res.info["subsample_min"]
    assert m_lo < 0.1 * len(asia)
    assert res.info["sensitivity"] == one_sided_kendall_pvalue_sensitivity(m_lo, [2] * 8, 2)
    assert res.info["step_delta"] * worst_case_tests(8, 2) == pytest.approx(1e-6)  # the default delta
    assert worst_case_tests(8, 2) == 8 * 7 * (1 + 6 + 15)  # ordered pairs times conditioning sets


def test_tiny_noise_full_sampling_equals_non_private_kendall_pc(asia, levels):
    ref = pc(asia, ci_test="kendall", alpha=0.2, max_order=3)  # one-sided p > 0.10 <=> two-sided p > 0.20
    for unproven in (None, {"sensitivity": "reference"}):
        got = subsampled_gaussian_pc(asia, levels=levels, sigma=1e-9, sampling_rate=1.0, rng=1, max_order=3,
                                     unproven=unproven)
        assert set(got.cpdag.edges) == set(ref.cpdag.edges)
        assert got.n_tests == ref.n_tests


def test_accounted_epsilon_matches_dp_accounting(asia, levels):
    from dp_accounting import dp_event, privacy_accountant
    from dp_accounting.pld import pld_privacy_accountant

    sigma, q, delta = 1.5, 0.05, 1e-3
    res = subsampled_gaussian_pc(asia, levels=levels, sigma=sigma, sampling_rate=q, delta=delta, rng=4, max_order=2)
    accountant = pld_privacy_accountant.PLDAccountant(privacy_accountant.NeighboringRelation.REPLACE_ONE)
    accountant.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), res.n_tests)
    expected = accountant.get_epsilon(delta)
    assert res.ledger.total("tight", target_delta=delta).epsilon == pytest.approx(expected, rel=1e-6)
    # privacy_totals' coarser grid (1e-3 of the largest per-step ε) rounds pessimistically: never below
    totals = privacy_totals(res.ledger, delta)
    assert expected - 1e-9 <= totals["epsilon_tight"] <= expected + 0.05
    assert totals["epsilon_tight"] <= totals["epsilon_basic"]


def test_subsample_lower_bound_tail():
    n, q = 100_000, 0.05
    m_lo, tail = subsample_size_lower_bound(n, q)
    assert tail <= 1e-12 < stats.binom.cdf(m_lo, n - 1, q)
    assert subsample_size_lower_bound(n, 1.0) == (n, 0.0)


def test_reproducible_with_seed(asia, levels):
    a = subsampled_gaussian_pc(asia, levels=levels, sigma=0.5, sampling_rate=0.2, rng=7, max_order=2)
    b = subsampled_gaussian_pc(asia, levels=levels, sigma=0.5, sampling_rate=0.2, rng=7, max_order=2)
    assert set(a.cpdag.edges) == set(b.cpdag.edges) and a.n_tests == b.n_tests


def test_bad_input(asia, levels):
    with pytest.raises(ValueError, match="sigma"):
        subsampled_gaussian_pc(asia, levels=levels, sigma=0.0, sampling_rate=0.1, rng=0)
    with pytest.raises(ValueError, match="sampling_rate"):
        subsampled_gaussian_pc(asia, levels=levels, sigma=1.0, sampling_rate=1.5, rng=0)
    with pytest.raises(ValueError, match="sampling_rate"):
        subsampled_gaussian_pc(asia[:50], levels=levels, sigma=1.0, sampling_rate=0.01, rng=0)
    with pytest.raises(ValueError, match="delta"):
        subsampled_gaussian_pc(asia, levels=levels, sigma=1.0, sampling_rate=0.1, delta=0.0, rng=0)
    with pytest.raises(ValueError, match="alpha"):
        subsampled_gaussian_pc(asia, levels=levels, sigma=1.0, sampling_rate=0.1, alpha=1.5, rng=0)


def test_levels_are_required_and_checked(asia, levels):
    small = asia[:2_000]
    with pytest.raises(TypeError, match="levels"):
        subsampled_gaussian_pc(small, levels=None, sigma=1.0, sampling_rate=0.5, rng=0)
    with pytest.raises(ValueError, match="data preparation"):
        subsampled_gaussian_pc(small, levels=(1,) + tuple(levels[1:]), sigma=1.0, sampling_rate=0.5, rng=0)
    # the sensitivity follows the declared domains, not the codes
    wide = subsampled_gaussian_pc(small, levels=[3] * 8, sigma=1.0, sampling_rate=0.5, rng=0, max_order=2)
    narrow = subsampled_gaussian_pc(small, levels=levels, sigma=1.0, sampling_rate=0.5, rng=0, max_order=2)
    assert wide.info["sensitivity"] == one_sided_kendall_pvalue_sensitivity(wide.info["subsample_min"], [3] * 8, 2)
    assert wide.info["sensitivity"] > narrow.info["sensitivity"]


@pytest.mark.parametrize("sigma, q, max_order", [(2.0, 0.1, 1), (1.0, 0.3, 2), (5.0, 0.5, None)])
def test_plan_dominates_the_run(asia, levels, sigma, q, max_order):
    data, delta = asia[:4_000, :5], 1e-3
    plan = sg_module.worst_case(sigma=sigma, sampling_rate=q, delta=delta, p=5, n=4_000, max_order=max_order)
    assert plan.relation.name == sg_module.RELATION.name == "replace"
    assert plan.delta == delta
    res = subsampled_gaussian_pc(data, levels=levels[:5], sigma=sigma, sampling_rate=q, delta=delta, rng=5,
                                 max_order=max_order)
    assert res.ledger.relation == plan.relation.name
    rounds = plan.parameters["rounds"]
    assert rounds == worst_case_tests(5, res.info["max_order"])
    assert 0 < res.n_tests == res.ledger.n_charges <= rounds == plan.charges.n_charges
    # the sub-sample-size failures of the run are covered by the plan's delta
    assert res.info["delta_size_failure"] <= rounds * res.info["size_failure_per_test"] < delta
    # same accountant on both sides: the run's tight total at delta never exceeds the plan's guarantee,
    # and its basic total never exceeds the plan's worst-case basic total
    assert privacy_totals(res.ledger, delta)["epsilon_tight"] <= plan.epsilon * (1 + 1e-9)
    assert res.ledger.total("basic").epsilon <= plan.charges.total("basic").epsilon * (1 + 1e-9)

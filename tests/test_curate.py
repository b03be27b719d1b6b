"""Constraint-based CURATE: OPT feasibility/optimality, accounting, decisions."""

import math

import numpy as np
import pytest

from dpcd.datasets import load_bnlearn
from dpcd.discovery.curate import (curate, error_surrogate, kendall_pvalue_sensitivity, optimise_budgets,
                                   order_leakage, order_test_bounds, uniform_allocation)
from dpcd.privacy import advanced_composition_k


def test_order_leakage_matches_advanced_composition_theorem():
    for t, eps in [(1, 0.5), (28, 0.01), (300, 0.2)]:
        adv, _ = advanced_composition_k(eps, 0.0, t, 1e-12)
        assert order_leakage(t, eps, delta_prime=1e-12, cap=False) == pytest.approx(adv, rel=1e-12)
        assert order_leakage(t, eps, delta_prime=1e-12) == pytest.approx(min(adv, t * eps), rel=1e-12)
    # the paper's printed form drops (e^eps - 1)/eps >= 1
    assert order_leakage(10, 1.0, delta_prime=1e-12, composition="paper", cap=False) < \
        order_leakage(10, 1.0, delta_prime=1e-12, cap=False)


@pytest.mark.parametrize("seed", range(12))
def test_opt_feasible_monotone_and_not_worse_than_uniform(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 22))
    order = int(rng.integers(0, d - 1))
    n_edges = int(rng.integers(1, d * (d - 1) // 2 + 1))
    budget = float(10 ** rng.uniform(-2, 1.3))
    sens = float(10 ** rng.uniform(-3, -1))
    q = 1.0 if seed % 3 else 0.2
    res = optimise_budgets(budget, n_edges, d, order, sensitivity=sens, subsample_rate=q,
                           beta1=float(rng.uniform(0.05, 0.9)), beta2=float(rng.uniform(0.05, 0.9)))
    assert res.epsilons.shape == (d - 1 - order,)
    assert np.all(res.epsilons >= 0) and np.all(np.diff(res.epsilons) <= 1e-15)
    t = order_test_bounds(n_edges, d, order, d - 2)
    eff = np.log1p(q * np.expm1(res.epsilons))
    leak = float(np.sum(order_leakage(t, eff, delta_prime=1e-12, cap=False)))
    assert leak <= budget * (1 + 1e-9)
    assert res.objective <= res.uniform_objective + 1e-15


def test_opt_front_loads_and_strictly_improves_on_uniform():
    res = optimise_budgets(5.0, 25, 20, 0, sensitivity=0.02)
    assert res.method == "slsqp"
    uniform = np.full(res.epsilons.shape, uniform_allocation(5.0, order_test_bounds(25, 20, 0, 18), delta_prime=1e-12))
    assert error_surrogate(uniform, threshold=0.05, beta1=0.1, beta2=0.1, sensitivity=0.02) == \
        pytest.approx(res.uniform_objective)
    assert res.objective < res.uniform_objective - 1e-9
    assert res.epsilons[0] > res.epsilons[-1]


def test_uniform_allocation_spends_the_budget():
    t = order_test_bounds(10, 6, 0, 4)
    e = uniform_allocation(2.0, t, delta_prime=1e-12)
    total = float(np.sum(order_leakage(t, np.full(t.shape, e), delta_prime=1e-12, cap=False)))
    assert total == pytest.approx(2.0, rel=1e-9)


def test_pvalue_sensitivity_is_twice_the_one_sided():
    from dpcd.privacy.sensitivity import conditional_kendall_sensitivity, pvalue_sensitivity
    assert kendall_pvalue_sensitivity(1000, 4) == pytest.approx(
        2 * pvalue_sensitivity(conditional_kendall_sensitivity(1000, 4)))


@pytest.fixture(scope="module")
def asia():
    return load_bnlearn("asia", 20_000, rng=0).data


@pytest.mark.parametrize("epsilon_total", [0.1, 1.0, 10.0])
def test_curate_total_leakage_never_exceeds_budget(asia, epsilon_total):
    for seed in range(3):
        res = curate(asia, epsilon_total=epsilon_total, rng=seed)
        assert res.info["epsilon_curate"] <= epsilon_total * (1 + 1e-9)
        assert res.info["delta_curate"] <= res.info["delta_total"] * (1 + 1e-12)
        per_order = sum(o["tests"] for o in res.info["orders"])
        assert per_order == res.ledger.n_charges
        # the tight accountant can only be tighter than the paper's per-order accounting
        tight = res.ledger.total("tight", delta_prime=1e-12)
        assert tight.epsilon <= res.info["epsilon_curate"] * (1 + 1e-3) + 1e-9


def test_curate_charges_each_distinct_test_once_and_counts_match(asia):
    res = curate(asia, epsilon_total=1.0, rng=0)
    charged = [o["tests"] for o in res.info["orders"]]
    # the engine asks each (pair, S) from both ends; the repeat is answered from the cache, not charged
    assert all(c <= e for c, e in zip(charged, res.tests_per_order))
    assert sum(charged) <= res.n_tests
    for o in res.info["orders"]:
        assert o["tests"] <= 28 * math.comb(6, o["order"])


def test_curate_delta_budget_stops_the_search(asia):
    res = curate(asia, epsilon_total=50.0, rng=0, delta_prime=1e-12, delta_total=1e-12)
    assert len(res.info["orders"]) == 1
    assert res.stopped_early and res.info["stop_reason"] == "delta budget spent"


def test_curate_with_negligible_noise_equals_nonprivate_margin_pc(asia):
    """With a tiny sensitivity and no margins the decisions are the non-private ones."""
    from dpcd.discovery import pc
    ref = pc(asia, ci_test="kendall", alpha=0.05)
    res = curate(asia, epsilon_total=1e6, rng=0, sensitivity=1e-12, beta1=0.0, beta2=0.0)
    assert set(res.skeleton) == set(ref.skeleton)


def test_curate_same_seed_same_result_and_subsampling(asia):
    a = curate(asia, epsilon_total=1.0, rng=3, subsample=True)
    b = curate(asia, epsilon_total=1.0, rng=3, subsample=True)
    assert set(a.skeleton) == set(b.skeleton) and a.info["orders"] == b.info["orders"]
    assert a.info["subsample_rate"] == pytest.approx(0.1)
    assert a.info["epsilon_curate"] <= 1.0 + 1e-9


def test_curate_rejects_bad_arguments(asia):
    with pytest.raises(ValueError, match="epsilon_total"):
        curate(asia, epsilon_total=0.0, rng=0)
    with pytest.raises(ValueError, match="beta1"):
        curate(asia, epsilon_total=1.0, rng=0, beta1=1.5)
    with pytest.raises(ValueError, match="composition"):
        curate(asia, epsilon_total=1.0, rng=0, composition="basic")
    with pytest.raises(TypeError, match="rng"):
        curate(asia, epsilon_total=1.0, rng=None)


def test_pvalue_sensitivity_is_at_most_one_even_with_more_strata_than_rows():
    assert kendall_pvalue_sensitivity(100, 500) == 1.0
    assert 0 < kendall_pvalue_sensitivity(100, 2) <= 1.0

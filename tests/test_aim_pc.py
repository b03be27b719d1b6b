"""AIM-PC: the zCDP filter spends exactly ρ and the ledger states its guarantee, the sensitivity of AIM's quality,
the fitted table, the refusal of large domains (before the data are read: tests/test_lapmech.py), the audit case and
its broken variant, and runs through ``discover``."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import dpcd
from dpcd import audit
from dpcd.audit.algorithms import _aim_pc
from dpcd.ci.discrete import marginal_table
from dpcd.datasets import load_bnlearn
from dpcd.discovery.aim_pc import (
    AIM_PC,
    aim_pc,
    aim_synthetic,
    aim_table,
    fit_table,
    selection_quality,
    workload_weights,
    worst_case,
)
from dpcd.graphs import dag_to_cpdag, skeleton_prf
from dpcd.privacy.zcdp import zcdp_epsilon, zcdp_rho


def test_workload_weights_count_overlaps_with_every_workload_set():
    weights = workload_weights(5, 3)
    assert len(weights) == 5 + 10 + 10  # the downward closure of the 3-way workload
    for r, w in weights.items():
        assert w == sum(len(set(r) & set(s)) for s in itertools.combinations(range(5), 3))
    assert workload_weights(2, 3) == {(0,): 1.0, (1,): 1.0, (0, 1): 2.0}  # order capped at d


def test_the_quality_moves_by_at_most_two_w_when_one_record_is_replaced():
    rng = np.random.default_rng(0)
    levels = (2, 3, 2)
    codes = np.column_stack([rng.integers(0, k, 25) for k in levels])
    weights = workload_weights(3, 2)
    model = {r: rng.uniform(0, 10, size=tuple(levels[j] for j in r)) for r in weights}  # fixed by earlier releases

    def quality(data):
        return np.array(selection_quality({r: marginal_table(data, levels, r) for r in weights}, model, weights, 3.0))

    base, bound = quality(codes), 2.0 * np.array(list(weights.values()))
    worst = np.zeros(len(weights))
    for row, record in itertools.product(range(len(codes)), itertools.product(*(range(k) for k in levels))):
        neighbour = codes.copy()
        neighbour[row] = record
        worst = np.maximum(worst, np.abs(quality(neighbour) - base))
    assert np.all(worst <= bound + 1e-9) and np.isclose(worst / bound, 1.0).any()  # never exceeded, attained


def test_the_fit_recovers_consistent_marginals_of_a_chain():
    joint = np.einsum("a,ab,bc->abc", [0.6, 0.4], [[0.9, 0.1], [0.2, 0.8]], [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])
    n = 10_000
    measured = {(0, 1): (joint.sum(axis=2) * n, 1.0), (1, 2): (joint.sum(axis=0) * n, 1.0)}
    theta, _ = fit_table((2, 2, 3), measured, n, iterations=2_000)
    fitted = np.exp(theta) / np.exp(theta).sum()
    assert np.allclose(fitted.sum(axis=2), joint.sum(axis=2), atol=1e-4)
    assert np.allclose(fitted.sum(axis=0), joint.sum(axis=0), atol=1e-4)
    assert np.allclose(fitted, joint, atol=1e-3)  # the chain is the maximum-entropy model of its two tables


def test_a_run_spends_exactly_its_budget_through_the_filter():
    sample = load_bnlearn("asia", 5_000, rng=0)
    model = aim_table(sample.data, levels=sample.levels, epsilon_total=0.5, delta=1e-6, rng=1)
    rho = zcdp_rho(0.5, 1e-6)
    assert model.rho == rho and rho * (1 - 1e-9) <= model.rho_spent <= rho
    assert math.fsum(cost for _, cost in model.costs) == pytest.approx(model.rho_spent, rel=1e-12)
    assert len(model.costs) == 1 + 2 * len(model.measured)  # the one-way tables, then a selection and a measurement
    # the ledger states the filter's guarantee, not a composition of the adaptively chosen rounds as if fixed
    (charge,) = model.ledger.entries
    assert charge.kind == "approx" and charge.delta == 1e-6
    assert charge.epsilon == pytest.approx(zcdp_epsilon(model.rho_spent, 1e-6), rel=1e-12)
    for method in ("basic", "advanced", "tight"):
        total = model.ledger.total(method, target_delta=1e-6) if method == "tight" else model.ledger.total(method)
        assert 0.5 * (1 - 1e-6) <= total.epsilon <= 0.5 * (1 + 1e-9), method
    assert len(model.measured) >= 1 and model.table.shape == tuple(sample.levels)
    assert model.table.sum() == pytest.approx(5_000)
    worst = worst_case(epsilon_total=0.5, delta=1e-6, p=8)
    assert (worst.epsilon, worst.delta, worst.accountant) == (0.5, 1e-6, "zcdp")
    assert dpcd.registry.calibrate(AIM_PC, p=8, n=5_000, epsilon=0.5, delta=1e-6).kwargs == {
        "epsilon_total": 0.5, "delta": 1e-6}


def test_large_domains_are_refused():
    """Refused before the data are read: tests/test_lapmech.py checks that for both full-table algorithms."""
    child = load_bnlearn("child", 100, rng=0)
    with pytest.raises(ValueError, match="max_cells"):
        aim_pc(child.data, levels=child.levels, epsilon_total=1.0, rng=0)


def test_runs_are_reproducible_accurate_and_release_through_discover():
    sample = load_bnlearn("cancer", 20_000, rng=2)
    first = aim_pc(sample.data, levels=sample.levels, epsilon_total=1.0, rng=4)
    again = aim_pc(sample.data, levels=sample.levels, epsilon_total=1.0, rng=4)
    assert first.skeleton == again.skeleton and first.info["measured"] == again.info["measured"]
    assert skeleton_prf(first.cpdag, dag_to_cpdag(sample.dag))["f1"] >= 0.75
    release = dpcd.discover(sample.data, schema=sample.schema(), algorithm="aim_pc", epsilon=1.0, rng=0,
                            progress=False, options=dpcd.ReleaseOptions(forecast_repetitions=0))
    assert release.algorithm == "aim_pc" and release.privacy["guarantee"]["accountant"] == "zcdp"
    assert release.privacy["spent_this_run"]["totals"]["tight"]["epsilon"] <= 1.0 + 1e-9
    synthetic = aim_synthetic(sample.data, levels=sample.levels, epsilon_total=1.0, rng=0)
    assert synthetic.shape == sample.data.shape and list(synthetic.columns) == list(sample.data.columns)
    assert ((synthetic.to_numpy() >= 0) & (synthetic.to_numpy() < np.array(sample.levels))).all()


def test_audit_case_holds_and_the_unnoised_variant_is_flagged():
    case = audit.algorithm_case("aim_pc", epsilon=1.0, rng=0, size="smoke")
    assert case.pair.relation == "replace" and not case.expect_violation
    assert not audit.run_case(case, n_runs=80, n_select=30, rng=2).violation
    broken = _aim_pc(1.0, np.random.default_rng(0), "smoke", broken=True)
    assert broken.expect_violation and broken.name == "BROKEN AIM-PC, marginals measured without noise"
    result = audit.run_case(broken, n_runs=200, n_select=60, rng=2)
    assert result.violation and result.epsilon_lower > 1.5 * broken.epsilon, result.to_row()

"""MST-PC: zCDP accounting, the sensitivity of MST's quality, the tree model it samples, and runs against the plan."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import dpcd
from dpcd.ci.discrete import marginal_table
from dpcd.datasets import load_bnlearn
from dpcd.discovery.mst_pc import MST_PC, QUALITY_SENSITIVITY, mst_pc, mst_synthetic, worst_case
from dpcd.graphs import dag_to_cpdag, skeleton_prf
from dpcd.privacy import PrivacyLedger
from dpcd.privacy.zcdp import zcdp_delta, zcdp_epsilon, zcdp_rho


def test_zcdp_conversion_matches_dp_accounting_and_beats_the_classical_bound():
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    orders = np.concatenate([np.linspace(1.01, 10, 400), np.linspace(10, 5000, 4000)])
    for rho, delta in [(0.01, 1e-6), (0.1, 1e-8), (1.0, 1e-5)]:
        reference, _ = rdp.compute_epsilon(orders, rho * orders, delta)
        assert zcdp_epsilon(rho, delta) == pytest.approx(reference, rel=2e-3)
        assert zcdp_epsilon(rho, delta) < rho + 2 * math.sqrt(rho * math.log(1 / delta))  # Bun & Steinke 2016
    rho = zcdp_rho(0.3, 1e-6)
    assert zcdp_delta(0.3, rho) <= 1e-6 and zcdp_epsilon(rho, 1e-6) == pytest.approx(0.3, rel=1e-9)


def test_the_quality_moves_by_at_most_two_when_one_record_is_replaced():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, size=(30, 3))
    levels = (3, 3, 3)
    fixed = [rng.dirichlet(np.ones(3)) for _ in range(3)]  # released one-way marginals: fixed when q is computed

    def quality(data, i, j):
        return np.abs(marginal_table(data, levels, (i, j)) - len(data) * np.outer(fixed[i], fixed[j])).sum()

    worst = 0.0
    for row, record in itertools.product(range(len(codes)), itertools.product(range(3), repeat=3)):
        neighbour = codes.copy()
        neighbour[row] = record
        worst = max(worst, max(abs(quality(neighbour, i, j) - quality(codes, i, j))
                               for i, j in [(0, 1), (0, 2), (1, 2)]))
    assert worst == pytest.approx(QUALITY_SENSITIVITY, abs=1e-9)  # attained, never exceeded


def test_a_run_is_charged_exactly_its_plan_and_samples_the_data_shape():
    sample = load_bnlearn("asia", 5_000, rng=0)
    ledger = PrivacyLedger("replace")
    synthetic, tree = mst_synthetic(sample.data, levels=sample.levels, epsilon_total=0.5, delta=1e-6, rng=1,
                                    ledger=ledger)
    assert synthetic.shape == sample.data.shape and list(synthetic.columns) == list(sample.data.columns)
    assert (synthetic.to_numpy() < np.array(sample.levels)).all() and (synthetic.to_numpy() >= 0).all()
    assert tree.number_of_edges() == 7 and set(tree.nodes) == set(sample.data.columns)
    assert ledger.total("tight", target_delta=1e-6).epsilon == pytest.approx(0.5, rel=1e-6)
    assert worst_case(epsilon_total=0.5, delta=1e-6, p=8).epsilon == 0.5
    assert dpcd.registry.calibrate(MST_PC, p=8, n=5_000, epsilon=0.5, delta=1e-6).kwargs == {
        "epsilon_total": 0.5, "delta": 1e-6}


def test_runs_are_reproducible_and_find_a_tree_like_graph():
    sample = load_bnlearn("cancer", 20_000, rng=2)
    first = mst_pc(sample.data, levels=sample.levels, epsilon_total=1.0, rng=4)
    again = mst_pc(sample.data, levels=sample.levels, epsilon_total=1.0, rng=4)
    assert first.skeleton == again.skeleton
    assert skeleton_prf(first.cpdag, dag_to_cpdag(sample.dag))["f1"] >= 0.75
    release = dpcd.discover(sample.data, schema=sample.schema(), algorithm="mst_pc", epsilon=1.0, rng=0,
                            progress=False, options=dpcd.ReleaseOptions(forecast_repetitions=0))
    assert release.privacy["guarantee"]["accountant"] == "zcdp"
    assert release.privacy["spent_this_run"]["totals"]["tight"]["epsilon"] <= 1.0 + 1e-9

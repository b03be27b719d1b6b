"""PCD (Alg. 1 of Zhang et al. 2023) on the PC engine."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpcd.ci.rcit import RCITTester
from dpcd.discovery.pc import PValueDecider, run_pc
from dpcd.discovery.pcd import pcd, pcd_decision
from dpcd.validation import as_rng
from dpcd_papers.pcd import ci_error_cell, discovery_cell, sample_ci_case


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, n)
    b = np.sin(2 * a) + 0.3 * rng.uniform(-1, 1, n)
    c = np.tanh(b) + 0.3 * rng.uniform(-1, 1, n)
    d = rng.uniform(-1, 1, n)
    return pd.DataFrame({"A": a, "B": b, "C": c, "D": d})


def test_infinite_epsilon_equals_pc_engine_with_rcit():
    data = _data()
    result = pcd(data, epsilon_per_test=math.inf, rng=3, n_permutations=50, max_order=1)
    test_rng, _ = as_rng(3).spawn(2)
    tester = RCITTester(data, rng=test_rng, n_permutations=50)
    reference = run_pc(list(data.columns), PValueDecider(tester, 0.05), max_order=1)
    assert result.skeleton == reference.skeleton
    assert set(result.cpdag.edges) == set(reference.cpdag.edges)
    assert result.sepsets == reference.sepsets
    assert result.ledger.n_charges == 0 and result.info["n_noisy"] == 0


def test_private_run_charges_epsilon_per_noisy_comparison_and_is_reproducible():
    data = _data()
    first = pcd(data, epsilon_per_test=0.5, rng=4, n_permutations=30, max_order=1)
    second = pcd(data, epsilon_per_test=0.5, rng=4, n_permutations=30, max_order=1)
    assert first.skeleton == second.skeleton
    n_noisy = first.info["n_noisy"]
    assert n_noisy > 0  # Delta_P is large at m = 120
    assert first.ledger.total().epsilon == pytest.approx(0.5 * n_noisy)
    assert first.ledger.neighbouring == "replace"
    assert "LOCAL" in first.ledger.entries[0].note
    assert first.info["n_noisy"] + first.info["n_direct"] == first.n_tests
    assert first.info["epsilon_per_test"] == 0.5 and "epsilon" not in first.info


def test_decision_rule_branches():
    rng = np.random.default_rng(0)
    assert pcd_decision(0.5, 0.1, alpha=0.05, epsilon=1.0, rng=rng) == (True, False)
    assert pcd_decision(0.01, 0.02, alpha=0.05, epsilon=1.0, rng=rng) == (False, False)
    assert pcd_decision(0.06, 0.02, alpha=0.05, epsilon=1.0, rng=rng)[1]
    assert pcd_decision(0.04, 0.02, alpha=0.05, epsilon=1.0, rng=rng)[1]
    assert pcd_decision(0.05, 0.0, alpha=0.05, epsilon=math.inf, rng=rng) == (False, False)


def test_noisy_comparison_probability():
    # P(p + Lap(4s) >= alpha + Lap(2s)) with p = alpha: 1/2 by symmetry; 10000 draws, sd 0.005
    rng = np.random.default_rng(1)
    draws = [pcd_decision(0.05, 0.1, alpha=0.05, epsilon=1.0, rng=rng)[0] for _ in range(10000)]
    assert abs(np.mean(draws) - 0.5) < 0.02
    # far above alpha relative to the noise: removed with probability > 0.9 (Laplace tails)
    draws = [pcd_decision(0.9, 0.9, alpha=0.05, epsilon=8.0, rng=rng)[0] for _ in range(2000)]
    assert np.mean(draws) > 0.9


def test_ci_case_generator():
    data = sample_ci_case(1000, 0)
    assert data.shape == (1000, 7)
    assert np.all(np.abs(data[:, 2:]) <= 0.5)
    assert np.corrcoef(data[:, 0], data[:, 1])[0, 1] > 0.3


def test_cells_return_rows_for_every_epsilon():
    rows = ci_error_cell(n=60, case="independence", ci_test="rcit", rng=0, epsilons=(1.0, math.inf),
                         n_permutations=20)
    assert len(rows) == 4 and {r["error"] for r in rows} == {"type_I", "type_II"}
    import networkx as nx
    truth = nx.DiGraph([("A", "B"), ("B", "C")])
    truth.add_node("D")
    rows = discovery_cell(data=_data(60), truth=truth, ci_test="kendall", rng=0, epsilons=(1.0, math.inf))
    assert [r["epsilon"] for r in rows] == [1.0, math.inf]
    assert all(0 <= r["f1"] <= 1 for r in rows)


def test_bad_arguments():
    data = _data(30)
    with pytest.raises(ValueError, match="epsilon"):
        pcd(data, epsilon_per_test=0.0, rng=0)
    with pytest.raises(TypeError, match="epsilon"):
        pcd(data, epsilon=1.0, rng=0)  # the budget is named for what it is: per test
    with pytest.raises(ValueError, match="ci_test"):
        pcd(data, epsilon_per_test=1.0, rng=0, ci_test="hsic")
    with pytest.raises(ValueError, match="alpha"):
        pcd(data, epsilon_per_test=1.0, rng=0, alpha=1.5)
    with pytest.raises(ValueError, match="case"):
        ci_error_cell(n=30, case="other", ci_test="rcit", rng=0)

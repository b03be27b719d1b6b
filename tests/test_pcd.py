"""PCD (Alg. 1 of Zhang et al. 2023) on the PC engine."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpcd.ci.rcit import RCITTester
from dpcd.discovery.pc import PValueDecider, run_pc
from dpcd.discovery.pcd import PCDDecider, make_tester, pcd, pcd_decision
from dpcd.validation import as_rng
from dpcd_papers import pcd as pcd_cells
from dpcd_papers import pcd_gcm
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
    assert first.ledger.relation == "replace"
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


def test_zero_sensitivity_at_alpha_is_alg1s_charged_comparison():
    """Alg. 1 (lines 13-17): p <= alpha with p + Delta_P >= alpha is the noisy comparison p + Lap >= alpha + Lap,
    charged epsilon; with Delta_P = 0 and p = alpha (RCIT's p-values are multiples of 1/k, so 5/100 == alpha
    happens) that is p >= alpha: the edge is removed, the comparison counted as noisy, and no noise is drawn."""
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    assert pcd_decision(0.05, 0.0, alpha=0.05, epsilon=1.0, rng=rng) == (True, True)
    assert rng.bit_generator.state == state
    assert pcd_decision(0.05 - 1e-12, 0.0, alpha=0.05, epsilon=1.0, rng=rng) == (False, False)
    assert pcd_decision(0.05 + 1e-12, 0.0, alpha=0.05, epsilon=1.0, rng=rng) == (True, False)


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


def _no_stratum_neighbours(n=200, seed=5):
    """D: Z has no ties (no stratum of Z holds two rows); D′: record 1 replaced so that Z has one tie."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    D = np.column_stack([x, x + 0.5 * rng.normal(size=n), rng.normal(size=n)])
    D_prime = D.copy()
    D_prime[1] = [D[0, 0] + 1.0, D[0, 1] + 1.0, D[0, 2]]  # one replaced record: a stratum {0, 1}, concordant
    assert np.unique(D[:, 2]).size == n and np.unique(D_prime[:, 2]).size == n - 1
    return D, D_prime


def _independent_rate(data, *, epsilon, draws, continuous=False):
    decider = PCDDecider(make_tester(data, "kendall", rng=0), epsilon=epsilon, alpha=0.05, rng=11,
                         continuous=continuous)
    rate = np.mean([decider.decide(0, 1, (2,)) for _ in range(draws)])
    return rate, decider


def test_kendall_test_without_a_usable_stratum_is_decided_with_noise_on_both_neighbours():
    # The claim, from the paper's Thm. 5 and not from this code: one noisy comparison of Alg. 1 is epsilon-DP when
    # Delta_P bounds how far one replaced record moves p. A p-value moves by at most 1, so on the neighbours D and
    # D' the probability of "independent" may differ by a factor e^epsilon at most. Whether Z has ties is exactly
    # what the replaced record changes; deciding "no usable stratum, Delta_P = 0" from the data gives 0 on D and 1
    # on D' (p = 0.32 > alpha without noise): an unbounded ratio.
    D, D_prime = _no_stratum_neighbours()
    epsilon, draws = 1.0, 20_000  # sd of a rate <= 0.0036
    on_d, decider_d = _independent_rate(D, epsilon=epsilon, draws=draws)
    on_d_prime, decider_d_prime = _independent_rate(D_prime, epsilon=epsilon, draws=draws)
    assert decider_d.n_noisy == decider_d_prime.n_noisy == draws
    slack = 0.02
    for a, b in ((on_d, on_d_prime), (on_d_prime, on_d), (1 - on_d, 1 - on_d_prime), (1 - on_d_prime, 1 - on_d)):
        assert a <= math.exp(epsilon) * b + slack


def test_kendall_test_given_a_declared_continuous_column_reads_no_data():
    D, D_prime = _no_stratum_neighbours()
    for data in (D, D_prime):
        rate, decider = _independent_rate(data, epsilon=1.0, draws=50, continuous=[False, False, True])
        assert rate == 0.0 and decider.n_noisy == 0 and decider.tester.n_computed == 0
        assert decider.p_and_sensitivity(0, 1, (2,)) == (0.0, 0.0)
        rate, decider = _independent_rate(data, epsilon=math.inf, draws=1, continuous=True)
        assert rate == 0.0 and decider.tester.n_computed == 0
    result = pcd(D, epsilon_per_test=1.0, ci_test="kendall", rng=0, continuous=[False, False, True],
                 node_names=["x", "y", "z"])
    assert result.info["continuous"] == ["z"] and "which columns are continuous" in result.ledger.public
    none = pcd(D, epsilon_per_test=1.0, ci_test="kendall", rng=0, continuous=False)
    assert none.info["continuous"] == [] and "which columns are continuous" in none.ledger.public
    assert "which columns are continuous" not in pcd(D, epsilon_per_test=1.0, rng=0, n_permutations=20).ledger.public


def test_kendall_needs_the_public_declaration_of_continuous_columns():
    # no default: forgetting it on tie-free data would turn every conditional test into a coin flip
    data = _data(60)
    with pytest.raises(ValueError, match="continuous= .*never read from the data"):
        pcd(data, epsilon_per_test=1.0, rng=0, ci_test="kendall")
    with pytest.raises(ValueError, match="continuous="):
        PCDDecider(make_tester(data, "kendall", rng=0), epsilon=1.0, alpha=0.05, rng=0)
    assert PCDDecider(make_tester(data, "rcit", rng=0), epsilon=1.0, alpha=0.05, rng=0).continuous.sum() == 0


def test_bad_arguments():
    data = _data(30)
    for bad in ([True, False], [1, 0, 1, 0], "yes"):
        with pytest.raises(ValueError, match="continuous"):
            pcd(data, epsilon_per_test=1.0, rng=0, ci_test="kendall", continuous=bad)
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


# --------------------------------------------------------------------------- the paper-as-run diagnostic


def test_the_score_on_the_paper_scale_shrinks_delta_p_and_gives_the_papers_type_ii_error():
    """Fig. 1(b) at m = 200: Def. 4's scale puts every decision in the noisy comparison; m x HSIC none."""
    data = sample_ci_case(200, 0)
    tester = pcd_cells.make_tester(data, "rcit", rng=1, n_permutations=100)
    _, x, y, S, _ = pcd_cells.CI_CASES["ci"][1]  # type II: X, Y given Z1..Z4
    p_value, published = pcd_cells.p_and_sensitivity(tester, x, y, S, alpha=0.05)
    _, as_run = pcd_cells.p_and_sensitivity(tester, x, y, S, alpha=0.05, variant="as_run")
    result = tester.result(x, y, S)
    assert p_value < 0.05 and published == 1.0 and as_run == 0.0
    # the scale change is exactly Delta_R / m on Def. 4's scale
    from dpcd.ci.rcit import permutation_sensitivity
    assert as_run == permutation_sensitivity(result, alpha=0.05, score_sensitivity=result.score_sensitivity / 200)
    rows = ci_error_cell(n=200, case="ci", ci_test="rcit", rng=3, epsilons=(0.1, 1.0), n_permutations=50,
                         variants=("published", "as_run"))
    frame = pd.DataFrame(rows)
    type_ii = frame[frame["error"] == "type_II"].groupby("variant")["noisy"].mean()
    assert type_ii["published"] == 1.0 and type_ii["as_run"] == 0.0


def test_kendall_as_run_uses_the_authors_sensitivity():
    from dpcd.privacy.sensitivity import reference_pvalue_sensitivity, two_sided_kendall_pvalue_sensitivity

    data = sample_ci_case(300, 0)
    tester = pcd_cells.make_tester(data, "kendall", rng=0)
    _, published = pcd_cells.p_and_sensitivity(tester, 2, 3, (), alpha=0.05)
    _, as_run = pcd_cells.p_and_sensitivity(tester, 2, 3, (), alpha=0.05, variant="as_run")
    assert published == pytest.approx(two_sided_kendall_pvalue_sensitivity(300, 1))
    assert as_run == pytest.approx(2 * reference_pvalue_sensitivity(300)) and as_run < published
    # continuous Z: no usable stratum, the test declares dependence without noise in both variants
    assert pcd_cells.p_and_sensitivity(tester, 0, 1, (2, 3), alpha=0.05, variant="as_run") == (0.0, 0.0)
    with pytest.raises(ValueError, match="variant"):
        pcd_cells.p_and_sensitivity(tester, 2, 3, (), alpha=0.05, variant="paper")


def test_discovery_cell_runs_both_variants_on_the_same_tests():
    import networkx as nx

    truth = nx.DiGraph([("A", "B"), ("B", "C")])
    truth.add_node("D")
    rows = discovery_cell(data=_data(80), truth=truth, ci_test="rcit", rng=0, epsilons=(1.0, math.inf),
                          n_permutations=20, variants=("published", "as_run"))
    frame = pd.DataFrame(rows).set_index(["variant", "epsilon"])
    assert frame.loc[("published", math.inf), "f1"] == frame.loc[("as_run", math.inf), "f1"]
    assert frame.loc[("as_run", 1.0), "n_noisy"] <= frame.loc[("published", 1.0), "n_noisy"]


def _fig1_rows(rates):
    """(case, error, test, n, epsilon) -> rate, as 20 repetitions of 0/1 indicators."""
    rows = []
    for (case, error, test, n, epsilon), rate in rates.items():
        hits = round(rate * 20)
        rows += [{"case": case, "error": error, "ci_test": test, "n": n, "epsilon": epsilon, "variant": "published",
                  "repetition": r, "wrong": float(r < hits)} for r in range(20)]
    return pd.DataFrame(rows)


def test_fig1_claim_rules_can_fail():
    rates = {("ci", "type_I", "rcit", 200, 0.1): 0.6, ("ci", "type_I", "rcit", 200, 8.0): 0.3,
             ("ci", "type_I", "rcit", 500, 0.1): 1.0, ("ci", "type_I", "rcit", 500, 8.0): 1.0,
             ("independence", "type_I", "rcit", 200, 0.1): 0.5, ("independence", "type_I", "kendall", 200, 0.1): 0.05}
    cells = pcd_cells.fig1_claims(_fig1_rows(rates))
    falls = cells[cells["claim_id"] == "pcd:fig1a:rcit-type-i-falls-with-epsilon"].set_index("cell")["holds"]
    assert falls.to_dict() == {"m=200": True, "m=500": False}
    with_m = cells[cells["claim_id"] == "pcd:fig1a:rcit-type-i-falls-with-m"]["holds"]
    assert not with_m.any()  # 1.0 at m = 500 is not below the rate at m = 200
    similar = cells[cells["claim_id"] == "pcd:fig1c:similar-type-i-at-m200"]["holds"]
    assert similar.tolist() == [False]  # 0.5 vs 0.05 over 20 runs each is a real difference


def test_numeric_claims_use_repetitions_as_runs():
    rates = {("ci", "type_II", "rcit", 200, e): 0.5 for e in (0.1, 1.0, math.inf)}
    values = pcd_cells.numeric_claims(_fig1_rows(rates), pd.DataFrame(columns=["ci_test", "variant", "epsilon",
                                                                               "repetition", "f1"]))
    row = values.set_index("claim_id").loc["pcd:fig1b:rcit-type-ii-m200"]
    assert row["value"] == pytest.approx(0.5) and row["runs"] == 20 and row["sd"] > 0.4


def test_paper_values_carry_the_claims_the_notebook_judges():
    from dpcd_papers import reporting

    paper = reporting.load_paper_values("pcd")
    assert paper["claim_id"].is_unique
    assert set(paper.loc[paper["value"].isna(), "claim_id"]) == set(pcd_cells.CLAIM_RULES)
    numbers = paper[paper["value"].notna()]
    assert (numbers["floor"] > 0).all() and numbers["note"].str.contains("Floor").all()


def test_gcm_moments_are_gcm_pcs_release_and_exact_at_infinite_epsilon():
    from dpcd.discovery.gcm_pc import (
        DEFAULT_CONDITIONING_DEGREE,
        DEFAULT_SPREAD_K,
        DEFAULT_SPREAD_MAP,
        DEFAULT_SPREAD_SHARE,
        auto_features,
        auto_norm_clip,
        mapped_features,
    )
    from dpcd.privacy.gdp import gdp_mu
    from dpcd.privacy.moments import release_sensitivity, weighted_moment_sensitivity
    from dpcd.privacy.spread import spread_edges

    data = sample_ci_case(300, 0)
    exact = pcd_gcm.gcm_moments(data, pcd_cells.CI_CASE_BOUNDS, math.inf, 1)
    box = np.column_stack([data[:, :2] / 1.5, data[:, 2:] / 0.5])
    edges = spread_edges(box.mean(axis=0), (box ** 2).mean(axis=0), k=DEFAULT_SPREAD_K)
    features = mapped_features(box, edges, how=DEFAULT_SPREAD_MAP,
                               degree=DEFAULT_CONDITIONING_DEGREE)  # exact moments: the rich basis
    assert exact.conditioning_degree == DEFAULT_CONDITIONING_DEGREE
    assert exact.sigma == 0.0 and np.allclose(exact.mean, features.mean(axis=0))
    assert np.allclose(exact.covariance, np.cov(features.T, bias=True))
    noisy = pcd_gcm.gcm_moments(data, pcd_cells.CI_CASE_BOUNDS, 1.0, 1)
    assert (noisy.conditioning_degree, noisy.feature_weight) == auto_features(
        data.shape[1], len(data), epsilon_total=1.0, delta=pcd_gcm.GCM_DELTA,
        dependence=pcd_gcm.GCM_DEPENDENCE)  # GCM-PC's basis for this n, ε and the paper's nonlinear data
    larger = sample_ci_case(2_000, 0)  # σ/n ≈ 0.006 at ε = 4: sparse for nonlinear data, rich for linear
    assert pcd_gcm.gcm_moments(larger, pcd_cells.CI_CASE_BOUNDS, 4.0, 1).conditioning_degree == auto_features(
        7, 2_000, epsilon_total=4.0, delta=pcd_gcm.GCM_DELTA, dependence="nonlinear")[0] != auto_features(
        7, 2_000, epsilon_total=4.0, delta=pcd_gcm.GCM_DELTA, dependence="linear")[0]
    moments_mu = gdp_mu(1.0, pcd_gcm.GCM_DELTA) * math.sqrt(1 - DEFAULT_SPREAD_SHARE)  # after the spreads' share
    radius = math.sqrt(auto_norm_clip(data.shape[1], noisy.conditioning_degree, noisy.feature_weight)
                       * float(np.sum(noisy.weights ** 2)))  # the public norm clip
    assert noisy.sigma == pytest.approx(release_sensitivity(noisy.weights, radius) / moments_mu)
    assert noisy.sigma < weighted_moment_sensitivity(noisy.weights) / moments_mu
    assert not np.allclose(noisy.mean[:2], exact.mean[:2])
    assert np.all(np.abs(data[:, :2]) <= 1.5) and np.all(np.abs(data[:, 2:]) <= 0.5)  # the bounds hold


def test_gcm_cells_return_rows_for_every_epsilon_and_the_edge_baseline():
    rows = pcd_gcm.gcm_error_cell(n=200, case="independence", rng=0, epsilons=(1.0, math.inf), n_boot=50)
    assert [(r["error"], r["epsilon"]) for r in rows] == [("type_I", 1.0), ("type_II", 1.0), ("type_I", math.inf),
                                                          ("type_II", math.inf)]
    assert all(r["wrong"] in (0.0, 1.0) and 0 < r["p_value"] <= 1 for r in rows)
    assert rows[3]["wrong"] == 0.0  # X and Y share sin(sum Z): dependent, found without noise at m = 200
    net = pcd_gcm.gcm_network_cell(network="cancer", n=500, rng=0, epsilons=(1.0, math.inf), n_boot=50)
    assert [r["epsilon"] for r in net] == [1.0, math.inf] and all(0 <= r["f1"] <= 1 for r in net)
    from dpcd.forecast import random_graph_f1

    for r in net:  # 5 nodes, 4 true skeleton edges of 10 pairs: the mean of the forecast's random-graph F1
        assert r["f1_random"] == pytest.approx(random_graph_f1(5, [4], [r["edges"]])[0])
    with pytest.raises(ValueError, match="case"):
        pcd_gcm.gcm_error_cell(n=200, case="nope", rng=0)


def test_eq3_cell_compares_the_score_change_with_the_data_sets_delta_r():
    from dpcd.ci.rcit import rcit

    rows = pcd_cells.eq3_cell(m=60, rng=0)
    assert len(rows) == len(pcd_cells.EXTREME_RECORDS)
    data = sample_ci_case(60, np.random.default_rng(0).spawn(2)[0])
    bound = rcit(data, 0, 1, (2, 3, 4, 5, 6), rng=0, n_permutations=1).score_sensitivity
    for row in rows:
        assert row["bound"] == pytest.approx(bound) and row["ratio"] == pytest.approx(row["change"] / bound)
        assert row["change"] > 0  # a corner record moves the score
    cells = pcd_cells.eq3_claims(pd.DataFrame({"m": [60] * len(rows), "ratio": [r["ratio"] for r in rows]}))
    assert cells["claim_id"].tolist() == ["pcd:thm3:eq3-bounds-the-rcit-score"]


def test_thm4_cell_compares_the_p_value_change_with_eq6():
    from dpcd.ci.rcit import permutation_sensitivity, rcit
    from dpcd_papers import pcd_theorems

    rows = pcd_theorems.thm4_cell(m=80, rng=0)
    assert len(rows) == len(pcd_theorems.THM4_TESTS) * len(pcd_cells.EXTREME_RECORDS)
    data = sample_ci_case(80, np.random.default_rng(0).spawn(2)[0])
    for test, (x, y, S) in pcd_theorems.THM4_TESTS.items():
        first = rcit(data, x, y, S, rng=0, n_permutations=100)
        mine = [r for r in rows if r["test"] == test]
        assert all(r["p"] == first.p_value for r in mine)
        assert all(r["bound"] == pytest.approx(permutation_sensitivity(first, one_sided=False)) for r in mine)
        assert all(r["ratio"] == pytest.approx(r["change"] / r["bound"]) for r in mine)
    assert any(r["change"] > 0 for r in rows)  # under the null a corner record can move p


def test_thm4_claim_row_refutes_on_a_change_beyond_delta_p_and_otherwise_says_not_refuted():
    from dpcd_papers.pcd_theorems import THM4_CLAIM, thm4_claim_row

    held = thm4_claim_row(pd.DataFrame({"m": [200, 500], "ratio": [0.2, 1.0], "bound": [0.5, 0.4]}))
    assert (held["claim_id"], held["verdict"], held["ours"]) == (THM4_CLAIM, "not refuted", 1.0)
    assert "median Delta_P 0.4" in held["note"] and held["diagnosis"] == ""
    refuted = thm4_claim_row(pd.DataFrame({"m": [200, 200], "ratio": [0.0, np.inf]}))
    assert refuted["verdict"] == "not reproduced" and refuted["diagnosis"]


def test_sachs_views_take_their_bounds_from_the_scale_not_from_the_values():
    from dpcd_papers.pcd_gcm import INTENSITY_SCALE, sachs_view

    data = np.array([[0.5, 1.0, 50.0], [2e4, 1e4, 10.0]])
    log_view, log_bounds = sachs_view(data, "log10")
    assert log_bounds == ((0.0, 4.0),) * 3
    assert log_view.tolist() == [[0.0, 0.0, pytest.approx(np.log10(50.0))], [4.0, 4.0, 1.0]]  # clamped, then log
    raw_view, raw_bounds = sachs_view(data, "raw")
    assert raw_bounds == (INTENSITY_SCALE,) * 3 and raw_view.max() == 1e4 and raw_view.min() == 1.0
    shifted, shifted_bounds = sachs_view(data * 0.5, "raw")  # other values, the same public bounds
    assert shifted_bounds == raw_bounds
    with pytest.raises(ValueError, match="scale"):
        sachs_view(data, "log2")


def test_gcm_sachs_cell_scores_the_skeleton_against_the_consensus_graph():
    from dpcd_papers.pcd_gcm import gcm_sachs_cell

    rows = gcm_sachs_cell(n=400, scale="log10", rng=0, epsilons=(1.0, math.inf), max_order=1, n_boot=50)
    assert [r["epsilon"] for r in rows] == [1.0, math.inf]
    for r in rows:
        assert 0 <= r["f1"] <= 1 and "pair_f1" not in r  # the consensus graph has a cycle: skeleton metrics only
        # 11 nodes, 18 skeleton edges, 55 pairs: the random-graph baseline of the Fig. 3 cells
        assert r["f1_random"] == pytest.approx(2 * (18 * r["edges"] / 55) / (18 + r["edges"]) if r["edges"] else 1.0)
    assert rows[1]["edges"] >= 5  # 400 cells of pooled conditions: many dependencies without noise
    again = gcm_sachs_cell(n=400, scale="log10", rng=0, epsilons=(1.0, math.inf), max_order=1, n_boot=50)
    assert again == rows
    with pytest.raises(ValueError, match="scale"):
        gcm_sachs_cell(n=400, scale="nope", rng=0)

"""Tests of Priv-PC and SVT-PC (Wang, Pang & Song 2020)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcd.datasets import load_bnlearn
from dpcd.discovery import pc
from dpcd.discovery import priv_pc as priv_pc_module
from dpcd.discovery import svt_pc as svt_pc_module
from dpcd.discovery.pc import worst_case_tests
from dpcd.discovery.priv_pc import (
    KendallPValueQuery,
    kendall_run_setup,
    priv_pc,
    privacy_totals,
    reference_max_order,
)
from dpcd.discovery.svt_pc import SparseVectorDecider, svt_pc
from dpcd.graphs import skeleton_edges
from dpcd.privacy import PrivacyLedger, reference_pvalue_sensitivity
from dpcd.privacy.sensitivity import one_sided_kendall_pvalue_sensitivity
from dpcd_papers import priv_pc as priv_pc_cells


@pytest.fixture(scope="module")
def asia_ds():
    return load_bnlearn("asia", 20_000, rng=0)


@pytest.fixture(scope="module")
def asia(asia_ds):
    return np.asarray(asia_ds.data)


@pytest.fixture(scope="module")
def levels(asia_ds):
    """The public domain sizes of asia (from the network, not from the sample)."""
    return asia_ds.levels


def _same_graph(a, b):
    return set(a.cpdag.edges) == set(b.cpdag.edges)


def test_large_epsilon_equals_non_private_kendall_pc(asia, levels):
    ref = pc(asia, ci_test="kendall", alpha=0.2, max_order=3)  # one-sided p > 0.10 <=> two-sided p > 0.20
    for unproven in (None, {"sensitivity": "reference"}):
        got = priv_pc(asia, levels=levels, epsilon_per_test=1e6, rng=1, max_order=3, unproven=unproven)
        assert got.info["subsample_size"] == len(asia)
        assert _same_graph(got, ref)
        assert got.ledger.differentially_private is (unproven is None)  # the authors' calibration is marked
        assert _same_graph(svt_pc(asia, levels=levels, epsilon_per_edge=1e6, rng=1, max_order=3,
                                  unproven=unproven), ref)


def test_ledger_matches_examined_tests_and_totals(asia, levels):
    res = priv_pc(asia, levels=levels, epsilon_per_test=1.0, delta=1e-3, rng=2, max_order=2)
    ledger = res.ledger
    assert ledger.relation == "replace"
    examined = sum(e.count for e in ledger.entries if e.mechanism == "examine")
    assert examined == res.info["n_examined"] > 0
    assert res.info["n_sieved"] == res.n_tests
    assert res.info["n_full_tests"] <= res.info["n_examined"]  # full data only for examined tests
    totals = privacy_totals(ledger, 1e-3)
    basic = totals["epsilon_basic"]
    assert totals["epsilon_advanced"] <= basic + 1e-12
    assert totals["epsilon_tight"] <= basic + 1e-12
    assert res.info["delta"] == 1e-3
    assert res.info["epsilon_per_test"] == 1.0 and "epsilon" not in res.info
    assert ledger.total("advanced", delta_prime=1e-3).delta <= 1e-3 + 1e-15


def test_one_hit_costs_at_most_basic_composition(asia, levels):
    """The reference code reports 5.4 for one hit at ε = 1; a reported total never exceeds basic."""
    res = svt_pc(asia[:, :3], levels=levels[:3], epsilon_per_edge=1.0, rng=0, max_order=0)
    assert res.info["epsilon_per_edge"] == 1.0 and "epsilon" not in res.info
    totals = privacy_totals(res.ledger, 1e-3)
    assert totals["epsilon_advanced"] <= totals["epsilon_basic"] == pytest.approx(
        res.info["n_hits"] + (res.ledger.n_charges - res.info["n_hits"]))


def test_svt_threshold_redraws_are_laplace():
    ledger = PrivacyLedger(relation="replace")
    decider = SparseVectorDecider(lambda x, y, S: 1e6, threshold=0.1, epsilon=1.0, sensitivity=0.01, rng=5,
                                  ledger=ledger)
    draws = []
    for _ in range(2000):
        draws.append(decider._svt._noisy_threshold)
        assert decider.decide(0, 1, ())
    scale = 2 * 0.01 / 1.0
    assert stats.kstest(draws, stats.laplace(loc=0.1, scale=scale).cdf).pvalue > 1e-3
    assert ledger.n_charges == 2000 == decider.n_hits


def test_same_seed_same_result(asia, levels):
    a = priv_pc(asia, levels=levels, epsilon_per_test=0.5, rng=9, max_order=2)
    b = priv_pc(asia, levels=levels, epsilon_per_test=0.5, rng=9, max_order=2)
    assert _same_graph(a, b) and a.info == b.info


def test_subsampling_reduces_full_data_tests(asia, levels):
    res = priv_pc(asia, levels=levels, epsilon_per_test=1.0, rng=3, max_order=2, subsample_size=2000)
    assert res.info["n_subsample_tests"] > res.info["n_full_tests"]
    assert skeleton_edges(res.cpdag) is not None


def test_sensitivity_calibration():
    levels = np.array([2, 2, 2, 3])
    assert one_sided_kendall_pvalue_sensitivity(10_000, levels, 2, mode="reference") == reference_pvalue_sensitivity(10_000)
    proven0 = one_sided_kendall_pvalue_sensitivity(10_000, levels, 0)
    proven2 = one_sided_kendall_pvalue_sensitivity(10_000, levels, 2)
    assert proven2 > proven0  # k = 3 * 2 strata at order 2
    assert reference_max_order(100_000, 8) == 6
    assert reference_max_order(100, 8) == 1


def test_query_is_half_the_two_sided_p(asia, levels):
    q = KendallPValueQuery(asia, levels)
    ref = pc.__globals__["CITester"](asia, "kendall")(0, 1, (2,))
    assert q(0, 1, (2,)) == pytest.approx(ref.p_value / 2)


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon_per_test=0.0), "epsilon_per_test"),
    (dict(epsilon_per_test=1.0, threshold_tweak=0.2), "threshold_tweak"),
    (dict(epsilon_per_test=1.0, subsample_size=10**7), "subsample_size"),
    (dict(epsilon_per_test=1.0, delta=0.0), "delta"),
    (dict(epsilon_per_test=1.0, unproven={"sensitivity": "loose"}), "sensitivity"),
    (dict(epsilon_per_test=1.0, sensitivity="reference"), "sensitivity"),  # only through unproven=
    (dict(epsilon=1.0), "epsilon"),  # the budget is named for what it is
])
def test_bad_input(asia, levels, kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        priv_pc(asia, levels=levels, rng=0, **kwargs)


def test_pvalue_sensitivity_falls_back_to_one_half_with_too_many_strata():
    levels = np.array([6, 6, 6, 6, 6, 6])
    assert one_sided_kendall_pvalue_sensitivity(1000, levels, 4) == 0.5  # 6^4 = 1296 strata > n − 1
    finite = one_sided_kendall_pvalue_sensitivity(100_000, levels, 2)
    assert 0 < finite < 0.5


# --------------------------------------------------------------------------- public domains


@pytest.mark.parametrize("algorithm, budget", [(priv_pc, "epsilon_per_test"), (svt_pc, "epsilon_per_edge")])
def test_levels_are_required_and_checked(asia, levels, algorithm, budget):
    small = asia[:2_000]
    with pytest.raises(TypeError, match="levels"):
        algorithm(small, levels=None, rng=0, **{budget: 1.0})
    with pytest.raises(ValueError, match="data preparation"):
        algorithm(small, levels=(1,) + tuple(levels[1:]), rng=0, **{budget: 1.0})
    with pytest.raises(ValueError, match="levels"):
        algorithm(small, levels=levels[:-1], rng=0, **{budget: 1.0})


def test_levels_not_codes_fix_the_sensitivity(asia, levels):
    """The p-value sensitivity is a function of the public domains: a wider declared domain means more strata
    (larger sensitivity) for the very same codes."""
    small = asia[:5_000]
    narrow = priv_pc(small, levels=levels, epsilon_per_test=1.0, rng=0, max_order=2)
    wide = priv_pc(small, levels=[3] * len(levels), epsilon_per_test=1.0, rng=0, max_order=2)
    assert narrow.info["sensitivity"] == one_sided_kendall_pvalue_sensitivity(5_000, levels, 2)
    assert wide.info["sensitivity"] == one_sided_kendall_pvalue_sensitivity(5_000, [3] * len(levels), 2)
    assert wide.info["sensitivity"] > narrow.info["sensitivity"]
    codes, names, order, query = kendall_run_setup(small, None, 2, levels)
    assert order == 2 and names == [f"X{i + 1}" for i in range(8)] and list(query.levels) == list(levels)
    with pytest.raises(TypeError, match="levels"):
        kendall_run_setup(small, None, 2, None)


# --------------------------------------------------------------------------- plans dominate runs


@pytest.mark.parametrize("epsilon_per_test, max_order", [(0.05, 1), (1.0, 2), (1.0, None)])
def test_priv_pc_plan_dominates_the_run(asia, levels, epsilon_per_test, max_order):
    data = asia[:4_000, :5]
    delta = 1e-3
    plan = priv_pc_module.worst_case(epsilon_per_test=epsilon_per_test, delta=delta, p=5, n=4_000, max_order=max_order)
    assert plan.relation.name == priv_pc_module.RELATION.name == "replace"
    assert plan.delta == delta
    res = priv_pc(data, levels=levels[:5], epsilon_per_test=epsilon_per_test, delta=delta, rng=1,
                  max_order=max_order)
    assert res.ledger.relation == plan.relation.name
    order = 3 if max_order is None else max_order  # None: no limit, p − 2
    rounds = worst_case_tests(5, order)
    assert plan.parameters["rounds"] == rounds
    # the run's charges are a sub-multiset of the plan's: at most `rounds` examined tests, one open sieve
    assert res.info["n_examined"] <= rounds
    run_basic = res.ledger.total("basic").epsilon
    assert run_basic <= plan.charges.total("basic").epsilon * (1 + 1e-12)
    assert run_basic == pytest.approx(epsilon_per_test * res.info["n_examined"]
                                      + epsilon_per_test / 2 * (res.ledger.n_charges - 2 * res.info["n_examined"]))
    # and the plan's guarantee (tight accountant at delta) bounds the run's total by the same accountant
    assert privacy_totals(res.ledger, delta)["epsilon_tight"] <= plan.epsilon * (1 + 1e-9)
    assert plan.epsilon <= plan.charges.total("basic").epsilon * (1 + 1e-12)


@pytest.mark.parametrize("epsilon_per_edge", [0.1, 1.0])
def test_svt_pc_plan_dominates_the_run(asia, levels, epsilon_per_edge):
    data = asia[:4_000, :5]
    delta = 1e-3
    plan = svt_pc_module.worst_case(epsilon_per_edge=epsilon_per_edge, delta=delta, p=5)
    assert plan.relation.name == "replace" and plan.parameters["rounds"] == 5 * 4 // 2 + 1
    res = svt_pc(data, levels=levels[:5], epsilon_per_edge=epsilon_per_edge, delta=delta, rng=2, max_order=2)
    assert res.ledger.relation == plan.relation.name
    assert 0 < res.ledger.n_charges <= plan.charges.n_charges
    assert res.ledger.n_charges - res.info["n_hits"] in (0, 1)  # one charge per hit, plus one open run
    assert res.info["n_hits"] <= 5 * 4 // 2  # a hit removes an edge
    assert res.ledger.total("basic").epsilon <= plan.charges.total("basic").epsilon * (1 + 1e-12)
    assert privacy_totals(res.ledger, delta)["epsilon_tight"] <= plan.epsilon * (1 + 1e-9)


def test_experiment_lines_are_names():
    lines = priv_pc_cells.EXPERIMENT_LINES
    assert isinstance(lines, tuple) and all(isinstance(v, str) for v in lines)
    assert {"priv_pc", "svt_pc", "em_pc"} <= set(lines)
    assert not hasattr(priv_pc_module, "ALGORITHMS")


# --------------------------------------------------------------------------- the notebook's claim rules


def _runs(values):
    """Rows of run_cell's shape: (algorithm, sensitivity, epsilon, f1_pc, cost)."""
    import pandas as pd

    return pd.DataFrame([{"network": "asia", "algorithm": a, "sensitivity": s, "epsilon": e, "f1_pc": f,
                          "epsilon_advanced": c, "epsilon_tight": c} for a, s, e, f, c in values])


def test_claim_rules_follow_the_declared_lines_and_can_fail():
    runs = _runs([("priv_pc", "proven", 1.0, 0.6, 20.0), ("priv_pc", "proven", 4.0, 0.9, 80.0),
                  ("priv_pc", "reference", 4.0, 1.0, 80.0), ("em_pc", "proven", 1.0, 0.8, 0.0),
                  ("em_pc", "proven", 100.0, 0.8, 0.0), ("svt_pc", "proven", 4.0, 0.7, 50.0),
                  ("subsampled_gaussian", "proven", 50.0, 0.5, 30.0)])
    declared = priv_pc_cells.fig1_claims(runs).set_index("claim_id")["holds"]
    assert not declared["priv_pc:sec4.2:priv_pc-converges"]  # 0.9 < 0.95 with the proven sensitivity
    assert declared["priv_pc:sec4.2:em_pc-does-not-converge"]
    assert not declared["priv_pc:sec4.2:priv_pc-beats-em_pc-at-large-cost"]  # mean 0.75 over [10, 100] vs 0.8
    assert declared["priv_pc:sec4.2:priv_pc-much-better-than-svt_pc"] == (0.75 - 0.7 >= 0.1)
    assert declared["priv_pc:sec4.2:sg-worse-than-em_pc-and-svt_pc"]
    assert "priv_pc:sec4.2:em_pc-beats-priv_pc-at-small-cost" not in declared  # no Priv-PC run with cost <= 3
    authors = priv_pc_cells.fig1_claims(runs, sensitivity="reference").set_index("claim_id")["holds"]
    assert authors["priv_pc:sec4.2:priv_pc-converges"]
    with pytest.raises(ValueError, match="sensitivity"):
        priv_pc_cells.fig1_claims(runs, sensitivity="loose")


def test_accumulated_cost_uses_each_algorithms_own_total():
    runs = _runs([("em_pc", "proven", 3.0, 0.5, 9.0), ("subsampled_gaussian", "proven", 1.0, 0.5, 2.0)])
    runs.loc[1, "epsilon_advanced"] = 40.0
    assert priv_pc_cells.accumulated_cost(runs).tolist() == [3.0, 2.0]


def test_timing_claims_use_medians_on_the_same_machine():
    import pandas as pd

    timing = pd.DataFrame({"network": ["a"] * 6, "algorithm": ["priv_pc", "priv_pc", "priv_pc", "em_pc", "em_pc",
                                                                "em_pc"],
                           "cpu_seconds": [1.0, 1.0, 100.0, 2.0, 2.0, 0.1]})
    cells = priv_pc_cells.table2_claims(timing)
    assert cells["holds"].tolist() == [True]  # the median ignores one slow outlier; no nosub run: no cell


def test_qualitative_rows_judge_the_share_of_networks():
    import pandas as pd

    from dpcd_papers import reporting

    claims = reporting.load_paper_values("priv_pc")
    claims = claims[claims["value"].isna()]
    assert set(claims["claim_id"]) == set(priv_pc_cells.CLAIM_RULES)
    cells = pd.DataFrame({"claim_id": ["priv_pc:sec4.2:priv_pc-converges"] * 4, "cell": list("abcd"),
                          "holds": [True, True, True, False], "detail": [""] * 4})
    rows = priv_pc_cells.qualitative_rows(claims, cells, line="declared").set_index("claim_id")
    assert rows.loc["priv_pc:sec4.2:priv_pc-converges", "verdict"] == "not reproduced"  # 3 of 4 < 80 %
    assert rows.loc["priv_pc:sec4.2:em_pc-does-not-converge", "verdict"] == "not computed"


def test_sensitivity_theorems_are_checked_on_computed_pairs_and_refuted():
    import math

    from dpcd.privacy.sensitivity import conditional_kendall_sensitivity, kendall_tau_sensitivity
    from dpcd_papers import reporting

    cells = priv_pc_cells.sensitivity_claims((10, 100, 1000))
    thm6 = cells[cells["claim_id"] == "priv_pc:app-d:thm6-kendall-sensitivity"]
    thm7 = cells[cells["claim_id"] == "priv_pc:app-d:thm7-conditional-kendall-sensitivity"]
    assert not thm6["holds"].any()  # 4/(n + 1) against 2/(n - 1)
    assert thm7["holds"].tolist() == [True, False, False]  # the theorem's constant holds at n = 10 only
    for n, detail in zip((10, 100, 1000), thm6["detail"]):
        assert f"{4 / (n + 1):.4g}" in detail  # the closed form of the pair, computed by dpcd.ci
        assert 4 / (n + 1) <= kendall_tau_sensitivity(n + 1) + 1e-12  # dpcd's bound covers the pair
    # dpcd's assumption-free bound covers the conditional pair too (one stratum, add one record)
    change = float(thm7["detail"].iloc[-1].split("= ")[1].split(" ")[0])
    assert change <= conditional_kendall_sensitivity(1001, 1) and change > 4.5 / math.sqrt(1000)
    claims = reporting.load_paper_values("priv_pc")
    claims = claims[claims["claim_id"].str.startswith("priv_pc:app-d")]
    rows = priv_pc_cells.qualitative_rows(claims, cells, line="computed pair").set_index("claim_id")
    assert (rows["verdict"] == "not reproduced").all() and (rows["tolerance"] == 1.0).all()  # a theorem: every pair
    with pytest.raises(ValueError, match="sizes"):
        priv_pc_cells.sensitivity_claims((2,))


def test_the_spearman_search_is_exact_and_the_theorems_are_not_refuted():
    """Thm. 8/9 (App. E): the search's closed form equals dpcd.ci's ρ on every neighbour of small data sets; the
    worst pairs stay below the bounds (not refuted); a broken bound (a tenth of Thm. 8's) is refuted by them."""
    from dpcd.ci.discrete import spearman_rho_test
    from dpcd_papers import reporting

    rng = np.random.default_rng(3)
    for n in (3, 7):
        base = rng.permutation(n)
        rho, after = priv_pc_cells.spearman_after_insertion(base)
        levels = np.array([n + 1, n + 1, 1])
        for r in range(n + 1):
            for s in range(n + 1):
                old, new = priv_pc_cells._with_record(base, r, s)
                assert after[r, s] == pytest.approx(spearman_rho_test(new, 0, 1, levels=levels).effect, abs=1e-12)
        assert rho == pytest.approx(spearman_rho_test(old, 0, 1, levels=levels).effect, abs=1e-12)
    cells = priv_pc_cells.spearman_sensitivity_claims((10, 100))
    assert len(cells) == 6 and cells["holds"].all()
    thm8 = cells[cells["claim_id"] == "priv_pc:app-e:thm8-spearman-sensitivity"]
    changes = [float(d.split("||Δρ|| = ")[1].split(" ")[0]) for d in thm8["detail"]]
    assert all(change > 3.0 / n for change, n in zip(changes, (10, 100)))  # the bound a tenth as large fails
    claims = reporting.load_paper_values("priv_pc")
    claims = claims[claims["claim_id"].str.startswith("priv_pc:app-e")]
    assert len(claims) == 2
    rows = reporting.not_refuted(priv_pc_cells.qualitative_rows(claims, cells, line="searched pair"), "priv_pc:app-")
    assert (rows["verdict"] == "not refuted").all()
    with pytest.raises(ValueError, match="sizes"):
        priv_pc_cells.spearman_sensitivity_claims((4,))
    with pytest.raises(ValueError, match="b_ranks"):
        priv_pc_cells.spearman_after_insertion(np.array([0, 0, 1]))


def test_sometimes_is_one_network_of_four():
    import pandas as pd

    from dpcd_papers import reporting

    timing = pd.DataFrame({"network": list("abcd"), "algorithm": "priv_pc", "cpu_seconds": 1.0})
    timing = pd.concat([timing, timing.assign(algorithm="svt_pc", cpu_seconds=[2.0, 0.5, 0.5, 0.5])])
    cells = priv_pc_cells.table2_claims(timing)
    claims = reporting.load_paper_values("priv_pc")
    claims = claims[claims["claim_id"] == "priv_pc:sec4.3:priv_pc-sometimes-faster-than-svt_pc"]
    row = priv_pc_cells.qualitative_rows(claims, cells, line="declared").iloc[0]
    assert row["ours"] == 0.25 and row["verdict"] == "reproduced"
    none = priv_pc_cells.table2_claims(timing.assign(cpu_seconds=1.0))
    assert priv_pc_cells.qualitative_rows(claims, none, line="declared").iloc[0]["verdict"] == "not reproduced"


def test_table_2_seconds_are_shown_not_judged():
    from dpcd_papers import reporting

    paper = reporting.load_paper_values("priv_pc")
    seconds = paper[paper["value"].notna()]
    assert len(seconds) == 16 and (seconds["metric"] == "seconds (not judged)").all()
    assert paper["claim_id"].is_unique


@pytest.mark.filterwarnings("ignore:overflow encountered in expm1")  # advanced composition at eps = 1e6
def test_run_cell_diagnostic_scores_against_pc_with_its_own_convention():
    row = priv_pc_cells.run_cell(network="asia", n=20_000, algorithm="priv_pc_keep_edge", epsilon=1e6, rng=0,
                                 sensitivity="reference")
    plain = priv_pc_cells.run_cell(network="asia", n=20_000, algorithm="priv_pc", epsilon=1e6, rng=0,
                                   sensitivity="reference")
    assert row["f1_pc"] == pytest.approx(1.0) and plain["f1_pc"] == pytest.approx(1.0)
    assert row["f1_pc_vs_true"] > plain["f1_pc_vs_true"]  # the NaN convention keeps either's edges
    with pytest.raises(ValueError, match="algorithm"):
        priv_pc_cells.run_cell(network="asia", n=1000, algorithm="priv_pc_nan", epsilon=1.0, rng=0)


def test_sub_sample_memo_follows_the_row_set_not_a_reused_address(asia, levels):
    # the memoised sub-sample tester is keyed by the row set itself: a new row set that happens to get a freed
    # one's address (CPython reuses them) must not be answered with the old rows' statistics
    codes = np.asarray(asia)
    query = KendallPValueQuery(codes, levels)
    rng = np.random.default_rng(8)
    for _ in range(200):
        rows = np.sort(rng.choice(len(codes), size=300, replace=False))
        expected = KendallPValueQuery(codes[rows], levels)(0, 1, (2,))
        assert query.on_rows(rows)(0, 1, (2,)) == expected
        del rows

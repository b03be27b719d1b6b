"""The compendium side of paper 000 (``dpcd_papers.em_pc``): claims, diagnostic lines, implied edges, comparison."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpcd.datasets import load_bnlearn, random_dag, sample_linear_gaussian
from dpcd.discovery.em_pc import em_pc
from dpcd.discovery.lapmech import lapmech, noisy_joint_table
from dpcd.discovery.pc import pc
from dpcd.discovery.tables import NoisyTableDecider, all_marginals
from dpcd.graphs import tpr_fpr_tdr
from dpcd_papers import em_pc as paper
from dpcd_papers import reporting


@pytest.fixture(scope="module")
def asia():
    """5 000 records of the bnlearn network asia (8 binary nodes)."""
    return load_bnlearn("asia", 5_000, rng=0)


@pytest.fixture(scope="module")
def paper_values():
    return reporting.load_paper_values("em_pc")


@pytest.fixture(scope="module")
def small_runs():
    """A two-setting grid of the categorical and numerical cells with 3 repetitions."""
    from dpcd_papers.experiments import run_grid

    categorical = run_grid(paper.run_cell, [{"p": 5, "sparseness": 0.2, "n": 5_000, "epsilons": [5], "max_order": 1},
                                            {"p": 10, "sparseness": 0.6, "n": 5_000, "epsilons": [5], "max_order": 1}],
                           repetitions=3, seed=1, n_jobs=1)
    numerical = run_grid(paper.run_numerical_cell, [{"p": 10, "sparseness": 0.4, "n": 1_000, "epsilons": [1],
                                                     "max_order": 1}], repetitions=3, seed=1, n_jobs=1)
    return categorical, numerical


# --------------------------------------------------------------------------- the paper's values


def test_paper_values_hold_one_row_per_claim_with_runs_and_floor(paper_values):
    assert paper_values["claim_id"].is_unique
    assert len(paper_values) == 150  # 210 printed table values minus 63 repeats of the same setting, plus Fig. 1
    assert set(paper_values["algorithm"]) == {"pc", "lapmech", "em_pc", "privpc_star"}
    tables = paper_values[paper_values["kind"] != "adult"]
    assert (tables["runs"] == 5).all() and tables["sd"].notna().all()
    assert (paper_values["floor"] == 0.0005).all() and paper_values["note"].str.contains("floor").all()
    assert "tolerance" not in paper_values.columns  # tolerances come from sd and runs
    # a number printed in Table III (epsilon=5) and Table V (n=10k) is one claim
    row = paper_values[paper_values["claim_id"] == "em_pc:cat:em_pc:eps=5,n=10000,p=10,s=0.2:tpr"].iloc[0]
    assert row["value"] == 0.873 and row["tables"] == "III V"


def test_paper_grid_splits_by_p():
    assert [c["p"] for c in paper.paper_grid("numerical", min_p=50)] == [50, 100]
    assert all(c["p"] <= 20 for c in paper.paper_grid("numerical", max_p=20))
    cells = paper.paper_grid("categorical")
    assert sum(len(c["epsilons"]) for c in cells) == 11  # the distinct (n, p, s, epsilon) of Tables III-VI
    with pytest.raises(ValueError, match="kind"):
        paper.paper_grid("mixed")


# --------------------------------------------------------------------------- implied edges


def test_implied_edges_recover_the_true_edge_count_of_a_real_run(asia):
    data, dag = asia.data, asia.dag
    noisy = lapmech(data, levels=asia.levels, epsilon_total=0.5, rng=3)  # adds false edges: FP > 0
    rates = tpr_fpr_tdr(noisy.cpdag, dag, convention="pcalg")
    assert rates["fpr"] > 0
    implied = paper.implied_edges(rates["tpr"], rates["fpr"], rates["tdr"], 8)
    assert implied == pytest.approx(dag.number_of_edges())


def test_implied_edges_are_nan_when_the_triple_does_not_determine_them():
    assert math.isnan(float(paper.implied_edges(1.0, 0.0, 1.0, 10)))  # no false positive: any P fits
    assert math.isnan(float(paper.implied_edges(0.0, 0.2, 0.0, 10)))
    with pytest.raises(ValueError, match="lie in"):
        paper.implied_edges(1.2, 0.1, 0.5, 10)
    with pytest.raises(ValueError, match="p must"):
        paper.implied_edges(0.5, 0.1, 0.5, 1)


def test_implied_edge_table_flags_the_numerical_tables(paper_values):
    table = paper.implied_edge_table(paper_values)
    pc_rows = table[table["algorithm"] == "pc"]

    def at(kind, p, s):
        return pc_rows[(pc_rows["kind"] == kind) & (pc_rows["p"] == p) & np.isclose(pc_rows["sparseness"], s)].iloc[0]

    assert at("numerical", 20, 0.4)["stated_edges"] == 76
    assert at("numerical", 20, 0.4)["implied_edges"] == pytest.approx(33.5, abs=0.5)
    assert at("numerical", 100, 0.4)["implied_edges"] < 0.1 * at("numerical", 100, 0.4)["stated_edges"]
    assert at("numerical", 20, 0.4)["fpr_if_stated"] > 0.9  # the printed TPR/TDR with 76 edges need FPR > 0.9
    assert at("categorical", 10, 0.2)["implied / stated"] == pytest.approx(1.0, abs=0.25)  # consistent


# --------------------------------------------------------------------------- diagnostic lines


def test_em_pc_without_budget_stop_spends_more_than_epsilon_and_reports_it(asia):
    result = paper.em_pc_without_budget_stop(asia.data, levels=asia.levels, epsilon_total=1.0, rng=2)
    faithful = em_pc(asia.data, levels=asia.levels, epsilon_total=1.0, rng=2)
    assert faithful.ledger.total("basic").epsilon <= 1.0 + 1e-9
    assert result.info["spent"] == pytest.approx(result.ledger.total("basic").epsilon)
    assert result.info["spent"] > 1.0 and result.info["rounds"] > faithful.info["rounds"]
    assert result.info["spent_ratio"] == pytest.approx(result.info["spent"])
    assert result.info["differentially_private"] is False


def test_em_pc_without_budget_stop_at_huge_epsilon_is_non_private_pc():
    dag_data = load_bnlearn("cancer", 20_000, rng=4)  # the bnlearn network shipped with pgmpy
    reference = pc(dag_data.data, ci_test="g2", alpha=0.01)
    result = paper.em_pc_without_budget_stop(dag_data.data, levels=dag_data.levels, epsilon_total=1e7, rng=0)
    assert result.skeleton == reference.skeleton
    assert result.info["spent"] == pytest.approx(result.ledger.total("basic").epsilon)


def test_lapmech_on_observed_cells_keeps_empty_cells_empty():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2, 2_000)
    data = pd.DataFrame({"A": a, "B": a, "C": rng.integers(0, 3, 2_000)})  # (A=0, B=1) and (A=1, B=0) never occur
    result = paper.lapmech_observed_cells(data, levels=[2, 2, 3], epsilon_total=0.1, rng=1)
    assert result.info["observed_cells"] == 6 and result.info["differentially_private"] is False
    cells, counts = np.unique(data.to_numpy(), axis=0, return_counts=True)
    decider = paper._ObservedCellsDecider(cells, counts + 0.5, [2, 2, 3], 0.01)
    marginal = decider.marginal(0, 1, ())
    assert marginal[0, 0, 1] == 0.0 and marginal[0, 1, 0] == 0.0  # exact zeros: which cells are empty is released
    full = noisy_joint_table(data.to_numpy(), [2, 2, 3], epsilon=0.1, rng=1)  # the DP table noises every cell
    assert (full != np.round(full)).all()


def test_lapmech_on_observed_cells_at_huge_epsilon_is_non_private_pc(asia):
    reference = pc(asia.data, ci_test="g2", alpha=0.01)
    result = paper.lapmech_observed_cells(asia.data, levels=asia.levels, epsilon_total=1e9, rng=0)
    faithful = lapmech(asia.data, levels=asia.levels, epsilon_total=1e9, rng=0)
    assert result.skeleton == faithful.skeleton
    assert len(result.skeleton ^ reference.skeleton) <= 1  # PC's adjusted degrees of freedom may differ on one edge


def test_privpc_star_as_published_uses_thm_2_and_matches_pc_at_huge_epsilon():
    sample = sample_linear_gaussian(random_dag(6, 0.4, 3), 5_000, 4)
    result = paper.privpc_star_as_published(sample.data, epsilon_total=1e9, rng=0)
    assert result.info["sensitivity"] == pytest.approx(6 * 7 / (2 * 4_999))
    assert result.skeleton == pc(sample.data, ci_test="fisherz", alpha=0.01).skeleton
    noisy = paper.privpc_star_as_published(sample.data, epsilon_total=0.01, rng=0)
    assert noisy.skeleton != result.skeleton


def test_diagnostic_lines_are_not_in_the_registry():
    from dpcd.registry import ALGORITHMS

    for line in ("em_pc_no_stop", "lapmech_observed", "privpc_star_paper", "em_pc_search"):
        assert line not in ALGORITHMS
        assert "(not DP)" in paper.LABELS[line] or "no proven guarantee" in paper.LABELS[line]


# --------------------------------------------------------------------------- LapMech's batched marginals


def test_all_marginals_equal_direct_sums():
    table = np.random.default_rng(0).random((3, 2, 4, 2, 3), dtype=np.float32)
    for size in (0, 2, 3):
        marginals = all_marginals(table, size)
        assert len(marginals) == math.comb(5, size)
        for axes, marginal in marginals.items():
            drop = tuple(a for a in range(5) if a not in axes)
            np.testing.assert_allclose(marginal, table.sum(axis=drop, dtype=np.float64), rtol=1e-12)
    with pytest.raises(ValueError, match="size"):
        all_marginals(table, 6)


def test_batched_marginals_give_the_same_tests(asia):
    table = noisy_joint_table(asia.data.to_numpy(), asia.levels, epsilon=1.0, rng=3)
    direct, batched = NoisyTableDecider(table, 0.01, batch_size=0), NoisyTableDecider(table, 0.01)
    for x, y, S in ((0, 1, ()), (2, 5, (1,)), (7, 3, (0, 6)), (4, 1, (2, 3, 5))):
        assert batched.p_value(x, y, S) == pytest.approx(direct.p_value(x, y, S), rel=1e-9, abs=1e-12)


# --------------------------------------------------------------------------- cells and claims


def test_run_cell_streams_do_not_depend_on_the_other_lines():
    alone = paper.run_cell(p=6, sparseness=0.3, n=3_000, epsilons=[3.0], rng=7, algorithms=("em_pc",), max_order=1)
    together = paper.run_cell(p=6, sparseness=0.3, n=3_000, epsilons=[3.0], rng=7, max_order=1)
    mine = [r for r in together if r["algorithm"] == "em_pc"][0]
    assert {k: alone[0][k] for k in ("tpr", "fpr", "tdr")} == {k: mine[k] for k in ("tpr", "fpr", "tdr")}
    assert {r["algorithm"] for r in together} == set(paper.CATEGORICAL_ALGORITHMS)
    assert [r for r in together if r["algorithm"] == "pc"][0]["epsilon"] != 3.0  # PC once, epsilon NaN
    infeasible = paper.run_cell(p=6, sparseness=0.3, n=500, epsilons=[3.0], rng=7, algorithms=("lapmech",),
                                max_cells=10)
    assert infeasible[0]["note"] == "infeasible" and math.isnan(infeasible[0]["tpr"])
    with pytest.raises(ValueError, match="unknown"):
        paper.run_cell(p=4, sparseness=0.3, n=100, epsilons=[1.0], rng=0, algorithms=("nope",))


def test_claim_values_average_the_declared_line_and_skip_missing_runs():
    claims = pd.DataFrame([
        {"claim_id": "a", "item": "pc", "kind": "categorical", "algorithm": "pc", "epsilon": np.nan, "n": 100,
         "p": 3, "sparseness": 0.5, "metric": "fpr"},
        {"claim_id": "b", "item": "lm", "kind": "categorical", "algorithm": "lapmech", "epsilon": 5.0, "n": 100,
         "p": 3, "sparseness": 0.5, "metric": "fpr"}])
    runs = pd.DataFrame({"algorithm": ["pc", "pc", "lapmech", "lapmech", "lapmech", "lapmech_observed"],
                         "epsilon": [np.nan, np.nan, 5.0, 5.0, 1.0, 5.0], "n": [100] * 6, "p": [3] * 6,
                         "sparseness": [0.5] * 6, "fpr": [0.0, 0.5, 0.2, np.nan, 0.9, 0.1]})
    ours = paper.claim_values(claims, runs, "pc").set_index("claim_id")
    assert ours.loc["a", "value"] == 0.25 and ours.loc["a", "runs"] == 2
    lap = paper.claim_values(claims, runs, "lapmech").set_index("claim_id")
    assert lap.loc["b", "value"] == 0.2 and lap.loc["b", "runs"] == 1 and math.isnan(lap.loc["b", "sd"])
    diagnostic = paper.claim_values(claims, runs, "lapmech", line="lapmech_observed").set_index("claim_id")
    assert diagnostic.loc["b", "value"] == 0.1


def test_build_comparison_judges_every_claim_once_with_the_declared_line(paper_values, small_runs, tmp_path):
    categorical, numerical = small_runs
    comparison = paper.build_comparison(paper_values, categorical, numerical, None)
    # + 4 claims without a number and Sec. VI-B's four claims on PrivPC*
    assert comparison["claim_id"].is_unique and len(comparison) == (len(paper_values) + 4 + len(paper.SEC6B_CLAIMS)
                                                                  + len(paper.TEXT_CLAIMS))
    assert set(comparison["line"]) <= {*paper.LINES.values(), "em_pc vs lapmech", "privpc_star vs pc", "em_pc vs pc"}
    decisions = comparison.set_index("claim_id").loc["em_pc:sec4:em_pc-few-decisions"]
    assert decisions["verdict"] != "not computed"  # the runs record EM-PC's rounds and PC's tests
    computed = comparison[comparison["verdict"] != "not computed"]
    assert set(computed["claim_id"].str.split(":").str[2]) >= {"pc", "lapmech", "em_pc", "privpc_star"}
    misses = comparison[comparison["verdict"].isin(["not reproduced", "not computed"])]
    assert misses["diagnosis"].str.len().gt(20).all()
    em = comparison[comparison["claim_id"].str.startswith("em_pc:cat:em_pc:") & (comparison["verdict"] != "not computed")]
    assert em["diagnostic"].isin([paper.LABELS["em_pc_no_stop"], paper.LABELS["em_pc_search"]]).all()
    assert em["diagnostic_value"].notna().all() and em["diagnostic_tolerance"].notna().all()
    # the second diagnostic is attached only to settings it explains (own spread, every claim of the setting)
    explained = reporting.explained(comparison)
    searched = em[em["diagnostic"] == paper.LABELS["em_pc_search"]]
    assert all(explained[comparison["item"] == item].any() for item in set(searched["item"]))
    # the diagnostic never decides: the verdict follows our line's value and the tolerance only
    judged = comparison[comparison["metric"] != reporting.QUALITATIVE_METRIC].dropna(subset=["ours"])
    close = (judged["ours"] - judged["paper_value"].astype(float)).abs() <= judged["tolerance"] + 1e-12
    assert (judged["verdict"].isin(["reproduced", "uninformative"]) == close).all()
    # a private line's row that non-private PC at the same setting passes too is uninformative, not reproduced
    private = judged[~judged["claim_id"].str.startswith("em_pc:cat:pc:") & ~judged["claim_id"].str.startswith(
        "em_pc:num:pc:")]
    assert (private["verdict"] != "uninformative").all() or private["note"].str.contains("non-private PC").any()
    assert (judged["tolerance"] >= 0.0005).all()
    # no reproduced row is also passed by the graph that ignores the data (empty: FPR 0, complete: TPR 1)
    reproduced = judged[judged["verdict"] == "reproduced"]
    paper_value = reproduced["paper_value"].astype(float)
    assert (paper_value[reproduced["metric"] == "fpr"] > reproduced.loc[reproduced["metric"] == "fpr", "tolerance"]).all()
    assert ((1 - paper_value[reproduced["metric"] == "tpr"])
            > reproduced.loc[reproduced["metric"] == "tpr", "tolerance"]).all()
    assert comparison["note"].str.contains("the constant [01]|a random graph").any()  # trivial graphs, constants
    reporting.save_comparison(comparison, tmp_path)
    assert len(reporting.read_comparison(tmp_path / "comparison.csv")) == len(comparison)


def test_a_diagnosis_does_not_call_an_uninformative_pc_row_a_miss(paper_values, small_runs):
    """PC rows that match the paper (reproduced or uninformative) never let a private row say the data differ."""
    categorical, numerical = small_runs
    comparison = paper.build_comparison(paper_values, categorical, numerical, None)
    assert paper.companion_contradictions(comparison) == []
    # the checker itself flags the sentence when the PC row is uninformative
    forged = comparison.copy()
    pc_rows = forged["claim_id"].str.startswith("em_pc:cat:pc:")
    forged.loc[pc_rows, "verdict"] = "uninformative"
    private = forged["claim_id"].str.startswith("em_pc:cat:lapmech:") & (forged["verdict"] != "not computed")
    forged.loc[private, "diagnosis"] = "the data differ: " + paper.PC_NOT_REPRODUCED
    blaming = forged["claim_id"].str.startswith("em_pc:cat:") & forged["diagnosis"].str.contains(
        paper.PC_NOT_REPRODUCED, regex=False)
    assert private.any() and paper.companion_contradictions(forged) == list(forged.loc[blaming, "claim_id"])


def test_tolerances_come_from_both_sides_runs(paper_values, small_runs):
    categorical, numerical = small_runs
    comparison = paper.build_comparison(paper_values, categorical, numerical, None).set_index("claim_id")
    claim = "em_pc:cat:pc:n=5000,p=10,s=0.6:fpr"  # paper 0.464 +- 0.066 over 5 runs
    ours = paper.claim_values(paper_values[paper_values["claim_id"] == claim], categorical, "pc").iloc[0]
    expected = reporting.sampling_tolerance(paper_sd=0.066, paper_runs=5, ours_sd=ours["sd"], ours_runs=ours["runs"],
                                            floor=0.0005)
    assert comparison.loc[claim, "tolerance"] == pytest.approx(expected)
    assert ours["runs"] == 3


def test_qualitative_claims_count_cells(small_runs):
    categorical, numerical = small_runs
    holds, cells = paper.em_pc_beats_lapmech(paper.summarise(categorical))
    assert cells == 1 and holds in (0, 1)  # p = 5 is left out
    holds, cells = paper.privpc_star_matches_pc(paper.summarise(numerical))
    assert cells == 3 and 0 <= holds <= 3  # epsilon = 1, n = 1000: TPR/FPR/TDR


def test_feasibility_budget_and_runtime_tables(small_runs):
    categorical, _ = small_runs
    feasibility = paper.lapmech_feasibility(categorical, max_cells=1_000)
    p5 = feasibility[feasibility["p"] == 5].iloc[0]
    assert p5["draws"] == 3 and p5["largest"] <= 5 ** 5 and p5["gib"] == p5["largest"] * 4 / 2 ** 30
    budget = paper.no_stop_budget(categorical)
    assert (budget["em_pc"] <= budget["epsilon"] + 1e-9).all()
    assert (budget["ratio"] == budget["em_pc_no_stop"] / budget["epsilon"]).all()
    runtime = paper.runtime_table(categorical)
    assert runtime.iloc[0]["lapmech / em_pc"] == pytest.approx(111 / 9)


def test_plot_tables_refuses_crowded_panels(paper_values, small_runs):
    import matplotlib.pyplot as plt

    categorical, _ = small_runs
    summary = paper.summarise(categorical)
    fig = paper.plot_tables(summary, paper_values, ["IV"], ["pc", "lapmech", "em_pc"], paper_columns=["em_pc"])
    assert len(fig.axes) == 3
    plt.close(fig)
    with pytest.raises(ValueError, match="at most"):
        paper.plot_tables(summary, paper_values, ["IV"], list(paper.CATEGORICAL_ALGORITHMS[:5]),
                          paper_columns=["pc"])


@pytest.mark.slow
def test_adult_case_study_repeats_each_line():
    case = paper.adult_case_study(epsilon=10.0, rng=0, max_rows=2_000, max_order=1, repetitions=2)
    runs = case["runs"]
    assert list(runs.groupby("algorithm").size()) == [2, 2]
    assert (runs.loc[runs["algorithm"] == "em_pc", "spent"] <= 10.0 + 1e-9).all()
    summary = paper.adult_summary(case)
    assert set(summary["metric"]) == {"tpr", "fpr", "tdr", "edges", "spent"}



def test_lapmech_claims_say_how_many_draws_fit(paper_values):
    from dpcd_papers.experiments import run_grid

    categorical = run_grid(paper.run_cell, [{"p": 10, "sparseness": 0.6, "n": 5_000, "epsilons": [5], "max_order": 1,
                                             "max_cells": 200_000, "algorithms": ("pc", "lapmech")}],
                           repetitions=4, seed=2, n_jobs=1)
    lap = categorical[categorical["algorithm"] == "lapmech"]
    skipped = int((lap["note"] == "infeasible").sum())
    assert 0 < skipped < 4
    assert (lap.loc[lap["note"] == "infeasible", "cells"] > 200_000).all()
    comparison = paper.build_comparison(paper_values, categorical, categorical.iloc[:0], None).set_index("claim_id")
    row = comparison.loc["em_pc:cat:lapmech:eps=5,n=5000,p=10,s=0.6:tdr"]
    assert f"LapMech ran on {4 - skipped} of 4 draws" in row["note"]


def test_sec6b_claims_compare_privpc_star_with_pc_at_their_settings():
    import pandas as pd

    rows = []
    for claim_id, (_, _, settings, metrics, relation, _) in paper.SEC6B_CLAIMS.items():
        for setting in settings:
            for metric in metrics:
                pc_mean, private_mean = 0.8, (0.8 if relation == "same" else (0.9 if metric == "fpr" else 0.4))
                for algorithm, mean, epsilon in (("pc", pc_mean, -1.0), ("privpc_star", private_mean,
                                                                           setting["epsilon"])):
                    rows.append({"algorithm": algorithm, "n": setting["n"], "p": setting["p"],
                                 "sparseness": setting["sparseness"], "epsilon": epsilon, "metric": metric,
                                 "mean": mean, "sd": 0.02, "runs": 5})
    summary = pd.DataFrame(rows).drop_duplicates(subset=["algorithm", "n", "p", "sparseness", "epsilon", "metric"])
    for claim_id, (_, _, settings, metrics, relation, _) in paper.SEC6B_CLAIMS.items():
        holds, cells = paper.privpc_star_vs_pc(summary, settings, metrics, relation)
        assert cells == len(settings) * len(metrics) and holds == cells, claim_id
        opposite = "same" if relation == "worse" else "worse"
        assert paper.privpc_star_vs_pc(summary, settings, metrics, opposite)[0] == 0, claim_id
    assert paper.privpc_star_vs_pc(summary.iloc[:0], settings, metrics, "same") == (0, 0)
    with pytest.raises(ValueError, match="relation"):
        paper.privpc_star_vs_pc(summary, settings, metrics, "better")


def test_lapmech_tests_reject_true_independence_when_the_table_dwarfs_the_rows():
    """The experiment behind LapMech's near-complete graphs: on independent data G² over its noisy marginals is
    calibrated only when 2K/(nε²) is small (p = 5), and rejects far above α at the paper's p = 10 settings."""
    wide = paper.lapmech_null_cell(p=10, n=1_000, epsilon=1.0, rng=0, repetitions=20)
    assert wide["inflation"] > 50 and wide["type_I_order_0"] >= 0.8 and wide["type_I_order_1"] >= 0.8
    small = paper.lapmech_null_cell(p=5, n=5_000, epsilon=10.0, rng=0, repetitions=20)
    assert small["inflation"] < 1.05 and small["type_I_order_0"] <= 0.1
    null = pd.DataFrame([{"p": 10, "n": 1_000, "epsilon": 1.0, **wide}])
    text = paper._lapmech_null_text(null, pd.Series({"p": 10, "n": 1_000, "epsilon": 1.0}))
    assert "reject true independence" in text and f"{wide['type_I_order_0']:.0%}" in text


def test_the_data_are_blamed_only_where_pc_misses_at_least_as_much_the_same_way(paper_values, small_runs):
    """A private row says 'the data differ' only where non-private PC's own miss at its setting (ours − paper, same
    metric) is at least the row's and of its sign; elsewhere PC's miss is named with its share and the line's own
    cause follows."""
    categorical, numerical = small_runs
    comparison = paper.build_comparison(paper_values, categorical, numerical, None)
    values = comparison.set_index("claim_id")
    checked = 0
    for _, row in comparison.iterrows():
        parts = str(row["claim_id"]).split(":")
        if len(parts) != 5 or parts[1] not in ("cat", "num") or parts[2] == "pc" or row["verdict"] != "not reproduced":
            continue
        setting = ",".join(item for item in parts[3].split(",") if not item.startswith("eps="))
        pc = ":".join([parts[0], parts[1], "pc", setting, parts[4]])
        if pc not in values.index or values.loc[pc, "verdict"] != "not reproduced":
            continue
        pc_gap = values.loc[pc, "ours"] - values.loc[pc, "paper_value"]
        line_gap = row["ours"] - row["paper_value"]
        blames = str(row["diagnosis"]).startswith("the data differ")
        assert blames == (pc_gap * line_gap > 0 and abs(pc_gap) >= abs(line_gap)), (row["claim_id"], row["diagnosis"])
        checked += 1
    assert checked > 0


def test_the_lapmech_texts_quote_the_profiles_bound_and_place_the_null_draw_in_the_settings_range(paper_values):
    runs = pd.DataFrame({"algorithm": ["lapmech"] * 2, "tpr": [1.0, 1.0], "n": [1_000] * 2, "p": [10] * 2,
                         "sparseness": [0.2] * 2, "epsilon": [1.0] * 2, "cells": [100_000, 200_000]})
    row = pd.Series({"p": 10, "n": 1_000, "epsilon": 1.0, "sparseness": 0.2})
    for cells, where in [(150_000, "one such shape"), (300_000, "a larger shape"), (50_000, "a smaller shape")]:
        null = pd.DataFrame([{"p": 10, "n": 1_000, "epsilon": 1.0, "cells": cells, "inflation": 2.0,
                              "type_I_order_0": 0.9, "type_I_order_1": 0.8}])
        assert f"on independent data of {where} ({cells:,} cells" in paper._lapmech_null_text(null, row, runs)
    comparison = pd.DataFrame({"claim_id": [], "verdict": [], "ours": [], "paper_value": []})
    context = paper._context(paper_values, comparison, runs.assign(note=""), runs.iloc[:0], None, 123_456)
    assert (context["feasibility"]["max_cells"] == 123_456).all()  # the profile's bound, not the module default

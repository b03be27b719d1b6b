"""The curate notebook's diagnostic (the paper's Eq. 16 sensitivity) and the rules that judge its claims."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from dpcd.ci.discrete import contingency_table, kendall_tau_test, stratified_kendall
from dpcd.datasets import load_bnlearn
from dpcd.registry import ALGORITHMS, resolve_algorithm
from dpcd_papers import curate as paper
from dpcd_papers import reporting


def eq16_as_printed(n: int, n_i: int) -> float:
    """Eq. 16 evaluated term by term in exact rational arithmetic (the two weights, their difference, the factors)."""
    first = Fraction(9 * n_i * (n_i + 1), 2 * (2 * (n_i + 1) + 5))
    second = Fraction(9 * n_i ** 2, 2 * (2 * n_i + 5))
    return 2 / math.sqrt(n * math.pi) * float(abs(first) - abs(second)) / (n_i - 1)


@pytest.mark.parametrize("n,n_i", [(100_000, 100_000), (20_000, 20_000), (20_000, 250), (5_000, 7)])
def test_eq16_sensitivity_is_the_printed_formula(n, n_i):
    assert paper.eq16_sensitivity(n, n_i) == pytest.approx(eq16_as_printed(n, n_i), rel=1e-12)


def test_eq16_is_about_two_in_a_trillion_at_the_papers_n():
    assert paper.eq16_sensitivity(100_000) == pytest.approx(2.007e-12, rel=1e-3)
    with pytest.raises(ValueError, match="n"):
        paper.eq16_sensitivity(1)


def test_local_sensitivity_equals_replacing_records_in_the_data():
    """Every single-record replacement of the two tested columns, done on the data, against the table search."""
    sample = load_bnlearn("asia", 400, rng=3)
    codes = np.asfortranarray(sample.data.to_numpy())
    levels = np.asarray(sample.levels)
    x, y = 1, 4  # tub, lung: two binary variables
    table = contingency_table(codes, x, y, (), levels)
    base = kendall_tau_test(codes, x, y, levels=levels).p_value
    largest = 0.0
    seen = set()
    for row in range(codes.shape[0]):
        cell = (codes[row, x], codes[row, y])
        if cell in seen:
            continue
        seen.add(cell)
        for a in range(levels[x]):
            for b in range(levels[y]):
                changed = codes.copy(order="F")
                changed[row, x], changed[row, y] = a, b
                largest = max(largest, abs(kendall_tau_test(changed, x, y, levels=levels).p_value - base))
    assert paper.local_pvalue_sensitivity(table) == pytest.approx(largest, rel=1e-12, abs=1e-15)
    assert largest > 0


def test_eq16_is_exceeded_by_a_real_network_and_the_proven_bound_is_not():
    sample = load_bnlearn("asia", 20_000, rng=0)
    check = paper.sensitivity_check(sample.data, sample.levels)
    assert len(check) == 28
    assert (check["local_sensitivity"] <= check["proven"]).all()  # the bound the DP line uses holds here
    assert check["local_sensitivity"].max() > 1e6 * check["eq16"].iloc[0]  # Eq. 16 is off by > 10^6


def test_local_sensitivity_rejects_bad_tables():
    with pytest.raises(ValueError, match="table"):
        paper.local_pvalue_sensitivity(np.ones((2, 2)))
    with pytest.raises(ValueError, match="table"):
        paper.local_pvalue_sensitivity(-np.ones((1, 2, 2), dtype=int))
    assert paper.local_pvalue_sensitivity(np.array([[[5, 0], [0, 5]]])) == pytest.approx(
        max(abs(stratified_kendall(t).p_value - stratified_kendall(np.array([[[5, 0], [0, 5]]])).p_value)
            for t in (np.array([[[4, 1], [0, 5]]]), np.array([[[4, 0], [1, 5]]]), np.array([[[4, 0], [0, 6]]]),
                      np.array([[[6, 0], [0, 4]]]), np.array([[[5, 1], [0, 4]]]), np.array([[[5, 0], [1, 4]]]))))


def test_the_diagnostic_is_never_a_library_release():
    assert "curate_eq16" not in ALGORITHMS
    for name in ("curate_eq16", paper.LABELS["curate_eq16"]):
        with pytest.raises(ValueError, match="algorithm must be"):
            resolve_algorithm(name)
    assert "(not DP)" in paper.LABELS["curate_eq16"]


def test_the_diagnostic_run_is_pc_and_the_dp_run_is_not():
    """With Eq. 16's Δ the noise vanishes: CURATE is PC up to the margin coin; with the proven Δ it is not."""
    runs = {alg: [paper.run_cell(network="asia", n=20_000, algorithm=alg, epsilon=1.0, rng=seed) for seed in range(4)]
            for alg in ("curate_eq16", "curate")}
    assert all(r["differentially_private"] is False for r in runs["curate_eq16"])
    assert all(r["differentially_private"] is True for r in runs["curate"])
    diagnostic = np.mean([r["f1_vs_pc"] for r in runs["curate_eq16"]])
    private = np.mean([r["f1_vs_pc"] for r in runs["curate"]])
    assert diagnostic >= 0.9  # the same skeleton as PC but for p-values inside the margin band (coin flips)
    assert private < diagnostic - 0.5
    with pytest.raises(ValueError, match="algorithm must be"):
        paper.run_cell(network="asia", n=1000, algorithm="curate_paper", epsilon=1.0, rng=0)


def points_frame() -> pd.DataFrame:
    rows = []

    def add(net, alg, eps, f1, leak, tests=10.0, secs=1.0):
        rows.append({"network": net, "algorithm": alg, "epsilon": eps, "f1_true": f1, "eps_tight": leak,
                     "n_tests": tests, "seconds": secs})

    add("cancer", "pc", 0.0, 0.9, 0.0, tests=20.0, secs=0.1)
    for eps, f1_c, f1_d, f1_sb in ((0.1, 0.1, 0.9, 0.3), (1.0, 0.2, 0.9, 0.5), (10.0, 0.3, 0.9, 0.6)):
        add("cancer", "curate", eps, f1_c, eps * 0.8, tests=5.0, secs=0.5)
        add("cancer", "curate_eq16", eps, f1_d, eps * 0.8, tests=20.0, secs=0.6)
        add("cancer", "curate_sb", eps, f1_sb, eps * 0.1)
        add("cancer", "noleaks", eps, f1_sb - 0.1, eps * 0.1)
        add("cancer", "em_pc", eps, 0.4, eps * 0.7, tests=30.0, secs=2.0)
        add("cancer", "priv_pc", eps, 0.8, eps * 50, tests=40.0, secs=0.2)
    add("sachs", "pc", 0.0, 0.6, 0.0, tests=50.0)
    for eps, f1 in ((0.1, 0.0), (1.0, 0.1), (10.0, 0.3)):
        add("sachs", "curate", eps, f1, eps)
        add("sachs", "curate_eq16", eps, 0.6, eps)
        add("sachs", "curate_sb", eps, f1 / 2, eps / 10)
    return pd.DataFrame(rows)


def iterations_frame() -> pd.DataFrame:
    rows = [{"epsilon_total": 1.0, "epsilon0": e0, "schedule": s, "lemma2": v}
            for e0, vals in ((0.01, (10, 5, 50)), (0.05, (8, 4, 3)), (0.5, (2, 1, 9)))
            for s, v in zip(("additive", "exponential", "multiplicative"), vals)]
    return pd.DataFrame(rows)


def test_claim_rules_count_their_cells():
    check = pd.DataFrame({"network": ["cancer", "cancer", "sachs"], "local_sensitivity": [1e-2, 1e-14, 1e-15],
                          "eq16": [1e-12] * 3})
    claims = {c["claim_id"]: (c["holds"], c["cells"]) for c in
              paper.judge_claims(points_frame(), iterations_frame(), check)}
    # cancer, three ε: EM-PC (leaks less) beats CURATE at ε = 0.1 and 1 (0.4 > 0.3, 0.5), not at 10 (0.6 ≥ 0.4)
    assert claims["curate:fig4:curate-outperforms-dp-algorithms"] == (1, 3)
    assert claims["curate:sec4:constraint-based-better-less-leakage"] == (0, 3)
    # score-based leaks < 1 at ε = 0.1 and 1 only; at 0.1 EM-PC (0.4, leaking 0.07) beats it, at 1 it wins (0.5)
    assert claims["curate:table4:score-based-best-below-1"] == (1, 2)
    assert claims["curate:sec4:sachs-child-best-above-1"] == (2, 2)
    assert claims["curate:table5:ci-tests-close-to-pc"] == (0, 2)  # 5 tests against 20, 10 against 50
    assert claims["curate:table5:others-run-more-tests"] == (2, 2)
    assert claims["curate:sec4:score-based-beats-noleaks"] == (3, 3)
    assert claims["curate:table7:faster-than-priv-pc"] == (0, 1)
    assert claims["curate:table7:faster-than-em-pc"] == (1, 1)
    # cancer: both score-based lines (1 s) slower than CURATE (0.5 s); sachs: 1 s against 1 s is not slower
    assert claims["curate:sec4:score-based-slower"] == (2, 3)
    assert claims["curate:table7:score-based-time-similar-to-noleaks"] == (1, 1)  # sachs has no NOLEAKS point
    assert claims["curate:fig3:multiplicative-most-iterations"] == (1, 2)  # only ε₀ ≤ ε_Total/10 counts
    assert claims["curate:app-vi-b:eq16-bounds-sensitivity"] == (1, 2)
    # cancer: at ε = 0.1 EM-PC reaches score-based CURATE's 0.3 leaking 0.07 (< 10 × 0.01); at 1 only Priv-PC
    # reaches 0.5, leaking at least 5 (≥ 10 × 0.1); at 10 Priv-PC's 5 is under 10 × 1; sachs has no rival (holds)
    assert claims["curate:sec1:leakage-orders-of-magnitude-smaller"] == (4, 6)


def test_the_diagnostic_replaces_only_the_constraint_based_line():
    check = pd.DataFrame({"network": ["cancer"], "local_sensitivity": [1e-2], "eq16": [1e-12]})
    dp = {c["claim_id"]: c for c in paper.judge_claims(points_frame(), iterations_frame(), check)}
    diag = {c["claim_id"]: c for c in paper.judge_claims(points_frame(), iterations_frame(), check,
                                                          constraint_line="curate_eq16")}
    assert (diag["curate:sec4:constraint-based-better-less-leakage"]["holds"],
            diag["curate:sec4:constraint-based-better-less-leakage"]["cells"]) == (3, 3)
    assert diag["curate:table5:ci-tests-close-to-pc"]["holds"] == 1
    assert diag["curate:sec4:sachs-child-best-above-1"]["holds"] == 1  # flat F1: only the score-based form rises
    for unchanged in ("curate:sec4:score-based-beats-noleaks", "curate:fig3:multiplicative-most-iterations"):
        assert (dp[unchanged]["holds"], dp[unchanged]["cells"]) == (diag[unchanged]["holds"], diag[unchanged]["cells"])
    with pytest.raises(ValueError, match="constraint_line"):
        paper.judge_claims(points_frame(), iterations_frame(), check, constraint_line="em_pc")
    with pytest.raises(ValueError, match="points"):
        paper.judge_claims(points_frame().drop(columns=["seconds"]), iterations_frame(), check)


def test_random_graph_f1_is_the_mean_of_random_graphs():
    import networkx as nx

    from dpcd.graphs import cpdag_pair_prf

    truth = nx.DiGraph([(0, 1), (1, 2), (2, 1), (3, 4)])
    truth.add_node(5)
    pairs = [(a, b) for a in range(6) for b in range(6) if a != b]
    rng = np.random.default_rng(0)
    for edges in (0, 3, 12, 30):
        draws = []
        for _ in range(3000):
            graph = nx.DiGraph([pairs[i] for i in rng.choice(len(pairs), edges, replace=False)])
            graph.add_nodes_from(range(6))
            draws.append(cpdag_pair_prf(graph, truth)["f1"] if edges else 0.0)
        assert paper.random_graph_f1(edges, truth) == pytest.approx(np.mean(draws), abs=0.01)
    with pytest.raises(ValueError, match="edges"):
        paper.random_graph_f1(-1, truth)


def test_a_claim_a_random_graph_with_as_many_edges_also_passes_is_uninformative():
    check = pd.DataFrame({"network": ["cancer"], "local_sensitivity": [1e-2], "eq16": [1e-12]})
    points = points_frame()
    rows = pd.DataFrame([{"claim_id": c["claim_id"], "verdict": "reproduced" if c["cells"] and
                          c["holds"] / c["cells"] >= 0.8 else "not reproduced", "tolerance": 0.8, "note": "n"}
                         for c in paper.judge_claims(points, iterations_frame(), check)])
    assert rows.set_index("claim_id").loc["curate:sec4:sachs-child-best-above-1", "verdict"] == "reproduced"
    # F1 that only follows the edge count, rising with ε on sachs as the lines' F1 does: the claim says nothing
    edge_count = paper.judge_claims(points.assign(f1_true=points["epsilon"]), iterations_frame(), check)
    marked = reporting.mark_uninformative_shares(rows, paper.f1_baseline_shares(edge_count),
                                                 "a random graph").set_index("claim_id")
    assert marked.loc["curate:sec4:sachs-child-best-above-1", "verdict"] == "uninformative"
    assert "random graph" in marked.loc["curate:sec4:sachs-child-best-above-1", "note"]
    assert marked.loc["curate:table7:faster-than-em-pc", "verdict"] == "reproduced"  # not an F1 claim
    # a flat baseline does not pass it: the verdict stands
    flat = paper.judge_claims(points.assign(f1_true=0.2), iterations_frame(), check)
    kept = reporting.mark_uninformative_shares(rows, paper.f1_baseline_shares(flat),
                                               "a random graph").set_index("claim_id")
    assert kept.loc["curate:sec4:sachs-child-best-above-1", "verdict"] == "reproduced"


def test_every_claim_of_the_paper_values_has_a_rule():
    from dpcd_papers import reporting

    values = reporting.load_paper_values("curate")
    ids = set(values.loc[values["kind"] == "claim", "claim_id"])
    check = pd.DataFrame({"network": ["cancer"], "local_sensitivity": [1.0], "eq16": [1.0]})
    assert ids == {c["claim_id"] for c in paper.judge_claims(points_frame(), iterations_frame(), check)}
    assert values["claim_id"].dropna().is_unique

"""The rules that judge private ANM's Table 2 and qualitative claims (dpcd_papers.private_anm)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpcd_papers import private_anm, reporting
from dpcd_papers.realdata import load_tuebingen_pairs


@pytest.fixture(scope="module")
def paper_pairs():
    return private_anm.paper_table2(reporting.load_paper_values("private_anm"))


def test_the_transcription_has_every_cell_of_table_2(paper_pairs):
    assert len(paper_pairs) == 10 * 4 * 4 and (paper_pairs["runs"] == 10).all()
    assert set(paper_pairs["epsilon"]) == {math.inf, 0.1, 1.0, 2.0}
    cell = paper_pairs[(paper_pairs["pair"].astype(str) == "4031") & (paper_pairs["score"] == "hsic")]
    assert cell.set_index("epsilon")["value"].to_dict() == {math.inf: 1.0, 0.1: 0.68, 1.0: 0.85, 2.0: 0.92}
    # a non-private accuracy over 10 splits is k/10
    accuracy = paper_pairs.loc[np.isinf(paper_pairs["epsilon"]), "value"]
    assert np.allclose(accuracy * 10, np.round(accuracy * 10))


def test_summary_of_the_paper_table(paper_pairs):
    summary = private_anm.table2_summary(paper_pairs).set_index(["score", "epsilon"])
    assert summary.loc[("hsic", math.inf), "value"] == pytest.approx(0.68)
    assert summary.loc[("hsic", math.inf), "runs"] == 10
    assert summary.loc[("kendall", 1.0), "value"] == pytest.approx(1.0)
    assert summary.loc[("kendall", 1.0), "runs"] == 6  # 597, 2209, 2132, 1656, 3484, 1627
    assert summary.loc[("spearman", 0.1), "value"] == pytest.approx(np.mean([0.82, 0.6, 0.92, 0.8, 0.99, 0.97]))
    assert summary.loc[("iqr", 0.1), "runs"] == 7


def test_retention_counts_only_pairs_decided_the_same_way_in_every_split():
    pairs = pd.DataFrame({"pair": list("aabbcc"), "score": ["kendall"] * 6, "epsilon": [math.inf, 0.1] * 3,
                          "value": [1.0, 0.7, 0.0, 0.1, 0.9, 0.9]})
    summary = private_anm.table2_summary(pairs, epsilons=[0.1]).set_index("metric")
    assert summary.loc[private_anm.RETENTION, "value"] == pytest.approx((0.7 + 0.9) / 2)
    assert summary.loc[private_anm.RETENTION, "runs"] == 2 and summary.loc[private_anm.RETENTION, "pairs"] == "a, b"
    assert summary.loc[private_anm.ACCURACY, "value"] == pytest.approx(1.9 / 3)
    with pytest.raises(ValueError, match="per_pair"):
        private_anm.table2_summary(pairs.drop(columns=["value"]))


def test_claims_carry_ids_sd_runs_and_the_floor():
    claims = private_anm.table2_claims(reporting.load_paper_values("private_anm"))
    assert len(claims) == 16 and claims["claim_id"].is_unique
    assert (claims["floor"] == private_anm.TABLE2_FLOOR).all()
    assert set(claims["metric"]) == {private_anm.ACCURACY, private_anm.RETENTION}
    assert claims["sd"].notna().all() and (claims["runs"] >= 6).all()


def test_our_results_go_through_the_same_summary():
    """Two real Tübingen pairs, tiny sub-samples: our per-pair means feed the same function as the paper's."""
    ids = private_anm.select_largest_pairs(load_tuebingen_pairs(), k=2)
    rows = []
    for split in range(3):
        for pid in ids:
            for row in private_anm.test_set_cell(pid, False, (0.1, 1.0, 2.0), n_draws=200, max_samples=200,
                                                 rng=np.random.default_rng([split, int(pid[4:])])):
                rows.append({**row, "pair_id": pid, "repetition": split})
    results = pd.DataFrame(rows)
    pairs = private_anm.per_pair_means(results)
    assert (pairs["runs"] == 3).all() and set(pairs["pair"]) == set(ids)
    summary = private_anm.table2_summary(pairs)
    assert len(summary) == 16
    acc = summary[summary["metric"] == private_anm.ACCURACY].set_index("score")["value"]
    direct = results[np.isinf(results["epsilon"])].groupby("score")["p_correct"].mean()
    assert np.allclose(acc.sort_index(), direct.sort_index())


def test_complementary_rule_on_the_papers_own_table(paper_pairs):
    held, cells, ok, bad = private_anm.complementary_cells(paper_pairs[np.isinf(paper_pairs["epsilon"])])
    assert (held, cells) == (5, 6) and bad == ["597"]
    with pytest.raises(ValueError, match="score"):
        private_anm.complementary_cells(pd.DataFrame({"pair": ["a"], "score": ["hsic"], "value": [1.0]}))


def test_rises_with_epsilon_rule(paper_pairs):
    assert private_anm.rises_with_epsilon_cells(paper_pairs) == (21, 21)
    flat = pd.DataFrame({"pair": ["a"] * 3, "score": ["iqr"] * 3, "epsilon": [math.inf, 0.1, 2.0],
                         "value": [1.0, 0.5, 0.505]})
    assert private_anm.rises_with_epsilon_cells(flat) == (0, 1)


def test_closed_form_hump_and_best_lambda_rules():
    results = pd.DataFrame({"score": ["hsic", "hsic", "iqr", "kendall"], "epsilon": [1.0, 1.0, 1.0, math.inf],
                            "p_correct": [0.70, 0.60, 0.0, 1.0], "closed_form": [0.71, 0.70, 1.0, 1.0]})
    assert private_anm.closed_form_cells(results, 2000) == (1, 2)
    curves = pd.DataFrame({"bound": ["paper"] * 3 + ["direct"] * 3, "epsilon": [1.0] * 6,
                           "lam": [0.001, 0.1, 1.0] * 2, "p_correct": [0.5, 0.9, 0.6, 0.5, 0.5, 0.5]})
    assert private_anm.hump_cells(curves, bound="paper") == (1, 1)
    assert private_anm.hump_cells(curves, bound="direct") == (0, 1)
    assert private_anm.best_lambda_cells(curves, bound="paper") == (1, 1)
    assert private_anm.best_lambda_cells(curves, bound="direct") == (0, 1)


def test_fig2_rules_read_theorem_5s_range_and_the_good_lambda_range():
    curves = pd.DataFrame({"bound": "paper", "epsilon": [1.0] * 4, "lam": [0.001, 0.1, 1.0, 10.0],
                           "p_correct": [0.5, 0.6, 0.7, 0.95]})
    # λ = 10 is outside Thm. 5: the best λ ≤ 1 is the end of the range, so no hump and no high quality
    assert private_anm.hump_cells(curves, bound="paper") == (0, 1)
    assert private_anm.best_lambda_cells(curves, bound="paper") == (0, 1)
    assert private_anm.best_lambda_cells(curves, bound="paper", max_lam=100.0) == (1, 1)
    grows = pd.DataFrame({"bound": "paper", "epsilon": [0.1] * 3 + [1.0] * 3 + [2.0] * 3,
                          "lam": [0.01, 0.1, 1.0] * 3, "p_correct": [0.5, 0.5, 0.5, 0.5, 0.8, 0.5, 0.8, 0.8, 0.5]})
    assert private_anm.good_lambda_range_cells(grows, bound="paper") == (2, 2)
    coin = grows.assign(p_correct=0.5)  # an empty range cannot grow
    assert private_anm.good_lambda_range_cells(coin, bound="paper") == (0, 2)
    shrinks = grows.assign(p_correct=[0.8, 0.8, 0.5, 0.8, 0.5, 0.5, 0.8, 0.5, 0.5])
    assert private_anm.good_lambda_range_cells(shrinks, bound="paper") == (1, 2)

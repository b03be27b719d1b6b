"""Marginal-PC: its Gaussian-DP accounting, the sensitivity of its tables, its noise-aware tests, and its runs."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import dpcd
from dpcd.ci.noisy import noisy_table_test, pairwise_screen_test
from dpcd.datasets import load_bnlearn
from dpcd.discovery.marginal_pc import (
    DEFAULT_NOISE_RATIO,
    MARGINAL_PC,
    ORDER0_SHARE,
    MarginalTablesDecider,
    _order_mus,
    marginal_pc,
    order_weights,
    worst_case,
)
from dpcd.graphs import dag_to_cpdag, skeleton_prf
from dpcd.privacy import PrivacyLedger
from dpcd.privacy.gdp import compose_gdp, gdp_delta, gdp_epsilon, gdp_mu
from dpcd.privacy.interactions import interaction_sensitivity
from dpcd.privacy.mechanisms import analytic_gaussian_delta
from dpcd.registry import calibrate

# --------------------------------------------------------------------------- Gaussian DP


@pytest.mark.parametrize("mu", [0.05, 0.2367, 1.0, 3.0])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
def test_gdp_curve_is_the_exact_gaussian_curve(mu, epsilon):
    # μ-GDP = the Gaussian mechanism with σ/Δ = 1/μ, whose exact δ(ε) Balle & Wang give independently
    assert gdp_delta(epsilon, mu) == pytest.approx(analytic_gaussian_delta(1.0 / mu, sensitivity=1.0,
                                                                           epsilon=epsilon), rel=1e-6, abs=1e-15)


def test_gdp_inverses_and_composition():
    for epsilon, delta in [(0.3, 1e-6), (1.0, 1e-6), (10.0, 1e-9)]:
        mu = gdp_mu(epsilon, delta)
        assert gdp_delta(epsilon, mu) <= delta and gdp_delta(epsilon, mu * (1 + 1e-9)) > delta * (1 - 1e-6)
        assert gdp_epsilon(mu, delta) == pytest.approx(epsilon, rel=1e-9)
    assert compose_gdp(*([0.1] * 100)) == pytest.approx(1.0)
    weights = order_weights(3)
    assert weights.sum() == pytest.approx(1.0) and weights[0] == ORDER0_SHARE == 0.5
    mu = gdp_mu(1.0, 1e-6)
    assert compose_gdp(*(mu * np.sqrt(weights))) == pytest.approx(mu)  # the orders compose back to the total


# --------------------------------------------------------------------------- sensitivity of the released tables


def _tables(codes: np.ndarray, levels: int, sets) -> np.ndarray:
    out = []
    for columns in sets:
        flat = np.zeros(len(codes), dtype=np.int64)
        for j in columns:
            flat = flat * levels + codes[:, j]
        out.append(np.bincount(flat, minlength=levels ** len(columns)))
    return np.concatenate(out).astype(float)


def test_replacing_one_record_moves_the_tables_by_at_most_sqrt_2m():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, size=(40, 4))
    sets = list(itertools.combinations(range(4), 2)) + [(0, 1, 2), (1, 2, 3)]
    base = _tables(codes, 3, sets)
    worst = 0.0
    for row, record in itertools.product(range(len(codes)), itertools.product(range(3), repeat=4)):
        neighbour = codes.copy()
        neighbour[row] = record
        worst = max(worst, float(np.sum((_tables(neighbour, 3, sets) - base) ** 2)))
    assert worst == 2 * len(sets)  # attained by a record that differs in every column


# --------------------------------------------------------------------------- the noise-aware tests


def _rates(p_values: list[float], alpha: float) -> tuple[float, float]:
    rate = float(np.mean(np.asarray(p_values) <= alpha))
    return rate, 3.0 * math.sqrt(alpha * (1 - alpha) / len(p_values))


@pytest.mark.parametrize("sigma", [2.0, 60.0, 400.0])
def test_noisy_table_test_holds_its_level_under_the_null(sigma):
    # skewed margins (as on alarm) and strata of very different sizes: the regime where a test that ignores or
    # merely divides by the noise rejects a true independence far too often
    rng = np.random.default_rng(1)
    p_values = []
    for _ in range(400):
        strata = rng.multinomial(20_000, [0.8, 0.15, 0.05])
        tables = np.stack([rng.multinomial(size, np.outer([0.9, 0.1], [0.6, 0.3, 0.1]).ravel()).reshape(2, 3)
                           for size in strata]).astype(float)
        p_values.append(noisy_table_test(tables + rng.normal(0, sigma, tables.shape), sigma ** 2, rng=rng,
                                         n_boot=200))
    rate, slack = _rates(p_values, 0.05)
    assert rate <= 0.05 + slack, rate


def test_noisy_table_test_finds_a_real_dependence_through_the_noise():
    rng = np.random.default_rng(2)
    joint = np.array([[0.3, 0.1], [0.1, 0.5]])
    tables = rng.multinomial(50_000, joint.ravel()).reshape(1, 2, 2).astype(float)
    assert noisy_table_test(tables + rng.normal(0, 200.0, tables.shape), 200.0 ** 2, rng=3) < 0.01
    assert noisy_table_test(np.zeros((2, 2, 2)), 1.0, rng=0) == 1.0  # no stratum carries evidence


def test_pair_screen_holds_its_level_and_sees_a_direct_edge():
    rng = np.random.default_rng(4)
    n, sigma = 30_000, 50.0
    p_z = np.array([0.5, 0.3, 0.2])
    p_x = np.array([[0.8, 0.4, 0.1], [0.2, 0.6, 0.9]])       # p(x | z), columns sum to 1
    p_y = np.array([[0.7, 0.2, 0.5], [0.3, 0.8, 0.5]])
    null = np.einsum("k,ik,jk->ijk", p_z, p_x, p_y)
    direct = null * (1 + 0.5 * np.array([[1.0, -1.0], [-1.0, 1.0]]))[:, :, None]  # x and y agree more, given z

    def draw(joint):
        t = rng.multinomial(n, (joint / joint.sum()).ravel()).reshape(joint.shape).astype(float)
        return [m + rng.normal(0, sigma, m.shape) for m in (t.sum(2), t.sum(1), t.sum(0))]

    p_null = [pairwise_screen_test(*draw(null), sigma ** 2, n, rng=rng, n_boot=200) for _ in range(300)]
    rate, slack = _rates(p_null, 0.05)
    assert rate <= 0.05 + slack, rate
    assert np.mean([pairwise_screen_test(*draw(direct), sigma ** 2, n, rng=rng) < 0.01 for _ in range(20)]) > 0.9


# --------------------------------------------------------------------------- runs against the plan


def test_the_plan_is_the_request_and_calibration_passes_it_through():
    worst = worst_case(epsilon_total=1.0, delta=1e-6)
    assert (worst.epsilon, worst.delta, worst.relation.name, worst.accountant) == (1.0, 1e-6, "replace", "gdp")
    assert worst.charges.total("tight", target_delta=1e-6).epsilon == pytest.approx(1.0, rel=1e-9)
    calibration = calibrate(MARGINAL_PC, p=8, n=10_000, epsilon=0.5, delta=1e-7)
    assert calibration.kwargs == {"epsilon_total": 0.5, "delta": 1e-7}
    assert calibration.guarantee["epsilon"] == 0.5 and calibration.guarantee["delta"] == 1e-7
    with pytest.raises(dpcd.registry.CalibrationRefused, match="add/remove"):
        calibrate(MARGINAL_PC, p=8, n=None, epsilon=1.0, delta=1e-6, relation="add/remove")


@pytest.mark.parametrize(("network", "epsilon", "max_order"), [("cancer", 0.3, 2), ("asia", 1.0, 2), ("asia", 3.0, 1),
                                                               ("sachs", 1.0, 3)])
def test_a_run_never_spends_more_than_its_plan(network, epsilon, max_order):
    sample = load_bnlearn(network, 5_000, rng=0)
    result = marginal_pc(sample.data, levels=sample.levels, epsilon_total=epsilon, delta=1e-6, rng=1,
                         max_order=max_order, n_boot=50)
    spent = result.ledger.total("tight", target_delta=1e-6).epsilon
    assert spent <= worst_case(epsilon_total=epsilon, delta=1e-6, max_order=max_order).epsilon * (1 + 1e-9)
    assert len(result.ledger.entries) <= max_order + 1 and result.ledger.relation == "replace"
    for entry, order in zip(result.ledger.entries, result.info["orders"]):
        # each order's noise is its table count's sensitivity over its share of mu (order 0: the interactions')
        full = math.sqrt(2 * order["tables"])
        expected = interaction_sensitivity(sample.levels) if order["order"] == 0 and result.info["interaction_pairs"] \
            else full
        assert entry.sensitivity == pytest.approx(expected) == pytest.approx(order["sensitivity"])
        assert expected <= full
        assert entry.scale == pytest.approx(order["sigma"]) and entry.noise_multiplier == pytest.approx(1 / order["mu"])


def test_runs_are_reproducible_and_find_the_graph():
    sample = load_bnlearn("cancer", 20_000, rng=3)
    first = marginal_pc(sample.data, levels=sample.levels, epsilon_total=1.0, rng=5)
    again = marginal_pc(sample.data, levels=sample.levels, epsilon_total=1.0, rng=5)
    assert first.skeleton == again.skeleton and first.sepsets == again.sepsets
    assert skeleton_prf(first.cpdag, dag_to_cpdag(sample.dag))["f1"] >= 0.75
    info = first.info["orders"][0]
    assert info["tables"] == 10 and info["order"] == 0  # every pair of the 5 columns at order 0


def test_candidates_limit_the_conditioning_sets_and_bad_arguments_are_named():
    sample = load_bnlearn("asia", 5_000, rng=0)
    one = marginal_pc(sample.data, levels=sample.levels, epsilon_total=5.0, rng=0, candidates=1, max_order=1,
                      screen_alpha=0.0, noise_ratio=0.0)
    order1 = one.info["orders"][1]
    assert 0 < order1["tests"] <= 2 * order1["edges"] and order1["screened"] == 0  # one set per edge end
    for kwargs, match in [({"epsilon_total": 0}, "epsilon_total"), ({"candidates": 0}, "candidates"),
                          ({"screen_alpha": 1.5}, "screen_alpha"), ({"n_boot": 0}, "n_boot"),
                          ({"noise_ratio": -0.1}, "noise_ratio"), ({"more_candidates": ()}, "more_candidates"),
                          ({"protect_alpha": 1.5}, "protect_alpha")]:
        arguments = {"levels": sample.levels, "epsilon_total": 1.0, "rng": 0, **kwargs}
        with pytest.raises(ValueError, match=match):
            marginal_pc(sample.data, **arguments)


def test_protect_alpha_protects_only_tree_edges_with_strong_order_zero_evidence():
    sample = load_bnlearn("child", 20_000, rng=0)
    run = {key: marginal_pc(sample.data, levels=sample.levels, epsilon_total=1.0, rng=3, **kwargs) for key, kwargs in
           {"none": {"protect_alpha": 0.0}, "off": {"protect_tree": False}, "all": {"protect_alpha": 1.0},
            "default": {}}.items()}
    assert run["none"].skeleton == run["off"].skeleton and run["none"].sepsets == run["off"].sepsets
    assert run["all"].info["protect_alpha"] == 1.0 and run["default"].info["protect_alpha"] == 1 / 301  # development
    assert run["none"].ledger.epsilons().tolist() == run["all"].ledger.epsilons().tolist()  # post-processing


def test_further_tables_are_bought_only_while_the_noise_ratio_holds():
    sample = load_bnlearn("sachs", 20_000, rng=0)
    n = sample.data.shape[0]
    counts = {}
    for epsilon in (0.1, 1.0, 10.0):
        # the further-table rule alone (budget_candidates off: a widened order-2 base would buy fewer further ones)
        result = marginal_pc(sample.data, levels=sample.levels, epsilon_total=epsilon, rng=2, n_boot=50,
                             budget_candidates=False)
        base = marginal_pc(sample.data, levels=sample.levels, epsilon_total=epsilon, rng=2, n_boot=50,
                           noise_ratio=0.0)
        assert all(order["more_tables"] == 0 for order in base.info["orders"])
        for order in result.info["orders"][1:]:
            if order["more_tables"]:  # the order's noise is within the ratio of its largest table's mean count
                assert order["sigma"] <= DEFAULT_NOISE_RATIO * n / order["largest_cells"] * (1 + 1e-12)
        counts[epsilon] = sum(order["more_tables"] for order in result.info["orders"])
    assert counts[0.1] <= counts[1.0] <= counts[10.0] and counts[10.0] > 0


def _decider(mus, *, budget_candidates=True, n=1_000, p=6):
    return MarginalTablesDecider(np.zeros((n, p), dtype=np.int64), np.full(p, 2), np.asarray(mus, dtype=float),
                                 alpha=0.05, candidates=(3, 2), screen_alpha=0.0, n_boot=10, rng=np.random.default_rng(0),
                                 ledger=PrivacyLedger("replace"), delta=1e-6, more_candidates=(5, 5), noise_ratio=0.2,
                                 budget_candidates=budget_candidates)


@pytest.mark.parametrize(("mu", "expected"), [(1.0, (3, 5)), (0.44, (3, 5)), (0.43, (3, 3)), (0.40, (3, 3)),
                                               (0.39, (3, 2)), (0.1, (3, 2))])
def test_order_two_widens_its_always_measured_sets_only_while_the_budget_affords_them(mu, expected):
    """Six binary columns 0..5, every pair adjacent, equal strengths (so each edge end ranks the others by index),
    n = 1 000, tables of 16 cells: the rule is √(2M)/μ₂ ≤ 0.2 · 1000/16 = 12.5. Five or four candidates measure every
    4-column set, M = 15, which fits iff μ₂ ≥ √30/12.5 = 0.438. Three measure, for each edge, the sets from the first
    three of its four other columns: every 4-set but the three that contain {3, 4, 5}, M = 12, which fits iff
    μ₂ ≥ √24/12.5 = 0.392. Below that the default two stand; order 1 never widens."""
    adjacency = ~np.eye(6, dtype=bool)
    decider = _decider([1.0, 1.0, mu])
    decider.strength = np.ones((6, 6))
    assert decider.order_candidates(2, adjacency) == expected
    assert decider.order_candidates(1, adjacency) == (3,)
    assert _decider([1.0, 1.0, 1.0], budget_candidates=False).order_candidates(2, adjacency) == (3, 2)


def test_a_run_records_the_candidates_each_order_measured():
    sample = load_bnlearn("sachs", 20_000, rng=0)
    chosen = {}
    for epsilon in (0.1, 10.0):
        result = marginal_pc(sample.data, levels=sample.levels, epsilon_total=epsilon, rng=2, n_boot=50)
        assert result.info["budget_candidates"] is True
        chosen[epsilon] = [order["candidates"] for order in result.info["orders"]]
    assert chosen[0.1] == [None, 3, 2] and chosen[10.0][:2] == [None, 3] and chosen[10.0][2] > 2
    off = marginal_pc(sample.data, levels=sample.levels, epsilon_total=10.0, rng=2, n_boot=50, budget_candidates=False)
    assert [order["candidates"] for order in off.info["orders"]] == [None, 3, 2]


def test_a_larger_budget_approaches_pc_where_the_strongest_neighbours_miss_the_separating_set():
    # sachs: Erk - Raf is separated by {Mek, PKA}, PKA is not among the two strongest neighbours of the pair;
    # at a large budget the further sets find it, the always-measured ones alone do not
    sample = load_bnlearn("sachs", 100_000, rng=1)
    truth = dag_to_cpdag(sample.dag)
    wide = marginal_pc(sample.data, levels=sample.levels, epsilon_total=10.0, rng=1, n_boot=100)
    narrow = marginal_pc(sample.data, levels=sample.levels, epsilon_total=10.0, rng=1, n_boot=100, noise_ratio=0.0)
    assert not wide.cpdag.to_undirected().has_edge("Erk", "Raf")
    assert narrow.cpdag.to_undirected().has_edge("Erk", "Raf")
    assert skeleton_prf(wide.cpdag, truth)["f1"] > skeleton_prf(narrow.cpdag, truth)["f1"]


def test_discover_releases_marginal_pc_under_its_guarantee(tmp_path):
    sample = load_bnlearn("asia", 3_000, rng=0)
    found = dpcd.discover(sample.data, schema=sample.schema(), algorithm="marginal_pc", epsilon=1.0, rng=0,
                          progress=False, out=tmp_path / "out", options=dpcd.ReleaseOptions(forecast_repetitions=1))
    assert found.privacy["guarantee"]["epsilon"] == 1.0 and found.privacy["guarantee"]["accountant"] == "gdp"
    assert found.privacy["spent_this_run"]["totals"]["tight"]["epsilon"] <= 1.0 + 1e-9
    assert found.privacy["assumed_public"]["algorithm"]["parameters"]["max_order"] == 2


def test_fisher_combination_matches_scipy_and_keeps_a_uniform_null_uniform():
    from scipy.stats import combine_pvalues

    from dpcd.discovery.marginal_pc import fisher_combined_p

    for values in [(0.5,), (0.1, 0.1), (0.003, 0.9), (1e-6, 0.2, 0.7)]:
        assert fisher_combined_p(*values) == pytest.approx(combine_pvalues(values, method="fisher").pvalue, rel=1e-9)
    draws = np.random.default_rng(0).uniform(size=(4_000, 2))
    combined = np.array([fisher_combined_p(*pair) for pair in draws])
    assert abs(np.mean(combined <= 0.05) - 0.05) < 0.012  # its level is the tests'


def test_combining_the_screen_is_post_processing_and_decides_by_fishers_p():
    from dpcd.discovery.marginal_pc import DEFAULT_COMBINE_SCREEN, fisher_combined_p

    sample = load_bnlearn("alarm", 50_000, rng=0)
    runs = {flag: marginal_pc(sample.data, levels=sample.levels, epsilon_total=1.0, rng=7, combine_screen=flag,
                              denoise=None) for flag in (False, True)}
    assert runs[False].ledger.epsilons().tolist() == runs[True].ledger.epsilons().tolist()  # same spending
    assert runs[True].info["combine_screen"] is True and DEFAULT_COMBINE_SCREEN is True  # chosen on development data
    assert runs[False].skeleton != runs[True].skeleton  # the option acts on this draw
    off = marginal_pc(sample.data, levels=sample.levels, epsilon_total=1.0, rng=7, screen_alpha=0.0, denoise=None)
    assert off.info["combine_screen"] is False  # without a screen there is nothing to combine
    estimated = marginal_pc(sample.data, levels=sample.levels, epsilon_total=1.0, rng=7, denoise=1)
    assert estimated.info["combine_screen"] is False  # order 1 reads estimates that hold the pair tables already
    sample = load_bnlearn("asia", 20_000, rng=1)
    codes, levels = sample.data.to_numpy(), np.asarray(sample.levels)
    deciders = {}
    for flag in (False, True):
        decider = MarginalTablesDecider(codes, levels, _order_mus(1.0, 1e-6, 1), alpha=0.05, candidates=(3,),
                                        screen_alpha=0.01, n_boot=100, rng=np.random.default_rng(3),
                                        ledger=PrivacyLedger("replace"), delta=1e-6, protect_tree=False,
                                        combine_screen=flag)
        full = ~np.eye(len(levels), dtype=bool)
        decider.start_order(0, full)
        decider.start_order(1, full)
        deciders[flag] = decider
    keys = [key for key in deciders[True].screen_p if key not in deciders[True].screened]
    assert keys and deciders[True].screen_p == deciders[False].screen_p  # same releases, same screen
    flips = 0
    for x, y, S in keys:
        table_p = deciders[False]._table_p((x, y, S))
        assert deciders[False].decide(x, y, S) == (table_p > 0.05)
        joint = fisher_combined_p(deciders[True]._table_p((x, y, S)), deciders[True].screen_p[(x, y, S)])
        assert deciders[True].decide(x, y, S) == (joint > 0.05)
        flips += deciders[False].decide(x, y, S) != deciders[True].decide(x, y, S)
    assert flips > 0


def test_order_two_reading_estimated_tables_is_post_processing_and_acts():
    from dpcd.discovery.marginal_pc import DEFAULT_DENOISE

    sample = load_bnlearn("alarm", 50_000, rng=0)
    runs = {flag: marginal_pc(sample.data, levels=sample.levels, epsilon_total=1.0, rng=7, denoise=flag)
            for flag in (None, 2)}
    assert DEFAULT_DENOISE == 2 and runs[2].info["denoise"] == 2 and runs[2].info["combine_screen"] is True
    # orders 0 and 1 decide alike, so order 2 buys the same tables: the same releases, other decisions
    assert runs[None].ledger.epsilons().tolist() == runs[2].ledger.epsilons().tolist()
    assert runs[None].info["orders"] == runs[2].info["orders"]
    assert runs[None].skeleton != runs[2].skeleton
    worst = MARGINAL_PC.privacy_map(epsilon_total=1.0, delta=1e-6)
    assert runs[2].ledger.total("tight", target_delta=1e-6).epsilon <= worst.epsilon + 1e-9
    with pytest.raises(ValueError, match="denoise"):
        marginal_pc(sample.data, levels=sample.levels, epsilon_total=1.0, rng=7, denoise=0)

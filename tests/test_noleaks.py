"""NOLEAKS and score-based CURATE: Lemma 2, analytic Gaussian calibration, budgets, ledgers."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from dpcd.datasets import load_bnlearn, random_dag, sample_linear_gaussian
from dpcd.discovery import curate_sb as curate_sb_module
from dpcd.discovery import noleaks as noleaks_module
from dpcd.discovery.curate_sb import (
    count_iterations,
    curate_sb,
    lemma2_iterations,
    schedule_budgets,
)
from dpcd.discovery.noleaks import (
    clipped_gradient,
    gradient_sensitivity,
    line_search_charge,
    noleaks,
    prepare_run,
)
from dpcd.discovery.notears import encode_ordinal
from dpcd.privacy import analytic_gaussian_sigma, gaussian_sigma


@pytest.mark.parametrize("epsilon_total", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("fraction", [0.003, 0.01, 0.05, 0.2])
def test_lemma2_closed_forms_agree_with_counting(epsilon_total, fraction):
    e0 = epsilon_total * fraction
    for schedule in ("additive", "multiplicative"):
        closed = lemma2_iterations(schedule, epsilon_total=epsilon_total, epsilon0=e0)
        counted = count_iterations(schedule, epsilon_total=epsilon_total, epsilon0=e0, start=1)
        assert counted == math.floor(closed + 1e-9), (schedule, closed, counted)
        # at the closed-form I (when an integer would fit exactly) the schedule sums to epsilon_total
        b = schedule_budgets(schedule, epsilon0=e0, iterations=counted)
        assert b.sum() <= epsilon_total * (1 + 1e-12)
    closed = lemma2_iterations("exponential", epsilon_total=epsilon_total, epsilon0=e0)
    counted = count_iterations("exponential", epsilon_total=epsilon_total, epsilon0=e0, start=1)
    assert counted >= math.floor(closed)  # Lemma 2 bounds the sum by I·e: a conservative count


def test_multiplicative_schedule_above_one_and_decreasing_below_one():
    closed = lemma2_iterations("multiplicative", epsilon_total=50.0, epsilon0=2.0)
    assert count_iterations("multiplicative", epsilon_total=50.0, epsilon0=2.0, start=1) == math.floor(closed)
    low = schedule_budgets("multiplicative", epsilon0=0.1, iterations=10)
    assert np.all(np.diff(low) < 0)  # eps0 < 1: the published schedule decreases


@pytest.mark.parametrize("epsilon,delta", [(0.05, 1e-5), (0.5, 1e-8), (1.0, 1e-12), (5.0, 1e-3)])
def test_analytic_gaussian_satisfies_eq1_and_beats_classical(epsilon, delta):
    sens = 0.3
    sigma = analytic_gaussian_sigma(sens, epsilon, delta)
    lhs = norm.cdf(sens / (2 * sigma) - epsilon * sigma / sens) - math.exp(epsilon) * norm.cdf(
        -sens / (2 * sigma) - epsilon * sigma / sens)
    assert abs(lhs - delta) <= 1e-9 and lhs <= delta * (1 + 1e-9)
    if epsilon < 1:
        assert sigma < gaussian_sigma(sens, epsilon, delta)


def test_clipped_gradient_bounds_one_record_and_matches_compressed_rows():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(500, 4)).astype(float) - 1
    W = rng.normal(0, 0.5, (4, 4))
    np.fill_diagonal(W, 0)
    u, c = np.unique(X, axis=0, return_counts=True)
    assert np.allclose(clipped_gradient(X, W, 0.5), clipped_gradient(u, W, 0.5, c))
    Y = X.copy()
    Y[0] = [5, -5, 5, -5]  # replace one record by an extreme one
    diff = clipped_gradient(X, W, 0.5) - clipped_gradient(Y, W, 0.5)
    np.fill_diagonal(diff, 0)
    assert np.linalg.norm(diff) <= gradient_sensitivity(500, 4, 0.5) + 1e-12


@pytest.fixture(scope="module")
def cancer():
    ds = load_bnlearn("cancer", 5000, rng=0)
    return encode_ordinal(ds.data.to_numpy(), ds.levels), list(ds.data.columns)


@pytest.mark.parametrize("schedule", ["multiplicative", "additive", "exponential"])
def test_curate_sb_total_within_budget(cancer, schedule):
    X, names = cancer
    res = curate_sb(X, epsilon_total=2.0, delta=1e-6, rng=0, schedule=schedule, node_names=names,
                    epsilon0=0.05)
    assert res.ledger.total("basic").epsilon <= 2.0 * (1 + 1e-9)
    assert res.info["evaluations"] <= res.info["iterations"]
    assert res.info["iterations"] >= math.floor(res.info["iterations_lemma2"]) - 1
    assert set(res.dag.nodes) == set(names)


def test_noleaks_ledger_and_acyclic_output(cancer):
    X, names = cancer
    res = noleaks(X, epsilon=0.05, delta=1e-6, rng=0, max_evaluations=30, node_names=names)
    eps_ls, delta_ls = line_search_charge(5000, 1000)
    assert res.ledger.total("basic").epsilon == pytest.approx(eps_ls + 0.05 * res.info["evaluations"])
    assert res.ledger.relation == "replace"
    import networkx as nx
    assert nx.is_directed_acyclic_graph(res.dag)
    again = noleaks(X, epsilon=0.05, delta=1e-6, rng=0, max_evaluations=30, node_names=names)
    assert np.array_equal(res.W, again.W)


def test_noleaks_with_large_budget_fits_the_linear_sem():
    dag = random_dag(5, 0.4, rng=3)
    ds = sample_linear_gaussian(dag, 20_000, rng=4, weight_range=(0.8, 1.5))
    X = ds.data.to_numpy()
    X = X / np.abs(X).max(axis=0)
    res = noleaks(X, epsilon=50.0, delta=1e-5, rng=1, max_evaluations=300, node_names=list(ds.data.columns),
                  lambda1=0.01, w_threshold=0.2)
    def loss(W):
        return 0.5 * np.mean(np.sum((X - X @ W) ** 2, axis=1))
    # the private optimiser must explain a large share of the variance the true SEM explains
    assert loss(res.W) < 0.8 * loss(np.zeros_like(res.W))
    assert res.info["h"] < 1e-3


def test_bad_arguments():
    X = np.zeros((2000, 3))
    with pytest.raises(ValueError, match="exactly one"):
        noleaks(X, delta=1e-5, rng=0)
    with pytest.raises(ValueError, match="schedule"):
        curate_sb(X, epsilon_total=1.0, delta=1e-5, rng=0, schedule="linear")
    with pytest.raises(ValueError, match="line-search"):
        curate_sb(X, epsilon_total=0.1, delta=1e-5, rng=0)


# --------------------------------------------------------------------------- plans dominate runs


@pytest.mark.parametrize("epsilon_total, max_evaluations", [(0.5, 20), (2.0, 40)])
def test_noleaks_plan_dominates_the_run(cancer, epsilon_total, max_evaluations):
    X, names = cancer
    plan = noleaks_module.worst_case(epsilon_total=epsilon_total, delta=1e-6, n=len(X), max_evaluations=max_evaluations)
    assert plan.relation.name == noleaks_module.RELATION.name == "replace"
    assert plan.epsilon == pytest.approx(epsilon_total)
    res = noleaks(X, epsilon_total=epsilon_total, delta=1e-6, rng=0, max_evaluations=max_evaluations,
                  node_names=names)
    total = res.ledger.total("basic")
    assert res.ledger.relation == plan.relation.name
    assert total.epsilon <= plan.epsilon * (1 + 1e-9)
    assert total.delta <= plan.delta * (1 + 1e-9)
    assert res.ledger.n_charges <= plan.charges.n_charges
    assert res.info["evaluations"] <= max_evaluations


@pytest.mark.parametrize("schedule", ["multiplicative", "additive"])
def test_curate_sb_plan_dominates_the_run(cancer, schedule):
    X, names = cancer
    plan = curate_sb_module.worst_case(epsilon_total=2.0, delta=1e-6, n=len(X), schedule=schedule, epsilon0=0.2)
    assert plan.relation.name == "replace"
    assert plan.epsilon <= 2.0 * (1 + 1e-9)
    res = curate_sb(X, epsilon_total=2.0, delta=1e-6, rng=0, schedule=schedule, node_names=names, epsilon0=0.2)
    total = res.ledger.total("basic")
    assert res.ledger.relation == plan.relation.name
    assert total.epsilon <= plan.epsilon * (1 + 1e-9)
    assert total.delta <= plan.delta * (1 + 1e-9)
    assert res.ledger.n_charges <= plan.charges.n_charges
    assert res.info["iterations"] == plan.parameters["iterations"]


# --------------------------------------------------------------------------- public bounds


@pytest.fixture(scope="module")
def gaussian():
    ds = sample_linear_gaussian(random_dag(3, 0.6, rng=5), 3_000, rng=6)
    return ds.data.to_numpy(), ds.schema(), list(ds.data.columns)


def test_prepare_run_maps_onto_the_box_with_public_bounds(gaussian):
    X, schema, names = gaussian
    out = prepare_run(X, names, 1e-6, 0.1, 2.0, 0.3, 500, 0, bounds=schema)
    names_out, Z, delta, clip, generator, rows, ledger, eps_ls = out
    assert names_out == names and delta == 1e-6 and clip == 2.0
    assert Z.shape == X.shape and np.abs(Z).max() <= 1.0
    lower, upper = np.array(schema.bounds).T
    np.testing.assert_allclose(Z, np.clip(2 * (X - lower) / (upper - lower) - 1, -1, 1))
    assert len(rows) == 500 and ledger.n_charges == 1 and eps_ls == line_search_charge(len(X), 500)[0]
    plain = prepare_run(X, names, 1e-6, 0.1, 2.0, 0.3, 500, 0)[1]
    np.testing.assert_array_equal(plain, X)  # without bounds the data are used as given


@pytest.mark.parametrize("algorithm", ["noleaks", "curate_sb"])
def test_values_outside_the_bounds_are_clamped_not_read(gaussian, algorithm):
    X, schema, names = gaussian
    upper = schema.bounds[0][1]
    outlier, clamped = X.copy(), X.copy()
    outlier[7, 0], clamped[7, 0] = 1e6, upper
    runs = []
    for data in (outlier, clamped):
        if algorithm == "noleaks":
            runs.append(noleaks(data, epsilon=0.5, delta=1e-6, rng=3, max_evaluations=8, line_search_size=500,
                                node_names=names, bounds=schema))
        else:
            runs.append(curate_sb(data, epsilon_total=3.0, delta=1e-6, rng=3, epsilon0=0.5, line_search_size=500,
                                  node_names=names, bounds=schema, max_iter=3))
    np.testing.assert_array_equal(runs[0].W, runs[1].W)
    assert runs[0].info["evaluations"] == runs[1].info["evaluations"] > 0
    # without the bounds the outlier does change the release
    free = [noleaks(data, epsilon=0.5, delta=1e-6, rng=3, max_evaluations=8, line_search_size=500, node_names=names)
            for data in (outlier, clamped)]
    assert not np.array_equal(free[0].W, free[1].W) or free[0].info["h"] != free[1].info["h"]

"""NOLEAKS and score-based CURATE: Lemma 2, analytic Gaussian calibration, budgets, ledgers."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from dpcd.datasets import load_bnlearn, random_dag, sample_linear_gaussian
from dpcd.discovery.curate_sb import count_iterations, curate_sb, lemma2_iterations, schedule_budgets
from dpcd.discovery.noleaks import clipped_gradient, gradient_sensitivity, line_search_charge, noleaks
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
    return encode_ordinal(ds.data.to_numpy()), list(ds.data.columns)


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
    assert res.ledger.neighbouring == "replace"
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

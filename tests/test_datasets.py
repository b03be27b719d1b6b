"""Tests for dpcd.datasets: bundled bnlearn networks, synthetic generators, encoding."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from dpcd import datasets
from dpcd.datasets import (
    BNLEARN_NETWORKS,
    NONLINEAR_FUNCTIONS,
    Dataset,
    bnlearn_dag,
    bnlearn_structure_summary,
    encode_categorical,
    load_bnlearn,
    load_network,
    random_dag,
    sample_categorical,
    sample_linear_gaussian,
    sample_nonlinear,
)

SMALL_DAG = nx.DiGraph()
SMALL_DAG.add_nodes_from("ABCDE")  # node order = column order; parents listed in this order
SMALL_DAG.add_edges_from([("A", "C"), ("B", "C"), ("C", "D"), ("B", "D"), ("D", "E")])


# --------------------------------------------------------------------------- bnlearn


def test_bundled_networks_are_listed():
    for name in ("cancer", "earthquake", "survey", "asia", "sachs", "child", "alarm"):
        assert name in BNLEARN_NETWORKS


def test_unknown_network_lists_the_available_ones():
    with pytest.raises(ValueError, match="asia"):
        load_bnlearn("nosuchnet", 10, 0)
    with pytest.raises(ValueError, match="name"):
        bnlearn_dag("nosuchnet")
    with pytest.raises(TypeError, match="name"):
        load_network(3)


def test_bnlearn_dag_matches_the_model():
    model = load_network("asia")
    dag = bnlearn_dag("asia")
    assert list(dag.nodes) == list(model.nodes())
    assert set(dag.edges()) == set(model.edges())
    assert nx.is_directed_acyclic_graph(dag)
    # load_network hands out copies: changing one does not leak into the cache
    model.remove_node("asia")
    assert "asia" in load_network("asia").nodes()


def test_load_bnlearn_layout():
    ds = load_bnlearn("asia", 500, 1)
    assert isinstance(ds, Dataset) and ds.kind == "discrete" and ds.name == "asia"
    data, dag = ds
    model = load_network("asia")
    assert list(data.columns) == list(model.nodes())
    assert set(dag.edges()) == set(model.edges())
    assert data.shape == (500, 8)
    for node in data.columns:
        cpd = model.get_cpds(node)
        assert ds.categories[node] == [str(s) for s in cpd.state_names[node]]
        assert data[node].between(0, cpd.cardinality[0] - 1).all()
    assert all(pd.api.types.is_integer_dtype(t) for t in data.dtypes)


def test_load_bnlearn_reproducible_and_seed_dependent():
    a = load_bnlearn("sachs", 2000, 7).data
    b = load_bnlearn("sachs", 2000, np.random.default_rng(7)).data
    c = load_bnlearn("sachs", 2000, 8).data
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def _check_against_exact(name: str, n: int, seed: int, joint: tuple[str, ...] | None = None):
    from pgmpy.inference import VariableElimination

    model = load_network(name)
    ds = load_bnlearn(name, n, seed)
    inference = VariableElimination(model)
    for node in ds.data.columns:
        exact = inference.query([node], show_progress=False)
        # order the exact probabilities by our codes (the CPD's state order)
        p = np.array([exact.get_value(**{node: s}) for s in model.get_cpds(node).state_names[node]])
        freq = np.bincount(ds.data[node], minlength=len(p)) / n
        se = np.sqrt(p * (1 - p) / n)
        assert np.all(np.abs(freq - p) <= 4 * se + 1e-12), (node, freq, p)
    if joint:
        exact = inference.query(list(joint), joint=True, show_progress=False)
        states = [model.get_cpds(v).state_names[v] for v in joint]
        cards = [len(s) for s in states]
        codes = np.ravel_multi_index(tuple(ds.data[v].to_numpy() for v in joint), cards)
        freq = np.bincount(codes, minlength=int(np.prod(cards))) / n
        for flat, combo in enumerate(np.ndindex(*cards)):
            p = exact.get_value(**{v: states[i][c] for i, (v, c) in enumerate(zip(joint, combo))})
            assert abs(freq[flat] - p) <= 4 * np.sqrt(p * (1 - p) / n) + 1e-12, (combo, freq[flat], p)


def test_asia_matches_exact_inference():
    _check_against_exact("asia", 200_000, 11, joint=("dysp", "bronc", "either"))


def test_sachs_matches_exact_inference():
    # three-level variables and three-parent CPDs check the mixed-radix parent code
    _check_against_exact("sachs", 100_000, 12, joint=("Akt", "Erk", "PKA"))


def test_alarm_samples_quickly_shaped():
    ds = load_bnlearn("alarm", 100_000, 0)
    assert ds.data.shape == (100_000, 37)
    summary = bnlearn_structure_summary("alarm")
    assert summary["n_nodes"] == 37 and summary["n_edges"] == 46 and summary["max_in_degree"] == 4
    levels = summary["n_levels"]
    assert all(ds.data[v].max() < levels[v] for v in ds.data.columns)


def test_structure_summary_asia():
    s = bnlearn_structure_summary("asia")
    assert (s["n_nodes"], s["n_edges"], s["max_in_degree"]) == (8, 8, 2)
    assert s["min_levels"] == s["max_levels"] == 2
    assert s["n_parameters"] == 18


def test_load_bnlearn_bad_arguments():
    with pytest.raises(ValueError, match="n must be >= 1"):
        load_bnlearn("asia", 0, 0)
    with pytest.raises(TypeError, match="n must be an integer"):
        load_bnlearn("asia", 10.5, 0)
    with pytest.raises(TypeError, match="rng"):
        load_bnlearn("asia", 10, None)


# --------------------------------------------------------------------------- random DAG


def test_random_dag_structure_and_sparseness():
    p, s, reps = 10, 0.3, 300
    rng = np.random.default_rng(0)
    densities = []
    for _ in range(reps):
        dag = random_dag(p, s, rng)
        assert list(dag.nodes) == [f"X{i}" for i in range(1, p + 1)]
        assert nx.is_directed_acyclic_graph(dag)
        densities.append(2 * dag.number_of_edges() / (p * (p - 1)))
    se = np.sqrt(s * (1 - s) / (reps * p * (p - 1) / 2))
    assert abs(np.mean(densities) - s) <= 4 * se


def test_random_dag_extremes_and_reproducibility():
    assert random_dag(6, 0.0, 1).number_of_edges() == 0
    assert random_dag(6, 1.0, 1).number_of_edges() == 15
    assert set(random_dag(8, 0.5, 3).edges()) == set(random_dag(8, 0.5, 3).edges())
    assert set(random_dag(8, 0.5, 3).edges()) != set(random_dag(8, 0.5, 4).edges())


def test_random_dag_bad_arguments():
    with pytest.raises(ValueError, match="p must be >= 2"):
        random_dag(1, 0.5, 0)
    with pytest.raises(TypeError, match="p must be an integer"):
        random_dag(2.5, 0.5, 0)
    with pytest.raises(ValueError, match="sparseness"):
        random_dag(5, 1.5, 0)
    with pytest.raises(ValueError, match="sparseness"):
        random_dag(5, -0.1, 0)


# --------------------------------------------------------------------------- categorical


def test_sample_categorical_layout_and_cpts():
    ds = sample_categorical(SMALL_DAG, 1000, 5, level_range=(2, 4))
    assert ds.kind == "discrete" and list(ds.data.columns) == list(SMALL_DAG.nodes)
    assert set(ds.dag.edges()) == set(SMALL_DAG.edges())
    for node, k in ds.meta["levels"].items():
        assert 2 <= k <= 4
        assert ds.categories[node] == [str(i) for i in range(k)]
        assert ds.data[node].between(0, k - 1).all()
        table = ds.meta["cpts"][node]
        n_configs = int(np.prod([ds.meta["levels"][q] for q in ds.meta["parents"][node]]))
        assert table.shape == (n_configs, k)
        np.testing.assert_allclose(table.sum(axis=1), 1.0)
    assert ds.meta["parents"]["D"] == ("B", "C")


def test_sample_categorical_follows_its_cpts():
    n = 200_000
    ds = sample_categorical(SMALL_DAG, n, 21, level_range=(3, 3))
    data, meta = ds.data, ds.meta
    p_a = meta["cpts"]["A"][0]
    freq = np.bincount(data["A"], minlength=3) / n
    assert np.all(np.abs(freq - p_a) <= 4 * np.sqrt(p_a * (1 - p_a) / n))
    # D | (B, C): check every parent configuration; row = 3 * b + c (first parent most significant)
    assert meta["parents"]["D"] == ("B", "C")
    cpt = meta["cpts"]["D"]
    for b in range(3):
        for c in range(3):
            rows = data.loc[(data["B"] == b) & (data["C"] == c), "D"].to_numpy()
            m = len(rows)
            assert m > 500
            p = cpt[3 * b + c]
            freq = np.bincount(rows, minlength=3) / m
            assert np.all(np.abs(freq - p) <= 4 * np.sqrt(p * (1 - p) / m) + 1e-12), (b, c, freq, p)


def test_sample_categorical_reproducible():
    a = sample_categorical(SMALL_DAG, 300, 2)
    b = sample_categorical(SMALL_DAG, 300, 2)
    c = sample_categorical(SMALL_DAG, 300, 3)
    pd.testing.assert_frame_equal(a.data, b.data)
    assert not a.data.equals(c.data)


def test_sampler_never_draws_zero_probability_states():
    bn = datasets._discrete_bn(
        ["A", "B"], [(), (0,)], [3, 3],
        [np.array([[0.5, 0.0, 0.5]]), np.array([[0.3, 0.7, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])],
    )
    X = datasets._forward_sample(bn, 50_000, np.random.default_rng(0))
    assert not np.any(X[:, 0] == 1)
    assert not np.any((X[:, 0] == 0) & (X[:, 1] == 2))
    assert np.all(X[X[:, 0] == 2, 1] == 0)


def test_sample_categorical_bad_arguments():
    with pytest.raises(ValueError, match="level_range"):
        sample_categorical(SMALL_DAG, 10, 0, level_range=(1, 3))
    with pytest.raises(ValueError, match="level_range"):
        sample_categorical(SMALL_DAG, 10, 0, level_range=(4, 2))
    with pytest.raises(TypeError, match="level_range"):
        sample_categorical(SMALL_DAG, 10, 0, level_range=3)
    with pytest.raises(ValueError, match="concentration"):
        sample_categorical(SMALL_DAG, 10, 0, concentration=0.0)
    with pytest.raises(ValueError, match="dag must be a directed acyclic graph"):
        sample_categorical(nx.DiGraph([("a", "b"), ("b", "a")]), 10, 0)
    with pytest.raises(TypeError, match="dag node names must be strings"):
        sample_categorical(nx.DiGraph([(0, 1)]), 10, 0)
    with pytest.raises(TypeError, match="dag must be a networkx.DiGraph"):
        sample_categorical(nx.Graph([("a", "b")]), 10, 0)


# --------------------------------------------------------------------------- linear Gaussian


def test_linear_gaussian_covariance_matches_closed_form():
    n, sigma = 200_000, 1.5
    dag = random_dag(5, 0.7, 3)
    ds = sample_linear_gaussian(dag, n, 4, weight_range=(0.3, 0.9), noise_std=sigma, signed=True)
    assert ds.kind == "continuous" and list(ds.data.columns) == list(dag.nodes)
    W = ds.meta["weights"]
    nodes = list(dag.nodes)
    for i, u in enumerate(nodes):
        for j, v in enumerate(nodes):
            if dag.has_edge(u, v):
                assert 0.3 <= abs(W[i, j]) <= 0.9
            else:
                assert W[i, j] == 0.0
    inv = np.linalg.inv(np.eye(5) - W)
    sigma_true = sigma**2 * inv.T @ inv
    sigma_hat = np.cov(ds.data.to_numpy(), rowvar=False)
    se = np.sqrt((np.outer(np.diag(sigma_true), np.diag(sigma_true)) + sigma_true**2) / n)
    assert np.all(np.abs(sigma_hat - sigma_true) <= 4 * se)


def test_linear_gaussian_signs_and_reproducibility():
    dag = random_dag(8, 0.8, 0)
    unsigned = sample_linear_gaussian(dag, 10, 1).meta["weights"]
    assert np.all(unsigned >= 0)
    signed = sample_linear_gaussian(dag, 10, 1, signed=True).meta["weights"]
    assert (signed < 0).any() and (signed > 0).any()
    a = sample_linear_gaussian(dag, 100, 2).data
    pd.testing.assert_frame_equal(a, sample_linear_gaussian(dag, 100, 2).data)
    assert not a.equals(sample_linear_gaussian(dag, 100, 3).data)


def test_linear_gaussian_bad_arguments():
    with pytest.raises(ValueError, match="weight_range"):
        sample_linear_gaussian(SMALL_DAG, 10, 0, weight_range=(1.0, 0.5))
    with pytest.raises(ValueError, match="weight_range"):
        sample_linear_gaussian(SMALL_DAG, 10, 0, weight_range=(-1.0, 0.5))
    with pytest.raises(ValueError, match="noise_std"):
        sample_linear_gaussian(SMALL_DAG, 10, 0, noise_std=-1.0)
    with pytest.raises(TypeError, match="signed"):
        sample_linear_gaussian(SMALL_DAG, 10, 0, signed="yes")


# --------------------------------------------------------------------------- nonlinear


def test_nonlinear_on_a_deep_network():
    dag = bnlearn_dag("alarm")
    ds = sample_nonlinear(dag, 1000, 0)
    X = ds.data.to_numpy()
    assert ds.kind == "continuous" and X.shape == (1000, 37) and np.all(np.isfinite(X))
    np.testing.assert_allclose(X.mean(axis=0), 0.0, atol=1e-9)
    np.testing.assert_allclose(X.std(axis=0), 1.0, atol=1e-9)
    roots = {v for v in dag.nodes if dag.in_degree(v) == 0}
    assert set(ds.meta["functions"]) == set(dag.nodes) - roots
    assert set(ds.meta["functions"].values()) <= set(NONLINEAR_FUNCTIONS)
    a = ds.meta["weights"][ds.meta["weights"] > 0]
    assert len(a) == dag.number_of_edges() and np.all((a >= 0.5) & (a <= 1.0))
    assert np.all((ds.meta["noise_scale"] >= 0.5) & (ds.meta["noise_scale"] <= 1.0))


def test_nonlinear_follows_its_equations_without_standardising():
    dag = nx.DiGraph([("A", "B"), ("A", "C"), ("B", "C")])
    ds = sample_nonlinear(dag, 500, 3, standardize=False)
    X, A, b = ds.data.to_numpy(), ds.meta["weights"], ds.meta["noise_scale"]
    assert np.all(np.abs(X[:, 0]) <= 0.5 * b[0])  # root: b · U(−½, ½)
    for j, node in ((1, "B"), (2, "C")):
        phi = NONLINEAR_FUNCTIONS[ds.meta["functions"][node]]
        residual = X[:, j] - phi(X @ A[:, j])
        assert np.all(np.abs(residual) <= 0.5 * b[j] + 1e-12)


def test_nonlinear_overflow_is_reported(monkeypatch):
    chain = nx.DiGraph([(f"V{i}", f"V{i + 1}") for i in range(15)])
    monkeypatch.setattr(datasets, "NONLINEAR_FUNCTIONS", {k: np.exp for k in NONLINEAR_FUNCTIONS})
    with pytest.raises(ValueError, match="standardize=True"):
        sample_nonlinear(chain, 100, 0, standardize=False)
    assert np.all(np.isfinite(sample_nonlinear(chain, 100, 0).data.to_numpy()))


def test_nonlinear_reproducible_and_bad_arguments():
    a = sample_nonlinear(SMALL_DAG, 200, 4).data
    pd.testing.assert_frame_equal(a, sample_nonlinear(SMALL_DAG, 200, 4).data)
    assert not a.equals(sample_nonlinear(SMALL_DAG, 200, 5).data)
    with pytest.raises(ValueError, match="n must be >= 2"):
        sample_nonlinear(SMALL_DAG, 1, 0)
    with pytest.raises(TypeError, match="standardize"):
        sample_nonlinear(SMALL_DAG, 10, 0, standardize=1)


# --------------------------------------------------------------------------- encoding


def test_encode_categorical():
    frame = pd.DataFrame({"colour": ["red", "blue", "red", "green"], "size": [3, 1, 3, 2]})
    codes, labels = encode_categorical(frame)
    assert labels == {"colour": ["blue", "green", "red"], "size": [1, 2, 3]}
    assert codes["colour"].tolist() == [2, 0, 2, 1]
    assert codes["size"].tolist() == [2, 0, 2, 1]
    assert all(pd.api.types.is_integer_dtype(t) for t in codes.dtypes)
    for column in frame.columns:
        assert [labels[column][c] for c in codes[column]] == frame[column].tolist()
    mixed, mixed_labels = encode_categorical(pd.DataFrame({"m": [1, "a", 1]}))
    assert mixed_labels["m"] == [1, "a"] and mixed["m"].tolist() == [0, 1, 0]


def test_encode_categorical_bad_input():
    with pytest.raises(ValueError, match="missing"):
        encode_categorical(pd.DataFrame({"a": ["x", None]}))
    with pytest.raises(TypeError, match="frame"):
        encode_categorical([["x"]])

"""dpcd.discover: data typing and validation, the registry, calibration to a total budget, writers."""

from __future__ import annotations

import importlib
import json
import math
from dataclasses import replace

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import dpcd
from dpcd.datasets import load_bnlearn, random_dag, sample_linear_gaussian
from dpcd.discovery.pc import Decider, pc, run_pc
from dpcd.plotting import ALGORITHM_COLOURS
from dpcd.privacy import PrivacyLedger

disc = importlib.import_module("dpcd.release")


# --------------------------------------------------------------------------- test-only algorithms


def pc_with_total_ledger(data, *, epsilon, alpha, rng, max_order=None):
    """Non-private PC with a ledger charging ``epsilon`` as if it were a total-budget algorithm (tests only)."""
    result = pc(data, ci_test="g2", alpha=alpha, max_order=max_order)
    ledger = PrivacyLedger("add/remove", public=("n", "domains"))
    ledger.charge("test charge", epsilon=epsilon / 4, count=4, kind="laplace")
    return replace(result, ledger=ledger)


def pc_over_budget(data, *, epsilon, alpha, rng, max_order=None):
    result = pc(data, ci_test="g2", alpha=alpha)
    ledger = PrivacyLedger()
    ledger.charge("too much", epsilon=2 * epsilon, kind="laplace")
    return replace(result, ledger=ledger)


FAKE = disc.AlgorithmSpec("fake_pc", "Fake-PC", "tests", pc_with_total_ledger, "categorical")
REGISTRY = {"fake_pc": FAKE}


@pytest.fixture(scope="module")
def asia_frame():
    data, _ = load_bnlearn("asia", 2_000, np.random.default_rng(3))
    labels = data.astype(object)
    for column in labels:
        labels[column] = np.where(data[column].to_numpy() == 0, "no", "yes")
    return labels


# --------------------------------------------------------------------------- registry


def test_registry_names_labels_and_colours():
    assert set(disc.ALGORITHMS) == {"em_pc", "lapmech", "priv_pc", "svt_pc", "curate", "privpc_star", "pcd",
                                    "noleaks", "curate_sb"}
    for name, spec in disc.ALGORITHMS.items():
        assert spec.name == name and spec.module == f"dpcd.discovery.{name}"
        assert spec.label in ALGORITHM_COLOURS  # same colour in every figure
        assert spec.data in ("categorical", "numeric")
    assert not disc.ALGORITHMS["pcd"].differentially_private  # local sensitivity only


def test_missing_module_is_reported_as_not_available():
    ghost = disc.AlgorithmSpec("ghost", "Ghost", "dpcd.discovery.ghost_algorithm", "ghost", "numeric")
    assert not ghost.available
    with pytest.raises(disc.AlgorithmUnavailable, match="not available in this version"):
        disc.resolve_algorithm("ghost", {"ghost": ghost})
    no_function = disc.AlgorithmSpec("pcx", "PCX", "dpcd.discovery.pc", "no_such_function", "numeric")
    with pytest.raises(disc.AlgorithmUnavailable, match="not available in this version"):
        no_function.load()
    with pytest.raises(disc.AlgorithmUnavailable, match="no differentially private algorithm for numeric"):
        disc.choose_algorithm("numeric", {"ghost": ghost})


def test_resolve_algorithm_by_name_or_label():
    assert disc.resolve_algorithm("Fake-PC", REGISTRY) is FAKE
    assert disc.resolve_algorithm("FAKE_PC", REGISTRY) is FAKE
    with pytest.raises(ValueError, match=r"algorithm must be 'auto' or one of \['fake_pc'\], got 'nope'"):
        disc.resolve_algorithm("nope", REGISTRY)


def test_auto_picks_an_available_algorithm_of_the_right_kind():
    available = disc.available_algorithms()
    for kind in ("categorical", "numeric"):
        candidates = [n for n, s in disc.ALGORITHMS.items()
                      if s.data == kind and s.differentially_private and available[n]]
        if not candidates:
            with pytest.raises(disc.AlgorithmUnavailable):
                disc.choose_algorithm(kind)
            continue
        spec = disc.choose_algorithm(kind)
        assert spec.data == kind and spec.differentially_private and spec.available
        preferred = [n for n in disc.AUTO_PREFERENCE[kind] if available[n]]
        assert spec.name == preferred[0]


# --------------------------------------------------------------------------- types and validation


def test_detect_types():
    frame = pd.DataFrame({
        "label": ["a", "b"] * 50,
        "code": np.arange(100) % 3,
        "many_ints": np.arange(100),
        "real": np.linspace(0, 1, 100),
        "flag": [True, False] * 50,
    })
    kinds = disc.detect_types(frame)
    assert kinds == {"label": "categorical", "code": "categorical", "many_ints": "numeric", "real": "numeric",
                     "flag": "categorical"}
    assert disc.detect_types(frame, "numeric")["code"] == "numeric"
    assert disc.detect_types(frame, "code=numeric, many_ints=categorical")["many_ints"] == "categorical"
    with pytest.raises(ValueError, match="types names column 'nope'"):
        disc.detect_types(frame, "nope=numeric")
    with pytest.raises(ValueError, match="column 'code' must be 'categorical' or 'numeric'"):
        disc.detect_types(frame, {"code": "ordinal"})
    with pytest.raises(ValueError, match="types must be"):
        disc.detect_types(frame, "sometimes")


@pytest.mark.parametrize(
    ("frame", "types", "match"),
    [
        (pd.DataFrame({"a": [0.1, np.nan] * 60, "b": np.arange(120.0)}), None, "column 'a' has 60 missing value"),
        (pd.DataFrame({"a": [1.5] * 120, "b": np.arange(120.0)}), None, "column 'a' is constant"),
        (pd.DataFrame({"a": np.arange(120) % 30, "b": np.arange(120) % 2}), "categorical", "column 'a' has 30 levels"),
        (pd.DataFrame({"a": np.arange(50.0), "b": np.arange(50.0) ** 2}), None, "50 rows; at least 100"),
        (pd.DataFrame({"a": np.arange(120.0)}), None, "1 column"),
        (pd.DataFrame({"a": ["x", "y"] * 60, "b": np.linspace(0, 1, 120)}), None, "mixes categorical column"),
        (pd.DataFrame({"a": ["x", "y"] * 60, "b": np.linspace(0, 1, 120)}), "numeric", "column 'a' is declared numeric"),
    ],
    ids=["nan", "constant", "levels", "rows", "one-column", "mixed", "strings-as-numeric"],
)
def test_prepare_data_rejects_bad_tables(frame, types, match):
    with pytest.raises(ValueError, match=match):
        disc.prepare_data(frame, types=types)


def test_prepare_data_encodes_categories(asia_frame):
    codes, kind, info = disc.prepare_data(asia_frame)
    assert kind == "categorical" and info["n"] == 2_000 and info["columns"] == list(asia_frame.columns)
    assert codes.dtypes.map(lambda d: d == np.int64).all()
    assert info["levels"]["asia"] == ["no", "yes"]
    numeric = pd.DataFrame({"x": np.linspace(0, 1, 200), "y": np.linspace(0, 1, 200) ** 2})
    values, kind, _ = disc.prepare_data(numeric)
    assert kind == "numeric" and values.dtypes.map(lambda d: d == np.float64).all()


def test_load_table_header_checks(tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("a,b,a\n1,2,3\n")
    with pytest.raises(ValueError, match=r"\['a'\] appear more than once"):
        disc.load_table(path)
    path.write_text("a,,c\n1,2,3\n")
    with pytest.raises(ValueError, match="without a name"):
        disc.load_table(path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        disc.load_table(tmp_path / "missing.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match="is empty"):
        disc.load_table(tmp_path / "empty.csv")


# --------------------------------------------------------------------------- calibration


class NeverIndependent(Decider):
    """Every CI test says dependent: the skeleton search makes every test it can."""

    def decide(self, x, y, S):
        return False


@pytest.mark.parametrize(("p", "max_order"), [(4, None), (6, 1), (7, 2), (5, 10)])
def test_worst_case_tests_is_the_count_of_a_search_that_removes_nothing(p, max_order):
    result = run_pc([f"v{i}" for i in range(p)], NeverIndependent(), max_order=max_order)
    assert disc.worst_case_tests(p, max_order) == result.n_tests


@pytest.mark.parametrize("name", ["priv_pc", "svt_pc", "pcd"])
@pytest.mark.parametrize("epsilon", [0.5, 4.0])
def test_calibration_fills_but_never_exceeds_the_budget(name, epsilon):
    spec = disc.ALGORITHMS[name]
    delta = 1e-6
    calibration = disc.calibrate(spec, p=8, epsilon=epsilon, delta=delta, max_order=2)
    per_round = calibration.kwargs[spec.epsilon_arg]
    rounds = disc.planned_rounds(spec, 8, 2)
    total = disc.plan_ledger(spec, per_round, rounds).total("tight", target_delta=delta)
    assert total.epsilon <= epsilon
    # the search stops within 3% of the largest feasible per-round epsilon
    bigger = disc.plan_ledger(spec, per_round * 1.03, rounds).total("tight", target_delta=delta)
    assert bigger.epsilon > epsilon
    # and the tight accountant buys more per round than basic composition would
    assert per_round > epsilon / (rounds + 1)


def test_calibration_of_total_budget_algorithms_passes_the_budget():
    spec = disc.ALGORITHMS["curate"]
    calibration = disc.calibrate(spec, p=8, epsilon=1.5, delta=1e-7)
    assert calibration.kwargs == {"epsilon_total": 1.5, "delta_total": 1e-7}
    assert disc.calibrate(FAKE, p=5, epsilon=2.0, delta=1e-6).kwargs == {"epsilon": 2.0}


# --------------------------------------------------------------------------- writers and the end-to-end call


def test_graph_json_and_dot_list_each_edge_once():
    g = nx.DiGraph()
    g.add_nodes_from(["a", "b", "c", "d"])
    g.add_edges_from([("a", "b"), ("c", "b"), ("c", "d"), ("d", "c")])
    payload = disc.graph_to_json(g)
    assert payload["nodes"] == ["a", "b", "c", "d"]
    assert payload["directed_edges"] == [["a", "b"], ["c", "b"]]
    assert payload["undirected_edges"] == [["c", "d"]]
    dot = disc.graph_to_dot(payload)
    assert dot.count("->") == 3 and '"c" -> "d" [dir=none];' in dot


def test_discover_writes_every_file(asia_frame, tmp_path):
    csv = tmp_path / "asia.csv"
    asia_frame.to_csv(csv, index=False)
    out = tmp_path / "out"
    found = dpcd.discover(csv, algorithm="fake_pc", epsilon=1.0, delta=1e-6, out=out, registry=REGISTRY,
                          progress=False)
    assert sorted(p.name for p in out.iterdir()) == sorted(disc.OUTPUT_FILES)
    graph = json.loads((out / "graph.json").read_text())
    assert set(graph) == {"graph_type", "algorithm", "nodes", "directed_edges", "undirected_edges"}
    assert graph["nodes"] == list(asia_frame.columns)
    edges = {tuple(e) for e in graph["directed_edges"]} | {tuple(e) for e in graph["undirected_edges"]}
    assert all(u in graph["nodes"] and v in graph["nodes"] for u, v in edges)
    expected = pc(disc.prepare_data(asia_frame)[0], ci_test="g2", alpha=0.05).cpdag
    assert set(found.graph.edges) == set(expected.edges)
    graphml = nx.read_graphml(out / "graph.graphml")
    assert set(graphml.nodes) == set(graph["nodes"]) and graphml.number_of_edges() == found.graph.number_of_edges()
    privacy = json.loads((out / "privacy.json").read_text())
    assert privacy["algorithm"] == "fake_pc" and privacy["neighbouring"] == "add/remove"
    assert privacy["totals"]["tight"]["epsilon"] <= 1.0 and privacy["achieved"]["epsilon"] <= 1.0
    assert {"basic", "advanced", "tight"} == set(privacy["totals"])
    assert privacy["mechanisms"] == [{"mechanism": "test charge", "kind": "laplace", "count": 4, "epsilon": 1.0,
                                      "delta": 0.0}]
    assert {"n", "domains", "column names"} <= set(privacy["assumed_public"])
    assert (out / "graph.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging folder left


def test_nothing_is_written_when_a_step_fails(asia_frame, tmp_path, monkeypatch):
    def broken_draw(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(disc, "_draw", broken_draw)
    with pytest.raises(OSError, match="disk full"):
        dpcd.discover(asia_frame, algorithm="fake_pc", epsilon=1.0, out=tmp_path / "out", registry=REGISTRY,
                      progress=False)
    assert list(tmp_path.iterdir()) == []


def test_over_budget_algorithm_is_refused_and_writes_nothing(asia_frame, tmp_path):
    greedy = {"greedy": disc.AlgorithmSpec("greedy", "Greedy", "tests", pc_over_budget, "categorical")}
    with pytest.raises(RuntimeError, match="above the requested"):
        dpcd.discover(asia_frame, algorithm="greedy", epsilon=1.0, out=tmp_path / "out", registry=greedy,
                      progress=False)
    assert list(tmp_path.iterdir()) == []


def test_out_folder_must_be_new_or_empty(asia_frame, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(ValueError, match="not an empty folder"):
        dpcd.discover(asia_frame, algorithm="fake_pc", epsilon=1.0, out=out, registry=REGISTRY, progress=False)
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    dpcd.discover(asia_frame, algorithm="fake_pc", epsilon=1.0, out=out, registry=REGISTRY, progress=False,
                  overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == sorted(disc.OUTPUT_FILES)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "epsilon must be > 0"),
        ({"epsilon": math.inf}, ValueError, "epsilon must be finite"),
        ({"epsilon": 1.0, "delta": 1.5}, ValueError, r"delta must lie in \(0, 1\)"),
        ({"epsilon": 1.0, "delta": 1e-3}, ValueError, "delta must be below 1/n"),
        ({"epsilon": 1.0, "alpha": 0.0}, ValueError, "alpha must lie in"),
        ({"epsilon": "1"}, TypeError, "epsilon must be a real number"),
        ({"epsilon": 1.0, "algorithm": "privpc_star"}, ValueError, "needs numeric data"),
        ({"epsilon": 1.0, "algorithm": "pcd"}, ValueError, "no differential-privacy guarantee"),
    ],
)
def test_discover_rejects_bad_arguments(asia_frame, kwargs, error, match):
    registry = {**REGISTRY, "privpc_star": replace(disc.ALGORITHMS["privpc_star"], function=pc_with_total_ledger),
                "pcd": replace(disc.ALGORITHMS["pcd"], data="categorical", function=pc_with_total_ledger)}
    kwargs = {"algorithm": "fake_pc", **kwargs}
    with pytest.raises(error, match=match):
        dpcd.discover(asia_frame, registry=registry, progress=False, **kwargs)


# --------------------------------------------------------------------------- the package's own algorithms


def _require(name):
    spec = disc.ALGORITHMS[name]
    if not spec.available:
        pytest.skip(f"{spec.label} is not part of this version")
    return spec


@pytest.mark.parametrize("name", ["em_pc", "lapmech", "curate", "svt_pc"])
def test_categorical_algorithms_stay_within_the_budget(name, asia_frame):
    _require(name)
    found = dpcd.discover(asia_frame, algorithm=name, epsilon=1.0, delta=1e-6, rng=5, progress=False)
    assert set(found.graph.nodes) == set(asia_frame.columns)
    assert found.privacy["within_budget"]
    assert found.privacy["achieved"]["epsilon"] <= 1.0 and found.privacy["achieved"]["delta"] <= 1e-6
    assert found.ledger.total("tight", target_delta=1e-6).epsilon <= 1.0


def test_numeric_auto_is_privpc_star_and_stays_within_the_budget():
    _require("privpc_star")
    dag = random_dag(5, 0.4, np.random.default_rng(1))
    data, _ = sample_linear_gaussian(dag, 2_000, np.random.default_rng(2))
    found = dpcd.discover(data, algorithm="auto", epsilon=2.0, delta=1e-6, rng=0, progress=False)
    assert found.auto_selected and found.algorithm == "privpc_star"
    assert found.privacy["achieved"]["epsilon"] <= 2.0
    assert list(found.graph.nodes) == list(data.columns)


# --------------------------------------------------------------------------- the cross-paper benchmark's cells


def test_benchmark_cell_rows_and_ranking():
    from dpcd.benchmark import dataset_kind, rank_table, run_cell, summarise

    assert dataset_kind("asia") == "categorical" and dataset_kind("nonlinear") == "numeric"
    with pytest.raises(ValueError, match="dataset must be"):
        dataset_kind("mnist")
    assert run_cell(dataset="linear_gaussian", algorithm="lapmech", epsilon=1.0, delta=1e-6, n=500, rng=0) == []
    _require("svt_pc")
    rows = run_cell(dataset="cancer", algorithm="svt_pc", epsilon=1.0, delta=1e-6, n=1_000, rng=0)
    assert len(rows) == 1 and rows[0]["error"] == "" and rows[0]["within_budget"]
    assert 0.0 <= rows[0]["f1"] <= 1.0 and rows[0]["epsilon_spent"] <= 1.0
    # ranking: per dataset among runs within the budget, 1 = best F1
    results = pd.DataFrame({
        "dataset": ["a", "a", "a", "b", "b", "b"], "label": ["X", "Y", "Z", "X", "Y", "Z"], "epsilon": [1.0] * 6,
        "f1": [0.9, 0.5, 0.99, 0.2, 0.4, 0.1], "skeleton_f1": 0.5, "shd": 1.0, "seconds": 0.1, "epsilon_spent": 1.0,
        "within_budget": [True, True, False, True, True, True], "error": "",
    })
    ranks = rank_table(summarise(results)).set_index("label")
    assert ranks.loc["X", "mean_rank"] == 1.5 and ranks.loc["Y", "mean_rank"] == 1.5
    assert ranks.loc["Z", "mean_rank"] == 3.0 and ranks.loc["Z", "datasets"] == 1  # over budget on a: not ranked


@pytest.mark.parametrize(("name", "dataset"), [("priv_pc", "asia"), ("svt_pc", "asia"), ("pcd", "linear_gaussian")])
def test_plan_charges_match_the_algorithms_ledgers(name, dataset):
    """Every kind an algorithm charges is a kind its worst-case plan charges (else the plan could under-count)."""
    from dpcd.benchmark import load_dataset

    spec = _require(name)
    data, _ = load_dataset(dataset, 2_000, np.random.default_rng(0))
    result = disc.run_algorithm(spec, data, epsilon=50.0, delta=1e-6, rng=1)  # a large budget: many charges
    planned = {kind for _, kind in spec.round_charges + spec.open_charges}
    charged = {entry.kind for entry in result.ledger.entries}
    assert charged and charged <= planned
    assert result.ledger.total("tight", target_delta=1e-6).epsilon <= 50.0

"""``python -m dpcd discover``: end to end on categorical and numeric CSVs, and every bad input -> exit 2."""

from __future__ import annotations

import importlib
import json
import re

import numpy as np
import pandas as pd
import pytest

from dpcd.cli import main
from dpcd.datasets import load_bnlearn, random_dag, sample_linear_gaussian

disc = importlib.import_module("dpcd.release")


@pytest.fixture(scope="module")
def csvs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("csv")
    asia, _ = load_bnlearn("asia", 2_000, np.random.default_rng(11))
    labels = asia.astype(object)
    for column in labels:
        labels[column] = np.where(asia[column].to_numpy() == 0, "no", "yes")
    labels.to_csv(folder / "asia.csv", index=False)
    dag = random_dag(5, 0.4, np.random.default_rng(4))
    gauss, _ = sample_linear_gaussian(dag, 2_000, np.random.default_rng(5))
    gauss.to_csv(folder / "gauss.csv", index=False)
    return folder


def _check_outputs(out, columns, epsilon, delta):
    assert sorted(p.name for p in out.iterdir()) == sorted(disc.OUTPUT_FILES)
    graph = json.loads((out / "graph.json").read_text())
    assert set(graph) == {"graph_type", "algorithm", "nodes", "directed_edges", "undirected_edges"}
    assert graph["nodes"] == columns
    for edge in graph["directed_edges"] + graph["undirected_edges"]:
        assert len(edge) == 2 and set(edge) <= set(columns) and edge[0] != edge[1]
    pairs = [frozenset(e) for e in graph["directed_edges"] + graph["undirected_edges"]]
    assert len(pairs) == len(set(pairs))  # each adjacency listed once
    privacy = json.loads((out / "privacy.json").read_text())
    for key in ("algorithm", "neighbouring", "mechanisms", "totals", "assumed_public", "requested", "achieved"):
        assert key in privacy
    assert privacy["neighbouring"] in ("add/remove", "replace")
    assert set(privacy["totals"]) == {"basic", "advanced", "tight"}
    assert privacy["totals"]["tight"]["epsilon"] <= epsilon and privacy["totals"]["tight"]["delta"] <= delta
    assert privacy["achieved"]["epsilon"] <= epsilon
    assert sum(m["count"] for m in privacy["mechanisms"]) == privacy["n_charges"] > 0
    return graph, privacy


def test_discover_categorical_bnlearn_csv(csvs, tmp_path, capsys):
    spec = disc.choose_algorithm("categorical") if any(
        s.available for s in disc.ALGORITHMS.values() if s.data == "categorical") else None
    if spec is None:
        pytest.skip("no categorical algorithm in this version")
    out = tmp_path / "asia-graph"
    status = main(["discover", str(csvs / "asia.csv"), "--algorithm", "auto", "--epsilon", "1", "--delta", "1e-6",
                   "--seed", "3", "--out", str(out), "--no-progress"])
    assert status == 0
    stdout = capsys.readouterr().out
    assert f"algorithm auto: picked {spec.label}" in stdout
    graph, privacy = _check_outputs(out, list(pd.read_csv(csvs / "asia.csv", nrows=1).columns), 1.0, 1e-6)
    assert privacy["algorithm"] == spec.name and privacy["auto_selected"] is True


@pytest.mark.parametrize("algorithm", ["auto", "svt_pc"])
def test_discover_named_algorithms(csvs, tmp_path, algorithm):
    name = disc.choose_algorithm("numeric").name if algorithm == "auto" else algorithm
    if not disc.ALGORITHMS[name].available:
        pytest.skip(f"{name} is not part of this version")
    data = "gauss.csv" if disc.ALGORITHMS[name].data == "numeric" else "asia.csv"
    out = tmp_path / "out"
    status = main(["discover", str(csvs / data), "--algorithm", algorithm, "--epsilon", "2", "--out", str(out),
                   "--no-progress"])
    assert status == 0
    _check_outputs(out, list(pd.read_csv(csvs / data, nrows=1).columns), 2.0, 1e-6)


def _write(folder, name, frame):
    path = folder / name
    frame.to_csv(path, index=False)
    return path


BASE = {"a": np.tile([0.1, 0.5, 0.9, 1.3], 50), "b": np.linspace(-1.0, 1.0, 200)}


@pytest.mark.parametrize(
    ("frame", "extra", "match"),
    [
        ({**BASE, "c": [np.nan] + [1.0] * 199}, [], "column 'c' has 1 missing value"),
        ({**BASE, "c": [2.0] * 200}, [], "column 'c' is constant"),
        ({"a": np.arange(200) % 25, "b": np.arange(200) % 2}, ["--types", "categorical"], "column 'a' has 25 levels"),
        ({"a": np.arange(40.0), "b": np.arange(40.0) ** 2}, [], "40 rows; at least 100"),
        (BASE, ["--epsilon", "0"], "epsilon must be > 0"),
        (BASE, ["--epsilon", "-1"], "epsilon must be > 0"),
        (BASE, ["--epsilon", "nan"], "epsilon must be a number"),
        (BASE, ["--delta", "1"], r"delta must lie in \(0, 1\)"),
        (BASE, ["--delta", "0.01"], "delta must be below 1/n"),
        (BASE, ["--alpha", "2"], r"alpha must lie in \(0, 1\)"),
        (BASE, ["--algorithm", "magic"], "algorithm must be 'auto' or one of"),
        (BASE, ["--types", "z=numeric"], "types names column 'z'"),
        ({"a": ["x", "y"] * 100, "b": np.linspace(0, 1, 200)}, [], "mixes categorical column"),
        (BASE, ["--seed", "-4"], "rng must be a non-negative integer seed"),
    ],
    ids=["nan", "constant", "levels", "rows", "eps0", "eps-neg", "eps-nan", "delta1", "delta-n", "alpha",
         "algorithm", "types", "mixed", "seed"],
)
def test_bad_input_exit_2_one_line_nothing_written(tmp_path, capsys, frame, extra, match):
    data = _write(tmp_path, "data.csv", pd.DataFrame(frame))
    out = tmp_path / "out"
    argv = ["discover", str(data), "--epsilon", "1", "--out", str(out), "--no-progress", *extra]
    status = main(argv)
    captured = capsys.readouterr()
    assert status == 2
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert re.search(match, lines[0]), lines[0]
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv"]  # no staging folder either


def test_invalid_float_exits_2_with_one_line(tmp_path, capsys):
    data = _write(tmp_path, "data.csv", pd.DataFrame(BASE))
    with pytest.raises(SystemExit) as exit_info:
        main(["discover", str(data), "--epsilon", "one", "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "argument --epsilon: invalid float value" in lines[0]
    assert not (tmp_path / "out").exists()


def test_missing_file_unavailable_algorithm_and_kind_mismatch(tmp_path, capsys, monkeypatch, csvs):
    out = tmp_path / "out"
    assert main(["discover", str(tmp_path / "none.csv"), "--epsilon", "1", "--out", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err
    ghost = disc.AlgorithmSpec("ghost", "Ghost", "dpcd.discovery.ghost_algorithm", "ghost", "numeric")
    monkeypatch.setitem(disc.ALGORITHMS, "ghost", ghost)
    assert main(["discover", str(csvs / "gauss.csv"), "--algorithm", "ghost", "--epsilon", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not available in this version" in err[0]
    if disc.ALGORITHMS["privpc_star"].available:
        assert main(["discover", str(csvs / "asia.csv"), "--algorithm", "privpc_star", "--epsilon", "1",
                     "--out", str(out)]) == 2
        assert "needs numeric data" in capsys.readouterr().err
    if disc.ALGORITHMS["pcd"].available:
        assert main(["discover", str(csvs / "gauss.csv"), "--algorithm", "pcd", "--epsilon", "1",
                     "--out", str(out)]) == 2
        assert "no differential-privacy guarantee" in capsys.readouterr().err
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    assert main(["discover", str(csvs / "gauss.csv"), "--epsilon", "1", "--out", str(out)]) == 2
    assert "not an empty folder" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["mine.txt"]

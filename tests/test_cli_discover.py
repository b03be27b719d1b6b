"""``dpcd discover`` and ``dpcd schema`` on the command line: end to end, and every bad input -> exit 2."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pandas as pd
import pytest

from dpcd.cli import main as cli_main
from dpcd.datasets import load_bnlearn, random_dag, sample_linear_gaussian
from dpcd.release import writers
from dpcd.schema import Schema


def main(argv):
    """The command line for the mechanics of a release on small samples, whatever their forecast says (``--force``);
    whether a release is worth having, and the refusal of one that is not, are tested in ``test_honest_releases``."""
    return cli_main([*argv, "--force"] if argv and argv[0] == "discover" else argv)


@pytest.fixture(scope="module")
def csvs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("csv")
    asia = load_bnlearn("asia", 2_000, np.random.default_rng(11)).data
    labels = asia.astype(object)
    for column in labels:
        labels[column] = np.where(asia[column].to_numpy() == 0, "no", "yes")
    labels.to_csv(folder / "asia.csv", index=False)
    Schema.from_json({"columns": {c: {"type": "categorical", "categories": ["no", "yes"]} for c in labels}}).save(
        folder / "asia.json")
    sample = sample_linear_gaussian(random_dag(5, 0.4, np.random.default_rng(4)), 2_000, np.random.default_rng(5))
    sample.data.to_csv(folder / "gauss.csv", index=False)
    sample.schema().save(folder / "gauss.json")
    return folder


def _check_outputs(out, columns, epsilon, delta):
    assert sorted(p.name for p in out.iterdir()) == sorted(writers.GRAPH_FILES + writers.FIGURE_FILES)
    graph = json.loads((out / "graph.json").read_text())
    assert set(graph) == {"graph_type", "algorithm", "nodes", "directed_edges", "undirected_edges"}
    assert graph["nodes"] == columns
    pairs = [frozenset(e) for e in graph["directed_edges"] + graph["undirected_edges"]]
    assert len(pairs) == len(set(pairs)) and all(len(p) == 2 and p <= set(columns) for p in pairs)
    privacy = json.loads((out / "privacy.json").read_text())
    for key in ("algorithm", "relation", "guarantee", "requested", "spent_this_run", "assumed_public", "schema"):
        assert key in privacy
    assert privacy["guarantee"]["epsilon"] <= epsilon and privacy["guarantee"]["delta"] <= delta
    assert sum(m["count"] for m in privacy["spent_this_run"]["mechanisms"]) == privacy["spent_this_run"]["n_charges"]
    return graph, privacy


def test_discover_categorical_csv_with_its_schema(csvs, tmp_path, capsys):
    out = tmp_path / "asia-graph"
    status = main(["discover", str(csvs / "asia.csv"), "--schema", str(csvs / "asia.json"), "--epsilon", "1",
                   "--seed", "3", "--out", str(out), "--no-progress"])
    assert status == 0
    stdout = capsys.readouterr().out
    _, privacy = _check_outputs(out, list(pd.read_csv(csvs / "asia.csv", nrows=1).columns), 1.0, 1e-6)
    picked = privacy["algorithm"]
    assert f"algorithm auto: picked {privacy['label']} ({picked}) by a forecast on synthetic data" in stdout
    assert "guarantee epsilon=1" in stdout and privacy["assumed_public"]["algorithm"]["auto_selected"] is True


def test_a_tab_separated_file_is_read_with_delimiter_tab(csvs, tmp_path, capsys):
    # the separator error names "--delimiter tab"; the CLI takes it, and a record of empty fields stays a record
    frame = pd.read_csv(csvs / "asia.csv")
    tsv = tmp_path / "asia.tsv"
    frame.to_csv(tsv, sep="\t", index=False)
    with tsv.open("a") as handle:
        handle.write("\t" * (frame.shape[1] - 1) + "\n")  # one record of missing values
    out = tmp_path / "tsv-graph"
    assert main(["discover", str(tsv), "--schema", str(csvs / "asia.json"), "--algorithm", "em_pc", "--epsilon",
                 "1", "--seed", "3", "--out", str(out), "--no-progress", "--delimiter", "tab"]) == 0
    privacy = json.loads((out / "privacy.json").read_text())
    assert privacy["assumed_public"]["n"] == len(frame) + 1 and "separated by a tab" in privacy["data_preparation"]
    assert main(["schema", str(tsv), "--check", str(csvs / "asia.json"), "--delimiter", "tab"]) == 0
    assert f"{len(frame) + 1} records read; 0 blank lines" in capsys.readouterr().out


@pytest.mark.parametrize("slash", ["", "/"])
def test_discover_names_its_output_folder_with_one_separator(csvs, tmp_path, capsys, slash):
    # `--out result/` (as the README types it) printed "wrote result//:"
    out = tmp_path / "result"
    assert main(["discover", str(csvs / "asia.csv"), "--schema", str(csvs / "asia.json"), "--algorithm", "em_pc",
                 "--epsilon", "1", "--seed", "3", "--out", str(out) + slash, "--no-progress"]) == 0
    assert f"wrote {out}{os.sep}: graph.dot" in capsys.readouterr().out


@pytest.mark.parametrize(("algorithm", "data"), [("auto", "gauss"), ("svt_pc", "asia"), ("priv_pc", "asia")])
def test_discover_named_algorithms(csvs, tmp_path, algorithm, data):
    out = tmp_path / "out"
    status = main(["discover", str(csvs / f"{data}.csv"), "--schema", str(csvs / f"{data}.json"), "--algorithm",
                   algorithm, "--epsilon", "2", "--max-order", "1", "--out", str(out), "--no-progress"])
    assert status == 0
    _check_outputs(out, list(pd.read_csv(csvs / f"{data}.csv", nrows=1).columns), 2.0, 1e-6)


def test_schema_command_drafts_a_valid_file_that_discover_refuses_until_checked(csvs, tmp_path, capsys):
    draft = tmp_path / "draft.json"
    assert main(["schema", str(csvs / "gauss.csv"), "--out", str(draft)]) == 0
    err = capsys.readouterr().err
    assert "read from the private data" in err and "data dictionary" in err
    spec = json.loads(draft.read_text())
    assert "read from the private data" in spec["draft"]
    assert {c["type"] for c in spec["columns"].values()} == {"numeric"}
    out = tmp_path / "out"
    assert main(["discover", str(csvs / "gauss.csv"), "--schema", str(draft), "--epsilon", "1", "--out",
                 str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "draft" in lines[0] and not out.exists()
    del spec["draft"]  # the holder checked it
    draft.write_text(json.dumps(spec))
    assert main(["discover", str(csvs / "gauss.csv"), "--schema", str(draft), "--epsilon", "1", "--out", str(out),
                 "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["schema", str(csvs / "asia.csv")]) == 0  # to standard output
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["columns"]) == set(pd.read_csv(csvs / "asia.csv", nrows=1).columns)


def test_discover_without_a_schema_exits_2_with_the_pointer(csvs, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["discover", str(csvs / "asia.csv"), "--epsilon", "1", "--out", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "dpcd schema" in lines[0] and "--schema" in lines[0]
    assert not out.exists()


def _write(folder, name, frame):
    path = folder / name
    frame.to_csv(path, index=False)
    return path


NUMERIC = {"columns": {"a": {"type": "numeric", "lower": 0, "upper": 2},
                       "b": {"type": "numeric", "lower": -1, "upper": 1}}}
BASE = {"a": np.tile([0.1, 0.5, 0.9, 1.3], 50), "b": np.linspace(-1.0, 1.0, 200)}


@pytest.mark.parametrize(
    ("frame", "schema", "extra", "match"),
    [
        ({"a": np.arange(40.0), "b": np.arange(40.0) ** 2}, NUMERIC, [], "40 rows; at least 100"),
        (BASE, NUMERIC, ["--epsilon", "0"], "epsilon must be > 0"),
        (BASE, NUMERIC, ["--epsilon", "-1"], "epsilon must be > 0"),
        (BASE, NUMERIC, ["--epsilon", "nan"], "epsilon must be a number"),
        (BASE, NUMERIC, ["--delta", "1"], r"delta must lie in \(0, 1\)"),
        (BASE, NUMERIC, ["--delta", "0.01"], "delta must be below 1/n"),
        (BASE, NUMERIC, ["--alpha", "2"], r"alpha must lie in \(0, 1\)"),
        (BASE, NUMERIC, ["--algorithm", "magic"], "algorithm must be 'auto' or one of"),
        (BASE, NUMERIC, ["--algorithm", "pcd"], "local sensitivity"),
        (BASE, NUMERIC, ["--algorithm", "noleaks"], "never below 1/n; a release needs delta < 1/n"),
        (BASE, NUMERIC, ["--algorithm", "curate_sb"], "never below 1/n; a release needs delta < 1/n"),
        (BASE, NUMERIC, ["--relation", "add/remove", "--algorithm", "privpc_star"],
         "add/remove guarantee.*em_pc or lapmech run on numeric columns binned"),
        ({**BASE, "c": 1.0}, NUMERIC, [], "does not declare"),
        (BASE, {"columns": {"a": {"type": "numeric", "lower": 0}}}, [], "needs public 'lower' and 'upper'"),
        (BASE, {"columns": {"a": {"type": "numeric", "lower": 0, "upper": 1}}}, [], "at least 2"),
        (BASE, {"columns": {"a": {"type": "categorical", "categories": list(range(25))},
                            "b": {"type": "categorical", "categories": ["x"]}}}, [], "more than 20 categories"),
        (BASE, NUMERIC, ["--seed", "-4"], "rng must be a non-negative integer seed"),
    ],
    ids=["rows", "eps0", "eps-neg", "eps-nan", "delta1", "delta-n", "alpha", "algorithm", "pcd", "noleaks", "curate_sb",
         "relation", "unknown-column", "schema-bounds", "one-column", "levels", "seed"],
)
def test_bad_input_exit_2_one_line_nothing_written(tmp_path, capsys, frame, schema, extra, match):
    data = _write(tmp_path, "data.csv", pd.DataFrame(frame))
    spec = tmp_path / "schema.json"
    spec.write_text(json.dumps(schema))
    out = tmp_path / "out"
    argv = ["discover", str(data), "--schema", str(spec), "--epsilon", "1", "--out", str(out), "--no-progress",
            *extra]
    status = main(argv)
    captured = capsys.readouterr()
    assert status == 2
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert re.search(match, lines[0]), lines[0]
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "schema.json"]  # no staging folder either


def test_values_the_schema_does_not_allow_do_not_stop_a_release(tmp_path, capsys):
    frame = pd.DataFrame(BASE).astype(object)
    frame.loc[0, "a"] = "n/a"
    frame.loc[1, "b"] = 1e9
    frame.loc[2, "a"] = None
    data = _write(tmp_path, "data.csv", frame)
    spec = tmp_path / "schema.json"
    spec.write_text(json.dumps(NUMERIC))
    assert main(["discover", str(data), "--schema", str(spec), "--epsilon", "1", "--out", str(tmp_path / "out"),
                 "--no-progress"]) == 0
    assert "1000000000" not in (tmp_path / "out" / "privacy.json").read_text()


def test_invalid_float_exits_2_with_one_line(tmp_path, capsys):
    data = _write(tmp_path, "data.csv", pd.DataFrame(BASE))
    with pytest.raises(SystemExit) as exit_info:
        main(["discover", str(data), "--epsilon", "one", "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "argument --epsilon: invalid float value" in lines[0]
    assert not (tmp_path / "out").exists()


def test_missing_file_and_occupied_out_folder(tmp_path, capsys, csvs):
    out = tmp_path / "out"
    assert main(["discover", str(tmp_path / "none.csv"), "--schema", str(csvs / "gauss.json"), "--epsilon", "1",
                 "--out", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["discover", str(csvs / "gauss.csv"), "--schema", str(tmp_path / "none.json"), "--epsilon", "1",
                 "--out", str(out)]) == 2
    assert "schema file" in capsys.readouterr().err
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    assert main(["discover", str(csvs / "gauss.csv"), "--schema", str(csvs / "gauss.json"), "--epsilon", "1",
                 "--out", str(out)]) == 2
    assert "not an empty folder" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["mine.txt"]


def test_ctrl_c_leaves_nothing_half_written(tmp_path, monkeypatch, capsys):
    # an interrupt while the files are written (the last and longest step of a release) leaves no output folder
    # and no staging folder; the command line says "interrupted" and exits 130
    sample = load_bnlearn("cancer", 1_000, rng=0)
    data = tmp_path / "cancer.csv"
    sample.data.to_csv(data, index=False)
    spec = sample.schema().save(tmp_path / "schema.json")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(writers, "_draw", interrupted)
    out = tmp_path / "release"
    status = main(["discover", str(data), "--schema", str(spec), "--epsilon", "1", "--out", str(out),
                   "--no-progress", "--forecast", "0"])
    assert status == 130 and "interrupted" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cancer.csv", "schema.json"]

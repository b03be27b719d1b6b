"""Tables, paper-vs-reproduced comparisons, REPORT.md, and the figure helpers."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from dpcd_papers import plotting, reporting
from dpcd_papers.cli import main  # noqa: E402

# --------------------------------------------------------------------------- tables


def test_write_table_writes_csv_and_markdown(tmp_path):
    df = pd.DataFrame({"network": ["asia", "a|b"], "f1": [0.912345, math.nan], "n": [10, 2000], "ok": [True, False]})
    csv_path, md_path = reporting.write_table(df, tmp_path / "out", "scores")
    assert csv_path == tmp_path / "out" / "scores.csv" and md_path == tmp_path / "out" / "scores.md"
    pd.testing.assert_frame_equal(pd.read_csv(csv_path), df)
    lines = md_path.read_text().splitlines()
    assert len(lines) == 4
    assert lines[0].split("|")[1].strip() == "network"
    rule = [cell.strip() for cell in lines[1].strip("| ").split(" | ")]
    assert rule[0].endswith("-") and rule[1].endswith(":") and rule[2].endswith(":")  # numbers right-aligned
    assert "0.9123" in lines[2] and "yes" in lines[2]
    assert "a\\|b" in lines[3]  # pipes escaped, NaN empty
    assert [c.strip() for c in lines[3].strip("|").split(" | ")][1] == ""
    assert not list((tmp_path / "out").glob(".*"))  # no temporary files left


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (("not a frame", "x"), TypeError, "df must be a pandas DataFrame"),
        ((pd.DataFrame({"a": [1]}), "sub/name"), ValueError, "name must be a plain file name"),
        ((pd.DataFrame({"a": [1]}), 3), TypeError, "name must be a string"),
    ],
)
def test_write_table_rejects_bad_input(tmp_path, args, error, match):
    with pytest.raises(error, match=match):
        reporting.write_table(args[0], tmp_path, args[1])


def test_load_paper_values_from_data_dir(tmp_path, monkeypatch):
    (tmp_path / "paper_values").mkdir()
    pd.DataFrame({"item": ["t1"], "metric": ["F1"], "value": [0.8], "tolerance": [0.05]}).to_csv(
        tmp_path / "paper_values" / "toy.csv", index=False
    )
    monkeypatch.setenv("DPCD_DATA_DIR", str(tmp_path))
    values = reporting.load_paper_values("toy")
    assert values.to_dict("records") == [{"item": "t1", "metric": "F1", "value": 0.8, "tolerance": 0.05}]
    with pytest.raises(ValueError, match=r"paper 'nope'.*available: \['toy'\]"):
        reporting.load_paper_values("nope")
    monkeypatch.delenv("DPCD_DATA_DIR")
    assert reporting.data_dir().name == "data"


# --------------------------------------------------------------------------- comparisons

PAPER = pd.DataFrame(
    {
        "network": ["asia", "asia", "sachs", "child", "alarm"],
        "epsilon": [1.0, 0.1, 1.0, 1.0, 1.0],
        "metric": ["F1", "F1", "F1", "F1", "F1"],
        "value": [0.80, 0.50, 0.70, 0.60, 0.9],
        "sd": [0.05, 0.05, np.nan, 0.05, 0.05],
        "runs": [5, 5, np.nan, 5, 5],
        "floor": [0.01, 0.01, 0.02, 0.01, 0.01],
        "note": ["Table 2", "Table 2", "Table 2, no sd printed", "Table 2", "Table 3"],
    }
)
PAPER_OFF_CONSTANTS = PAPER.assign(value=[0.80, 0.62, 0.70, 0.60, 0.9])
"""PAPER with asia's ε = 0.1 value away from the constants 0, 0.5 and 1, so a diagnostic matching it can explain."""

OURS = pd.DataFrame(
    {"network": ["asia", "asia", "sachs", "child"], "epsilon": [1, 0.1, 1.0, 1.0], "value": [0.83, 0.30, 0.69, 0.5],
     "sd": [0.05, 0.05, np.nan, 0.01], "runs": [5, 5, 1, 5], "metric": ["F1"] * 4}
)


def test_compare_gives_each_verdict():
    table = reporting.compare(PAPER, OURS, on=["network", "epsilon", "metric"], line="em_pc", paper="em_pc")
    assert list(table.columns) == list(reporting.COMPARISON_COLUMNS)
    assert table["verdict"].tolist() == ["reproduced", "not reproduced", "reproduced", "not reproduced",
                                         "not computed"]
    assert table["item"].tolist()[:2] == ["network=asia, epsilon=1", "network=asia, epsilon=0.1"]
    assert table["claim_id"].iloc[0] == "em_pc:network=asia,epsilon=1:f1"
    assert table["claim_id"].is_unique
    assert table["difference"].iloc[0] == pytest.approx(0.03)
    # two-sample 95 % interval: 1.96 * sqrt(0.05^2/5 + 0.05^2/5)
    assert table["tolerance"].iloc[0] == pytest.approx(1.959964 * math.sqrt(2 * 0.05 ** 2 / 5), rel=1e-5)
    assert table["tolerance"].iloc[2] == 0.02  # no sd on either side: the row's floor
    assert table["paper"].eq("em_pc").all() and table["metric"].eq("F1").all() and table["line"].eq("em_pc").all()
    assert table["note"].iloc[2] == "Table 2, no sd printed"
    assert math.isnan(table["ours"].iloc[4])


def test_tolerances_grow_when_runs_shrink():
    widths = [reporting.sampling_tolerance(paper_sd=0.1, paper_runs=5, ours_sd=0.1, ours_runs=runs)
              for runs in (50, 20, 5, 2, 1)]
    assert widths == sorted(widths) and widths[-1] > 1.5 * widths[0]
    assert reporting.sampling_tolerance(paper_sd=0.1, paper_runs=2, ours_sd=0.1, ours_runs=5) > widths[2]
    # the same difference is reproduced with 2 runs of ours and not with 50
    paper = pd.DataFrame({"item": ["x"], "metric": ["f1"], "value": [0.3], "sd": [0.1], "runs": [5]})
    verdicts = [reporting.compare(paper, pd.DataFrame({"item": ["x"], "metric": ["f1"], "value": [0.43],
                                                       "sd": [0.1], "runs": [runs]}),
                                  on=["item", "metric"], line="ours")["verdict"].iloc[0] for runs in (2, 50)]
    assert verdicts == ["reproduced", "not reproduced"]
    assert reporting.sampling_tolerance(floor=0.05) == 0.05
    with pytest.raises(ValueError, match="level must lie in"):
        reporting.sampling_tolerance(paper_sd=0.1, level=1.0)


def test_a_constant_predictor_fails_where_the_paper_is_informative():
    """0.5 for every accuracy of a paper whose accuracies spread over [0.3, 0.9] is mostly not reproduced."""
    paper = pd.DataFrame({"item": [f"pair {i}" for i in range(8)], "metric": ["accuracy"] * 8,
                          "value": [0.3, 0.45, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9], "runs": [100] * 8})
    constant = pd.DataFrame({"item": paper["item"], "metric": "accuracy", "value": 0.5,
                             "sd": 0.5, "runs": 100})  # a coin: sd 0.5 per run
    table = reporting.compare(paper, constant, on=["item", "metric"], line="constant")
    assert (table["verdict"] == "not reproduced").mean() >= 0.75


def test_compare_rejects_ambiguous_or_incomplete_input():
    with pytest.raises(ValueError, match="aggregate first"):
        reporting.compare(PAPER, pd.concat([OURS, OURS]), on=["network", "epsilon", "metric"], line="x")
    with pytest.raises(ValueError, match="on column 'seed' is missing"):
        reporting.compare(PAPER, OURS, on=["network", "seed"], line="x")
    with pytest.raises(ValueError, match="not a number; state claims without a number with qualitative_claim"):
        reporting.compare(PAPER.assign(value=[0.8, np.nan, 0.7, 0.6, 0.9]), OURS,
                          on=["network", "epsilon", "metric"], line="x")
    with pytest.raises(ValueError, match="ours_column 'f1'"):
        reporting.compare(PAPER, OURS, on=["network"], ours_column="f1", line="x")
    with pytest.raises(TypeError, match="ours must be a pandas DataFrame"):
        reporting.compare(PAPER, OURS.to_dict(), on=["network"], line="x")
    with pytest.raises(TypeError, match="line must name"):
        reporting.compare(PAPER, OURS, on=["network", "epsilon", "metric"], line="")


def test_qualitative_claims_are_judged_and_saved(tmp_path):
    held = reporting.qualitative_claim("dpcd", "dpcd:asia:skeleton", "asia", "skeleton equals causal-learn's",
                                       holds=3, cells=3, line="pc")
    failed = reporting.qualitative_claim("curate", "curate:fig4:best", "Fig. 4", "CURATE has the best F1",
                                         holds=6, cells=25, line="curate", diagnosis="worst-case sensitivity")
    assert held["verdict"] == "reproduced" and failed["verdict"] == "not reproduced"
    assert failed["ours"] == pytest.approx(0.24) and failed["paper_value"] == "CURATE has the best F1"
    assert reporting.qualitative_claim("p", "p:x", "x", "c", holds=0, cells=0, line="l",
                                       diagnosis="needs 2 h")["verdict"] == "not computed"
    path = reporting.save_comparison([held, failed], tmp_path)
    assert path == tmp_path / "comparison.csv" and (tmp_path / "comparison.md").exists()
    back = reporting.read_comparison(path)
    assert back["verdict"].tolist() == ["reproduced", "not reproduced"]
    assert back["paper_value"].tolist() == ["skeleton equals causal-learn's", "CURATE has the best F1"]
    with pytest.raises(ValueError, match="holds must lie in"):
        reporting.qualitative_claim("p", "p:x", "x", "c", holds=4, cells=3, line="l")


def test_save_comparison_checks_one_row_per_claim_and_diagnoses(tmp_path):
    rows = [reporting.qualitative_claim("p", "p:x", "x", "claim", holds=1, cells=1, line="l")]
    with pytest.raises(ValueError, match="missing comparison column"):
        reporting.save_comparison(pd.DataFrame({"verdict": ["reproduced"]}), tmp_path)
    with pytest.raises(ValueError, match="unknown verdict"):
        reporting.save_comparison(pd.DataFrame([{**rows[0], "verdict": "qualitative"}]), tmp_path)
    with pytest.raises(ValueError, match="several rows for claim"):
        reporting.save_comparison(rows + rows, tmp_path)
    with pytest.raises(ValueError, match="needs a diagnosis"):
        reporting.save_comparison([{**rows[0], "verdict": "not reproduced"}], tmp_path)
    assert not (tmp_path / "comparison.csv").exists()  # nothing half-written


def test_diagnose_and_attach_diagnostic():
    table = reporting.compare(PAPER, OURS, on=["network", "epsilon", "metric"], line="em_pc", paper="em_pc")
    diagnostic = pd.DataFrame({"claim_id": table["claim_id"].iloc[[1, 3]], "value": [0.49, 0.2]})
    table = reporting.attach_diagnostic(table, diagnostic, name="em_pc without the budget stop (not DP)")
    table = reporting.diagnose(table, lambda row: "budget stop" if row["diagnostic"] else "needs alarm at n=1e5")
    assert table["verdict"].tolist()[1] == "not reproduced"  # a diagnostic never changes a verdict
    assert table["diagnosis"].tolist() == ["", "budget stop", "", "budget stop", "needs alarm at n=1e5"]
    assert reporting.explained(table).tolist() == [False] * 5  # 0.49 matches the constant 0.5 too: no explanation
    away = reporting.compare(PAPER_OFF_CONSTANTS, OURS, on=["network", "epsilon", "metric"], line="em_pc",
                             paper="em_pc")
    diagnostic = pd.DataFrame({"claim_id": away["claim_id"].iloc[[1, 3]], "value": [0.61, 0.2]})
    away = reporting.attach_diagnostic(away, diagnostic, name="em_pc without the budget stop (not DP)")
    assert reporting.explained(away).tolist() == [False, True, False, False, False]
    qualitative = pd.DataFrame([reporting.qualitative_claim("p", "p:x", "x", "claim", holds=1, cells=4, line="l",
                                                            diagnosis="d")])
    holds = reporting.attach_diagnostic(qualitative, pd.DataFrame({"claim_id": ["p:x"], "value": [0.9]}), name="d")
    assert reporting.explained(holds).tolist() == [True]
    unmatched = reporting.attach_diagnostic(qualitative, pd.DataFrame({"claim_id": ["other"], "value": [0.9]}),
                                            name="d")
    assert unmatched["diagnostic"].tolist() == [""] and math.isnan(unmatched["diagnostic_value"].iloc[0])


# --------------------------------------------------------------------------- REPORT.md


@pytest.fixture
def results_dir(tmp_path):
    """An output folder as two notebook runs leave it (one without run.json)."""
    first = tmp_path / "em_pc"
    first.mkdir()
    table = reporting.compare(PAPER, OURS, on=["network", "epsilon", "metric"], line="em_pc", paper="em_pc")
    table = reporting.diagnose(table, lambda row: "cause")
    reporting.save_comparison(table, first)
    (first / "run.json").write_text(json.dumps({
        "notebook": "em_pc", "profile": "smoke", "date": "2024-01-01 00:00 UTC", "seconds": 12.3, "n_jobs": 2,
        "python": "3.11.0", "packages": {"dpcd": "0.1.0", "numpy": "2.0"},
        "time_profile": {"cells": [], "imported_from_archive": 0,
                         "grids": [{"function": "run_cell", "runs": 10, "from_cache": 4, "seconds": 9000.0,
                                    "cpu_seconds": 8000.0}],
                         "hot_spots": [{"function": "run_cell", "cell": "p=5, n=100", "runs": 5, "seconds": 8000.0,
                                        "seconds_per_run": 1600.0}]},
    }))
    (first / "citing.md").write_text("Cite Table 2 with care.\n")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    plotting.savefig(fig, first, "f1_vs_epsilon")
    plt.close(fig)
    reporting.write_table(pd.DataFrame({"a": [1]}), first, "scores")
    second = tmp_path / "pc_baseline"
    second.mkdir()
    reporting.save_comparison([reporting.qualitative_claim("dpcd", "dpcd:asia:skeleton", "asia", "skeleton",
                                                           holds=1, cells=1, line="pc")], second)
    (tmp_path / "not_a_notebook").mkdir()
    return tmp_path


def test_build_report_collects_every_comparison(results_dir):
    path = reporting.build_report(results_dir)
    assert path == results_dir / "REPORT.md"
    text = path.read_text()
    assert text.index("## Summary") < text.index("## em_pc") < text.index("## pc_baseline")
    assert re.search(r"\| em_pc +\| +5 \| +2 \| +2 \| +0 \| +0 \| +0 \| +1 \| \[em_pc\]\(#em_pc\) \(smoke\)", text)
    assert re.search(r"\| total +\| +5 \| +2 \| +2 \| +0 \| +0 \| +0 \| +1 \|", text)  # papers only
    assert re.search(r"\| dpcd +\| +1 \| +1 \| +0 \|", text)  # the library's own claims, apart
    assert "### If you cite Xu, Yuan, Wu" in text and "Cite Table 2 with care." in text
    assert "Profile **smoke**, run on 2024-01-01 00:00 UTC in 12.3 s" in text
    assert ("Claims: 5; 2 reproduced, 2 not reproduced, 0 uninformative, 0 not refuted, 1 not computed "
            "(0 explained by a diagnostic).") in text
    assert "![f1_vs_epsilon](em_pc/f1_vs_epsilon.png)" in text and "(em_pc/f1_vs_epsilon.svg)" in text
    assert "[scores](em_pc/scores.md)" in text and "[citing]" not in text
    assert "No run.json in this folder" in text
    assert str(results_dir) not in text  # links are relative
    assert text.index("## Summary") < text.index("## Run time") < text.index("## em_pc")
    assert re.search(r"\| em_pc +\| smoke +\| +2 \| 12.3 s +\| +10 \| +4 \| 2.5 h +\| 2.2 h +\| "
                     r"run_cell\(p=5, n=100\): 5 runs, 2.2 h", text)
    assert "Hot spots (grid cells by compute seconds, summed over repetitions):\n\n- `run_cell(p=5, n=100)`: 5 runs" in text
    assert "- Cite Table 2 with care." in text  # "If you cite" is a list of sentences


def report_layout_problems(text: str) -> list[str]:
    """Prose lines of a REPORT over 300 characters (tables excepted), and the stutter of the own-claims line."""
    problems = [line[:80] for line in text.splitlines() if len(line) > 300 and not line.startswith("|")]
    return problems + (["stutter"] if "own claims (this library's own claims" in text else [])


def test_report_layout_rule(results_dir):
    """No prose line over ~300 characters, the citing paragraphs as bullets, no stutter (here and committed)."""
    paragraph = "A long sentence " + "that goes on " * 40 + "and ends."
    (results_dir / "em_pc" / "citing.md").write_text(paragraph + " Second sentence, cf. Fig. 2. Third.\n")
    text = reporting.build_report(results_dir).read_text()
    assert report_layout_problems(text) == []
    assert "\n- Second sentence, cf. Fig. 2.\n- Third.\n" in text
    assert report_layout_problems("x" * 10 + " " + "word " * 70) != []  # the rule can fail
    committed = Path(__file__).resolve().parents[1] / "figures" / "REPORT.md"
    assert report_layout_problems(committed.read_text(encoding="utf-8")) == []


def test_time_table_rows_only_where_a_run_json_exists(results_dir):
    table = reporting.time_table(results_dir)
    assert table["notebook"].tolist() == ["em_pc"]
    assert table.loc[0, ["grid_runs", "from_cache", "grid_seconds"]].tolist() == [10, 4, 9000.0]


def test_a_claim_judged_in_two_notebooks_is_refused(results_dir):
    twice = results_dir / "again"
    reporting.save_comparison([reporting.qualitative_claim("dpcd", "dpcd:asia:skeleton", "asia", "skeleton",
                                                           holds=1, cells=1, line="pc")], twice)
    with pytest.raises(ValueError, match="judged in one notebook only; dpcd:asia:skeleton in again, pc_baseline"):
        reporting.build_report(results_dir)


def test_report_command(results_dir, tmp_path, capsys):
    assert main(["report", "--out", str(results_dir)]) == 0
    assert (results_dir / "REPORT.md").exists()
    assert ("5 paper claims: 2 reproduced, 2 not reproduced (0 of them explained by a diagnostic), "
            "0 uninformative, 0 not refuted, 1 not computed") in capsys.readouterr().out
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["report", "--out", str(empty)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no */comparison.csv" in err
    assert not (empty / "REPORT.md").exists()


# --------------------------------------------------------------------------- figures


def test_savefig_writes_png_and_svg_reproducibly(tmp_path):
    plotting.set_style()
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [1, 0, 1])
    png, svg = plotting.savefig(fig, tmp_path, "line")
    first = svg.read_bytes()
    plotting.savefig(fig, tmp_path, "line")
    plt.close(fig)
    assert png.read_bytes()[:4] == b"\x89PNG" and svg.read_bytes() == first  # no timestamps
    assert sorted(p.name for p in tmp_path.iterdir()) == ["line.png", "line.svg"]
    with pytest.raises(ValueError, match="without folder or extension"):
        plotting.savefig(fig, tmp_path, "line.png")
    with pytest.raises(TypeError, match="fig must be a matplotlib Figure"):
        plotting.savefig(ax, tmp_path, "x")


def test_algorithm_colours_and_palette():
    names = ["PC", "EM-PC", "LapMech", "PrivPC*", "Priv-PC", "SVT-PC", "PCD", "CURATE", "CURATE-SB",
             "NOLEAKS", "NOTEARS", "ANM", "Marginal-PC", "MST-PC", "AIM-PC", "Moment-PC", "GCM-PC", "auto (discover)",
             "PC (not private)"]
    assert set(plotting.ALGORITHM_COLOURS) == set(names) == set(plotting.ALGORITHM_MARKERS)
    assert len({plotting.ALGORITHM_COLOURS[n] for n in names if n != "ANM"}) == len(names) - 1
    palette = plotting.palette_for(["Priv-PC", "mine", "other"])
    assert palette["Priv-PC"] == plotting.ALGORITHM_COLOURS["Priv-PC"]
    assert len(set(palette.values())) == 3


def test_draw_graph_draws_undirected_edges_without_arrows():
    g = nx.DiGraph([("A", "B"), ("B", "A"), ("B", "C"), ("D", "C")])
    fig, ax = plt.subplots()
    pos = plotting.draw_graph(g, ax, title="CPDAG")
    arrows = [p for p in ax.patches if isinstance(p, matplotlib.patches.FancyArrowPatch)]
    lines = [c for c in ax.collections if isinstance(c, matplotlib.collections.LineCollection)]
    assert len(arrows) == 2  # B->C and D->C
    assert len(lines) == 1 and len(lines[0].get_segments()) == 1  # A-B once, no arrow head
    assert set(pos) == set(g) and ax.get_title() == "CPDAG"
    fig2, ax2 = plt.subplots()
    assert plotting.draw_graph(nx.DiGraph([("A", "B")]), ax2, pos=pos) == pos
    with pytest.raises(ValueError, match="no position for node"):
        plotting.draw_graph(nx.DiGraph([("A", "Z")]), ax2, pos=pos)
    with pytest.raises(TypeError, match="g must be a networkx.DiGraph"):
        plotting.draw_graph(nx.Graph(), ax2)
    plt.close("all")


def test_errorbar_plot_draws_mean_and_std():
    df = pd.DataFrame({"epsilon": [0.1, 0.1, 1.0, 1.0] * 2, "f1": [0.2, 0.4, 0.8, 0.8, 0.5, 0.5, 0.9, 0.7],
                       "algorithm": ["EM-PC"] * 4 + ["Priv-PC"] * 4})
    ax = plotting.errorbar_plot(df, "epsilon", "f1", "algorithm", logx=True)
    line = ax.get_lines()[0]
    assert np.allclose(line.get_ydata(), [0.3, 0.8])
    assert line.get_color() == plotting.ALGORITHM_COLOURS["EM-PC"]
    assert ax.get_xscale() == "log" and [t.get_text() for t in ax.get_legend().get_texts()] == ["EM-PC", "Priv-PC"]
    with pytest.raises(ValueError, match="hue='method' is not a column"):
        plotting.errorbar_plot(df, "epsilon", "f1", "method")
    plt.close("all")


def test_full_profile_wall_adds_the_full_runs_only(results_dir):
    assert reporting.full_profile_wall(results_dir) == 0.0  # the one run.json is a smoke run
    assert "run in the full profile took" not in reporting.build_report(results_dir).read_text()
    for name, seconds, cached in (("em_pc", 3000.0, 4), ("priv_pc", 600.0, 0)):
        folder = results_dir / name
        folder.mkdir(exist_ok=True)
        info = json.loads((results_dir / "em_pc" / "run.json").read_text()) if name == "em_pc" else {}
        info.update(profile="full", seconds=seconds,
                    time_profile={"grids": [{"function": "f", "runs": 5, "from_cache": cached, "seconds": 1.0,
                                             "cpu_seconds": 1.0}], "hot_spots": []})
        (folder / "run.json").write_text(json.dumps(info))
    assert reporting.full_profile_wall(results_dir) == 3600.0
    text = " ".join(reporting.build_report(results_dir).read_text().split())  # prose is wrapped
    assert ("The 2 notebooks run in the full profile took 60.0 min together (the sum of their wall times above, "
            "one notebook after another); 1 of them took part of their grid from the cache, and count at least "
            "their cells' CPU time over their jobs") in text
    # a resumed run whose own wall is short counts its cells' CPU time over its jobs, not the short wall
    info = json.loads((results_dir / "em_pc" / "run.json").read_text())
    info.update(seconds=10.0, n_jobs=2, time_profile={"grids": [{"function": "f", "runs": 5, "from_cache": 5,
                                                                 "seconds": 9000.0, "cpu_seconds": 8000.0}],
                                                      "hot_spots": []})
    (results_dir / "em_pc" / "run.json").write_text(json.dumps(info))
    assert reporting.full_profile_wall(results_dir) == 600.0 + 4000.0


def test_a_diagnostic_is_judged_with_its_own_spread_and_its_companions():
    table = reporting.compare(PAPER_OFF_CONSTANTS, OURS, on=["network", "epsilon", "metric"], line="em_pc", paper="em_pc")
    missed = table.index[table["verdict"] == "not reproduced"][0]
    claim = table.at[missed, "claim_id"]
    near = table.at[missed, "paper_value"] + 0.9 * table.at[missed, "tolerance"]
    wide = reporting.attach_diagnostic(table, pd.DataFrame({"claim_id": [claim], "value": [near]}), name="d")
    assert reporting.explained(wide).loc[missed]  # no spread of its own: the row's tolerance
    tight = reporting.attach_diagnostic(table, pd.DataFrame({"claim_id": [claim], "value": [near],
                                                             "tolerance": [0.1 * table.at[missed, "tolerance"]]}),
                                        name="d")
    assert not reporting.explained(tight).any()  # outside its own, narrower interval: not explained
    assert tight.at[missed, "diagnostic_tolerance"] == pytest.approx(0.1 * table.at[missed, "tolerance"])
    pair = pd.DataFrame({"claim_id": ["a:tpr", "a:tdr"], "paper": "p", "item": "setting a", "metric": ["tpr", "tdr"],
                         "paper_value": [0.75, 0.7], "ours": [0.3, 0.7], "difference": [-0.45, 0.0],
                         "tolerance": [0.1, 0.1], "verdict": ["not reproduced", "reproduced"], "line": "l",
                         "diagnosis": ["d", ""], "diagnostic": "", "diagnostic_value": math.nan,
                         "diagnostic_tolerance": math.nan, "note": ""})
    both = reporting.attach_diagnostic(pair, pd.DataFrame({"claim_id": ["a:tpr", "a:tdr"], "value": [0.75, 0.7]}),
                                       name="d")
    assert reporting.explained(both).tolist() == [True, False]
    companion_misses = reporting.attach_diagnostic(pair, pd.DataFrame({"claim_id": ["a:tpr", "a:tdr"],
                                                                       "value": [0.75, 0.3]}), name="d")
    assert reporting.explained(companion_misses).tolist() == [False, False]


def test_comparisons_written_before_the_diagnostic_tolerance_column_still_read(tmp_path):
    table = reporting.compare(PAPER, OURS, on=["network", "epsilon", "metric"], line="em_pc", paper="em_pc")
    table = reporting.diagnose(table, lambda row: "cause")
    table.drop(columns="diagnostic_tolerance").to_csv(tmp_path / "comparison.csv", index=False)
    read = reporting.read_comparison(tmp_path / "comparison.csv")
    assert list(read.columns) == list(reporting.COMPARISON_COLUMNS) and read["diagnostic_tolerance"].isna().all()


def test_a_degenerate_diagnostic_cannot_explain_a_miss():
    """A type II error of 0 from a line that rejects true hypotheses (type I ≥ 0.5) explains nothing; a sound one
    (type I 0.05) still does."""
    rows = []
    for claim in ("a", "b"):
        row = {c: "" for c in reporting.COMPARISON_COLUMNS}
        row.update(claim_id=claim, paper="p", item=claim, metric="type II error", paper_value=0.2, ours=0.6,
                   tolerance=0.05, verdict="not reproduced", diagnostic="d", diagnostic_value=0.2,
                   diagnostic_tolerance=0.05, note="")
        rows.append(row)
    frame = pd.DataFrame(rows)
    assert reporting.explained(frame).tolist() == [True, True]
    companions = pd.DataFrame({"claim_id": ["a", "b"], "companion": "type I", "value": [1.0, 0.05]})
    marked = reporting.mark_degenerate_diagnostics(frame, companions)
    assert reporting.explained(marked).tolist() == [False, True]
    assert reporting.DEGENERATE_NOTE in marked.loc[0, "note"] and marked.loc[1, "note"] == ""
    # a type II error of 0 that the diagnostic matches is the constant 0's too: no explanation at all
    assert reporting.explained(frame.assign(paper_value=0.0, diagnostic_value=0.0)).tolist() == [False, False]
    at_threshold = companions.assign(value=[reporting.DEGENERATE_RATE, 0.49])
    assert reporting.explained(reporting.mark_degenerate_diagnostics(frame, at_threshold)).tolist() == [False, True]

"""Honest releases: refusals public inputs decide come first, a release not worth having is refused before any value
is read, every legal budget gets an answer, and the holder sees what the schema's rules did — locally only."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import dpcd.release.api as api
from dpcd.cli import build_parser, main
from dpcd.datasets import load_bnlearn
from dpcd.forecast import MIN_EXPECTED_F1, estimated_seconds, forecast, worth_releasing
from dpcd.registry import ALGORITHMS
from dpcd.release import Output, ReleaseOptions, discover
from dpcd.release.api import EPSILON_REFUSE, EPSILON_WARN, ReleaseRefused
from dpcd.release.tables import data_quality, read_table, table_shape
from dpcd.schema import Schema


def _wide_csv(folder, p: int = 30, n: int = 300):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.integers(0, 2, size=(n, p)).astype(str), columns=[f"x{i}" for i in range(p)])
    frame.to_csv(folder / "wide.csv", index=False)
    Schema.categorical([2] * p, names=list(frame.columns)).save(folder / "wide.json")
    return folder / "wide.csv", folder / "wide.json"


@pytest.fixture
def no_value_read(monkeypatch):
    """Fail the test if a release reads any value (the header and the row count are structure, read before)."""

    def refuse(*args, **kwargs):
        raise AssertionError("the release read the values")

    monkeypatch.setattr(api, "read_chunks", refuse)


def test_a_wide_table_at_a_small_epsilon_is_refused_before_any_value_is_read(tmp_path, no_value_read):
    data, schema = _wide_csv(tmp_path)
    with pytest.raises(ReleaseRefused, match="Not worth releasing") as refusal:
        discover(data, schema=schema, epsilon=0.05, rng=0, out=tmp_path / "out", progress=False)
    text = str(refusal.value)
    assert "no budget was spent" in text and "More rows, a larger ε" in text and "force" in text
    assert "edge in 10" in text or "edges in 10" in text
    assert not (tmp_path / "out").exists()


def test_the_command_line_refuses_with_exit_2_and_releases_with_force(tmp_path, capsys):
    data, schema = _wide_csv(tmp_path)
    status = main(["discover", str(data), "--schema", str(schema), "--epsilon", "0.05", "--seed", "1",
                   "--out", str(tmp_path / "refused"), "--no-progress"])
    err = capsys.readouterr().err
    assert status == 2 and "Not worth releasing" in err and "Traceback" not in err
    assert not (tmp_path / "refused").exists()
    status = main(["discover", str(data), "--schema", str(schema), "--epsilon", "0.05", "--seed", "1",
                   "--out", str(tmp_path / "forced"), "--no-progress", "--force"])
    out = capsys.readouterr().out
    assert status == 0 and "warning: Not worth releasing" in out
    page = (tmp_path / "forced" / "report.html").read_text(encoding="utf-8")
    assert page.index("Released anyway (force)") < page.index("<h2>Edges</h2>")
    assert "no hidden confounder" in page


def test_a_release_worth_having_states_its_headline_in_words(tmp_path, capsys):
    sample = load_bnlearn("asia", 20_000, rng=3)
    sample.data.to_csv(tmp_path / "asia.csv", index=False)
    sample.schema().save(tmp_path / "asia.json")
    status = main(["discover", str(tmp_path / "asia.csv"), "--schema", str(tmp_path / "asia.json"), "--epsilon", "3",
                   "--seed", "2", "--out", str(tmp_path / "out"), "--no-progress"])
    out = capsys.readouterr().out
    assert status == 0
    headline = next(line for line in out.splitlines() if line.startswith("The forecast of"))
    assert "expected skeleton F1" in headline and "in 10 right" in headline
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert headline.split(":")[0] in page and "CI tests at alpha=0.05" in out
    privacy = json.loads((tmp_path / "out" / "privacy.json").read_text())
    assert privacy["assumed_public"]["algorithm"]["parameters"]["alpha"] == 0.05


def test_worth_releasing_follows_its_two_rules():
    row = {"status": "ok", "label": "X", "epsilon": 1.0, "skeleton_f1": 0.5, "skeleton_f1_low": 0.4,
           "skeleton_f1_high": 0.6, "random_f1_high": 0.1}
    assert worth_releasing(row)[0]
    assert not worth_releasing({**row, "skeleton_f1": MIN_EXPECTED_F1 - 0.01})[0]
    assert not worth_releasing({**row, "random_f1_high": 0.55})[0]
    assert worth_releasing(None)[0] and "unknown" in worth_releasing(None)[1]


@pytest.mark.parametrize("epsilon", [EPSILON_REFUSE * 1.01, 1e3, 1e6])
def test_a_huge_epsilon_is_refused_in_words_unless_forced(tmp_path, epsilon, capsys, no_value_read):
    data, schema = _wide_csv(tmp_path, p=4, n=400)
    status = main(["discover", str(data), "--schema", str(schema), "--epsilon", f"{epsilon:g}", "--delta", "1e-12",
                   "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert status == 2 and "protects nobody" in err and "Traceback" not in err


@pytest.mark.parametrize("epsilon,delta", [(1e6, 1e-12), (1e6, 1e-3), (EPSILON_WARN * 2, 1e-12), (1e-3, 1e-12)])
def test_every_legal_budget_gets_a_release_or_a_refusal_never_a_traceback(tmp_path, epsilon, delta):
    sample = load_bnlearn("cancer", 2_000, rng=1)
    try:
        release = discover(sample.data, schema=sample.schema(), epsilon=epsilon, delta=delta, rng=0, progress=False,
                           out=Output(tmp_path / "out", draw=False), options=ReleaseOptions(force=True))
    except ValueError as refusal:  # ReleaseRefused, CalibrationRefused: a refusal in words
        assert str(refusal)
        return
    assert release.privacy["guarantee"]["epsilon"] <= epsilon * (1 + 1e-6)
    if epsilon > EPSILON_WARN:
        assert any("protects" in w for w in release.warnings)
        assert "protects" in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("epsilon", [1e-3, 1.0, 1e3, 1e6])
def test_forecast_answers_every_legal_budget(epsilon):
    result = forecast(Schema.categorical([2] * 4), n=1_000, epsilon=[epsilon], delta=1e-12, repetitions=1, rng=0,
                      algorithms=["marginal_pc", "em_pc", "priv_pc"], time_budget=None)
    assert len(result.table) == 3
    assert all(status == "ok" or status.startswith("refused") for status in result.table["status"])


def test_delta_against_one_over_n_is_refused_before_the_forecast(tmp_path, monkeypatch, no_value_read):
    data, schema = _wide_csv(tmp_path, p=5, n=300)

    def no_forecast(*args, **kwargs):
        raise AssertionError("the forecast ran before a check that needs only n")

    monkeypatch.setattr(api, "choose_by_forecast", no_forecast)
    monkeypatch.setattr(api, "forecast", no_forecast)
    with pytest.raises(ValueError, match="delta must be below 1/n"):
        discover(data, schema=schema, epsilon=1.0, delta=0.01, out=tmp_path / "out", progress=False)
    with pytest.raises(Exception, match="at least 500"):
        discover(data, schema=schema, epsilon=1.0, progress=False, options=ReleaseOptions(min_rows=500))


MESSY = """had_affair,age,marriage,comment
no,30,married,a
Yes,200,married,b
yes,,divorced,c
no,25,married,d,extra
Yes,-5,single,e
no,40,married
yes,33,single,f
"""


def _messy(folder, rows: int = 120):
    lines = MESSY.splitlines()
    body = (lines[1:] * (rows // (len(lines) - 1) + 1))[:rows]
    (folder / "messy.csv").write_text("\n".join([lines[0], *body]) + "\n", encoding="utf-8")
    schema = Schema.from_json({"columns": {
        "had_affair": {"type": "categorical", "categories": ["no", "yes"]},
        "age": {"type": "numeric", "lower": 18, "upper": 90},
        "marriage": {"type": "categorical", "categories": ["married", "single"]},
        "comment": {"type": "categorical", "categories": ["a", "b", "c", "d", "e", "f"]}}})
    schema.save(folder / "messy.json")
    return folder / "messy.csv", schema


def test_the_data_quality_summary_names_each_rule_and_each_malformed_line(tmp_path):
    data, schema = _messy(tmp_path, rows=7)
    frame = read_table(data)
    lines = data_quality(frame, schema)
    text = "\n".join(lines)
    assert "2 cells of had_affair not in ['no', 'yes'] (most often 'Yes' ×2) became the fill 'no'" in text
    assert "1 cell of marriage not in ['married', 'single'] (most often 'divorced' ×1) became the fill 'married'" \
        in text
    assert "2 missing cells of age became the fill 54" in text
    assert "1 number of age above 90 was clamped to 90" in text and "1 number of age below 18 was clamped to 18" in text
    assert "1 line (14.3 % of the records; line 5; 5 fields ×1, the header has 4) has more fields" in text
    assert "line 7; 3 fields ×1" in text and "was padded" in text
    assert table_shape(data) == (list(schema.names), 7)


def test_the_summary_goes_to_the_terminal_only_and_the_files_match_a_cleaned_file(tmp_path, capsys):
    data, schema = _messy(tmp_path)
    args = ["--schema", str(tmp_path / "messy.json"), "--epsilon", "2", "--seed", "5", "--algorithm", "em_pc",
            "--no-progress", "--force", "--forecast", "0"]
    assert main(["discover", str(data), "--out", str(tmp_path / "a"), *args]) == 0
    captured = capsys.readouterr()
    assert "became the fill 'no'" in captured.err and "dpcd schema" in captured.err and "--check" in captured.err
    assert "became the fill" not in captured.out
    # the same records with the rules' replacements already made: fills, clamps, the malformed lines' cells
    encoded = schema.encode(read_table(data))
    cleaned = pd.DataFrame({c.name: (encoded[c.name].map(lambda v: f"{v:g}") if c.type == "numeric"
                                     else encoded[c.name].map(lambda k: c.categories[k])) for c in schema.columns})
    cleaned.to_csv(tmp_path / "clean.csv", index=False)
    assert main(["discover", str(tmp_path / "clean.csv"), "--out", str(tmp_path / "b"), *args]) == 0
    assert "became the fill" not in capsys.readouterr().err
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir())
    for name in names:
        first, second = (tmp_path / "a" / name).read_bytes(), (tmp_path / "b" / name).read_bytes()
        assert first == second, name
    for name in names:
        content = (tmp_path / "a" / name).read_bytes()
        assert b"Yes" not in content and b"divorced" not in content and b"extra" not in content


def test_help_lists_every_registry_algorithm():
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command").choices
    for command in ("discover", "forecast"):
        text = " ".join(subparsers[command].format_help().split())
        for name in ALGORITHMS:
            if command == "discover" or api.release_refusal(ALGORITHMS[name]) is None:
                assert name in text, (command, name)


def test_an_unknown_algorithm_lists_the_registry():
    with pytest.raises(ValueError) as error:
        discover(pd.DataFrame({"a": [0, 1] * 60, "b": [1, 0] * 60}), schema=Schema.categorical([2, 2], names="ab"),
                 epsilon=1.0, algorithm="nope", progress=False)
    assert all(name in str(error.value) for name in ALGORITHMS)


def test_the_forecast_skips_a_run_that_cannot_fit_its_time_budget():
    schema = Schema.categorical([3] * 11)
    expected = estimated_seconds(ALGORITHMS["aim_pc"], schema, 10_000)
    assert expected > 5.0
    result = forecast(schema, n=10_000, epsilon=[1.0, 2.0], algorithms=["aim_pc", "em_pc"], repetitions=2, rng=0,
                      time_budget=expected / 2)
    aim = result.table[result.table["algorithm"] == "aim_pc"]
    assert all(status.startswith("skipped: one run is expected to take about") for status in aim["status"])
    assert (result.table[result.table["algorithm"] == "em_pc"]["status"] == "ok").all()


@pytest.mark.parametrize("page", ["README.md", "docs/algorithms.md"])
def test_the_readme_lists_the_registry_as_it_is(project_root, page):
    from dpcd.registry import release_refusal

    text = (project_root / page).read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("**The registry**"))
    listed = re.findall(r"`([a-z_]+)` \(", line.split(": ", 1)[1])
    releasable = [name for name, spec in ALGORITHMS.items() if release_refusal(spec) is None]
    refused = [name for name, spec in ALGORITHMS.items() if release_refusal(spec) is not None]
    assert listed == releasable + refused

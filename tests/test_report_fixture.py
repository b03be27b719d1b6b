"""``python -m dpcd_papers report`` on a fixture of paper values and results gives the expected verdicts."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpcd_papers.cli import main
from dpcd_papers import reporting

PAPER_VALUES = pd.DataFrame({
    "network": ["asia", "asia", "sachs", "child", "alarm", "asia"],
    "epsilon": [1.0, 0.1, 1.0, 1.0, 1.0, 5.0],
    "metric": ["F1", "F1", "F1", "F1", "F1", "F1"],
    "value": [0.80, 0.50, 0.70, 0.60, np.nan, 0.95],
    "tolerance": [0.05, 0.05, 0.10, 0.05, np.nan, 0.02],
    "note": ["Table 2", "Table 2", "Table 3", "Fig. 3 (read off)", "F1 grows with epsilon", "Table 2"],
})
# ours: within tolerance, just outside it, exactly at the tolerance, missing (child), and far off
OURS = pd.DataFrame({
    "network": ["asia", "asia", "sachs", "asia"],
    "epsilon": [1.0, 0.1, 1.0, 5.0],
    "metric": ["F1", "F1", "F1", "F1"],
    "value": [0.83, 0.44, 0.80, 0.70],
})
EXPECTED = {
    "network=asia, epsilon=1": ("reproduced", 0.03),
    "network=asia, epsilon=0.1": ("not reproduced", -0.06),
    "network=sachs, epsilon=1": ("reproduced", 0.10),
    "network=child, epsilon=1": ("not computed", math.nan),
    "network=alarm, epsilon=1": ("qualitative", math.nan),
    "network=asia, epsilon=5": ("not reproduced", -0.25),
}


@pytest.fixture
def out(tmp_path):
    """Two notebook folders as the runner leaves them: comparison.csv, run.json, a figure."""
    comparison = reporting.compare(PAPER_VALUES, OURS, on=["network", "epsilon", "metric"], paper="toy_paper")
    reporting.save_comparison(comparison, tmp_path / "toy_paper")
    (tmp_path / "toy_paper" / "run.json").write_text(json.dumps({"profile": "quick", "seconds": 12.5}))
    (tmp_path / "toy_paper" / "toy_f1.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    claim = reporting.qualitative("other", "asia", "skeleton equals causal-learn's", 1.0, "holds in 3/3 runs")
    reporting.save_comparison([claim], tmp_path / "other")
    return tmp_path


def test_compare_gives_the_expected_verdicts(out):
    comparison = reporting.read_comparison(out / "toy_paper" / "comparison.csv")
    assert len(comparison) == len(EXPECTED)
    for _, row in comparison.iterrows():
        verdict, difference = EXPECTED[row["item"]]
        assert row["verdict"] == verdict, row["item"]
        if math.isnan(difference):
            assert math.isnan(row["difference"])
        else:
            assert row["difference"] == pytest.approx(difference, abs=1e-12)


def test_report_command_writes_the_verdicts_and_links(out, capsys):
    assert main(["report", "--out", str(out)]) == 0
    assert "REPORT.md: 2 reproduced, 2 not reproduced, 2 qualitative, 1 not computed" in capsys.readouterr().out
    text = (out / "REPORT.md").read_text()
    summary = [line for line in text.splitlines() if line.startswith("| [toy_paper]")]
    assert len(summary) == 1
    cells = [c.strip() for c in summary[0].strip("|").split("|")]
    assert cells[1:] == ["quick", "2", "2", "1", "1"]  # reproduced, not reproduced, qualitative, not computed
    other = [line for line in text.splitlines() if line.startswith("| [other]")][0]
    assert [c.strip() for c in other.strip("|").split("|")][1:] == ["unknown (no run.json)", "0", "0", "1", "0"]
    assert "Verdicts: 2 reproduced, 2 not reproduced, 1 qualitative, 1 not computed." in text
    assert "](toy_paper/toy_f1.png)" in text
    for item, (verdict, _) in EXPECTED.items():
        line = next(line for line in text.splitlines() if f"| {item} " in line)
        assert f"| {verdict} " in line


def test_verdict_counts_for_the_readme(out):
    counts = reporting.verdict_counts(out).set_index("notebook")
    assert counts.loc["toy_paper"].to_dict() == {"reproduced": 2, "not reproduced": 2, "qualitative": 1,
                                                 "not computed": 1}
    assert counts.loc["total"].to_dict() == {"reproduced": 2, "not reproduced": 2, "qualitative": 2,
                                             "not computed": 1}
    with pytest.raises(ValueError, match="no \\*/comparison.csv"):
        reporting.verdict_counts(out / "nothing")


def test_report_on_an_empty_folder_exits_2(tmp_path, capsys):
    assert main(["report", "--out", str(tmp_path)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "REPORT.md").exists()

"""The committed ``figures/`` are evidence: every comparison follows the rules, and REPORT.md and the README agree."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from dpcd_papers import reporting

PROJECT_ROOT = Path(__file__).resolve().parents[1]

FIGURES = PROJECT_ROOT / "figures"
COMPARISONS = sorted(FIGURES.glob("*/comparison.csv"))


def test_there_are_committed_comparisons():
    assert len(COMPARISONS) >= 8, "figures/ should hold one comparison.csv per notebook"


@pytest.mark.parametrize("path", COMPARISONS, ids=lambda p: p.parent.name)
def test_comparison_has_the_columns_and_a_diagnosis_on_every_miss(path):
    frame = pd.read_csv(path, dtype={"diagnosis": str, "line": str, "diagnostic": str, "note": str})
    assert list(frame.columns) == list(reporting.COMPARISON_COLUMNS)
    assert set(frame["verdict"]) <= set(reporting.VERDICTS)
    assert frame["claim_id"].notna().all() and frame["claim_id"].is_unique
    misses = frame[frame["verdict"].isin(["not reproduced", "not computed"])]
    assert misses["diagnosis"].fillna("").str.strip().ne("").all(), list(
        misses.loc[misses["diagnosis"].fillna("").str.strip().eq(""), "claim_id"])
    assert frame["line"].fillna("").str.strip().ne("").all(), "every claim names the line that answers it"
    assert set(frame["paper"]) <= set(reporting.PAPERS), "paper column uses the short names of reporting.PAPERS"
    reporting.read_comparison(path)  # the reader's own checks


def test_report_and_readme_quote_the_committed_counts():
    counts = reporting.verdict_counts(FIGURES)
    line = reporting.summary_line(counts)
    report = (FIGURES / "REPORT.md").read_text(encoding="utf-8")
    assert line in report, "figures/REPORT.md is older than the comparisons: run `python -m dpcd_papers report`"
    readme = re.sub(r"\s+", " ", (PROJECT_ROOT / "README.md").read_text(encoding="utf-8"))
    assert line in readme, f"the README's summary line should read: {line}"

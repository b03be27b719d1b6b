"""Tables (CSV + Markdown), paper values, paper-vs-reproduced comparisons, REPORT.md.

Conventions shared by every notebook:

* ``write_table(df, out_dir, name)`` writes ``name.csv`` and ``name.md``.
* Numbers transcribed from a paper live in ``data/paper_values/<paper>.csv``
  (load them with :func:`load_paper_values`); :func:`compare` matches them with
  our results and gives each a verdict.
* Each notebook saves its comparison with :func:`save_comparison` as
  ``out_dir/comparison.csv`` (columns :data:`COMPARISON_COLUMNS`).
* :func:`build_report` gathers every ``<out>/<notebook>/comparison.csv``, the
  figures next to it and the runner's ``run.json`` into ``<out>/REPORT.md``.

All files are written atomically (temporary file + ``os.replace``).
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ._io import atomic_write_text, data_dir
from .experiments import CELLS_ARCHIVE, archive_status

__all__ = [
    "COMPARISON_COLUMNS",
    "VERDICTS",
    "TOLERANCE_LEVEL",
    "QUALITATIVE_SHARE",
    "claim_id_of",
    "time_table",
    "full_profile_wall",
    "format_seconds",
    "sampling_tolerance",
    "qualitative_claim",
    "qualitative_rows",
    "attach_diagnostic",
    "not_refuted",
    "diagnose",
    "explained",
    "mark_uninformative",
    "mark_uninformative_shares",
    "mark_degenerate_diagnostics",
    "mark_constant_baselines",
    "diagnostic_tolerance",
    "diagnostic_within_tolerance",
    "constants_within",
    "data_dir",
    "write_table",
    "to_markdown",
    "load_paper_values",
    "compare",
    "save_comparison",
    "write_citing",
    "wrap_prose",
    "sentences",
    "PROSE_WIDTH",
    "read_comparison",
    "build_report",
    "verdict_counts",
    "summary_line",
    "PAPERS",
    "SUMMARY_COLUMNS",
]

COMPARISON_COLUMNS = ("claim_id", "paper", "item", "metric", "paper_value", "ours", "difference", "tolerance",
                      "verdict", "line", "diagnosis", "diagnostic", "diagnostic_value", "diagnostic_tolerance", "note")
VERDICTS = ("reproduced", "not reproduced", "uninformative", "not refuted", "not computed")
"""Every verdict a claim can get (see :data:`_REPORT_INTRO`): *uninformative* when a trivial baseline fixed before
the run lies within the tolerance too (:func:`mark_uninformative`); *not refuted* for a privacy claim whose audit
found no violation (an audit cannot reproduce a guarantee, only fail to refute it)."""
TOLERANCE_LEVEL = 0.95
"""Level of the two-sample interval that decides "reproduced" (:func:`sampling_tolerance`)."""
QUALITATIVE_SHARE = 0.8
"""Share of cells in which a qualitative claim must hold to count as reproduced (:func:`qualitative_claim`)."""
QUALITATIVE_METRIC = "share of cells where the claim holds"
CITING_FILE = "citing.md"
RUN_INFO = "run.json"
COMPARISON_FILE = "comparison.csv"
REPORT_FILE = "REPORT.md"


# --------------------------------------------------------------------------- files


def _check_name(name: Any, argument: str = "name") -> str:
    if not isinstance(name, str):
        raise TypeError(f"{argument} must be a string, got {type(name).__name__}")
    if not name or name in {".", ".."} or "/" in name or "\\" in name or name != name.strip():
        raise ValueError(f"{argument} must be a plain file name without folders or spaces around it, got {name!r}")
    return name


def _check_out_dir(out_dir: Any) -> Path:
    if not isinstance(out_dir, (str, os.PathLike)):
        raise TypeError(f"out_dir must be a path, got {type(out_dir).__name__}")
    path = Path(out_dir)
    if path.exists() and not path.is_dir():
        raise ValueError(f"out_dir {os.fspath(out_dir)!r} exists and is not a folder")
    return path


def _check_frame(df: Any, argument: str) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{argument} must be a pandas DataFrame, got {type(df).__name__}")
    return df


# --------------------------------------------------------------------------- Markdown


def _format_cell(value: Any, float_format: str) -> str:
    if value is None or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return ""
        text = format(float(value), float_format)
    elif isinstance(value, (bool, np.bool_)):
        text = "yes" if value else "no"
    else:
        text = str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def to_markdown(df: pd.DataFrame, *, float_format: str = ".4g", index: bool = False) -> str:
    """Render ``df`` as a GitHub-flavoured Markdown table.

    Numeric columns are right-aligned, floats printed with ``float_format``,
    missing values left empty, ``|`` escaped.
    """
    df = _check_frame(df, "df")
    if not isinstance(float_format, str):
        raise TypeError(f"float_format must be a format spec string such as '.4g', got {type(float_format).__name__}")
    try:
        format(1.5, float_format)
    except ValueError as error:
        raise ValueError(f"float_format {float_format!r} is not a valid float format spec: {error}") from None
    if index:
        df = df.reset_index()
    headers = [_format_cell(c, float_format) for c in df.columns]
    numeric = [
        pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])
        for c in df.columns
    ] if df.columns.is_unique else [False] * len(df.columns)
    rows = [[_format_cell(v, float_format) for v in row] for row in df.itertuples(index=False, name=None)]
    widths = [max(3, len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        padded = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)]
        return "| " + " | ".join(padded) + " |"

    rule = "| " + " | ".join(("-" * (w - 1) + ":") if num else "-" * w for w, num in zip(widths, numeric)) + " |"
    if not headers:
        return ""
    return "\n".join([line(headers), rule, *(line(r) for r in rows)]) + "\n"


def write_table(
    df: pd.DataFrame, out_dir: str | os.PathLike[str], name: str, *, float_format: str = ".4g"
) -> tuple[Path, Path]:
    """Write ``df`` as ``out_dir/name.csv`` (full precision) and ``out_dir/name.md``.

    Returns ``(csv_path, md_path)``. The folder is created if needed.
    """
    df = _check_frame(df, "df")
    out = _check_out_dir(out_dir)
    name = _check_name(name)
    markdown = to_markdown(df, float_format=float_format)
    csv_path = atomic_write_text(out / f"{name}.csv", df.to_csv(index=False, lineterminator="\n"))
    md_path = atomic_write_text(out / f"{name}.md", markdown)
    return csv_path, md_path


# --------------------------------------------------------------------------- paper values


def load_paper_values(paper: str) -> pd.DataFrame:
    """Numbers transcribed from one paper: ``data/paper_values/<paper>.csv``.

    Expected columns: the key columns used with :func:`compare` (e.g.
    ``item``/``network``/``epsilon`` and ``metric``), ``value`` (empty for a
    qualitative claim), ``tolerance`` (absolute) and optionally ``note``
    (where in the paper the number comes from, or the claim in words).
    """
    name = _check_name(paper, "paper")
    folder = data_dir() / "paper_values"
    path = folder / f"{name}.csv"
    if not path.is_file():
        available = sorted(p.stem for p in folder.glob("*.csv")) if folder.is_dir() else []
        raise ValueError(f"paper {paper!r} has no values file paper_values/{name}.csv; available: {available}")
    return pd.read_csv(path)


# --------------------------------------------------------------------------- comparisons


def _is_number(value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)) or value is None or value is pd.NA:
        return False
    if isinstance(value, numbers.Real):
        return not math.isnan(float(value))
    return False


def _as_float(value: Any) -> float:
    return float(value) if _is_number(value) else math.nan


def claim_id_of(paper: str, item: str, metric: str) -> str:
    """A stable identifier of a paper claim from its paper, item and metric (lower case, no spaces).

    >>> claim_id_of("em_pc", "Table III: epsilon=10, pc", "tpr")
    'em_pc:table-iii:epsilon=10,pc:tpr'
    """
    def slug(text: str) -> str:
        text = re.sub(r"[^0-9a-z=.,+*_-]+", "-", str(text).lower())
        return re.sub(r"-+", "-", re.sub(r"([,=])-|-([,=])", r"\1\2", text)).strip("-")

    return ":".join(slug(part) for part in (paper, *str(item).split(":"), metric) if slug(part))


def sampling_tolerance(*, paper_sd: float = math.nan, paper_runs: float = math.nan, ours_sd: float = math.nan,
                       ours_runs: float = math.nan, level: float = TOLERANCE_LEVEL, floor: float = 0.0) -> float:
    """Half-width of a two-sample interval for the difference of two means, at ``level``.

    z·√(s_p²/n_p + s_o²/n_o) with z the standard normal (1 + level)/2 quantile,
    s and n the standard deviation and run count of the paper's experiment
    (``paper_*``) and of ours (``ours_*``). A side without an sd borrows the
    other side's (the same experiment's spread); a side without a run count
    counts one run. Never below ``floor`` (e.g. half a unit of the paper's last
    printed digit: a difference the paper's rounding cannot resolve), and
    ``floor`` alone when neither side has an sd. Fewer runs give a wider
    interval.

    >>> round(sampling_tolerance(paper_sd=0.1, paper_runs=5, ours_sd=0.1, ours_runs=5), 4)
    0.124
    >>> sampling_tolerance(paper_sd=0.1, paper_runs=5, ours_sd=0.1, ours_runs=2) > 0.124
    True
    """
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    sd_p, sd_o = _as_float(paper_sd), _as_float(ours_sd)
    if math.isnan(sd_p) and math.isnan(sd_o):
        return float(floor)
    sd_p = sd_o if math.isnan(sd_p) else sd_p
    sd_o = sd_p if math.isnan(sd_o) else sd_o
    n_p = _as_float(paper_runs) if _is_number(paper_runs) and paper_runs >= 1 else 1.0
    n_o = _as_float(ours_runs) if _is_number(ours_runs) and ours_runs >= 1 else 1.0
    z = float(stats.norm.ppf(0.5 + level / 2.0))
    return max(float(floor), z * math.sqrt(sd_p ** 2 / n_p + sd_o ** 2 / n_o))


def _column(frame: pd.DataFrame, name: str | None, row: pd.Series | None = None, default: Any = math.nan) -> Any:
    if name is None or name not in frame.columns:
        return default
    return default if row is None else row[name]


def compare(
    paper_values: pd.DataFrame,
    ours: pd.DataFrame,
    on: Sequence[str],
    *,
    line: str,
    value_column: str = "value",
    ours_column: str | None = None,
    ours_sd_column: str | None = "sd",
    ours_runs_column: str | None = "runs",
    metric_column: str = "metric",
    level: float = TOLERANCE_LEVEL,
    default_floor: float = 0.0,
    paper: str | None = None,
) -> pd.DataFrame:
    """Match paper values with the results of our declared line and give each claim a verdict.

    Parameters
    ----------
    paper_values
        One row per paper claim with a number: the key columns ``on``, the
        number in ``value_column``, and optionally ``claim_id`` (default
        :func:`claim_id_of`), ``sd`` and ``runs`` (the paper's spread and run
        count), ``floor`` (the smallest tolerance, with its reason in ``note``),
        ``tolerance`` (an explicit tolerance that replaces the sampling one;
        its reason belongs in ``note``), ``note`` and ``paper``.
    ours
        Results of **one** line, one row per key, with the value in
        ``ours_column`` (default ``value_column``) and optionally its sd and
        run count (``ours_sd_column``, ``ours_runs_column``).
    line
        The name of our line that answers these claims, declared before the run
        (the faithful DP implementation); diagnostic lines never answer a claim.
    level, default_floor
        Tolerances: :func:`sampling_tolerance` at ``level``, at least the row's
        ``floor`` (default ``default_floor``).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COMPARISON_COLUMNS`, one row per claim, verdict
        ``reproduced`` (|ours − paper| ≤ tolerance), ``not reproduced`` or
        ``not computed`` (no result of ours). ``diagnosis`` is left empty for
        :func:`diagnose` and :func:`attach_diagnostic` to fill.
    """
    paper_values = _check_frame(paper_values, "paper_values")
    ours = _check_frame(ours, "ours")
    if isinstance(on, str):
        on = [on]
    if not isinstance(on, Sequence) or not on or not all(isinstance(c, str) for c in on):
        raise TypeError("on must be a non-empty list of column names")
    if not isinstance(line, str) or not line:
        raise TypeError("line must name the line of ours that answers the claims")
    on = list(on)
    ours_column = value_column if ours_column is None else ours_column
    for column in on:
        if column not in paper_values.columns:
            raise ValueError(f"on column {column!r} is missing from paper_values (columns: {list(paper_values.columns)})")
        if column not in ours.columns:
            raise ValueError(f"on column {column!r} is missing from ours (columns: {list(ours.columns)})")
    if value_column not in paper_values.columns:
        raise ValueError(f"value_column {value_column!r} is missing from paper_values")
    if ours_column not in ours.columns:
        raise ValueError(f"ours_column {ours_column!r} is missing from ours (columns: {list(ours.columns)})")
    duplicated = ours.duplicated(subset=on, keep=False)
    if duplicated.any():
        example = ours.loc[duplicated, on].iloc[0].to_dict()
        raise ValueError(f"ours has several rows for the key {example}; aggregate first (one line, one row per key)")

    def key_of(row: pd.Series) -> tuple:
        return tuple(_key_part(row[c]) for c in on)

    lookup = {key_of(row): row for _, row in ours.iterrows()}
    records = []
    for _, row in paper_values.iterrows():
        paper_value = row[value_column]
        if not _is_number(paper_value):
            raise ValueError(f"paper value for {key_of(row)} is not a number; state claims without a number with "
                             "qualitative_claim")
        found = lookup.get(key_of(row))
        our_value = math.nan if found is None else _as_float(found[ours_column])
        explicit = _as_float(_column(paper_values, "tolerance", row))
        floor = _as_float(_column(paper_values, "floor", row))
        floor = default_floor if math.isnan(floor) else floor
        if not math.isnan(explicit):
            tolerance = explicit
        else:
            tolerance = sampling_tolerance(
                paper_sd=_column(paper_values, "sd", row), paper_runs=_column(paper_values, "runs", row),
                ours_sd=math.nan if found is None else _column(ours, ours_sd_column, found),
                ours_runs=math.nan if found is None else _column(ours, ours_runs_column, found),
                level=level, floor=floor)
        difference = math.nan
        if math.isnan(our_value):
            verdict = "not computed"
        else:
            difference = our_value - float(paper_value)
            verdict = "reproduced" if abs(difference) <= tolerance + 1e-12 else "not reproduced"
        item = str(row["item"]) if "item" in on else ", ".join(
            f"{c}={_format_key(row[c])}" for c in on if c != metric_column)
        metric = str(row[metric_column]) if metric_column in paper_values.columns else ours_column
        name = paper if paper is not None else (str(row["paper"]) if "paper" in paper_values.columns else "")
        claim = row["claim_id"] if "claim_id" in paper_values.columns and isinstance(row["claim_id"], str) \
            else claim_id_of(name, item, metric)
        note = row["note"] if "note" in paper_values.columns and isinstance(row["note"], str) else ""
        records.append({"claim_id": claim, "paper": name, "item": item, "metric": metric,
                        "paper_value": float(paper_value), "ours": our_value, "difference": difference,
                        "tolerance": float(tolerance), "verdict": verdict, "line": line, "diagnosis": "",
                        "diagnostic": "", "diagnostic_value": math.nan, "diagnostic_tolerance": math.nan,
                        "note": note})
    return mark_constant_baselines(pd.DataFrame.from_records(records, columns=list(COMPARISON_COLUMNS)))


CONSTANT_BASELINES = (0.0, 0.5, 1.0)
"""The constants every rate row faces (:func:`mark_constant_baselines`): a rate that one of them also matches within
the tolerance says nothing about the algorithm. They include the trivial graphs' rates under the scoring
convention of the rows (the empty graph: TPR 0, FPR 0, TDR 1 where an empty denominator scores 1; the complete
graph: TPR 1, FPR 1), a coin's accuracy (0.5) and a line without noise where a rate measures what noise removes
(retention 1)."""

RATE_METRIC = re.compile(r"^(?:tpr|fpr|tdr)$|f1|accuracy|retention|type i|p\(correct\)|error", re.IGNORECASE)
"""Metrics that are rates in [0, 1], so :data:`CONSTANT_BASELINES` apply (counts, times and scores are not)."""


def mark_constant_baselines(comparison: pd.DataFrame) -> pd.DataFrame:
    """:func:`mark_uninformative` with :data:`CONSTANT_BASELINES` for every row whose metric is a rate
    (:data:`RATE_METRIC`): the one convention every rate row of every notebook faces (:func:`compare` applies it).

    >>> row = {c: "" for c in COMPARISON_COLUMNS}
    >>> row.update(claim_id="x", metric="tdr", paper_value=0.97, ours=0.99, tolerance=0.05, verdict="reproduced")
    >>> mark_constant_baselines(pd.DataFrame([row])).loc[0, "verdict"]
    'uninformative'
    """
    rates = comparison[comparison["metric"].astype(str).str.contains(RATE_METRIC)]
    baselines = pd.DataFrame([{"claim_id": claim, "baseline": f"the constant {value:g}", "value": value}
                              for claim in rates["claim_id"] for value in CONSTANT_BASELINES],
                             columns=["claim_id", "baseline", "value"])
    return mark_uninformative(comparison, baselines)


def _key_part(value: Any) -> Any:
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _format_key(value: Any) -> str:
    value = _key_part(value)
    return format(value, "g") if isinstance(value, float) else str(value)


def qualitative_claim(paper: str, claim_id: str, item: str, claim: str, *, holds: int, cells: int, line: str,
                      diagnosis: str = "", note: str = "", share: float = QUALITATIVE_SHARE) -> dict[str, Any]:
    """One row for a claim stated without a number, judged by a rule fixed in advance.

    ``holds`` of ``cells`` settings agree with the claim; the claim is
    ``reproduced`` when at least ``share`` of the cells do (default
    :data:`QUALITATIVE_SHARE`: a claim the paper states without qualification
    should hold almost everywhere, with room for cells decided by sampling
    noise), ``not reproduced`` otherwise, ``not computed`` with no cell. ``ours``
    is the share of cells where it holds.

    >>> qualitative_claim("curate", "curate:fig4:best", "Fig. 4", "CURATE has the best F1", holds=6, cells=25,
    ...                   line="curate", diagnosis="worst-case sensitivity")["verdict"]
    'not reproduced'
    """
    for argument, value in (("paper", paper), ("claim_id", claim_id), ("item", item), ("claim", claim),
                            ("line", line), ("diagnosis", diagnosis), ("note", note)):
        if not isinstance(value, str):
            raise TypeError(f"{argument} must be a string, got {type(value).__name__}")
    holds, cells = int(holds), int(cells)
    if not 0 <= holds <= cells:
        raise ValueError(f"holds must lie in [0, cells], got {holds} of {cells}")
    share = float(share)
    if not 0.0 < share <= 1.0:
        raise ValueError(f"share must lie in (0, 1], got {share}")
    fraction = holds / cells if cells else math.nan
    verdict = "not computed" if cells == 0 else ("reproduced" if fraction >= share else "not reproduced")
    counted = f"holds in {holds} of {cells} cell{'' if cells == 1 else 's'}" if cells else "no cell computed"
    return {"claim_id": claim_id, "paper": paper, "item": item, "metric": QUALITATIVE_METRIC,
            "paper_value": claim, "ours": fraction, "difference": math.nan, "tolerance": share,
            "verdict": verdict, "line": line, "diagnosis": diagnosis, "diagnostic": "", "diagnostic_value": math.nan,
            "diagnostic_tolerance": math.nan, "note": f"{counted}; {note}" if note else counted}


def qualitative_rows(paper: str, claims: pd.DataFrame, cells: pd.DataFrame, *, line: str,
                     rules: Mapping[str, str], diagnostic_cells: pd.DataFrame | None = None,
                     diagnostic: str = "") -> pd.DataFrame:
    """:func:`qualitative_claim` rows for every claim of ``claims`` judged on per-cell results.

    ``claims``: rows of a paper-values file without a number (``claim_id``,
    ``item``, ``claim``, ``note``/``source``, optional ``share``); ``cells``:
    one row per (claim, cell) of the declared line with ``claim_id``,
    ``cell``, ``holds`` and ``detail``; ``rules``: each claim's rule in words,
    fixed before the run (quoted in the note with the failing cells);
    ``diagnostic_cells``: the same rules under a diagnostic line, whose share of
    holding cells is attached as ``diagnostic_value`` (it never changes a verdict).
    """
    rows = []
    for claim in claims.itertuples():
        mine = cells[cells["claim_id"] == claim.claim_id]
        share = getattr(claim, "share", QUALITATIVE_SHARE)
        share = QUALITATIVE_SHARE if not _is_number(share) else float(share)
        failing = "; ".join(f"{c.cell}: {c.detail}" for c in mine.itertuples() if not c.holds)[:400]
        source = claim.note if isinstance(claim.note, str) and claim.note.strip() else claim.source
        note = f"{str(source).rstrip('.')}. Rule: {rules.get(claim.claim_id, '')}" + (
            f" Fails in: {failing}" if failing else "")
        row = qualitative_claim(paper, claim.claim_id, claim.item, claim.claim, holds=int(mine["holds"].sum()),
                                cells=len(mine), line=line, note=note, share=share)
        if diagnostic_cells is not None:
            theirs = diagnostic_cells[diagnostic_cells["claim_id"] == claim.claim_id]
            if len(theirs):
                row["diagnostic"] = diagnostic
                row["diagnostic_value"] = float(theirs["holds"].mean())
        rows.append(row)
    return pd.DataFrame(rows, columns=list(COMPARISON_COLUMNS))


def attach_diagnostic(comparison: pd.DataFrame, values: pd.DataFrame, *, name: str, on: str = "claim_id",
                      value_column: str = "value", tolerance_column: str = "tolerance") -> pd.DataFrame:
    """Fill ``diagnostic`` (``name``), ``diagnostic_value`` and ``diagnostic_tolerance`` for the claims ``values`` answers.

    A diagnostic line is a labelled "paper-as-run" experiment (e.g. a published
    calibration that is not DP); it never changes a verdict. ``values`` has the
    ``on`` column (claim ids by default), ``value_column`` and, optionally,
    ``tolerance_column``: the tolerance computed from the **diagnostic's own**
    spread and run count (e.g. ``compare(claims, values, ...)["tolerance"]``),
    which :func:`explained` uses instead of the declared line's.
    """
    comparison = _check_frame(comparison, "comparison").copy()
    if "diagnostic_tolerance" not in comparison.columns:
        comparison["diagnostic_tolerance"] = math.nan
    lookup = {row[on]: _as_float(row[value_column]) for _, row in values.iterrows()}
    own = ({row[on]: _as_float(row[tolerance_column]) for _, row in values.iterrows()}
           if tolerance_column in values.columns else {})
    match = comparison[on].map(lambda key: key in lookup).astype(bool)
    comparison["diagnostic"] = comparison["diagnostic"].astype(object).where(~match, name)
    numbers_ = comparison[on].map(lambda key: lookup.get(key, math.nan)).astype(float)
    comparison["diagnostic_value"] = pd.to_numeric(comparison["diagnostic_value"], errors="coerce").where(~match,
                                                                                                          numbers_)
    tolerances = comparison[on].map(lambda key: own.get(key, math.nan)).astype(float)
    comparison["diagnostic_tolerance"] = pd.to_numeric(comparison["diagnostic_tolerance"], errors="coerce").where(
        ~match, tolerances)
    return comparison


def diagnose(comparison: pd.DataFrame, rule) -> pd.DataFrame:
    """Fill ``diagnosis`` on every ``not reproduced`` / ``not computed`` row with ``rule(row) -> str``.

    Rows that already have a diagnosis keep it. The rule names the cause in one
    line and, where one does, the diagnostic line that matches the paper's
    number (or says that none does and why; for ``not computed``, what would be
    needed).
    """
    comparison = _check_frame(comparison, "comparison").copy()
    for index, row in comparison.iterrows():
        if row["verdict"] in ("not reproduced", "not computed") and not str(row.get("diagnosis") or "").strip():
            comparison.at[index, "diagnosis"] = str(rule(row))
    return comparison


def explained(comparison: pd.DataFrame) -> pd.Series:
    """Per row: a ``not reproduced`` claim whose diagnostic line matches the paper, by the same test as a verdict.

    A number: the diagnostic value lies within the **diagnostic's own**
    tolerance of the paper's (``diagnostic_tolerance``; the row's ``tolerance``
    only where the diagnostic's spread is unknown), **and** so do its companion
    claims — the other rows of the same paper and ``item`` (e.g. TPR and TDR of
    one setting) that the same diagnostic answers. A claim without a number
    (:func:`qualitative_claim`): the claim holds under the diagnostic line in at
    least the share its ``tolerance`` column asks for.

    >>> rows = pd.DataFrame({"paper": "p", "item": ["s1", "s1", "s2"], "metric": ["tpr", "tdr", "tpr"],
    ...                      "verdict": "not reproduced", "paper_value": [0.9, 0.8, 0.5], "tolerance": 0.3,
    ...                      "diagnostic": "d", "diagnostic_value": [0.85, 0.4, 0.7],
    ...                      "diagnostic_tolerance": [0.1, 0.1, 0.1]})
    >>> explained(rows).tolist()  # s1: TDR misses, so TPR is not explained either; s2: outside its own 0.1
    [False, False, False]

    A rate that a constant of :data:`CONSTANT_BASELINES` also matches within the diagnostic's tolerance is no
    explanation (the rule a verdict faces, :func:`mark_constant_baselines`):

    >>> rows["diagnostic_value"] = [0.85, 0.75, 0.55]
    >>> explained(rows).tolist()  # s2's 0.55 is within 0.1 of the constant 0.5
    [True, True, False]
    """
    values = pd.to_numeric(comparison["diagnostic_value"], errors="coerce")
    tolerance = pd.to_numeric(comparison["tolerance"], errors="coerce")
    own = diagnostic_tolerance(comparison)
    qualitative = comparison["metric"] == QUALITATIVE_METRIC
    close = diagnostic_within_tolerance(comparison)
    holds = values >= tolerance - 1e-12
    answered = ~qualitative & values.notna()
    keys = [comparison[c].astype(str) for c in ("paper", "item", "diagnostic")]
    companions_close = (close | ~answered).groupby(keys).transform("all").astype(bool)
    degenerate = comparison["note"].astype(str).str.contains(DEGENERATE_NOTE, regex=False) \
        if "note" in comparison.columns else pd.Series(False, index=comparison.index)
    # a rate the diagnostic shares with a constant baseline (within its own tolerance) explains nothing, as a
    # verdict that a constant also earns is uninformative (mark_constant_baselines)
    rate = comparison["metric"].astype(str).str.contains(RATE_METRIC)
    trivial = rate & pd.Series([bool(constants_within(v, t)) for v, t in zip(values, own)], index=comparison.index)
    return ((comparison["verdict"] == "not reproduced") & ~degenerate
            & ((qualitative & holds) | (answered & close & companions_close & ~trivial)))


def diagnostic_tolerance(comparison: pd.DataFrame) -> pd.Series:
    """Per row: the diagnostic's own tolerance (``diagnostic_tolerance``), the row's ``tolerance`` where it is
    unknown."""
    tolerance = pd.to_numeric(comparison["tolerance"], errors="coerce")
    own = (pd.to_numeric(comparison["diagnostic_tolerance"], errors="coerce")
           if "diagnostic_tolerance" in comparison.columns else pd.Series(math.nan, index=comparison.index))
    return own.where(own.notna(), tolerance)


def diagnostic_within_tolerance(comparison: pd.DataFrame) -> pd.Series:
    """Per row: the diagnostic value lies within :func:`diagnostic_tolerance` of the paper's number (the first test
    of :func:`explained`; False where either number is missing).

    >>> rows = pd.DataFrame({"diagnostic_value": [0.85, 0.4, None], "paper_value": 0.9, "tolerance": 0.3,
    ...                      "diagnostic_tolerance": [0.1, None, 0.1]})
    >>> diagnostic_within_tolerance(rows).tolist()
    [True, False, False]
    """
    values = pd.to_numeric(comparison["diagnostic_value"], errors="coerce")
    paper = pd.to_numeric(comparison["paper_value"], errors="coerce")
    return ((values - paper).abs() <= diagnostic_tolerance(comparison) + 1e-12).fillna(False).astype(bool)


def constants_within(value: float, tolerance: float) -> list[float]:
    """The constants of :data:`CONSTANT_BASELINES` within ``tolerance`` of ``value`` (none for a missing value): a
    rate they match as closely says nothing.

    >>> constants_within(0.93, 0.14), constants_within(0.7, 0.1), constants_within(float("nan"), 0.1)
    ([1.0], [], [])
    """
    return [c for c in CONSTANT_BASELINES if abs(float(value) - c) <= float(tolerance) + 1e-12]


DEGENERATE_NOTE = "degenerate diagnostic"
"""The note :func:`mark_degenerate_diagnostics` writes; :func:`explained` never counts such a row."""

DEGENERATE_RATE = 0.5
"""A diagnostic line whose companion error rate at the same setting is at least this (a test that rejects true
independence at least as often as a coin) is degenerate: its good rate on the other side is trivial."""


def not_refuted(comparison: pd.DataFrame, claims: str | tuple[str, ...], *, note: str = "") -> pd.DataFrame:
    """A theorem checked by a search (a sensitivity bound, a privacy claim) is *not refuted* where the search held,
    never *reproduced*: a search can refute a theorem, not prove it. ``claims`` is a claim-id prefix or a tuple of
    prefixes (a whole id is its own prefix); rows of those claims whose verdict is ``"reproduced"`` become
    ``"not refuted"`` and get ``note`` appended; a refuted theorem keeps *not reproduced*.

    >>> rows = pd.DataFrame({"claim_id": ["priv_pc:app-e:thm8", "priv_pc:sec4.2:x", "priv_pc:app-e:thm9"],
    ...                      "verdict": ["reproduced", "reproduced", "not reproduced"], "note": ["", "", ""]})
    >>> not_refuted(rows, "priv_pc:app-")["verdict"].tolist()
    ['not refuted', 'reproduced', 'not reproduced']
    """
    out = comparison.copy()
    held = out["claim_id"].astype(str).str.startswith(claims) & (out["verdict"] == "reproduced")
    out.loc[held, "verdict"] = "not refuted"
    if note:
        out.loc[held, "note"] = [f"{old}; {note}" if isinstance(old, str) and old else note
                                 for old in out.loc[held, "note"]]
    return out


def mark_degenerate_diagnostics(comparison: pd.DataFrame, companions: pd.DataFrame) -> pd.DataFrame:
    """Stop a diagnostic from explaining a miss where its own companion metric is degenerate.

    ``companions`` has ``claim_id``, ``companion`` (what, e.g. "type I error of the diagnostic") and ``value``:
    the diagnostic line's companion rate at the row's setting. A type II error of 0 from a test that rejects
    every true hypothesis (type I 1) says nothing, so where ``value`` ≥ :data:`DEGENERATE_RATE` the row's note says
    so (:data:`DEGENERATE_NOTE`) and :func:`explained` no longer counts it.

    >>> row = {c: "" for c in COMPARISON_COLUMNS}
    >>> row.update(claim_id="x", metric="type II error", paper_value=0.2, tolerance=0.05, verdict="not reproduced",
    ...            diagnostic="d", diagnostic_value=0.18, diagnostic_tolerance=0.05)
    >>> frame = pd.DataFrame([row])
    >>> bool(explained(frame).iloc[0])
    True
    >>> marked = mark_degenerate_diagnostics(frame, pd.DataFrame(
    ...     {"claim_id": ["x"], "companion": ["its type I error"], "value": [1.0]}))
    >>> bool(explained(marked).iloc[0])
    False
    """
    comparison = comparison.copy()
    by_claim = {claim: (str(what), value) for claim, what, value in
                zip(companions["claim_id"], companions["companion"], companions["value"])}
    for index, row in comparison.iterrows():
        found = by_claim.get(row["claim_id"])
        if found is None or not _is_number(found[1]) or float(found[1]) < DEGENERATE_RATE:
            continue
        note = str(row["note"]) if isinstance(row["note"], str) else ""
        comparison.loc[index, "note"] = (note + "; " if note else "") + (
            f"{DEGENERATE_NOTE}: {found[0]} is {float(found[1]):.2f} at this setting, so "
            + ("it cannot explain the miss" if row["verdict"] == "not reproduced" else "it explains nothing"))
    return comparison


def _check_comparison(df: pd.DataFrame, argument: str) -> pd.DataFrame:
    df = _check_frame(df, argument)
    missing = [c for c in COMPARISON_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{argument} is missing comparison column(s) {missing}; build it with "
                         "dpcd_papers.reporting.compare or qualitative_claim")
    bad = sorted(set(df["verdict"].astype(str)) - set(VERDICTS))
    if bad:
        raise ValueError(f"{argument} has unknown verdict(s) {bad}; allowed: {list(VERDICTS)}")
    repeated = sorted(set(df.loc[df["claim_id"].duplicated(), "claim_id"]))
    if repeated:
        raise ValueError(f"{argument} has several rows for claim(s) {repeated[:3]}: one row per paper claim")
    diagnosis = df["diagnosis"].fillna("").astype(str).str.strip()
    undiagnosed = df.loc[df["verdict"].isin(["not reproduced", "not computed"]) & (diagnosis == ""), "claim_id"]
    if len(undiagnosed):
        raise ValueError(f"{argument}: every 'not reproduced' or 'not computed' claim needs a diagnosis; missing "
                         f"for {list(undiagnosed)[:3]}")
    return df


def save_comparison(comparison: pd.DataFrame | Iterable[dict[str, Any]], out_dir: str | os.PathLike[str]) -> Path:
    """Write a notebook's comparison to ``out_dir/comparison.csv`` (and ``comparison.md``), checked:

    columns :data:`COMPARISON_COLUMNS`, one row per ``claim_id``, verdicts in
    :data:`VERDICTS`, and a diagnosis on every ``not reproduced`` or ``not
    computed`` row.
    """
    if not isinstance(comparison, pd.DataFrame):
        if isinstance(comparison, (str, bytes)) or not isinstance(comparison, Iterable):
            raise TypeError(f"comparison must be a DataFrame or a list of dicts, got {type(comparison).__name__}")
        comparison = pd.DataFrame.from_records(list(comparison), columns=list(COMPARISON_COLUMNS))
    comparison = _check_comparison(comparison, "comparison")[list(COMPARISON_COLUMNS)]
    csv_path, _ = write_table(comparison, out_dir, "comparison")
    return csv_path


def write_citing(out_dir: str | os.PathLike[str], text: str) -> Path:
    """Write ``out_dir/citing.md``: the paragraph "what this means if you cite the paper" that REPORT.md quotes.

    Say which of the paper's numbers a reader can rely on, which not and why
    (with the diagnostic that shows it), in a few sentences of Markdown.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("text must be a non-empty paragraph")
    out = _check_out_dir(out_dir)
    return atomic_write_text(out / CITING_FILE, text.strip() + "\n")


def read_comparison(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a ``comparison.csv`` written by :func:`save_comparison`."""
    frame = pd.read_csv(path, keep_default_na=True)
    if "paper_value" in frame.columns and frame["paper_value"].dtype == object:
        numbers_ = pd.to_numeric(frame["paper_value"], errors="coerce")
        frame["paper_value"] = frame["paper_value"].where(numbers_.isna(), numbers_).astype(object)
    if "diagnostic_tolerance" not in frame.columns and "diagnostic_value" in frame.columns:  # written before it existed
        frame.insert(list(frame.columns).index("diagnostic_value") + 1, "diagnostic_tolerance", math.nan)
    for column in ("note", "diagnosis", "diagnostic", "line"):
        if column in frame.columns:
            frame[column] = frame[column].astype(object).where(frame[column].notna(), "").astype(str)
    return _check_comparison(frame, os.fspath(path))


# --------------------------------------------------------------------------- REPORT.md

_FIGURE_SUFFIXES = (".png", ".svg")


def _run_info(folder: Path) -> dict[str, Any]:
    try:
        info = json.loads((folder / RUN_INFO).read_text(encoding="utf-8"))
        return info if isinstance(info, dict) else {}
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return {}


def _link(path: Path, root: Path) -> str:
    relative = path.relative_to(root).as_posix()
    return relative.replace(" ", "%20")


PAPERS = {
    "em_pc": "Xu, Yuan, Wu (IEEE PAC 2017): EM-PC, LapMech, PrivPC*",
    "priv_pc": "Wang, Pang, Song (NeurIPS 2020): Priv-PC, SVT-PC",
    "pcd": "Zhang, Xia, Ren, Guan, Zhou (AAAI 2023): PCD",
    "private_anm": "Kusner, Sun, Sridharan, Weinberger (AISTATS 2016): private ANM",
    "curate": "Bhattacharjee, Tandon (2024): CURATE",
    "dpcd": "this library's own claims (PC against causal-learn, the common-budget benchmark)",
}
"""Short name -> citation of every paper whose claims a comparison may carry (``paper`` column)."""
SUMMARY_COLUMNS = ("paper", "claims", "reproduced", "not reproduced", "explained by a diagnostic", "uninformative",
                   "not refuted", "not computed")
SELF_CHECKS = "dpcd"
"""The ``paper`` name of the library's own claims: reported in their own table, never in the papers' counts."""


def _folders(out_dir: str | os.PathLike[str]) -> tuple[Path, list[Path]]:
    root = _check_out_dir(out_dir)
    if not root.is_dir():
        raise ValueError(f"out_dir {os.fspath(out_dir)!r} does not exist; run `python -m dpcd_papers reproduce` first")
    folders = sorted(p.parent for p in root.glob(f"*/{COMPARISON_FILE}"))
    if not folders:
        raise ValueError(f"no */{COMPARISON_FILE} under {os.fspath(out_dir)!r}; run `python -m dpcd_papers reproduce` "
                         "first")
    return root, folders


def _all_claims(folders: Sequence[Path]) -> pd.DataFrame:
    frames = []
    for folder in folders:
        comparison = read_comparison(folder / COMPARISON_FILE).copy()
        comparison["notebook"] = folder.name
        frames.append(comparison)
    claims = pd.concat(frames, ignore_index=True)
    repeated = claims[claims["claim_id"].duplicated(keep=False)]
    if len(repeated):
        where = repeated.groupby("claim_id")["notebook"].apply(lambda s: ", ".join(sorted(set(s))))
        raise ValueError("a paper claim must be judged in one notebook only; "
                         + "; ".join(f"{claim} in {nbs}" for claim, nbs in where.head(3).items()))
    claims["explained"] = explained(claims)
    return claims


def verdict_counts(out_dir: str | os.PathLike[str], *, papers: bool = True) -> pd.DataFrame:
    """Claims per paper and verdict over every ``out_dir/*/comparison.csv``, each claim counted once.

    Columns :data:`SUMMARY_COLUMNS`: one row per paper (in the order of
    :data:`PAPERS`, unknown names after) and a ``total`` row — the papers'
    claims only; with ``papers=False`` the library's own claims
    (:data:`SELF_CHECKS`) instead. ``explained by a diagnostic`` counts the
    ``not reproduced`` claims whose diagnostic line gives the paper's result
    (:func:`explained`). This is the summary REPORT.md opens with and the README quotes.
    """
    _, folders = _folders(out_dir)
    return _summary(_all_claims(folders), papers=papers)


def _summary(claims: pd.DataFrame, *, papers: bool = True) -> pd.DataFrame:
    claims = claims[(claims["paper"] != SELF_CHECKS) == papers]
    order = [p for p in PAPERS if p in set(claims["paper"])] + sorted(set(claims["paper"]) - set(PAPERS))
    rows = []
    for paper in order:
        part = claims[claims["paper"] == paper]
        rows.append({"paper": paper, "claims": len(part),
                     **{v: int((part["verdict"] == v).sum()) for v in VERDICTS},
                     "explained by a diagnostic": int(part["explained"].sum())})
    table = pd.DataFrame.from_records(rows, columns=list(SUMMARY_COLUMNS))
    total = {"paper": "total", **{c: int(table[c].sum()) for c in SUMMARY_COLUMNS[1:]}}
    return pd.concat([table, pd.DataFrame([total], columns=list(SUMMARY_COLUMNS))], ignore_index=True)


def summary_line(counts: pd.DataFrame) -> str:
    """The one-line summary of :func:`verdict_counts` (its ``total`` row) that the README and the CLI print.

    >>> counts = pd.DataFrame([{"paper": "total", "claims": 12, "reproduced": 6, "not reproduced": 3,
    ...                         "explained by a diagnostic": 2, "uninformative": 1, "not refuted": 1,
    ...                         "not computed": 1}])
    >>> summary_line(counts)
    '12 paper claims: 6 reproduced, 3 not reproduced (2 of them explained by a diagnostic), 1 uninformative, 1 not refuted, 1 not computed'
    """
    total = counts.set_index("paper").loc["total"]
    return (f"{int(total['claims'])} paper claims: {int(total['reproduced'])} reproduced, "
            f"{int(total['not reproduced'])} not reproduced ({int(total['explained by a diagnostic'])} of them "
            f"explained by a diagnostic), {int(total['uninformative'])} uninformative, "
            f"{int(total['not refuted'])} not refuted, {int(total['not computed'])} not computed")


def mark_uninformative(comparison: pd.DataFrame, baselines: pd.DataFrame) -> pd.DataFrame:
    """Turn *reproduced* into *uninformative* where a trivial baseline passes the same test.

    ``baselines`` has one row per (claim, baseline) — columns ``claim_id``,
    ``baseline`` (its name, e.g. "constant 0.5", "non-private PC", "random
    graph with as many edges") and ``value`` — all fixed before the run. A
    reproduced claim whose paper value some baseline also lies within the
    row's tolerance of cannot tell the line from the baseline: its verdict
    becomes ``uninformative`` and the note names the baseline.

    >>> row = {c: "" for c in COMPARISON_COLUMNS}
    >>> row.update(claim_id="x", paper_value=0.5, ours=0.52, tolerance=0.05, verdict="reproduced")
    >>> out = mark_uninformative(pd.DataFrame([row]), pd.DataFrame([{"claim_id": "x", "baseline": "constant 0.5",
    ...                                                               "value": 0.5}]))
    >>> out.loc[0, "verdict"]
    'uninformative'
    """
    comparison = comparison.copy()
    if baselines is None or not len(baselines):
        return comparison
    by_claim = {claim: part for claim, part in baselines.groupby("claim_id")}
    for index, row in comparison.iterrows():
        part = by_claim.get(row["claim_id"])
        if part is None or row["verdict"] != "reproduced":
            continue
        passing = [(str(b), float(v)) for b, v in zip(part["baseline"], part["value"])
                   if _is_number(v) and abs(float(v) - float(row["paper_value"])) <= float(row["tolerance"]) + 1e-12]
        if passing:
            comparison.loc[index, "verdict"] = "uninformative"
            said = "; ".join(f"{name} = {value:.3g}" for name, value in passing)
            note = str(row["note"]) if isinstance(row["note"], str) else ""
            comparison.loc[index, "note"] = (note + "; " if note else "") + (
                f"uninformative: a trivial baseline also lies within the tolerance ({said})")
    return comparison


def mark_uninformative_shares(comparison: pd.DataFrame, shares: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """The qualitative counterpart of :func:`mark_uninformative`: *reproduced* → *uninformative* where the claim,
    judged by its own rule with a trivial baseline in place of the line (``shares``: ``claim_id`` and ``value``,
    the share of cells where it then holds), holds in at least the row's share of cells too.

    >>> row = {c: "" for c in COMPARISON_COLUMNS}
    >>> row.update(claim_id="x", paper_value="A beats B", ours=1.0, tolerance=0.8, verdict="reproduced", note="n")
    >>> out = mark_uninformative_shares(pd.DataFrame([row]), pd.DataFrame({"claim_id": ["x"], "value": [0.9]}),
    ...                                 "a random graph")
    >>> out.loc[0, "verdict"], out.loc[0, "note"]
    ('uninformative', 'n; uninformative: with a random graph in place of each line the claim holds in 90% of cells')
    """
    comparison = comparison.copy()
    by_claim = dict(zip(shares["claim_id"], shares["value"]))
    for index, row in comparison.iterrows():
        share = by_claim.get(row["claim_id"])
        if share is None or row["verdict"] != "reproduced" or not _is_number(share):
            continue
        if float(share) >= float(row["tolerance"]):
            comparison.loc[index, "verdict"] = "uninformative"
            note = str(row["note"]) if isinstance(row["note"], str) else ""
            comparison.loc[index, "note"] = (note + "; " if note else "") + (
                f"uninformative: with {baseline} in place of each line the claim holds in {float(share):.0%} of cells")
    return comparison


_REPORT_INTRO = f"""\
Generated by `python -m dpcd_papers report` from each notebook's `comparison.csv`; each paper claim
has one row, one stable `claim_id` and one verdict, and is counted once.

How a verdict is decided (fixed before any run):

* **reproduced**: a number of ours lies within the tolerance of the paper's. The tolerance is the
  half-width of a two-sample {int(TOLERANCE_LEVEL * 100)} % interval for the difference of two means,
  z·√(s_paper²/n_paper + s_ours²/n_ours), from the paper's reported sd and run count where given and from
  our repetitions (fewer runs, wider interval), never below a floor stated in the row's note. A claim
  without a number is reproduced when it holds in at least the share of settings in its `tolerance`
  column ({QUALITATIVE_SHARE:g} unless the note says otherwise).
* Only the line declared before the run answers a claim (`line`: the faithful, differentially private
  implementation). Diagnostic "paper-as-run" lines (`diagnostic`, `diagnostic_value`) never reproduce a
  claim; they test the cause named in `diagnosis`. A "not reproduced" claim is *explained by a
  diagnostic* when its diagnostic line passes the same test as a verdict: within the tolerance computed
  from **the diagnostic's own** spread and runs (`diagnostic_tolerance`), together with its companion
  claims at the same setting (e.g. TPR and TDR), or holds the qualitative claim.
* **uninformative**: ours lies within the tolerance, but so does a trivial baseline fixed before the run:
  the row cannot tell the algorithm from the baseline, so it is not counted as reproduced. Every rate row
  (TPR, FPR, TDR, F1, accuracy, retention, error rates) faces the constants 0, 0.5 and 1, which hold the
  trivial graphs' rates under the rows' convention (an empty denominator scores 1: the empty graph has TPR 0,
  FPR 0, TDR 1; the complete graph TPR 1, FPR 1), a coin's accuracy and a line without noise (retention 1);
  on top, per paper: a random graph's TDR s and our non-private PC at the same setting (paper 000), a coin
  on the pairs (private ANM), and a random graph with as many edges as each of our runs (paper 000's TPR and
  FPR rows, PCD's F1 rows and the qualitative F1 claims: fixed in kind before the run, it takes each run's
  edge count, so it asks whether our edges beat as many edges placed at random).
* **not refuted**: a privacy claim whose audit found no violation. An audit gives a lower bound on ε; it can
  refute a guarantee, never prove one, so such a row says *not refuted* and states the largest bound the
  audit could have shown (its power).
* **not computed**: no result of ours in this profile; the diagnosis says what it would take.
* The counts are the papers' claims; the library's own claims (`dpcd`) are tallied in a table of their own.
* Absolute run times measured on other machines are shown in the notebooks, not judged.
"""


def time_table(out_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """One row per notebook folder of ``out_dir`` with a ``run.json``: where its run time went.

    Columns: ``notebook``, ``profile``, ``jobs``, ``wall`` (this run's wall-clock
    seconds), ``grid_runs`` (grid cells x repetitions), ``from_cache`` (of those,
    taken from the cache or the committed archive, so not paid for by this
    run's wall time), ``grid_seconds`` (their compute seconds summed, whenever
    computed), ``grid_cpu_seconds`` and ``hot_spot`` (the costliest grid cell,
    summed over its repetitions).
    """
    root = _check_out_dir(out_dir)
    rows = []
    for folder in sorted(p.parent for p in root.glob(f"*/{RUN_INFO}")):
        info = _run_info(folder)
        times = info.get("time_profile", {})
        grids = times.get("grids", [])
        spots = times.get("hot_spots", [])
        top = spots[0] if spots else None
        rows.append({
            "notebook": folder.name, "profile": info.get("profile", "?"), "jobs": info.get("n_jobs"),
            "wall": info.get("seconds"), "grid_runs": sum(g["runs"] for g in grids),
            "from_cache": sum(g["from_cache"] for g in grids),
            "grid_seconds": round(sum(g["seconds"] for g in grids), 1),
            "grid_cpu_seconds": round(sum(g["cpu_seconds"] for g in grids), 1),
            "hot_spot": (f"{top['function']}({top['cell']}): {top['runs']} runs, {format_seconds(top['seconds'])}"
                         if top else ""),
        })
    return pd.DataFrame(rows, columns=["notebook", "profile", "jobs", "wall", "grid_runs", "from_cache",
                                       "grid_seconds", "grid_cpu_seconds", "hot_spot"])


def full_profile_wall(out_dir: str | os.PathLike[str]) -> float:
    """Wall-clock seconds of the committed ``full`` runs of ``out_dir`` together: :func:`time_table`'s ``wall``,
    but for a resumed run (part of its grid from the cache) at least its cells' CPU seconds over its jobs.

    The notebooks run one after another (``make reproduce PROFILE=full``), so their
    walls add up; a resumed run's own wall leaves out what its cached cells cost,
    and their CPU time spread over the run's jobs is a lower bound of what a fresh
    run pays for them. 0.0 when no notebook's results come from the full profile.
    """
    times = time_table(out_dir)
    full = times[times["profile"] == "full"]
    fresh = [max(float(wall), float(cpu) / max(int(jobs or 1), 1)) if cached else float(wall)
             for wall, cpu, jobs, cached in zip(full["wall"], full["grid_cpu_seconds"], full["jobs"],
                                                full["from_cache"])]
    return float(sum(fresh))


def build_report(out_dir: str | os.PathLike[str]) -> Path:
    """Collect every ``out_dir/*/comparison.csv`` into ``out_dir/REPORT.md``.

    The report opens with one row per paper (:func:`verdict_counts`: claims,
    reproduced, not reproduced and how many of those a diagnostic explains,
    not computed) and, per paper, the paragraph "what this means if you cite
    the paper" from the notebook folder's ``citing.md``. Then per notebook
    folder: the profile, date, run time and versions recorded by the runner in
    ``run.json``, the comparison table, and links to the figures (PNG, with
    the SVG beside it) and tables found there. Returns the report's path;
    raises ``ValueError`` when no comparison is found or a claim is judged in
    two notebooks.
    """
    root, folders = _folders(out_dir)
    claims = _all_claims(folders)
    infos = {folder.name: _run_info(folder) for folder in folders}
    counts = _summary(claims)
    notebooks = claims.groupby("paper")["notebook"].apply(lambda s: sorted(set(s)))

    def where(paper: str) -> str:
        if paper == "total":
            return ""
        return ", ".join(f"[{nb}](#{nb.lower()}) ({infos[nb].get('profile', 'unknown profile')})"
                         for nb in notebooks[paper])

    opening = counts.copy()
    opening["notebooks (profile)"] = opening["paper"].map(where)
    lines = ["# Paper vs. reproduced", "", _REPORT_INTRO, "## Summary", "",
             summary_line(counts) + ".", "", to_markdown(opening)]
    own = _summary(claims, papers=False)
    if int(own.set_index("paper").loc["total", "claims"]):
        own = own[own["paper"] != "total"].copy()
        own["notebooks (profile)"] = own["paper"].map(where)
        lines += ["", f"Counted apart from the papers': {PAPERS[SELF_CHECKS]}.", "", to_markdown(own)]
    for paper in [p for p in counts["paper"] if p not in ("total", SELF_CHECKS)]:
        lines += [f"### If you cite {PAPERS.get(paper, paper)}", ""]
        paragraphs = [(folder / CITING_FILE).read_text(encoding="utf-8").strip() for folder in folders
                      if folder.name in notebooks[paper] and (folder / CITING_FILE).is_file()]
        if not paragraphs:
            lines += ["No `citing.md` was written for this paper.", ""]
        for paragraph in paragraphs:
            lines += [wrap_prose(sentence, bullet=True) for sentence in sentences(paragraph)] + [""]

    times = time_table(root)
    if len(times):
        shown = times.assign(wall=times["wall"].map(format_seconds), grid_seconds=times["grid_seconds"].map(format_seconds),
                             grid_cpu_seconds=times["grid_cpu_seconds"].map(format_seconds))
        lines += ["## Run time", "", wrap_prose(_TIME_INTRO), "", to_markdown(shown)]
        full = times[times["profile"] == "full"]
        if len(full):
            resumed = int((full["from_cache"] > 0).sum())
            lines += ["", wrap_prose(
                f"The {len(full)} notebooks run in the full profile took {format_seconds(full_profile_wall(root))} "
                "together (the sum of their wall times above, one notebook after another)"
                + (f"; {resumed} of them took part of their grid from the cache, and count at least their "
                   "cells' CPU time over their jobs (what a fresh run pays for those cells)." if resumed else "."))]

    for folder in folders:
        name = folder.name
        comparison = claims[claims["notebook"] == name]
        info = infos[name]
        profile = info.get("profile", "unknown (no run.json)")
        lines += [f"## {name}", ""]
        if info:
            versions = info.get("packages", {})
            version_text = ", ".join(f"{k} {v}" for k, v in versions.items() if v)
            lines.append(wrap_prose(
                f"Profile **{profile}**, run on {info.get('date', '?')} in {format_seconds(info.get('seconds'))}"
                f" with Python {info.get('python', '?')}" + (f" ({version_text})." if version_text else ".")))
        else:
            lines.append("No run.json in this folder: the profile and date of these results are unknown.")
        archive = folder / CELLS_ARCHIVE
        if archive.exists():
            counts = archive_status(archive).values()
            total, current = sum(c["entries"] for c in counts), sum(c["current"] for c in counts)
            lines += ["", f"Grid results: {total} in `{CELLS_ARCHIVE}`, "
                      + ("all computed with the current code (re-used by a run of the same profile)." if current == total
                         else f"{total - current} of them computed with earlier code: a run of the same profile "
                              "recomputes those, and the numbers here are the earlier code's.")]
        spots = info.get("time_profile", {}).get("hot_spots", [])
        if spots:
            lines += ["", "Hot spots (grid cells by compute seconds, summed over repetitions):", ""]
            lines += [wrap_prose(f"`{s['function']}({s['cell']})`: {s['runs']} runs, {format_seconds(s['seconds'])}",
                                 bullet=True) for s in spots]
        verdicts = {v: int((comparison["verdict"] == v).sum()) for v in VERDICTS}
        lines += ["", f"Claims: {len(comparison)}; " + ", ".join(f"{verdicts[v]} {v}" for v in VERDICTS)
                  + f" ({int(comparison['explained'].sum())} explained by a diagnostic).", ""]
        table = comparison[list(COMPARISON_COLUMNS)]
        if table["paper"].nunique() <= 1:
            table = table.drop(columns=["paper"])
        lines.append(to_markdown(table))
        figures = sorted(p for p in folder.iterdir() if p.suffix == ".png" and not p.name.startswith("."))
        if figures:
            lines += ["Figures:", ""]
            for figure in figures:
                svg = figure.with_suffix(".svg")
                extra = f" ([SVG]({_link(svg, root)}))" if svg.exists() else ""
                lines.append(f"- [{figure.stem}]({_link(figure, root)}){extra}")
                lines.append(f"  ![{figure.stem}]({_link(figure, root)})")
            lines.append("")
        tables = sorted(
            p for p in folder.iterdir()
            if p.suffix == ".md" and p.stem not in ("comparison", Path(CITING_FILE).stem)
            and not p.name.startswith(".")
        )
        if tables:
            lines += [wrap_prose("Tables: " + ", ".join(f"[{t.stem}]({_link(t, root)})" for t in tables)), ""]
    text = "\n".join(lines)
    return atomic_write_text(root / REPORT_FILE, text.rstrip("\n") + "\n")


PROSE_WIDTH = 110
"""Width of REPORT.md's prose lines (tables are left as they are); no prose line is longer unless one word is."""


def wrap_prose(text: str, *, bullet: bool = False, width: int = PROSE_WIDTH) -> str:
    """``text`` as Markdown lines of at most ``width`` characters (a list item with ``bullet``): Markdown joins
    them into the same paragraph, so the page reads the same and the file stays readable.

    >>> print(wrap_prose("one two three four", bullet=True, width=10))
    - one two
      three
      four
    """
    lead = "- " if bullet else ""
    return textwrap.fill(" ".join(str(text).split()), width=width, initial_indent=lead,
                         subsequent_indent=" " * len(lead), break_long_words=False, break_on_hyphens=False)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(*`])")
_ABBREVIATIONS = ("e.g.", "i.e.", "cf.", "vs.", "Fig.", "Figs.", "Eq.", "Thm.", "Sec.", "App.", "Alg.", "al.",
                  "Tab.", "No.")


def sentences(paragraph: str) -> list[str]:
    """The sentences of ``paragraph`` (a sentence ends at ., ! or ? before a capital, except after a common
    abbreviation), for the bullets of "If you cite".

    >>> sentences("As in Fig. 2 it holds. Thm. 8 fails (see App. D). A third one.")
    ['As in Fig. 2 it holds.', 'Thm. 8 fails (see App. D).', 'A third one.']
    """
    out: list[str] = []
    for piece in _SENTENCE_END.split(" ".join(paragraph.split())):
        if out and out[-1].endswith(_ABBREVIATIONS):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return [sentence for sentence in out if sentence]


def format_seconds(value: Any) -> str:
    """Seconds as text: "12.3 s", "4.5 min" or "2.1 h"."""
    if not _is_number(value):
        return "? s"
    value = float(value)
    if value >= 7200:
        return f"{value / 3600:.1f} h"
    return f"{value:.1f} s" if value < 120 else f"{value / 60:.1f} min"


_TIME_INTRO = ("Per notebook: the wall-clock time of the run that wrote these results (`jobs` worker processes), "
               "the grid runs (cells x repetitions) and how many of them came from the cache or the committed "
               "`cells.jsonl.gz` (their time is not in this run's wall time), the compute seconds of all grid runs "
               "whenever they were computed (wall and CPU, summed over workers) and the costliest grid cell. "
               "Per-cell details are in each folder's `run.json` (`time_profile`).")

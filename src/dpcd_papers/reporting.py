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
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpcd.validation import check_positive

from ._io import atomic_write_text, data_dir

__all__ = [
    "COMPARISON_COLUMNS",
    "VERDICTS",
    "data_dir",
    "write_table",
    "to_markdown",
    "load_paper_values",
    "compare",
    "qualitative",
    "save_comparison",
    "read_comparison",
    "build_report",
    "verdict_counts",
]

COMPARISON_COLUMNS = ("paper", "item", "metric", "paper_value", "ours", "difference", "tolerance", "verdict", "note")
VERDICTS = ("reproduced", "not reproduced", "qualitative", "not computed")
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


def compare(
    paper_values: pd.DataFrame,
    ours: pd.DataFrame,
    on: Sequence[str],
    *,
    tolerance_column: str = "tolerance",
    value_column: str = "value",
    ours_column: str | None = None,
    metric_column: str = "metric",
    default_tolerance: float | None = None,
    paper: str | None = None,
) -> pd.DataFrame:
    """Match paper values with ours and give each a verdict.

    Parameters
    ----------
    paper_values
        One row per reported number, with the key columns ``on``, the value in
        ``value_column`` (missing = qualitative claim), the absolute tolerance
        in ``tolerance_column`` and optionally ``note`` and ``paper``.
    ours
        Our results with the same key columns, one row per key (aggregate
        repetitions first, e.g. ``df.groupby(on, as_index=False).mean()``),
        the value in ``ours_column`` (default ``value_column``).
    on
        Key columns identifying a number (e.g. ``["network", "epsilon", "metric"]``).
    default_tolerance
        Used where ``tolerance_column`` is missing or empty.
    paper
        Paper name for the ``paper`` column (default: ``paper_values["paper"]``).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COMPARISON_COLUMNS`, one row per paper value. Verdicts:
        ``qualitative`` (the paper gives no number), ``not computed`` (no
        result of ours), ``reproduced`` (``|ours - paper| <= tolerance``) or
        ``not reproduced``. ``item`` is ``on``'s ``item`` column if present,
        otherwise ``key=value`` pairs of the key columns other than the metric.
    """
    paper_values = _check_frame(paper_values, "paper_values")
    ours = _check_frame(ours, "ours")
    if isinstance(on, str):
        on = [on]
    if not isinstance(on, Sequence) or not on or not all(isinstance(c, str) for c in on):
        raise TypeError("on must be a non-empty list of column names")
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
    if default_tolerance is not None:
        default_tolerance = check_positive(default_tolerance, "default_tolerance", allow_zero=True)
    if tolerance_column not in paper_values.columns and default_tolerance is None:
        raise ValueError(
            f"tolerance_column {tolerance_column!r} is missing from paper_values; add it or pass default_tolerance"
        )
    duplicated = ours.duplicated(subset=on, keep=False)
    if duplicated.any():
        example = ours.loc[duplicated, on].iloc[0].to_dict()
        raise ValueError(
            f"ours has several rows for the key {example}; aggregate first, "
            f"e.g. ours.groupby({on}, as_index=False)[{ours_column!r}].mean()"
        )

    def key_of(row: pd.Series) -> tuple:
        return tuple(_key_part(row[c]) for c in on)

    lookup = {key_of(row): row[ours_column] for _, row in ours.iterrows()}
    records = []
    for _, row in paper_values.iterrows():
        paper_value = row[value_column]
        our_value = lookup.get(key_of(row), math.nan)
        tolerance = row[tolerance_column] if tolerance_column in paper_values.columns else math.nan
        if not _is_number(tolerance):
            tolerance = math.nan if default_tolerance is None else default_tolerance
        difference = math.nan
        if not _is_number(paper_value):
            verdict = "qualitative"
        elif not _is_number(our_value):
            verdict = "not computed"
        else:
            difference = float(our_value) - float(paper_value)
            if math.isnan(tolerance):
                raise ValueError(
                    f"paper value for {key_of(row)} has no tolerance in column {tolerance_column!r}; "
                    "fill it in or pass default_tolerance"
                )
            verdict = "reproduced" if abs(difference) <= float(tolerance) + 1e-12 else "not reproduced"
        if "item" in on:
            item = str(row["item"])
        else:
            item = ", ".join(f"{c}={_format_key(row[c])}" for c in on if c != metric_column)
        metric = str(row[metric_column]) if metric_column in paper_values.columns else ours_column
        name = paper if paper is not None else (str(row["paper"]) if "paper" in paper_values.columns else "")
        note = row["note"] if "note" in paper_values.columns and isinstance(row["note"], str) else ""
        records.append(
            {
                "paper": name,
                "item": item,
                "metric": metric,
                "paper_value": _as_float(paper_value) if _is_number(paper_value) else (
                    paper_value if isinstance(paper_value, str) else math.nan
                ),
                "ours": our_value if not isinstance(our_value, (np.generic,)) else our_value.item(),
                "difference": difference,
                "tolerance": _as_float(tolerance),
                "verdict": verdict,
                "note": note,
            }
        )
    return pd.DataFrame.from_records(records, columns=list(COMPARISON_COLUMNS))


def _key_part(value: Any) -> Any:
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _format_key(value: Any) -> str:
    value = _key_part(value)
    return format(value, "g") if isinstance(value, float) else str(value)


def qualitative(paper: str, item: str, metric: str, ours: Any, note: str) -> dict[str, Any]:
    """One comparison row for a claim without a number (verdict ``qualitative``).

    ``ours`` is what we observed (e.g. ``True`` when the claim holds) and
    ``note`` states the claim and whether it holds, in words.
    """
    for argument, value in (("paper", paper), ("item", item), ("metric", metric), ("note", note)):
        if not isinstance(value, str):
            raise TypeError(f"{argument} must be a string, got {type(value).__name__}")
    if isinstance(ours, np.generic):
        ours = ours.item()
    return {
        "paper": paper,
        "item": item,
        "metric": metric,
        "paper_value": math.nan,
        "ours": ours,
        "difference": math.nan,
        "tolerance": math.nan,
        "verdict": "qualitative",
        "note": note,
    }


def _check_comparison(df: pd.DataFrame, argument: str) -> pd.DataFrame:
    df = _check_frame(df, argument)
    missing = [c for c in COMPARISON_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(
            f"{argument} is missing comparison column(s) {missing}; build it with dpcd_papers.reporting.compare "
            "or dpcd_papers.reporting.qualitative"
        )
    bad = sorted(set(df["verdict"].astype(str)) - set(VERDICTS))
    if bad:
        raise ValueError(f"{argument} has unknown verdict(s) {bad}; allowed: {list(VERDICTS)}")
    return df


def save_comparison(comparison: pd.DataFrame | Iterable[dict[str, Any]], out_dir: str | os.PathLike[str]) -> Path:
    """Write a notebook's comparison to ``out_dir/comparison.csv`` (and ``comparison.md``).

    ``comparison`` is a frame from :func:`compare` (possibly several
    concatenated) or a list of row dicts from :func:`qualitative`.
    """
    if not isinstance(comparison, pd.DataFrame):
        if isinstance(comparison, (str, bytes)) or not isinstance(comparison, Iterable):
            raise TypeError(f"comparison must be a DataFrame or a list of dicts, got {type(comparison).__name__}")
        comparison = pd.DataFrame.from_records(list(comparison), columns=list(COMPARISON_COLUMNS))
    comparison = _check_comparison(comparison, "comparison")[list(COMPARISON_COLUMNS)]
    csv_path, _ = write_table(comparison, out_dir, "comparison")
    return csv_path


def read_comparison(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a ``comparison.csv`` written by :func:`save_comparison`."""
    frame = pd.read_csv(path, keep_default_na=True)
    frame["note"] = frame["note"].fillna("") if "note" in frame.columns else ""
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


def build_report(out_dir: str | os.PathLike[str]) -> Path:
    """Collect every ``out_dir/*/comparison.csv`` into ``out_dir/REPORT.md``.

    Per notebook folder: the profile, date, run time and versions recorded by
    the runner in ``run.json``, verdict counts, the comparison table, and links
    to the figures (PNG, with the SVG beside it) and tables found in that
    folder. Returns the report's path; raises ``ValueError`` when no
    comparison is found.
    """
    root = _check_out_dir(out_dir)
    if not root.is_dir():
        raise ValueError(f"out_dir {os.fspath(out_dir)!r} does not exist; run `python -m dpcd_papers reproduce` first")
    folders = sorted(p.parent for p in root.glob(f"*/{COMPARISON_FILE}"))
    if not folders:
        raise ValueError(f"no */{COMPARISON_FILE} under {os.fspath(out_dir)!r}; run `python -m dpcd_papers reproduce` first")

    sections: list[str] = []
    summary_rows = []
    for folder in folders:
        name = folder.name
        comparison = read_comparison(folder / COMPARISON_FILE)
        info = _run_info(folder)
        counts = {v: int((comparison["verdict"] == v).sum()) for v in VERDICTS}
        profile = info.get("profile", "unknown (no run.json)")
        summary_rows.append({"notebook": f"[{name}](#{name.lower()})", "profile": profile, **counts})

        lines = [f"## {name}", ""]
        if info:
            versions = info.get("packages", {})
            version_text = ", ".join(f"{k} {v}" for k, v in versions.items() if v)
            lines.append(
                f"Profile **{profile}**, run on {info.get('date', '?')} in {_seconds(info.get('seconds'))}"
                f" with Python {info.get('python', '?')}" + (f" ({version_text})." if version_text else ".")
            )
        else:
            lines.append("No run.json in this folder: the profile and date of these results are unknown.")
        lines += ["", "Verdicts: " + ", ".join(f"{counts[v]} {v}" for v in VERDICTS) + ".", ""]
        table = comparison.drop(columns=["paper"]) if comparison["paper"].nunique() <= 1 else comparison
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
            if p.suffix == ".md" and p.stem != "comparison" and not p.name.startswith(".")
        )
        if tables:
            lines += ["Tables: " + ", ".join(f"[{t.stem}]({_link(t, root)})" for t in tables), ""]
        sections.append("\n".join(lines))

    summary = pd.DataFrame.from_records(summary_rows, columns=["notebook", "profile", *VERDICTS])
    header = [
        "# Paper vs. reproduced",
        "",
        "Generated by `python -m dpcd_papers report` from each notebook's `comparison.csv`. "
        "A number is *reproduced* when ours lies within the stated tolerance of the paper's; "
        "*qualitative* rows are claims without a number (the note says whether ours agrees); "
        "*not computed* rows have no result of ours in this profile.",
        "",
        to_markdown(summary),
    ]
    text = "\n".join(header) + "\n" + "\n".join(sections)
    return atomic_write_text(root / REPORT_FILE, text.rstrip("\n") + "\n")


def verdict_counts(out_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """Counts per verdict of every ``out_dir/*/comparison.csv``: one row per notebook plus a ``total`` row.

    Columns ``notebook`` and :data:`VERDICTS`; this is the summary the README quotes.
    """
    root = _check_out_dir(out_dir)
    folders = sorted(p.parent for p in root.glob(f"*/{COMPARISON_FILE}")) if root.is_dir() else []
    if not folders:
        raise ValueError(f"no */{COMPARISON_FILE} under {os.fspath(out_dir)!r}; run `python -m dpcd_papers reproduce` first")
    rows = []
    for folder in folders:
        verdicts = read_comparison(folder / COMPARISON_FILE)["verdict"]
        rows.append({"notebook": folder.name, **{v: int((verdicts == v).sum()) for v in VERDICTS}})
    counts = pd.DataFrame.from_records(rows, columns=["notebook", *VERDICTS])
    total = {"notebook": "total", **{v: int(counts[v].sum()) for v in VERDICTS}}
    return pd.concat([counts, pd.DataFrame([total])], ignore_index=True)


def _seconds(value: Any) -> str:
    if not _is_number(value):
        return "? s"
    value = float(value)
    return f"{value:.1f} s" if value < 120 else f"{value / 60:.1f} min"

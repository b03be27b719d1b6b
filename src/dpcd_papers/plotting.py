"""One house style for every figure: seaborn, a colour-blind palette, fixed algorithm colours.

* :func:`set_style` — call once at the top of a notebook.
* :data:`ALGORITHM_COLOURS` / :data:`ALGORITHM_MARKERS` — each algorithm keeps
  its colour and marker across all figures; :func:`palette_for` extends them
  to other names.
* :func:`savefig` — PNG (150 dpi) + SVG, written atomically and without
  timestamps, so re-running a notebook only changes a figure when its content
  changes.
* :func:`draw_graph` — a DAG or CPDAG (undirected edges stored both ways are
  drawn once, without arrow heads); the library's own, :mod:`dpcd.release.drawing`.
* :func:`errorbar_plot` — mean ± standard deviation over repetitions.
* :func:`mark_paper_values` — the paper's printed numbers on the same axes
  (black open markers, one legend entry "paper").
* :data:`MAX_LINES_PER_PANEL` — at most this many lines in one panel; put
  diagnostic and reference lines in a panel or row of their own, labelled
  "(not DP)" where they are not differentially private.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable, Mapping
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from dpcd.release.drawing import draw_graph

from ._io import atomic_write

__all__ = [
    "ALGORITHM_COLOURS",
    "ALGORITHM_MARKERS",
    "set_style",
    "palette_for",
    "savefig",
    "draw_graph",
    "errorbar_plot",
    "mark_paper_values",
    "MAX_LINES_PER_PANEL",
]

# seaborn's "colorblind" palette (Okabe-Ito-like), plus black for the non-private baseline.
_CB = sns.color_palette("colorblind").as_hex()
ALGORITHM_COLOURS: dict[str, str] = {
    "PC": "#000000",
    "EM-PC": _CB[0],  # blue
    "LapMech": _CB[1],  # orange
    "PrivPC*": _CB[2],  # green
    "Priv-PC": _CB[3],  # vermilion
    "SVT-PC": _CB[4],  # pink
    "PCD": _CB[5],  # brown
    "CURATE": _CB[9],  # sky blue
    "CURATE-SB": _CB[6],  # light pink
    "NOLEAKS": _CB[8],  # yellow
    "NOTEARS": _CB[7],  # grey
    "ANM": _CB[0],  # blue (ANM is never plotted next to EM-PC)
    "Marginal-PC": "#882255",  # wine
    "MST-PC": "#117733",  # dark green
    "AIM-PC": "#999933",  # olive
    "Moment-PC": "#332288",  # indigo
    "GCM-PC": "#44AA99",  # teal
    "auto (discover)": "#AA4499",  # purple
    "PC (not private)": "#777777",
}
"""Colour of each algorithm, identical in every figure of the compendium."""

ALGORITHM_MARKERS: dict[str, str] = {
    "PC": "o",
    "EM-PC": "s",
    "LapMech": "^",
    "PrivPC*": "v",
    "Priv-PC": "D",
    "SVT-PC": "P",
    "PCD": "X",
    "CURATE": "*",
    "CURATE-SB": "h",
    "NOLEAKS": "<",
    "NOTEARS": ">",
    "ANM": "o",
    "Marginal-PC": "d",
    "MST-PC": "p",
    "AIM-PC": "x",
    "Moment-PC": "H",
    "GCM-PC": "8",
    "auto (discover)": "o",
    "PC (not private)": "",
}
"""Marker of each algorithm, so figures stay readable in greyscale."""

_EXTRA = ["#332288", "#117733", "#44AA99", "#88CCEE", "#DDCC77", "#CC6677", "#AA4499", "#882255"]


def set_style(context: str = "notebook") -> None:
    """Apply the house style (seaborn ``whitegrid``, colour-blind palette, 150 dpi, no SVG timestamps).

    ``context`` is seaborn's scaling context: ``paper``, ``notebook``, ``talk`` or ``poster``.
    """
    if context not in {"paper", "notebook", "talk", "poster"}:
        raise ValueError(f"context must be 'paper', 'notebook', 'talk' or 'poster', got {context!r}")
    sns.set_theme(context=context, style="whitegrid", palette="colorblind")
    matplotlib.rcParams.update(
        {
            "figure.dpi": 100,
            "savefig.dpi": 150,
            "savefig.bbox": "tight",
            "axes.spines.top": False,
            "axes.spines.right": False,
            "legend.frameon": False,
            "svg.hashsalt": "dpcd",
        }
    )


def palette_for(names: Iterable[Hashable]) -> dict[Hashable, str]:
    """Colours for ``names``: the fixed algorithm colour where known, otherwise unused colours in order."""
    names = list(dict.fromkeys(names))
    palette: dict[Hashable, str] = {}
    used = {ALGORITHM_COLOURS[n] for n in names if isinstance(n, str) and n in ALGORITHM_COLOURS}
    spare = [c for c in [*_CB, *_EXTRA] if c not in used]
    for name in names:
        if isinstance(name, str) and name in ALGORITHM_COLOURS:
            palette[name] = ALGORITHM_COLOURS[name]
        else:
            palette[name] = spare.pop(0) if spare else "#666666"
    return palette


def _check_out(out_dir: Any, name: Any) -> tuple[Path, str]:
    if not isinstance(out_dir, (str, os.PathLike)):
        raise TypeError(f"out_dir must be a path, got {type(out_dir).__name__}")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"out_dir {os.fspath(out_dir)!r} exists and is not a folder")
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {type(name).__name__}")
    if not name or "/" in name or "\\" in name or name in {".", ".."} or name.endswith((".png", ".svg")):
        raise ValueError(f"name must be a plain file name without folder or extension, got {name!r}")
    return out, name


def savefig(fig: Figure, out_dir: str | os.PathLike[str], name: str, *, dpi: int = 150) -> tuple[Path, Path]:
    """Save ``fig`` as ``out_dir/name.png`` (``dpi``) and ``out_dir/name.svg``; return both paths.

    The files carry no creation date or software stamp and are written through
    a temporary file + ``os.replace``. The figure stays open (so a notebook
    still displays it).
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    out, name = _check_out(out_dir, name)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt, metadata in (("png", {"Software": None}), ("svg", {"Date": None, "Creator": None})):
        def write(handle, fmt=fmt, metadata=metadata):
            with matplotlib.rc_context({"svg.hashsalt": "dpcd"}):
                fig.savefig(handle, format=fmt, dpi=dpi, bbox_inches="tight", metadata=metadata)

        paths.append(atomic_write(out / f"{name}.{fmt}", write))
    return paths[0], paths[1]


def errorbar_plot(
    df: pd.DataFrame,
    x: str,
    y: str,
    hue: str,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    logx: bool = False,
    palette: Mapping[Hashable, str] | None = None,
    legend: bool = True,
) -> Axes:
    """Mean ± standard deviation of ``y`` against ``x``, one line per ``hue`` value.

    The standard deviation is over the rows sharing (``hue``, ``x``), e.g. the
    repetitions of :func:`dpcd_papers.experiments.run_grid`; with one row no bar is
    drawn. Algorithm names get their :data:`ALGORITHM_COLOURS` and markers.
    Returns the axes (a new figure is made when ``ax`` is None).
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    for argument, column in (("x", x), ("y", y), ("hue", hue)):
        if not isinstance(column, str):
            raise TypeError(f"{argument} must be a column name (string), got {type(column).__name__}")
        if column not in df.columns:
            raise ValueError(f"{argument}={column!r} is not a column of df (columns: {list(df.columns)})")
    if not pd.api.types.is_numeric_dtype(df[y]):
        raise TypeError(f"y={y!r} must be a numeric column, got dtype {df[y].dtype}")
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.8))
    elif not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")
    stats = df.groupby([hue, x], sort=True, observed=True)[y].agg(["mean", "std", "count"]).reset_index()
    names = list(dict.fromkeys(df[hue]))
    colours = dict(palette) if palette is not None else palette_for(names)
    for name in names:
        part = stats[stats[hue] == name]
        if part.empty:
            continue
        marker = ALGORITHM_MARKERS.get(name, "o") if isinstance(name, str) else "o"
        ax.errorbar(
            part[x], part["mean"], yerr=part["std"].fillna(0.0).where(part["count"] > 1, 0.0),
            label=str(name), color=colours.get(name), marker=marker, markersize=5, capsize=3, linewidth=1.5,
        )
    if logx:
        ax.set_xscale("log")
        _plain_log_ticks(ax, stats[x])
    ax.set_xlabel(xlabel if xlabel is not None else x)
    ax.set_ylabel(ylabel if ylabel is not None else y)
    if title is not None:
        ax.set_title(title)
    if legend and names:
        ax.legend(title=hue)
    return ax


def _plain_log_ticks(ax: Axes, values: Iterable[float]) -> None:
    """On a log axis, ticks at the data's x values printed plainly (no 3×10⁻¹ minor labels running together)."""
    from matplotlib.ticker import NullFormatter

    xs = sorted({float(v) for v in values if pd.notna(v) and float(v) > 0})
    ax.xaxis.set_minor_formatter(NullFormatter())
    if 0 < len(xs) <= 8:
        ax.set_xticks(xs)
        ax.set_xticklabels([format(v, "g") for v in xs])


MAX_LINES_PER_PANEL = 5
"""Most lines a panel should carry so that a reader can tell them apart at a glance."""


def mark_paper_values(ax: Axes, x: Iterable[float], y: Iterable[float], *, label: str | None = "paper",
                      marker: str = "o", size: float = 60.0) -> Axes:
    """Mark the paper's printed values at (``x``, ``y``) on ``ax``: black open markers above the lines.

    Only the first call on an axes adds ``label`` to the legend. Missing values
    are skipped. Returns ``ax``.
    """
    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
    xs, ys = pd.to_numeric(pd.Series(list(x)), errors="coerce"), pd.to_numeric(pd.Series(list(y)), errors="coerce")
    if len(xs) != len(ys):
        raise ValueError(f"x and y must have the same length, got {len(xs)} and {len(ys)}")
    keep = xs.notna() & ys.notna()
    existing = {h.get_label() for h in ax.collections}
    ax.scatter(xs[keep], ys[keep], s=size, marker=marker, facecolors="none", edgecolors="black", linewidths=1.4,
               zorder=5, label=label if label and label not in existing else "_nolegend_")
    return ax

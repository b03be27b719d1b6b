"""The benchmark's held-out grid: a release the schema refuses is a row that says so, never a failed grid.

A data holder's table can have what no development network has — a column of more than
:data:`dpcd.preparation.MAX_LEVELS` categories, which every categorical algorithm refuses until the schema merges
some — and the issue's protocol reports such a network as refused for that method, not dropped. These wrappers
of :func:`dpcd_papers.benchmark.run_cell` and :func:`~dpcd_papers.benchmark.diagnose_cell` turn the schema's
refusal (:class:`dpcd.schema.SchemaError`, raised from public inputs before any value is read) into that row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpcd.registry import ALGORITHMS
from dpcd.schema import SchemaError
from dpcd.validation import RngLike

from .benchmark import diagnose_cell, run_cell

__all__ = ["run_held_out_cell", "diagnose_held_out_cell", "refused_row"]

_METRICS = ("f1", "skeleton_f1", "shd", "seconds", "epsilon_spent", "delta_spent", "epsilon_guarantee",
            "delta_guarantee", "parameter", "forecast_skeleton_f1", "forecast_f1")


def refused_row(algorithm: str, reason: str) -> dict[str, Any]:
    """The row of a release refused before it ran: the algorithm's label, ``error`` = "refused: ``reason``", NaN
    metrics.

    >>> row = refused_row("marginal_pc", "too many categories")
    >>> row["label"], row["error"], bool(np.isnan(row["skeleton_f1"]))
    ('Marginal-PC', 'refused: too many categories', True)
    """
    label = "auto (discover)" if algorithm == "auto" else ALGORITHMS[algorithm].label
    return {"label": label, "picked": "", "p": np.nan, "within_budget": False, "error": f"refused: {reason}",
            **dict.fromkeys(_METRICS, np.nan)}


def run_held_out_cell(*, dataset: str, algorithm: str, epsilon: float, delta: float, n: int, rng: RngLike,
                      alpha: float = 0.05) -> list[dict[str, Any]]:
    """:func:`~dpcd_papers.benchmark.run_cell`, with a schema's refusal returned as :func:`refused_row`."""
    try:
        return run_cell(dataset=dataset, algorithm=algorithm, epsilon=epsilon, delta=delta, n=n, rng=rng,
                        alpha=alpha)
    except SchemaError as refused:
        return [refused_row(algorithm, str(refused))]


def diagnose_held_out_cell(*, dataset: str, epsilon: float, delta: float, n: int, rng: RngLike,
                           alpha: float = 0.05) -> list[dict[str, Any]]:
    """:func:`~dpcd_papers.benchmark.diagnose_cell`, with a schema's refusal as one row of kind "refused: …"."""
    try:
        return diagnose_cell(dataset=dataset, epsilon=epsilon, delta=delta, n=n, rng=rng, alpha=alpha)
    except SchemaError as refused:
        return [{"p": np.nan, "true_edges": np.nan, "skeleton_f1": np.nan, "f1": np.nan,
                 "ceiling_skeleton_f1": np.nan, "ceiling_f1": np.nan, "kind": f"refused: {refused}", "count": 0}]

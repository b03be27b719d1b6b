"""Cross-paper benchmark: every private discovery algorithm at the same total (ε, δ).

The papers each compare their algorithm with one or two baselines, each under
its own accounting (per-test ε, advanced composition, a privacy "cost" read off
after the run). Here every algorithm of :data:`dpcd.release.ALGORITHMS` gets
the **same total budget**, measured by the **same tight accountant** (the
ledger's PLD accountant at δ), through :func:`dpcd.release.calibrate`:
total-budget algorithms receive (ε, δ) directly, per-test and per-edge
algorithms the largest per-round ε whose data-independent worst-case plan
composes to at most ε. A run whose own ledger exceeds the budget (NOLEAKS and
CURATE-SB charge δ = m/n for their line-search subset, far above a usual δ) is
kept but flagged ``within_budget = False``.

:func:`run_cell` is the experiment function for :func:`dpcd.experiments.run_grid`;
:func:`summarise` and :func:`rank_table` aggregate its rows.

Privacy of each run: as stated by the algorithm's own docstring (neighbouring
relation, public quantities); the benchmark only measures accuracy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._validation import RngLike, as_rng, check_delta, check_epsilon, check_int, check_probability
from .datasets import BNLEARN_NETWORKS, load_bnlearn, random_dag, sample_linear_gaussian, sample_nonlinear
from .release import ALGORITHMS, calibrate, run_algorithm
from .experiments import timed
from .graphs import cpdag_pair_prf, dag_to_cpdag, shd, skeleton_prf

__all__ = ["CURATE_NETWORKS", "SYNTHETIC", "dataset_kind", "load_dataset", "run_cell", "summarise", "rank_table",
           "missing_algorithms"]

CURATE_NETWORKS = ("cancer", "earthquake", "survey", "asia", "sachs", "child")
"""The six bnlearn networks of CURATE's experiments (Bhattacharjee & Tandon 2024)."""
SYNTHETIC = ("linear_gaussian", "nonlinear")
"""Numeric synthetic data: a random DAG with a linear-Gaussian SEM or the PCD paper's nonlinear SEM."""
SYNTHETIC_P = 8
SYNTHETIC_SPARSENESS = 0.3


def dataset_kind(dataset: str) -> str:
    """``"categorical"`` for a bnlearn network, ``"numeric"`` for the synthetic datasets."""
    if dataset in SYNTHETIC:
        return "numeric"
    if dataset in BNLEARN_NETWORKS or dataset in CURATE_NETWORKS:
        return "categorical"
    raise ValueError(f"dataset must be a bnlearn network or one of {SYNTHETIC}, got {dataset!r}")


def load_dataset(dataset: str, n: int, rng: RngLike) -> tuple[pd.DataFrame, Any]:
    """Data and true DAG of ``dataset`` (bnlearn network or synthetic), ``n`` rows."""
    n = check_int(n, "n", minimum=10)
    generator = as_rng(rng)
    if dataset_kind(dataset) == "categorical":
        data, dag = load_bnlearn(dataset, n, generator)
        return data, dag
    dag = random_dag(SYNTHETIC_P, SYNTHETIC_SPARSENESS, generator)
    sampler = sample_linear_gaussian if dataset == "linear_gaussian" else sample_nonlinear
    data, dag = sampler(dag, n, generator)
    return data, dag


def missing_algorithms() -> list[str]:
    """Labels of registry algorithms whose module is not part of this version."""
    return [spec.label for spec in ALGORITHMS.values() if not spec.available]


def run_cell(*, dataset: str, algorithm: str, epsilon: float, delta: float, n: int, rng: RngLike,
             alpha: float = 0.05, max_order: int | None = None) -> list[dict[str, Any]]:
    """One run of ``algorithm`` on a fresh sample of ``dataset`` at total (epsilon, delta).

    Returns one row (a list, empty when the algorithm does not apply to the
    dataset's type or is not available): F1 on CPDAG edge pairs and on the
    skeleton, SHD against the true CPDAG, run time, the calibrated parameter,
    the achieved tight (ε, δ) and whether it is within the budget. An
    algorithm that raises gives a row with ``error`` set and NaN metrics.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    spec = ALGORITHMS[algorithm]
    if spec.data != dataset_kind(dataset) or not spec.available:
        return []
    generator = as_rng(rng)
    data, dag = load_dataset(dataset, n, generator)
    truth = dag_to_cpdag(dag)
    calibration = calibrate(spec, p=data.shape[1], epsilon=epsilon, delta=delta, max_order=max_order)
    row: dict[str, Any] = {"label": spec.label, "p": data.shape[1],
                           "parameter": calibration.kwargs.get(spec.epsilon_arg), "error": ""}
    try:
        result, seconds = timed(run_algorithm, spec, data, epsilon=epsilon, delta=delta, alpha=alpha,
                                max_order=max_order, rng=generator, calibration=calibration)
    except Exception as error:  # noqa: BLE001 - recorded, the grid goes on
        row.update({"f1": np.nan, "skeleton_f1": np.nan, "shd": np.nan, "seconds": np.nan,
                    "epsilon_spent": np.nan, "delta_spent": np.nan, "within_budget": False,
                    "error": f"{type(error).__name__}: {error}"})
        return [row]
    graph = getattr(result, "cpdag", None)
    estimate = graph if graph is not None else dag_to_cpdag(result.dag)
    total = result.ledger.total("tight", target_delta=delta)
    row.update({
        "f1": cpdag_pair_prf(estimate, truth)["f1"],
        "skeleton_f1": skeleton_prf(estimate, truth)["f1"],
        "shd": shd(estimate, truth)["shd"],
        "seconds": seconds,
        "epsilon_spent": total.epsilon,
        "delta_spent": total.delta,
        "within_budget": bool(total.epsilon <= epsilon * (1 + 1e-9) and total.delta <= delta * (1 + 1e-9)),
    })
    return [row]


def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Mean ± std over repetitions per (dataset, algorithm, ε)."""
    metrics = ["f1", "skeleton_f1", "shd", "seconds", "epsilon_spent"]
    grouped = results.groupby(["dataset", "label", "epsilon"], sort=False)
    summary = grouped[metrics].agg(["mean", "std"])
    summary.columns = [f"{m}_{s}" for m, s in summary.columns]
    summary["runs"] = grouped.size()
    summary["within_budget"] = grouped["within_budget"].all()
    summary["errors"] = grouped["error"].apply(lambda e: int((e != "").sum()))
    return summary.reset_index()


def rank_table(summary: pd.DataFrame, *, metric: str = "f1", higher_is_better: bool = True) -> pd.DataFrame:
    """Mean rank of each algorithm over the datasets it applies to, per ε (1 = best).

    Only runs within the budget are ranked; algorithms are ranked against the
    others of the same data type on each dataset.
    """
    column = f"{metric}_mean"
    valid = summary[summary["within_budget"] & summary[column].notna()].copy()
    valid["rank"] = valid.groupby(["dataset", "epsilon"])[column].rank(ascending=not higher_is_better,
                                                                       method="average")
    table = (valid.groupby(["epsilon", "label"])
             .agg(mean_rank=("rank", "mean"), datasets=("dataset", "nunique"), **{f"mean_{metric}": (column, "mean")})
             .reset_index()
             .sort_values(["epsilon", "mean_rank"]))
    return table

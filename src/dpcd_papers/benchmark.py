"""Cross-paper benchmark: every private discovery algorithm at the same total (ε, δ).

The papers each compare their algorithm with one or two baselines, each under
its own accounting (per-test ε, advanced composition, a privacy "cost" read off
after the run) and its own neighbouring relation. Here every algorithm of
:data:`dpcd.registry.ALGORITHMS` gets the **same total budget under the same
relation** (replace one record, n public), through
:func:`dpcd.registry.calibrate` — the calibration ``discover`` uses:
total-budget algorithms receive (ε, δ) directly (halved for add/remove proofs,
by group privacy), per-test and per-edge algorithms the largest per-round ε
whose data-independent worst-case plan composes to at most ε by the tight
accountant. The public domains come from the data set's generating model
(:meth:`dpcd.datasets.Dataset.schema`), never from the sample. NOLEAKS and
CURATE-SB cannot meet a small δ (their line-search subset costs δ = m/n); they
run at the requested ε with their own δ and are flagged ``within_budget = False``.

:func:`run_cell` is the experiment function for :func:`dpcd_papers.experiments.run_grid`;
:func:`summarise` and :func:`rank_table` aggregate its rows.

Privacy of each run: as stated by the algorithm's own docstring (neighbouring
relation, public quantities); the benchmark only measures accuracy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dpcd.datasets import (
    BNLEARN_NETWORKS,
    Dataset,
    load_bnlearn,
    random_dag,
    sample_linear_gaussian,
    sample_nonlinear,
)
from dpcd.graphs import cpdag_pair_prf, dag_to_cpdag, shd, skeleton_prf
from dpcd.privacy.relation import convert
from dpcd.registry import ALGORITHMS, Calibration, PlanRefused, calibrate, make_plan
from dpcd.release.api import run_algorithm
from dpcd.validation import (
    RngLike,
    as_rng,
    check_delta,
    check_epsilon,
    check_int,
    check_probability,
)

from .experiments import timed

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


def load_dataset(dataset: str, n: int, rng: RngLike) -> Dataset:
    """The :class:`~dpcd.datasets.Dataset` ``dataset`` (bnlearn network or synthetic), ``n`` rows."""
    n = check_int(n, "n", minimum=10)
    generator = as_rng(rng)
    if dataset_kind(dataset) == "categorical":
        return load_bnlearn(dataset, n, generator)
    dag = random_dag(SYNTHETIC_P, SYNTHETIC_SPARSENESS, generator)
    sampler = sample_linear_gaussian if dataset == "linear_gaussian" else sample_nonlinear
    return sampler(dag, n, generator)


def missing_algorithms() -> list[str]:
    """Labels of registry algorithms whose module is not part of this version."""
    return [spec.label for spec in ALGORITHMS.values() if not spec.available]


def _over_budget(spec, *, p: int, n: int, epsilon: float, delta: float, max_order: int | None,
                 reason: str) -> Calibration:
    """A total-budget algorithm that cannot meet δ: its parameters at (ε, δ) as given, and its real plan."""
    kwargs: dict[str, Any] = {spec.budget_arg: epsilon}
    if spec.delta_arg is not None:
        kwargs[spec.delta_arg] = delta
    if spec.takes_max_order and max_order is not None:
        kwargs["max_order"] = max_order
    plan = make_plan(spec, p=p, n=n, **kwargs)
    return Calibration(kwargs, epsilon, delta, "replace", plan, plan.as_dict("replace"), reason)


def run_cell(*, dataset: str, algorithm: str, epsilon: float, delta: float, n: int, rng: RngLike,
             alpha: float = 0.05, max_order: int | None = None) -> list[dict[str, Any]]:
    """One run of ``algorithm`` on a fresh sample of ``dataset`` at total (epsilon, delta), replace-one.

    Returns one row (a list, empty when the algorithm does not apply to the
    dataset's type, is not available or is not differentially private): F1 on
    CPDAG edge pairs and on the skeleton, SHD against the true CPDAG, run time,
    the calibrated parameter, the worst-case guarantee (``epsilon_guarantee``,
    ``delta_guarantee``), what the run spent (tight, converted to replace-one)
    and whether the guarantee is within the budget. An algorithm that raises
    gives a row with ``error`` set and NaN metrics.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    spec = ALGORITHMS[algorithm]
    if spec.data != dataset_kind(dataset) or not spec.available or not spec.differentially_private:
        return []
    generator = as_rng(rng)
    sample = load_dataset(dataset, n, generator)
    schema = sample.schema()
    data, truth = sample.data, dag_to_cpdag(sample.dag)
    p = data.shape[1]
    try:
        calibration = calibrate(spec, p=p, n=n, epsilon=epsilon, delta=delta, relation="replace",
                                max_order=max_order)
    except PlanRefused as error:
        if spec.budget != "total":
            raise
        calibration = _over_budget(spec, p=p, n=n, epsilon=epsilon, delta=delta, max_order=max_order,
                                   reason=str(error))
    guarantee = calibration.guarantee
    row: dict[str, Any] = {"label": spec.label, "p": p, "parameter": calibration.kwargs.get(spec.budget_arg),
                           "epsilon_guarantee": guarantee["epsilon"], "delta_guarantee": guarantee["delta"],
                           "within_budget": bool(guarantee["epsilon"] <= epsilon * (1 + 1e-9)
                                                 and guarantee["delta"] <= delta * (1 + 1e-9)),
                           "error": ""}
    view = schema if spec.data == "numeric" else schema.as_categorical()
    try:
        result, seconds = timed(run_algorithm, spec, data, view, calibration, alpha=alpha, rng=generator)
    except Exception as error:  # noqa: BLE001 - recorded, the grid goes on
        row.update({"f1": np.nan, "skeleton_f1": np.nan, "shd": np.nan, "seconds": np.nan,
                    "epsilon_spent": np.nan, "delta_spent": np.nan, "error": f"{type(error).__name__}: {error}"})
        return [row]
    graph = getattr(result, "cpdag", None)
    estimate = graph if graph is not None else dag_to_cpdag(result.dag)
    total = result.ledger.total("tight", target_delta=delta)
    spent = convert(total.epsilon, min(total.delta, 1 - 1e-15), source=result.ledger.neighbouring,
                    target="replace") if total.epsilon > 0 else (0.0, 0.0)
    row.update({
        "f1": cpdag_pair_prf(estimate, truth)["f1"],
        "skeleton_f1": skeleton_prf(estimate, truth)["f1"],
        "shd": shd(estimate, truth)["shd"],
        "seconds": seconds,
        "epsilon_spent": spent[0],
        "delta_spent": spent[1],
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

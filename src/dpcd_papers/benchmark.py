"""Cross-paper benchmark: every private discovery algorithm at the same total (ε, δ), beside the baselines.

The papers each compare their algorithm with one or two baselines, each under
its own accounting (per-test ε, advanced composition, a privacy "cost" read off
after the run) and its own neighbouring relation. Here every algorithm of
:data:`dpcd.registry.ALGORITHMS` gets the **same total budget under the same
relation** (replace one record, n public) through the plan ``discover`` makes
(:func:`dpcd.preparation.plan_release`): the schema's view for the algorithm
(numeric columns binned for categorical algorithms), the default search caps
from public inputs and :func:`dpcd.registry.calibrate` — total-budget algorithms receive (ε, δ)
directly (halved for add/remove proofs, by group privacy), per-test and
per-edge algorithms the largest per-round ε whose data-independent worst case
composes to at most ε. Three more lines: ``auto`` (what ``dpcd discover`` picks by
its public forecast, :func:`dpcd.forecast.choose_by_forecast`), ``pc``, the
non-private PC (G² for categorical data, Fisher-z for numeric, α = 0.01): the
ceiling, and on numeric data ``pc_binned``, non-private G² PC on the bins the
categorical algorithms read: their ceiling on that view. PC on DP synthetic data is the registry's MST-PC (McKenna, Miklau &
Sheldon 2021). The public domains come from the data set's generating model
(:meth:`dpcd.datasets.Dataset.schema`), never from the sample. NOLEAKS and
CURATE-SB cannot meet a small δ (their line-search subset costs δ = m/n); they
run at the requested ε with their own δ and are flagged ``within_budget = False``.

:func:`run_cell` is the experiment function for :func:`dpcd_papers.experiments.run_grid`;
:func:`summarise` and :func:`rank_table` aggregate its rows.

Privacy of each run: as stated by the algorithm's own docstring (relation
relation, public quantities); the benchmark only measures accuracy.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd

from dpcd.datasets import (
    BNLEARN_NETWORKS,
    DEGREE_PROFILES,
    Dataset,
    load_bnlearn,
    random_dag,
    sample_linear_gaussian,
    sample_nonlinear,
    sample_random_network,
)
from dpcd.discovery import pc
from dpcd.forecast import choose_by_forecast
from dpcd.graphs import cpdag_pair_prf, dag_to_cpdag, shd, skeleton_prf
from dpcd.preparation import plan_release, view_for
from dpcd.privacy.relation import convert, needed
from dpcd.registry import ALGORITHMS, Calibration, CalibrationRefused, calibrate, worst_case_of
from dpcd.schema import Schema, SchemaError
from dpcd.validation import (
    RngLike,
    as_rng,
    check_delta,
    check_epsilon,
    check_int,
    check_probability,
)

from .experiments import timed

__all__ = ["NETWORKS", "DEVELOPMENT", "HELD_OUT", "RANDOM_NETWORKS", "RANDOM_P", "CURATE_NETWORKS", "SYNTHETIC", "LINES", "CEILINGS", "dataset_kind", "load_dataset", "run_cell",
           "summarise", "monotone_table", "monotone_claim", "rank_table", "applies"]

CURATE_NETWORKS = ("cancer", "earthquake", "survey", "asia", "sachs", "child")
"""The six bnlearn networks of CURATE's experiments (Bhattacharjee & Tandon 2024)."""
NETWORKS = (*CURATE_NETWORKS, "alarm")
"""CURATE's six networks and alarm (37 nodes, 46 edges)."""
DEVELOPMENT = NETWORKS
"""The development set: the only networks whose samples may choose a constant, a default or a design of the
library (with synthetic data drawn here)."""
HELD_OUT = ("insurance", "water", "mildew", "barley", "hailfinder", "hepar2", "win95pts")
"""The held-out set: every other bnlearn network of at most 100 nodes that :mod:`dpcd.datasets` ships, for reporting
only — never used to choose anything (a test fails if a module of the library names one). A network too large for a
method is reported as refused, never dropped."""
RANDOM_NETWORKS = tuple(f"random-{profile}" for profile in DEGREE_PROFILES)
"""Held-out random categorical networks (:func:`dpcd.datasets.sample_random_network`, one degree profile each): a
fresh network for every repetition, with p uniform on :data:`RANDOM_P`."""
RANDOM_P = (20, 80)
"""Fewest and most nodes of a held-out random network (states per node 2–6, Dirichlet(0.5) CPT rows)."""
SYNTHETIC = ("linear_gaussian", "nonlinear")
"""Numeric synthetic data: a random DAG with a linear-Gaussian SEM or the PCD paper's nonlinear SEM."""
SYNTHETIC_P = 20
SYNTHETIC_DEGREE = 2.0
"""Expected neighbours per node of the synthetic DAGs (edge probability degree/(p − 1))."""
LINES = ("auto", "pc", "pc_binned")
"""Lines beside the registry's algorithms: what ``discover`` picks, the non-private ceiling, and (numeric data only)
non-private PC with G² on the same bins the categorical algorithms read: their ceiling on that view."""
CEILINGS = ("PC (not private)", "PC on the bins (not private)")

CEILING_MAX_ORDER = 2
"""The ceiling's largest conditioning-set size: non-private G² PC at α = 0.01 and order ≤ 2, as the held-out goals
define it (and as the private releases search at n = 100 000); an unbounded search on a hub-heavy random network
at n = 100 000 runs for longer than the whole grid."""
"""Labels of the two non-private lines (left out of rankings, budgets and claims)."""


def dataset_kind(dataset: str) -> str:
    """``"categorical"`` for a bnlearn network, ``"numeric"`` for the synthetic datasets."""
    if dataset in SYNTHETIC:
        return "numeric"
    if dataset in BNLEARN_NETWORKS or dataset in NETWORKS or dataset in RANDOM_NETWORKS:
        return "categorical"
    raise ValueError(f"dataset must be a bnlearn network or one of {SYNTHETIC}, got {dataset!r}")


def load_dataset(dataset: str, n: int, rng: RngLike) -> Dataset:
    """The :class:`~dpcd.datasets.Dataset` ``dataset`` (bnlearn network or synthetic), ``n`` rows."""
    n = check_int(n, "n", minimum=10)
    generator = as_rng(rng)
    if dataset in RANDOM_NETWORKS:  # a fresh network from the cell's generator: a new one every repetition
        p = int(generator.integers(RANDOM_P[0], RANDOM_P[1] + 1))
        return sample_random_network(p, n, generator, profile=dataset.removeprefix("random-"))
    if dataset_kind(dataset) == "categorical":
        return load_bnlearn(dataset, n, generator)
    dag = random_dag(SYNTHETIC_P, SYNTHETIC_DEGREE / (SYNTHETIC_P - 1), generator)
    sampler = sample_linear_gaussian if dataset == "linear_gaussian" else sample_nonlinear
    return sampler(dag, n, generator)


def applies(algorithm: str, dataset: str) -> bool:
    """Whether the benchmark runs ``algorithm`` on ``dataset``: numeric algorithms on numeric data, categorical ones
    on categorical data, and the categorical candidates of ``auto`` (Marginal-PC, MST-PC) on numeric data too, read
    through the schema's bins as ``discover`` would; the two extra lines everywhere."""
    if algorithm == "pc_binned":
        return dataset_kind(dataset) == "numeric"
    if algorithm in LINES:
        return True
    spec = ALGORITHMS[algorithm]
    if not spec.differentially_private:
        return False
    kind = dataset_kind(dataset)
    return spec.data == kind or (kind == "numeric" and algorithm in ("marginal_pc", "mst_pc"))


def _calibrated_or_over_budget(spec, *, p: int, n: int, epsilon: float, delta: float, relation: str,
                               max_order: int | None) -> Calibration:
    """:func:`dpcd.registry.calibrate`; a total-budget algorithm that cannot meet the request runs
    :func:`_over_budget` instead (its row then says it is not within budget)."""
    try:
        return calibrate(spec, p=p, n=n, epsilon=epsilon, delta=delta, relation=relation, max_order=max_order)
    except (CalibrationRefused, ValueError) as error:
        if spec.budget != "total":
            raise
        return _over_budget(spec, p=p, n=n, epsilon=epsilon, delta=delta, max_order=max_order, reason=str(error))


def _over_budget(spec, *, p: int, n: int, epsilon: float, delta: float, max_order: int | None,
                 reason: str) -> Calibration:
    """A total-budget algorithm that cannot meet δ: its parameters at (ε, δ) as given, and its real worst case."""
    kwargs: dict[str, Any] = {spec.budget_arg: epsilon}
    if spec.delta_arg is not None:
        kwargs[spec.delta_arg] = delta
    if spec.takes_max_order and max_order is not None:
        kwargs["max_order"] = max_order
    worst = worst_case_of(spec, p=p, n=n, **kwargs)
    return Calibration(kwargs, epsilon, delta, "replace", worst, worst.as_dict("replace"), reason)


@functools.lru_cache(maxsize=256)
def _auto_pick(schema_json: str, n: int, epsilon: float, delta: float, alpha: float, dependence: str = "linear"
               ) -> tuple[str, float, float]:
    """``discover``'s auto pick for a schema and that pick's forecast: (name, expected skeleton F1, expected CPDAG F1).

    Public inputs only (memoised: a pure function of them). ``dependence`` is what a holder of that data would state
    (:data:`dpcd.statements.DEPENDENCE`): ``"nonlinear"`` for the nonlinear synthetic set, whose model is known
    before any draw, ``"linear"`` for every other set. The expected F1s are NaN where no forecast ran.
    """
    spec, result = choose_by_forecast(Schema.from_json(schema_json), n=n, epsilon=epsilon, delta=delta, alpha=alpha,
                                      dependence=dependence)
    expected = (np.nan, np.nan)
    if result is not None:
        rows = result.table[(result.table["algorithm"] == spec.name) & (result.table["status"] == "ok")]
        if len(rows):
            expected = (float(rows["skeleton_f1"].iloc[0]), float(rows["cpdag_f1"].iloc[0]))
    return spec.name, *expected


def _ceiling(sample: Dataset, truth, alpha: float, *, binned: bool = False) -> dict[str, Any]:
    data, test = sample.data, "g2" if dataset_kind(sample.name) == "categorical" else "fisherz"
    if binned:  # the view Marginal-PC and MST-PC read: the schema's bins of each numeric column
        data, test = view_for(sample.schema(), ALGORITHMS["marginal_pc"]).encode(sample.data), "g2"
    result, seconds = timed(pc, data, ci_test=test, alpha=0.01, max_order=CEILING_MAX_ORDER)
    estimate = result.cpdag
    return {"label": CEILINGS[1] if binned else CEILINGS[0], "picked": "", "p": sample.data.shape[1], "parameter": np.nan,
            "epsilon_guarantee": np.inf, "delta_guarantee": 0.0, "within_budget": True, "error": "",
            "f1": cpdag_pair_prf(estimate, truth)["f1"], "skeleton_f1": skeleton_prf(estimate, truth)["f1"],
            "shd": shd(estimate, truth)["shd"], "seconds": seconds, "epsilon_spent": np.nan, "delta_spent": np.nan}


_METRICS = ("f1", "skeleton_f1", "shd", "seconds", "epsilon_spent", "delta_spent", "epsilon_guarantee",
            "delta_guarantee", "parameter", "forecast_skeleton_f1", "forecast_f1")


def refused_row(label: str, p: float, reason: str) -> dict[str, Any]:
    """The row of a release refused before it ran: ``label``, ``error`` = "refused: ``reason``", NaN metrics.

    >>> row = refused_row("Marginal-PC", 64, "too many categories")
    >>> row["label"], row["error"], bool(np.isnan(row["skeleton_f1"]))
    ('Marginal-PC', 'refused: too many categories', True)
    """
    return {"label": label, "picked": "", "p": p, "within_budget": False, "error": f"refused: {reason}",
            **dict.fromkeys(_METRICS, np.nan)}


def run_cell(*, dataset: str, algorithm: str, epsilon: float, delta: float, n: int, rng: RngLike,
             alpha: float = 0.05) -> list[dict[str, Any]]:
    """One run of ``algorithm`` on a fresh sample of ``dataset`` at total (epsilon, delta), replace-one.

    ``algorithm`` is a registry name, ``"auto"`` (the algorithm ``discover``
    picks by its public forecast for this schema, n and budget), ``"pc"``
    (non-private PC, the ceiling; its row ignores the budget) or ``"pc_binned"``
    (numeric data only: non-private G² PC on the bins the categorical algorithms read). Returns one row
    (a list, empty when the algorithm does not apply to the dataset,
    :func:`applies`): F1 on CPDAG edge pairs and on the skeleton, SHD against
    the true CPDAG, run time, the calibrated parameter, the worst-case guarantee
    (``epsilon_guarantee``, ``delta_guarantee``), what the run spent (tight,
    converted to replace-one) and whether the guarantee is within the budget.
    An algorithm that raises gives a row with ``error`` set and NaN metrics.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    if not applies(algorithm, dataset):
        return []
    generator = as_rng(rng)
    sample = load_dataset(dataset, n, generator)
    schema = sample.schema()
    truth = dag_to_cpdag(sample.dag)
    if algorithm in ("pc", "pc_binned"):
        return [_ceiling(sample, truth, alpha, binned=algorithm == "pc_binned")]
    dependence = "nonlinear" if dataset == "nonlinear" else "linear"  # the holder's statement (see _auto_pick)
    label = "auto (discover)" if algorithm == "auto" else ALGORITHMS[algorithm].label
    try:  # a schema the algorithm cannot read (a column of more than 20 categories) is refused from public inputs
        picked, expected_skeleton, expected_f1 = _auto_pick(schema.dumps(), n, epsilon, delta, alpha, dependence) \
            if algorithm == "auto" else (algorithm, np.nan, np.nan)
        spec = ALGORITHMS[picked]
        plan = plan_release(schema, spec, epsilon=epsilon, delta=delta, relation="replace", n=n, alpha=alpha,
                            dependence=dependence, calibrator=_calibrated_or_over_budget)
    except SchemaError as refused:
        return [refused_row(label, np.nan, str(refused))]
    except ValueError as refused:  # no parameter runs at this budget at all (NOLEAKS below its subset's charge)
        if spec.budget != "total":
            raise
        return [refused_row(spec.label, len(schema), str(refused))]
    view, calibration, p = plan.view, plan.calibration, len(plan.view)
    guarantee = calibration.guarantee
    row: dict[str, Any] = {"label": "auto (discover)" if algorithm == "auto" else spec.label,
                           "picked": spec.label if algorithm == "auto" else "", "p": p,
                           "parameter": calibration.kwargs.get(spec.budget_arg),
                           "epsilon_guarantee": guarantee["epsilon"], "delta_guarantee": guarantee["delta"],
                           "within_budget": bool(guarantee["epsilon"] <= epsilon * (1 + 1e-9)
                                                 and guarantee["delta"] <= delta * (1 + 1e-9)),
                           "error": "", "forecast_skeleton_f1": expected_skeleton, "forecast_f1": expected_f1}
    data = view.encode(sample.data) if spec.data == "categorical" and dataset_kind(dataset) == "numeric" \
        else sample.data
    try:
        result, seconds = timed(plan.run, data, rng=generator)
    except Exception as error:  # noqa: BLE001 - recorded, the grid goes on
        row.update({"f1": np.nan, "skeleton_f1": np.nan, "shd": np.nan, "seconds": np.nan,
                    "epsilon_spent": np.nan, "delta_spent": np.nan, "error": f"{type(error).__name__}: {error}"})
        return [row]
    estimate = result.cpdag
    # read the ledger at the δ of its own relation whose replace-one conversion is the request's δ (an add/remove
    # ledger read at the request's δ converts to (1 + e^ε)·δ, a point of the curve beyond the budget's δ)
    native_delta = needed(epsilon, delta, source=result.ledger.relation, target="replace")[1]
    total = result.ledger.total("tight", target_delta=native_delta if native_delta > 0 else delta)
    spent = convert(total.epsilon, min(total.delta, 1 - 1e-15), source=result.ledger.relation,
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
    """Mean ± std per (dataset, algorithm, ε), the range of single runs' skeleton F1, and auto's most common pick."""
    metrics = ["f1", "skeleton_f1", "shd", "seconds", "epsilon_spent"]
    grouped = results.groupby(["dataset", "label", "epsilon"], sort=False)
    summary = grouped[metrics].agg(["mean", "std"])
    summary.columns = [f"{m}_{s}" for m, s in summary.columns]
    summary["skeleton_f1_min"] = grouped["skeleton_f1"].min()
    summary["skeleton_f1_max"] = grouped["skeleton_f1"].max()
    summary["runs"] = grouped.size()
    summary["within_budget"] = grouped["within_budget"].all()
    summary["errors"] = grouped["error"].apply(lambda e: int((e != "").sum()))
    if "forecast_skeleton_f1" in results:  # auto's rows: what its forecast expected, beside the realised mean
        summary["forecast_skeleton_f1"] = grouped["forecast_skeleton_f1"].mean()
        summary["forecast_f1"] = grouped["forecast_f1"].mean()
    picked = results["picked"] if "picked" in results else pd.Series("", index=results.index)
    summary["picked"] = picked.groupby([results["dataset"], results["label"], results["epsilon"]], sort=False) \
        .agg(lambda v: v.mode().iloc[0] if len(v.mode()) else "")
    return summary.reset_index()


def monotone_table(results: pd.DataFrame, *, metric: str = "skeleton_f1", level: float = 0.99) -> pd.DataFrame:
    """Per (algorithm, dataset): the least-squares slope of ``metric`` on log₁₀ ε over every run, with its
    two-sided ``level`` confidence interval; ``falls`` is True when the interval lies below zero.

    >>> runs = pd.DataFrame({"label": ["A"] * 6, "dataset": ["d"] * 6, "within_budget": [True] * 6,
    ...                      "epsilon": [0.1, 0.1, 1.0, 1.0, 10.0, 10.0], "skeleton_f1": [0.1, 0.2, 0.5, 0.4, 0.9, 0.8]})
    >>> row = monotone_table(runs).iloc[0]
    >>> round(float(row["slope"]), 2), bool(row["falls"])
    (0.35, False)
    """
    from scipy import stats

    rows = []
    valid = results[results[metric].notna()]
    for (label, dataset), part in valid.groupby(["label", "dataset"], sort=False):
        x = np.log10(part["epsilon"].to_numpy(dtype=float))
        y = part[metric].to_numpy(dtype=float)
        if np.unique(x).size < 2 or len(x) < 3:
            continue
        fit = stats.linregress(x, y)
        half = float(stats.t.ppf(0.5 + level / 2, len(x) - 2) * fit.stderr) if np.isfinite(fit.stderr) else 0.0
        rows.append({"label": label, "dataset": dataset, "runs": len(x), "slope": float(fit.slope),
                     "low": float(fit.slope) - half, "high": float(fit.slope) + half,
                     "falls": bool(float(fit.slope) + half < 0)})
    return pd.DataFrame(rows, columns=["label", "dataset", "runs", "slope", "low", "high", "falls"])


def monotone_claim(claim_id: str, label: str, claim: str, slopes: pd.DataFrame, *, line: str,
                   diagnosis: str = "") -> dict[str, Any]:
    """The claim that ``label``'s F1 does not fall as ε grows, judged on :func:`monotone_table` rows, counting only
    the data sets whose slope interval excludes zero: it holds where the interval lies above zero and fails where it
    lies below. A data set whose interval holds zero cannot tell — an output that ignores ε, the empty graph included,
    has slope 0 and would pass "does not fall" — so it is left out, and with none left the row is ``uninformative``.

    >>> rows = pd.DataFrame({"dataset": ["a", "b", "c"], "low": [0.1, -0.2, 0.0], "high": [0.3, 0.1, 0.0],
    ...                      "falls": [False, False, False]})
    >>> row = monotone_claim("x", "A", "F1 does not fall", rows, line="A")
    >>> row["verdict"], row["note"]
    ('reproduced', 'holds in 1 of 1 cell; 2 data sets whose slope interval holds 0 left out (b, c)')
    >>> monotone_claim("x", "A", "F1 does not fall", rows.iloc[1:], line="A")["verdict"]
    'uninformative'
    """
    from . import reporting

    grows, falls = slopes["low"] > 0, slopes["high"] < 0
    flat = slopes.loc[~grows & ~falls, "dataset"]
    note = f"{len(flat)} data set{'' if len(flat) == 1 else 's'} whose slope interval holds 0 left out " \
           f"({', '.join(flat)})" if len(flat) else ""
    row = reporting.qualitative_claim("dpcd", claim_id, label, claim, holds=int(grows.sum()),
                                      cells=int((grows | falls).sum()), share=1.0, line=line, diagnosis=diagnosis,
                                      note=note)
    if not (grows | falls).any() and len(slopes):
        row["verdict"], row["note"] = "uninformative", note
        row["diagnosis"] = ("the slope interval holds 0 on every data set: an output that ignores epsilon (the empty "
                            "graph) passes too" + (f"; {diagnosis}" if diagnosis else ""))
    return row


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


def minimal_separator_size(dag: Any, u: str, v: str, *, largest: int = 3) -> int:
    """Size of the smallest set that d-separates ``u`` and ``v`` in ``dag`` (searched among their ancestors up to
    ``largest``; ``largest + 1`` when none that small exists — always so for adjacent nodes).

    >>> import networkx as nx
    >>> chain = nx.DiGraph([("a", "b"), ("b", "c")])
    >>> minimal_separator_size(chain, "a", "c"), minimal_separator_size(nx.DiGraph([("a", "c"), ("b", "c")]), "a", "b")
    (1, 0)
    """
    import itertools

    import networkx as nx

    if nx.is_d_separator(dag, {u}, {v}, set()):
        return 0
    pool = sorted((nx.ancestors(dag, u) | nx.ancestors(dag, v)) - {u, v})
    for size in range(1, largest + 1):
        if any(nx.is_d_separator(dag, {u}, {v}, set(subset)) for subset in itertools.combinations(pool, size)):
            return size
    return largest + 1


def loss_diagnosis(dag: Any, released: Any, ceiling: Any) -> dict[str, int]:
    """Where a private run's skeleton F1 is lost against the truth ``dag`` and against non-private PC (``ceiling``, a
    CPDAG on the same data): counts of true edges the run removed, by the order that removed them (the size of the
    separating set it stored, from ``released.sepsets``) and whether PC kept them (``private_only``) or lost them too
    (``both``); of released edges the truth lacks, by the size of the truth's smallest separating set; and of edges
    found by both whose mark differs from the true CPDAG's (orientation errors). A diagnostic for the benchmark, read
    from the exact truth: never part of a release.

    >>> import networkx as nx
    >>> from dpcd.discovery import pc
    >>> from dpcd.datasets import load_bnlearn
    >>> sample = load_bnlearn("asia", 3_000, rng=0)
    >>> found = pc(sample.data, ci_test="g2", alpha=0.01)
    >>> counts = loss_diagnosis(sample.dag, found, found.cpdag)
    >>> sum(v for k, v in counts.items() if k.startswith("missed")) == 8 - len(found.skeleton & {frozenset(e) for e in sample.dag.to_undirected().edges})
    True
    """
    from collections import Counter

    from dpcd.graphs import directed_edges

    truth = {frozenset(e) for e in dag.to_undirected().edges}
    mine = {frozenset(e) for e in released.cpdag.to_undirected().edges}
    theirs = {frozenset(e) for e in ceiling.to_undirected().edges}
    counts: Counter = Counter()
    for edge in truth - mine:
        order = len(released.sepsets[edge]) if edge in released.sepsets else "untested"
        counts[f"missed at order {order}, {'private_only' if edge in theirs else 'both'}"] += 1
    for edge in mine - truth:
        u, v = sorted(edge)
        counts[f"extra, smallest true separator {minimal_separator_size(dag, u, v)}, "
               f"{'private_only' if edge not in theirs else 'both'}"] += 1
    true_marks = dag_to_cpdag(dag)
    arrows, truth_arrows = directed_edges(released.cpdag), directed_edges(true_marks)
    for edge in mine & truth:
        u, v = tuple(edge)
        if (((u, v) in arrows) != ((u, v) in truth_arrows)) or (((v, u) in arrows) != ((v, u) in truth_arrows)):
            counts["orientation error on a true edge"] += 1
    return dict(sorted(counts.items()))


def diagnose_cell(*, dataset: str, epsilon: float, delta: float, n: int, rng: RngLike, alpha: float = 0.05
                  ) -> list[dict[str, Any]]:
    """One Marginal-PC release (``discover``'s parameters at total (epsilon, delta), replace-one) on a fresh sample of
    the categorical ``dataset``, with non-private G² PC (α = 0.01, order ≤ :data:`CEILING_MAX_ORDER`) on the same data: the :func:`loss_diagnosis`
    counts, one row per kind of loss, with both runs' skeleton and CPDAG F1 (columns ``count``, ``kind``); a schema
    Marginal-PC cannot read (:class:`~dpcd.schema.SchemaError`) is one row of kind "refused: …"."""
    epsilon = check_epsilon(epsilon)
    if dataset_kind(dataset) != "categorical":
        raise ValueError(f"dataset must be categorical for a loss diagnosis, got {dataset!r}")
    generator = as_rng(rng)
    sample = load_dataset(dataset, n, generator)
    schema = sample.schema()
    truth = dag_to_cpdag(sample.dag)
    spec = ALGORITHMS["marginal_pc"]
    try:
        plan = plan_release(schema, spec, epsilon=epsilon, delta=delta, relation="replace", n=n, alpha=alpha)
    except SchemaError as refused:  # reported, as run_cell reports it
        return [{"p": sample.data.shape[1], "true_edges": sample.dag.number_of_edges(), "skeleton_f1": np.nan,
                 "f1": np.nan, "ceiling_skeleton_f1": np.nan, "ceiling_f1": np.nan, "kind": f"refused: {refused}",
                 "count": 0}]
    released = plan.run(sample.data, rng=generator)
    ceiling = pc(sample.data, ci_test="g2", alpha=0.01, max_order=CEILING_MAX_ORDER)
    common = {"p": sample.data.shape[1], "true_edges": sample.dag.number_of_edges(),
              "skeleton_f1": skeleton_prf(released.cpdag, truth)["f1"], "f1": cpdag_pair_prf(released.cpdag, truth)["f1"],
              "ceiling_skeleton_f1": skeleton_prf(ceiling.cpdag, truth)["f1"],
              "ceiling_f1": cpdag_pair_prf(ceiling.cpdag, truth)["f1"]}
    counts = loss_diagnosis(sample.dag, released, ceiling.cpdag)
    return [{**common, "kind": kind, "count": count} for kind, count in counts.items()] or \
        [{**common, "kind": "nothing lost", "count": 0}]


def held_out_markdown(table: pd.DataFrame, *, epsilons: tuple[float, ...] = (0.3, 1.0, 3.0)) -> str:
    """The README's held-out table from the notebook's ``benchmark_held_out`` table: per network, ``auto``'s skeleton
    F1, CPDAG F1 and SHD at each of ``epsilons`` beside non-private PC's (its mean over the budgets' runs), and the
    forecast's expected skeleton F1 at ε = 1.

    >>> frame = pd.DataFrame({"dataset": ["x", "x"], "epsilon": [0.3, 1.0], "auto picks": ["Marginal-PC"] * 2,
    ...                       "skeleton F1": [0.5, 0.6], "PC skeleton F1": [0.9, 0.9], "CPDAG F1": [0.3, 0.4],
    ...                       "PC CPDAG F1": [0.7, 0.7], "SHD": [30.0, 25.0], "PC SHD": [10.0, 10.0],
    ...                       "forecast": [0.55, 0.65]})
    >>> print(held_out_markdown(frame, epsilons=(0.3, 1.0)).splitlines()[-1])
    | x | 0.50 / 0.60 (0.90) | 0.30 / 0.40 (0.70) | 30 / 25 (10) | 0.65 |
    """
    budgets = " / ".join(format(e, "g") for e in epsilons)
    lines = [f"| network | skeleton F1 at ε = {budgets} (PC) | CPDAG F1 (PC) | SHD (PC) | forecast at ε = 1 |",
             "| --- | --- | --- | --- | --- |"]
    for dataset, part in table.groupby("dataset", sort=False):
        at = part.set_index("epsilon")

        def cell(column: str, ceiling: str, form: str) -> str:
            values = " / ".join(format(at[column].get(e, np.nan), form) for e in epsilons)
            return f"{values} ({format(part[ceiling].mean(), form)})"

        forecast = at["forecast"].get(1.0, np.nan)
        lines.append(f"| {dataset} | {cell('skeleton F1', 'PC skeleton F1', '.2f')} | "
                     f"{cell('CPDAG F1', 'PC CPDAG F1', '.2f')} | {cell('SHD', 'PC SHD', '.0f')} | {forecast:.2f} |")
    return "\n".join(lines)

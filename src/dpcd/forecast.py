"""Forecast what a private release would deliver, before any budget is spent and without reading the data.

(:func:`forecast`; also ``dpcd forecast --schema schema.json --n N --epsilon E1,E2``)
runs each applicable algorithm of :data:`dpcd.registry.ALGORITHMS` at each
budget on **synthetic** data of the schema's shape and reports the expected
skeleton and CPDAG F1 (mean and the 10–90 % range of single runs), the
expected number of edges and the run time, with the algorithm ``auto`` would
pick. A data holder reads it to choose a budget and an algorithm, then runs
:func:`dpcd.release.discover` once.

What it reads
    The public schema (columns, kinds, categories, bounds), the public row
    count ``n`` the holder states, the budgets and the algorithm settings —
    nothing else. The function has no data argument; the forecast costs no
    privacy budget. Under add/remove ``n`` is protected: give a public guess.

How the synthetic data are made (stated in every forecast)
    For each repetition, a random DAG over the columns of the algorithm's view
    of the schema (each pair joined with probability ``degree/(p−1)``, so a
    node has ``degree`` neighbours on average, :data:`SYNTHETIC_DEGREE` of the
    schema's kind unless told, in a random causal order), then
    ``n`` rows: categorical views get random conditional tables
    (Dirichlet(1) rows) over exactly the schema's categories; numeric views a
    linear-Gaussian model (weights ±U(0.5, 1); ``dependence="linear"``, the
    default) or PCD's nonlinear additive-noise model (sin, cos, tanh, square
    and exp of weighted parent sums, :func:`dpcd.datasets.sample_nonlinear`;
    ``dependence="nonlinear"``, the holder's public statement about the data),
    scaled so that ±3 standard deviations span each column's public bounds,
    clamped to them, and coded columns rounded to their codes. A categorical
    algorithm on a schema with numeric columns (which it reads through the
    schema's bins) gets those numeric data put through the bins, as a release
    codes the real records — the same draw the numeric algorithms get — so its
    forecast counts what binning loses; only where the schema has no numeric
    coding (an unordered column of more than two categories) does it get random
    conditional tables over the bins instead. Real data can have weaker or
    stronger dependencies: the forecast is a guide, not a promise.

Examples
--------
>>> from dpcd.schema import Schema
>>> result = forecast(Schema.categorical([2, 2, 3], names=["a", "b", "c"]), n=1000, epsilon=[1.0],
...                 algorithms=["em_pc"], repetitions=2, rng=0)
>>> list(result.table["algorithm"]), bool(result.table["auto"].iloc[0])
(['em_pc'], True)
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from .datasets import random_dag, sample_categorical, sample_linear_gaussian, sample_nonlinear
from .graphs import cpdag_pair_prf, dag_to_cpdag, skeleton_prf
from .preparation import (
    RELEASE_ALPHA,
    Limits,
    auto_algorithm,
    choose_kind,
    default_limits,
    load_schema,
    plan_release,
    view_for,
)
from .privacy.relation import relation as as_relation
from .registry import ALGORITHMS, AUTO_CANDIDATES, AlgorithmUnavailable, CalibrationRefused, PrivateAlgorithm
from .schema import Schema, SchemaError
from .statements import DEPENDENCE, check_dependence
from .validation import RngLike, as_rng, check_delta, check_epsilon, check_int, check_positive, check_probability

__all__ = ["DEPENDENCE", "check_dependence", "Forecast", "forecast", "choose_by_forecast", "ranked", "random_graph_f1",
           "synthetic_truth", "SYNTHETIC_DEGREE",
           "FORECAST_COLUMNS", "SYNTHETIC_STATEMENT", "AUTO_MARGIN", "AUTO_REPETITIONS", "AUTO_WORK",
           "AUTO_FIXED_ROWS", "RUN_COST", "CELL_COST", "ROUND_CELL_COST", "SECONDS_PER_WORK", "auto_repetitions",
           "run_work", "estimated_seconds", "MIN_EXPECTED_F1", "in_words", "worth_releasing", "WORTH_HELP"]

FORECAST_COLUMNS = ("algorithm", "label", "epsilon", "delta", "auto", "status", "runs", "skeleton_f1",
                    "skeleton_f1_low", "skeleton_f1_high", "cpdag_f1", "cpdag_f1_low", "cpdag_f1_high", "edges",
                    "true_edges", "random_f1", "random_f1_high", "lift", "verdict", "seconds", "max_order",
                    "max_tests")
SYNTHETIC_DEGREE = {"categorical": 3.0, "numeric": 2.0}
"""Expected neighbours per node of the forecast's synthetic DAGs, by the schema's kind (``"numeric"`` for any schema
with a numeric column). The categorical value was chosen on the development networks only (asia, cancer,
earthquake, survey, sachs, child, alarm; n = 100 000, ε 0.1–10, Marginal-PC) by a rule fixed before the run: the
candidate (2, 2.5 or 3) whose forecast lies closest to the realised skeleton F1 of the committed benchmark (mean
absolute error 0.060, 0.054 and 0.052; :func:`dpcd_papers.forecast_check.prior_errors`). Denser truths are harder,
so the forecast is less optimistic than with 2 (alarm at ε = 1: 0.15 → 0.11 above the realised F1); a Dirichlet
concentration of 0.5 or 0.25 instead of 1 did not lower the error (0.052 and 0.105). The numeric value is the one
the development set's numeric data are drawn with (no real numeric network with a known graph is in it), so it
was left at 2."""
SYNTHETIC_STATEMENT = (
    "This forecast is synthetic: each algorithm ran on data simulated from random DAGs over the schema's columns "
    "and domains ({how}), not on your data, which may have weaker or stronger dependencies. No private data was "
    "read and no privacy budget was spent."
)


@dataclass(frozen=True)
class Forecast:
    """The result of :func:`forecast`: one row per (algorithm, ε) in ``table`` (columns :data:`FORECAST_COLUMNS`).

    ``skeleton_f1``/``cpdag_f1`` are means over the repetitions, ``*_low`` and
    ``*_high`` the 10 % and 90 % quantiles of single runs (what one release
    may give); ``edges`` the mean number of released edges, ``true_edges`` of
    the synthetic truths. ``random_f1`` is the skeleton F1 a **random graph
    with the same number of edges** has on average against the same truths,
    ``random_f1_high`` the 90 % quantile of such graphs' mean F1 over as many
    runs (:func:`random_graph_f1`), and ``lift`` = ``skeleton_f1`` −
    ``random_f1``: what the algorithm finds beyond chance, which a dense graph
    cannot win (a complete graph has lift 0). ``verdict`` says in words
    whether the forecast is above the random graph's interval. ``status`` is
    ``"ok"`` or why the algorithm cannot run at that budget; ``runs`` how many
    synthetic runs fit in the time budget. ``auto`` marks, per budget, the
    algorithm ``algorithm="auto"`` picks by this forecast (among
    :data:`dpcd.registry.AUTO_CANDIDATES` better than chance, the first unless
    the best is ahead in skeleton F1 by more than :data:`AUTO_MARGIN`; ``discover`` makes the same
    choice from a forecast with :func:`auto_repetitions` runs per candidate, see
    :func:`choose_by_forecast`), and the attribute ``auto`` names the pick at
    the largest budget; ``max_order``/``max_tests`` the search caps
    the release would use (:func:`dpcd.preparation.default_limits`).
    """

    table: pd.DataFrame
    auto: str | None
    n: int
    relation: str
    schema_sha256: str
    statement: str

    def best(self, epsilon: float) -> pd.Series | None:
        """The best row at ``epsilon`` by :func:`ranked` (None when nothing ran)."""
        rows = ranked(self.table[self.table["epsilon"] == epsilon])
        return None if rows.empty else rows.iloc[0]

    def plot(self, ax: Any = None, *, max_lines: int = 5):
        """Skeleton F1 against ε (mean; band: 10–90 % of single runs) beside a random graph's; returns the figure.

        At most ``max_lines`` algorithms are drawn: the ``auto`` pick and the
        best by lift at the largest budget (the table has them all). The grey
        dashed line is the 90 % quantile of the mean F1 of random graphs with as
        many edges as the first algorithm drawn releases, over as many runs.
        """
        import matplotlib.pyplot as plt

        max_lines = check_int(max_lines, "max_lines", minimum=1)
        ok = self.table[self.table["status"] == "ok"]
        if len(ok):
            top = ok[ok["epsilon"] == ok["epsilon"].max()].sort_values("lift", ascending=False)["algorithm"]
            keep = list(dict.fromkeys(([self.auto] if self.auto in set(ok["algorithm"]) else []) + list(top)))
            ok = ok[ok["algorithm"].isin(keep[:max_lines])]
        if ax is None:
            fig, ax = plt.subplots(figsize=(6, 3.8))
        else:
            fig = ax.figure
        for i, (name, part) in enumerate(ok.groupby("algorithm", sort=False)):
            part = part.sort_values("epsilon")
            colour = plt.get_cmap("tab10")(i % 10)
            label = part["label"].iloc[0] + (" (auto)" if name == self.auto else "")
            ax.plot(part["epsilon"], part["skeleton_f1"], marker="o", color=colour, label=label)
            ax.fill_between(part["epsilon"], part["skeleton_f1_low"], part["skeleton_f1_high"], color=colour,
                            alpha=0.15)
            if i == 0:
                ax.plot(part["epsilon"], part["random_f1_high"], ls="--", color="0.5",
                        label="random graphs, same edges (90 % of mean)")
        if ok["epsilon"].nunique() > 1 and ok["epsilon"].max() / ok["epsilon"].min() >= 10:
            ax.set_xscale("log")
        ax.set_xlabel("total ε")
        ax.set_ylabel("skeleton F1 (synthetic)")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"forecast at n = {self.n} ({self.relation})", fontsize=10)
        if len(ok):
            ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        fig.tight_layout()
        return fig


def ranked(rows: pd.DataFrame) -> pd.DataFrame:
    """Forecast rows that ran, best first: those better than chance by skeleton F1, then the others by lift.

    A row is better than chance when its mean skeleton F1 exceeds the 90 %
    quantile of the mean F1 of random graphs with as many edges over as many
    runs (:func:`random_graph_f1`) — which a dense graph, or a noisy one, does
    not; among those the F1 itself ranks (the lift would
    favour whichever releases fewer edges). Rows no better than chance follow,
    by their lift.
    """
    rows = rows[(rows["status"] == "ok") & rows["skeleton_f1"].notna()]
    good = rows["skeleton_f1"] > rows["random_f1_high"]
    return pd.concat([rows[good].sort_values("skeleton_f1", ascending=False, kind="stable"),
                      rows[~good].sort_values("lift", ascending=False, kind="stable")])


RANDOM_GRID = 4096
"""Steps per unit of F1 on which :func:`random_graph_f1` adds the runs of a random graph (each value rounded up)."""


def _random_run_f1(pairs: int, true_edges: int, released_edges: int) -> tuple[np.ndarray, np.ndarray]:
    """Values and probabilities of one run's skeleton F1 for a uniformly random graph with ``released_edges``."""
    from scipy import stats

    t, m = int(true_edges), int(released_edges)
    if t + m == 0:
        return np.array([1.0]), np.array([1.0])
    support = np.arange(max(0, t + m - pairs), min(t, m) + 1)
    return 2.0 * support / (t + m), stats.hypergeom.pmf(support, pairs, t, m)


def _quantile(values: np.ndarray, weights: np.ndarray, level: float) -> float:
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    return float(values[order][min(int(np.searchsorted(cumulative, level - 1e-12)), len(order) - 1)])


def random_graph_f1(p: int, true_edges: Sequence[int], released_edges: Sequence[int]) -> tuple[float, float]:
    """Skeleton F1 of random graphs with the released numbers of edges: (mean, 90 % quantile of the mean over runs).

    For one run with t true and m released edges among C = p(p − 1)/2 pairs, a
    uniformly random set of m pairs shares TP ~ Hypergeometric(C, t, m) edges
    with the truth and has F1 = 2·TP/(t + m). Over R runs (each with its own t
    and m, drawn independently) the mean F1 of such random graphs is what a
    forecast's mean F1 is compared with: the first number is its expectation,
    the second its 90 % quantile — exact for one run; for several, the runs'
    distributions are added on a grid of :data:`RANDOM_GRID` steps per unit
    with every value rounded up, so the quantile is at most 1/RANDOM_GRID
    above the exact one and never below it. A forecast whose mean exceeds it
    is better than random graphs with as many edges at the 10 % level. (The
    quantile of *one* run, pooled over runs, is no such test: when most runs
    release no edge it is 0, and any single hit beats it.)

    >>> mean, high = random_graph_f1(11, [10], [55])   # the complete graph
    >>> round(mean, 3), round(high, 3)
    (0.308, 0.308)
    >>> round(random_graph_f1(11, [10] * 10, [0] * 5 + [1] * 5)[1], 3)   # two hits of five edges
    0.036
    """
    pairs = p * (p - 1) // 2
    runs = [_random_run_f1(pairs, t, m) for t, m in zip(true_edges, released_edges)]
    if not runs:
        return math.nan, math.nan
    mean = float(np.mean([np.sum(values * weights) for values, weights in runs]))
    if len(runs) == 1:
        return mean, _quantile(*runs[0], 0.9)
    from scipy import signal

    parts = []
    for values, weights in runs:
        steps = np.ceil(values * RANDOM_GRID - 1e-9).astype(np.int64)
        part = np.zeros(int(steps.max()) + 1)
        np.add.at(part, steps, weights)
        parts.append(part)
    while len(parts) > 1:  # in pairs: convolutions of like lengths (by FFT where long) add many runs fast
        parts = [signal.convolve(*parts[i:i + 2]) if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    total = np.clip(parts[0], 0.0, None)
    level = np.arange(len(total)) / (RANDOM_GRID * len(runs))
    return mean, _quantile(level, total, 0.9)


def _applicable(schema: Schema, relation: Any, registry: Mapping[str, PrivateAlgorithm],
                names: Sequence[str] | None) -> list[PrivateAlgorithm]:
    if names is not None:
        if isinstance(names, str) or not all(isinstance(a, str) for a in names):
            raise TypeError("algorithms must be a list of algorithm names or None")
        unknown = [a for a in names if a not in registry]
        if unknown:
            raise ValueError(f"unknown algorithm(s) {unknown}; known: {sorted(registry)}")
        return [registry[a] for a in names]
    numeric_ok = schema.kind == "numeric" or schema.numeric_coding_allowed()
    return [spec for spec in registry.values()
            if spec.differentially_private and (spec.data == "categorical" or numeric_ok)]


def synthetic_truth(view: Schema, data: str, n: int, degree: float, rng: np.random.Generator,
                    dependence: str = "linear", concentration: float = 1.0) -> tuple[pd.DataFrame, nx.DiGraph]:
    """One synthetic data set of ``view``'s shape and its true DAG, as the forecast draws them (public inputs only).

    A random DAG over the columns (each pair joined with probability ``degree/(p − 1)``, a random causal order);
    ``data="categorical"``: Dirichlet(``concentration``) conditional tables over the schema's categories, ``n``
    rows of codes;
    otherwise a linear-Gaussian SEM (weights ±[0.5, 1]) or, with ``dependence="nonlinear"``, PCD's nonlinear
    additive-noise SEM, scaled into the public bounds (3 standard deviations to each half-width) and clipped, coded
    columns rounded.

    >>> frame, dag = synthetic_truth(Schema.categorical([2, 3, 2]), "categorical", 50, 2.0, np.random.default_rng(0))
    >>> frame.shape, sorted(dag.nodes) == sorted(frame.columns)
    ((50, 3), True)
    """
    p = len(view)
    dag = random_dag(p, min(1.0, degree / (p - 1)), rng)
    names = dict(zip([f"X{i + 1}" for i in range(p)], view.names))
    dag = nx.relabel_nodes(dag, names)
    dag = nx.DiGraph(dag.subgraph(view.names))  # column order = the schema's
    ordered = nx.DiGraph()
    ordered.add_nodes_from(view.names)
    ordered.add_edges_from(dag.edges())
    if data == "categorical":
        frame = sample_categorical(ordered, n, rng, cards=view.levels, concentration=concentration).data
        return frame.astype(np.int64), ordered
    if dependence == "nonlinear":
        frame = sample_nonlinear(ordered, n, rng).data
    else:
        frame = sample_linear_gaussian(ordered, n, rng, weight_range=(0.5, 1.0), signed=True).data
    values = frame.to_numpy(dtype=float)
    centre, spread = values.mean(axis=0), values.std(axis=0)
    spread[spread == 0] = 1.0
    bounds = np.asarray(view.bounds, dtype=float)
    mid, half = bounds.mean(axis=1), (bounds[:, 1] - bounds[:, 0]) / 2.0
    scaled = np.clip(mid + (values - centre) / spread * half / 3.0, bounds[:, 0], bounds[:, 1])
    coded = np.array([c.source is not None for c in view.columns])
    scaled[:, coded] = np.round(scaled[:, coded])
    return pd.DataFrame(scaled, columns=list(view.names)), ordered


def _synthetic_binned(declared: Schema, view: Schema, n: int, degree: float, rng: np.random.Generator,
                      dependence: str = "linear") -> tuple[pd.DataFrame, nx.DiGraph]:
    """Synthetic data for a categorical algorithm on a schema with numeric columns: the numeric synthetic data of
    the schema's numeric view (``dependence``; the same draw a numeric algorithm gets from the same ``rng``), coded
    by the categorical ``view`` as a release codes real records — numeric columns into the view's equal-width bins,
    coded categories back to their codes. So the forecast sees what the bins lose, as the release will.

    >>> schema = Schema(columns=Schema.numeric([(0.0, 1.0)] * 3).columns, bins=4)
    >>> frame, dag = _synthetic_binned(schema, schema.as_categorical(), 50, 2.0, np.random.default_rng(0))
    >>> frame.shape, set(frame.to_numpy().ravel().tolist()) <= {0, 1, 2, 3}
    ((50, 3), True)
    """
    frame, dag = synthetic_truth(declared.as_numeric(), "numeric", n, degree, rng, dependence)
    coded = {column.name: (column.encode(frame[column.name]) if column.source is not None
                           else frame[column.name].to_numpy().astype(np.int64))
             for column in view.columns}
    return pd.DataFrame(coded, columns=list(view.names)), dag


def forecast(
    schema: Schema | Mapping[str, Any] | str | os.PathLike[str],
    *,
    n: int,
    epsilon: float | Sequence[float],
    delta: float = 1e-6,
    algorithms: Sequence[str] | None = None,
    relation: str = "replace",
    alpha: float = RELEASE_ALPHA,
    max_order: int | None = None,
    max_tests: int | None = None,
    repetitions: int | str = 10,
    degree: float | None = None,
    concentration: float = 1.0,
    dependence: str = "linear",
    rng: RngLike = 0,
    registry: Mapping[str, PrivateAlgorithm] | None = None,
    time_budget: float | None = 30.0,
    progress: Callable[[str], None] | None = None,
) -> Forecast:
    """Forecast each applicable algorithm's accuracy at each budget, from synthetic data of the schema's shape.

    Parameters
    ----------
    schema : the public schema (object, JSON mapping or path; a draft is refused).
    n : number of rows of the release (public under replace-one; under
        add/remove a public guess, since the true n is protected).
    epsilon : one total ε or several.
    delta, relation, alpha : as in :func:`dpcd.release.discover`.
    max_order, max_tests : the search caps; None: the defaults a release
        would use (:func:`dpcd.preparation.default_limits`, from p, n
        and the domains), so the forecast runs what ``discover`` would run.
    algorithms : names to forecast (default: every available DP algorithm the
        schema can feed).
    repetitions : most synthetic data sets per (algorithm, ε); each gets a fresh DAG. ``"auto"``: per algorithm
        :func:`auto_repetitions` of its view and n (what ``discover``'s ``auto`` runs, with ``time_budget=None``).
    degree : expected number of neighbours of a node in the synthetic DAGs; None: :data:`SYNTHETIC_DEGREE` of the
        schema's kind.
    concentration : of the symmetric Dirichlet each row of a synthetic categorical table is drawn from (below 1:
        more peaked tables, rarer states).
    dependence : the model of numeric synthetic data, a key of :data:`DEPENDENCE`: ``"linear"`` (default) or
        ``"nonlinear"`` (PCD's additive-noise model) — what the holder expects of the data, stated publicly; also
        passed to the candidates whose run takes it (GCM-PC's basis), as ``discover`` does.
    rng : seed or Generator of the synthetic data and the algorithms' noise.
    time_budget : seconds per (algorithm, ε): an algorithm whose one run is expected to take longer
        (:func:`estimated_seconds`, from public sizes) is skipped before it starts, with a ``status`` saying so; no
        new repetition starts once the seconds spent plus one run's expected time exceed it (at least one runs;
        ``runs`` says how many did). A forecast takes about ``time_budget`` × algorithms × budgets, give or take
        the estimate's error. None: no budget.
    progress : called with one line of text before each (algorithm, ε).

    Privacy
    -------
    Reads no private data (there is no data argument) and spends no budget:
    every input is public (schema, n, budgets, settings). Under add/remove the
    holder must not pass the true n.

    Returns
    -------
    Forecast
        ``table`` with one row per (algorithm, ε), the ``auto`` pick and the
        plain statement that the forecast is synthetic.
    """
    declared = load_schema(schema)
    n = check_int(n, "n", minimum=10)
    epsilons = [epsilon] if isinstance(epsilon, (int, float, np.floating, np.integer)) else list(epsilon)
    if not epsilons:
        raise ValueError("epsilon must hold at least one budget")
    epsilons = sorted({check_epsilon(e) for e in epsilons})
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    if isinstance(repetitions, str):
        if repetitions != "auto":
            raise ValueError(f"repetitions must be a positive integer or 'auto', got {repetitions!r}")
    else:
        repetitions = check_int(repetitions, "repetitions", minimum=1)
    if degree is None:
        degree = SYNTHETIC_DEGREE["categorical" if declared.kind == "categorical" else "numeric"]
    degree = check_positive(degree, "degree")
    concentration = check_positive(concentration, "concentration")
    dependence = check_dependence(dependence)
    if time_budget is not None:
        time_budget = check_positive(time_budget, "time_budget")
    target = as_relation(relation)
    registry = ALGORITHMS if registry is None else registry
    generator = as_rng(rng)
    specs = _applicable(declared, target, registry, algorithms)
    auto = None
    public_n = n if target.n_public else None
    # numeric columns with a numeric coding: every candidate runs on the stated numeric draws (binned where it reads
    # bins); otherwise random tables over the categories and bins
    numeric_draws = declared.kind != "categorical" and declared.numeric_coding_allowed()
    rows = []
    for spec in specs:
        try:
            view = view_for(declared, spec)
        except SchemaError as error:
            rows += [_row(spec, e, delta, auto, f"not applicable: {error}") for e in epsilons]
            continue
        limits = default_limits(view, spec, public_n, max_order=max_order, max_tests=max_tests)
        binned = numeric_draws and spec.data == "categorical"  # it reads the numeric columns through the bins
        count = auto_repetitions(spec, view, n) if repetitions == "auto" else repetitions
        seeds = generator.integers(0, 2**63 - 1, size=count)  # the same synthetic truths at every ε
        expected = estimated_seconds(spec, view, n)
        for eps in epsilons:
            if time_budget is not None and expected > time_budget:
                rows.append(_row(spec, eps, delta, auto, f"skipped: one run is expected to take about {expected:.0f} s "
                                 f"(from the public sizes), more than the time budget of {time_budget:g} s; raise "
                                 "--time-budget to include it", limits=limits))
                if progress is not None:
                    progress(f"{spec.label} at epsilon={eps:g}: skipped (one run ≈ {expected:.0f} s > time budget)")
                continue
            if progress is not None:
                progress(f"{spec.label} at epsilon={eps:g}")
            try:  # the release's own public phase, at the release's caps
                plan = plan_release(declared, spec, epsilon=eps, delta=delta, relation=target, n=public_n,
                                    alpha=alpha, max_order=limits.max_order, max_tests=limits.max_tests,
                                    dependence=dependence)
            except (CalibrationRefused, ValueError) as error:
                rows.append(_row(spec, eps, delta, auto, f"refused: {error}", limits=limits))
                continue
            runs, status, spent = [], "ok", 0.0
            for seed in seeds:
                if time_budget is not None and runs and spent + expected > time_budget:
                    break  # the next run would not fit (expected from public sizes) or the budget is spent
                run_rng = np.random.default_rng(seed)
                if binned:
                    frame, dag = _synthetic_binned(declared, view, n, degree, run_rng, dependence)
                else:
                    frame, dag = synthetic_truth(view, spec.data, n, degree, run_rng, dependence, concentration)
                truth = dag_to_cpdag(dag)
                start = time.perf_counter()
                try:
                    result = plan.run(frame, rng=run_rng)
                except (ValueError, MemoryError) as error:
                    status = f"failed: {' '.join(str(error).split())}"
                    break
                seconds = time.perf_counter() - start
                spent += seconds
                graph = result.cpdag
                runs.append({"skeleton_f1": skeleton_prf(graph, truth)["f1"],
                             "cpdag_f1": cpdag_pair_prf(graph, truth)["f1"],
                             "edges": graph.to_undirected().number_of_edges(),
                             "true_edges": dag.number_of_edges(), "seconds": seconds})
            rows.append(_row(spec, eps, plan.guarantee["delta"], auto, status,
                             runs if status == "ok" else [], p=len(view), limits=limits))
    table = pd.DataFrame.from_records(rows, columns=list(FORECAST_COLUMNS))
    picks = _auto_picks(table, declared, target, registry)
    table["auto"] = [picks.get(eps) == name for name, eps in zip(table["algorithm"], table["epsilon"])]
    auto = picks.get(max(epsilons)) if picks else None
    most = (f"{repetitions}" if repetitions != "auto" else
            f"{AUTO_REPETITIONS} (fewer for costlier runs: a count from the public sizes and the algorithm)")
    how = (f"up to {most} random DAGs with {degree:g} neighbours per node on average (as many as fit in "
           f"{time_budget:g} s per algorithm and budget), n = {n}; " if time_budget is not None else
           f"{'' if repetitions != 'auto' else 'up to '}{most} random DAGs with {degree:g} neighbours per node on "
           f"average, n = {n}; ")
    if numeric_draws:
        how += (f"{DEPENDENCE[dependence]}, scaled to the public bounds, and put through the schema's bins for the "
                "algorithms that read bins")
    else:
        how += f"random conditional tables (Dirichlet({concentration:g}) rows) over the schema's categories" + (
            "" if declared.kind == "categorical" else " and bins (an unordered column has no numeric coding)")
    return Forecast(table, auto, n, target.name, declared.sha256, SYNTHETIC_STATEMENT.format(how=how))


def _auto_picks(table: pd.DataFrame, schema: Schema, target: Any,
                registry: Mapping[str, PrivateAlgorithm]) -> dict[float, str]:
    """``algorithm="auto"`` at each budget of ``table``: among :data:`dpcd.registry.AUTO_CANDIDATES` better than
    chance, the first unless the best (:func:`ranked`) has a skeleton F1 ahead by more than :data:`AUTO_MARGIN`.

    Without a forecast row of any candidate (none ran, or none was asked for),
    and at every budget under a relation that protects n (``discover`` makes no
    forecast there), the registry's fixed preference
    (:func:`dpcd.preparation.auto_algorithm`).
    """
    if not target.n_public:
        try:
            fixed = auto_algorithm(schema, target, registry).name
        except AlgorithmUnavailable:
            return {}
        return {eps: fixed for eps in sorted(set(table["epsilon"]))}
    order = list(AUTO_CANDIDATES.get(choose_kind(schema), ()))
    picks: dict[float, str] = {}
    for eps in sorted(set(table["epsilon"])):
        rows = ranked(table[(table["epsilon"] == eps) & table["algorithm"].isin(order)])
        if len(rows):
            best = rows.iloc[0]
            good = rows[rows["skeleton_f1"] > rows["random_f1_high"]]
            preferred = good.iloc[int(np.argmin([order.index(a) for a in good["algorithm"]]))] if len(good) else best
            picks[eps] = str(best["algorithm"] if best["skeleton_f1"] > preferred["skeleton_f1"] + AUTO_MARGIN
                             else preferred["algorithm"])
            continue
        try:
            picks[eps] = auto_algorithm(schema, target, registry).name
        except AlgorithmUnavailable:
            pass
    return picks


AUTO_MARGIN = 0.1
"""``auto`` leaves the first of :data:`dpcd.registry.AUTO_CANDIDATES` better than chance (the best on real networks
in the benchmark) only for a candidate whose forecast skeleton F1 is ahead by more than this: forecasts of close
candidates on synthetic data differ by chance more than by merit."""
AUTO_REPETITIONS = 10
"""Most synthetic runs per candidate when ``discover`` picks ``auto`` by forecast (``dpcd forecast`` may run more)."""
AUTO_WORK = 1e9
"""Work of ``auto``'s forecast per candidate, in the units of :func:`auto_repetitions` (about 5–12 s here)."""
AUTO_FIXED_ROWS = 20_000
"""Rows' worth of work a run costs whatever n (test overhead), in :func:`auto_repetitions`' cost model."""
RUN_COST: dict[str, float] = {"gcm_pc": 12.0}
"""A run's work per row and pair of columns relative to the PC engine's count tests, where it is not 1: GCM-PC's
tests regress on feature covariances and bootstrap the noise (8–12 × Moment-PC's time on 5–31 columns here).
Kept here, not on the algorithm objects: it is the forecast's cost model, not part of any algorithm or its proof."""
CELL_COST: dict[str, float] = {"lapmech": 25.0}
"""Work per cell of the full contingency table, for the algorithms that build it (LapMech: about 3·10⁻⁷ s a cell
here, 5.6 s at 2²⁴ cells, whatever n)."""
ROUND_CELL_COST: dict[str, float] = {"aim_pc": 75.0}
"""Work per cell of the full table and per squared column count, for the algorithms that refit that table round
after round (AIM-PC: about 16·p rounds of mirror descent over every cell, each step reading every measured marginal;
1.4–1.5·10⁻⁶ s per cell·p² here on 8–11 columns of 3–4 categories)."""
SECONDS_PER_WORK = 2e-8
"""Seconds per unit of :func:`run_work` on this project's reference machine (2 cores): 0.9–1.6·10⁻⁸ for Marginal-PC
and MST-PC on 20–37 columns at n = 10⁵, more on small tables where a run's fixed costs dominate. A constant of the
code, so that a forecast's decision to skip a run is a function of public sizes, never of the machine's load."""


def run_work(spec: PrivateAlgorithm, view: Schema, n: int) -> float:
    """The work of one run of ``spec`` on the public ``view`` at ``n`` rows, in the units of :data:`SECONDS_PER_WORK`:
    p² (n + :data:`AUTO_FIXED_ROWS`) · :data:`RUN_COST` (1 unless listed), plus :data:`CELL_COST` × the full table's
    cells and :data:`ROUND_CELL_COST` × cells × p² for the algorithms listed there. Public sizes only.

    >>> from dpcd.registry import ALGORITHMS
    >>> f"{run_work(ALGORITHMS['marginal_pc'], Schema.categorical([3] * 37), 100_000):.3g}"
    '1.64e+08'
    """
    p = len(view)
    n = check_int(n, "n", minimum=1)
    work = float(p) * p * (n + AUTO_FIXED_ROWS) * RUN_COST.get(spec.name, 1.0)
    cells = float(math.prod(int(k) for k in view.levels)) if (spec.name in CELL_COST or
                                                               spec.name in ROUND_CELL_COST) else 0.0
    work += CELL_COST.get(spec.name, 0.0) * cells + ROUND_CELL_COST.get(spec.name, 0.0) * cells * p * p
    return work


def estimated_seconds(spec: PrivateAlgorithm, view: Schema, n: int) -> float:
    """Expected seconds of one run of ``spec`` on ``view`` at ``n`` rows on the reference machine: :func:`run_work` ×
    :data:`SECONDS_PER_WORK`. A rough, public estimate (a function of sizes only) that :func:`forecast` uses to skip,
    before it starts, a run that cannot fit its ``time_budget``.

    >>> from dpcd.registry import ALGORITHMS
    >>> round(estimated_seconds(ALGORITHMS["aim_pc"], Schema.categorical([3] * 11), 10_000), 1)
    32.2
    """
    return run_work(spec, view, n) * SECONDS_PER_WORK


def auto_repetitions(spec: PrivateAlgorithm, view: Schema, n: int) -> int:
    """Synthetic runs of ``spec`` on the public ``view`` (p columns) in ``auto``'s forecast: ⌊:data:`AUTO_WORK` /
    :func:`run_work`⌋, at least 1 and at most :data:`AUTO_REPETITIONS`.

    A function of public sizes only (the view's columns and domains, the public n), so ``auto``'s pick does not
    depend on how loaded the machine is; a wall-clock budget would stop the runs at a count that does, and could turn
    a close pick. The cost model (time ∝ pairs × rows with a fixed part per run, and ∝ cells for a full table) is
    rough on purpose: it only keeps the forecast to seconds.

    >>> from dpcd.registry import ALGORITHMS
    >>> marginal = ALGORITHMS["marginal_pc"]
    >>> auto_repetitions(marginal, Schema.categorical([2] * 8), 100_000)
    10
    >>> auto_repetitions(marginal, Schema.categorical([3] * 37), 100_000)
    6
    >>> auto_repetitions(ALGORITHMS["gcm_pc"], Schema.numeric([(0.0, 1.0)] * 20), 100_000)
    1
    >>> auto_repetitions(ALGORITHMS["lapmech"], Schema.categorical([2] * 24), 5_000)
    2
    """
    return max(1, min(AUTO_REPETITIONS, int(AUTO_WORK // run_work(spec, view, n))))


def choose_by_forecast(schema: Schema | Mapping[str, Any] | str | os.PathLike[str], *, n: int, epsilon: float,
                       delta: float = 1e-6, relation: str = "replace", alpha: float = RELEASE_ALPHA,
                       registry: Mapping[str, PrivateAlgorithm] | None = None, rng: RngLike = 0,
                       dependence: str = "linear") -> tuple[PrivateAlgorithm, Forecast]:
    """``algorithm="auto"``: the candidate with the best forecast at this budget, and that forecast.

    Runs :func:`forecast` for the schema's :data:`dpcd.registry.AUTO_CANDIDATES`
    (those proven for ``relation``) with :func:`auto_repetitions` synthetic
    data sets each (a count from public sizes, not from a clock) and keeps the
    first candidate better than a random graph with as many edges unless the
    best (:func:`ranked`) is ahead in skeleton F1 by more than :data:`AUTO_MARGIN`. ``dependence`` chooses the model of numeric synthetic data
    (:data:`DEPENDENCE`). Every input is public — there is no data argument — so the
    choice spends no budget. Under add/remove n is protected and no forecast
    can be made: the registry's fixed preference is used instead.

    >>> from dpcd.schema import Schema
    >>> spec, result = choose_by_forecast(Schema.categorical([2, 2, 3]), n=2000, epsilon=1.0)
    >>> spec.name in {"marginal_pc", "mst_pc", "em_pc", "lapmech"}, bool(result.table["auto"].any())
    (True, True)
    """
    declared = load_schema(schema)
    registry = ALGORITHMS if registry is None else registry
    target = as_relation(relation)
    if not target.n_public:
        return auto_algorithm(declared, target, registry), None
    names = [name for name in AUTO_CANDIDATES.get(choose_kind(declared), ()) if name in registry]
    result = forecast(declared, n=n, epsilon=[epsilon], delta=delta, algorithms=names, relation=target.name,
                      alpha=alpha, repetitions="auto", rng=rng, registry=registry, time_budget=None,
                      dependence=dependence)
    name = result.auto if result.auto is not None else auto_algorithm(declared, target, registry).name
    return registry[name], result


MIN_EXPECTED_F1 = 0.3
"""Smallest expected skeleton F1 (a forecast's mean over its synthetic runs) at which ``discover`` releases without
``force``: below it, about 7 in 10 of the released edges are wrong or of the true edges missing. A round number fixed
before any run, never fitted to one; the holder's page states it."""


def in_words(skeleton_f1: float) -> str:
    """An expected skeleton F1 in words: roughly how many edges in 10 are right (F1 weighs the released edges that
    are true and the true edges that are found alike, so it is near both shares when they are close).

    >>> in_words(0.09), in_words(0.71), in_words(0.02)
    ('expected skeleton F1 0.09: about 1 edge in 10 right', 'expected skeleton F1 0.71: about 7 edges in 10 right', 'expected skeleton F1 0.02: fewer than 1 edge in 10 right')
    """
    if math.isnan(skeleton_f1):
        return "expected skeleton F1 unknown"
    tenths = int(math.floor(10.0 * skeleton_f1 + 0.5))
    share = "fewer than 1 edge in 10" if tenths < 1 else f"about {tenths} edge{'s' if tenths != 1 else ''} in 10"
    return f"expected skeleton F1 {skeleton_f1:.2f}: {share} right"


def _verdict(skeleton_f1: float, random_high: float) -> str:
    if math.isnan(skeleton_f1) or math.isnan(random_high):
        return ""
    if skeleton_f1 <= random_high:
        return ("not better than chance: the mean skeleton F1 is within the 90 % range of the mean of random graphs "
                f"with the same numbers of edges ({in_words(skeleton_f1)})")
    return f"better than a random graph with the same number of edges; {in_words(skeleton_f1)}"


def worth_releasing(row: Mapping[str, Any] | None) -> tuple[bool, str]:
    """Whether a release is worth having by its forecast row (``None``: no forecast), and the page's headline.

    Not worth having — ``discover`` refuses before reading any value unless ``force`` — when the forecast of the
    released algorithm is no better than random graphs with as many edges (:func:`ranked`'s test) or its expected
    skeleton F1 is below :data:`MIN_EXPECTED_F1`. Without a forecast (none asked for, n protected, or the synthetic
    run failed) the release goes ahead and the headline says its accuracy is unknown. A function of the forecast
    alone, which reads public inputs only: the decision spends no budget and reveals nothing of the data.

    >>> worth_releasing({"status": "ok", "label": "MST-PC", "epsilon": 1.0, "skeleton_f1": 0.09,
    ...                  "skeleton_f1_low": 0.07, "skeleton_f1_high": 0.14, "random_f1_high": 0.08})[0]
    False
    """
    if row is None or row.get("status") != "ok" or math.isnan(float(row.get("skeleton_f1", math.nan))):
        why = "" if row is None or row.get("status") == "ok" else f" ({row.get('status')})"
        return True, ("No forecast of this release's accuracy was made" + why + ": how good the graph is, is "
                      "unknown; `dpcd forecast` estimates it from public inputs.")
    f1, label = float(row["skeleton_f1"]), row.get("label", row.get("algorithm", ""))
    spread = (f" (10–90 % of synthetic runs: {float(row['skeleton_f1_low']):.2f}–{float(row['skeleton_f1_high']):.2f})"
              if "skeleton_f1_low" in row else "")
    if f1 <= float(row.get("random_f1_high", -1.0)):
        return False, (f"Not worth releasing: at ε = {float(row['epsilon']):g} the forecast of {label} is no better "
                       f"than a random graph with as many edges — {in_words(f1)}{spread}.")
    if f1 < MIN_EXPECTED_F1:
        return False, (f"Not worth releasing: at ε = {float(row['epsilon']):g} the forecast of {label} is "
                       f"{in_words(f1)}{spread}, below the {MIN_EXPECTED_F1:g} a release needs.")
    return True, f"The forecast of {label} at ε = {float(row['epsilon']):g}: {in_words(f1)}{spread}."


WORTH_HELP = ("More rows, a larger ε, or fewer columns (or fewer categories per column) would help; `dpcd forecast` "
              "shows by how much, from public inputs only. `--force` (Python: `ReleaseOptions(force=True)`) releases anyway, the page "
              "leading with this warning.")
"""What would help when a release is refused as not worth having (:func:`worth_releasing`)."""


def _row(spec: PrivateAlgorithm, epsilon: float, delta: float, auto: str | None, status: str,
         runs: Sequence[Mapping[str, float]] = (), *, p: int | None = None, limits: Limits | None = None
         ) -> dict[str, Any]:
    row: dict[str, Any] = {"algorithm": spec.name, "label": spec.label, "epsilon": epsilon, "delta": delta,
                           "auto": spec.name == auto, "status": status, "runs": len(runs)}
    frame = pd.DataFrame.from_records(list(runs)) if runs else None
    for metric in ("skeleton_f1", "cpdag_f1"):
        values = frame[metric].to_numpy(dtype=float) if frame is not None else np.array([])
        row[metric] = float(np.nanmean(values)) if values.size else math.nan
        row[f"{metric}_low"] = float(np.nanquantile(values, 0.1)) if values.size else math.nan
        row[f"{metric}_high"] = float(np.nanquantile(values, 0.9)) if values.size else math.nan
    for metric in ("edges", "true_edges", "seconds"):
        row[metric] = float(frame[metric].mean()) if frame is not None else math.nan
    if frame is not None and p is not None:
        row["random_f1"], row["random_f1_high"] = random_graph_f1(p, frame["true_edges"], frame["edges"])
    else:
        row["random_f1"] = row["random_f1_high"] = math.nan
    row["lift"] = row["skeleton_f1"] - row["random_f1"]
    row["verdict"] = _verdict(row["skeleton_f1"], row["random_f1_high"])
    row["max_order"] = None if limits is None else limits.max_order
    row["max_tests"] = None if limits is None else limits.max_tests
    return row

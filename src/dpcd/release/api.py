"""Release a causal graph of a data holder's table under a public schema and a total (ε, δ).

:func:`discover` (also ``dpcd discover DATA.csv --schema schema.json``) does,
in this order:

1. **the request and the file's structure**: the budget (ε above
   :data:`EPSILON_REFUSE` is refused unless ``force``; above :data:`EPSILON_WARN`
   the page and the terminal say it protects little), the
   :class:`~dpcd.schema.Schema` (a draft read from the data is refused), the
   header against the schema's columns and — under replace-one, where n is
   public — the row count (:func:`~dpcd.release.tables.table_shape`: lines
   counted, no field parsed) against the schema's n, ``min_rows`` and δ < 1/n.
   Every refusal these decide comes before any forecast or value;
2. **public inputs only**: picks the algorithm — ``"auto"`` under
   replace-one: the best forecast on synthetic data of the schema's shape at
   the public n and the budget (:func:`dpcd.forecast.choose_by_forecast`);
   under add/remove, where n is protected: the registry's fixed preference
   for the schema's kind (:func:`choose_kind`) — refuses one that can never
   make a release (:func:`dpcd.registry.release_refusal`), chooses the view
   of the schema the algorithm reads, calibrates its parameters on its
   data-independent worst case (:func:`dpcd.registry.calibrate`), forecasts
   it, and **refuses a release not worth having**
   (:func:`dpcd.forecast.worth_releasing`: no better than chance, or an
   expected skeleton F1 below :data:`dpcd.forecast.MIN_EXPECTED_F1`) with
   :class:`ReleaseRefused` unless ``force`` — all before a value is read;
3. reads the values and encodes them by the schema's rules (clamping, fills),
   telling the holder what the rules did (``DiscoveryResult.quality``, never
   written), and runs the algorithm — the only step that reads values, and
   every data-dependent choice inside it is a charged mechanism;
4. writes the graph, ``privacy.json`` and ``report.html`` (:mod:`dpcd.release.writers`),
   the page leading with its headline verdict and any warning.

The privacy model in five lines
-------------------------------
* What is protected: any one person's record (one row). Under the default
  relation ``"replace"``, replacing it by any other row the schema allows
  changes the probability of every possible release by at most a factor e^ε
  (plus δ); n is public. Under ``"add/remove"``, adding or removing it does, and
  n is protected (not published, not used).
* What is public: the schema (columns, kinds, categories, bounds, fill rules),
  the algorithm and its parameters, and n under replace-one — nothing else.
* ``privacy.json`` states the **guarantee** (worst case over all data, from
  the worst case) separately from what this run happened to spend.
* The noise is secret: by default (``rng=None``) it comes from fresh
  operating-system entropy. A seed makes a run reproducible for experiments,
  and whoever knows it can undo the guarantee.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from dpcd.schema import Schema
>>> rng = np.random.default_rng(0)
>>> a = rng.integers(0, 2, 500); b = (a ^ (rng.random(500) < 0.1)).astype(int); c = rng.integers(0, 2, 500)
>>> table = pd.DataFrame({"a": a, "b": b, "c": c})
>>> schema = Schema.categorical([2, 2, 2], names=["a", "b", "c"])
>>> try:                      # on three columns a random graph is often right: the forecast cannot beat it
...     discover(table, schema=schema, epsilon=1.0)
... except ReleaseRefused as refusal:
...     print(str(refusal)[:60])
Not worth releasing: at ε = 1 the forecast of Marginal-PC is
>>> release = discover(table, schema=schema, epsilon=1.0, options=ReleaseOptions(force=True))
>>> release.auto_selected, release.privacy["guarantee"]["relation"], release.privacy["guarantee"]["epsilon"] <= 1.0
(True, 'replace', True)
>>> release.warnings[0][:20]
'Not worth releasing:'
"""

from __future__ import annotations

import inspect
import math
import os
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from .._version import __version__
from ..forecast import WORTH_HELP, auto_repetitions, choose_by_forecast, forecast, worth_releasing
from ..preparation import (
    MAX_LEVELS,
    RELEASE_ALPHA,
    ReleasePlan,
    auto_algorithm,
    check_width,
    choose_kind,
    load_schema,
    plan_release,
    view_for,
)
from ..privacy.relation import Relation, convert
from ..privacy.relation import relation as as_relation
from ..registry import ALGORITHMS, PrivateAlgorithm, reads_counts, release_refusal, resolve_algorithm
from ..schema import DataPreparationError, Schema, SchemaError
from ..statements import check_dependence
from ..validation import (
    RngLike,
    as_rng,
    check_delta,
    check_epsilon,
    check_int,
    check_probability,
)
from .cluster import ClusterTable, cluster_layout, cluster_shape, encode_on_cluster, holds_lines, is_cluster_source
from .tables import (
    check_line_labels,
    encode_chunks,
    quality_lines,
    read_chunks,
    table_shape,
)
from .writers import jsonable, write_outputs

__all__ = [
    "DiscoveryResult",
    "ReleaseRefused",
    "EPSILON_WARN",
    "EPSILON_REFUSE",
    "budget_warnings",
    "MIN_ROWS",
    "MAX_LEVELS",
    "DATA_PREPARATION",
    "data_preparation",
    "run_defaults",
    "choose_kind",
    "load_schema",
    "privacy_report",
    "Output",
    "ReleaseOptions",
    "discover",
]

MIN_ROWS = 100
"""Fewest rows ``discover`` accepts under replace-one (n is public there): below that no private test has power."""


def data_preparation(min_rows: int = MIN_ROWS, delimiter: str = ",") -> str:
    """What ``privacy.json`` says the holder's file must satisfy before the release (``min_rows`` and ``delimiter``
    as the run used them): checks of the file's structure and public sizes only, never of its values.

    >>> "at least 100" in data_preparation() and "separated by ','" in data_preparation()
    True
    """
    shown = "a tab" if delimiter == "\t" else repr(delimiter)
    return (
        "Checked before the release, on the file's structure only; the holder fixes the file and runs again: "
        f"the file must be a CSV with fields separated by {shown} whose first line is a header of unique, non-empty "
        "names; its columns must be exactly the schema's; under replace-one its number of rows (public: every line "
        "after the header is one row, except a blank line — nothing but white space (spaces, tabs, any Unicode space) "
        "and no separator — which is layout, "
        "not a record) must equal the schema's n when one is declared and be at least "
        f"{min_rows}. Values are never checked: values outside the schema follow its rules, and a malformed line "
        "(wrong number of fields, a quote left open, bytes that are not UTF-8) is read on its own, as a row of "
        "missing values or padded with them."
    )


DATA_PREPARATION = data_preparation()
""":func:`data_preparation` with the defaults of :func:`discover`."""


def _spent_grids(ledger: Any) -> tuple[float, ...]:
    """The PLD grids, besides the ledger's default 10⁻⁴, on which :func:`privacy_report` totals a run's charges
    by the tight accountant; the smallest total is reported.

    Each total is an upper bound (the accountant rounds every loss up to its
    grid), and the grids are not nested, so none is always the smallest. The
    plans' grid — 10⁻³ of the largest charge, at least 10⁻⁴, on which
    :func:`dpcd.discovery.kendall_family.privacy_totals` totals a worst case —
    lets a run that spends its plan total what the plan did; without it a run
    of SVT-PC at ε ≈ 18 totalled a hair above its guarantee on the default
    grid. And without Gaussian charges, a hundredth of the smallest positive
    charge, at least 10⁻⁶ of their sum: on the default grid a run of thousands
    of charges of ε ≈ 10⁻⁵ (Priv-PC at a small budget on many columns) totals
    to basic composition, above the guarantee that zCDP proved for its worst
    case. The composed loss of pure and generic (ε, δ) charges spans at most
    their sum, so that grid has at most 10⁶ points; a Gaussian's loss spans
    many times its ε, so a ledger with one stays on the coarse grids.

    >>> from dpcd.privacy import PrivacyLedger
    >>> ledger = PrivacyLedger("replace")
    >>> _ = ledger.charge("test", epsilon=1e-5, count=1000, kind="laplace")
    >>> [float(f"{grid:.3g}") for grid in _spent_grids(ledger)]
    [1e-07]
    """
    values = np.asarray(ledger.epsilons(), dtype=np.float64)
    positive = values[values > 0]
    if positive.size == 0:
        return ()
    grids = set()
    if positive.max() <= 20.0:  # the plans' grid (privacy_totals, which uses basic composition above 20)
        grids.add(float(max(1e-4, 1e-3 * positive.max())))
    if not any(entry.kind in ("gaussian", "subsampled_gaussian") for entry in ledger.entries):
        grids.add(float(min(1e-4, max(1e-2 * positive.min(), 1e-6 * math.fsum(positive)))))
    grids.discard(1e-4)
    return tuple(sorted(grids))


def _spent(ledger: Any, target: Relation, delta: float) -> dict[str, Any]:
    """This run's charges, totalled by every accountant and converted to the release's relation."""
    if ledger is None:
        raise RuntimeError("the algorithm returned no privacy ledger")
    if not ledger.differentially_private:
        raise RuntimeError("the run used a variant without a privacy proof (" + "; ".join(ledger.not_dp)
                           + "); nothing written (a bug: discover never asks for one)")
    target_delta = delta if delta > 0 else None
    summary = ledger.summary(target_delta=target_delta)
    for grid in _spent_grids(ledger):
        finer = ledger.total("tight", target_delta=target_delta, value_discretization_interval=grid).as_dict()
        if finer["epsilon"] < summary["totals"]["tight"]["epsilon"]:
            summary["totals"]["tight"] = finer
    totals = {}
    for method, total in summary["totals"].items():
        if total["epsilon"] <= 0:
            totals[method] = {"epsilon": 0.0, "delta": 0.0}
            continue
        eps, dlt = convert(total["epsilon"], min(total["delta"], 1 - 1e-15), source=ledger.relation,
                           target=target)
        totals[method] = {"epsilon": eps, "delta": dlt}
    return {"proven_under": ledger.relation, "relation": target.name, "n_charges": summary["n_charges"],
            "mechanisms": summary["mechanisms"], "totals": totals,
            "note": "what this run charged, a function of the algorithm's private outputs (publishing it costs "
                    "nothing). Informational: the advanced and tight totals treat the charges as fixed in advance, "
                    "which algorithms that choose their budgets from earlier outputs (EM-PC, CURATE) do not, and basic "
                    "or advanced composition can lie above the guarantee where that comes from a tighter accountant "
                    "(the PLD or zCDP on the worst case); the guarantee above is the bound that holds"}


NOISE_SOURCES = {
    "entropy": "fresh operating-system entropy drawn for this release (rng=None): nobody can recompute the noise",
    "caller": "a generator or seed supplied by the caller: whoever knows it can recompute the noise and undo the "
              "guarantee, so it must stay secret (use rng=None for a release)",
}
"""What ``privacy.json`` says of where the noise came from (never the seed itself)."""


def run_defaults(spec: PrivateAlgorithm, exclude: Iterable[str] = ()) -> dict[str, Any]:
    """The keyword settings ``spec.run`` takes at their defaults in a release (public: fixed by the code of this
    version, never by the data), apart from those named in ``exclude`` (names, or a mapping's keys such as the
    parameters a release sets) and the names of the columns.

    >>> from dpcd.registry import ALGORITHMS
    >>> run_defaults(ALGORITHMS["lapmech"])["max_cells"]
    33554432
    """
    skip = {"node_names", "max_order", "max_tests", spec.budget_arg, spec.delta_arg, spec.alpha_arg, *exclude}
    return {name: (list(p.default) if isinstance(p.default, tuple) else p.default)
            for name, p in inspect.signature(spec.run).parameters.items()
            if p.default is not inspect.Parameter.empty and name not in skip and name not in spec.extra}


def privacy_report(plan: ReleasePlan, result: Any, *, requested: tuple[float, float], auto: bool,
                   noise: str = "entropy", forecast_read: bool = False, min_rows: int = MIN_ROWS,
                   delimiter: str = ",") -> dict[str, Any]:
    """The content of ``privacy.json``: guarantee, what this run spent, and exactly what is public.

    Everything public comes from ``plan`` (:class:`dpcd.preparation.ReleasePlan`): the algorithm's parameters
    (:attr:`~dpcd.preparation.ReleasePlan.parameters`, the search caps among them, with the reason for their
    values), the view's coding and n where the relation makes it public; the holder's ``dependence`` statement is
    listed as the forecasts' model when a forecast read it (``forecast_read``); what was spent comes from the run's
    ledger (``result``), a function of its private outputs.
    """
    spec, schema, view, calibration, limits = plan.spec, plan.schema, plan.view, plan.calibration, plan.limits
    target = as_relation(calibration.relation)
    n = plan.n
    parameters = plan.parameters
    public: dict[str, Any] = {
        "schema": {"sha256": schema.sha256, "columns": schema.describe()},
        "algorithm": {"name": spec.name, "auto_selected": auto, "parameters": parameters,
                      "defaults": run_defaults(spec, exclude=parameters)},
    }
    info = getattr(result, "info", {})
    for key in ("norm_clip", "conditioning_degree", "feature_weight"):  # "auto" settings: values from public inputs
        if public["algorithm"]["defaults"].get(key) == "auto" and key in info:
            public["algorithm"]["defaults"][f"{key}_value"] = info[key]
    if forecast_read:
        public["algorithm"]["forecast_dependence"] = plan.dependence
    public["algorithm"]["limits"] = limits.why
    if any(c.source is not None for c in view.columns):
        public["schema"]["coding"] = (f"numeric columns as {schema.bins} equal-width bins of their bounds"
                                      if spec.data == "categorical" else
                                      "ordinal and two-category columns as their codes 0..k-1")
    if target.n_public:
        public["n"] = n
    spent = _spent(getattr(result, "ledger", None), target, requested[1])
    report = {
        "algorithm": spec.name,
        "label": spec.label,
        "differentially_private": spec.differentially_private,
        "relation": {"name": target.name, "in_words": target.words},
        "guarantee": calibration.guarantee,
        "requested": {"epsilon": requested[0], "delta": requested[1]},
        "spent_this_run": spent,
        "calibration": calibration.how,
        "noise": NOISE_SOURCES[noise],
        "assumed_public": public,
        "data_preparation": data_preparation(min_rows, delimiter),
        "schema": schema.to_json(),
        "dpcd_version": __version__,
    }
    guarantee = calibration.guarantee
    tight = spent["totals"]["tight"]
    if tight["epsilon"] > guarantee["epsilon"] * (1 + 1e-6) + 1e-9 and \
            spent["totals"]["basic"]["epsilon"] > guarantee["epsilon"] * (1 + 1e-6) + 1e-9:
        raise RuntimeError(f"algorithm {spec.name!r} charged epsilon={tight['epsilon']:.6g}, above its planned "
                           f"guarantee {guarantee['epsilon']:.6g}; nothing written (a bug, never expected)")
    return report


@dataclass(frozen=True)
class DiscoveryResult:
    """What :func:`discover` released: the graph, the algorithm's result and its privacy report.

    ``graph`` is the CPDAG (or DAG for score-based algorithms) over the
    schema's columns; ``result`` the algorithm's own result (with ``.ledger``;
    it stays with the holder and is **not** covered by the guarantee: its
    ``info`` can hold numbers computed from the exact data, such as EM-PC's
    ``exact_fraction`` and any run's ``seconds``, and noisy intermediate values
    meant to stay inside the run, such as PrivPC*'s noisy correlation matrix —
    publish the written files, never this object); ``privacy``
    the content of ``privacy.json``; ``files`` the written paths (empty when
    ``out`` was None).
    """

    algorithm: str
    label: str
    graph: nx.DiGraph
    graph_type: str
    result: Any
    privacy: dict[str, Any]
    schema: Schema
    auto_selected: bool = False
    files: dict[str, Path] = field(default_factory=dict)
    headline: str = ""
    """The page's headline verdict (from the forecast, public inputs only), which the terminal repeats."""
    warnings: tuple[str, ...] = ()
    """Warnings the page leads with (a large ε; a release forced although not worth having)."""
    quality: tuple[str, ...] = ()
    """What the schema's rules did to the values (:func:`dpcd.release.tables.data_quality`): read from the private
    data without noise, for the holder only — never written to any released file."""

    @property
    def ledger(self) -> Any:
        return getattr(self.result, "ledger", None)


class _Progress:
    """The terminal's progress line: finished steps of the total and the time elapsed, redrawn every second so the
    clock moves while a long step runs (no estimate of the time left: the steps' lengths differ too much for one)."""

    def __init__(self, total: int) -> None:
        import threading

        from tqdm import tqdm  # the plain bar: in a notebook, tqdm.auto's widget needs ipywidgets and warns without

        self.bar = tqdm(total=total, desc="dpcd discover", unit="step", leave=False, file=sys.stderr,
                        bar_format="{desc} [{n_fmt}/{total_fmt} steps, {elapsed} elapsed]")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)
        self._thread.start()

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            self.bar.refresh()

    def begin(self, text: str) -> None:
        self.bar.set_description_str(f"dpcd discover: {text}")

    def done(self) -> None:
        self.bar.update(1)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)
        self.bar.close()


def _progress(enabled: bool | None, total: int) -> _Progress | None:
    """A progress line on stderr (default: when stderr is a terminal), or None."""
    shown = sys.stderr.isatty() if enabled is None else bool(enabled)
    return _Progress(total) if shown else None


def _begin(bar: _Progress | None, text: str) -> None:
    """Show the step now running."""
    if bar is not None:
        bar.begin(text)


def _done(bar: _Progress | None) -> None:
    if bar is not None:
        bar.done()


FORECAST_SEED = 0
"""Seed of the forecast on report.html. The forecast is a function of public inputs only, so a fixed seed hides
nothing; drawing it from the release's generator would publish a function of that generator's state (the noise)."""


def _forecast(plan: ReleasePlan, repetitions: int, registry: Mapping[str, PrivateAlgorithm]) -> tuple[Any, str]:
    """The forecast of the planned algorithm (public inputs only, seeded with :data:`FORECAST_SEED`): the page's
    table and the row :func:`dpcd.forecast.worth_releasing` reads.

    Only the released algorithm runs (``dpcd forecast`` compares them all), with
    the release's own caps, ``repetitions`` times at most and no more than
    :func:`dpcd.forecast.auto_repetitions` allows for its view and n — a count
    from public sizes, not a clock, so the page is a function of public inputs
    alone (a time budget would make it depend on how loaded the machine was).
    """
    spec = plan.spec
    runs = min(repetitions, auto_repetitions(spec, plan.view, plan.n))
    result = forecast(plan.schema, n=plan.n, epsilon=[plan.calibration.epsilon], delta=plan.calibration.delta,
                      algorithms=[spec.name], relation=plan.calibration.relation, alpha=plan.alpha,
                      max_order=plan.limits.max_order, max_tests=plan.limits.max_tests, repetitions=runs,
                      rng=FORECAST_SEED, registry=registry, time_budget=None, dependence=plan.dependence)
    return result.table, (result.statement + " Only the released algorithm was forecast, with the release's own "
                          "caps; `dpcd forecast` compares every algorithm.")


def _no_forecast_note(repetitions: int, n: int | None) -> str:
    """Why report.html has no forecast."""
    if n is None:
        return ("No forecast: under add/remove the number of rows is protected, so it cannot be used; run "
                "`dpcd forecast --n GUESS` with a public guess of n.")
    return "No forecast was requested (forecast_repetitions = 0); run `dpcd forecast` for one."


def _released_row(table: pd.DataFrame | None, spec: PrivateAlgorithm) -> dict[str, Any] | None:
    """The forecast row of the released algorithm, or None."""
    if table is None or not len(table):
        return None
    rows = table[table["algorithm"] == spec.name]
    return None if rows.empty else rows.iloc[0].to_dict()


EPSILON_WARN = 10.0
"""Above this total ε a release says, on its page and in the terminal, that it protects little: e^10 ≈ 22 000 is the
factor by which one person's record may change the odds of any output."""
EPSILON_REFUSE = 50.0
"""Above this total ε ``discover`` refuses unless ``force``: e^50 ≈ 5·10²¹ — such a release protects nobody."""


class ReleaseRefused(ValueError):
    """A release that its public inputs show is not worth making (a forecast no better than chance or below
    :data:`dpcd.forecast.MIN_EXPECTED_F1`, or ε above :data:`EPSILON_REFUSE`): refused before any value is read
    and any budget spent; ``ReleaseOptions(force=True)`` releases anyway."""


def budget_warnings(epsilon: float, *, force: bool = False) -> list[str]:
    """The plain warnings a total ``epsilon`` earns on the page and in the terminal; above :data:`EPSILON_REFUSE`
    a :class:`ReleaseRefused` unless ``force``. Public: a function of the request alone.

    >>> budget_warnings(1.0), budget_warnings(20.0)[0][:40]
    ([], 'ε = 20 protects little: one record may c')
    """
    factor = "more than 10^300" if epsilon > 690 else f"{math.exp(epsilon):.2g}"
    if epsilon > EPSILON_REFUSE:
        text = (f"ε = {epsilon:g} protects nobody: one record may change the odds of any output by a factor e^ε = "
                f"{factor}.")
        if not force:
            raise ReleaseRefused(f"{text} Choose ε of at most {EPSILON_WARN:g} (1 or less protects well), or pass "
                                 "--force (Python: ReleaseOptions(force=True)) to release anyway.")
        return [text + " Released anyway (force)."]
    if epsilon > EPSILON_WARN:
        return [f"ε = {epsilon:g} protects little: one record may change the odds of any output by a factor e^ε = "
                f"{factor}; ε of 1 or less protects well."]
    return []


@dataclass(frozen=True)
class Output:
    """Where :func:`discover` writes its files: a ``folder`` (created; refused if it exists and is not empty unless
    ``overwrite``), with graph.png/graph.svg unless ``draw`` is False. ``discover(out=PATH)`` is ``Output(PATH)``.

    >>> Output("release").draw, Output("release", overwrite=True).overwrite
    (True, True)
    """

    folder: str | os.PathLike[str]
    overwrite: bool = False
    draw: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.folder, (str, os.PathLike)):
            raise TypeError(f"out must be a folder path, got {type(self.folder).__name__}")
        for name in ("overwrite", "draw"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False, got {getattr(self, name)!r}")

    def check(self) -> None:
        """Refuse a folder that exists and is not empty (unless ``overwrite``) — before anything is read."""
        folder = Path(self.folder)
        if folder.exists() and (not folder.is_dir() or (any(folder.iterdir()) and not self.overwrite)):
            raise ValueError(f"out {os.fspath(self.folder)!r} exists and is not an empty folder; choose a new folder")


@dataclass(frozen=True)
class ReleaseOptions:
    """The public settings of a release beyond its budget, algorithm and relation; each is recorded in
    ``privacy.json`` where the run used it. The defaults are what ``dpcd discover`` uses.

    Attributes
    ----------
    alpha : two-sided significance level of the algorithm's CI tests (an algorithm thresholding a one-sided
        p-value, like Priv-PC, uses α/2 on it); default :data:`dpcd.preparation.RELEASE_ALPHA` for every algorithm.
    max_order : largest conditioning-set size (bounds the test count of per-test algorithms, hence their noise).
        None: a default from public inputs (p, n where public, the domains; :func:`dpcd.preparation.default_limits`).
    max_tests : cap on the run's CI decisions; None: a default from p that bounds the run time whatever the noise
        (an order starts only if it cannot exceed the cap).
    dependence : the holder's public statement about the data (:data:`dpcd.statements.DEPENDENCE`): the model of
        numeric synthetic data of the forecasts and where GCM-PC's ``"auto"`` feature basis switches to the sparse
        one; ``"linear"`` (default) or ``"nonlinear"`` (then ``auto`` can pick GCM-PC).
    forecast_repetitions : most synthetic runs of the released algorithm in the forecast that decides whether the
        release is worth having and is shown on ``report.html`` (0: none, and no such check unless ``auto`` made
        its own; at most :func:`dpcd.forecast.auto_repetitions`, a count from public sizes). Under add/remove,
        where n is protected, no forecast is made.
    min_rows : fewest rows accepted under replace-one.
    delimiter : the CSV's field separator (a format fact, public).
    force : release although the forecast says the graph is not worth having (no better than chance, or an
        expected skeleton F1 below :data:`dpcd.forecast.MIN_EXPECTED_F1`) or ε is above :data:`EPSILON_REFUSE`;
        the page then leads with the warning. Default False: such a request raises :class:`ReleaseRefused` before
        any value is read.
    registry : the algorithms ``algorithm`` names (default :data:`dpcd.registry.ALGORITHMS`).

    >>> ReleaseOptions(max_order=2).max_order, ReleaseOptions().alpha
    (2, 0.05)
    >>> ReleaseOptions(min_rows=1)
    Traceback (most recent call last):
    ...
    ValueError: min_rows must be >= 2, got 1
    """

    alpha: float = RELEASE_ALPHA
    max_order: int | None = None
    max_tests: int | None = None
    dependence: str = "linear"
    forecast_repetitions: int = 3
    min_rows: int = MIN_ROWS
    delimiter: str = ","
    force: bool = False
    registry: Mapping[str, PrivateAlgorithm] | None = None

    def __post_init__(self) -> None:
        checked = {"alpha": check_probability(self.alpha, "alpha"), "dependence": check_dependence(self.dependence),
                   "forecast_repetitions": check_int(self.forecast_repetitions, "forecast_repetitions", minimum=0),
                   "min_rows": check_int(self.min_rows, "min_rows", minimum=2)}
        if self.max_order is not None:
            checked["max_order"] = check_int(self.max_order, "max_order", minimum=0)
        if self.max_tests is not None:
            checked["max_tests"] = check_int(self.max_tests, "max_tests", minimum=1)
        if not isinstance(self.force, bool):
            raise TypeError(f"force must be True or False, got {self.force!r}")
        if not isinstance(self.delimiter, str):
            raise TypeError(f"delimiter must be a string, got {type(self.delimiter).__name__}")
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def algorithms(self) -> Mapping[str, PrivateAlgorithm]:
        return ALGORITHMS if self.registry is None else self.registry


@dataclass(frozen=True)
class _Request:
    """A release request after its public checks: the schema, the budget, the relation, and the algorithm where it
    is fixed before the file is opened (a name, or ``auto`` under add/remove); ``spec`` is None for ``auto`` by
    forecast."""

    schema: Schema
    epsilon: float
    delta: float
    target: Relation
    auto: bool
    spec: PrivateAlgorithm | None
    options: ReleaseOptions
    warnings: tuple[str, ...]

    @property
    def by_forecast(self) -> bool:
        """``auto`` by forecast: it needs the public n (under add/remove, the registry's fixed preference)."""
        return self.auto and self.target.n_public

    @property
    def forecast_made(self) -> bool:
        return self.by_forecast or (self.target.n_public and self.options.forecast_repetitions > 0)


def _checked_spec(spec: PrivateAlgorithm) -> PrivateAlgorithm:
    """``spec``, after refusing an algorithm that can never make a release (registry entry only)."""
    refusal = release_refusal(spec)
    if refusal is not None:
        raise ValueError(refusal)
    return spec


def _request(data: Any, schema: Any, epsilon: float, delta: float, algorithm: str, relation: str,
             options: ReleaseOptions) -> _Request:
    """The checks of a request that need neither the file nor the forecast: the budget, the schema, the relation
    and an algorithm fixed by name (refused if it can never release, or cannot read the schema)."""
    epsilon, delta, target = check_epsilon(epsilon), check_delta(delta), as_relation(relation)
    warnings = budget_warnings(epsilon, force=options.force)  # refuses above EPSILON_REFUSE unless force
    declared = load_schema(schema)
    check_width(declared)
    if holds_lines(data):
        check_line_labels(declared)  # a CSV: one record per line
    if not target.n_public and declared.n is not None:
        raise SchemaError("the schema declares n, but under add/remove n is protected; remove n from the schema "
                          "or use relation='replace'")
    auto = isinstance(algorithm, str) and algorithm.strip().lower() == "auto"
    spec = None
    if not (auto and target.n_public):
        spec = auto_algorithm(declared, target, options.algorithms) if auto else \
            resolve_algorithm(algorithm, options.algorithms)
        view_for(declared, _checked_spec(spec))  # a schema it cannot read is refused now
    return _Request(declared, epsilon, delta, target, auto, spec, options, warnings)


def _public_rows(data: Any, request: _Request) -> tuple[Any, int | None]:
    """Step 1: the file's header against the schema and, under replace-one, its row count (public) against the
    schema's n, ``min_rows`` and δ < 1/n. Returns what step 3 reads (a :class:`~dpcd.release.cluster.ClusterTable`
    as its :class:`~dpcd.release.cluster.ClusterLayout`, cut into parts once; anything else as given) and n, or
    None where the relation protects it."""
    if isinstance(data, ClusterTable):
        data = cluster_layout(data, delimiter=request.options.delimiter)
    shape = cluster_shape if is_cluster_source(data) else table_shape
    header, rows = shape(data, delimiter=request.options.delimiter)
    request.schema.check_header(header)
    if not request.target.n_public:
        return data, None
    if request.schema.n is not None and rows != request.schema.n:
        raise DataPreparationError(f"the data has {rows} rows but the schema declares n = {request.schema.n}")
    if rows < request.options.min_rows:
        raise DataPreparationError(f"the data has {rows} rows; at least {request.options.min_rows} are needed")
    if request.delta >= 1.0 / rows:
        raise ValueError(f"delta must be below 1/n = {1.0 / rows:.3g} for n = {rows} rows, got {request.delta}")
    return data, rows


@dataclass(frozen=True)
class _Prepared:
    """Step 2's outcome, from public inputs only: the plan, the page's forecast table and note, its headline and
    warnings."""

    plan: ReleasePlan
    forecast: pd.DataFrame | None
    note: str
    headline: str
    warnings: tuple[str, ...]


def _prepare(request: _Request, n: int | None, bar: _Progress | None) -> _Prepared:
    """Step 2, public inputs only: the algorithm (``auto``: by forecast), its plan, its forecast and whether the
    release is worth having (:class:`ReleaseRefused` unless ``force``)."""
    options, spec, warnings = request.options, request.spec, list(request.warnings)
    table, note, auto_table = None, "", None
    if request.by_forecast:
        _begin(bar, "algorithm auto: forecasting the candidates on synthetic data")
        spec, auto_forecast = choose_by_forecast(
            request.schema, n=n, epsilon=request.epsilon, delta=request.delta, relation=request.target.name,
            alpha=options.alpha, registry=options.algorithms, rng=FORECAST_SEED, dependence=options.dependence)
        _checked_spec(spec)
        auto_table = table = auto_forecast.table
        note = (auto_forecast.statement + " These are the candidates algorithm auto compared; it released the one "
                "marked auto.")
        _done(bar)
    _begin(bar, f"calibrating {spec.label}")
    # CalibrationRefused (a ValueError) reaches the caller as itself: which request the algorithm cannot meet
    plan = plan_release(request.schema, spec, epsilon=request.epsilon, delta=request.delta, relation=request.target,
                        n=n, alpha=options.alpha, max_order=options.max_order, max_tests=options.max_tests,
                        dependence=options.dependence)
    _done(bar)
    if request.forecast_made and table is None:
        _begin(bar, f"forecasting {spec.label} on synthetic data")
        table, note = _forecast(plan, options.forecast_repetitions, options.algorithms)
        _done(bar)
    if request.by_forecast and not options.forecast_repetitions:
        table, note = None, "No forecast table was requested (forecast_repetitions = 0)."
    if not request.forecast_made:
        note = _no_forecast_note(options.forecast_repetitions, n)
    worth, headline = worth_releasing(_released_row(auto_table if request.by_forecast else table, spec))
    if not worth:
        if not options.force:
            raise ReleaseRefused(f"{headline} Nothing was read beyond the header and the row count, and no budget "
                                 f"was spent. {WORTH_HELP}")
        warnings.insert(0, f"{headline} Released anyway (force).")
    return _Prepared(plan, table, note, headline, tuple(warnings))


def _read(data: Any, plan: ReleasePlan, delimiter: str, bar: _Progress | None,
          rows: int | None) -> tuple[Any, tuple[str, ...]]:
    """Step 3: the values, read in chunks of :data:`~dpcd.release.tables.CHUNK_ROWS` records
    (:func:`~dpcd.release.tables.read_chunks`: only one chunk's cells are held at a time), each encoded by the schema's
    rules as the plan's view reads them, in the file's order; and what the rules did (for the holder's terminal only,
    never written; a count that cannot be made never stops a release) — on a cluster part by part
    (:func:`~dpcd.release.cluster.encode_on_cluster`) by the same code. The encoded table is the same whatever the
    chunk size or the parts, so is the release. For an algorithm that reads contingency tables only
    (:func:`dpcd.registry.reads_counts`) what is held is the distinct encoded rows with their counts
    (:class:`~dpcd.discovery.counted.CountedRows`), bounded by the domain, not by n."""
    read, counted = 0, reads_counts(plan.spec)

    def tick(records: int) -> None:
        nonlocal read
        read += records
        _begin(bar, f"reading and encoding the table by the schema: {read:,} " + (f"of {rows:,} " if rows else "")
               + "records")

    if is_cluster_source(data):
        encoded, counts = encode_on_cluster(data, plan.view, plan.schema, delimiter=delimiter, on_chunk=tick,
                                            counted=counted)
    else:
        encoded, counts = encode_chunks(read_chunks(data, delimiter=delimiter), plan.view, plan.schema, tick,
                                        counted=counted)
    quality = (("the schema's rules could not be counted on these cells; `dpcd schema DATA --check SCHEMA` counts "
                "them on the CSV",) if counts is None else tuple(quality_lines(counts, plan.schema)))
    return encoded, quality


def discover(
    data: str | os.PathLike[str] | pd.DataFrame,
    *,
    schema: Schema | Mapping[str, Any] | str | os.PathLike[str],
    epsilon: float,
    delta: float = 1e-6,
    algorithm: str = "auto",
    relation: str = "replace",
    rng: RngLike | None = None,
    out: str | os.PathLike[str] | Output | None = None,
    progress: bool | None = None,
    options: ReleaseOptions | None = None,
) -> DiscoveryResult:
    """Release a causal graph of ``data`` under a public ``schema`` and a total (ε, δ).

    Parameters
    ----------
    data : path of a CSV with a header row, of a Parquet or Arrow IPC / Feather file, or of a folder of such
        files (its parts in name order), or a DataFrame; its columns must be exactly the schema's. It is read in
        chunks (:func:`~dpcd.release.tables.read_chunks`), so the table's text is never held whole; the release is
        the same from every form of the same records in the same order. A
        :class:`~dpcd.release.cluster.ClusterTable` (a path and a Dask scheduler's address) or a Dask DataFrame is
        read and encoded on a Dask cluster, part by part, by the same rules (:mod:`dpcd.release.cluster`).
    schema : the public :class:`~dpcd.schema.Schema` (object, JSON mapping or
        path). Types, categories and bounds come from it, never from the values.
    epsilon, delta : the total budget under ``relation``. Pure ε-DP algorithms
        spend no δ. Under replace-one δ must be below 1/n.
    algorithm : a name of :data:`dpcd.registry.ALGORITHMS` or ``"auto"``
        (replace-one: the best forecast lift among
        :data:`dpcd.registry.AUTO_CANDIDATES`, :func:`dpcd.forecast.choose_by_forecast`;
        add/remove: the first algorithm of :data:`dpcd.registry.AUTO_PREFERENCE`
        proven for it). The pick reads public inputs only.
    relation : ``"replace"`` (default; n public) or ``"add/remove"`` (n
        protected; only algorithms proven under it, e.g. EM-PC and LapMech).
    rng : None (default): the noise comes from fresh operating-system
        entropy, as a release needs. A Generator or integer seed makes the
        run reproducible, for experiments only: whoever knows the seed can
        recompute the noise and undo the guarantee, so never publish it
        (``privacy.json`` says which of the two was used, never the seed).
    out : a folder for the outputs (:mod:`dpcd.release.writers`), or an :class:`Output` (``overwrite``, ``draw``);
        None writes nothing.
    progress : show a progress bar (default: when stderr is a terminal).
    options : the release's other public settings (:class:`ReleaseOptions`: α, the search caps, the holder's
        ``dependence`` statement, the forecast's repetitions, ``min_rows``, the CSV's delimiter, ``force``, the
        registry); None: the defaults.

    Privacy
    -------
    The released files are (ε, δ)-DP under ``relation`` with exactly
    ``privacy["assumed_public"]`` public: the algorithm's theorem on its
    worst case (``privacy["guarantee"]``), converted to ``relation`` where
    it is proven under another (group privacy). Everything before the run is the
    plan (:func:`dpcd.preparation.plan_release`), made from public inputs and the
    file's structure only (``DATA_PREPARATION``); nothing is written on error. An
    algorithm that cannot meet the request raises
    :class:`dpcd.registry.CalibrationRefused` (a ``ValueError``) before any value
    is read; a release not worth having raises :class:`ReleaseRefused` there too,
    decided by the forecast, a function of public inputs alone. What the rules
    did to the values (``quality``) is for the holder and is never written: the
    released files are a function of the encoded values alone, the same (for the
    same noise) as from a file with the rules' replacements made.

    Examples
    --------
    >>> from dpcd.datasets import load_bnlearn
    >>> sample = load_bnlearn("cancer", 2000, rng=0)
    >>> release = discover(sample.data, schema=sample.schema(), epsilon=2.0, rng=1)
    >>> release.algorithm in {"marginal_pc", "mst_pc", "em_pc", "lapmech"}, sorted(release.privacy["assumed_public"])
    (True, ['algorithm', 'n', 'schema'])
    """
    began = time.time()  # the files' time: when the release began, not when the data-dependent run ended
    options = ReleaseOptions() if options is None else options
    if not isinstance(options, ReleaseOptions):
        raise TypeError(f"options must be a ReleaseOptions, got {type(options).__name__}")
    output = out if isinstance(out, Output) or out is None else Output(out)
    request = _request(data, schema, epsilon, delta, algorithm, relation, options)
    generator = np.random.default_rng() if rng is None else as_rng(rng)
    if output is not None:
        output.check()
    bar = _progress(progress, 4 + int(request.forecast_made) + int(output is not None))  # the steps _done counts
    try:
        _begin(bar, "checking the file's structure")  # 1. every refusal it decides comes before any forecast
        data, n = _public_rows(data, request)
        _done(bar)
        prepared = _prepare(request, n, bar)  # 2. public inputs only
        plan = prepared.plan
        _begin(bar, "reading and encoding the table by the schema")  # 3. the values: the charged run's only input
        encoded, quality = _read(data, plan, options.delimiter, bar, n)
        if n is not None and encoded.shape[0] != n:  # the plan was calibrated at n: a table that changed is refused
            raise DataPreparationError(f"{encoded.shape[0]:,} records were read where the table's structure gave "
                                       f"{n:,}: the table changed while it was read; release from a table that no "
                                       "one writes to")
        _done(bar)
        _begin(bar, f"running {plan.spec.label}" + (f" (at most {plan.limits.max_tests} CI decisions)"
                                                    if plan.limits.max_tests else ""))
        result = plan.run(encoded, rng=generator)
        privacy = privacy_report(plan, result, requested=(request.epsilon, request.delta), auto=request.auto,
                                 noise="entropy" if rng is None else "caller", forecast_read=request.forecast_made,
                                 min_rows=options.min_rows, delimiter=options.delimiter)
        _done(bar)
        files = _write(output, plan, result, privacy, prepared, began, bar)  # 4. the files
    finally:
        if bar is not None:
            bar.close()
    return DiscoveryResult(plan.spec.name, plan.spec.label, result.cpdag, "CPDAG", result, privacy, request.schema,
                           request.auto, files, headline=prepared.headline, warnings=prepared.warnings,
                           quality=quality)


def _write(output: Output | None, plan: ReleasePlan, result: Any, privacy: dict[str, Any], prepared: _Prepared,
           began: float, bar: _Progress | None) -> dict[str, Path]:
    """Step 4: the graph, ``privacy.json`` and ``report.html`` (nothing when ``output`` is None)."""
    if output is None:
        return {}
    eps, dlt = plan.guarantee["epsilon"], plan.guarantee["delta"]
    title = f"{plan.spec.label}, ε = {eps:.3g}" + (f", δ = {dlt:.2g}" if dlt > 0 else "")
    _begin(bar, f"writing {os.fspath(output.folder)}")
    files = write_outputs(output.folder, result.cpdag, jsonable(privacy), graph_type="CPDAG",
                          algorithm=plan.spec.name, title=title, overwrite=output.overwrite, draw=output.draw,
                          forecast=prepared.forecast, forecast_note=prepared.note, timestamp=began,
                          headline=prepared.headline, warnings=list(prepared.warnings))
    _done(bar)
    return files

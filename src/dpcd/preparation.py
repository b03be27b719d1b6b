"""What a release prepares from public inputs only: the schema, the algorithm's kind and view, and its plan.

The public phase of a release is one value, a :class:`ReleasePlan` made by :func:`plan_release` from the schema,
the algorithm, the budget, the relation, the public n and the options — the view the algorithm reads, its search
caps, its calibrated parameters and their guarantee — before any value is read; :meth:`ReleasePlan.run` is its only
data step. :func:`dpcd.release.discover`, :func:`dpcd.forecast.forecast` (on synthetic data), the benchmark and,
through ``discover``, the audit's black-box case all make their runs this way.

Examples
--------
>>> from dpcd.datasets import load_bnlearn
>>> from dpcd.registry import ALGORITHMS
>>> sample = load_bnlearn("cancer", 5_000, rng=0)
>>> plan = plan_release(sample.schema(), ALGORITHMS["em_pc"], epsilon=1.0, delta=1e-6, n=5_000)
>>> plan.guarantee["epsilon"] <= 1.0, plan.limits.max_order, sorted(plan.parameters)[:2]
(True, 3, ['alpha', 'epsilon_total'])
>>> plan.run(plan.view.encode(sample.data), rng=1).cpdag.number_of_nodes()
5
"""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .discovery.algorithm import AlgorithmResult
from .discovery.pc import worst_case_tests
from .privacy.relation import Relation
from .privacy.relation import relation as as_relation
from .registry import (
    DEFAULT_MAX_ORDER,
    AlgorithmUnavailable,
    Calibration,
    PrivateAlgorithm,
    calibrate,
    choose_algorithm,
)
from .schema import Schema, SchemaError
from .validation import RngLike, as_rng, check_int

__all__ = ["RELEASE_ALPHA", "MAX_LEVELS", "ROWS_PER_CELL", "TESTS_PER_PAIR", "FALLBACK_MAX_ORDER", "MAX_WORST_CASE_ROUNDS", "Limits",
           "default_limits",
           "load_schema", "check_width", "choose_kind", "auto_algorithm", "view_for", "holder_settings", "ReleasePlan",
           "plan_release"]

RELEASE_ALPHA = 0.05
"""The one two-sided CI-test level of a release: ``discover``, ``dpcd forecast``, ``auto``'s forecast and the
benchmark pass it to every algorithm (each library function keeps its paper's default for a direct call, e.g. 0.01
for AIM-PC and MST-PC), and ``privacy.json`` records the level a release used among the algorithm's parameters."""
MAX_LEVELS = 20
"""Most categories a column may have in a categorical algorithm (a schema rule: tables grow as their product)."""
ROWS_PER_CELL = 5
"""Default conditioning-order cap of categorical algorithms: a test's table must have this many rows per cell on
average, for columns of the schema's typical (geometric-mean) number of categories."""
TESTS_PER_PAIR = 100
"""Default cap on a run's CI decisions: this many per pair of columns, p(p − 1)/2 · TESTS_PER_PAIR in all."""
FALLBACK_MAX_ORDER = 3
"""Default conditioning-order cap where n cannot be used (add/remove) or the tests have no cells (numeric)."""
MAX_WORST_CASE_ROUNDS = 200_000
"""Most worst-case rounds a per-round algorithm's default order may imply (alarm at order 2 has 840 600: its PLD
composition needs gigabytes); a larger ``max_order`` can still be asked for."""


@dataclass(frozen=True)
class Limits:
    """The caps on a run's search, from public inputs only, and why (for ``privacy.json``)."""

    max_order: int | None
    max_tests: int | None
    why: str

    def as_dict(self) -> dict[str, Any]:
        return {"max_order": self.max_order, "max_tests": self.max_tests, "why": self.why}


def default_limits(view: Schema, spec: PrivateAlgorithm, n: int | None, *, max_order: int | None = None,
                   max_tests: int | None = None) -> Limits:
    """The conditioning-order cap and test cap of a run, chosen from public inputs (p, n where public, domains).

    * ``max_order`` (when not given): for categorical algorithms the largest
      order k whose test tables still hold :data:`ROWS_PER_CELL` rows per cell
      on average, n / L^(k+2) ≥ ROWS_PER_CELL with L the geometric mean of the
      columns' numbers of categories (a test on sparser tables has no power, and
      less under noise); :data:`FALLBACK_MAX_ORDER` where n is protected or the
      view is numeric; at most :data:`dpcd.registry.DEFAULT_MAX_ORDER` for
      algorithms that pay per round (their noise grows with the number of
      rounds the order allows), lower still where that order's worst case
      exceeds :data:`MAX_WORST_CASE_ROUNDS` rounds, and at most an algorithm's own
      ``default_max_order`` (Marginal-PC splits its budget over the orders);
      never above p − 2.
    * ``max_tests`` (when not given): :data:`TESTS_PER_PAIR` decisions per pair
      of columns. An order starts only when it cannot take the run past the
      cap (:func:`dpcd.discovery.pc.pc_skeleton`), so a run's time is bounded
      whatever its noise; the cap reads only the run's earlier private
      decisions, so it costs no budget. Algorithms outside the PC engine
      (score-based) take neither cap.

    >>> from dpcd.schema import Schema
    >>> from dpcd.registry import ALGORITHMS
    >>> limits = default_limits(Schema.categorical([2] * 8), ALGORITHMS["em_pc"], 100_000)
    >>> limits.max_order, limits.max_tests
    (6, 2800)
    >>> default_limits(Schema.categorical([5] * 30), ALGORITHMS["em_pc"], 10_000).max_order
    2
    """
    p = len(view)
    if not spec.takes_max_order:
        return Limits(None, None, f"{spec.label} does not run the PC search: no order or test cap applies")
    reasons = []
    if max_order is None:
        if spec.data == "categorical" and n is not None:
            mean_levels = max(2.0, float(np.exp(np.mean(np.log(np.maximum(view.levels, 1))))))
            max_order = max(0, math.floor(math.log(max(n / ROWS_PER_CELL, 1.0)) / math.log(mean_levels) + 1e-9) - 2)
            reasons.append(f"max_order {{k}}: the largest order whose tables keep {ROWS_PER_CELL} rows per cell on "
                           f"average (n = {n}, {mean_levels:.3g} categories per column on average)")
        else:
            max_order = FALLBACK_MAX_ORDER
            reasons.append(f"max_order {{k}}: the default where {'n is protected' if n is None else 'tests have no cells'}")
        if spec.budget != "total" and max_order > DEFAULT_MAX_ORDER:
            max_order = DEFAULT_MAX_ORDER
            reasons[-1] = ("max_order {k}: the default of algorithms that pay per round (their noise grows with "
                           "the rounds an order allows)")
        if spec.budget != "total":
            while max_order > 0 and worst_case_tests(p, max_order) > MAX_WORST_CASE_ROUNDS:
                max_order -= 1
                reasons[-1] = (f"max_order {{k}}: the largest order whose worst case (every CI test it allows, "
                               f"at most {MAX_WORST_CASE_ROUNDS} rounds) the tight accountant composes in reasonable "
                               "time and memory")
        preferred = getattr(spec, "default_max_order", None)
        if preferred is not None and max_order > preferred:
            max_order = preferred
            reasons[-1] = f"max_order {{k}}: {spec.label}'s default (its budget is split over the orders)"
        if max_order > p - 2:
            max_order = max(p - 2, 0)
            reasons[-1] = f"max_order {{k}}: p − 2, the largest conditioning set {p} columns allow"
        reasons[-1] = reasons[-1].format(k=max_order)
    else:
        max_order = check_int(max_order, "max_order", minimum=0)
        reasons.append(f"max_order {max_order}: as requested")
    if max_tests is None:
        max_tests = TESTS_PER_PAIR * p * (p - 1) // 2
        reasons.append(f"max_tests {max_tests}: {TESTS_PER_PAIR} CI decisions per pair of columns; an order starts "
                       "only if it cannot exceed the cap, so the run time is bounded whatever the noise")
    else:
        max_tests = check_int(max_tests, "max_tests", minimum=1)
        reasons.append(f"max_tests {max_tests}: as requested")
    return Limits(max_order, max_tests, "; ".join(reasons) + " (public inputs only)")


def load_schema(schema: Schema | Mapping[str, Any] | str | os.PathLike[str]) -> Schema:
    """A :class:`Schema` from an object, a JSON mapping or a file path; a draft is refused."""
    if schema is None:
        raise SchemaError("a public schema is required: draft one with `dpcd schema DATA.csv > schema.json`, check "
                          "it against your data dictionary, then pass --schema schema.json")
    if isinstance(schema, Schema):
        loaded = schema
    elif isinstance(schema, Mapping):
        loaded = Schema.from_json(schema)
    elif isinstance(schema, (str, os.PathLike)):
        loaded = Schema.load(schema)
    else:
        raise TypeError(f"schema must be a Schema, a JSON mapping or a path, got {type(schema).__name__}")
    if loaded.draft:
        raise SchemaError("the schema is a draft read from the private data: check every column against public "
                          "knowledge, replace observed bounds by public limits, then delete its 'draft' entry")
    return loaded


def choose_kind(schema: Schema) -> str:
    """``"categorical"`` or ``"numeric"``: which kind of algorithm ``auto`` runs, from the schema alone.

    All columns categorical/ordinal → categorical; all numeric → numeric;
    mixed → numeric when numeric columns are at least half and every other
    column is ordinal or has two categories (so it has a numeric coding),
    otherwise categorical (numeric columns binned).
    """
    kind = schema.kind
    if kind != "mixed":
        return kind
    numeric = sum(c.type == "numeric" for c in schema.columns)
    if schema.numeric_coding_allowed() and 2 * numeric >= len(schema):
        return "numeric"
    return "categorical"


def auto_algorithm(schema: Schema, relation: str | Relation, registry: Mapping[str, PrivateAlgorithm]) -> PrivateAlgorithm:
    """``algorithm="auto"`` from the schema and the relation alone: :func:`choose_kind`, then the registry's pick.

    When no numeric algorithm serves the relation (add/remove: PrivPC*'s proof
    needs n public), a categorical one runs on the schema's binned view
    (numeric columns as ``bins`` equal-width bins of their public bounds).

    >>> from dpcd.registry import ALGORITHMS
    >>> auto_algorithm(Schema.numeric([(0, 1), (0, 1)]), "add/remove", ALGORITHMS).name
    'em_pc'
    """
    kind = choose_kind(schema)
    try:
        return choose_algorithm(kind, relation, registry)
    except AlgorithmUnavailable:
        if kind == "categorical":
            raise
        return choose_algorithm("categorical", relation, registry)


def check_width(schema: Schema) -> None:
    """Refuse a schema of fewer than two columns (a public rule, checked before any file is opened).

    >>> check_width(Schema.categorical([2]))
    Traceback (most recent call last):
    ...
    dpcd.schema.SchemaError: the schema has 1 column(s); causal discovery needs at least 2
    """
    if len(schema) < 2:
        raise SchemaError(f"the schema has {len(schema)} column(s); causal discovery needs at least 2")


def view_for(schema: Schema, spec: PrivateAlgorithm) -> Schema:
    """The schema as ``spec`` reads it: binned numeric columns for categorical algorithms, coded ordinal and
    two-category columns for numeric ones; refused when too narrow or too wide (public rules only)."""
    view = schema.as_categorical() if spec.data == "categorical" else schema.as_numeric()
    check_width(view)
    if spec.data == "categorical":
        wide = [c.name for c in view.columns if c.levels > MAX_LEVELS]
        if wide:
            raise SchemaError(f"column(s) {wide[:3]} have more than {MAX_LEVELS} categories; merge categories in "
                              "the schema (values then map by its rules) or use a numeric algorithm")
    return view


def holder_settings(spec: PrivateAlgorithm, dependence: str | None) -> dict[str, Any]:
    """The holder's public statements that ``spec``'s run takes: ``dependence`` (how the columns depend on each
    other, e.g. GCM-PC's basis) where its ``run`` has that argument and a statement was made; else nothing.

    >>> from dpcd.registry import ALGORITHMS
    >>> holder_settings(ALGORITHMS["gcm_pc"], "nonlinear"), holder_settings(ALGORITHMS["moment_pc"], "nonlinear")
    ({'dependence': 'nonlinear'}, {})
    """
    if dependence is None or "dependence" not in inspect.signature(spec.run).parameters:
        return {}
    return {"dependence": dependence}


@dataclass(frozen=True)
class ReleasePlan:
    """The public phase of one run, as a value: every field comes from public inputs, before any value is read.

    Attributes
    ----------
    schema : the declared public schema; ``view`` the schema as ``spec`` reads it (:func:`view_for`).
    spec : the algorithm.
    limits : the run's search caps and why (:func:`default_limits`).
    calibration : its parameters for the requested total (ε, δ) under the relation, their worst case and guarantee
        (:func:`dpcd.registry.calibrate`).
    alpha : the two-sided level of its CI tests; ``dependence`` the holder's public statement about the data
        (:data:`dpcd.statements.DEPENDENCE`); ``n`` the public number of rows (None where the relation protects it).

    :meth:`run` is the only step that reads data; :attr:`parameters` are exactly the keywords it passes besides the
    data, the domains and the generator, which ``privacy.json`` lists.
    """

    schema: Schema
    spec: PrivateAlgorithm
    view: Schema
    limits: Limits
    calibration: Calibration
    alpha: float
    dependence: str
    n: int | None

    @property
    def guarantee(self) -> dict[str, Any]:
        """The worst case's (ε, δ) under the release's relation: what any run of this plan satisfies."""
        return self.calibration.guarantee

    @property
    def settings(self) -> dict[str, Any]:
        """The holder's statements the run takes (:func:`holder_settings`)."""
        return holder_settings(self.spec, self.dependence)

    @property
    def parameters(self) -> dict[str, Any]:
        """Every keyword of the run but the data, the domains and the generator: the algorithm's fixed ones, the
        calibrated ones, the holder's settings, α and the test cap — all public."""
        spec = self.spec
        parameters = {**dict(spec.extra), **dict(self.calibration.kwargs), **self.settings}
        if spec.alpha_arg is not None:
            parameters[spec.alpha_arg] = self.alpha
        if spec.takes_max_order and self.limits.max_tests is not None:
            parameters["max_order"] = self.limits.max_order
            parameters["max_tests"] = self.limits.max_tests
        return parameters

    def run(self, data: Any, *, rng: RngLike) -> AlgorithmResult:
        """Run the algorithm on ``data`` encoded by :attr:`view` (integer codes or bounded numbers, or for an
        algorithm that :func:`~dpcd.registry.reads_counts` their :class:`~dpcd.discovery.counted.CountedRows`), with this plan's parameters
        and the public domains of the view; the only data step of a release.

        Returns the algorithm's :class:`~dpcd.discovery.algorithm.AlgorithmResult` (its graph is ``result.cpdag``).
        """
        result = self.spec.run(data, rng=as_rng(rng), **self.parameters, **{self.spec.domain_arg: self.view})
        if not isinstance(result, AlgorithmResult):
            raise TypeError(f"algorithm {self.spec.name!r} returned {type(result).__name__}, not an AlgorithmResult")
        return result


def plan_release(schema: Schema, spec: PrivateAlgorithm, *, epsilon: float, delta: float,
                 relation: str | Relation = "replace", n: int | None = None, alpha: float = RELEASE_ALPHA,
                 max_order: int | None = None, max_tests: int | None = None, dependence: str = "linear",
                 calibrator: Callable[..., Calibration] = calibrate) -> ReleasePlan:
    """The :class:`ReleasePlan` of ``spec`` on ``schema`` at total (``epsilon``, ``delta``) under ``relation``.

    Public inputs only, in this order: the view the algorithm reads (:func:`view_for`; a
    :class:`~dpcd.schema.SchemaError` when it cannot read the schema), the search caps (:func:`default_limits`,
    ``max_order`` and ``max_tests`` where given), the calibration on the algorithm's data-independent worst case
    (``calibrator``, :func:`dpcd.registry.calibrate` by default; a
    :class:`~dpcd.registry.CalibrationRefused` when no parameter meets the request). ``n`` is used only where the
    relation makes it public. Whether an algorithm may make a release at all is the caller's check
    (:func:`dpcd.registry.release_refusal`): the benchmark plans runs a release would refuse.
    """
    if not as_relation(relation).n_public:
        n = None  # protected: never used
    view = view_for(schema, spec)
    limits = default_limits(view, spec, n, max_order=max_order, max_tests=max_tests)
    calibration = calibrator(spec, p=len(view), n=n, epsilon=epsilon, delta=delta, relation=relation,
                             max_order=limits.max_order)
    return ReleasePlan(schema, spec, view, limits, calibration, alpha, dependence, n)

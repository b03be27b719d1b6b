"""What a release prepares from public inputs only: the schema, the algorithm's kind and view, and the run call.

Shared by :func:`dpcd.release.discover` and :func:`dpcd.plan.plan` (which runs the same calls on synthetic
data).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..registry import AlgorithmSpec, Calibration
from ..schema import Schema, SchemaError
from ..validation import RngLike, as_rng

__all__ = ["MAX_LEVELS", "load_schema", "choose_kind", "view_for", "run_algorithm"]

MAX_LEVELS = 20
"""Most categories a column may have in a categorical algorithm (a schema rule: tables grow as their product)."""


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


def view_for(schema: Schema, spec: AlgorithmSpec) -> Schema:
    """The schema as ``spec`` reads it: binned numeric columns for categorical algorithms, coded ordinal and
    two-category columns for numeric ones; refused when too narrow or too wide (public rules only)."""
    view = schema.as_categorical() if spec.data == "categorical" else schema.as_numeric()
    if len(view) < 2:
        raise SchemaError(f"the schema has {len(view)} column(s); causal discovery needs at least 2")
    if spec.data == "categorical":
        wide = [c.name for c in view.columns if c.levels > MAX_LEVELS]
        if wide:
            raise SchemaError(f"column(s) {wide[:3]} have more than {MAX_LEVELS} categories; merge categories in "
                              "the schema (values then map by its rules) or use a numeric algorithm")
    return view


def run_algorithm(spec: AlgorithmSpec, data: pd.DataFrame, view: Schema, calibration: Calibration, *,
                  alpha: float, rng: RngLike) -> Any:
    """Run ``spec`` on encoded ``data`` with its public domains from ``view`` and the calibrated parameters."""
    kwargs = {**dict(spec.extra), **calibration.kwargs, spec.domain_arg: view}
    if spec.alpha_arg is not None:
        kwargs[spec.alpha_arg] = alpha
    return spec.load()(data, rng=as_rng(rng), **kwargs)

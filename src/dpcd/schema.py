"""The public schema: each column's kind and domain, declared by the data holder, never read from the values.

A differentially private release may depend on the data only through charged
mechanisms. Everything else it uses — which columns are categorical, their
categories and order, the bounds of numeric columns, how a value outside the
domain is treated, and (under the replace-one relation) the number of records —
must be public knowledge: a data dictionary, a questionnaire, a published
codebook. :class:`Schema` holds exactly that, as an object or as a JSON file::

    {"columns": {
        "age": {"type": "numeric", "lower": 18, "upper": 100},
        "sex": {"type": "categorical", "categories": ["F", "M"]},
        "edu": {"type": "ordinal", "categories": ["primary", "secondary", "tertiary"]}},
     "bins": 4}

Column kinds
------------
``numeric``      a number with public bounds ``lower`` < ``upper``;
``categorical``  one of the listed ``categories`` (order used only as the coding order);
``ordinal``      one of the listed ``categories``, in that meaningful order.

Rules for values outside the schema (they depend only on the schema)
----------------------------------------------------------------------
* a number below ``lower`` or above ``upper`` is clamped to the bound;
* a missing or unparseable number becomes the column's ``fill`` (default: the
  midpoint of the bounds);
* a missing value or a label not among the categories becomes the column's
  ``fill`` category (default: the first listed category).

Each rule maps one record to one record, so it keeps neighbouring data sets
neighbouring under both relations, and nothing about how often it applied is
computed or published.

Views for the algorithms
------------------------
Categorical algorithms (EM-PC, Priv-PC, ...) see :meth:`Schema.as_categorical`:
a numeric column becomes an ordinal column of ``bins`` equal-width bins of
[lower, upper] (public, data-independent edges; :data:`DEFAULT_BINS` = 4).
Numeric algorithms (PrivPC*) see :meth:`Schema.as_numeric`: an ordinal or
two-category column becomes its code 0..k−1 with bounds [0, k − 1]; a
categorical column with more than two unordered categories has no numeric
coding and is refused (a schema error, not a data error).

``dpcd schema DATA.csv`` drafts a schema **from the private data**
(:func:`draft_schema`): the draft carries a ``"draft"`` entry, and
:func:`dpcd.discover` refuses it until a person has checked every column
against public knowledge and deleted that entry.

Examples
--------
>>> schema = Schema.from_json({"columns": {
...     "age": {"type": "numeric", "lower": 18, "upper": 100},
...     "smoker": {"type": "categorical", "categories": ["no", "yes"]}}})
>>> schema.names, schema.kind
(('age', 'smoker'), 'mixed')
>>> import pandas as pd
>>> frame = pd.DataFrame({"age": [30, 150, None], "smoker": ["yes", "maybe", "no"]})
>>> schema.encode(frame).to_dict("list")   # 150 clamped, missing age -> midpoint, "maybe" -> "no"
{'age': [30.0, 100.0, 59.0], 'smoker': [1, 0, 0]}
>>> schema.as_categorical().levels
(4, 2)
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from .validation import check_int

__all__ = [
    "Column",
    "Schema",
    "SchemaError",
    "DataPreparationError",
    "DEFAULT_BINS",
    "DRAFT_NOTE",
    "draft_schema",
    "public_levels",
    "public_bounds",
    "check_codes",
    "scale_to_box",
]

ColumnType = Literal["numeric", "categorical", "ordinal"]
COLUMN_TYPES: tuple[str, ...] = ("numeric", "categorical", "ordinal")
DEFAULT_BINS = 4
"""Equal-width bins of [lower, upper] that stand for a numeric column in a categorical algorithm."""
DRAFT_NOTE = (
    "DRAFT read from the private data: the categories and bounds below are the values observed in the file, "
    "so using them unchanged leaks them. Check every column against public knowledge (a data dictionary, "
    "a codebook, the questionnaire), replace observed bounds by public limits, then delete this 'draft' entry."
)
DRAFT_DISTINCT_MAX = 10
"""A drafted integer column with at most this many distinct values becomes ordinal."""


class SchemaError(ValueError):
    """A schema is malformed or does not fit the algorithm (decided by public information only)."""


class DataPreparationError(ValueError):
    """The data file does not fit the schema's layout (a missing or unknown column, a wrong row count).

    Such checks read the file's structure, not its values, and are part of
    preparing the data before a release: the holder fixes the file and runs again.
    """


def _label(value: Any) -> str | None:
    """The canonical text of a value for matching categories (None for missing)."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isnan(number):
            return None
        if math.isfinite(number) and number.is_integer():
            return str(int(number))
        return repr(number)
    text = str(value).strip()
    return text if text else None


def _numeric_categories(categories: Sequence[str]) -> pd.Index:
    """Each category's value as a number (NaN for a category that is not a number), for matching by value."""
    return pd.Index(pd.to_numeric(pd.Series(list(categories), dtype=object), errors="coerce").to_numpy(dtype=float))


def _number(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise SchemaError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise SchemaError(f"{name} must be finite, got {value!r}")
    return number


def _check_bounds(lower: float, upper: float, name: str) -> None:
    """Public bounds' rule: lower < upper and a width that float64 holds. Without the width rule,
    :func:`scale_to_box` would turn some values (not others) into NaN, so whether a run fails would depend on them."""
    if not lower < upper:
        raise SchemaError(f"{name}: lower must be below upper, got {lower} and {upper}")
    if not math.isfinite(upper - lower):
        raise SchemaError(f"{name}: upper - lower must be a finite number, got bounds {lower} and {upper}")


@dataclass(frozen=True)
class Column:
    """One column of a :class:`Schema`: name, kind and public domain.

    ``categories`` (categorical, ordinal) are stored as text; ``lower`` and
    ``upper`` (numeric) are the public bounds; ``fill`` replaces a missing or
    out-of-domain value (default: first category / midpoint of the bounds).
    ``source`` is set on the columns of a view (:meth:`Schema.as_categorical`,
    :meth:`Schema.as_numeric`) and records the declared column it encodes.
    """

    name: str
    type: ColumnType
    categories: tuple[str, ...] = ()
    lower: float | None = None
    upper: float | None = None
    fill: str | float | None = None
    source: "Column | None" = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise SchemaError(f"column names must be non-empty strings, got {self.name!r}")
        if self.type not in COLUMN_TYPES:
            raise SchemaError(f"column {self.name!r}: type must be one of {COLUMN_TYPES}, got {self.type!r}")
        if self.type == "numeric":
            if self.lower is None or self.upper is None:
                raise SchemaError(f"column {self.name!r}: a numeric column needs public 'lower' and 'upper' bounds")
            lower = _number(self.lower, f"column {self.name!r}: lower")
            upper = _number(self.upper, f"column {self.name!r}: upper")
            _check_bounds(lower, upper, f"column {self.name!r}")
            if self.categories and self.source is None:
                raise SchemaError(f"column {self.name!r}: a numeric column has bounds, not categories")
            fill = (lower + upper) / 2.0 if self.fill is None else _number(self.fill, f"column {self.name!r}: fill")
            if not lower <= fill <= upper:
                raise SchemaError(f"column {self.name!r}: fill {fill} lies outside [{lower}, {upper}]")
            object.__setattr__(self, "lower", lower)
            object.__setattr__(self, "upper", upper)
            object.__setattr__(self, "fill", fill)
            return
        if self.lower is not None or self.upper is not None:
            raise SchemaError(f"column {self.name!r}: a {self.type} column has categories, not bounds")
        if isinstance(self.categories, (str, bytes)) or not isinstance(self.categories, Sequence):
            raise SchemaError(f"column {self.name!r}: categories must be a list, got {self.categories!r}")
        labels = tuple(_label(c) for c in self.categories)
        if any(label is None for label in labels):
            raise SchemaError(f"column {self.name!r}: categories must be non-empty values, got {self.categories!r}")
        if len(labels) < 1:
            raise SchemaError(f"column {self.name!r}: list at least one category")
        if len(set(labels)) != len(labels):
            raise SchemaError(f"column {self.name!r}: categories must be distinct, got {list(labels)}")
        values = _numeric_categories(labels)
        numeric = values[~np.isnan(values)]
        if len(set(numeric.tolist())) != len(numeric):
            raise SchemaError(f"column {self.name!r}: categories {list(labels)} name the same number twice; values "
                              "are matched to categories by their number too (1.0 matches '1'), so list each once")
        fill = labels[0] if self.fill is None else _label(self.fill)
        if fill not in labels:
            raise SchemaError(f"column {self.name!r}: fill {self.fill!r} is not one of the categories {list(labels)}")
        object.__setattr__(self, "categories", labels)
        object.__setattr__(self, "fill", fill)

    # ------------------------------------------------------------------ facts

    @property
    def levels(self) -> int:
        """Number of categories (categorical and ordinal columns)."""
        if self.type == "numeric":
            raise SchemaError(f"column {self.name!r} is numeric and has no levels; use Schema.as_categorical()")
        return len(self.categories)

    @property
    def bounds(self) -> tuple[float, float]:
        """(lower, upper) of a numeric column."""
        if self.type != "numeric":
            raise SchemaError(f"column {self.name!r} is {self.type} and has no bounds; use Schema.as_numeric()")
        return float(self.lower), float(self.upper)  # type: ignore[arg-type]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.type == "numeric":
            out.update(lower=self.lower, upper=self.upper, fill=self.fill)
        else:
            out.update(categories=list(self.categories), fill=self.fill)
        return out

    @classmethod
    def from_json(cls, name: str, spec: Mapping[str, Any]) -> "Column":
        if not isinstance(spec, Mapping):
            raise SchemaError(f"column {name!r}: expected an object with 'type', got {spec!r}")
        unknown = set(spec) - {"type", "categories", "lower", "upper", "fill", "description"}
        if unknown:
            raise SchemaError(f"column {name!r}: unknown entries {sorted(unknown)} (allowed: type, categories, "
                              "lower, upper, fill, description)")
        if "type" not in spec:
            raise SchemaError(f"column {name!r}: 'type' is missing (one of {COLUMN_TYPES})")
        return cls(name=str(name), type=spec["type"], categories=tuple(spec.get("categories", ())),
                   lower=spec.get("lower"), upper=spec.get("upper"), fill=spec.get("fill"))

    # ------------------------------------------------------------------ encoding

    def _match(self, values: pd.Series) -> np.ndarray:
        """Category codes 0..k−1 of ``values``, −1 where a value is missing or matches no category.

        A value matches a category when their texts are equal (surrounding
        spaces ignored), or when both read as numbers of equal value, so that
        ``1.0`` in a file matches the category ``"1"`` and ``2`` matches
        ``"2.0"``. Vectorised: one pass per rule over the column.
        """
        categories = pd.Index(self.categories, dtype=object)
        kind = pd.api.types.infer_dtype(values, skipna=True)
        if kind in ("string", "integer", "floating", "mixed-integer-float", "boolean", "empty"):
            # one label per distinct value (a column has few): the same labels, one Python call per value, not cell
            index, distinct = pd.factorize(values, use_na_sentinel=True)
            labels = np.array([v.strip() or None if isinstance(v, str) else _label(v) for v in distinct] + [None],
                              dtype=object)
            text = pd.Series(labels[index], index=values.index, dtype=object)  # index −1: the trailing None
        elif values.dtype == object or isinstance(values.dtype, pd.StringDtype):
            text = values.astype(object).where(values.notna(), None)
            text = text.map(lambda v: _label(v) if not isinstance(v, str) else (v.strip() or None))
        else:
            text = pd.Series([_label(v) for v in values.tolist()], index=values.index, dtype=object)
        codes = categories.get_indexer(text.to_numpy(dtype=object))
        unmatched = codes < 0
        values = _numeric_categories(self.categories)
        numeric = ~np.isnan(values.to_numpy())
        if unmatched.any() and numeric.any():
            by_value = pd.Index(values.to_numpy()[numeric])
            numbers_ = pd.to_numeric(pd.Series(text.to_numpy(dtype=object)[unmatched]), errors="coerce").to_numpy()
            found = by_value.get_indexer(numbers_)
            codes[unmatched] = np.where(found < 0, -1, np.flatnonzero(numeric)[np.maximum(found, 0)])
        return codes

    def _codes(self, values: pd.Series) -> np.ndarray:
        """Category codes 0..k−1 of ``values``; missing and unknown labels get the fill's code."""
        codes = self._match(values)
        fill = self.categories.index(self.fill)  # type: ignore[arg-type]
        return np.where(codes < 0, fill, codes).astype(np.int64)

    def _numbers(self, values: pd.Series) -> np.ndarray:
        """Numbers clamped to [lower, upper]; missing and unparseable values become ``fill``."""
        parsed = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
        parsed = np.where(np.isnan(parsed), float(self.fill), parsed)  # type: ignore[arg-type]
        return np.clip(parsed, self.lower, self.upper)

    def encode(self, values: pd.Series) -> np.ndarray:
        """The column's values as this column's codes (int64) or numbers (float64), by the schema rules only."""
        source = self.source
        if source is None:
            return self._numbers(values) if self.type == "numeric" else self._codes(values)
        if source.type == "numeric":  # binned numeric column (categorical view)
            numbers_ = source._numbers(values)
            lower, upper = source.bounds
            k = len(self.categories)
            return np.clip(np.floor((numbers_ - lower) / (upper - lower) * k), 0, k - 1).astype(np.int64)
        return source._codes(values).astype(np.float64)  # coded categories (numeric view)


def _bin_labels(lower: float, upper: float, bins: int) -> tuple[str, ...]:
    """``[a, b)`` per equal-width bin, the last ``[a, b]``: edges to 6 significant digits, or, where those would
    give two edges the same text, each edge's shortest exact text (``repr``); edges that float64 cannot tell apart
    keep equal labels, which the categories' own rule then refuses. A function of the public bounds only.

    >>> _bin_labels(0.0, 10.0, 4)
    ('[0, 2.5)', '[2.5, 5)', '[5, 7.5)', '[7.5, 10]')
    >>> _bin_labels(1e6, 1e6 + 1, 2)
    ('[1000000.0, 1000000.5)', '[1000000.5, 1000001.0]')
    """
    edges = np.linspace(lower, upper, bins + 1)
    text = [f"{edge:.6g}" for edge in edges]
    if len(set(text)) < len(text):
        text = [repr(float(edge)) for edge in edges]
    labels = [f"[{text[i]}, {text[i + 1]})" for i in range(bins)]
    labels[-1] = labels[-1][:-1] + "]"
    return tuple(labels)


@dataclass(frozen=True)
class Schema:
    """The public description of a table: its columns in order, and optionally n.

    Parameters
    ----------
    columns : :class:`Column` objects (order = column order of the released graph's nodes).
    n : the public number of records, if declared (needed only under the
        replace-one relation, where n is public; checked against the file).
    bins : equal-width bins per numeric column in categorical algorithms.
    draft : non-empty for a draft read from the private data (refused by ``discover``).

    Public assumptions of a release built on a schema: the column names and
    order, each column's kind and domain (categories with their order, or
    bounds), the fill rules, ``bins``, and n where the relation makes it public.

    >>> schema = Schema((Column("smoker", "categorical", ("no", "yes")),
    ...                  Column("age", "numeric", lower=18, upper=100)))
    >>> schema.kind, schema.as_categorical().levels, schema.as_numeric().bounds
    ('mixed', (2, 4), ((0.0, 1.0), (18.0, 100.0)))
    """

    columns: tuple[Column, ...]
    n: int | None = None
    bins: int = DEFAULT_BINS
    draft: str | None = None

    def __post_init__(self) -> None:
        columns = tuple(self.columns)
        if not columns:
            raise SchemaError("a schema needs at least one column")
        if not all(isinstance(c, Column) for c in columns):
            raise SchemaError("columns must be Column objects")
        names = [c.name for c in columns]
        duplicated = sorted({v for v in names if names.count(v) > 1})
        if duplicated:
            raise SchemaError(f"column names must be unique, got repeated {duplicated}")
        object.__setattr__(self, "columns", columns)
        if self.n is not None:
            object.__setattr__(self, "n", check_int(self.n, "schema n", minimum=1))
        object.__setattr__(self, "bins", check_int(self.bins, "schema bins", minimum=2))
        if self.draft is not None and not isinstance(self.draft, str):
            raise SchemaError("draft must be a text (the draft note) or absent")

    # ------------------------------------------------------------------ construction

    @classmethod
    def categorical(cls, levels: Sequence[int] | Mapping[str, int], names: Sequence[str] | None = None,
                    *, ordinal: bool = True, n: int | None = None) -> "Schema":
        """A schema of integer-coded columns with ``levels[j]`` categories "0".."k−1" each.

        >>> Schema.categorical([2, 3], names=["a", "b"]).levels
        (2, 3)
        """
        if isinstance(levels, Mapping):
            names, levels = list(levels), list(levels.values())
        levels = [check_int(k, "levels", minimum=1) for k in levels]
        names = [f"X{j + 1}" for j in range(len(levels))] if names is None else [str(v) for v in names]
        if len(names) != len(levels):
            raise SchemaError(f"names has {len(names)} entries but levels has {len(levels)}")
        kind = "ordinal" if ordinal else "categorical"
        return cls(tuple(Column(v, kind, tuple(str(c) for c in range(k))) for v, k in zip(names, levels)), n=n)

    @classmethod
    def numeric(cls, bounds: Sequence[tuple[float, float]] | Mapping[str, tuple[float, float]],
                names: Sequence[str] | None = None, *, n: int | None = None) -> "Schema":
        """A schema of numeric columns with public ``bounds[j] = (lower, upper)``.

        >>> Schema.numeric([(-3, 3), (0, 1)]).bounds
        ((-3.0, 3.0), (0.0, 1.0))
        """
        if isinstance(bounds, Mapping):
            names, bounds = list(bounds), list(bounds.values())
        pairs = []
        for j, pair in enumerate(bounds):
            try:
                lower, upper = pair
            except (TypeError, ValueError):
                raise SchemaError(f"bounds[{j}] must be a pair (lower, upper), got {pair!r}") from None
            pairs.append((lower, upper))
        names = [f"X{j + 1}" for j in range(len(pairs))] if names is None else [str(v) for v in names]
        if len(names) != len(pairs):
            raise SchemaError(f"names has {len(names)} entries but bounds has {len(pairs)}")
        return cls(tuple(Column(v, "numeric", lower=lo, upper=hi) for v, (lo, hi) in zip(names, pairs)), n=n)

    @classmethod
    def from_json(cls, spec: Mapping[str, Any] | str) -> "Schema":
        """A schema from its JSON object (or JSON text)."""
        if isinstance(spec, str):
            try:
                spec = json.loads(spec)
            except json.JSONDecodeError as error:
                raise SchemaError(f"schema is not valid JSON: {error}") from None
        if not isinstance(spec, Mapping):
            raise SchemaError("a schema is a JSON object with a 'columns' entry")
        unknown = set(spec) - {"columns", "n", "bins", "draft", "description"}
        if unknown:
            raise SchemaError(f"unknown schema entries {sorted(unknown)} (allowed: columns, n, bins, draft, "
                              "description)")
        columns = spec.get("columns")
        if not isinstance(columns, Mapping) or not columns:
            raise SchemaError("a schema needs a non-empty 'columns' object: {\"columns\": {\"name\": {...}}}")
        return cls(tuple(Column.from_json(name, c) for name, c in columns.items()), n=spec.get("n"),
                   bins=spec.get("bins", DEFAULT_BINS), draft=spec.get("draft"))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "Schema":
        """Read a schema JSON file."""
        file = Path(path)
        if not file.is_file():
            raise FileNotFoundError(f"schema file {os.fspath(path)!r} does not exist")
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise SchemaError(f"schema file {os.fspath(path)!r} is not UTF-8 text") from None
        return cls.from_json(text)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.draft:
            out["draft"] = self.draft
        out["columns"] = {c.name: c.to_json() for c in self.columns}
        if self.n is not None:
            out["n"] = self.n
        out["bins"] = self.bins
        return out

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"

    def save(self, path: str | os.PathLike[str]) -> Path:
        file = Path(path)
        file.write_text(self.dumps(), encoding="utf-8")
        return file

    @property
    def sha256(self) -> str:
        """Hash of the canonical JSON (what ``privacy.json`` records)."""
        canonical = json.dumps(self.to_json(), sort_keys=False, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    # ------------------------------------------------------------------ views

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def __len__(self) -> int:
        return len(self.columns)

    def __getitem__(self, name: str) -> Column:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(f"column {name!r} is not in the schema (columns: {list(self.names)[:8]})")

    @property
    def kind(self) -> Literal["categorical", "numeric", "mixed"]:
        """"categorical" (every column categorical or ordinal), "numeric" (every column numeric) or "mixed"."""
        kinds = {"numeric" if c.type == "numeric" else "categorical" for c in self.columns}
        return kinds.pop() if len(kinds) == 1 else "mixed"  # type: ignore[return-value]

    def numeric_coding_allowed(self) -> bool:
        """True when every non-numeric column is ordinal or has at most two categories."""
        return all(c.type != "categorical" or c.levels <= 2 for c in self.columns)

    def as_categorical(self) -> "Schema":
        """Every column categorical: numeric columns become ``bins`` ordinal equal-width bins of their bounds."""
        columns = []
        for c in self.columns:
            if c.type == "numeric":
                lower, upper = c.bounds
                columns.append(Column(c.name, "ordinal", _bin_labels(lower, upper, self.bins), source=c))
            else:
                columns.append(c)
        return replace(self, columns=tuple(columns), draft=self.draft)

    def as_numeric(self) -> "Schema":
        """Every column numeric: ordinal and two-category columns become codes 0..k−1 with bounds [0, k − 1]."""
        columns = []
        for c in self.columns:
            if c.type == "numeric":
                columns.append(c)
                continue
            if c.type == "categorical" and c.levels > 2:
                raise SchemaError(
                    f"column {c.name!r} is categorical with {c.levels} unordered categories and has no numeric "
                    "coding; declare it 'ordinal' if its categories are ordered, or use a categorical algorithm"
                )
            k = c.levels
            columns.append(Column(c.name, "numeric", lower=0.0, upper=float(max(k - 1, 1)),
                                  fill=float(c.categories.index(c.fill)), source=c))  # type: ignore[arg-type]
        return replace(self, columns=tuple(columns))

    @property
    def levels(self) -> tuple[int, ...]:
        """Number of categories per column (every column must be categorical or ordinal)."""
        return tuple(c.levels for c in self.columns)

    @property
    def bounds(self) -> tuple[tuple[float, float], ...]:
        """(lower, upper) per column (every column must be numeric)."""
        return tuple(c.bounds for c in self.columns)

    def describe(self) -> list[str]:
        """One line per column, for privacy.json's list of public assumptions."""
        lines = []
        for c in self.columns:
            if c.type == "numeric":
                lines.append(f"{c.name}: numeric in [{c.lower:g}, {c.upper:g}], missing -> {c.fill:g}")
            else:
                lines.append(f"{c.name}: {c.type} {list(c.categories)}, other or missing -> {c.fill!r}")
        return lines

    # ------------------------------------------------------------------ data

    def encode(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The table as the schema sees it: one column per schema column, in schema order.

        Categorical and ordinal columns become int64 codes 0..k−1, numeric
        columns float64 clamped to their bounds, by the rules in the module
        docstring. Raises :class:`DataPreparationError` when a schema column is
        missing from ``frame`` or ``frame`` has a column the schema does not
        declare (structure, not values: fix the file before the release).
        """
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"data must be a pandas.DataFrame, got {type(frame).__name__}")
        present = [str(c) for c in frame.columns]
        self.check_header(present)
        frame = frame.set_axis(present, axis=1)
        data = {c.name: c.encode(frame[c.name]) for c in self.columns}
        return pd.DataFrame(data, index=pd.RangeIndex(len(frame)), columns=list(self.names))


    def check_header(self, names: Sequence[str]) -> None:
        """Refuse a table whose column ``names`` (its header) are not exactly the schema's, in any order: the
        file's structure, which the holder fixes before the release (:class:`DataPreparationError`).

        >>> Schema.categorical([2, 2], names=["a", "b"]).check_header(["b", "c"])
        Traceback (most recent call last):
        ...
        dpcd.schema.DataPreparationError: the data has no column(s) ['a'] declared in the schema
        """
        present = [str(c) for c in names]
        missing = [v for v in self.names if v not in present]
        if missing:
            raise DataPreparationError(f"the data has no column(s) {missing[:5]} declared in the schema")
        unknown = [v for v in present if v not in self.names]
        if unknown:
            raise DataPreparationError(f"the data has column(s) {unknown[:5]} that the schema does not declare; "
                                       "add them to the schema or drop them from the file")

    def check(self, frame: pd.DataFrame) -> pd.DataFrame:
        """How the schema's rules would treat ``frame``, column by column: **for the data holder only**.

        One row per schema column: the cells that are missing, that are not in
        the domain (a label that is no category, a text that is no number) —
        both fall to the column's ``fill`` — and the numbers clamped to the lower
        or upper bound. It reads the private values without noise, so it is a
        local check before a release, never part of one; ``dpcd schema DATA.csv
        --check SCHEMA.json`` prints it.

        >>> schema = Schema.from_json({"columns": {"sex": {"type": "ordinal", "categories": ["1", "2"]},
        ...                                        "age": {"type": "numeric", "lower": 18, "upper": 90}}})
        >>> table = pd.DataFrame({"sex": ["1.0", "2.0", "3", None], "age": ["20", "95", "x", "40"]})
        >>> schema.check(table)[["column", "missing", "not_in_domain", "to_fill", "clamped"]].to_dict("records")
        [{'column': 'sex', 'missing': 1, 'not_in_domain': 1, 'to_fill': 2, 'clamped': 0}, {'column': 'age', 'missing': 0, 'not_in_domain': 1, 'to_fill': 1, 'clamped': 1}]
        """
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"frame must be a pandas.DataFrame, got {type(frame).__name__}")
        present = {str(c): c for c in frame.columns}
        rows = []
        for column in self.columns:
            if column.name not in present:
                rows.append({"column": column.name, "type": column.type, "present": False})
                continue
            values = frame[present[column.name]]
            text = values.astype(object).where(values.notna(), None)
            missing = text.map(lambda v: v is None or (isinstance(v, str) and not v.strip())).to_numpy(dtype=bool)
            low = high = np.zeros(len(values), dtype=bool)
            if column.type == "numeric":
                parsed = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
                outside = np.isnan(parsed) & ~missing
                low, high = parsed < column.lower, parsed > column.upper
            else:
                outside = (column._match(values) < 0) & ~missing
            rows.append({"column": column.name, "type": column.type, "present": True, "missing": int(missing.sum()),
                         "not_in_domain": int(outside.sum()), "to_fill": int(missing.sum() + outside.sum()),
                         "clamped_low": int(low.sum()), "clamped_high": int(high.sum()),
                         "clamped": int(low.sum() + high.sum())})
        columns = ["column", "type", "present", "missing", "not_in_domain", "to_fill", "clamped_low", "clamped_high",
                   "clamped"]
        table = pd.DataFrame.from_records(rows, columns=columns)
        counts = [c for c in columns[3:]]
        table[counts] = table[counts].fillna(0).astype(int)
        return table


# =========================================================================== drafts


def draft_schema(frame: pd.DataFrame, *, bins: int = DEFAULT_BINS) -> Schema:
    """A **draft** schema read from the values of ``frame`` (the private data).

    Non-numeric columns become categorical with their observed labels (sorted);
    integer-valued columns with at most :data:`DRAFT_DISTINCT_MAX` distinct values
    become ordinal, each category written as the value appears in the data
    (``2.0`` stays ``"2.0"``; values are matched to categories by number as
    well, so the draft read back keeps every value); other numeric columns
    numeric with the observed minimum and maximum as bounds. The result carries :data:`DRAFT_NOTE` in ``draft``:
    every entry must be checked against public knowledge before a release, and
    ``discover`` refuses a draft.

    >>> import pandas as pd
    >>> draft = draft_schema(pd.DataFrame({"a": [1, 2, 2], "b": ["x", "y", "x"], "c": [0.5, 2.5, 1.0]}))
    >>> [(c.name, c.type) for c in draft.columns], draft.draft is not None
    ([('a', 'ordinal'), ('b', 'categorical'), ('c', 'numeric')], True)
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas.DataFrame, got {type(frame).__name__}")
    columns = []
    for name in frame.columns:
        values = frame[name]
        numbers_ = pd.to_numeric(values, errors="coerce")
        observed = values.dropna()
        numeric_share = float(numbers_.notna().sum()) / max(int(observed.size), 1)
        if observed.size and numeric_share == 1.0 and not pd.api.types.is_bool_dtype(values):
            finite = numbers_[np.isfinite(numbers_)]
            distinct = np.unique(finite.to_numpy(dtype=float))
            if distinct.size and np.all(distinct == np.round(distinct)) and distinct.size <= DRAFT_DISTINCT_MAX:
                columns.append(Column(str(name), "ordinal", _labels_as_written(observed, numbers_, distinct)))
                continue
            if distinct.size >= 2:
                columns.append(Column(str(name), "numeric", lower=float(distinct[0]), upper=float(distinct[-1])))
                continue
        labels = sorted({lab for lab in (_label(v) for v in observed.tolist()) if lab is not None})
        columns.append(Column(str(name), "categorical", tuple(labels) if labels else ("missing",)))
    return Schema(tuple(columns), bins=bins, draft=DRAFT_NOTE)


def _labels_as_written(observed: pd.Series, numbers_: pd.Series, distinct: np.ndarray) -> tuple[str, ...]:
    """One label per distinct number, written as it appears in the data (its most frequent spelling), by value."""
    labels = []
    for value in distinct:
        spellings = [_label(v) if not isinstance(v, str) else v.strip() for v in observed[numbers_.loc[observed.index]
                                                                                          == value].tolist()]
        counts = pd.Series(spellings, dtype=object).value_counts(sort=False)
        labels.append(str(counts.index[int(np.argmax(counts.to_numpy()))]))
    return tuple(labels)


# =========================================================================== for the algorithms


def _per_column(value: Any, p: int, names: Sequence[str] | None, what: str, from_schema) -> list:
    """One public entry per column from a :class:`Schema` (via ``from_schema``), a mapping or a sequence."""
    if isinstance(value, Schema):
        if names is not None and tuple(str(v) for v in names) != value.names:
            raise SchemaError(f"the schema's columns {list(value.names)[:6]} do not match the data's "
                              f"{list(names)[:6]}")
        entries = list(from_schema(value))
    elif isinstance(value, Mapping):
        if names is None:
            raise TypeError(f"{what} given as a mapping needs named columns (a DataFrame or node_names)")
        try:
            entries = [value[v] for v in names]
        except KeyError as error:
            raise ValueError(f"{what} has no entry for column {error.args[0]!r}") from None
    elif isinstance(value, (str, bytes)):
        raise TypeError(f"{what} must be a sequence, a mapping or a Schema, got {value!r}")
    else:
        entries = list(value)
    if len(entries) != p:
        raise ValueError(f"{what} has {len(entries)} entries but the data has {p} columns")
    return entries


def public_levels(levels: Any, p: int, names: Sequence[str] | None = None) -> np.ndarray:
    """Domain sizes of ``p`` categorical columns from public information, as int64.

    ``levels`` may be a :class:`Schema` (all columns categorical or ordinal;
    names must match), a mapping column → size, or a sequence of p sizes.
    Private algorithms take their domains from here, never from the codes.
    """
    if levels is None:
        raise TypeError("levels: pass the public number of categories of each column (a sequence of integers, "
                        "a mapping column -> size, or a Schema); private algorithms do not read domains from "
                        "the data")
    if isinstance(levels, np.ndarray):
        levels = levels.ravel().tolist()
    values = _per_column(levels, p, names, "levels", lambda schema: schema.levels)
    return np.asarray([check_int(int(v) if isinstance(v, np.integer) else v, "levels", minimum=1)
                       for v in values], dtype=np.int64)


def public_bounds(bounds: Any, p: int, names: Sequence[str] | None = None) -> np.ndarray:
    """Public (lower, upper) bounds of ``p`` numeric columns as a (p, 2) float array.

    ``bounds`` may be a :class:`Schema` (all columns numeric), a mapping
    column → (lower, upper), or a sequence of p pairs.
    """
    if bounds is None:
        raise TypeError("bounds: pass public (lower, upper) bounds per column (a sequence of pairs, a mapping "
                        "column -> pair, or a Schema); private algorithms do not read bounds from the data")
    pairs = _per_column(bounds, p, names, "bounds", lambda schema: schema.bounds)
    out = np.empty((p, 2))
    for j, pair in enumerate(pairs):
        try:
            lower, upper = pair
        except (TypeError, ValueError):
            raise ValueError(f"bounds[{j}] must be a pair (lower, upper), got {pair!r}") from None
        lower, upper = _number(lower, f"bounds[{j}] lower"), _number(upper, f"bounds[{j}] upper")
        _check_bounds(lower, upper, f"bounds[{j}]")
        out[j] = lower, upper
    return out


def check_codes(codes: np.ndarray, levels: np.ndarray) -> None:
    """Precondition of the categorical algorithms: every code lies in 0..levels[j] − 1.

    A violation is a data-preparation error (encode the table with
    :meth:`Schema.encode`, which maps values outside the domain by the schema's
    rules); ``discover`` always encodes first and never reaches it.
    """
    codes = np.asarray(codes)
    if codes.size == 0:
        return
    bad = np.flatnonzero((codes.min(axis=0) < 0) | (codes.max(axis=0) >= levels))
    if bad.size:
        raise ValueError(
            f"data preparation: column(s) {bad.tolist()[:5]} hold codes outside 0..levels-1 of their public "
            "domain; encode the data with Schema.encode (values outside the domain follow the schema's rules)"
        )


def scale_to_box(X: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Columns mapped affinely from their public [lower, upper] onto [−1, 1], values outside clamped.

    >>> scale_to_box(np.array([[0.0, 5.0], [10.0, 20.0]]), np.array([[0.0, 10.0], [0.0, 10.0]]))
    array([[-1.,  0.],
           [ 1.,  1.]])
    """
    bounds = np.asarray(bounds, dtype=np.float64)
    lower, upper = bounds[:, 0], bounds[:, 1]
    # (x - lower) / width first: 2·(x - lower) overflows once x - lower passes half the float range, where the
    # quotient (≤ 1 inside the bounds) cannot; doubling is exact, so the values are those of 2·(x - lower) / width
    return np.clip((np.asarray(X, dtype=np.float64) - lower) / (upper - lower) * 2.0 - 1.0, -1.0, 1.0)

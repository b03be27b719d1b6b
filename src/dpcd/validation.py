"""Argument validation shared by every public function.

Each check raises a ``ValueError`` or ``TypeError`` whose message names the
argument, the value received and what is allowed, so a user can fix the call
without reading the source.
"""

from __future__ import annotations

import math
import numbers
from typing import Union

import numpy as np
import pandas as pd

RngLike = Union[np.random.Generator, int, np.integer]
"""A generator or an integer seed; ``None`` is not one (only :func:`dpcd.discover` takes it, for fresh entropy)."""


def as_rng(rng: RngLike, name: str = "rng") -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from a Generator or an integer seed.

    ``None`` is refused: every random function of dpcd takes its randomness
    explicitly so that the same seed always gives the same result.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"{name} must be a numpy.random.Generator or an integer seed, got a bool")
    if isinstance(rng, (int, np.integer)):
        if rng < 0:
            raise ValueError(f"{name} must be a non-negative integer seed, got {rng}")
        return np.random.default_rng(int(rng))
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    raise TypeError(
        f"{name} must be a numpy.random.Generator or an integer seed, got {type(rng).__name__}; "
        "pass e.g. rng=np.random.default_rng(0)"
    )


def _real(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must be a number, got NaN")
    return value


def check_epsilon(epsilon, name: str = "epsilon", allow_inf: bool = False) -> float:
    """Validate a privacy parameter ε > 0 (finite unless ``allow_inf``)."""
    epsilon = _real(epsilon, name)
    if epsilon <= 0:
        raise ValueError(f"{name} must be > 0, got {epsilon}")
    if math.isinf(epsilon) and not allow_inf:
        raise ValueError(f"{name} must be finite, got {epsilon}")
    return epsilon


def check_delta(delta, name: str = "delta", allow_zero: bool = False) -> float:
    """Validate δ ∈ (0, 1) (or [0, 1) with ``allow_zero``)."""
    delta = _real(delta, name)
    low_ok = delta >= 0 if allow_zero else delta > 0
    if not (low_ok and delta < 1):
        interval = "[0, 1)" if allow_zero else "(0, 1)"
        raise ValueError(f"{name} must lie in {interval}, got {delta}")
    return delta


def check_probability(value, name: str, *, open_low: bool = True, open_high: bool = True) -> float:
    """Validate a number in (0, 1) (endpoints allowed when the matching flag is False)."""
    value = _real(value, name)
    low_ok = value > 0 if open_low else value >= 0
    high_ok = value < 1 if open_high else value <= 1
    if not (low_ok and high_ok):
        interval = ("(" if open_low else "[") + "0, 1" + (")" if open_high else "]")
        raise ValueError(f"{name} must lie in {interval}, got {value}")
    return value


def check_positive(value, name: str, *, allow_zero: bool = False) -> float:
    """Validate a finite positive real number."""
    value = _real(value, name)
    if math.isinf(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value}")
    return value


def check_int(value, name: str, *, minimum: int | None = None) -> int:
    """Validate an integer (optionally ≥ ``minimum``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def as_data_matrix(data, name: str = "data", *, kind: str = "numeric", min_rows: int = 3) -> np.ndarray:
    """Return ``data`` as a 2-D numpy array after checking it.

    kind='numeric'  -> float64, no NaN/inf.
    kind='discrete' -> int64 codes 0..k-1 per column (values must already be
                       integers; use ``encode_categorical`` for labels).
    """
    if isinstance(data, pd.DataFrame):
        frame = data
        nonnumeric = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
        if nonnumeric:
            raise TypeError(
                f"{name} has non-numeric column(s) {nonnumeric[:5]}; encode categories as integers first "
                "(dpcd.datasets.encode_categorical)"
            )
        array = frame.to_numpy()
    else:
        array = np.asarray(data)
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows x variables), got shape {array.shape}")
    if array.shape[0] < min_rows:
        raise ValueError(f"{name} has {array.shape[0]} rows; at least {min_rows} are needed")
    if array.shape[1] < 2:
        raise ValueError(f"{name} has {array.shape[1]} column(s); at least 2 variables are needed")
    if not np.issubdtype(array.dtype, np.number) and array.dtype != bool:
        raise TypeError(f"{name} must be numeric, got dtype {array.dtype}")
    if kind == "numeric":
        array = array.astype(np.float64, copy=False)
        if not np.all(np.isfinite(array)):
            bad = np.where(~np.isfinite(array).all(axis=0))[0]
            raise ValueError(f"{name} contains NaN or infinite values in column(s) {bad.tolist()[:5]}")
        return array
    if kind == "discrete":
        if np.issubdtype(array.dtype, np.floating):
            if not np.all(np.isfinite(array)):
                bad = np.where(~np.isfinite(array).all(axis=0))[0]
                raise ValueError(f"{name} contains NaN or infinite values in column(s) {bad.tolist()[:5]}")
            if not np.all(array == np.round(array)):
                bad = np.where((array != np.round(array)).any(axis=0))[0]
                raise TypeError(
                    f"{name} must hold integer category codes for a discrete test; column(s) "
                    f"{bad.tolist()[:5]} are not integer-valued (use a numeric test such as Fisher-z, "
                    "or discretise first)"
                )
        array = array.astype(np.int64, copy=False)
        if array.min(initial=0) < 0:
            raise ValueError(f"{name} must hold non-negative integer codes 0..k-1")
        return array
    raise ValueError(f"kind must be 'numeric' or 'discrete', got {kind!r}")


def as_code_matrix(data, name: str = "data", *, min_rows: int = 3) -> np.ndarray:
    """Integer category codes as a Fortran-ordered array of the smallest unsigned type that holds them.

    The checks of ``as_data_matrix(kind="discrete")``, made column by column
    so that no int64 copy of the whole table is held (a million rows of 37
    columns take 37 MB as uint8 codes, 296 MB as int64).

    >>> as_code_matrix(pd.DataFrame({"a": [0, 1, 2], "b": [1, 1, 0]})).dtype
    dtype('uint8')
    """
    if isinstance(data, pd.DataFrame):
        columns = [data.iloc[:, j] for j in range(data.shape[1])]
        shape = data.shape
    else:
        array = np.asarray(data)
        if array.ndim != 2:
            raise ValueError(f"{name} must be 2-D (rows x variables), got shape {array.shape}")
        columns = [array[:, j] for j in range(array.shape[1])]
        shape = array.shape
    if shape[0] < min_rows:
        raise ValueError(f"{name} has {shape[0]} rows; at least {min_rows} are needed")
    if shape[1] < 2:
        raise ValueError(f"{name} has {shape[1]} column(s); at least 2 variables are needed")
    top = 0
    values = []
    for j, column in enumerate(columns):
        if isinstance(column, pd.Series) and not pd.api.types.is_numeric_dtype(column):
            raise TypeError(f"{name} has non-numeric column(s) {[data.columns[j]]}; encode categories as integers "
                            "first (dpcd.datasets.encode_categorical)")
        values_j = _integer_codes(column.to_numpy() if isinstance(column, pd.Series) else column, name, j)
        top = max(top, int(values_j.max(initial=0)))
        values.append(values_j)
    out = np.empty(shape, dtype=code_dtype(top), order="F")
    for j, values_j in enumerate(values):
        out[:, j] = values_j
    return out


def code_dtype(top: int) -> type:
    """The smallest unsigned integer type holding codes 0..``top``.

    >>> code_dtype(255), code_dtype(256)
    (<class 'numpy.uint8'>, <class 'numpy.uint16'>)
    """
    return np.uint8 if top < 1 << 8 else np.uint16 if top < 1 << 16 else np.uint32 if top < 1 << 32 else np.int64


def _integer_codes(values: np.ndarray, name: str, j: int) -> np.ndarray:
    """One column's values checked as non-negative integer codes (no copy when they already are)."""
    if values.dtype == bool:
        return values.view(np.uint8)
    if not np.issubdtype(values.dtype, np.number):
        raise TypeError(f"{name} must be numeric, got dtype {values.dtype} in column {j}")
    if np.issubdtype(values.dtype, np.floating):
        if not np.all(np.isfinite(values)):
            raise ValueError(f"{name} contains NaN or infinite values in column(s) [{j}]")
        if not np.all(values == np.round(values)):
            raise TypeError(f"{name} must hold integer category codes for a discrete test; column(s) [{j}] are not "
                            "integer-valued (use a numeric test such as Fisher-z, or discretise first)")
    if values.size and values.min() < 0:
        raise ValueError(f"{name} must hold non-negative integer codes 0..k-1")
    return values

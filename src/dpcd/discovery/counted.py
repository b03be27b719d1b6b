"""A table of category codes held as its distinct rows with their counts: what an algorithm that reads the data only
through contingency tables needs, in memory bounded by the public domain rather than by n.

Every count of a contingency table is a sum over rows, so the tables of the distinct rows weighted by their counts
are the tables of the data (:func:`marginal_table`): Marginal-PC, MST-PC and AIM-PC read their data only through
such tables, so each gives the same run — the same noise, the same graph, the same ledger — from a
:class:`CountedRows` as from every row (tested), and a release of theirs holds only the distinct encoded rows
(:mod:`dpcd.release.tables`, :mod:`dpcd.release.cluster`). This is a change of representation, not a mechanism: it
reads nothing the tables do not, and its rows are in sorted order, so it depends on the multiset of records only,
never on their order or on how a reader cut them.

>>> counted = CountedRows.from_codes(np.array([[1, 0], [0, 1], [1, 0]]), ["a", "b"])
>>> counted.rows.tolist(), counted.counts.tolist(), counted.shape
([[0, 1], [1, 0]], [1, 2], (3, 2))
>>> marginal_table(counted, [2, 2], (0,)).tolist()
[1.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..ci.discrete import marginal_table as _row_table
from ..validation import as_data_matrix

__all__ = ["CountedRows", "as_codes", "code_rows", "named", "marginal_table"]


@dataclass(frozen=True, eq=False)
class CountedRows:
    """Distinct rows of integer codes (``rows``: distinct rows × variables, integers, in sorted order) and how often
    each occurs (``counts``: int64, each ≥ 1), with the variables' names (``columns``). ``shape`` is that of the table
    it stands for, (n, p) with n = Σ counts, so code that reads n and p from ``codes.shape`` and its tables from
    :func:`marginal_table` reads the same values from either form."""

    rows: np.ndarray
    counts: np.ndarray
    columns: tuple[str, ...]

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.counts.sum()), int(self.rows.shape[1])

    @classmethod
    def from_codes(cls, codes: Any, columns: Sequence[str], counts: np.ndarray | None = None,
                   levels: Sequence[int] | None = None) -> CountedRows:
        """The distinct rows of ``codes`` (each weighted by ``counts``, default 1) with their summed counts, sorted;
        held in the narrowest integer type the public ``levels`` allow (without them: as given, if integers)."""
        codes = np.asarray(codes).reshape(-1, len(columns))
        if levels is not None:
            codes = codes.astype(np.min_scalar_type(-max(int(k) for k in levels)), copy=False)
        elif not np.issubdtype(codes.dtype, np.integer):
            codes = codes.astype(np.int64)
        weights = np.ones(len(codes), dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
        rows, inverse = np.unique(codes, axis=0, return_inverse=True)
        summed = np.bincount(inverse.ravel(), weights=weights, minlength=len(rows)).astype(np.int64)
        return cls(np.ascontiguousarray(rows), summed, tuple(str(c) for c in columns))

    @classmethod
    def combine(cls, parts: Sequence[CountedRows]) -> CountedRows:
        """The records of ``parts`` together (counts of equal rows added), whatever their order."""
        if len(parts) == 1:
            return parts[0]
        return cls.from_codes(np.concatenate([part.rows for part in parts]), parts[0].columns,
                              counts=np.concatenate([part.counts for part in parts]))


def as_codes(data: Any, name: str = "data") -> np.ndarray | CountedRows:
    """``data`` as the input of a table-reading algorithm: a :class:`CountedRows` as it is (checked), anything else as
    an int64 code matrix (:func:`dpcd.validation.as_data_matrix`)."""
    if not isinstance(data, CountedRows):
        return as_data_matrix(data, name, kind="discrete")
    if data.rows.ndim != 2 or data.rows.shape[1] < 2 or data.counts.shape != (data.rows.shape[0],):
        raise ValueError(f"{name} must hold distinct rows (rows × at least 2 variables) and one count per row")
    if data.shape[0] < 3:
        raise ValueError(f"{name} stands for {data.shape[0]} rows; at least 3 are needed")
    return data


def code_rows(codes: np.ndarray | CountedRows) -> np.ndarray:
    """The code rows of either form (a :class:`CountedRows`' distinct rows): what a domain check reads."""
    return codes.rows if isinstance(codes, CountedRows) else codes


def named(data: Any, names: Sequence[str]) -> Any:
    """``data`` with its columns named ``names``: a :class:`CountedRows` renamed, anything else a DataFrame of it."""
    if isinstance(data, CountedRows):
        return CountedRows(data.rows, data.counts, tuple(str(n) for n in names))
    return pd.DataFrame(np.asarray(data), columns=list(names))


def marginal_table(codes: np.ndarray | CountedRows, levels: Sequence[int], columns: Sequence[int]) -> np.ndarray:
    """:func:`dpcd.ci.discrete.marginal_table` of either form: a :class:`CountedRows` gives the table of its distinct
    rows weighted by their counts, which is the table of the rows it stands for."""
    if not isinstance(codes, CountedRows):
        return _row_table(codes, levels, columns)
    shape = tuple(int(levels[j]) for j in columns)
    flat = np.zeros(codes.rows.shape[0], dtype=np.int64)
    for j in columns:
        flat *= int(levels[j])
        flat += codes.rows[:, j]
    return np.bincount(flat, weights=codes.counts, minlength=int(np.prod(shape))).reshape(shape)

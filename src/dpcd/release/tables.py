"""Reading a data holder's table under a public schema.

:func:`read_table` reads a CSV (or takes a DataFrame) as **text**, so that no
value is interpreted before the schema says how; :func:`encode_table` then
applies the schema's rules (:meth:`dpcd.schema.Schema.encode`): codes for
categorical columns, clamped numbers for numeric ones, fills for missing,
out-of-domain or unreadable values. Nothing here inspects a value to decide anything.

A file is read one line per record, so that one record cannot change how the
others are read (:func:`read_table`). What can still stop a release on the
file's content is its *structure*, which the holder fixes before the release
(data preparation, reported as :class:`~dpcd.schema.DataPreparationError`): an
empty file or an unreadable header row, a header with an empty or repeated
name, a column the schema does not declare or a declared column that is missing, and — under the replace-one relation,
where n is public — a row count different from the schema's ``n``.

Examples
--------
>>> import pandas as pd
>>> from dpcd.schema import Schema
>>> schema = Schema.categorical([2, 2], names=["a", "b"])
>>> encode_table(read_table(pd.DataFrame({"a": [0, 1], "b": ["1", "7"]})), schema).to_dict("list")
{'a': [0, 1], 'b': [1, 0]}
"""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..schema import Column, DataPreparationError, Schema, SchemaError

__all__ = ["read_table", "encode_table", "plain_cell", "check_line_labels"]


def check_line_labels(schema: Schema) -> None:
    r"""Refuse a schema a CSV cannot hold one record per line of: a category whose label holds a line break.

    :func:`read_table` reads a CSV one line per record, so a record with such a
    category (legal CSV, quoted) would be read as two rows — one record's
    content would decide n. Checked on the public schema before any data are
    read; a DataFrame, which has no lines, needs no such check.

    >>> check_line_labels(Schema.from_json({"columns": {"a": {"type": "categorical", "categories": ["x", "y\nz"]}}}))
    Traceback (most recent call last):
    ...
    dpcd.schema.SchemaError: column 'a': category 'y\nz' holds a line break, which a CSV record (one line) cannot hold; rename the category in the schema and the data
    """
    for column in schema.columns:
        for label in column.categories or ():
            if "\n" in str(label):
                raise SchemaError(f"column {column.name!r}: category {label!r} holds a line break, which a CSV "
                                  "record (one line) cannot hold; rename the category in the schema and the data")


def read_table(data: str | os.PathLike[str] | pd.DataFrame, *, delimiter: str = ",") -> pd.DataFrame:
    r"""The table as text cells (a DataFrame is copied, its cells as they are: :func:`encode_table` reads each by
    :func:`plain_cell`; a CSV needs a header row of unique, non-empty names).

    A CSV is read **one line per record**: every non-blank line after the
    header is one row, parsed on its own, so that no record's content can
    change how another is read or how many rows there are (a quoted field
    cannot span lines). Lines end at ``\n`` (a ``\r`` before it is dropped);
    bytes that are not UTF-8 become replacement characters; leading spaces of
    a field are skipped and only empty cells are missing (``NA`` and similar
    stay text, which the schema then treats as a label or an unparseable
    number). A line with fewer fields than the header is padded with missing
    cells, a line with more fields (or one the csv module cannot parse) is a
    row of missing values — each a rule on that line alone. A quote left open
    ends with its line. A blank line (nothing but white space, and no separator) is
    **not a record**: a record of two or more columns always has a separator,
    so a blank line is layout (a trailing empty line, say), and
    ``frame.attrs["blank_lines"]`` counts them for the holder (``dpcd schema
    --check``). A line of separators and spaces only (``\t\t`` with tabs,
    ``,,`` with commas) is a record of missing values, whatever the separator:
    replacing a record by an empty one never changes the number of rows. Only the header can
    stop the release (a structure error: data preparation), and a header of
    one column that holds ``;`` or a tab is reported as the wrong separator.
    ``delimiter`` is the field separator (public: part of the file's format).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "t.csv"
    ...     _ = path.write_text('a,b\n1,"x\n2,3,4\n\n5,y\n\n')
    ...     table = read_table(path)
    ...     table.values.tolist(), table.attrs["blank_lines"]
    ([['1', 'x'], [nan, nan], ['5', 'y']], 2)
    """
    if isinstance(data, pd.DataFrame):
        frame = data.copy()
        frame.columns = [str(c) for c in frame.columns]
        if len(set(frame.columns)) != frame.shape[1]:
            raise DataPreparationError("column names must be unique")
        return frame
    if not isinstance(data, (str, os.PathLike)):
        raise TypeError(f"data must be a path to a CSV file or a DataFrame, got {type(data).__name__}")
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\r\n\"":
        raise ValueError(f"delimiter must be one character other than a quote or a line break, got {delimiter!r}")
    file = Path(data)
    if not file.is_file():
        raise FileNotFoundError(f"data file {os.fspath(data)!r} does not exist")
    lines = _lines(file)
    if not lines or not lines[0].strip():
        raise DataPreparationError(f"data file {os.fspath(data)!r} is empty or has no header row")
    fields = _fields(lines[0], delimiter)
    if fields is None:
        raise DataPreparationError(f"data file {os.fspath(data)!r} has a header row the csv module cannot read")
    if len(fields) == 1:
        other = next((sep for sep in (";", "\t", ",", "|") if sep != delimiter and sep in fields[0]), None)
        if other is not None:
            shown = "a tab" if other == "\t" else repr(other)
            raise DataPreparationError(
                f"data file {os.fspath(data)!r} has a header of one column, {fields[0][:60]!r}, that holds {shown}: "
                f"its fields look separated by {shown}, not {delimiter!r}; pass --delimiter "
                f"{repr(other) if other != chr(9) else 'tab'} (Python: read_table(..., delimiter=...)) or save "
                "the file with commas")
    header = [h.strip() for h in fields]
    if any(not h for h in header):
        raise DataPreparationError(f"data file {os.fspath(data)!r} has a column without a name in its header row")
    duplicated = sorted({h for h in header if header.count(h) > 1})
    if duplicated:
        raise DataPreparationError(f"column name(s) {duplicated[:3]} appear more than once in the header row")
    width = len(header)
    missing = [math.nan] * width
    rows = []
    blank = 0
    for line in lines[1:]:
        if delimiter not in line and not line.strip():  # layout; a line holding the separator is a record
            blank += 1
            continue
        cells = _fields(line, delimiter)
        if cells is None or len(cells) > width:
            rows.append(missing)
            continue
        row = [cell if cell != "" else math.nan for cell in cells]
        rows.append(row + missing[len(row):])
    frame = pd.DataFrame(rows, columns=header, dtype=object)
    frame.attrs["blank_lines"] = blank
    return frame


def _lines(file: Path) -> list[str]:
    r"""The file's lines: split at ``\n`` only (other line breaks are characters of a field), ``\r\n`` as ``\n``."""
    text = file.read_bytes().decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]  # a byte-order mark is not part of the first column's name
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the last line's terminator
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _fields(line: str, delimiter: str = ",") -> list[str] | None:
    """One line's fields (csv rules within the line, leading spaces skipped), or None when it cannot be parsed."""
    try:
        return next(csv.reader([line], delimiter=delimiter, skipinitialspace=True), [])
    except csv.Error:
        return None


_PLAIN_TYPES = frozenset({str, bool, float, np.str_, np.bool_, np.float16, np.float32, np.float64, np.int8, np.int16,
                          np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64})
"""Cell types a DataFrame cell keeps as it is (exact types: a subclass may redefine equality or its text)."""


def plain_cell(value: Any) -> Any:
    """One DataFrame cell as a value the schema's rules read on its own: a plain string, bool or number, or None.

    A DataFrame can hold any Python object, and some would make the rules read
    one record through the others or raise on one record's content (a
    complex number makes pandas' number parsing return garbage for the other
    cells of its column; an integer beyond the float range or ``Decimal("sNaN")``
    raises; a subclass can redefine equality and merge with other values).
    So each cell becomes: itself, when its exact type is a string, bool or
    float or a NumPy bool, integer or float; an ``int`` of 64 bits (one beyond
    is read as its text, as a CSV would give it); the base value of a subclass
    of ``str``, ``int`` or ``float``; None for a missing value (None, NaN,
    ``pd.NA``, ``NaT``); any other object its text (``str(value)``, as a CSV
    of it would hold it: ``Decimal("1.5")`` → ``"1.5"``, a date → its ISO
    text, which a numeric column fills), and None when that text cannot be
    made (an integer of more than 4 300 digits, a ``__str__`` that raises).

    >>> from decimal import Decimal
    >>> [plain_cell(v) for v in (3, 2.5, "a", 10 ** 30, 2 + 3j, Decimal("1.5"), pd.NA)]
    [3, 2.5, 'a', '1000000000000000000000000000000', '(2+3j)', '1.5', None]
    """
    try:
        kind = type(value)
        if value is None or kind in _PLAIN_TYPES:
            return value
        if kind is int:
            return value if -(2 ** 63) <= value < 2 ** 63 else str.__str__(str(value))
        if value is pd.NA or value is pd.NaT:
            return None
        if isinstance(value, str):
            return str.__str__(value)
        if isinstance(value, int):
            return plain_cell(int.__int__(value))
        if isinstance(value, float):
            return float.__float__(value)
        return str.__str__(str(value))
    except Exception:  # noqa: BLE001 - a cell whose value or text cannot be had is missing
        return None


def _plain_values(values: pd.Series) -> np.ndarray:
    """A column's cells, each :func:`plain_cell` (a column of NumPy bools, integers or floats as it is)."""
    if isinstance(values.dtype, np.dtype) and values.dtype.kind in "biuf":
        return values.to_numpy()
    return pd.Series(values.astype(object).to_numpy(), dtype=object).map(plain_cell).to_numpy()


def encode_table(frame: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """The table in the schema's coding (see :meth:`dpcd.schema.Schema.encode`), every cell by a rule on that cell.

    Every cell is first made :func:`plain_cell` (text cells, as a CSV gives
    them, stay as they are), so that no cell is read through the others; a
    cell the schema's rules cannot read is **missing** (its column's fill),
    never an error: an error would stop the release on one record's content.
    Should a column still raise, it is encoded cell by cell (the same codes for
    every cell that reads on its own). Only the structure (a missing or
    undeclared column) stops it.

    >>> from decimal import Decimal
    >>> schema = Schema.numeric([(0, 10)], names=["a"])
    >>> frame = pd.DataFrame({"a": pd.Series([3, 10 ** 400, Decimal("sNaN"), 2 + 3j], dtype=object)})
    >>> encode_table(frame, schema)["a"].tolist()   # 10 ** 400 read as its text, clamped; the others missing
    [3.0, 10.0, 5.0, 5.0]
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas.DataFrame, got {type(frame).__name__}")
    frame = pd.DataFrame({j: _plain_values(frame.iloc[:, j]) for j in range(frame.shape[1])},
                         index=pd.RangeIndex(len(frame))).set_axis([str(c) for c in frame.columns], axis=1)
    try:
        return schema.encode(frame)
    except DataPreparationError:
        raise
    except Exception:  # noqa: BLE001 - a cell the column rules cannot read; structure errors were raised above
        pass
    data = {}
    for column in schema.columns:
        values = frame[column.name]
        try:
            data[column.name] = column.encode(values)
        except Exception:  # noqa: BLE001 - see above
            missing = column.encode(pd.Series([None], dtype=object))
            data[column.name] = np.array([_encode_cell(column, value, missing) for value in values.tolist()],
                                         dtype=missing.dtype)
    return pd.DataFrame(data, index=pd.RangeIndex(len(frame)), columns=list(schema.names))


def _encode_cell(column: Column, value: Any, missing: np.ndarray) -> Any:
    """One cell in ``column``'s coding; ``missing[0]`` (the code of a missing cell) when the rules cannot read it."""
    try:
        return column.encode(pd.Series([value], dtype=object))[0]
    except Exception:  # noqa: BLE001 - any failure to read one cell makes that cell missing
        return missing[0]

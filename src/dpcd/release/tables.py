"""Reading a data holder's table under a public schema.

:func:`read_table` reads a CSV (or takes a DataFrame) as **text**, so that no
value is interpreted before the schema says how; :func:`encode_table` then
applies the schema's rules (:meth:`dpcd.schema.Schema.encode`): codes for
categorical columns, clamped numbers for numeric ones, fills for missing or
out-of-domain values. Nothing here inspects a value to decide anything.

What can still stop a release on the file's content is its *structure*, which
the holder fixes before the release (data preparation, reported as
:class:`~dpcd.schema.DataPreparationError`): a file that is not readable CSV,
a header with an empty or repeated name, a column the schema does not declare
or a declared column that is missing, and — under the replace-one relation,
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
import os
from pathlib import Path

import pandas as pd

from ..schema import DataPreparationError, Schema

__all__ = ["read_table", "encode_table"]


def read_table(data: str | os.PathLike[str] | pd.DataFrame) -> pd.DataFrame:
    """The table as text cells (a DataFrame is copied; a CSV needs a header row of unique, non-empty names).

    Only empty cells are missing (``NA`` and similar stay text, which the schema
    then treats as a label or an unparseable number). Bytes that are not UTF-8
    become replacement characters, a row with fewer fields than the header is
    padded with missing values and a row with more fields becomes a row of
    missing values — each a rule on that row alone, so one record cannot stop
    the release. A file that is not CSV at all (e.g. a quote left open to the
    end) is a structure error.
    """
    if isinstance(data, pd.DataFrame):
        frame = data.copy()
        frame.columns = [str(c) for c in frame.columns]
        if len(set(frame.columns)) != frame.shape[1]:
            raise DataPreparationError("column names must be unique")
        return frame
    if not isinstance(data, (str, os.PathLike)):
        raise TypeError(f"data must be a path to a CSV file or a DataFrame, got {type(data).__name__}")
    file = Path(data)
    if not file.is_file():
        raise FileNotFoundError(f"data file {os.fspath(data)!r} does not exist")
    with open(file, newline="", encoding="utf-8", errors="replace") as handle:
        header = [h.strip() for h in next(csv.reader(handle), [])]
    options = dict(dtype=str, keep_default_na=False, na_values=[""], skipinitialspace=True,
                   encoding_errors="replace")
    try:
        try:
            frame = pd.read_csv(file, **options)
        except pd.errors.ParserError:
            # a row with more fields than the header: read it as a row of missing values (the schema's
            # fills), so that one record's content cannot stop the release; the result is the same
            # function of the file whichever parser reads it
            frame = pd.read_csv(file, engine="python", on_bad_lines=lambda fields: [""] * len(header),
                                **options)
    except pd.errors.EmptyDataError:
        raise DataPreparationError(f"data file {os.fspath(data)!r} is empty") from None
    except pd.errors.ParserError as error:
        raise DataPreparationError(f"data file {os.fspath(data)!r} is not a readable CSV: "
                                   f"{' '.join(str(error).split())}") from None
    if any(not h for h in header):
        raise DataPreparationError(f"data file {os.fspath(data)!r} has a column without a name in its header row")
    duplicated = sorted({h for h in header if header.count(h) > 1})
    if duplicated:
        raise DataPreparationError(f"column name(s) {duplicated[:3]} appear more than once in the header row")
    if len(header) == frame.shape[1]:
        frame.columns = header
    return frame


def encode_table(frame: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """The table in the schema's coding (see :meth:`dpcd.schema.Schema.encode`)."""
    return schema.encode(frame)

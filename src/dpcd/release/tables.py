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
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..discovery.counted import CountedRows
from ..schema import Column, DataPreparationError, Schema, SchemaError

__all__ = ["read_table", "read_chunks", "table_shape", "encode_table", "plain_cell", "check_line_labels", "CHUNK_ROWS",
           "COLUMNAR_SUFFIXES", "columnar_format", "quality_counts", "merge_quality", "quality_lines", "encode_chunks",
           "join_encoded", "csv_chunks", "decode_line", "arrow_frame", "csv_header", "block_lines", "blank_line", "columnar_pieces",
           "columnar_piece_chunks", "empty_table", "count_records"]

CHUNK_ROWS = 100_000
"""Records per chunk when a release reads a table (:func:`read_chunks`): the text of one chunk is what is held at
a time, beside the encoded values of the chunks before it. A setting of the reader, never of the result."""
COLUMNAR_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".feather": "feather", ".arrow": "feather",
                     ".ipc": "feather"}
"""File suffixes read as columnar files (Parquet, or Arrow IPC / Feather) rather than as CSV text: the file's
format, part of its public structure."""


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
    if columnar_format(data) is not None:
        return pd.concat(list(_columnar_chunks(data, CHUNK_ROWS)), ignore_index=True)
    header, lines = _csv_lines(data, delimiter)
    return _parse(list(enumerate(lines, start=2)), header, delimiter)


def table_shape(data: str | os.PathLike[str] | pd.DataFrame, *, delimiter: str = ",") -> tuple[list[str], int]:
    r"""The header's column names and the number of records of ``data``, read by the rules of :func:`read_table`
    without parsing any record's fields: the file's **structure**, which a release may check before it reads a value.

    A record is every line after the header that is not blank (:func:`read_table`); nothing else of a line is
    looked at, so the count is what :func:`read_table` returns as its number of rows.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "t.csv"
    ...     _ = path.write_text('a,b\n1,"x\n2,3,4\n\n5,y\n\n')
    ...     table_shape(path)
    (['a', 'b'], 3)
    """
    if isinstance(data, pd.DataFrame):
        frame = read_table(data)
        return list(frame.columns), len(frame)
    if columnar_format(data) is not None:
        header, _, rows = columnar_pieces(data)
        return header, sum(rows)
    header, lines = _csv_lines(data, delimiter)
    return header, count_records(lines, delimiter)[0]


def count_records(lines: Iterable[str], delimiter: str = ",") -> tuple[int, int]:
    r"""(records, lines) of a CSV's lines after its header: a record is a line that is not blank (:func:`blank_line`),
    the rule of :func:`table_shape` and of a cluster's count per part. Structure only.

    >>> count_records(["1,2\n", "\n", "3,4"])
    (2, 3)
    """
    records = total = 0
    for line in lines:
        total += 1
        records += not blank_line(line, delimiter)
    return records, total


def read_chunks(data: str | os.PathLike[str] | pd.DataFrame, *, delimiter: str = ",",
                rows: int | None = None) -> Iterator[pd.DataFrame]:
    r"""The table of :func:`read_table` in chunks of at most ``rows`` records (None: :data:`CHUNK_ROWS`), in the file's order, holding one
    chunk at a time: what a release reads, so that a table larger than memory is read in bounded pieces.

    * a CSV path: read one line per record by exactly :func:`read_table`'s rules (each chunk's ``attrs`` hold its
      ``blank_lines`` and ``malformed_lines``, the latter with the file's line numbers);
    * a Parquet or Arrow IPC / Feather file (:data:`COLUMNAR_SUFFIXES`), or a folder of such files of one format
      (its parts in the order of their names): read in record batches by ``pyarrow``, each cell as its Python value
      (a missing cell None), so that no cell's type depends on another's (a null never turns a column of integers
      into floats); the schema's rules then read each cell as they read a DataFrame's;
    * a DataFrame: slices of it.

    Concatenated, the chunks are the records :func:`read_table` returns, in its order, so the encoded values — and a
    release from them — do not depend on ``rows``.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "t.csv"
    ...     _ = path.write_text('a,b\n1,x\n\n2,3,4\n5,y\n')
    ...     [chunk.values.tolist() for chunk in read_chunks(path, rows=2)]
    [[['1', 'x'], [nan, nan]], [['5', 'y']]]
    """
    rows = _checked_rows(CHUNK_ROWS if rows is None else rows)
    if isinstance(data, pd.DataFrame):
        frame = read_table(data)
        for start in range(0, max(len(frame), 1), rows):
            yield frame.iloc[start:start + rows].reset_index(drop=True)
        return
    kind = columnar_format(data)
    if kind is not None:
        yield from _columnar_chunks(data, rows)
        return
    header, lines = _csv_lines(data, delimiter)
    yield from csv_chunks(enumerate(lines, start=2), header, delimiter, rows)


def csv_chunks(numbered: Iterable[tuple[int, str]], header: list[str], delimiter: str,
               rows: int) -> Iterator[pd.DataFrame]:
    """Lines ``(line number, text)`` of a CSV after its header, parsed by :func:`read_table`'s rules in chunks of at
    most ``rows`` records (at least one chunk, perhaps empty): the CSV reading of :func:`read_chunks` and of a part of
    a file read elsewhere (:mod:`dpcd.release.cluster`)."""
    chunk: list[tuple[int, str]] = []
    records, emitted = 0, False
    for number, line in numbered:
        chunk.append((number, line))
        records += not blank_line(line, delimiter)
        if records >= rows:
            yield _parse(chunk, header, delimiter)
            chunk, records, emitted = [], 0, True
    if chunk or not emitted:
        yield _parse(chunk, header, delimiter)


def encode_chunks(chunks: Iterable[pd.DataFrame], view: Schema, schema: Schema,
                  on_chunk: Callable[[int], None] | None = None, *,
                  counted: bool = False) -> tuple[pd.DataFrame | CountedRows, dict[str, Any] | None]:
    """The chunks of one table (or of one part of it) encoded by :func:`encode_table` under ``view`` and joined in
    order, with their :func:`quality_counts` under ``schema`` merged (None when the counts cannot be made: a count
    never stops a release). ``on_chunk(records)`` is told each chunk's size. Every path of a release — in memory,
    streamed, on a cluster — encodes by this function, so the encoded table depends on the records and their order
    only, never on how they were cut.

    ``counted``: for an algorithm that reads contingency tables only (:func:`dpcd.registry.reads_counts`), each
    chunk's codes are reduced at once to their distinct rows with counts (:class:`~dpcd.discovery.counted.CountedRows`,
    held in the narrowest integer type the view's public levels allow) and merged, so what is held is bounded by the
    number of distinct rows, not by n; the result depends on the multiset of records only.

    >>> schema = Schema.categorical([2], names=["a"])
    >>> chunks = [pd.DataFrame({"a": ["1", "x"]}), pd.DataFrame({"a": ["0"]})]
    >>> encoded, counts = encode_chunks(chunks, schema, schema)
    >>> encoded["a"].tolist(), counts["records"]
    ([1, 0, 0], 3)
    >>> two = Schema.categorical([2, 2], names=["a", "b"])
    >>> rows, _ = encode_chunks([pd.DataFrame({"a": ["1", "0"], "b": ["0", "1"]}), pd.DataFrame({"a": ["1"], "b": ["0"]})],
    ...                         two, two, counted=True)
    >>> rows.rows.tolist(), rows.counts.tolist(), rows.shape
    ([[0, 1], [1, 0]], [1, 2], (3, 2))
    """
    encoded: list[Any] = []
    counts, countable, pending = None, True, 0
    for chunk in chunks:
        codes = encode_table(chunk, view)
        if counted:
            codes = CountedRows.from_codes(codes.to_numpy(), view.names, levels=view.levels)
            pending += len(codes.rows) if encoded else 0  # distinct rows held beside the merged first part
        encoded.append(codes)
        if counted and pending >= max(len(encoded[0].rows), CHUNK_ROWS):  # merged rarely: amortised cost
            encoded, pending = [CountedRows.combine(encoded)], 0
        if countable:
            try:
                part = quality_counts(chunk, schema)
                counts = part if counts is None else merge_quality(counts, part)
            except Exception:  # noqa: BLE001
                counts, countable = None, False
        if on_chunk is not None:
            on_chunk(len(chunk))
    return join_encoded(encoded), counts


def join_encoded(parts: list[Any]) -> pd.DataFrame | CountedRows:
    """Encoded parts of one table, in its order, as one: DataFrames concatenated, or
    :class:`~dpcd.discovery.counted.CountedRows` combined."""
    if isinstance(parts[0], CountedRows):
        return CountedRows.combine(parts)
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def csv_header(data: Any, delimiter: str = ",") -> tuple[list[str], int]:
    """A CSV's header names (by :func:`read_table`'s rules) and the byte offset where its first record line begins:
    the cut after which a cluster reads its lines in byte ranges (:func:`block_lines`)."""
    header, _ = _csv_lines(data, delimiter)
    with open(data, "rb") as handle:
        handle.readline()
        return header, handle.tell()


def block_lines(path: str | os.PathLike[str], start: int, end: int) -> Iterator[str]:
    r"""The lines of a CSV that *begin* in bytes ``[start, end)``, decoded by :func:`decode_line` (``start`` ≥ 1: at
    or after :func:`csv_header`'s offset). Ranges that tile the file after the header give each line exactly once, in
    order, as :func:`read_table` reads them.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "t.csv"
    ...     _ = path.write_bytes(b"a,b\n1,x\n22,y\r\n3,z")
    ...     [list(block_lines(path, a, b)) for a, b in ((4, 9), (9, 20))]
    [['1,x', '22,y'], ['3,z']]
    """
    with open(path, "rb") as handle:
        handle.seek(start - 1)
        handle.readline()  # the rest of the line holding byte start − 1: it begins in the range before
        while handle.tell() < end:
            raw = handle.readline()
            if not raw:
                break
            yield decode_line(raw)


def _csv_lines(data: Any, delimiter: str) -> tuple[list[str], Iterator[str]]:
    """A CSV's header names and an iterator over the lines after it (:func:`_iter_lines`), by :func:`_header`'s
    rules."""
    lines = _iter_lines(Path(_checked_path(data, delimiter)))
    return _header([next(lines, "")], data, delimiter), lines


def _checked_rows(rows: Any) -> int:
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
        raise ValueError(f"rows must be a positive integer (records per chunk), got {rows!r}")
    return int(rows)


def _parse(numbered: list[tuple[int, str]], header: list[str], delimiter: str) -> pd.DataFrame:
    """Lines ``(line number, text)`` after the header as records, by :func:`read_table`'s rules (one line, one
    record; blank lines are layout; a short line is padded, a long or unparseable one is a row of missing values)."""
    width = len(header)
    missing = [math.nan] * width
    rows = []
    blank = 0
    malformed = []
    for number, line in numbered:
        if blank_line(line, delimiter):  # layout; a line holding the separator is a record
            blank += 1
            continue
        cells = _fields(line, delimiter)
        if cells is None or len(cells) > width:
            malformed.append({"line": number, "fields": None if cells is None else len(cells), "expected": width,
                              "read_as": "a row of missing values"})
            rows.append(missing)
            continue
        if len(cells) < width:
            malformed.append({"line": number, "fields": len(cells), "expected": width,
                              "read_as": "padded with missing values"})
        row = [cell if cell != "" else math.nan for cell in cells]
        rows.append(row + missing[len(row):])
    frame = pd.DataFrame(rows, columns=header, dtype=object)
    frame.attrs["blank_lines"] = blank
    frame.attrs["malformed_lines"] = malformed
    return frame


def columnar_format(data: Any) -> str | None:
    """``"parquet"`` or ``"feather"`` when ``data`` names a columnar file or a folder of them, else None (CSV)."""
    if not isinstance(data, (str, os.PathLike)):
        return None
    path = Path(data)
    if path.is_dir():
        return _columnar_parts(path)[1]
    return COLUMNAR_SUFFIXES.get(path.suffix.lower())


def _columnar_parts(data: Any) -> tuple[list[Path], str]:
    """The files of a columnar table (the file, or a folder's files in name order) and their one format."""
    path = Path(data)
    if path.is_file():
        return [path], COLUMNAR_SUFFIXES[path.suffix.lower()]
    if not path.exists():
        raise FileNotFoundError(f"data file {os.fspath(data)!r} does not exist")
    parts = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith((".", "_")))
    kinds = {COLUMNAR_SUFFIXES.get(p.suffix.lower()) for p in parts}
    if not parts or None in kinds or len(kinds) != 1:
        raise DataPreparationError(f"data folder {os.fspath(data)!r} must hold Parquet or Feather files of one format "
                                   f"({', '.join(sorted(COLUMNAR_SUFFIXES))}), got {[p.name for p in parts[:5]]}")
    return parts, kinds.pop()


def _arrow_schema(part: Path, kind: str) -> Any:
    """A part's column schema, from its metadata; a Feather file must be Arrow IPC (Feather version 2)."""
    import pyarrow as pa
    import pyarrow.parquet as parquet

    if kind == "parquet":
        try:
            return parquet.read_schema(part)
        except (pa.ArrowInvalid, OSError) as error:
            raise DataPreparationError(f"data file {os.fspath(part)!r} is not a readable Parquet file ({error}); "
                                       "write it again, or remove it from the folder") from None
    try:
        with pa.memory_map(str(part)) as source:
            return pa.ipc.open_file(source).schema
    except pa.ArrowInvalid:
        raise DataPreparationError(f"data file {os.fspath(part)!r} is not an Arrow IPC file (Feather version 2); "
                                   "write it with pyarrow.feather.write_feather or pandas.DataFrame.to_feather") from None


def _columnar_header(parts: list[Path], kind: str, data: Any) -> list[str]:
    """The column names every part shares (a part with other names is a structure error)."""
    header = None
    for part in parts:
        names = [str(name) for name in _arrow_schema(part, kind).names]
        if header is None:
            header = names
        elif names != header:
            raise DataPreparationError(f"data folder {os.fspath(data)!r}: part {part.name!r} has columns {names[:5]}, "
                                       f"not the first part's {header[:5]}")
    if len(set(header)) != len(header) or any(not h for h in header):
        raise DataPreparationError("column names must be unique and non-empty")
    return header


def columnar_pieces(data: Any) -> tuple[list[str], list[tuple[str, str, int]], list[int]]:
    """A columnar table's header, its pieces — ``(kind, file, index)``: each Parquet row group, each Arrow IPC record
    batch, in the files' name order — and each piece's number of records, all from metadata (no value is read): the
    cuts by which a cluster reads it (:mod:`dpcd.release.cluster`). A table without a piece has one empty piece,
    ``("empty", "", 0)``, so that its header is kept."""
    import pyarrow as pa
    import pyarrow.parquet as parquet

    files, kind = _columnar_parts(data)
    header = _columnar_header(files, kind, data)
    pieces, rows = [], []
    for file in files:
        if kind == "parquet":
            metadata = parquet.ParquetFile(file).metadata
            sizes = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
        else:
            with pa.memory_map(str(file)) as source:
                reader = pa.ipc.open_file(source)
                sizes = [reader.get_batch(i).num_rows for i in range(reader.num_record_batches)]
        pieces += [(kind, os.fspath(file), index) for index in range(len(sizes))]
        rows += sizes
    return header, (pieces or [("empty", "", 0)]), (rows or [0])


def columnar_piece_chunks(piece: tuple[str, str, int], header: list[str], rows: int) -> Iterator[pd.DataFrame]:
    """One piece of :func:`columnar_pieces` in chunks of at most ``rows`` records (at least one, perhaps empty), each
    cell read by :func:`arrow_frame` as :func:`read_chunks` reads it."""
    import pyarrow as pa
    import pyarrow.parquet as parquet

    kind, path, index = piece
    if kind == "parquet":
        batches = list(parquet.ParquetFile(path).iter_batches(batch_size=rows, row_groups=[index]))
        yield from (arrow_frame(batch, header) for batch in batches) if batches else [empty_table(header)]
    elif kind == "feather":
        with pa.memory_map(path) as source:
            batch = pa.ipc.open_file(source).get_batch(index)
            for start in range(0, max(batch.num_rows, 1), rows):
                yield arrow_frame(batch.slice(start, rows), header)
    else:
        yield empty_table(header)


def empty_table(header: list[str]) -> pd.DataFrame:
    """A table of no records with ``header``'s columns (text cells)."""
    return pd.DataFrame({name: pd.Series([], dtype=object) for name in header}, columns=header)


def _columnar_chunks(data: Any, rows: int) -> Iterator[pd.DataFrame]:
    """Chunks of exactly ``rows`` records (the last one fewer) of a columnar table, read piece by piece by
    :func:`columnar_piece_chunks`, each column as Python values (None where missing)."""
    header, pieces, _ = columnar_pieces(data)
    pending: list[pd.DataFrame] = []
    held = 0
    emitted = False
    for piece in pieces:
        for frame in columnar_piece_chunks(piece, header, rows):
            if not len(frame):
                continue
            pending.append(frame)
            held += len(frame)
            while held >= rows:
                joined = pd.concat(pending, ignore_index=True)
                yield joined.iloc[:rows].reset_index(drop=True)
                emitted = True
                rest = joined.iloc[rows:].reset_index(drop=True)
                pending, held = ([rest] if len(rest) else []), len(rest)
    if pending or not emitted:
        yield pd.concat(pending, ignore_index=True) if pending else empty_table(header)


def arrow_frame(batch: Any, header: list[str]) -> pd.DataFrame:
    """A ``pyarrow`` record batch as text-like cells: each column's cells as Python values (None where missing), so
    that no cell's type depends on another's — the one conversion of every columnar read."""
    return pd.DataFrame({name: pd.Series(batch.column(j).to_pylist(), dtype=object) for j, name in enumerate(header)},
                        columns=header)


def _checked_path(data: Any, delimiter: str) -> str | os.PathLike[str]:
    """``data`` as a path to an existing file, with ``delimiter`` one legal character (errors name the argument)."""
    if not isinstance(data, (str, os.PathLike)):
        raise TypeError(f"data must be a path to a CSV file or a DataFrame, got {type(data).__name__}")
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\r\n\"":
        raise ValueError(f"delimiter must be one character other than a quote or a line break, got {delimiter!r}")
    if not Path(data).is_file():
        raise FileNotFoundError(f"data file {os.fspath(data)!r} does not exist")
    return data


def blank_line(line: str, delimiter: str) -> bool:
    """A blank line: nothing but white space and no separator (layout, not a record)."""
    return delimiter not in line and not line.strip()


def _header(lines: list[str], data: Any, delimiter: str) -> list[str]:
    """The header row's names, or the structure error a holder fixes (empty file, unreadable or wrong separator,
    a name empty or repeated)."""
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
    return header


def _iter_lines(file: Path) -> Iterator[str]:
    r"""The file's lines, one at a time: split at ``\n`` only (other line breaks are characters of a field),
    ``\r\n`` as ``\n``, never holding the file: bytes are split at ``\n`` (a byte no other UTF-8
    character contains, so splitting before decoding gives the same text) and each line decoded on its own."""
    with open(file, "rb") as handle:
        for number, raw in enumerate(handle):
            yield decode_line(raw, first=number == 0)


def decode_line(raw: bytes, *, first: bool = False) -> str:
    r"""One line's bytes (up to and including its ``\n``) as :func:`read_table` reads them: UTF-8 with replacement
    characters, without its ``\n`` or ``\r\n``, and — on the file's ``first`` line — without a byte-order mark.

    >>> decode_line(b"\xef\xbb\xbfa,b\r\n", first=True), decode_line(b"1,\xff\n")
    ('a,b', '1,\ufffd')
    """
    line = raw.decode("utf-8", errors="replace")
    if first and line.startswith("\ufeff"):
        line = line[1:]  # a byte-order mark is not part of the first column's name
    if line.endswith("\n"):
        line = line[:-1]
    return line[:-1] if line.endswith("\r") else line


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


def _plain_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every cell :func:`plain_cell` (its ``attrs`` kept), so that no cell is read through another."""
    plain = pd.DataFrame({j: _plain_values(frame.iloc[:, j]) for j in range(frame.shape[1])},
                         index=pd.RangeIndex(len(frame))).set_axis([str(c) for c in frame.columns], axis=1)
    plain.attrs.update(frame.attrs)
    return plain


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
    frame = _plain_frame(frame)
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


def _shown(value: Any) -> str:
    """A fill or bound as the holder wrote it: a label quoted, a number without a trailing ``.0``."""
    if isinstance(value, str):
        return repr(value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def _lines_named(numbers: list[int], most: int = 5) -> str:
    shown = ", ".join(str(k) for k in numbers[:most])
    return shown + (", …" if len(numbers) > most else "")


def data_quality(frame: pd.DataFrame, schema: Schema) -> list[str]:
    """What the schema's rules do to ``frame`` (as :func:`read_table` read it), in sentences: **for the data holder's
    terminal only**, never for a released file.

    One sentence per column and rule that changed a cell — labels not in the categories and missing cells that
    became the fill (named), numbers clamped to a bound, text that is no number — and one for the malformed lines
    (their line numbers and field counts). It reads the private values without noise: ``discover`` prints it to
    the terminal and writes it nowhere, and it changes nothing (the release reads the replaced values, as it would
    from a file with the replacements already made). ``dpcd schema DATA --check SCHEMA`` gives the same counts as a
    table.

    >>> schema = Schema.from_json({"columns": {"had_affair": {"type": "categorical", "categories": ["no", "yes"]},
    ...                                        "age": {"type": "numeric", "lower": 18, "upper": 90}}})
    >>> frame = pd.DataFrame({"had_affair": ["no", "Yes", "Yes", None], "age": ["20", "95", "", "40"]})
    >>> for line in data_quality(frame, schema):
    ...     print(line)
    2 cells of had_affair not in ['no', 'yes'] (most often 'Yes' ×2) became the fill 'no'
    1 missing cell of had_affair became the fill 'no'
    1 missing cell of age became the fill 54
    1 number of age above 90 was clamped to 90
    """
    return quality_lines(quality_counts(frame, schema), schema)


def quality_counts(frame: pd.DataFrame, schema: Schema) -> dict[str, Any]:
    """What :func:`data_quality` says of ``frame``, as counts that add up over the chunks of one table
    (:func:`merge_quality`): the schema's per-column counts (:meth:`~dpcd.schema.Schema.check`), the labels or texts
    out of each column's domain with their counts, the malformed lines and the number of records. For the holder's
    terminal only, like :func:`data_quality`.

    >>> schema = Schema.categorical([2], names=["a"])
    >>> first, second = (quality_counts(pd.DataFrame({"a": values}), schema) for values in (["0", "x"], ["x", None]))
    >>> quality_lines(merge_quality(first, second), schema)
    ["2 cells of a not in ['0', '1'] (most often 'x' ×2) became the fill '0'", "1 missing cell of a became the fill '0'"]
    """
    frame = _plain_frame(frame)
    table = schema.check(frame)
    odd: dict[str, dict[str, int]] = {}
    for column, (_, row) in zip(schema.columns, table.iterrows()):
        if not row["present"] or not int(row["not_in_domain"]):
            continue
        values = frame[column.name]
        text = values.astype(object).where(values.notna(), None)
        given = text.map(lambda v: v is not None and str(v).strip() != "").to_numpy()
        if column.type == "numeric":
            unread = np.isnan(pd.to_numeric(values, errors="coerce").to_numpy(dtype=float))
        else:
            unread = column._match(values) < 0
        odd[column.name] = {str(k): int(v) for k, v in text[unread & given].astype(str).value_counts().items()}
    return {"check": table, "odd": odd, "malformed": list(frame.attrs.get("malformed_lines", [])),
            "records": len(frame)}


def merge_quality(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """The :func:`quality_counts` of two chunks of one table, as one (counts added, lines kept in order)."""
    table = first["check"].copy()
    counts = [c for c in table.columns if c not in ("column", "type", "present")]
    table[counts] = table[counts].to_numpy() + second["check"][counts].to_numpy()
    odd = {name: dict(labels) for name, labels in first["odd"].items()}
    for name, labels in second["odd"].items():
        merged = odd.setdefault(name, {})
        for label, count in labels.items():
            merged[label] = merged.get(label, 0) + count
    return {"check": table, "odd": odd, "malformed": first["malformed"] + second["malformed"],
            "records": first["records"] + second["records"]}


def quality_lines(tally: dict[str, Any], schema: Schema) -> list[str]:
    """:func:`data_quality`'s sentences from :func:`quality_counts` (of one table, or merged over its chunks)."""
    lines: list[str] = []
    for column, (_, row) in zip(schema.columns, tally["check"].iterrows()):
        if not row["present"]:
            continue
        fill = _shown(column.fill)
        outside = int(row["not_in_domain"])
        if outside:
            what = "that are not numbers" if column.type == "numeric" else f"not in {list(column.categories)}"
            common = sorted(tally["odd"].get(column.name, {}).items(), key=lambda item: -item[1])[:3]
            examples = ", ".join(f"{label!r} ×{count}" for label, count in common)
            lines.append(f"{outside} cell{'s' if outside != 1 else ''} of {column.name} {what} (most often "
                         f"{examples}) became the fill {fill}")
        gone = int(row["missing"])
        if gone:
            lines.append(f"{gone} missing cell{'s' if gone != 1 else ''} of {column.name} became the fill {fill}")
        for side, bound in (("below", column.lower), ("above", column.upper)):
            count = int(row["clamped_low" if side == "below" else "clamped_high"])
            if count:
                lines.append(f"{count} number{'s' if count != 1 else ''} of {column.name} {side} {_shown(bound)} "
                             f"{'were' if count != 1 else 'was'} clamped to {_shown(bound)}")
    malformed = tally["malformed"]
    long = [m for m in malformed if m["fields"] is None or m["fields"] > m["expected"]]
    short = [m for m in malformed if m["fields"] is not None and m["fields"] < m["expected"]]
    for group, many, one in (
            (long, "have more fields than the header (or cannot be parsed) and were read as rows of missing values, "
                   "every cell its column's fill — an unquoted separator inside a label?",
             "has more fields than the header (or cannot be parsed) and was read as a row of missing values, every "
             "cell its column's fill — an unquoted separator inside a label?"),
            (short, "have fewer fields than the header and were padded with missing values",
             "has fewer fields than the header and was padded with missing values")):
        if group:
            counts = pd.Series([m["fields"] for m in group], dtype=object).value_counts().head(3)
            fields = ", ".join(f"{'unparseable' if k is None else f'{k} fields'} ×{v}" for k, v in counts.items())
            share = 100.0 * len(group) / max(tally["records"], 1)
            where = ("lines " if len(group) != 1 else "line ") + _lines_named([m["line"] for m in group])
            lines.append(f"{len(group)} line{'s' if len(group) != 1 else ''} ({share:.1f} % of the records; {where}; "
                         f"{fields}, the header has {group[0]['expected']}) {many if len(group) != 1 else one} "
                         "(their cells are counted as missing above)")
    return lines

"""Reading a table on a Dask cluster: the same rules on every part, joined into the table a release reads.

A release from a table too large for one machine's reading time runs its read on a Dask cluster: the table is cut
into **parts** by its structure alone — a CSV into byte ranges at line ends, a Parquet file into its row groups, an
Arrow IPC / Feather file into its record batches, a folder into its files, a Dask DataFrame into its partitions —
and each worker reads its parts and encodes them by the one-machine path's rules and code
(:func:`dpcd.release.tables.csv_chunks` for lines, :func:`~dpcd.release.tables.arrow_frame` for every columnar
batch, then :func:`~dpcd.release.tables.encode_chunks`). The encoded parts come back in the table's order and are
joined, so the release is the one :func:`dpcd.release.discover` makes from the same records on one machine: byte-identical
``graph.json`` and ``privacy.json`` with the same seed, whatever the number of parts (tested on a local two-worker
cluster).

Privacy. Nothing here decides anything from a value: where the cuts fall is a function of the file's size, its
metadata (row groups, batches) or the partitioning the holder chose, and the encoding is the schema's rule on each
cell. The row count (under replace-one, where n is public) is the sum of the parts' counts, each taken by the rule
of :func:`~dpcd.release.tables.table_shape` (non-blank lines, or the metadata's rows).

Memory. For an algorithm that reads contingency tables only (:func:`dpcd.registry.reads_counts`) each worker
sends back its parts' distinct encoded rows with their counts, and the calling process holds their union, bounded by
the public domain; for every other algorithm it holds the whole encoded table (n × p codes), as on one machine.

This process and every worker must be able to read ``path`` (a shared file system, or one machine); a Dask
DataFrame's partitions travel as Dask moves them. Dask is an optional dependency (``pip install "dpcd[dask]"``).

>>> import tempfile
>>> from dpcd.schema import Schema
>>> schema = Schema.categorical([2, 2], names=["a", "b"])
>>> with tempfile.TemporaryDirectory() as folder:
...     path = Path(folder) / "t.csv"
...     _ = path.write_text("a,b\\n" + "0,1\\n1,x\\n" * 3)
...     table = ClusterTable(path, block_bytes=7)  # no scheduler and no client: Dask's local threads
...     header, rows = cluster_shape(table)
...     encoded, counts = encode_on_cluster(table, schema, schema)
>>> header, rows, encoded["b"].tolist(), counts["records"]
(['a', 'b'], 6, [1, 0, 1, 0, 1, 0], 6)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..discovery.counted import CountedRows
from ..schema import DataPreparationError, Schema
from .tables import (
    CHUNK_ROWS,
    block_lines,
    columnar_format,
    columnar_piece_chunks,
    columnar_pieces,
    count_records,
    csv_chunks,
    csv_header,
    encode_chunks,
    join_encoded,
    merge_quality,
    read_chunks,
)

__all__ = ["BLOCK_BYTES", "ClusterTable", "ClusterLayout", "cluster_layout", "is_cluster_source", "holds_lines",
           "cluster_shape", "encode_on_cluster"]

BLOCK_BYTES = 32 * 2 ** 20
"""Bytes of a CSV per part read on a cluster (a part holds the lines that begin in its byte range): a setting of the
reader, never of the result."""


@dataclass(frozen=True)
class ClusterTable:
    """A table file (or folder of parts) that :func:`dpcd.release.discover` reads on a Dask cluster.

    ``path``: a CSV file, or a Parquet or Arrow IPC / Feather file or folder of parts, readable at the same path by
    this process and by every worker (it is made absolute here).
    ``scheduler``: the address of a running Dask scheduler (``tcp://host:8786``); None uses the Dask client already
    active in this process, or Dask's local threads when there is none. ``block_bytes``: bytes of a CSV per part
    (:data:`BLOCK_BYTES`). Every field is public: the release does not depend on any of them.
    """

    path: str | os.PathLike[str]
    scheduler: str | None = None
    block_bytes: int = BLOCK_BYTES

    def __post_init__(self) -> None:
        if not isinstance(self.path, (str, os.PathLike)):
            raise TypeError(f"path must be a path to a CSV, Parquet or Feather file or folder, got "
                            f"{type(self.path).__name__}")
        if self.scheduler is not None and (not isinstance(self.scheduler, str) or not self.scheduler.strip()):
            raise TypeError(f"scheduler must be a Dask scheduler's address (e.g. 'tcp://host:8786') or None, got "
                            f"{self.scheduler!r}")
        if isinstance(self.block_bytes, bool) or not isinstance(self.block_bytes, (int, np.integer)) \
                or self.block_bytes < 1:
            raise ValueError(f"block_bytes must be a positive integer (bytes of a CSV per part), got "
                             f"{self.block_bytes!r}")
        # the workers run elsewhere: a relative path would name another file there (or none)
        object.__setattr__(self, "path", os.path.abspath(os.fspath(self.path)))
        object.__setattr__(self, "block_bytes", int(self.block_bytes))


@dataclass(frozen=True)
class ClusterLayout:
    """A :class:`ClusterTable` cut into its parts once (:func:`cluster_layout`): the header, the parts and each
    part's record count, from the table's structure alone. A release counts the rows from it (step 1) and reads the
    same parts (step 3), so a CSV is scanned twice on the cluster, not three times."""

    table: ClusterTable
    header: tuple[str, ...]
    parts: tuple[tuple[Any, ...], ...]
    rows: tuple[int, ...]


def cluster_layout(table: ClusterTable | ClusterLayout, *, delimiter: str = ",") -> ClusterLayout:
    """``table`` cut into its parts, each with its record count (a CSV's counted on the cluster; a columnar file's
    from its metadata); a layout already cut is returned as it is. Structure only: no value decides anything."""
    if isinstance(table, ClusterLayout):
        return table
    if not isinstance(table, ClusterTable):
        raise TypeError(f"table must be a ClusterTable, got {type(table).__name__}")
    header, parts, rows = _parts(table, delimiter)
    if columnar_format(table.path) is not None and table.scheduler is not None:
        _run([], table.scheduler)  # metadata is read here: ask the scheduler now, so that one not answering is
        #                            refused in step 1, before any budget is planned, as a CSV's count is
    return ClusterLayout(table, tuple(header), tuple(parts), tuple(int(r) for r in rows))


def _is_dask_frame(data: Any) -> bool:
    return type(data).__module__.split(".", 1)[0] == "dask" and hasattr(data, "to_delayed") \
        and hasattr(data, "columns")


def is_cluster_source(data: Any) -> bool:
    """Whether ``data`` is read on a cluster: a :class:`ClusterTable`, its :class:`ClusterLayout` or a Dask
    DataFrame."""
    return isinstance(data, (ClusterTable, ClusterLayout)) or _is_dask_frame(data)


def holds_lines(data: Any) -> bool:
    """Whether ``data``'s records are lines of a CSV (a CSV path, or a :class:`ClusterTable` of one), so that a
    category holding a line break must be refused (:func:`dpcd.release.tables.check_line_labels`)."""
    if isinstance(data, ClusterLayout):
        data = data.table
    if isinstance(data, ClusterTable):
        data = data.path
    return isinstance(data, (str, os.PathLike)) and columnar_format(data) is None


def _dask() -> Any:
    try:
        import dask
    except ImportError:  # pragma: no cover - the extra is installed wherever the tests run
        raise ImportError('reading a table on a cluster needs Dask: pip install "dpcd[dask]"') from None
    return dask


def _run(tasks: list[Any], scheduler: str | None, on_done: Callable[[Any], None] | None = None) -> list[Any]:
    """The results of Dask ``tasks`` in their order: on the scheduler at ``scheduler``, else on the active client,
    else on Dask's local threads; ``on_done`` is told each result as it arrives."""
    dask = _dask()
    client, owned = None, False
    try:
        from distributed import Client, as_completed, get_client
    except ImportError:  # pragma: no cover
        Client = None
    if Client is not None:
        if scheduler is not None:
            try:
                client, owned = Client(scheduler), True
            except (OSError, TimeoutError) as error:
                raise RuntimeError(f"no Dask scheduler answered at {scheduler!r} ({error}); start one (`dask "
                                   "scheduler`, then `dask worker ADDRESS` on each machine) or check the address") \
                    from None
        else:
            try:
                client = get_client()
            except ValueError:
                client = None
    elif scheduler is not None:  # pragma: no cover
        raise ImportError('a scheduler address needs dask.distributed: pip install "dpcd[dask]"')
    try:
        if client is None:
            results = list(dask.compute(*tasks, scheduler="threads"))
            for result in results:
                if on_done is not None:
                    on_done(result)
            return results
        futures = client.compute(tasks)
        for future in as_completed(futures):
            if on_done is not None:
                on_done(future.result())
        return client.gather(futures)
    finally:
        if owned:
            client.close()


# The parts of a table: (kind, path, index or byte range, first line number); built from structure alone


def _count_block(path: str, start: int, end: int, delimiter: str) -> tuple[int, int]:
    """A CSV range's (records, lines), counted as :func:`~dpcd.release.tables.table_shape` counts."""
    return count_records(block_lines(path, start, end), delimiter)


def _csv_parts(table: ClusterTable, delimiter: str) -> tuple[list[str], list[tuple[Any, ...]], list[int]]:
    header, start = csv_header(table.path, delimiter)
    path = Path(table.path)
    size = path.stat().st_size
    ranges = [(begin, min(begin + table.block_bytes, size)) for begin in range(start, size, table.block_bytes)]
    ranges = ranges or [(start, start)]
    dask = _dask()
    counts = _run([dask.delayed(_count_block)(os.fspath(path), a, b, delimiter) for a, b in ranges], table.scheduler)
    parts, first = [], 2
    for (a, b), (_, lines) in zip(ranges, counts):
        parts.append(("csv", os.fspath(path), a, b, first))
        first += lines
    return header, parts, [records for records, _ in counts]


def _parts(table: ClusterTable, delimiter: str) -> tuple[list[str], list[tuple[Any, ...]], list[int]]:
    """The table's header, its parts and each part's record count, from its structure alone."""
    if columnar_format(table.path) is None:
        return _csv_parts(table, delimiter)
    return columnar_pieces(table.path)


def _part_chunks(part: tuple[Any, ...], header: list[str], delimiter: str, rows: int) -> Iterator[pd.DataFrame]:
    """One part's records in chunks of at most ``rows``, read by the one-machine path's rules."""
    if part[0] == "csv":
        _, path, start, end, first = part
        yield from csv_chunks(enumerate(block_lines(path, start, end), start=first), header, delimiter, rows)
    else:
        yield from columnar_piece_chunks(part, header, rows)


def _encode_part(part: tuple[Any, ...], header: list[str], delimiter: str, view: Schema, schema: Schema,
                 counted: bool) -> tuple[Any, dict[str, Any] | None]:
    """A worker's task: one part read and encoded (:func:`~dpcd.release.tables.encode_chunks`)."""
    return encode_chunks(_part_chunks(part, header, delimiter, CHUNK_ROWS), view, schema, counted=counted)


def _encode_partition(frame: pd.DataFrame, view: Schema, schema: Schema,
                      counted: bool) -> tuple[Any, dict[str, Any] | None]:
    """A worker's task: one partition of a Dask DataFrame encoded as the in-memory path encodes a DataFrame."""
    return encode_chunks(read_chunks(frame), view, schema, counted=counted)


def _partition_shape(frame: pd.DataFrame) -> tuple[int, tuple[str, ...]]:
    """A worker's task: a partition's number of rows and its column names (as text): its structure only."""
    return len(frame), tuple(str(name) for name in frame.columns)


def cluster_shape(data: Any, *, delimiter: str = ",") -> tuple[list[str], int]:
    """The header's names and the number of records of a cluster source (:func:`is_cluster_source`), by
    :func:`~dpcd.release.tables.table_shape`'s rule: a CSV's non-blank lines, counted part by part on the cluster;
    a columnar file's metadata, read here; a Dask DataFrame's partition lengths, which Dask computes from its
    partitions (so a Dask DataFrame's values are computed twice; nothing but the lengths and column names is kept),
    each partition's columns checked against the frame's so that a partition that differs is refused here, before
    any budget is planned. Structure: no value decides anything here."""
    if _is_dask_frame(data):
        header = [str(name) for name in data.columns]
        if len(set(header)) != len(header):
            raise DataPreparationError("the Dask DataFrame's column names must be unique (as text)")
        dask = _dask()
        shapes = _run([dask.delayed(_partition_shape)(part) for part in data.to_delayed()], None)
        for index, (_, columns) in enumerate(shapes):
            if list(columns) != header:
                raise DataPreparationError(f"partition {index} of the Dask DataFrame has the columns {list(columns)}, "
                                           f"not the frame's {header}; give every partition the frame's columns")
        return header, int(sum(rows for rows, _ in shapes))
    layout = cluster_layout(data, delimiter=delimiter)
    return list(layout.header), int(sum(layout.rows))


def encode_on_cluster(data: Any, view: Schema, schema: Schema, *, delimiter: str = ",",
                      on_chunk: Callable[[int], None] | None = None,
                      counted: bool = False) -> tuple[pd.DataFrame | CountedRows, dict[str, Any] | None]:
    """What :func:`~dpcd.release.tables.encode_chunks` returns for the whole table, computed part by part on the
    cluster: the encoded table (parts joined in the table's order) and the quality counts merged in that order
    (None when a part's cannot be made). ``on_chunk(records)`` is told each part's size as it arrives (on Dask's
    local threads: all at the end). ``counted``: each worker returns its part's distinct rows with counts, which is
    all that travels back (the statistic an algorithm that :func:`~dpcd.registry.reads_counts` needs), combined
    here. A :class:`ClusterLayout` is read as cut; a :class:`ClusterTable` is cut first."""
    dask = _dask()
    if _is_dask_frame(data):
        tasks = [dask.delayed(_encode_partition)(part, view, schema, counted) for part in data.to_delayed()]
        scheduler = None
    else:
        layout = cluster_layout(data, delimiter=delimiter)
        header = list(layout.header)
        tasks = [dask.delayed(_encode_part)(part, header, delimiter, view, schema, counted) for part in layout.parts]
        scheduler = layout.table.scheduler
    results = _run(tasks, scheduler, None if on_chunk is None else lambda result: on_chunk(result[0].shape[0]))
    encoded = [frame for frame, _ in results]
    counts = None
    if all(part is not None for _, part in results):
        for _, part in results:
            counts = part if counts is None else merge_quality(counts, part)
    return join_encoded(encoded), counts

"""A release reads its table in chunks, from CSV, Parquet or Arrow IPC / Feather files or folders of parts, and the
release is the same whatever the form of the same records and whatever the chunk size."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as parquet
import pytest

import dpcd
import dpcd.release.tables as tables
from dpcd.datasets import load_bnlearn
from dpcd.release.tables import (
    data_quality,
    encode_table,
    merge_quality,
    quality_counts,
    quality_lines,
    read_chunks,
    read_table,
    table_shape,
)
from dpcd.schema import DataPreparationError, Schema

MESSY = ("\ufeffa,b\r\n1,x\r\n\n2,3,4\n  \n5,\"y\n,,\n6\n7,z\xff\n8,y\n").encode("utf-8", errors="surrogateescape")


def _old_lines(data: bytes) -> list[str]:
    """The line rule as the reader had it when it held the whole file: decode, split at \\n, drop one \\r."""
    text = data.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


@pytest.mark.parametrize("data", [MESSY, b"", b"a\n", b"a\n\n", b"a\r\nb", b"a\n\xe2\x82\nb\xc3\n\xa9\n", b"\r\r\n\n"])
def test_the_streamed_lines_are_the_lines_of_the_whole_file(tmp_path, data):
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    assert list(tables._iter_lines(path)) == _old_lines(data)


@pytest.mark.parametrize("rows", [1, 2, 3, 7, 1000])
def test_chunks_of_a_csv_are_read_table_in_pieces(tmp_path, rows):
    path = tmp_path / "t.csv"
    path.write_bytes(MESSY)
    whole = read_table(path)
    chunks = list(read_chunks(path, rows=rows))
    assert all(len(chunk) <= rows for chunk in chunks)
    joined = pd.concat(chunks, ignore_index=True)
    pd.testing.assert_frame_equal(joined, whole)
    assert sum(chunk.attrs["blank_lines"] for chunk in chunks) == whole.attrs["blank_lines"] == 2
    assert [m for chunk in chunks for m in chunk.attrs["malformed_lines"]] == whole.attrs["malformed_lines"]
    assert table_shape(path) == (["a", "b"], len(whole))
    schema = Schema.from_json({"columns": {"a": {"type": "numeric", "lower": 0, "upper": 6},
                                           "b": {"type": "categorical", "categories": ["x", "y"]}}})
    counts = [quality_counts(chunk, schema) for chunk in chunks]
    merged = counts[0]
    for part in counts[1:]:
        merged = merge_quality(merged, part)
    assert quality_lines(merged, schema) == data_quality(whole, schema)


def test_read_chunks_refuses_a_chunk_size_that_is_not_a_positive_integer(tmp_path):
    with pytest.raises(ValueError, match="rows must be a positive integer"):
        next(read_chunks(pd.DataFrame({"a": [1]}), rows=0))


def _forms(frame: pd.DataFrame, folder) -> dict[str, object]:
    """The same records as a DataFrame, a CSV, a Parquet file, a folder of three Parquet parts and a Feather file."""
    csv = folder / "t.csv"
    frame.to_csv(csv, index=False)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    parquet.write_table(table, folder / "t.parquet", row_group_size=333)
    parts = folder / "parts"
    parts.mkdir()
    bounds = np.linspace(0, len(frame), 4).astype(int)
    for i, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:])):
        parquet.write_table(table.slice(start, stop - start), parts / f"part-{i}.parquet")
    feather.write_feather(table, folder / "t.feather", chunksize=250)
    return {"frame": frame, "csv": csv, "parquet": folder / "t.parquet", "folder": parts,
            "feather": folder / "t.feather"}


def test_one_release_from_every_form_and_every_chunk_size(tmp_path, monkeypatch):
    sample = load_bnlearn("asia", 1_200, rng=3)
    schema = sample.schema()
    frame = sample.data.astype(str)  # labels "0", "1" as a file holds them
    forms = _forms(frame, tmp_path)
    outputs = {}
    for chunk_rows in (100_000, 97):
        monkeypatch.setattr(tables, "CHUNK_ROWS", chunk_rows)
        for name, data in forms.items():
            assert table_shape(data) == (list(frame.columns), 1_200)
            out = tmp_path / f"out-{name}-{chunk_rows}"
            dpcd.discover(data, schema=schema, epsilon=1.0, algorithm="marginal_pc", rng=11, progress=False,
                          out=out, options=dpcd.ReleaseOptions(forecast_repetitions=0))
            outputs[name, chunk_rows] = ((out / "graph.json").read_bytes(), (out / "privacy.json").read_bytes())
    assert len(outputs) == 10
    first = next(iter(outputs.values()))
    assert all(value == first for value in outputs.values()), sorted(k for k, v in outputs.items() if v != first)


def test_read_chunks_of_a_dataframe_use_the_default_chunk_size_at_call_time(monkeypatch):
    monkeypatch.setattr(tables, "CHUNK_ROWS", 2)
    frame = pd.DataFrame({"a": range(5)})
    assert [len(c) for c in read_chunks(frame)] == [2, 2, 1]


def test_a_null_in_a_parquet_column_of_integers_is_one_missing_cell_not_a_column_of_floats(tmp_path):
    # a column of integers with a null: pandas would read it as floats (3.0), which a label "3" does not match;
    # read cell by cell it stays 3, and the null is one missing cell
    schema = Schema.from_json({"columns": {"a": {"type": "categorical", "categories": ["1", "3"]},
                                           "b": {"type": "categorical", "categories": ["0", "1"]}}})
    table = pa.table({"a": pa.array([3, None, 1, 3], type=pa.int64()), "b": pa.array([0, 1, 1, 0])})
    parquet.write_table(table, tmp_path / "t.parquet")
    chunk = next(read_chunks(tmp_path / "t.parquet"))
    assert chunk["a"].tolist() == [3, None, 1, 3]
    assert encode_table(chunk, schema)["a"].tolist() == [1, 0, 0, 1]  # the null becomes the fill, "1"
    assert data_quality(chunk, schema) == ["1 missing cell of a became the fill '1'"]


def test_a_folder_must_hold_columnar_parts_of_one_format_and_one_header(tmp_path):
    table = pa.table({"a": [1, 2], "b": [0, 1]})
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    parquet.write_table(table, mixed / "p0.parquet")
    feather.write_feather(table, mixed / "p1.feather")
    with pytest.raises(DataPreparationError, match="of one format"):
        table_shape(mixed)
    other = tmp_path / "other"
    other.mkdir()
    parquet.write_table(table, other / "p0.parquet")
    parquet.write_table(pa.table({"a": [1], "c": [0]}), other / "p1.parquet")
    with pytest.raises(DataPreparationError, match="has columns"):
        table_shape(other)
    with pytest.raises(FileNotFoundError):
        table_shape(tmp_path / "absent.parquet")
    (tmp_path / "legacy.feather").write_bytes(b"FEA1" + b"\0" * 16)
    with pytest.raises(DataPreparationError, match="Arrow IPC"):
        table_shape(tmp_path / "legacy.feather")

"""A release read on a Dask cluster — a CSV in byte ranges, a Parquet file by row groups, a Feather file by record
batches, a folder by its files, a Dask DataFrame by its partitions — is the release of the same records read on one
machine, byte for byte, whatever the parts; tested on a local cluster of two worker processes started here."""

from __future__ import annotations

import json

import dask.dataframe as dd
import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as parquet
import pytest
from distributed import Client, LocalCluster

import dpcd
import dpcd.release.tables as tables
from dpcd.cli import main
from dpcd.datasets import load_bnlearn
from dpcd.release.cluster import ClusterTable, cluster_shape, encode_on_cluster
from dpcd.release.tables import encode_chunks, quality_lines, read_chunks, read_table, table_shape
from dpcd.schema import DataPreparationError, Schema
from test_streaming import MESSY, _forms


@pytest.fixture(scope="module")
def cluster():
    """A local Dask cluster of two single-threaded worker processes, closed after this module's tests."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local:
        yield local


MESSY_SCHEMA = Schema.from_json({"columns": {"a": {"type": "numeric", "lower": 0, "upper": 6},
                                             "b": {"type": "categorical", "categories": ["x", "y"]}}})


@pytest.mark.parametrize("block_bytes", [1, 2, 3, 5, 8, 13, 10_000])
def test_byte_ranges_of_a_csv_give_its_records_and_line_numbers_exactly_once(tmp_path, block_bytes):
    # no scheduler and no client: Dask's local threads run the same tasks
    path = tmp_path / "t.csv"
    path.write_bytes(MESSY)
    table = ClusterTable(path, block_bytes=block_bytes)
    assert cluster_shape(table) == table_shape(path)
    encoded, counts = encode_on_cluster(table, MESSY_SCHEMA, MESSY_SCHEMA)
    expected, expected_counts = encode_chunks(read_chunks(path), MESSY_SCHEMA, MESSY_SCHEMA)
    pd.testing.assert_frame_equal(encoded, expected)
    assert counts["malformed"] == read_table(path).attrs["malformed_lines"] != []  # the file's own line numbers
    assert quality_lines(counts, MESSY_SCHEMA) == quality_lines(expected_counts, MESSY_SCHEMA)


def test_a_header_only_file_and_a_file_without_a_last_newline(tmp_path):
    schema = Schema.categorical([2, 2], names=["a", "b"])
    for text in ("a,b\n", "a,b", "a,b\n0,1\n1,0"):
        path = tmp_path / "t.csv"
        path.write_text(text)
        encoded, _ = encode_on_cluster(ClusterTable(path, block_bytes=2), schema, schema)
        pd.testing.assert_frame_equal(encoded, encode_chunks(read_chunks(path), schema, schema)[0])


def _release(data, schema, out) -> tuple[bytes, bytes]:
    dpcd.discover(data, schema=schema, epsilon=1.0, algorithm="marginal_pc", rng=11, progress=False, out=out,
                  options=dpcd.ReleaseOptions(forecast_repetitions=0))
    return (out / "graph.json").read_bytes(), (out / "privacy.json").read_bytes()


def test_one_release_in_memory_streamed_and_on_a_two_worker_cluster(tmp_path, cluster, monkeypatch):
    sample = load_bnlearn("asia", 1_200, rng=3)
    schema = sample.schema()
    frame = sample.data.astype(str)
    forms = _forms(frame, tmp_path)
    monkeypatch.setattr(tables, "CHUNK_ROWS", 97)  # this process's chunks only: each worker process has its own
    expected = _release(forms["frame"], schema, tmp_path / "out-memory")
    assert _release(forms["csv"], schema, tmp_path / "out-streamed") == expected
    address = cluster.scheduler_address
    sources = {f"csv-{size}": ClusterTable(forms["csv"], scheduler=address, block_bytes=size)
               for size in (1_000, 4_096, 10 ** 6)}
    sources |= {name: ClusterTable(forms[name], scheduler=address) for name in ("parquet", "folder", "feather")}
    for name, source in sources.items():
        assert _release(source, schema, tmp_path / f"out-{name}") == expected, name
    with Client(cluster):  # a Dask DataFrame runs on the active client
        for partitions in (1, 3, 7):
            ddf = dd.from_pandas(frame, npartitions=partitions)
            assert _release(ddf, schema, tmp_path / f"out-dask-{partitions}") == expected, partitions


def test_the_command_line_reads_on_the_scheduler_it_is_given(tmp_path, cluster, capsys):
    sample = load_bnlearn("asia", 1_200, rng=3)
    (tmp_path / "schema.json").write_text(json.dumps(sample.schema().to_json()))
    sample.data.astype(str).to_csv(tmp_path / "t.csv", index=False)
    common = ["discover", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "schema.json"), "--epsilon", "1",
              "--algorithm", "marginal_pc", "--seed", "11", "--forecast", "0", "--no-progress"]
    assert main([*common, "--out", str(tmp_path / "local")]) == 0
    assert main([*common, "--out", str(tmp_path / "remote"), "--scheduler", cluster.scheduler_address]) == 0
    for name in ("graph.json", "privacy.json"):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "remote" / name).read_bytes()


def test_a_cluster_read_refuses_a_bad_structure_before_any_value_is_read(tmp_path):
    schema = Schema.categorical([3, 2], names=["a", "b"])
    other = tmp_path / "other"
    other.mkdir()
    parquet.write_table(pa.table({"a": [1, 2], "b": [0, 1]}), other / "p0.parquet")
    parquet.write_table(pa.table({"a": [1], "b": [0], "c": [0]}), other / "p1.parquet")
    with pytest.raises(DataPreparationError, match="p1.parquet"):
        cluster_shape(ClusterTable(other))
    feather.write_feather(pa.table({"a": [1, 2], "c": [0, 1]}), tmp_path / "t.feather")
    out = tmp_path / "out"
    with pytest.raises(DataPreparationError, match="'b'"):
        _release(ClusterTable(tmp_path / "t.feather"), schema, out)
    assert not out.exists() or not any(out.iterdir())
    with pytest.raises(FileNotFoundError):
        cluster_shape(ClusterTable(tmp_path / "absent.csv"))
    with pytest.raises(ValueError, match="block_bytes"):
        ClusterTable(tmp_path / "t.csv", block_bytes=0)
    with pytest.raises(TypeError, match="scheduler"):
        ClusterTable(tmp_path / "t.csv", scheduler=8786)
    with pytest.raises(TypeError, match="scheduler"):
        ClusterTable(tmp_path / "t.csv", scheduler=" ")
    good = tmp_path / "good.parquet"
    parquet.write_table(pa.table({"a": [1, 2] * 60, "b": [0, 1] * 60}), good)
    (tmp_path / "truncated.parquet").write_bytes(good.read_bytes()[:40])
    with pytest.raises(DataPreparationError, match="truncated.parquet"):
        cluster_shape(ClusterTable(tmp_path / "truncated.parquet"))
    with pytest.raises(DataPreparationError, match="unique"):
        cluster_shape(dd.from_pandas(pd.DataFrame([[0, 1]], columns=[1, "1"]), npartitions=1))


def test_a_relative_path_is_made_absolute_for_the_workers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    table = ClusterTable("t.csv")
    assert table.path == str(tmp_path / "t.csv")


def test_a_table_that_changes_between_its_count_and_its_read_is_refused(tmp_path, monkeypatch):
    sample = load_bnlearn("asia", 1_200, rng=3)
    path = tmp_path / "t.csv"
    sample.data.astype(str).to_csv(path, index=False)
    real = tables.read_chunks

    def growing(data, **kwargs):  # a writer appends records after the structure was counted
        with open(path, "a") as handle:
            handle.write("0,0,0,0,0,0,0,0\n" * 5)
        return real(data, **kwargs)

    monkeypatch.setattr("dpcd.release.api.read_chunks", growing)
    out = tmp_path / "out"
    with pytest.raises(DataPreparationError, match="changed while it was read"):
        _release(path, sample.schema(), out)
    assert not out.exists() or not any(out.iterdir())


def test_a_csv_is_cut_and_counted_once_and_its_read_uses_those_parts(tmp_path, monkeypatch):
    import dpcd.release.cluster as cluster_module

    sample = load_bnlearn("asia", 1_200, rng=3)
    path = tmp_path / "t.csv"
    sample.data.astype(str).to_csv(path, index=False)
    table = ClusterTable(path, block_bytes=4_000)  # no scheduler and no client: Dask's local threads, in-process
    layout = cluster_module.cluster_layout(table)
    assert len(layout.parts) > 2 and sum(layout.rows) == 1_200 and list(layout.header) == list(sample.data.columns)
    counted = []
    real = cluster_module._count_block

    def spy(*args):
        counted.append(args[1:3])
        return real(*args)

    monkeypatch.setattr(cluster_module, "_count_block", spy)
    one = _release(table, sample.schema(), tmp_path / "one")
    assert sorted(counted) == sorted((part[2], part[3]) for part in layout.parts)  # each range counted once
    monkeypatch.undo()
    assert one == _release(path, sample.schema(), tmp_path / "two")  # the release of the same records


def test_a_scheduler_that_does_not_answer_is_refused_in_step_one_for_a_columnar_table_too(tmp_path):
    import dask

    import dpcd.release.cluster as cluster_module

    good = tmp_path / "t.parquet"
    parquet.write_table(pa.table({"a": [1, 2] * 60, "b": [0, 1] * 60}), good)
    table = ClusterTable(good, scheduler="tcp://127.0.0.1:9")  # the discard port: nothing listens
    out = tmp_path / "out"
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        with pytest.raises(RuntimeError, match="no Dask scheduler answered"):
            cluster_module.cluster_layout(table)
        with pytest.raises(RuntimeError, match="tcp://127.0.0.1:9"):
            _release(table, Schema.categorical([3, 2], names=["a", "b"]), out)
    assert not out.exists() or not any(out.iterdir())


def test_a_dask_partition_whose_columns_differ_is_refused_in_step_one(tmp_path):
    import dask

    first = pd.DataFrame({"a": [0, 1, 2], "b": [0, 1, 0]})
    second = pd.DataFrame({"a": [1, 2], "c": [0, 1]})
    frame = dd.from_delayed([dask.delayed(first.copy)(), dask.delayed(second.copy)()], meta=first.iloc[:0],
                            verify_meta=False)
    with pytest.raises(DataPreparationError, match="partition 1"):
        cluster_shape(frame)
    out = tmp_path / "out"
    with pytest.raises(DataPreparationError, match="partition 1"):
        _release(frame, Schema.categorical([3, 2], names=["a", "b"]), out)
    assert not out.exists() or not any(out.iterdir())

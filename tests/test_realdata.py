"""Real data shipped in data/: checksums, shapes, graph, pairs, error handling."""

from __future__ import annotations

import gzip
import hashlib
import shutil

import networkx as nx
import numpy as np
import pytest

from dpcd.datasets import Dataset
from dpcd_papers import realdata


@pytest.fixture(autouse=True)
def _default_data_dir(monkeypatch):
    monkeypatch.delenv(realdata.DATA_DIR_ENV, raising=False)


@pytest.mark.parametrize("relpath", sorted(realdata.SHA256))
def test_shipped_files_match_their_checksums(relpath):
    path = realdata.data_dir() / relpath
    assert path.is_file(), relpath
    with gzip.open(path, "rb") as handle:
        assert hashlib.sha256(handle.read()).hexdigest() == realdata.SHA256[relpath]


def test_adult_shape_codes_and_categories():
    dataset = realdata.load_adult()
    assert isinstance(dataset, Dataset)
    assert dataset.kind == "discrete" and dataset.dag is None
    data = dataset.data
    assert data.shape == (48_842, 14)
    assert list(data.columns) == realdata.ADULT_VARIABLES
    assert "education-num" not in data.columns and "income" in data.columns
    assert not data.isna().any().any()
    for column in data:
        levels = dataset.categories[column]
        assert 2 <= len(levels) <= 4, column  # paper 000: two to four categories
        assert data[column].dtype == np.int64
        assert data[column].min() >= 0 and data[column].max() == len(levels) - 1
    assert set(dataset.meta["discretisation"]) == set(data.columns)
    # income labels of adult.test carry a trailing '.' in the file; they must merge
    income = data["income"].map(dict(enumerate(dataset.categories["income"])))
    assert income.value_counts().to_dict() == {"<=50K": 37_155, ">50K": 11_687}


def test_adult_raw_and_full_domain():
    raw = realdata.load_adult_raw()
    assert raw.shape == (48_842, 16)
    assert raw["split"].value_counts().to_dict() == {"train": 32_561, "test": 16_281}
    assert (raw == "?").sum()[["workclass", "occupation", "native-country"]].tolist() == [
        2_799,
        2_809,
        857,
    ]
    full = realdata.load_adult(discretise=False)
    assert full.data.shape == (48_842, 14)
    assert len(full.categories["education"]) == 16
    assert "?" in full.categories["occupation"]
    # decoding the full-domain codes gives back the original values
    decoded = full.data["age"].map(dict(enumerate(full.categories["age"]))).astype(int)
    assert (decoded.to_numpy() == raw["age"].to_numpy()).all()


def test_sachs_columns_and_consensus_graph():
    dataset = realdata.load_sachs()
    assert dataset.kind == "continuous"
    assert dataset.data.shape == (7_466, 11)
    assert list(dataset.data.columns) == realdata.SACHS_COLUMNS
    dag = dataset.dag
    assert isinstance(dag, nx.DiGraph)
    assert set(dag.nodes) == set(dataset.data.columns)
    assert dag.number_of_edges() == 18
    assert dag.has_edge("PKA", "praf") and dag.has_edge("pmek", "p44/42")
    assert dataset.meta["acyclic"] is False
    assert dataset.meta["directed_cycles"] == [["PIP2", "PIP3", "plcg"]]


def test_tuebingen_pairs():
    pairs = realdata.load_tuebingen_pairs()
    assert len(pairs) == 99
    assert list(pairs["pair_id"]) == [f"pair{i}" for i in range(1, 100)]
    assert list(pairs.columns) == ["pair_id", "x", "y", "n", "direction", "weight"]
    for x, y, n in pairs[["x", "y", "n"]].itertuples(index=False):
        assert x.ndim == 1 and x.shape == y.shape == (n,)
        assert np.isfinite(x).all() and np.isfinite(y).all()
    assert set(pairs["direction"]) == {"x->y"}
    assert pairs["weight"].isna().all()
    x, y, direction = realdata.tuebingen_pair(1)
    assert len(x) == len(y) == 349 and direction == "x->y"
    x[0] = -1.0  # a returned copy; the cached table must not change
    assert realdata.tuebingen_pair("pair1")[0][0] == 205.0
    with pytest.raises(ValueError, match="pair_id"):
        realdata.tuebingen_pair(100)


def test_corrupted_copy_raises_checksum_error(tmp_path, monkeypatch):
    source = realdata.data_dir()
    (tmp_path / "adult").mkdir()
    shutil.copy(source / "adult/adult.data.gz", tmp_path / "adult/adult.data.gz")
    with gzip.open(source / "adult/adult.test.gz", "rb") as handle:
        content = bytearray(handle.read())
    content[200] = ord("9") if content[200] != ord("9") else ord("8")  # one changed digit
    with gzip.open(tmp_path / "adult/adult.test.gz", "wb") as handle:
        handle.write(bytes(content))
    monkeypatch.setenv(realdata.DATA_DIR_ENV, str(tmp_path))
    with pytest.raises(realdata.DataChecksumError, match="adult.test"):
        realdata.load_adult()
    # a damaged gzip stream is reported the same way
    (tmp_path / "sachs").mkdir()
    blob = bytearray((source / "sachs/cyto_full_data.csv.gz").read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    (tmp_path / "sachs/cyto_full_data.csv.gz").write_bytes(bytes(blob))
    with pytest.raises(realdata.DataChecksumError, match="cyto_full_data"):
        realdata.load_sachs()


def test_missing_directory_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv(realdata.DATA_DIR_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="DPCD_DATA_DIR") as info:
        realdata.load_sachs()
    assert "cyto_full_data.csv.gz" in str(info.value)
    with pytest.raises(FileNotFoundError, match="DPCD_DATA_DIR"):
        realdata.load_tuebingen_pairs()
    with pytest.raises(FileNotFoundError, match="adult.data"):
        realdata.load_adult()


def test_bad_arguments():
    with pytest.raises(TypeError, match="discretise"):
        realdata.load_adult(discretise="yes")
    with pytest.raises(TypeError, match="pair_id"):
        realdata.tuebingen_pair(1.5)

"""Speed without changing a result: distinct rows with multiplicities, compact codes, pairs in worker processes.

Each optimisation must give the same skeleton, separating sets, test counts and p-values as the plain run,
for every worker count (issue: speed and scale). Run times live in ``tests/benchmarks``, never here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcd.ci import CITester
from dpcd.ci.discrete import contingency_table, distinct_rows
from dpcd.datasets import load_bnlearn
from dpcd.discovery.pc import PValueDecider, pc, pc_skeleton
from dpcd.validation import as_code_matrix


@pytest.fixture(scope="module")
def alarm():
    return load_bnlearn("alarm", 20_000, rng=0).data


def _same(a, b):
    assert a.skeleton == b.skeleton
    assert a.sepsets == b.sepsets
    assert a.tests_per_order == b.tests_per_order
    assert set(a.cpdag.edges) == set(b.cpdag.edges)


@pytest.mark.parametrize("ci_test", ["g2", "chi2", "kendall"])
def test_distinct_rows_give_the_same_p_values(alarm, ci_test):
    plain = CITester(alarm, ci_test, distinct=False)
    weighted = CITester(alarm, ci_test, distinct=True)
    assert weighted.weights is not None and len(weighted.data) < len(alarm)
    assert int(weighted.weights.sum()) == len(alarm)
    rng = np.random.default_rng(1)
    for _ in range(40):
        x, y, *S = rng.choice(alarm.shape[1], size=2 + int(rng.integers(0, 4)), replace=False).tolist()
        a, b = plain(x, y, tuple(S)), weighted(x, y, tuple(S))
        assert a.statistic == b.statistic and a.p_value == b.p_value and a.dof == b.dof  # bit for bit
        assert np.array_equal(plain.table(x, y, S), weighted.table(x, y, S))


@pytest.mark.parametrize("n_jobs", [1, 2, 3, -1])
@pytest.mark.parametrize("distinct", [False, True])
def test_pc_is_the_same_for_every_worker_count_and_row_form(alarm, n_jobs, distinct):
    reference = pc(alarm, ci_test="g2", alpha=0.01, max_order=3, distinct=False, n_jobs=1)
    other = pc(alarm, ci_test="g2", alpha=0.01, max_order=3, distinct=distinct, n_jobs=n_jobs)
    _same(reference, other)
    assert other.info["n_computed"] == reference.info["n_computed"]
    assert other.info["distinct_rows"] is distinct


def test_distinct_rows_keep_every_row_once_with_its_count():
    codes = np.array([[0, 1, 2], [1, 0, 0], [0, 1, 2], [2, 2, 1], [1, 0, 0], [0, 1, 2]])
    rows, counts = distinct_rows(codes, [3, 3, 3])
    assert rows.tolist() == [[0, 1, 2], [1, 0, 0], [2, 2, 1]] and counts.tolist() == [3, 2, 1]
    wide = np.random.default_rng(0).integers(0, 50, size=(500, 20))  # 50**20 > 2**62: several key words
    rows, counts = distinct_rows(wide, [50] * 20)
    assert len(rows) == len(np.unique(wide, axis=0)) and counts.sum() == 500
    assert np.array_equal(contingency_table(wide, 0, 1, (2,), np.full(20, 50)),
                          contingency_table(rows, 0, 1, (2,), np.full(20, 50), counts))


def test_codes_are_held_compactly_without_an_int64_copy():
    frame = pd.DataFrame(np.random.default_rng(0).integers(0, 3, size=(1000, 4)), columns=list("abcd"))
    codes = as_code_matrix(frame)
    assert codes.dtype == np.uint8 and codes.flags.f_contiguous and np.array_equal(codes, frame.to_numpy())
    assert CITester(frame, "g2").data.dtype == np.uint8
    assert as_code_matrix(np.array([[0, 300], [1, 2], [2, 1]])).dtype == np.uint16
    with pytest.raises(ValueError, match="non-negative"):
        as_code_matrix(np.array([[0, -1], [1, 2], [2, 1]]))
    with pytest.raises(TypeError, match="integer-valued"):
        as_code_matrix(np.array([[0.5, 1.0], [1.0, 2.0], [2.0, 1.0]]))


def test_workers_are_refused_for_deciders_that_draw_noise():
    from dpcd.discovery.priv_pc import SieveKendallDecider

    assert PValueDecider.parallel_safe and not SieveKendallDecider.parallel_safe
    with pytest.raises(ValueError, match="parallel-safe"):
        pc_skeleton(4, SieveKendallDecider(None, None), n_jobs=2)
    with pytest.raises(ValueError, match="n_jobs"):
        pc(np.zeros((10, 3), dtype=int), n_jobs=0)
    with pytest.raises(ValueError, match="discrete tests only"):
        pc(np.random.default_rng(0).normal(size=(50, 3)), ci_test="fisherz", distinct=True)


def test_pc_runs_unchanged_on_a_dask_cluster(alarm):
    distributed = pytest.importorskip("distributed")
    import joblib

    reference = pc(alarm, ci_test="g2", alpha=0.01, max_order=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster), joblib.parallel_backend("dask"):
            on_cluster = pc(alarm, ci_test="g2", alpha=0.01, max_order=2, n_jobs=-1)
    _same(reference, on_cluster)
    assert on_cluster.info["n_computed"] == reference.info["n_computed"]


def test_a_calibration_is_stored_and_read_back_across_processes(tmp_path, monkeypatch):
    import subprocess
    import sys

    monkeypatch.setenv("DPCD_CACHE_DIR", str(tmp_path))
    script = ("from dpcd.registry import calibrate, ALGORITHMS; import json; "
              "c = calibrate(ALGORITHMS['priv_pc'], p=8, n=10_000, epsilon=1.0, delta=1e-6); "
              "print(json.dumps(c.kwargs))")
    first = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    stored = list((tmp_path / "calibration").glob("*.json"))
    assert len(stored) == 1
    second = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert first == second
    monkeypatch.setenv("DPCD_CACHE_DIR", "")  # empty: nothing kept on disk
    from dpcd.privacy.calibration import cache_folder

    assert cache_folder() is None

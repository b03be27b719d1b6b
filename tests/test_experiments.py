"""run_grid: seeding, tidy output, caching, local processes and a Dask cluster."""

from __future__ import annotations

import functools
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

from dpcd_papers.experiments import (
    DASK_SCHEDULER_ENV,
    cell_seed,
    expand_grid,
    run_grid,
    stable_hash,
    timed,
)

# Functions run in worker processes live at module level so they pickle.


def noisy(a: int, b: float, rng: np.random.Generator) -> dict:
    return {"x": float(rng.normal()), "product": a * b}


def two_rows(method: str, rng: np.random.Generator) -> list[dict]:
    u = float(rng.uniform())
    return [{"algorithm": "A", "score": u}, {"algorithm": "B", "score": 1.0 - u, "method_len": len(method)}]


def counted(a: int, counter: str, rng: np.random.Generator, fail_on: int | None = None) -> dict:
    """Appends one line per call to ``counter`` (calls happen in other processes)."""
    with open(counter, "a", encoding="utf-8") as handle:
        handle.write(f"{a}\n")
    if fail_on is not None and a == fail_on and Path(counter + ".fail").exists():
        raise RuntimeError(f"simulated crash at a={a}")
    return {"draw": int(rng.integers(1_000_000))}


def where(a: int, rng: np.random.Generator) -> dict:
    try:
        from distributed import get_worker

        worker = get_worker().address
    except (ImportError, ValueError):
        worker = "local"
    return {"draw": float(rng.normal()), "worker": worker, "pid": os.getpid()}


def calls(counter: Path) -> list[str]:
    return counter.read_text(encoding="utf-8").split() if counter.exists() else []


# --------------------------------------------------------------------------- seeding and shape


def test_tidy_frame_columns_and_rows():
    df = run_grid(noisy, {"a": [1, 2], "b": [0.5, 2.0]}, repetitions=3, seed=1, progress=False)
    assert list(df.columns) == ["a", "b", "repetition", "seed", "x", "product"]
    assert len(df) == 2 * 2 * 3
    assert df[["a", "b"]].drop_duplicates().values.tolist() == [[1, 0.5], [1, 2.0], [2, 0.5], [2, 2.0]]
    assert (df["product"] == df["a"] * df["b"]).all()
    assert df.groupby(["a", "b"])["repetition"].apply(lambda r: list(r) == [0, 1, 2]).all()


def test_same_seed_same_frame_other_seed_other_draws():
    grid = {"a": [1, 2, 3], "b": [1.0]}
    first = run_grid(noisy, grid, repetitions=2, seed=7, progress=False)
    again = run_grid(noisy, grid, repetitions=2, seed=7, progress=False)
    pd.testing.assert_frame_equal(first, again)
    other = run_grid(noisy, grid, repetitions=2, seed=8, progress=False)
    assert not np.allclose(first["x"], other["x"])
    assert first["seed"].nunique() == len(first)  # every run has its own stream


def test_adding_a_cell_does_not_change_the_others():
    small = run_grid(noisy, {"a": [1, 2], "b": [1.0]}, repetitions=2, seed=3, progress=False)
    large = run_grid(noisy, {"a": [0, 1, 2, 5], "b": [1.0, 4.0]}, repetitions=3, seed=3, progress=False)
    kept = large[(large["a"].isin([1, 2])) & (large["b"] == 1.0) & (large["repetition"] < 2)]
    pd.testing.assert_frame_equal(small.reset_index(drop=True), kept.reset_index(drop=True))


def test_seed_column_recreates_the_generator():
    df = run_grid(noisy, [{"a": 4, "b": 0.25}], repetitions=2, seed=11, progress=False)
    for row in df.itertuples():
        assert row.seed == cell_seed(11, {"a": 4, "b": 0.25}, row.repetition)
        assert row.x == np.random.default_rng(row.seed).normal()


def test_list_of_dicts_grid_and_several_rows_per_run():
    df = run_grid(two_rows, [{"method": "pc"}, {"method": "em-pc"}], repetitions=2, seed=0, progress=False)
    assert len(df) == 2 * 2 * 2
    assert df["algorithm"].tolist() == ["A", "B"] * 4
    pairs = df.groupby(["method", "repetition"])["score"].sum()
    assert np.allclose(pairs, 1.0)
    assert df.loc[df["algorithm"] == "A", "method_len"].isna().all()


def test_seed_hash_does_not_depend_on_python_hash_salt():
    params = {"network": "asia", "epsilon": 0.5, "methods": ("pc", "em-pc"), "nodes": frozenset({"x", "y", "z"})}
    code = (
        "from dpcd_papers.experiments import cell_seed, stable_hash;"
        f"p={params!r};print(cell_seed(3, p, 1), stable_hash(p))"
    )
    outputs = set()
    for salt in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": salt}
        result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        outputs.add(result.stdout.strip())
    assert outputs == {f"{cell_seed(3, params, 1)} {stable_hash(params)}"}
    # key order does not matter, the values do
    assert stable_hash({"a": 1, "b": 2}) == stable_hash({"b": 2, "a": 1})
    assert stable_hash({"a": 1}) != stable_hash({"a": 1.5})


def test_empty_grid_gives_empty_frame():
    df = run_grid(noisy, {"a": [], "b": [1.0]}, progress=False)
    assert df.empty and list(df.columns) == ["a", "b", "repetition", "seed"]


# --------------------------------------------------------------------------- caching


def test_cache_hit_skips_the_function_and_resumes_after_a_crash(tmp_path):
    counter = tmp_path / "calls.txt"
    cache = tmp_path / "cache"
    grid = {"a": [1, 2, 3, 4], "counter": [str(counter)], "fail_on": [3]}

    (tmp_path / "calls.txt.fail").touch()  # the run "crashes" at a=3
    with pytest.raises(RuntimeError, match="simulated crash") as info:
        run_grid(counted, grid, seed=5, cache_dir=cache, progress=False)
    assert any("a': 3" in note for note in getattr(info.value, "__notes__", []))
    assert calls(counter) == ["1", "2", "3"]
    assert not list(cache.rglob("*.tmp"))  # no half-written cache file

    (tmp_path / "calls.txt.fail").unlink()
    resumed = run_grid(counted, grid, seed=5, cache_dir=cache, progress=False)
    assert calls(counter) == ["1", "2", "3", "3", "4"]  # only the missing cells ran

    cached = run_grid(counted, grid, seed=5, cache_dir=cache, progress=False, n_jobs=2)
    assert len(calls(counter)) == 5  # all from the cache, no worker called
    pd.testing.assert_frame_equal(resumed, cached)
    fresh = run_grid(counted, grid, seed=5, progress=False)
    pd.testing.assert_frame_equal(fresh[["a", "draw"]], cached[["a", "draw"]])

    run_grid(counted, grid, seed=5, cache_dir=cache, cache_version="v2", progress=False)
    assert len(calls(counter)) == 5 + 4 + 4  # fresh run above + new cache version


def test_cache_key_includes_partial_arguments_and_refuses_lambdas(tmp_path):
    counter = tmp_path / "calls.txt"
    grid = {"a": [1, 2]}
    first = run_grid(functools.partial(counted, counter=str(counter)), grid, cache_dir=tmp_path / "c", progress=False)
    other = tmp_path / "other.txt"
    run_grid(functools.partial(counted, counter=str(other)), grid, cache_dir=tmp_path / "c", progress=False)
    assert calls(counter) == ["1", "2"] and calls(other) == ["1", "2"]  # different partials, no mix-up
    again = run_grid(functools.partial(counted, counter=str(counter)), grid, cache_dir=tmp_path / "c", progress=False)
    assert len(calls(counter)) == 2
    pd.testing.assert_frame_equal(first, again)
    with pytest.raises(ValueError, match="module level"):
        run_grid(lambda a, rng: {"y": a}, grid, cache_dir=tmp_path / "c", progress=False)


# --------------------------------------------------------------------------- parallel back-ends


def test_two_processes_equal_one(tmp_path):
    grid = {"a": [1, 2, 3], "b": [0.5, 1.5]}
    serial = run_grid(noisy, grid, repetitions=2, seed=2, n_jobs=1, progress=False)
    parallel = run_grid(noisy, grid, repetitions=2, seed=2, n_jobs=2, progress=False)
    pd.testing.assert_frame_equal(serial, parallel)


def test_dask_cluster_from_environment(monkeypatch):
    distributed = pytest.importorskip("distributed")
    grid = {"a": list(range(6))}
    local = run_grid(where, grid, repetitions=2, seed=4, progress=False)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        monkeypatch.setenv(DASK_SCHEDULER_ENV, cluster.scheduler_address)
        on_dask = run_grid(where, grid, repetitions=2, seed=4, progress=False)
        workers = set(cluster.scheduler_info["workers"])
    assert set(on_dask["worker"]) <= workers and len(set(on_dask["worker"])) >= 1
    assert not (on_dask["pid"] == os.getpid()).any()
    pd.testing.assert_frame_equal(local.drop(columns=["worker", "pid"]), on_dask.drop(columns=["worker", "pid"]))


# --------------------------------------------------------------------------- input checks and timed


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"grid": {"a": 3}}, TypeError, r"grid\['a'\] must be a list"),
        ({"grid": {"a": "abc"}}, TypeError, r"grid\['a'\] must be a list"),
        ({"grid": 5}, TypeError, "grid must be a dict of lists or a list of dicts"),
        ({"grid": [{"a": 1}, 2]}, TypeError, r"grid\[1\]"),
        ({"grid": {"seed": [1]}}, ValueError, "reserved"),
        ({"grid": {"a": [1]}, "repetitions": 0}, ValueError, "repetitions"),
        ({"grid": {"a": [1]}, "seed": -1}, ValueError, "seed"),
        ({"grid": {"a": [1]}, "n_jobs": 0}, ValueError, "n_jobs"),
        ({"grid": {"a": [1]}, "cache_version": 2}, TypeError, "cache_version"),
        ({"grid": {"a": [object()]}}, TypeError, "stable representation"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, error, match):
    kwargs = {"progress": False, **kwargs}
    with pytest.raises(error, match=match):
        run_grid(lambda a, rng: {"y": a}, **kwargs)


def test_bad_results_are_reported():
    with pytest.raises(TypeError, match="must return a dict"):
        run_grid(lambda a, rng: 3.0, {"a": [1]}, progress=False)
    with pytest.raises(ValueError, match="clash"):
        run_grid(lambda a, rng: {"a": 2}, {"a": [1]}, progress=False)
    with pytest.raises(TypeError, match="function must be callable"):
        run_grid("noisy", {"a": [1]}, progress=False)


def test_expand_grid_orders_cells_like_itertools_product():
    assert expand_grid({"a": [1, 2], "b": ["x", "y"]}) == [
        {"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "x"}, {"a": 2, "b": "y"}
    ]


def test_timed_returns_result_and_seconds():
    result, seconds = timed(sorted, [3, 1, 2], reverse=True)
    assert result == [3, 2, 1]
    assert isinstance(seconds, float) and seconds >= 0
    with pytest.raises(TypeError, match="fn must be callable"):
        timed(3)


# --------------------------------------------------------------------------- code fingerprint and archives

from dpcd_papers.experiments import (  # noqa: E402
    code_fingerprint,
    code_modules,
    export_cells,
    import_cells,
    read_calls,
)


def odd_values(a: int, rng: np.random.Generator) -> dict:
    return {"nan": float("nan"), "inf": -math.inf, "tuple": (a, "x", (1.5,)), "list": [a, None],
            "i64": np.int64(a), "f64": np.float64(rng.normal()), "f32": np.float32(0.25), "flag": np.bool_(True),
            "array": np.arange(3), "text": "é"}


def test_code_modules_follow_lazy_imports_reexports_and_registry_strings():
    from dpcd_papers import benchmark, pcd

    modules = code_modules(pcd.network_cell)
    assert "dpcd.datasets" in modules  # imported inside the function
    assert "dpcd.kernels" in modules and "dpcd.ci.rcit" in modules  # transitively
    assert "dpcd.discovery.em_pc" not in modules
    assert "dpcd.discovery.em_pc" in code_modules(benchmark.run_cell)  # named by the registry in a string
    assert code_fingerprint(pcd.network_cell) != code_fingerprint(benchmark.run_cell)
    assert code_fingerprint(pcd.network_cell) == code_fingerprint(functools.partial(pcd.network_cell, n=3))


def test_code_fingerprint_follows_the_source(tmp_path, monkeypatch):
    (tmp_path / "fpmod.py").write_text("def f(rng):\n    return {'v': 1}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import fpmod

    before = code_fingerprint(fpmod.f)
    (tmp_path / "fpmod.py").write_text("def f(rng):\n    return {'v': 2}\n")
    assert code_fingerprint(fpmod.f) != before


def test_interactive_function_cannot_be_cached(tmp_path):
    namespace: dict = {"__name__": "__main__"}
    exec("def f(rng):\n    return {'v': 1}\n", namespace)
    original = sys.modules["__main__"].__dict__.get("__file__")
    try:
        sys.modules["__main__"].__file__ = None  # an interactive session's main module has no file
        with pytest.raises(ValueError, match="module file"):
            code_fingerprint(namespace["f"])
        with pytest.raises(ValueError, match="module file"):
            run_grid(namespace["f"], {}, cache_dir=tmp_path, progress=False)
        assert run_grid(namespace["f"], {}, progress=False)["v"].tolist() == [1]  # without a cache it runs
    finally:
        sys.modules["__main__"].__file__ = original


def test_archive_round_trip_is_exact_and_checked(tmp_path):
    grid = {"a": [1, 2]}
    cache = tmp_path / "cache"
    first = run_grid(odd_values, grid, repetitions=2, seed=3, cache_dir=cache, progress=False)
    [call] = read_calls(cache)
    assert [t["cached"] for t in call["tasks"]] == [False] * 4 and all(t["seconds"] >= 0 for t in call["tasks"])
    archive = tmp_path / "cells.jsonl.gz"
    assert export_cells(cache, [t["key"] for t in call["tasks"]] + ["0" * 64], archive) == 4
    assert archive.read_bytes() == (export_cells(cache, [t["key"] for t in call["tasks"]], tmp_path / "b.gz")
                                    and (tmp_path / "b.gz").read_bytes())  # deterministic bytes
    other = tmp_path / "other"
    assert import_cells(archive, other) == (4, 0)
    again = run_grid(odd_values, grid, repetitions=2, seed=3, cache_dir=other, progress=False)
    assert read_calls(other)[-1]["tasks"][0]["cached"] is True
    for column in first.columns:
        for x, y in zip(first[column], again[column]):
            assert type(x) is type(y) and (repr(x) == repr(y) if not isinstance(x, np.ndarray)
                                           else np.array_equal(x, y))
    # a tampered entry (rows changed, key kept) is rejected
    import gzip
    import json as _json

    lines = gzip.decompress(archive.read_bytes()).decode().splitlines()
    entry = _json.loads(lines[1])
    entry["params"]["a"] = 99
    tampered = tmp_path / "tampered.jsonl.gz"
    tampered.write_bytes(gzip.compress(("\n".join([lines[0], _json.dumps(entry), *lines[2:]]) + "\n").encode()))
    assert import_cells(tampered, tmp_path / "third") == (3, 1)
    with pytest.raises(ValueError, match="not a grid-cells archive"):
        bad = tmp_path / "bad.gz"
        bad.write_bytes(gzip.compress(b'{"format": "x"}\n'))
        import_cells(bad, tmp_path / "fourth")


GRID_CELLS = [
    ("dpcd_papers.pc_baseline", "run_network"), ("dpcd_papers.priv_pc", "run_cell"),
    ("dpcd_papers.curate", "run_cell"), ("dpcd_papers.em_pc", "run_cell"), ("dpcd_papers.em_pc", "run_numerical_cell"),
    ("dpcd_papers.em_pc", "lapmech_null_cell"),
    ("dpcd_papers.pcd", "ci_error_cell"), ("dpcd_papers.pcd", "network_cell"), ("dpcd_papers.pcd", "sachs_cell"),
    ("dpcd_papers.pcd_gcm", "gcm_error_cell"), ("dpcd_papers.pcd_gcm", "gcm_network_cell"), ("dpcd_papers.pcd", "eq3_cell"),
    ("dpcd_papers.private_anm", "test_set_cell"), ("dpcd_papers.private_anm", "training_set_cell"),
    ("dpcd_papers.benchmark", "run_cell"), ("dpcd_papers.privacy_audit", "audit_cell"),
    ("dpcd_papers.pcd_theorems", "thm4_cell"), ("dpcd_papers.pcd_gcm", "gcm_sachs_cell"),
    ("dpcd_papers.benchmark", "diagnose_cell"),
]


def _referenced_functions(function, module) -> set:
    """``function`` and the functions of its own module it refers to, transitively."""
    import types

    seen, todo = set(), [function]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        codes = [f.__code__]
        while codes:
            code = codes.pop()
            codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
            for name in code.co_names:
                target = module.__dict__.get(name)
                if isinstance(target, types.FunctionType) and target.__module__ == module.__name__:
                    todo.append(target)
    return seen


@pytest.mark.parametrize(("module_name", "name"), GRID_CELLS)
def test_grid_cells_do_not_use_presentation_modules(module_name, name):
    """The fingerprint leaves reporting/plotting out; that is sound only while no cell function calls them."""
    import importlib
    import inspect

    from dpcd_papers.experiments import PRESENTATION_MODULES

    module = importlib.import_module(module_name)
    short = {m.rsplit(".", 1)[-1] for m in PRESENTATION_MODULES}
    for function in _referenced_functions(getattr(module, name), module):
        source = inspect.getsource(function)
        used = {word for word in short if re.search(rf"\b{word}\b", source)}
        assert not used, f"{module_name}.{function.__name__} refers to {used}, which code fingerprints leave out"


def test_notebooks_grid_functions_are_listed():
    """Every function a notebook passes to run_grid is in GRID_CELLS (so the test above covers it)."""
    notebooks = Path(__file__).resolve().parents[1] / "notebooks"
    names = {name for _, name in GRID_CELLS}
    found = set()
    for path in notebooks.glob("*.ipynb"):
        source = "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells)
        for match in re.finditer(r"run_grid(?:\(|,)\s*(?:[\w.]+\.)?(\w+),", source):
            assert match.group(1) in names, f"{path.name} runs {match.group(1)} in a grid; add it to GRID_CELLS"
            found.add(match.group(1))
    assert found == names


def test_archive_status_tells_current_results_from_earlier_code(tmp_path, monkeypatch):
    from dpcd_papers.experiments import archive_status

    (tmp_path / "statusmod.py").write_text("def f(a, rng):\n    return {'v': a}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import statusmod

    cache, archive = tmp_path / "cache", tmp_path / "cells.jsonl.gz"
    run_grid(statusmod.f, {"a": [1, 2, 3]}, cache_dir=cache, progress=False)
    keys = [task["key"] for call in read_calls(cache) for task in call["tasks"]]
    assert export_cells(cache, keys, archive) == 3
    assert archive_status(archive) == {"statusmod.f": {"entries": 3, "current": 3, "rejected": 0}}
    (tmp_path / "statusmod.py").write_text("def f(a, rng):\n    return {'v': -a}\n")
    assert archive_status(archive) == {"statusmod.f": {"entries": 3, "current": 0, "rejected": 0}}


def test_cache_refuses_source_edited_after_it_was_loaded(tmp_path, monkeypatch):
    """Results computed by the loaded code must not be filed under the fingerprint of a file edited since."""
    module_file = tmp_path / "editmod.py"
    module_file.write_text(
        "from pathlib import Path\n\n"
        "def f(a, rng, edit=''):\n"
        "    if edit and a == 2:\n"
        "        path = Path(__file__)\n"
        "        path.write_text(path.read_text() + edit)\n"
        "    return {'v': a}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import editmod

    cache = tmp_path / "cache"
    grid = {"a": [1, 2, 3]}
    assert run_grid(editmod.f, grid, cache_dir=cache, n_jobs=1, progress=False)["v"].tolist() == [1, 2, 3]
    # saved again without a change: same content, so still accepted
    stamp = module_file.stat().st_mtime_ns + 10**9
    os.utime(module_file, ns=(stamp, stamp))
    run_grid(editmod.f, {"a": [4]}, cache_dir=cache, n_jobs=1, progress=False)
    # edited while the grid runs (by cell a=2): a=1 is cached, a=2 is refused, the run stops
    with pytest.raises(RuntimeError, match="changed while the grid ran"):
        run_grid(functools.partial(editmod.f, edit="# edited\n"), grid, cache_dir=tmp_path / "c2", n_jobs=1,
                 progress=False)
    assert len(list((tmp_path / "c2").rglob("*.pkl"))) == 1
    # and any later grid of this process refuses before it starts
    with pytest.raises(RuntimeError, match="changed after this Python process loaded it"):
        run_grid(editmod.f, grid, cache_dir=cache, n_jobs=1, progress=False)
    assert run_grid(editmod.f, grid, progress=False)["v"].tolist() == [1, 2, 3]  # without a cache nothing is filed

"""Experiment grids: every configuration x repetition, seeded, parallel, cached.

:func:`run_grid` calls a function once per cell of a parameter grid and per
repetition and returns a tidy :class:`pandas.DataFrame` (one row per result).

Seeding
    Each (cell, repetition) gets its own integer seed, derived with
    :class:`numpy.random.SeedSequence` from the grid ``seed``, a SHA-256 hash of
    the cell's parameters (canonical JSON, so it is the same in every Python
    process, unlike the salted built-in ``hash``) and the repetition number.
    Adding or removing cells therefore never changes the results of the other
    cells, and ``np.random.default_rng(row.seed)`` re-creates any single run.

Parallelism
    joblib with local processes (loky) by default. When the environment
    variable ``DPCD_DASK_SCHEDULER`` holds a scheduler address
    (``tcp://host:port``), the same grid runs on that Dask cluster through
    ``joblib.parallel_backend("dask")``; the cluster's workers then set the
    degree of parallelism and ``n_jobs`` is ignored.

Caching
    With ``cache_dir``, each (cell, repetition)'s result is pickled to a file
    named by a SHA-256 of the function's qualified name (plus the arguments a
    ``functools.partial`` binds), the cell's parameters, the repetition, the
    grid seed and ``cache_version``. The key holds the function's name, not
    its code: use one ``cache_dir`` per notebook (functions of different
    notebooks may share a name) and bump ``cache_version`` whenever the code
    changes its results. Files are written by the worker as soon as the cell
    finishes, through a temporary file and ``os.replace``, so an interrupted
    run resumes where it stopped. With a Dask cluster on several machines,
    ``cache_dir`` must be on a shared file system.

Run time is measured with :func:`timed`, which returns it next to the result
instead of storing it on the result object.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import os
import pickle
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpcd.validation import check_int

from ._io import atomic_write

__all__ = ["run_grid", "timed", "expand_grid", "cell_seed", "stable_hash", "DASK_SCHEDULER_ENV"]

DASK_SCHEDULER_ENV = "DPCD_DASK_SCHEDULER"
_RESERVED = ("repetition", "seed")


# --------------------------------------------------------------------------- helpers


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float]:
    """Call ``fn(*args, **kwargs)`` and return ``(result, seconds)``.

    The wall-clock time (``time.perf_counter``) is returned beside the result,
    never attached to it.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


def _canonical(value: Any, where: str) -> Any:
    """Return a JSON-serialisable form of ``value`` that is stable across processes."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isnan(value) or math.isinf(value):
            return {"__float__": repr(value)}
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {str(k): _canonical(v, f"{where}[{k!r}]") for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (set, frozenset)):
        items = [_canonical(v, where) for v in value]
        return {"__set__": sorted(items, key=lambda v: json.dumps(v, sort_keys=True))}
    if isinstance(value, np.ndarray):
        return {"__ndarray__": _canonical(value.tolist(), where), "dtype": str(value.dtype)}
    if callable(value) and hasattr(value, "__qualname__"):
        return {"__callable__": f"{getattr(value, '__module__', '')}.{value.__qualname__}"}
    text = repr(value)
    if " at 0x" in text:
        raise TypeError(
            f"grid value {where} of type {type(value).__name__} has no stable representation "
            "(its repr holds a memory address); use a string, number, tuple or name instead"
        )
    return {"__repr__": f"{type(value).__module__}.{type(value).__qualname__}", "value": text}


def stable_hash(obj: Any) -> str:
    """SHA-256 hex digest of the canonical JSON form of ``obj`` (same in every process)."""
    payload = json.dumps(_canonical(obj, "value"), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def cell_seed(seed: int, params: Mapping[str, Any], repetition: int) -> int:
    """Integer seed of one (cell, repetition), independent of every other cell.

    ``np.random.default_rng(cell_seed(seed, params, repetition))`` is the
    generator :func:`run_grid` passes to the function for that run.
    """
    digest = stable_hash(dict(params))
    words = [int(digest[i : i + 8], 16) for i in range(0, 64, 8)]
    sequence = np.random.SeedSequence([int(seed), *words, int(repetition)])
    return int(sequence.generate_state(1, np.uint64)[0] >> np.uint64(1))


def _function_name(function: Callable[..., Any]) -> str:
    """``module.qualname`` of ``function`` (of the wrapped function for a ``functools.partial``)."""
    inner = function
    while isinstance(inner, functools.partial):
        inner = inner.func
    module = getattr(inner, "__module__", None) or ""
    qualname = getattr(inner, "__qualname__", None) or type(inner).__qualname__
    return f"{module}.{qualname}"


def _function_identity(function: Callable[..., Any]) -> dict[str, Any]:
    """What identifies ``function`` in a cache key: its name and any arguments a partial binds."""
    name = _function_name(function)
    if "<lambda>" in name or "<locals>" in name:
        raise ValueError(
            f"cache_dir needs a function defined at module level (got {name}): lambdas and nested "
            "functions cannot be told apart by name, so their cached results could be mixed up"
        )
    bound = []
    inner = function
    while isinstance(inner, functools.partial):
        bound.append({"args": list(inner.args), "keywords": dict(inner.keywords)})
        inner = inner.func
    return {"function": name, "bound": bound}


def expand_grid(grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Return the list of cells of ``grid``.

    A mapping of lists gives their cartesian product (keys in the mapping's
    order, last key varying fastest); a list of mappings is taken as is.
    """
    if isinstance(grid, Mapping):
        keys = list(grid)
        values = []
        for key in keys:
            if not isinstance(key, str):
                raise TypeError(f"grid keys must be strings (parameter names), got {key!r}")
            options = grid[key]
            if isinstance(options, (str, bytes)) or not isinstance(options, Iterable):
                raise TypeError(
                    f"grid[{key!r}] must be a list of values, got {type(options).__name__}; "
                    f"write grid[{key!r}] = [{options!r}] for a single value"
                )
            values.append(list(options))
        cells = [dict(zip(keys, combo)) for combo in itertools.product(*values)]
    elif isinstance(grid, (list, tuple)):
        cells = []
        for i, cell in enumerate(grid):
            if not isinstance(cell, Mapping):
                raise TypeError(f"grid[{i}] must be a dict of parameters, got {type(cell).__name__}")
            for key in cell:
                if not isinstance(key, str):
                    raise TypeError(f"grid[{i}] keys must be strings (parameter names), got {key!r}")
            cells.append(dict(cell))
    else:
        raise TypeError(f"grid must be a dict of lists or a list of dicts, got {type(grid).__name__}")
    for cell in cells:
        clash = [k for k in cell if k in (*_RESERVED, "rng")]
        if clash:
            raise ValueError(f"grid parameter name(s) {clash} are reserved by run_grid; rename them")
    return cells


# --------------------------------------------------------------------------- one task


def _cache_path(cache_dir: Path, key: str) -> Path:
    return cache_dir / key[:2] / f"{key}.pkl"


def _atomic_pickle(path: Path, payload: Any) -> None:
    atomic_write(path, lambda handle: pickle.dump(payload, handle, protocol=pickle.HIGHEST_PROTOCOL), fsync=True)


def _normalise_result(result: Any, name: str) -> list[dict[str, Any]]:
    if isinstance(result, Mapping):
        rows = [dict(result)]
    elif isinstance(result, (list, tuple)) and all(isinstance(r, Mapping) for r in result):
        rows = [dict(r) for r in result]
    else:
        raise TypeError(f"function {name} must return a dict or a list of dicts, got {type(result).__name__}")
    for row in rows:
        for key in row:
            if not isinstance(key, str):
                raise TypeError(f"function {name} returned a result key {key!r}; keys must be strings")
    return rows


def _run_task(
    function: Callable[..., Any],
    name: str,
    index: int,
    params: dict[str, Any],
    repetition: int,
    seed: int,
    cache_file: str | None,
) -> tuple[int, list[dict[str, Any]]]:
    """Run one (cell, repetition) and cache its result; executed in a worker."""
    try:
        rows = _normalise_result(function(**params, rng=np.random.default_rng(seed)), name)
    except Exception as error:  # add the failing configuration, keep the original type
        error.add_note(f"run_grid: {name} failed for parameters {params!r}, repetition {repetition}, seed {seed}")
        raise
    if cache_file is not None:
        _atomic_pickle(Path(cache_file), {"function": name, "params": params, "repetition": repetition, "rows": rows})
    return index, rows


def _load_cached(path: Path) -> list[dict[str, Any]] | None:
    try:
        with open(path, "rb") as handle:
            payload = pickle.load(handle)
    except FileNotFoundError:
        return None
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError):
        return None  # unreadable cache entry: recompute it
    rows = payload.get("rows") if isinstance(payload, dict) else None
    return rows if isinstance(rows, list) else None


# --------------------------------------------------------------------------- the grid


def run_grid(
    function: Callable[..., Any],
    grid: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]],
    *,
    repetitions: int = 1,
    seed: int = 0,
    n_jobs: int = 1,
    cache_dir: str | os.PathLike[str] | None = None,
    cache_version: str = "",
    progress: bool = True,
) -> pd.DataFrame:
    """Run ``function`` on every cell of ``grid`` ``repetitions`` times.

    Parameters
    ----------
    function
        Called as ``function(**params, rng=generator)``; returns a dict of
        results or a list of dicts (several rows, e.g. one per algorithm). It
        must be picklable (defined at module level) when ``n_jobs != 1``.
    grid
        A dict of lists (their cartesian product) or a list of dicts (cells).
    repetitions
        Number of independent runs of each cell (≥ 1).
    seed
        Non-negative grid seed; each run's generator is
        ``np.random.default_rng(cell_seed(seed, params, repetition))``.
    n_jobs
        Number of local worker processes (joblib/loky); ``-1`` uses all cores.
        Ignored when ``DPCD_DASK_SCHEDULER`` is set.
    cache_dir
        Folder for per-run result files (see the module docstring); ``None``
        disables caching.
    cache_version
        Free-form string mixed into the cache key; change it to invalidate.
    progress
        Show a tqdm progress bar (on stderr).

    Returns
    -------
    pandas.DataFrame
        One row per result dict, with the cell's parameters, ``repetition``
        and ``seed`` followed by the result's keys; rows in grid order, then
        repetition, then the order the function returned them.
    """
    if not callable(function):
        raise TypeError(f"function must be callable, got {type(function).__name__}")
    cells = expand_grid(grid)
    repetitions = check_int(repetitions, "repetitions", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    n_jobs = check_int(n_jobs, "n_jobs")
    if n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs must be >= 1 or -1 (all cores), got {n_jobs}")
    if not isinstance(cache_version, str):
        raise TypeError(f"cache_version must be a string, got {type(cache_version).__name__}")
    if not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be True or False, got {type(progress).__name__}")
    cache_root: Path | None = None
    if cache_dir is not None:
        if not isinstance(cache_dir, (str, os.PathLike)):
            raise TypeError(f"cache_dir must be a path or None, got {type(cache_dir).__name__}")
        cache_root = Path(cache_dir).expanduser().resolve()
        if cache_root.exists() and not cache_root.is_dir():
            raise ValueError(f"cache_dir {os.fspath(cache_dir)!r} exists and is not a folder")

    name = _function_name(function)
    identity = _function_identity(function) if cache_root is not None else None
    tasks: list[tuple[int, dict[str, Any], int, int, str | None]] = []
    for c, params in enumerate(cells):
        for r in range(repetitions):
            tasks.append((c * repetitions + r, params, r, cell_seed(seed, params, r), None))

    results: dict[int, list[dict[str, Any]]] = {}
    pending = []
    for index, params, r, run_seed, _ in tasks:
        cache_file = None
        if cache_root is not None:
            key = stable_hash(
                {**identity, "params": params, "repetition": r, "seed": seed, "cache_version": cache_version}
            )
            path = _cache_path(cache_root, key)
            cached = _load_cached(path)
            if cached is not None:
                results[index] = cached
                continue
            cache_file = os.fspath(path)
        pending.append((index, params, r, run_seed, cache_file))

    if pending:
        results.update(_execute(function, name, pending, n_jobs=n_jobs, progress=bool(progress), cached=len(results)))

    param_names: list[str] = list(grid) if isinstance(grid, Mapping) else []
    for params in cells:
        for key in params:
            if key not in param_names:
                param_names.append(key)
    records: list[dict[str, Any]] = []
    for index, params, r, run_seed, _ in tasks:
        for row in results[index]:
            clash = [k for k in row if k in params or k in _RESERVED]
            if clash:
                raise ValueError(
                    f"function {name} returned result key(s) {clash} that clash with grid parameters "
                    "or the reserved columns 'repetition'/'seed'; rename them"
                )
            records.append({**params, "repetition": r, "seed": run_seed, **row})
    if not records:
        return pd.DataFrame(columns=[*param_names, *_RESERVED])
    frame = pd.DataFrame.from_records(records)
    leading = [*param_names, *_RESERVED]
    return frame[leading + [c for c in frame.columns if c not in leading]]


def _execute(
    function: Callable[..., Any],
    name: str,
    pending: list[tuple[int, dict[str, Any], int, int, str | None]],
    *,
    n_jobs: int,
    progress: bool,
    cached: int,
) -> dict[int, list[dict[str, Any]]]:
    """Run the pending tasks locally (joblib) or on a Dask cluster."""
    import joblib
    from tqdm import tqdm

    bar = tqdm(
        total=len(pending) + cached,
        initial=cached,
        desc=name.rsplit(".", 1)[-1],
        disable=not progress,
        unit="run",
        dynamic_ncols=True,
    )
    calls = (
        joblib.delayed(_run_task)(function, name, index, params, r, run_seed, cache_file)
        for index, params, r, run_seed, cache_file in pending
    )
    out: dict[int, list[dict[str, Any]]] = {}
    address = os.environ.get(DASK_SCHEDULER_ENV, "").strip()
    try:
        if address:
            try:
                from distributed import Client
            except ImportError as error:  # pragma: no cover - depends on the installation
                raise ImportError(
                    f"{DASK_SCHEDULER_ENV} is set but dask.distributed is not installed; "
                    "install the 'dask' extra (pip install 'dpcd[dask]') or unset the variable"
                ) from error
            with Client(address), joblib.parallel_backend("dask"):
                parallel = joblib.Parallel(n_jobs=-1, return_as="generator_unordered")
                for index, rows in parallel(calls):
                    out[index] = rows
                    bar.update(1)
        elif n_jobs == 1 or len(pending) == 1:
            for index, params, r, run_seed, cache_file in pending:
                out[index] = _run_task(function, name, index, params, r, run_seed, cache_file)[1]
                bar.update(1)
        else:
            parallel = joblib.Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered")
            for index, rows in parallel(calls):
                out[index] = rows
                bar.update(1)
    finally:
        bar.close()
    return out

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
    grid seed, ``cache_version`` and the **code fingerprint** of the function
    (:func:`code_fingerprint`: the source of its module and of every module of
    ``dpcd``/``dpcd_papers`` it imports, followed transitively). Editing any of
    that code therefore invalidates the entries it could have changed and no
    other; ``cache_version`` remains for changes outside the source (data
    files). Files are written by the worker as soon as the cell finishes,
    through a temporary file and ``os.replace``, so an interrupted run resumes
    where it stopped. With a Dask cluster on several machines, ``cache_dir``
    must be on a shared file system. A fingerprint reads the source files as
    they are, the process runs the code it loaded: ``run_grid`` refuses to
    cache when a fingerprinted file changed after the process loaded it, and a
    worker refuses to write an entry when one changed while the grid ran
    (restart the process — in Jupyter, the kernel — after editing the code).

    Each entry records the seconds (wall clock and CPU of the worker) its
    computation took, and every ``run_grid`` call with a ``cache_dir`` appends
    one line to ``cache_dir/calls.jsonl``: the function, and per task its key,
    parameters, repetition, seconds and whether it came from the cache. The
    runner turns that log into the per-cell profile of ``run.json``.

Archives
    :func:`export_cells` writes the entries of given keys to one compact
    gzipped JSON-lines file (``cells.jsonl.gz``: exact floats, tagged tuples,
    arrays and non-finite numbers); :func:`import_cells` writes an archive's
    entries back into a cache folder, keeping only entries whose stored key
    is the key of their own fields — a later ``run_grid`` finds them only
    when function, parameters, seeds, ``cache_version`` and code fingerprint
    all match, and recomputes everything else.

Run time is measured with :func:`timed`, which returns it next to the result
instead of storing it on the result object.
"""

from __future__ import annotations

import ast
import base64
import functools
import gzip
import hashlib
import importlib
import importlib.util
import itertools
import json
import math
import os
import pickle
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpcd.validation import check_int

from ._io import atomic_write

__all__ = [
    "run_grid", "timed", "expand_grid", "cell_seed", "stable_hash", "code_fingerprint", "code_modules", "export_cells",
    "import_cells", "archive_status", "read_calls", "DASK_SCHEDULER_ENV", "CALLS_LOG", "CELLS_ARCHIVE",
]

DASK_SCHEDULER_ENV = "DPCD_DASK_SCHEDULER"
CALLS_LOG = "calls.jsonl"
CELLS_ARCHIVE = "cells.jsonl.gz"
_RESERVED = ("repetition", "seed")
_OWN_PACKAGES = ("dpcd", "dpcd_papers")
PRESENTATION_MODULES = ("dpcd_papers.reporting", "dpcd_papers.plotting", "dpcd_papers.runner", "dpcd_papers.cli")
"""Modules that turn grid results into tables, figures and reports and are never called by a grid cell; they are
not part of a code fingerprint, so rewording a report does not discard hours of computation
(tests/test_experiments.py checks that no notebook's cell function refers to them)."""
_ARCHIVE_FORMAT = {"format": "dpcd-grid-cells", "version": 1}


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


def _own(module_name: str) -> bool:
    return module_name.split(".", 1)[0] in _OWN_PACKAGES and module_name not in PRESENTATION_MODULES


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _imported_modules(module_name: str) -> set[str]:
    """The ``dpcd``/``dpcd_papers`` modules that ``module_name``'s source imports (at any depth of its code).

    ``from package import name`` resolves ``name`` to the submodule it is, or
    else to the module that defines the object (``obj.__module__``) beside
    the package itself, so re-exports are followed to their source.
    """
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py"):
        return set()
    tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)
    package = module.__package__ or ""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _own(node.value):
            # a module named in a string (a registry entry loaded with importlib) is a dependency too
            named = node.value.split(":", 1)[0]
            if named.replace(".", "").replace("_", "").isalnum() and "." in named and _is_module(named):
                found.add(named)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if _own(alias.name))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base_parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*base_parts, node.module] if node.module else base_parts)
            else:
                base = node.module or ""
            if not _own(base):
                continue
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                if alias.name != "*" and _is_module(candidate):
                    if _own(candidate):
                        found.add(candidate)
                    continue
                found.add(base)
                try:
                    obj = getattr(importlib.import_module(base), alias.name)
                except (ImportError, AttributeError):
                    continue
                defined_in = getattr(obj, "__module__", None)
                if isinstance(defined_in, str) and _own(defined_in):
                    found.add(defined_in)
    return found


def code_modules(function: Callable[..., Any]) -> list[str]:
    """The modules whose source :func:`code_fingerprint` hashes for ``function``, sorted.

    The module defining ``function`` (the wrapped function of a
    ``functools.partial``) and, transitively, every module of ``dpcd`` and
    ``dpcd_papers`` its source imports — at module level or inside functions
    (lazy imports count) — or names in a string constant such as
    ``"dpcd.discovery.em_pc"`` (modules loaded through ``importlib``, as the
    algorithm registry does). Third-party packages are not followed (their
    versions are recorded in ``run.json``), nor are :data:`PRESENTATION_MODULES`.
    """
    inner = function
    while isinstance(inner, functools.partial):
        inner = inner.func
    start = getattr(inner, "__module__", None)
    path = getattr(sys.modules.get(start or ""), "__file__", None)
    if not isinstance(start, str) or not path or not path.endswith(".py"):
        raise ValueError(
            f"cache_dir needs a function defined in a module file (got {_function_name(function)}): the cache key "
            "holds a fingerprint of the code, which a function typed into an interactive session has not; move it "
            "into a module"
        )
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(sorted(_imported_modules(name) - seen))
    return sorted(seen)


def _module_paths(function: Callable[..., Any]) -> list[tuple[str, str]]:
    """``(module, source path)`` of each of :func:`code_modules` of ``function`` that has a source file."""
    pairs = []
    for name in code_modules(function):
        path = getattr(sys.modules.get(name), "__file__", None)
        if path and os.path.exists(path):
            pairs.append((name, path))
    return pairs


def _digest(pairs: Iterable[tuple[str, str]]) -> str:
    digest = hashlib.sha256()
    for name, path in pairs:
        digest.update(name.encode("utf-8") + b"\0" + Path(path).read_bytes() + b"\0")
    return digest.hexdigest()


def code_fingerprint(function: Callable[..., Any]) -> str:
    """SHA-256 of the source of :func:`code_modules` of ``function``: what its results can depend on here.

    Editing one of those files changes the fingerprint, and with it the cache
    key of every result of ``function``; editing any other file does not.

    >>> from dpcd_papers.experiments import code_fingerprint, expand_grid
    >>> len(code_fingerprint(expand_grid))
    64
    """
    return _digest(_module_paths(function))


_LOADED_NS = time.time_ns()
_LOADED_BEFORE = frozenset(name for name in list(sys.modules) if name.split(".", 1)[0] in ("dpcd", "dpcd_papers"))
_FIRST_SEEN: dict[str, tuple[int, int, str]] = {}
"""Per source file: (mtime, size, SHA-256) when this process first fingerprinted it. A process-wide record, like
``sys.modules`` itself: the code a process runs is the code it loaded, which a later look at the file cannot show."""


def _stamp(path: str) -> tuple[int, int]:
    status = os.stat(path)
    return status.st_mtime_ns, status.st_size


def _remember(name: str, path: str) -> tuple[int, int, str]:
    """The first-seen record of ``path`` (made now if there is none); refuses a file saved after its module loaded."""
    seen = _FIRST_SEEN.get(path)
    if seen is None:
        mtime, size = _stamp(path)
        if name in _LOADED_BEFORE and mtime > _LOADED_NS:
            raise RuntimeError(_EDITED.format(name=name, path=path))
        seen = _FIRST_SEEN.setdefault(path, (mtime, size, hashlib.sha256(Path(path).read_bytes()).hexdigest()))
    return seen


def _sources_as_loaded(function: Callable[..., Any]) -> tuple[str, tuple[tuple[str, str, int, int], ...]]:
    """The code fingerprint of ``function`` and the stamps of its files, refusing source edited since it was loaded.

    A fingerprint reads the files as they are now, but the process runs the
    code it loaded. The first call records every loaded module of ``dpcd``
    and ``dpcd_papers`` (and each later call the modules loaded since); a
    file that differs from its record, or was saved after
    ``dpcd_papers.experiments`` was imported while its module was already
    loaded, would cache results under the key of code that did not compute
    them, so :func:`run_grid` refuses (restart the process — in Jupyter, the
    kernel). Returns ``(fingerprint, ((module, path, mtime_ns, size), ...))``;
    the workers compare the stamps again before every cache write
    (:func:`_check_sources`).
    """
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if name.split(".", 1)[0] in _OWN_PACKAGES and path and path not in _FIRST_SEEN and os.path.exists(path):
            _remember(name, path)
    pairs = _module_paths(function)
    stamps = []
    for name, path in pairs:
        seen = _remember(name, path)
        mtime, size = _stamp(path)
        if (mtime, size) != seen[:2] and hashlib.sha256(Path(path).read_bytes()).hexdigest() != seen[2]:
            raise RuntimeError(_EDITED.format(name=name, path=path))
        stamps.append((name, path, mtime, size))
    return _digest(pairs), tuple(stamps)


_EDITED = ("the source of {name} ({path}) changed after this Python process loaded it: the cache would file results "
           "of the loaded code under the fingerprint of the new file; restart the process (in Jupyter, the kernel)")


def _check_sources(stamps: Sequence[tuple[str, str, int, int]], code: str | None) -> None:
    """Raise when a source file changed since :func:`_sources_as_loaded` (its content, not only its time)."""
    if not stamps or code is None:
        return
    try:
        if all(_stamp(path) == (mtime, size) for _, path, mtime, size in stamps):
            return
        if _digest((name, path) for name, path, _, _ in stamps) == code:
            return  # saved again unchanged
    except OSError:
        return  # another machine's file system (a Dask worker): the paths are not ours to check
    changed = [name for name, path, mtime, size in stamps if os.path.exists(path) and _stamp(path) != (mtime, size)]
    raise RuntimeError(f"the source of {', '.join(changed) or 'a fingerprinted module'} changed while the grid "
                       "ran: this result is not cached (nor any later one); restart the process and run again")


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
    entry: dict[str, Any] | None = None,
) -> tuple[int, list[dict[str, Any]], float, float]:
    """Run one (cell, repetition), cache its result; executed in a worker.

    Returns ``(index, rows, seconds, cpu_seconds)``; ``entry`` holds the
    fields of the cache entry besides the rows and the times.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        rows = _normalise_result(function(**params, rng=np.random.default_rng(seed)), name)
    except Exception as error:  # add the failing configuration, keep the original type
        error.add_note(f"run_grid: {name} failed for parameters {params!r}, repetition {repetition}, seed {seed}")
        raise
    seconds, cpu_seconds = time.perf_counter() - wall, time.process_time() - cpu
    if cache_file is not None:
        entry = dict(entry or {})
        _check_sources(entry.pop("sources", ()), entry.get("code"))
        payload = {**entry, "function": name, "params": params, "repetition": repetition,
                   "seconds": seconds, "cpu_seconds": cpu_seconds, "rows": rows}
        _atomic_pickle(Path(cache_file), payload)
    return index, rows, seconds, cpu_seconds


def _load_entry(path: Path) -> dict[str, Any] | None:
    """The cache entry at ``path`` (a dict with its ``rows``), or None when missing or unreadable."""
    try:
        with open(path, "rb") as handle:
            payload = pickle.load(handle)
    except FileNotFoundError:
        return None
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError):
        return None  # unreadable cache entry: recompute it
    if not isinstance(payload, dict) or not isinstance(payload.get("rows"), list):
        return None
    return payload


def _entry_key(entry: Mapping[str, Any]) -> str:
    """The cache key of an entry, from its own fields."""
    return stable_hash({"function": entry["function"], "bound": entry["bound"], "params": entry["params"],
                        "repetition": entry["repetition"], "seed": entry["grid_seed"],
                        "cache_version": entry["cache_version"], "code": entry["code"]})


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
        Free-form string mixed into the cache key (beside the code
        fingerprint); change it to invalidate what the source does not show.
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
    code, sources = _sources_as_loaded(function) if cache_root is not None else (None, ())
    tasks: list[tuple[int, dict[str, Any], int, int, str | None]] = []
    for c, params in enumerate(cells):
        for r in range(repetitions):
            tasks.append((c * repetitions + r, params, r, cell_seed(seed, params, r), None))

    results: dict[int, list[dict[str, Any]]] = {}
    log: dict[int, dict[str, Any]] = {}
    entries: dict[int, dict[str, Any]] = {}
    pending = []
    for index, params, r, run_seed, _ in tasks:
        cache_file = None
        if cache_root is not None:
            entry = {**identity, "params": params, "repetition": r, "grid_seed": seed, "seed": run_seed,
                     "cache_version": cache_version, "code": code}
            key = _entry_key(entry)
            path = _cache_path(cache_root, key)
            cached = _load_entry(path)
            log[index] = {"key": key, "params": params, "repetition": r}
            if cached is not None:
                results[index] = cached["rows"]
                log[index].update(seconds=cached.get("seconds"), cpu_seconds=cached.get("cpu_seconds"), cached=True)
                continue
            entries[index] = {**entry, "key": key, "sources": sources}
            cache_file = os.fspath(path)
        pending.append((index, params, r, run_seed, cache_file))

    if pending:
        done = _execute(function, name, pending, entries, n_jobs=n_jobs, progress=bool(progress),
                        cached=len(results))
        for index, (rows, seconds, cpu_seconds) in done.items():
            results[index] = rows
            if index in log:
                log[index].update(seconds=seconds, cpu_seconds=cpu_seconds, cached=False)
    if cache_root is not None:
        _append_call(cache_root, {"function": name, "code": code, "cache_version": cache_version, "grid_seed": seed,
                                  "tasks": [log[index] for index, *_ in tasks]})

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


def _append_call(cache_root: Path, record: dict[str, Any]) -> None:
    """Append one ``run_grid`` call's record to ``cache_root/calls.jsonl``."""
    cache_root.mkdir(parents=True, exist_ok=True)
    line = json.dumps(_canonical(record, "record"), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    with open(cache_root / CALLS_LOG, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")


def read_calls(cache_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records :func:`run_grid` appended to ``cache_dir/calls.jsonl`` (oldest first; [] if none)."""
    path = Path(cache_dir) / CALLS_LOG
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _execute(
    function: Callable[..., Any],
    name: str,
    pending: list[tuple[int, dict[str, Any], int, int, str | None]],
    entries: Mapping[int, dict[str, Any]],
    *,
    n_jobs: int,
    progress: bool,
    cached: int,
) -> dict[int, tuple[list[dict[str, Any]], float, float]]:
    """Run the pending tasks locally (joblib) or on a Dask cluster: ``{index: (rows, seconds, cpu_seconds)}``."""
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
        joblib.delayed(_run_task)(function, name, index, params, r, run_seed, cache_file, entries.get(index))
        for index, params, r, run_seed, cache_file in pending
    )
    out: dict[int, tuple[list[dict[str, Any]], float, float]] = {}
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
                for index, *done in parallel(calls):
                    out[index] = tuple(done)
                    bar.update(1)
        elif n_jobs == 1 or len(pending) == 1:
            for index, params, r, run_seed, cache_file in pending:
                out[index] = _run_task(function, name, index, params, r, run_seed, cache_file,
                                       entries.get(index))[1:]
                bar.update(1)
        else:
            parallel = joblib.Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered")
            for index, *done in parallel(calls):
                out[index] = tuple(done)
                bar.update(1)
    finally:
        bar.close()
    return out


# --------------------------------------------------------------------------- archives


def _encode(value: Any) -> Any:
    """A JSON form of a result value that :func:`_decode` turns back into an equal value."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.float64)):
        value = float(value)
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, tuple) and type(value) is tuple:
        return {"__tuple__": [_encode(v) for v in value]}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value) and not any(k.startswith("__") for k in value):
        return {k: _encode(v) for k, v in value.items()}
    return {"__pickle__": base64.b64encode(pickle.dumps(value, protocol=4)).decode("ascii")}


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        if "__float__" in value:
            return float(value["__float__"])
        if "__tuple__" in value:
            return tuple(_decode(v) for v in value["__tuple__"])
        if "__pickle__" in value:
            return pickle.loads(base64.b64decode(value["__pickle__"]))
        return {k: _decode(v) for k, v in value.items()}
    return value


_ENTRY_FIELDS = ("key", "function", "bound", "params", "repetition", "grid_seed", "seed", "cache_version", "code",
                 "seconds", "cpu_seconds", "rows")


def export_cells(cache_dir: str | os.PathLike[str], keys: Iterable[str], path: str | os.PathLike[str]) -> int:
    """Write the cache entries of ``keys`` to the gzipped JSON-lines archive ``path``; return how many.

    Keys without a readable entry in ``cache_dir`` are skipped. The archive
    holds one header line and then one entry per line, in the order of
    ``keys`` (duplicates once); it is written atomically and byte-for-byte
    the same for the same entries (no time stamp in the gzip header).
    """
    cache_root = Path(cache_dir)
    lines = [json.dumps(_ARCHIVE_FORMAT, sort_keys=True)]
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            continue
        seen.add(key)
        entry = _load_entry(_cache_path(cache_root, key))
        if entry is None or entry.get("key") != key:
            continue
        record = {field: _encode(entry.get(field)) for field in _ENTRY_FIELDS}
        lines.append(json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=True))
    data = ("\n".join(lines) + "\n").encode("utf-8")
    atomic_write(path, lambda handle: handle.write(gzip.compress(data, compresslevel=9, mtime=0)))
    return len(lines) - 1


def _archive_entries(path: str | os.PathLike[str]) -> Iterator[dict[str, Any] | None]:
    """The entries of the archive ``path``, each decoded, or None for one whose stored key is not its own."""
    archive = Path(path)
    with gzip.open(archive, "rt", encoding="utf-8") as handle:
        header = json.loads(handle.readline() or "{}")
        if header != _ARCHIVE_FORMAT:
            raise ValueError(f"{os.fspath(archive)!r} is not a grid-cells archive (header {header!r})")
        for line in handle:
            if not line.strip():
                continue
            entry = {field: _decode(value) for field, value in json.loads(line).items()}
            try:
                valid = _entry_key(entry) == entry.get("key")
            except (KeyError, TypeError):
                valid = False
            yield entry if valid else None


def import_cells(path: str | os.PathLike[str], cache_dir: str | os.PathLike[str]) -> tuple[int, int]:
    """Write the entries of the archive ``path`` into ``cache_dir``; return ``(imported, rejected)``.

    An entry is imported only when its stored key equals the key recomputed
    from its fields (function, bound arguments, parameters, repetition, grid
    seed, ``cache_version``, code fingerprint); entries already in the cache
    are left alone. Whether an imported entry is *used* is decided by
    :func:`run_grid`, which looks it up under the key of the current code.
    """
    imported = rejected = 0
    for entry in _archive_entries(path):
        if entry is None:
            rejected += 1
            continue
        target = _cache_path(Path(cache_dir), entry["key"])
        if _load_entry(target) is None:
            _atomic_pickle(target, entry)
        imported += 1
    return imported, rejected


def archive_status(path: str | os.PathLike[str]) -> dict[str, dict[str, int]]:
    """Per grid function of the archive ``path``: how many entries, and how many the current code would re-use.

    An entry is *current* when its code fingerprint equals
    :func:`code_fingerprint` of the function as installed now, so
    :func:`run_grid` finds it under its key; the others were computed with
    earlier code and would be recomputed. Entries whose stored key is not their
    own count as ``rejected``; a function that can no longer be imported has
    no current entries.
    """
    status: dict[str, dict[str, int]] = {}
    fingerprints: dict[str, str | None] = {}
    for entry in _archive_entries(path):
        name = "?" if entry is None else str(entry["function"])
        counts = status.setdefault(name, {"entries": 0, "current": 0, "rejected": 0})
        counts["entries"] += 1
        if entry is None:
            counts["rejected"] += 1
            continue
        if name not in fingerprints:
            module, _, attribute = name.rpartition(".")
            try:
                fingerprints[name] = code_fingerprint(getattr(importlib.import_module(module), attribute))
            except (ImportError, AttributeError, ValueError):
                fingerprints[name] = None
        counts["current"] += int(entry["code"] == fingerprints[name])
    return status

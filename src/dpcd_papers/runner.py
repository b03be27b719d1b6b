"""Run the compendium's notebooks with papermill: ``python -m dpcd_papers reproduce``.

Every ``notebooks/*.ipynb`` is executed (sorted by name) with the parameters
``profile``, ``n_jobs``, ``out_dir`` and ``cache_dir`` injected after its
``parameters`` cell; ``seed`` keeps the notebook's default. Notebook
``<name>`` writes into ``<out>/<name>/``, where the runner also leaves the
executed copy ``<name>.ipynb`` and ``run.json`` (profile, date, seconds,
Python and package versions, and the time profile: seconds per notebook cell,
per grid and the hot spots) for :func:`dpcd_papers.reporting.build_report`.

Where results land
    ``out`` defaults to ``results/`` (:func:`default_out_dir`, not tracked by
    git), so a run never overwrites the committed results in ``figures/``
    unless asked (``--out figures``, ``make reproduce OUT=figures``).

Resuming and re-using results
    ``cache_dir`` is ``<out>/<name>/.cache``: :func:`dpcd_papers.experiments.run_grid`
    stores every (cell, repetition) there as soon as it finishes, so a run
    that is interrupted resumes where it stopped. After a notebook succeeds,
    the entries it used are exported to ``<out>/<name>/cells.jsonl.gz``
    (committed with the figures); before a notebook runs, that archive is
    imported into the cache — or, when ``out`` has none yet, the committed
    ``figures/<name>/cells.jsonl.gz`` if it was computed in the same profile.
    A grid cell is taken from it only when its key matches — same function,
    parameters, seeds and code fingerprint — so a fresh clone re-uses the
    committed run exactly when nothing it depends on changed, and recomputes
    the rest.

The kernel is always the Python interpreter running the runner
(``sys.executable``), whatever kernelspecs are installed: the runner hands
papermill a kernel manager whose only kernelspec launches
``sys.executable -m ipykernel_launcher``. Pass ``kernel_name`` to use an
installed kernelspec instead. Either way a finished notebook's kernel is shut
down without the SIGINT jupyter_client sends first by default, which only made
the idle kernel and its worker processes print ``KeyboardInterrupt`` messages,
and what the kernel process writes outside its cells (ipykernel's log, asyncio
at exit) goes to ``<out>/<name>/kernel.log`` (kept only when not empty; git
ignores it), not between the runner's progress lines.

Progress
    Each notebook gets one line on stdout, ``[1/9] name (profile) ...``, that
    counts its code cells done and the time elapsed (rewritten every second on
    a terminal, a new line every minute in a log), and ends with
    ``done in … s`` or ``FAILED after … s``.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import os
import platform
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from dpcd.validation import check_int

from .experiments import CELLS_ARCHIVE, export_cells, import_cells, read_calls
from .reporting import RUN_INFO, atomic_write_text

__all__ = ["PROFILES", "NotebookError", "reproduce", "find_notebooks", "default_notebooks_dir", "default_out_dir",
           "committed_dir"]

PROFILES = ("smoke", "quick", "full")
_PACKAGES = (
    "dpcd", "numpy", "scipy", "pandas", "networkx", "pgmpy", "scikit-learn", "dp-accounting",
    "causal-learn", "matplotlib", "seaborn", "joblib", "papermill",
)
_KERNEL_NAME = "dpcd-python"
CACHE_FOLDER = ".cache"
KERNEL_LOG = "kernel.log"
"""What the kernel process wrote outside its cells (kept in ``<out>/<name>/`` only when not empty)."""
_HOT_SPOTS = 5


class NotebookError(RuntimeError):
    """A notebook failed; the message names the notebook and the failing cell."""

    def __init__(self, notebook: str, message: str, executed: Path | None = None) -> None:
        self.notebook = notebook
        self.executed = executed
        super().__init__(message)


def default_notebooks_dir() -> Path:
    """The project's ``notebooks/`` folder (next to ``src/``)."""
    return Path(__file__).resolve().parents[2] / "notebooks"


def find_notebooks(notebooks_dir: str | os.PathLike[str] | None = None, only: str | Sequence[str] | None = None) -> list[Path]:
    """The notebooks to run, sorted by name; ``only`` selects names (without ``.ipynb``)."""
    folder = default_notebooks_dir() if notebooks_dir is None else notebooks_dir
    if not isinstance(folder, (str, os.PathLike)):
        raise TypeError(f"notebooks_dir must be a path, got {type(folder).__name__}")
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"notebooks_dir {os.fspath(folder)!r} is not a folder")
    available = {p.stem: p for p in sorted(folder.glob("*.ipynb")) if not p.name.startswith(".")}
    if only is None:
        if not available:
            raise ValueError(f"notebooks_dir {os.fspath(folder)!r} holds no .ipynb notebook")
        return list(available.values())
    names = [only] if isinstance(only, str) else only
    if not isinstance(names, Sequence) or not names or not all(isinstance(n, str) for n in names):
        raise TypeError("only must be a notebook name or a non-empty list of names")
    chosen = []
    for name in names:
        stem = name[: -len(".ipynb")] if name.endswith(".ipynb") else name
        if stem not in available:
            raise ValueError(f"only: no notebook named {name!r}; available: {sorted(available)}")
        if available[stem] not in chosen:
            chosen.append(available[stem])
    return sorted(chosen)


def _kernel_manager_class(same_interpreter: bool = True, log: Any = None) -> type:
    """A jupyter kernel manager that shuts its kernel down without a SIGINT and writes the kernel process's own
    output to ``log``; with ``same_interpreter``, its kernelspec runs ``sys.executable`` whatever the kernel's name.

    jupyter_client interrupts a kernel (SIGINT to its whole process group) before every shutdown, in case a cell
    is still running. The runner shuts a kernel down only after its notebook finished or failed, when nothing is
    running, so the signal only reaches what is idle or starting: the kernel logs ``[IPKernelApp] ERROR |
    KeyboardInterrupt caught in kernel`` and joblib's worker processes print a ``KeyboardInterrupt`` traceback on
    the terminal. Without it the shutdown request ends the kernel, and a kernel that does not end gets SIGTERM,
    then SIGKILL, after ``shutdown_wait_time`` as before. An interrupt at any other time (a cell's timeout) is
    sent as usual.

    ``log`` (an open file, or None for the runner's own streams) receives what the kernel process and its
    workers write to their standard streams outside any cell — ipykernel's log lines and asyncio's messages at
    exit (``Task was destroyed but it is pending!``) — which would otherwise interleave with the runner's
    progress lines. What a cell prints reaches the notebook as before.
    """
    from jupyter_client import AsyncKernelManager
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from traitlets import default

    class SameInterpreterKernelSpecManager(KernelSpecManager):
        """Resolves every kernel name to the Python running this process."""

        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            from ipykernel.kernelspec import RESOURCES, get_kernel_dict

            spec = get_kernel_dict()  # ipykernel's own spec: argv[0] is sys.executable
            spec["argv"] = [sys.executable, *spec["argv"][1:]]
            spec["display_name"] = f"Python {platform.python_version()} (dpcd)"
            return KernelSpec(resource_dir=RESOURCES, **spec)

    class QuietShutdownKernelManager(AsyncKernelManager):
        """Kernel manager that does not interrupt its kernel on the way to a shutdown."""

        async def _async_interrupt_kernel(self) -> None:
            if self.shutting_down:
                return
            await super()._async_interrupt_kernel()

        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
            if log is not None:
                kw.setdefault("stdout", log)
                kw.setdefault("stderr", log)
            await super()._async_launch_kernel(kernel_cmd, **kw)

    if not same_interpreter:
        return QuietShutdownKernelManager

    class SameInterpreterKernelManager(QuietShutdownKernelManager):
        """Kernel manager launching ``sys.executable -m ipykernel_launcher``."""

        @default("kernel_spec_manager")
        def _default_spec_manager(self) -> KernelSpecManager:
            return SameInterpreterKernelSpecManager()

        @default("transport_encryption")
        def _default_transport_encryption(self) -> str:
            # encrypt the local kernel's TCP sockets when pyzmq can (ipykernel declares support)
            import zmq

            return "auto" if zmq.has("curve") else "disabled"

    return SameInterpreterKernelManager


def _clock(seconds: float) -> str:
    """Elapsed seconds as ``m:ss`` or ``h:mm:ss``.

    >>> _clock(5.2), _clock(754), _clock(3725)
    ('0:05', '12:34', '1:02:05')
    """
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class _Progress:
    """One notebook's progress line: code cells finished / in the notebook, and the time since it started.

    On a terminal the line is rewritten every ``tick`` seconds and after every cell; elsewhere (a pipe, a log
    file) a line is added every ``interval`` seconds, so a notebook that takes less keeps its one line
    ``[1/9] name (profile) ... done in 12.3 s``.
    """

    def __init__(self, label: str, stream: Any = None, *, interval: float = 60.0, tick: float = 1.0) -> None:
        import threading

        self.label = label
        self.stream = sys.stdout if stream is None else stream
        isatty = getattr(self.stream, "isatty", None)
        self.live = bool(isatty()) if callable(isatty) else False
        self.every = tick if self.live else interval
        self.total = 0
        self.done = 0
        self.started = time.perf_counter()
        self._open = False  # off a terminal: the label's line still waits for its ending
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="dpcd-progress", daemon=True)

    def start(self) -> None:
        with self._lock:
            self._write(f"\r\033[K{self.label} ... starting the kernel" if self.live else f"{self.label} ...")
            self._open = not self.live
        self._thread.start()

    def watch(self, manager: Any) -> None:
        """Count ``manager``'s code cells and report each one papermill finishes (a ``NotebookExecutionManager``)."""
        self.total = sum(cell.get("cell_type") == "code" for cell in manager.nb.cells)
        complete = manager.cell_complete

        def cell_complete(cell: Any, cell_index: int | None = None, **kwargs: Any) -> Any:
            result = complete(cell, cell_index=cell_index, **kwargs)
            if cell.get("cell_type") == "code":
                with self._lock:
                    self.done += 1
                    if self.live:
                        self._show()
            return result

        manager.cell_complete = cell_complete

    def _status(self) -> str:
        elapsed = _clock(time.perf_counter() - self.started)
        if not self.total:
            return f"starting the kernel, {elapsed} elapsed"
        return f"{self.done}/{self.total} cells done, {elapsed} elapsed"

    def _show(self) -> None:
        self._write(f"\r\033[K{self.label} ... {self._status()}")

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            with self._lock:
                if self._stop.is_set():
                    return
                if self.live:
                    self._show()
                else:
                    self._write(("\n" if self._open else "") + f"{self.label}: {self._status()}\n")
                    self._open = False

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def finish(self, text: str) -> None:
        """Stop the beat and end the notebook's line with ``text`` (e.g. ``done in 12.3 s``)."""
        self.stop()
        with self._lock:
            if self.live:
                self._write(f"\r\033[K{self.label} ... {text}\n")
            elif self._open:
                self._write(f" {text}\n")
            else:
                self._write(f"{self.label} {text}\n")
            self._open = False

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


_ENGINE_NAME = "dpcd-progress"


@functools.lru_cache(maxsize=1)
def _progress_engine_class() -> type:
    from papermill.engines import NBClientEngine

    class ProgressEngine(NBClientEngine):
        """papermill's nbclient engine; the keyword ``dpcd_progress`` (a :class:`_Progress`) watches the cells."""

        @classmethod
        def execute_managed_notebook(cls, nb_man: Any, kernel_name: str, dpcd_progress: _Progress | None = None,
                                     **kwargs: Any) -> Any:
            if dpcd_progress is not None:
                dpcd_progress.watch(nb_man)
            return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)

    return ProgressEngine


def _progress_engine() -> str:
    """Register papermill's nbclient engine that reports finished cells to a :class:`_Progress`; its name."""
    from papermill.engines import papermill_engines

    papermill_engines.register(_ENGINE_NAME, _progress_engine_class())
    return _ENGINE_NAME


def default_out_dir() -> Path:
    """Where ``reproduce`` writes by default: ``results/`` next to ``src/`` (not tracked by git).

    The committed results live in ``figures/`` (:func:`committed_dir`); they are
    rewritten only when a run is asked to write there (``--out figures``).
    """
    return Path(__file__).resolve().parents[2] / "results"


def committed_dir() -> Path:
    """The project's committed results, ``figures/`` next to ``src/``."""
    return Path(__file__).resolve().parents[2] / "figures"


def _import_archive(archives: Sequence[Path], cache: Path) -> int:
    """Import grid results into a notebook's cache from the first archive that exists; the number imported.

    ``archives`` lists the output folder's own ``cells.jsonl.gz`` first, then
    the committed one in ``figures/``: a run into a new folder re-uses the
    committed results wherever their keys match, without writing to ``figures/``.
    """
    for archive in archives:
        if not archive.exists():
            continue
        try:
            imported, _ = import_cells(archive, cache)
        except (OSError, ValueError) as error:  # an unreadable archive is recomputed, not trusted
            print(f"ignoring {archive}: {error}", flush=True)
            continue
        return imported
    return 0


def _committed_archive(name: str, profile: str, target: Path) -> list[Path]:
    """The committed ``figures/<name>/cells.jsonl.gz`` when it was computed in ``profile`` and is not ``target``'s."""
    folder = committed_dir() / name
    if folder.resolve() == target.resolve():
        return []
    try:
        committed = json.loads((folder / RUN_INFO).read_text(encoding="utf-8")).get("profile")
    except (OSError, ValueError):
        return []
    return [folder / CELLS_ARCHIVE] if committed == profile else []


def _cell_label(params: Mapping[str, Any]) -> str:
    """Short text of a grid cell's parameters (long sequences elided)."""
    parts = []
    for key, value in params.items():
        if isinstance(value, (list, tuple)) and len(value) > 3:
            value = f"[{len(value)} values]"
        parts.append(f"{key}={value}")
    return ", ".join(parts)


def _export_archive(calls: list[dict[str, Any]], cache: Path, archive: Path) -> None:
    """Write the grid results this run used (``calls`` from :func:`read_calls`) to ``archive``."""
    keys = [task["key"] for call in calls for task in call["tasks"]]
    if keys:
        export_cells(cache, keys, archive)
    else:
        archive.unlink(missing_ok=True)  # no grid in this notebook: an old archive would be misleading


def _time_profile(executed: Path, calls: list[dict[str, Any]], reused: int) -> dict[str, Any]:
    """Where the notebook's time went: per code cell, per run_grid call and the slowest grid cells.

    Grid seconds are each (cell, repetition)'s compute time, also for results
    taken from the cache (the time of the run that computed them); the
    notebook cells' seconds are this run's papermill durations.
    """
    import nbformat

    notebook = nbformat.read(executed, as_version=4)
    cells = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        duration = cell.get("metadata", {}).get("papermill", {}).get("duration")
        first = next((line.strip() for line in cell.source.splitlines() if line.strip()), "")
        cells.append({"cell": index, "seconds": round(float(duration or 0.0), 2), "source": first[:70]})
    grids, spots = [], []
    for call in calls:
        tasks = call["tasks"]
        seconds = [float(task.get("seconds") or 0.0) for task in tasks]
        cpu = [float(task.get("cpu_seconds") or 0.0) for task in tasks]
        function = call["function"].rsplit(".", 1)[-1]
        grids.append({"function": function, "runs": len(tasks),
                      "from_cache": sum(bool(task.get("cached")) for task in tasks),
                      "seconds": round(sum(seconds), 1), "cpu_seconds": round(sum(cpu), 1)})
        per_cell: dict[str, list[float]] = {}
        for task, value in zip(tasks, seconds):
            per_cell.setdefault(_cell_label(task["params"]), []).append(value)
        spots.extend({"function": function, "cell": label, "runs": len(values), "seconds": round(sum(values), 1),
                      "seconds_per_run": round(sum(values) / len(values), 2)} for label, values in per_cell.items())
    spots.sort(key=lambda spot: -spot["seconds"])
    return {"cells": cells, "grids": grids, "hot_spots": spots[:_HOT_SPOTS], "imported_from_archive": reused}


def _versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for package in _PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def _injected_path(path: Path, cwd: Path) -> str:
    """``path`` relative to the notebook's folder when both share the project root, else absolute."""
    project = cwd.parent
    try:
        path.relative_to(project)
    except ValueError:
        return os.fspath(path)
    return Path(os.path.relpath(path, cwd)).as_posix()


def _describe_failure(name: str, error: BaseException, executed: Path) -> str:
    from papermill.exceptions import PapermillExecutionError

    if isinstance(error, PapermillExecutionError):
        first = (str(error.evalue).strip().splitlines() or [""])[0]
        source = next((line.strip() for line in str(error.source).splitlines() if line.strip()), "")
        if len(source) > 60:
            source = source[:57] + "..."
        cell = f"cell [{error.exec_count}]" if error.exec_count is not None else f"cell #{error.cell_index}"
        return (
            f"notebook {name} failed in {cell} (`{source}`): {error.ename}: {first} "
            f"-- executed copy with the traceback: {executed}"
        )
    first = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return f"notebook {name} failed: {type(error).__name__}: {first} -- executed copy: {executed}"


_SET_BY_RUNNER = ("profile", "n_jobs", "out_dir", "cache_dir")


def _check_parameters(parameters: Mapping[str, Any] | None) -> dict[str, Any]:
    if parameters is None:
        return {}
    if not isinstance(parameters, Mapping):
        raise TypeError(f"parameters must be a mapping of name to value, got {type(parameters).__name__}")
    checked = {}
    for name, value in parameters.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"parameter name {name!r} is not a Python identifier")
        if name in _SET_BY_RUNNER:
            raise ValueError(f"parameter {name!r} is set by the runner; use the matching option (--profile, --jobs, "
                             "--out; the cache folder follows --out)")
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise TypeError(f"parameter {name!r} must be a number, string, boolean, None or a JSON list/mapping, "
                            f"got {type(value).__name__}") from None
        checked[name] = value
    return checked


def reproduce(
    profile: str = "quick",
    only: str | Sequence[str] | None = None,
    jobs: int = 1,
    out: str | os.PathLike[str] | None = None,
    notebooks_dir: str | os.PathLike[str] | None = None,
    kernel_name: str | None = None,
    *,
    keep_going: bool = False,
    progress: bool = True,
    parameters: Mapping[str, Any] | None = None,
    recompute: bool = False,
) -> list[Path]:
    """Execute the notebooks with papermill and return the executed copies' paths.

    Parameters
    ----------
    profile
        ``smoke`` (seconds; the tests), ``quick`` (minutes per notebook) or
        ``full`` (the papers' grids).
    only
        A notebook name or list of names (without ``.ipynb``); default all.
    jobs
        Injected as the notebooks' ``n_jobs`` (≥ 1, or -1 for all cores).
    out
        Output root; notebook ``<name>`` writes to ``out/<name>/``. Default
        :func:`default_out_dir` (``results/``, untracked); pass ``"figures"``
        to refresh the committed results.
    notebooks_dir
        Folder of the notebooks; default the project's ``notebooks/``.
    kernel_name
        An installed Jupyter kernelspec to use instead of ``sys.executable``.
    keep_going
        Run the remaining notebooks after a failure, then raise for the first one.
    progress
        Print each notebook's progress on stdout: code cells done / total and the elapsed time, rewritten in
        place on a terminal (every second) and a line a minute elsewhere; then ``done in … s``.
    parameters
        Further notebook parameters (papermill's ``-p NAME VALUE``), e.g.
        ``{"seed": 3}``, injected after the notebook's ``parameters`` cell into
        every notebook run. ``profile``, ``n_jobs`` and ``out_dir`` are set by
        the arguments above and cannot be given here.
    recompute
        Reuse no grid cell: empty ``out/<name>/``'s cache and import neither its
        archive nor the committed ``figures/<name>/cells.jsonl.gz`` (by default a
        cell whose parameters, seed and code fingerprint match is read back, so a
        fresh clone's full run gives the committed numbers without computing them).

    Raises
    ------
    NotebookError
        When a notebook fails; the message names it and its failing cell. The
        executed copy (with the traceback) is kept as ``out/<name>/<name>.failed.ipynb``.
    """
    if not isinstance(profile, str):
        raise TypeError(f"profile must be a string, got {type(profile).__name__}")
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {list(PROFILES)}, got {profile!r}")
    jobs = check_int(jobs, "jobs")
    if jobs == 0 or jobs < -1:
        raise ValueError(f"jobs must be >= 1 or -1 (all cores), got {jobs}")
    if out is None:
        out = default_out_dir()
    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out must be a path, got {type(out).__name__}")
    out_root = Path(out).expanduser().resolve()
    if out_root.exists() and not out_root.is_dir():
        raise ValueError(f"out {os.fspath(out)!r} exists and is not a folder")
    if kernel_name is not None and (not isinstance(kernel_name, str) or not kernel_name):
        raise TypeError("kernel_name must be a non-empty string or None")
    extra = _check_parameters(parameters)
    notebooks = [p.resolve() for p in find_notebooks(notebooks_dir, only)]

    import papermill as pm

    engine = _progress_engine()
    executed_paths: list[Path] = []
    failures: list[NotebookError] = []
    for number, notebook in enumerate(notebooks, start=1):
        name = notebook.stem
        target = out_root / name
        target.mkdir(parents=True, exist_ok=True)
        (target / RUN_INFO).unlink(missing_ok=True)
        executed = target / f"{name}.ipynb"
        failed = target / f"{name}.failed.ipynb"
        partial = target / f".{name}.partial.ipynb"
        cache = target / CACHE_FOLDER
        (cache / "calls.jsonl").unlink(missing_ok=True)
        if recompute:  # no cell is read back: neither the cache of an earlier run nor an archive
            shutil.rmtree(cache, ignore_errors=True)
        archives = [] if recompute else [target / CELLS_ARCHIVE, *_committed_archive(name, profile, target)]
        reused = _import_archive(archives, cache)
        injected = {**extra, "profile": profile, "n_jobs": jobs, "out_dir": _injected_path(target, notebook.parent),
                    "cache_dir": _injected_path(cache, notebook.parent)}
        reporter = _Progress(f"[{number}/{len(notebooks)}] {name} ({profile})") if progress else None
        started = time.perf_counter()
        date = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        kernel_log = target / KERNEL_LOG
        log = open(kernel_log, "w", encoding="utf-8")  # noqa: SIM115 - closed in the finally below
        manager_class = _kernel_manager_class(same_interpreter=kernel_name is None, log=log)
        try:
            if reporter is not None:
                reporter.start()
            pm.execute_notebook(
                os.fspath(notebook),
                os.fspath(partial),
                parameters=injected,
                engine_name=engine,
                kernel_name=kernel_name or _KERNEL_NAME,
                language="python",
                progress_bar=False,
                cwd=os.fspath(notebook.parent),
                kernel_manager_class=manager_class,
                dpcd_progress=reporter,
            )
        except Exception as error:  # noqa: BLE001 - reported with the notebook's name
            seconds = time.perf_counter() - started
            if partial.exists():
                os.replace(partial, failed)
            executed.unlink(missing_ok=True)  # a copy from an earlier run would be misleading
            message = _describe_failure(name, error, failed)
            if kernel_log.stat().st_size:
                message += f" (the kernel's own messages: {kernel_log})"
            failure = NotebookError(name, message, failed if failed.exists() else None)
            if reporter is not None:
                reporter.finish(f"FAILED after {seconds:.1f} s")
            if not keep_going:
                raise failure from error
            failures.append(failure)
            continue
        finally:
            if reporter is not None:
                reporter.stop()  # also on KeyboardInterrupt
            log.close()
            if kernel_log.stat().st_size == 0:
                kernel_log.unlink()
        seconds = time.perf_counter() - started
        os.replace(partial, executed)
        failed.unlink(missing_ok=True)
        calls = read_calls(cache)
        _export_archive(calls, cache, target / CELLS_ARCHIVE)
        info = {
            "notebook": name,
            "profile": profile,
            "n_jobs": jobs,
            "date": date,
            "seconds": round(seconds, 1),
            **({"parameters": extra} if extra else {}),
            "time_profile": _time_profile(executed, calls, reused),
            "python": platform.python_version(),
            "platform": f"{platform.system()} {platform.machine()}",
            "packages": _versions(),
        }
        atomic_write_text(target / RUN_INFO, json.dumps(info, indent=2) + "\n")
        executed_paths.append(executed)
        if reporter is not None:
            reporter.finish(f"done in {seconds:.1f} s")
    if len(failures) == 1:
        raise failures[0]
    if failures:
        names = ", ".join(f.notebook for f in failures)
        raise NotebookError(failures[0].notebook, f"{len(failures)} notebooks failed ({names}); first: {failures[0]}")
    return executed_paths

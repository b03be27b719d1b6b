"""The papermill runner and the command line, on throw-away notebooks."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest

from dpcd_papers.cli import main
from dpcd_papers.runner import NotebookError, find_notebooks, reproduce

PARAMETERS = 'profile = "quick"\nseed = 0\nn_jobs = 1\nout_dir = "../figures/default"\n'

RECORD = """\
import json, pathlib, sys
out = pathlib.Path(out_dir)
out.mkdir(parents=True, exist_ok=True)
(out / "seen.json").write_text(json.dumps(
    {"profile": profile, "seed": seed, "n_jobs": n_jobs, "out_dir": out_dir, "python": sys.executable}))
"""


def write_notebook(folder: Path, name: str, *cells: str) -> Path:
    """A notebook with a tagged parameters cell followed by ``cells``."""
    nb = nbformat.v4.new_notebook()
    parameters = nbformat.v4.new_code_cell(PARAMETERS)
    parameters.metadata["tags"] = ["parameters"]
    nb.cells = [parameters, *(nbformat.v4.new_code_cell(c) for c in cells)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture
def project(tmp_path, monkeypatch):
    """notebooks/ with two working notebooks and one failing one; a decoy kernelspec on JUPYTER_PATH."""
    notebooks = tmp_path / "notebooks"
    write_notebook(notebooks, "b_second", RECORD)
    write_notebook(notebooks, "a_first", RECORD, "print('ok')")
    write_notebook(notebooks, "c_broken", "x = 1", "if profile == 'smoke':\n    raise ValueError('bad profile\\nmore')")
    # a kernelspec named python3 that points elsewhere must not be picked up
    decoy = tmp_path / "jupyter" / "kernels" / "python3"
    decoy.mkdir(parents=True)
    (decoy / "kernel.json").write_text(json.dumps({
        "argv": [str(tmp_path / "no-such-python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "decoy", "language": "python",
    }))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return tmp_path


def test_parameters_injected_and_kernel_is_this_python(project, capsys):
    out = project / "figures"
    executed = reproduce("smoke", only=["b_second", "a_first"], jobs=2, out=out, notebooks_dir=project / "notebooks")
    assert executed == [out / "a_first" / "a_first.ipynb", out / "b_second" / "b_second.ipynb"]
    seen = json.loads((out / "a_first" / "seen.json").read_text())
    assert seen["profile"] == "smoke" and seen["n_jobs"] == 2 and seen["seed"] == 0
    assert seen["out_dir"] == "../figures/a_first"  # relative to the notebook's folder
    assert Path(seen["python"]) == Path(sys.executable)
    info = json.loads((out / "a_first" / "run.json").read_text())
    assert info["profile"] == "smoke" and info["seconds"] >= 0 and info["packages"]["dpcd"]
    assert not any(str(project) in str(v) for v in info.values())
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"\[1/2\] a_first \(smoke\) \.\.\. done in \d+\.\d s", lines[0])
    assert lines[1].startswith("[2/2] b_second (smoke) ...")
    stored = nbformat.read(executed[0], as_version=4)
    assert any("injected-parameters" in c.metadata.get("tags", []) for c in stored.cells)
    assert not list(out.rglob(".*.partial.ipynb"))


def test_cli_parameters_reach_the_notebook(project, capsys):
    """``-p NAME VALUE`` is injected (papermill style) and read back from the executed copy."""
    out = project / "with_p"
    status = main(["reproduce", "--profile", "smoke", "--only", "a_first", "--notebooks", str(project / "notebooks"),
                   "--out", str(out), "-p", "seed", "17", "-p", "student", "ada"])
    assert status == 0
    seen = json.loads((out / "a_first" / "seen.json").read_text())
    assert seen["seed"] == 17 and seen["profile"] == "smoke"
    stored = nbformat.read(out / "a_first" / "a_first.ipynb", as_version=4)
    injected = next(c for c in stored.cells if "injected-parameters" in c.metadata.get("tags", []))
    assert "seed = 17" in injected.source and 'student = "ada"' in injected.source
    assert json.loads((out / "a_first" / "run.json").read_text())["parameters"] == {"seed": 17, "student": "ada"}


def test_failure_names_notebook_and_cell(project):
    out = project / "out"
    with pytest.raises(NotebookError) as info:
        reproduce("smoke", only="c_broken", out=out, notebooks_dir=project / "notebooks", progress=False)
    message = str(info.value)
    assert "notebook c_broken failed in cell [" in message
    assert "if profile == 'smoke':" in message and "ValueError: bad profile" in message
    assert (out / "c_broken" / "c_broken.failed.ipynb").exists()
    assert not (out / "c_broken" / "c_broken.ipynb").exists() and not (out / "c_broken" / "run.json").exists()


def test_cli_exit_status_and_single_error_line(project, capsys):
    notebooks = str(project / "notebooks")
    out = project / "cli"
    status = main(["reproduce", "--profile", "smoke", "--only", "c_broken", "a_first", "--keep-going",
                   "--notebooks", notebooks, "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 1
    assert captured.err.count("\n") == 1 and "notebook c_broken failed in cell" in captured.err
    assert (out / "a_first" / "run.json").exists()  # --keep-going ran the others


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["reproduce", "--profile", "huge"], "invalid choice: 'huge'"),
        (["reproduce", "--only", "missing"], "no notebook named 'missing'"),
        (["reproduce", "--jobs", "0"], "jobs must be >= 1"),
        (["reproduce", "--jobs", "two"], "invalid int value"),
        (["reproduce", "--out", "FILE"], "exists and is not a folder"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["reproduce", "-p", "profile", "full"], "parameter 'profile' is set by the runner"),
        (["reproduce", "-p", "2x", "1"], "parameter name '2x' is not a Python identifier"),
        (["reproduce", "-p", "seed"], "expected 2 arguments"),
        ([], "choose a command"),
    ],
)
def test_cli_bad_input_exits_2_without_writing(project, capsys, argv, match):
    (project / "FILE").write_text("not a folder")
    argv = [str(project / "FILE") if a == "FILE" else a for a in argv]
    if argv[:1] == ["reproduce"]:
        argv += ["--notebooks", str(project / "notebooks")]
        if "--out" not in argv:
            argv += ["--out", str(project / "never")]
    with pytest.raises(SystemExit) as info:
        raise SystemExit(main(argv))
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(match, err)
    assert not (project / "never").exists()


def test_find_notebooks_and_argument_checks(project):
    folder = project / "notebooks"
    assert [p.stem for p in find_notebooks(folder)] == ["a_first", "b_second", "c_broken"]
    assert [p.stem for p in find_notebooks(folder, "b_second.ipynb")] == ["b_second"]
    with pytest.raises(ValueError, match="profile must be one of"):
        reproduce("medium", notebooks_dir=folder, out=project / "x")
    with pytest.raises(TypeError, match="jobs must be an integer"):
        reproduce("smoke", jobs=1.5, notebooks_dir=folder, out=project / "x")
    with pytest.raises(ValueError, match="is not a folder"):
        find_notebooks(project / "nowhere")
    assert not (project / "x").exists()


# --------------------------------------------------------------------------- resume, archive and time profile

CELL_MODULE = """\
import os


def cell(a, rng):
    with open(os.environ["GRID_CALLS"], "a", encoding="utf-8") as handle:
        handle.write(f"{a}\\n")
    return {"draw": float(rng.normal()), "pair": (a, a + 1), "scale": SCALE * a}


SCALE = 1.0
"""

GRID = """\
from gridcells import cell
from dpcd_papers.experiments import run_grid
frame = run_grid(cell, {"a": [1, 2, 3]}, repetitions=2, seed=seed, progress=False, cache_dir=cache_dir)
import pathlib
pathlib.Path(out_dir).mkdir(parents=True, exist_ok=True)
frame.to_csv(pathlib.Path(out_dir) / "frame.csv", index=False)
assert frame["pair"].map(type).eq(tuple).all()
"""


def grid_calls(path: Path) -> int:
    return len(path.read_text().split()) if path.exists() else 0


def test_resume_archive_and_code_fingerprint(tmp_path, monkeypatch):
    """A re-run computes nothing; a fresh output folder with only the archive re-uses it, until the code changes."""
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "gridcells.py").write_text(CELL_MODULE)
    counter = tmp_path / "calls.txt"
    monkeypatch.setenv("PYTHONPATH", str(modules))  # the kernel imports the cell function from there
    monkeypatch.setenv("GRID_CALLS", str(counter))
    notebooks = tmp_path / "notebooks"
    write_notebook(notebooks, "grid", GRID)
    first_out = tmp_path / "first"
    reproduce("smoke", out=first_out, notebooks_dir=notebooks, progress=False)
    assert grid_calls(counter) == 6
    info = json.loads((first_out / "grid" / "run.json").read_text())
    profile = info["time_profile"]
    assert profile["grids"] == [{"function": "cell", "runs": 6, "from_cache": 0, "seconds": profile["grids"][0]["seconds"],
                                 "cpu_seconds": profile["grids"][0]["cpu_seconds"]}]
    assert len(profile["hot_spots"]) == 3 and {s["runs"] for s in profile["hot_spots"]} == {2}
    assert [c["cell"] for c in profile["cells"]] == [0, 1, 2]  # parameters, injected parameters, the grid
    archive = first_out / "grid" / "cells.jsonl.gz"
    assert archive.exists()
    expected = (first_out / "grid" / "frame.csv").read_text()

    reproduce("smoke", out=first_out, notebooks_dir=notebooks, progress=False)  # resumes: nothing recomputed
    assert grid_calls(counter) == 6
    assert json.loads((first_out / "grid" / "run.json").read_text())["time_profile"]["grids"][0]["from_cache"] == 6

    fresh = tmp_path / "fresh" / "grid"  # a clone: the committed archive, no cache folder
    fresh.mkdir(parents=True)
    fresh.joinpath("cells.jsonl.gz").write_bytes(archive.read_bytes())
    reproduce("smoke", out=fresh.parent, notebooks_dir=notebooks, progress=False)
    assert grid_calls(counter) == 6
    assert (fresh / "frame.csv").read_text() == expected
    assert json.loads((fresh / "run.json").read_text())["time_profile"]["imported_from_archive"] == 6

    (modules / "gridcells.py").write_text(CELL_MODULE.replace("SCALE = 1.0", "SCALE = 2.0"))  # the code changed
    again = tmp_path / "again" / "grid"
    again.mkdir(parents=True)
    again.joinpath("cells.jsonl.gz").write_bytes(archive.read_bytes())
    reproduce("smoke", out=again.parent, notebooks_dir=notebooks, progress=False)
    assert grid_calls(counter) == 12  # every cell recomputed
    assert (again / "frame.csv").read_text() != expected

    reproduce("quick", out=again.parent, notebooks_dir=notebooks, progress=False)  # the profile is not a key
    assert grid_calls(counter) == 12


def test_notebook_grid_on_a_dask_cluster_equals_the_local_run(tmp_path, monkeypatch):
    """The runner with DPCD_DASK_SCHEDULER set: the notebook's grid runs on the cluster's two workers, same results."""
    distributed = pytest.importorskip("distributed")
    from dpcd_papers.experiments import DASK_SCHEDULER_ENV

    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "gridcells.py").write_text(CELL_MODULE.replace(
        '"scale": SCALE * a}', '"scale": SCALE * a, "pid": os.getpid()}'))
    monkeypatch.setenv("PYTHONPATH", str(modules))  # the kernel and the workers import the cell function
    monkeypatch.syspath_prepend(str(modules))  # so does the scheduler, which runs in this process
    monkeypatch.setenv("GRID_CALLS", str(tmp_path / "calls.txt"))
    notebooks = tmp_path / "notebooks"
    write_notebook(notebooks, "grid", GRID)
    reproduce("smoke", out=tmp_path / "local", notebooks_dir=notebooks, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        monkeypatch.setenv(DASK_SCHEDULER_ENV, cluster.scheduler_address)
        reproduce("smoke", out=tmp_path / "dask", notebooks_dir=notebooks, progress=False)
        with distributed.Client(cluster) as client:
            worker_pids = set(client.run(os.getpid).values())
    import pandas as pd

    local = pd.read_csv(tmp_path / "local" / "grid" / "frame.csv")
    on_dask = pd.read_csv(tmp_path / "dask" / "grid" / "frame.csv")
    assert set(on_dask["pid"]) <= worker_pids and len(worker_pids) == 2
    pd.testing.assert_frame_equal(local.drop(columns="pid"), on_dask.drop(columns="pid"))
    info = json.loads((tmp_path / "dask" / "grid" / "run.json").read_text())
    assert info["time_profile"]["grids"][0]["runs"] == 6 and info["time_profile"]["grids"][0]["from_cache"] == 0


@pytest.mark.notebook
@pytest.mark.slow
def test_project_notebook_on_a_dask_cluster(tmp_path, monkeypatch):
    """A real notebook (pc_baseline, smoke) with its grid on a two-worker LocalCluster: same judged results."""
    distributed = pytest.importorskip("distributed")
    import pandas as pd

    from dpcd_papers.experiments import DASK_SCHEDULER_ENV
    from dpcd_papers.reporting import read_comparison

    reproduce("smoke", only="pc_baseline", out=tmp_path / "local", progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        monkeypatch.setenv(DASK_SCHEDULER_ENV, cluster.scheduler_address)
        reproduce("smoke", only="pc_baseline", out=tmp_path / "dask", progress=False)
    local, on_dask = (read_comparison(tmp_path / where / "pc_baseline" / "comparison.csv") for where in ("local", "dask"))
    pd.testing.assert_frame_equal(local, on_dask)
    grids = json.loads((tmp_path / "dask" / "pc_baseline" / "run.json").read_text())["time_profile"]["grids"]
    assert grids[0]["function"] == "run_network" and grids[0]["from_cache"] == 0 and grids[0]["runs"] >= 2


def test_default_output_is_untracked_and_seeded_from_the_committed_run_of_the_same_profile(tmp_path, monkeypatch):
    """`make reproduce` never writes into the committed figures/; a new folder re-uses figures/ of its profile."""
    import subprocess

    from dpcd_papers import runner

    root = Path(__file__).resolve().parents[1]
    assert runner.default_out_dir() == root / "results" != runner.committed_dir()
    assert re.search(r"^OUT\s*\?=\s*results\s*$", (root / "Makefile").read_text(), re.M)
    if (root / ".git").exists():
        assert subprocess.run(["git", "check-ignore", "-q", "results/REPORT.md"], cwd=root).returncode == 0
    from dpcd_papers.cli import build_parser

    assert build_parser().parse_args(["reproduce"]).out is None  # None: default_out_dir()

    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "gridcells.py").write_text(CELL_MODULE)
    counter = tmp_path / "calls.txt"
    monkeypatch.setenv("PYTHONPATH", str(modules))
    monkeypatch.setenv("GRID_CALLS", str(counter))
    notebooks = tmp_path / "notebooks"
    write_notebook(notebooks, "grid", GRID)
    committed = tmp_path / "committed"
    reproduce("smoke", out=committed, notebooks_dir=notebooks, progress=False)
    assert grid_calls(counter) == 6
    monkeypatch.setattr(runner, "committed_dir", lambda: committed)

    reproduce("smoke", out=tmp_path / "new", notebooks_dir=notebooks, progress=False)
    assert grid_calls(counter) == 6  # every run taken from the committed archive of the same profile
    assert json.loads((tmp_path / "new" / "grid" / "run.json").read_text())["time_profile"]["imported_from_archive"] == 6
    reproduce("quick", out=tmp_path / "other", notebooks_dir=notebooks, progress=False)
    assert json.loads((tmp_path / "other" / "grid" / "run.json").read_text())["time_profile"]["imported_from_archive"] == 0
    before = grid_calls(counter)
    reproduce("smoke", out=tmp_path / "new", notebooks_dir=notebooks, progress=False, recompute=True)
    assert grid_calls(counter) == before + 6  # recompute: neither its own cache and archive nor the committed one
    assert json.loads((tmp_path / "new" / "grid" / "run.json").read_text())["time_profile"]["imported_from_archive"] == 0


class _Manager:
    """The two things of papermill's NotebookExecutionManager that the progress line uses."""

    def __init__(self, cells):
        self.nb = nbformat.v4.new_notebook(cells=cells)
        self.completed = []

    def cell_complete(self, cell, cell_index=None, **kwargs):
        self.completed.append(cell_index)


def test_progress_counts_code_cells_and_beats_off_a_terminal():
    """Off a terminal: the notebook's one line, a line per ``interval`` while it runs, then ``done in``."""
    import io
    import time

    from dpcd_papers.runner import _Progress

    short = io.StringIO()
    progress = _Progress("[1/2] a (smoke)", short, interval=60)
    progress.start()
    progress.finish("done in 0.1 s")
    assert short.getvalue() == "[1/2] a (smoke) ... done in 0.1 s\n"

    long = io.StringIO()
    manager = _Manager([nbformat.v4.new_markdown_cell("# a"), nbformat.v4.new_code_cell("1"),
                        nbformat.v4.new_code_cell("2")])
    progress = _Progress("[2/2] b (quick)", long, interval=0.05)
    progress.start()
    progress.watch(manager)
    for index, cell in enumerate(manager.nb.cells):
        manager.cell_complete(cell, cell_index=index)
    assert manager.completed == [0, 1, 2] and progress.done == 2 and progress.total == 2
    time.sleep(0.3)
    progress.finish("done in 0.3 s")
    lines = long.getvalue().splitlines()
    assert lines[0] == "[2/2] b (quick) ..."
    assert re.fullmatch(r"\[2/2\] b \(quick\): 2/2 cells done, 0:00 elapsed", lines[1]), lines
    assert lines[-1] == "[2/2] b (quick) done in 0.3 s"


def test_kernel_is_not_interrupted_on_its_way_to_a_shutdown():
    """jupyter_client's SIGINT before a shutdown printed KeyboardInterrupt messages of an idle kernel's workers."""
    import asyncio

    from dpcd_papers.runner import _kernel_manager_class

    for same_interpreter in (True, False):
        manager = _kernel_manager_class(same_interpreter)()
        with pytest.raises(RuntimeError, match="No kernel is running"):  # any other time: interrupted as usual
            asyncio.run(manager._async_interrupt_kernel())
        manager.shutting_down = True
        asyncio.run(manager._async_interrupt_kernel())  # nothing sent, nothing raised

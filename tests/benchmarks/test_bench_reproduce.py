"""The README's first command on a fresh clone: the quick profile of every notebook from a cold cache, timed.

A ``git clone`` of this repository (its committed HEAD: uncommitted edits are not in it) into a temporary folder
runs ``python -m dpcd_papers reproduce --profile quick --jobs 2`` — what ``make reproduce`` runs with the
Makefile's defaults — with this interpreter and ``PYTHONPATH`` at the clone's ``src/`` (no venv of its own), a
fresh calibration store (``DPCD_CACHE_DIR``) and an output folder of its own, so that no grid cell, calibration
or archive of an earlier run is re-used (the committed ``figures/`` archives hold the full profile, which a quick
run never imports). Prints each notebook's seconds and the total, which the README's quick column quotes; the
quick profile aims at under 10 minutes on two idle cores. Asserts only that every notebook completes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JOBS = 2


@pytest.mark.benchmark
def test_quick_profile_from_a_cold_cache_on_a_fresh_clone(report, tmp_path):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout of the project")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", os.fspath(ROOT), os.fspath(clone)], check=True)
    out = tmp_path / "results"
    env = {**os.environ, "PYTHONPATH": os.fspath(clone / "src"), "DPCD_CACHE_DIR": os.fspath(tmp_path / "calibration")}
    env.pop("DPCD_DASK_SCHEDULER", None)  # the local cores, as make reproduce uses them
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "dpcd_papers", "reproduce", "--profile", "quick", "--jobs", str(JOBS),
                           "--out", os.fspath(out)], cwd=clone, env=env, capture_output=True, text=True)
    total = time.perf_counter() - start
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    seconds = {}
    for info in sorted(out.glob("*/run.json")):
        run = json.loads(info.read_text(encoding="utf-8"))
        assert run["profile"] == "quick" and run["time_profile"]["imported_from_archive"] == 0
        seconds[run["notebook"]] = run["seconds"]
        report(f"reproduce quick, cold cache, JOBS={JOBS}: {run['notebook']}", seconds=run["seconds"],
               grid_cpu_seconds=round(sum(g["cpu_seconds"] for g in run["time_profile"]["grids"]), 1))
    assert sorted(seconds) == sorted(p.stem for p in (clone / "notebooks").glob("*.ipynb"))
    report(f"reproduce quick, cold cache, JOBS={JOBS}: all {len(seconds)} notebooks", seconds=round(total, 1),
           minutes=round(total / 60, 1), notebooks_seconds=round(sum(seconds.values()), 1))

"""Every notebook: stored clean, parameterised, and runs end to end in the smoke profile."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import nbformat
import pytest

from dpcd_papers.reporting import read_comparison
from dpcd_papers.runner import reproduce

NOTEBOOKS_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
REQUIRED_PARAMETERS = {"profile", "seed", "n_jobs", "out_dir", "cache_dir"}

each_notebook = pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])


def assigned_names(source: str) -> set[str]:
    """Names assigned at the top level of a code cell."""
    names = set()
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


@each_notebook
def test_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"cell {index} has stored outputs; clear them before committing"
            assert cell.execution_count is None, f"cell {index} has an execution count; clear outputs"
    assert str(NOTEBOOKS_DIR.parent) not in path.read_text(encoding="utf-8"), "absolute path of this checkout"


@each_notebook
def test_first_code_cell_holds_the_parameters(path):
    nb = nbformat.read(path, as_version=4)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert code_cells, "notebook has no code cell"
    first = code_cells[0]
    assert "parameters" in first.metadata.get("tags", []), "first code cell must be tagged 'parameters'"
    missing = REQUIRED_PARAMETERS - assigned_names(first.source)
    assert not missing, f"parameters cell does not define {sorted(missing)}"
    from papermill.translators import PythonTranslator

    seen = {parameter.name for parameter in PythonTranslator.inspect(first)}  # papermill warns of any it cannot read
    assert assigned_names(first.source) <= seen, f"papermill cannot read {sorted(assigned_names(first.source) - seen)}"
    assert nb.metadata.get("kernelspec", {}).get("language") == "python"


@pytest.mark.notebook
@pytest.mark.slow
@each_notebook
def test_runs_in_smoke_profile(path, tmp_path):
    executed = reproduce("smoke", only=path.stem, out=tmp_path, notebooks_dir=NOTEBOOKS_DIR, progress=False)
    out = tmp_path / path.stem
    assert executed == [out / f"{path.stem}.ipynb"]
    comparison = read_comparison(out / "comparison.csv")  # every notebook reports paper vs. reproduced
    assert len(comparison) > 0
    assert json.loads((out / "run.json").read_text())["profile"] == "smoke"
    assert list(out.glob("*.png")), "the notebook saved no figure (use dpcd_papers.plotting.savefig(fig, out_dir, name))"
    warned = [(cell, WARNING.search(text).group()) for cell, text in output_texts(executed[0]) if WARNING.search(text)]
    assert not warned, f"warnings in the executed notebook's outputs (cell, category): {warned}"
    if path.stem == "tutorial":  # run without solutions: every check open, none raised
        import pandas as pd

        assert set(pd.read_csv(out / "checks.csv")["status"]) == {"not yet answered"}
        shown = [text for _, text in output_texts(executed[0]) if "claimed_epsilon" in text]
        assert shown and not any("violation" in text for text in shown), "exercise 6's table shows the answer"


def default_out_dir(path: Path) -> str:
    """The ``out_dir`` a notebook's parameters cell sets (what a run in Jupyter writes to)."""
    first = next(c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    for node in ast.parse(first.source).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "out_dir" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path.name}: no out_dir in the parameters cell")


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=NOTEBOOKS_DIR.parent, capture_output=True, text=True)


def _in_git_checkout() -> bool:
    return shutil.which("git") is not None and _git("rev-parse", "--is-inside-work-tree").returncode == 0


@each_notebook
def test_default_out_dir_is_a_folder_git_ignores(path):
    """Run in Jupyter (``make lab``), a notebook writes beside the committed results, never into ``figures/``."""
    target = (NOTEBOOKS_DIR / default_out_dir(path)).resolve()
    assert target.parent == NOTEBOOKS_DIR.parent / "results" and target.name == path.stem, target
    if _in_git_checkout():
        assert _git("check-ignore", "-q", os.fspath(target / "comparison.csv")).returncode == 0


def output_texts(path: Path) -> list[tuple[int, str]]:
    """(cell index, text) of every output of an executed notebook: streams, plain text, HTML and errors."""
    texts = []
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                texts.append((index, output.text))
            elif output.output_type == "error":
                texts.append((index, f"{output.ename}: {output.evalue}"))
            else:
                data = output.get("data", {})
                texts.extend((index, data[kind]) for kind in ("text/plain", "text/html") if kind in data)
    return texts


WARNING = re.compile(r"\b[A-Z]\w*Warning\b")


@pytest.mark.notebook
@pytest.mark.slow
def test_tutorial_run_with_its_defaults_leaves_the_committed_results_alone(tmp_path):
    """The tutorial run from ``notebooks/`` as Jupyter runs it (its own ``out_dir``; smoke sizes): no file under
    ``figures/`` changes (``git status`` as before, no file written there); it writes to ``results/tutorial/``."""
    import papermill as pm

    from dpcd_papers.runner import _kernel_manager_class

    if not _in_git_checkout():
        pytest.skip("needs git and a git checkout of the project")
    figures = NOTEBOOKS_DIR.parent / "figures"
    before = _git("status", "--porcelain", "--untracked-files=all", "--", "figures").stdout
    target = (NOTEBOOKS_DIR / default_out_dir(NOTEBOOKS_DIR / "tutorial.ipynb")).resolve()
    kept = tmp_path / "kept"
    if target.exists():  # an earlier `make reproduce` wrote there: put it back afterwards
        shutil.move(os.fspath(target), os.fspath(kept))
    started = time.time()
    try:
        pm.execute_notebook(os.fspath(NOTEBOOKS_DIR / "tutorial.ipynb"), os.fspath(tmp_path / "tutorial.ipynb"),
                            parameters={"profile": "smoke"}, cwd=os.fspath(NOTEBOOKS_DIR), kernel_name="python3",
                            language="python", progress_bar=False, kernel_manager_class=_kernel_manager_class())
        assert (target / "checks.csv").exists() and (target / "comparison.csv").exists()
    finally:
        shutil.rmtree(target, ignore_errors=True)
        if kept.exists():
            shutil.move(os.fspath(kept), os.fspath(target))
    assert _git("status", "--porcelain", "--untracked-files=all", "--", "figures").stdout == before
    written = [p for p in figures.rglob("*") if p.is_file() and p.stat().st_mtime > started]
    assert not written, f"the tutorial wrote into the committed results: {written}"

"""Every notebook: stored clean, parameterised, and runs end to end in the smoke profile."""

from __future__ import annotations

import ast
import json
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
    if path.stem == "tutorial":  # run without solutions: every check open, none raised
        import pandas as pd

        assert set(pd.read_csv(out / "checks.csv")["status"]) == {"not yet answered"}

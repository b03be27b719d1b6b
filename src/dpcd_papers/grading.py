"""Grade submitted copies of the tutorial: ``python -m dpcd_papers grade SUBMISSIONS --out GRADED``.

Every ``SUBMISSIONS/<student>.ipynb`` (the file name, without ``.ipynb``, names
the student) is executed with papermill by :func:`dpcd_papers.runner.reproduce`
— with this Python interpreter, in the ``profile`` the class worked in
(default ``quick``, the notebook's default) and with ``solutions=False``
injected, so that a submission cannot turn the answer key on — into
``GRADED/<student>/``. The ``checks.csv`` each run writes there is collected
into ``GRADED/grades.csv``: one row per (student, exercise) with the check's
``status`` (``correct``, ``incorrect``, ``not yet answered``) and its
``detail`` (the hint the student saw, e.g. *expected a number* for an answer
given as a string). A student whose notebook failed gets one row with the
status ``notebook failed`` and the error in ``detail`` (the executed copy with
the traceback is ``GRADED/<student>/<student>.failed.ipynb``); one whose
notebook ran but wrote no ``checks.csv`` (e.g. not the tutorial) gets one row
``no checks.csv``. No student is ever left out. ``student_seed`` is the seed
the notebook ran with (for a failed notebook, the one its parameters cell
sets), so it can be compared with the seed the student was given.

Folders are created as needed; a submission is always re-run (an earlier
``checks.csv`` in its folder is removed first, so a failed re-run is never
graded with stale checks).
"""

from __future__ import annotations

import ast
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .reporting import atomic_write_text
from .runner import PROFILES, NotebookError, reproduce

__all__ = ["GRADES", "COLUMNS", "NOTEBOOK_FAILED", "NO_CHECKS", "find_submissions", "declared_seed", "grade_rows",
           "grade", "describe"]

GRADES = "grades.csv"
COLUMNS = ["student", "student_seed", "exercise", "status", "detail"]
NOTEBOOK_FAILED = "notebook failed"
NO_CHECKS = "no checks.csv"
_CHECKS = "checks.csv"


def _folder(value: Any, argument: str) -> Path:
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{argument} must be a folder path, got {type(value).__name__}")
    return Path(value).expanduser()


def find_submissions(submissions: str | os.PathLike[str]) -> list[Path]:
    """The notebooks to grade: every ``*.ipynb`` directly in ``submissions`` (not hidden), sorted by name.

    >>> find_submissions("no/such/folder")
    Traceback (most recent call last):
    ...
    ValueError: submissions 'no/such/folder' is not a folder
    """
    folder = _folder(submissions, "submissions")
    if not folder.is_dir():
        raise ValueError(f"submissions {os.fspath(submissions)!r} is not a folder")
    found = sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith(".") and p.is_file())
    if not found:
        raise ValueError(f"submissions {os.fspath(submissions)!r} holds no .ipynb notebook")
    return found


def declared_seed(source: str) -> int | None:
    """The integer ``student_seed`` assigned in a notebook's parameters cell (its source), else None.

    >>> declared_seed("profile = 'quick'\\nstudent_seed = 17\\nsolutions = False")
    17
    >>> declared_seed("student_seed = int(input())") is None
    True
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be a string, got {type(source).__name__}")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    seed = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "student_seed"
                                                for t in node.targets):
            value = node.value
            seed = value.value if isinstance(value, ast.Constant) and type(value.value) is int else None
    return seed


def _parameters_source(path: Path) -> str:
    """The source of the notebook's cell tagged ``parameters`` ("" when there is none or the file is unreadable)."""
    import nbformat

    try:
        notebook = nbformat.read(path, as_version=4)
    except Exception:  # noqa: BLE001 - an unreadable submission fails in its own run, with the reason
        return ""
    for cell in notebook.cells:
        if cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            return str(cell.source)
    return ""


def grade_rows(student: str, checks: pd.DataFrame | None, *, failure: str | None = None,
               student_seed: int | None = None) -> pd.DataFrame:
    """The rows of ``grades.csv`` for one student (columns :data:`COLUMNS`).

    ``checks`` is the student's ``checks.csv`` (columns ``exercise``,
    ``status``, and ``hint``, ``student_seed`` when present), or None when
    there is none; ``failure`` is the error of a notebook that failed. A
    failed notebook or a missing table gives one row whose status says so.

    >>> checks = pd.DataFrame({"exercise": ["laplace_scale"], "status": ["incorrect"],
    ...                        "hint": ["expected a number, got a str '4'"], "student_seed": [17]})
    >>> grade_rows("alice", checks).values.tolist()
    [['alice', 17, 'laplace_scale', 'incorrect', "expected a number, got a str '4'"]]
    >>> grade_rows("bob", None, failure="TypeError in cell [7]", student_seed=42).values.tolist()
    [['bob', 42, '', 'notebook failed', 'TypeError in cell [7]']]
    >>> grade_rows("carol", None)[["status", "detail"]].values.tolist()
    [['no checks.csv', 'the notebook ran but wrote no checks.csv: is it the tutorial?']]
    """
    if not isinstance(student, str) or not student:
        raise TypeError("student must be a non-empty string")
    seed: Any = pd.NA if student_seed is None else student_seed
    if failure is not None:
        return pd.DataFrame([[student, seed, "", NOTEBOOK_FAILED, str(failure)]], columns=COLUMNS)
    if checks is None:
        return pd.DataFrame([[student, seed, "", NO_CHECKS,
                              "the notebook ran but wrote no checks.csv: is it the tutorial?"]], columns=COLUMNS)
    if not isinstance(checks, pd.DataFrame):
        raise TypeError(f"checks must be a pandas DataFrame or None, got {type(checks).__name__}")
    missing = {"exercise", "status"} - set(checks.columns)
    if missing:
        raise ValueError(f"checks lacks the column(s) {sorted(missing)}")
    if checks.empty:
        return pd.DataFrame([[student, seed, "", NO_CHECKS, "checks.csv holds no check"]], columns=COLUMNS)
    rows = pd.DataFrame({
        "student": student,
        "student_seed": checks["student_seed"] if "student_seed" in checks.columns else seed,
        "exercise": checks["exercise"].astype(str),
        "status": checks["status"].astype(str),
        "detail": checks["hint"].fillna("").astype(str) if "hint" in checks.columns else "",
    })
    return rows[COLUMNS].reset_index(drop=True)


def _read_checks(path: Path) -> pd.DataFrame | None:
    if not path.is_file():
        return None
    try:
        return pd.read_csv(path)
    except (OSError, ValueError):  # an empty or unreadable table counts as none
        return None


def _first_line(text: str) -> str:
    return " ".join(text.split())


def grade(submissions: str | os.PathLike[str], out: str | os.PathLike[str], *, profile: str = "quick",
          kernel_name: str | None = None, progress: bool = True) -> pd.DataFrame:
    """Run every submitted notebook, collect its checks, write ``out/grades.csv`` and return the table.

    Parameters
    ----------
    submissions
        Folder of the submitted notebooks, one ``<student>.ipynb`` per student.
    out
        Output folder (created): ``out/<student>/`` receives the executed copy
        and the notebook's outputs, ``out/grades.csv`` the grades.
    profile
        The profile the students worked in (``smoke``, ``quick`` or ``full``):
        the exercises' numbers depend on it, so grade with the same one.
    kernel_name
        An installed Jupyter kernelspec to use instead of this interpreter.
    progress
        Print one line per student.

    Examples
    --------
    >>> grade("no/such/folder", "graded")
    Traceback (most recent call last):
    ...
    ValueError: submissions 'no/such/folder' is not a folder
    """
    if not isinstance(profile, str) or profile not in PROFILES:
        raise ValueError(f"profile must be one of {list(PROFILES)}, got {profile!r}")
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be True or False, got {type(progress).__name__}")
    notebooks = find_submissions(submissions)
    root = _folder(out, "out")
    if root.exists() and not root.is_dir():
        raise ValueError(f"out {os.fspath(out)!r} exists and is not a folder")
    root.mkdir(parents=True, exist_ok=True)
    tables = []
    for number, notebook in enumerate(notebooks, start=1):
        student = notebook.stem
        target = root / student
        for stale in (_CHECKS, "checks.md"):
            (target / stale).unlink(missing_ok=True)
        seed = declared_seed(_parameters_source(notebook))
        started = time.perf_counter()
        failure = None
        try:
            reproduce(profile, only=student, out=root, notebooks_dir=notebook.parent, kernel_name=kernel_name,
                      progress=False, parameters={"solutions": False})
        except NotebookError as error:
            failure = _first_line(str(error))
        rows = grade_rows(student, None if failure else _read_checks(target / _CHECKS), failure=failure,
                          student_seed=seed)
        tables.append(rows)
        if progress:
            print(f"[{number}/{len(notebooks)}] {student}: {describe(rows)} ({time.perf_counter() - started:.1f} s)",
                  flush=True)
    grades = pd.concat(tables, ignore_index=True)[COLUMNS]
    atomic_write_text(root / GRADES, grades.to_csv(index=False, lineterminator="\n"))
    return grades


def describe(grades: pd.DataFrame) -> str:
    """One line: how many students and checks, and the count of each status.

    >>> describe(pd.DataFrame({"student": ["a", "a", "b"], "status": ["correct", "incorrect", "notebook failed"]}))
    '2 students, 3 rows: 1 correct, 1 incorrect, 1 notebook failed'
    """
    if not isinstance(grades, pd.DataFrame) or not {"student", "status"} <= set(grades.columns):
        raise TypeError("grades must be a DataFrame with the columns 'student' and 'status'")
    students = grades["student"].nunique()
    counts = grades["status"].value_counts()
    order: Sequence[str] = ["correct", "incorrect", "not yet answered", NOTEBOOK_FAILED, NO_CHECKS]
    parts = [f"{int(counts[s])} {s}" for s in order if s in counts.index]
    parts += [f"{int(n)} {s}" for s, n in counts.items() if s not in order]
    noun = "student" if students == 1 else "students"
    return f"{students} {noun}, {len(grades)} rows: " + ", ".join(parts)

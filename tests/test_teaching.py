"""``dpcd.teaching`` checks, ``notebooks/tutorial.ipynb`` under papermill (answer key for two students) and the
grading of submitted copies (``python -m dpcd_papers grade``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import networkx as nx
import numpy as np
import pandas as pd
import pytest

from dpcd import teaching
from dpcd.audit import run_case
from dpcd.datasets import load_bnlearn
from dpcd_papers.cli import main
from dpcd_papers.grading import COLUMNS, NO_CHECKS, NOTEBOOK_FAILED, find_submissions, grade_rows
from dpcd_papers.runner import reproduce

NOTEBOOKS_DIR = Path(__file__).resolve().parents[1] / "notebooks"
TUTORIAL = NOTEBOOKS_DIR / "tutorial.ipynb"


@pytest.fixture(scope="module")
def asia() -> pd.DataFrame:
    return load_bnlearn("asia", 3_000, rng=5).data


def cases(asia):
    truth = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "d")])
    estimate = nx.DiGraph([("a", "b"), ("c", "b"), ("a", "d")])
    audit = pd.DataFrame({"name": ["mechanism 101", "mechanism 202"], "violation": [False, True]})
    return [
        (teaching.check_g2_p_value, {"data": asia, "x": "smoke", "y": "dysp", "given": ["bronc"]}, "g2_p_value"),
        (teaching.check_ci_decision, {"data": asia, "x": "smoke", "y": "dysp", "given": ["bronc"], "alpha": 0.05},
         "ci_decision"),
        (teaching.check_histogram_sensitivity, {"relation": "replace", "histograms": 3}, "histogram_sensitivity"),
        (teaching.check_laplace_scale, {"sensitivity": 2.0, "epsilon": 0.5}, "laplace_scale"),
        (teaching.check_flip_probability, {"margin": 0.3, "scale": 0.7}, "flip_probability"),
        (teaching.check_skeleton_f1, {"estimated": estimate, "true": truth}, "skeleton_f1"),
        (teaching.check_basic_composition, {"epsilons": [0.1, 0.25, 0.25]}, "basic_composition"),
        (teaching.check_broken_mechanism, {"audit": audit}, "broken_mechanism"),
    ]


def test_each_check_says_right_wrong_or_open_and_never_gives_the_answer(asia):
    assert [exercise for _, _, exercise in cases(asia)] == list(teaching.EXERCISES)
    for check, context, exercise in cases(asia):
        expected = teaching.solve(exercise, **context)
        assert check(expected, **context).status == "correct", exercise
        for open_answer in (None, ...):
            assert check(open_answer, **context).status == "not yet answered", exercise
        if isinstance(expected, str):
            wrong = {"independent": "dependent", "dependent": "independent"}.get(expected, "mechanism 101")
        else:
            wrong = expected * 1.5 + 0.1
        for answer in (wrong, "not a number", str(expected), [expected], True, float("nan")):
            if isinstance(expected, str) and answer == str(expected):
                continue
            feedback = check(answer, **context)  # never an exception, whatever the answer's type
            assert feedback.status == "incorrect" and feedback.hint, (exercise, answer)
            assert feedback.expected is None, exercise
            text = f"{feedback} {feedback._repr_markdown_()}"
            assert "too large" not in text and "too small" not in text, exercise  # no bisection
            if isinstance(expected, str):
                if answer == wrong:  # a valid but wrong answer: the hint must not point at the right one
                    assert not re.search(rf"\b{expected}\b", feedback.hint), (exercise, feedback.hint)
            elif answer != str(expected):  # (a string answer is echoed back: "got a str '0.16'")
                for shown in (repr(expected), f"{expected:.2g}", f"{expected:.3g}", f"{expected:.4g}"):
                    assert shown not in feedback.hint, (exercise, shown)
        if not isinstance(expected, str):  # a number given as a string is a wrong type, said as such
            feedback = check(str(expected), **context)
            assert str(feedback).startswith(f"✘ [{exercise}] incorrect: expected a number"), str(feedback)


def test_numbers_are_checked_to_two_significant_digits():
    assert teaching.check_flip_probability(0.16, margin=-0.7 * np.log(2 * 0.1606), scale=0.7).status == "correct"
    true = nx.DiGraph([("a", "b")])
    true.add_nodes_from("cd")
    two_thirds = {"estimated": nx.DiGraph([("a", "b"), ("c", "d")]), "true": true}
    assert teaching.solve("skeleton_f1", **two_thirds) == pytest.approx(2 / 3)
    assert teaching.check_skeleton_f1(0.67, **two_thirds).status == "correct"
    assert teaching.check_skeleton_f1(0.6667, **two_thirds).status == "correct"
    assert teaching.check_skeleton_f1(0.6, **two_thirds).status == "incorrect"
    assert teaching.check_skeleton_f1(0.7, **two_thirds).status == "incorrect"
    assert teaching.agrees(0.16, 0.1606) and not teaching.agrees(0.15, 0.1606) and not teaching.agrees(0.17, 0.1606)
    assert teaching.check_histogram_sensitivity(6, relation="replace", histograms=3).status == "correct"
    assert teaching.check_histogram_sensitivity(3, relation="add/remove", histograms=3).status == "correct"
    assert teaching.check_histogram_sensitivity(2, relation="replace", histograms=3).status == "incorrect"
    assert teaching.check_histogram_sensitivity(np.int64(6), relation="replace", histograms=3)  # numpy numbers


def test_answer_key_shows_the_expected_value_only_when_asked():
    key = teaching.check_laplace_scale(4.0, sensitivity=2.0, epsilon=0.5, reveal=True)
    assert str(key) == "✔ [laplace_scale] correct — expected value: 4"
    assert "expected value: 4" in str(teaching.check_laplace_scale(None, sensitivity=2.0, epsilon=0.5, reveal=True))
    assert teaching.check_ci_decision(None, p_value=0.3, alpha=0.05, reveal=True).expected == "independent"
    student = teaching.check_laplace_scale(4.0, sensitivity=2.0, epsilon=0.5)
    assert student.expected is None and "expected value" not in str(student)
    assert list(teaching.summary([student]).columns) == ["exercise", "status", "hint"]
    assert list(teaching.summary([key]).columns) == ["exercise", "status", "hint", "expected"]


def test_known_answers_and_bad_context():
    assert teaching.solve("histogram_sensitivity", relation="replace") == 2.0
    assert teaching.solve("histogram_sensitivity", relation="add/remove", histograms=4) == 4.0
    assert teaching.solve("flip_probability", margin=1.0, scale=1.0) == pytest.approx(0.5 * np.exp(-1.0))
    assert teaching.check_ci_decision("independent", p_value=0.3, alpha=0.05).status == "correct"
    assert teaching.check_ci_decision("dependent", p_value=0.3, alpha=0.05).status == "incorrect"
    with pytest.raises(ValueError, match="unknown exercise"):
        teaching.solve("nope")
    with pytest.raises(ValueError, match="relation"):
        teaching.solve("histogram_sensitivity", relation="swap")
    with pytest.raises(ValueError, match="histograms"):
        teaching.check_histogram_sensitivity(2, histograms=0)
    with pytest.raises(ValueError, match="epsilon"):
        teaching.check_laplace_scale(1.0, sensitivity=1.0, epsilon=-1.0)
    with pytest.raises(TypeError, match="'margin'"):
        teaching.solve("flip_probability", scale=1.0)
    with pytest.raises(ValueError, match="x: \\['nope'\\] not a column"):
        teaching.check_g2_p_value(0.5, data=pd.DataFrame({"a": [0, 1], "b": [1, 0]}), x="nope", y="b")
    with pytest.raises(TypeError, match="student_seed"):
        teaching.student_rng(1.5)
    with pytest.raises(ValueError, match="student_seed"):
        teaching.student_rng(-1)


def test_student_streams_and_the_mechanism_lineup():
    assert teaching.student_rng(17, 4, seed=0).integers(2**31) != teaching.student_rng(42, 4, seed=0).integers(2**31)
    assert teaching.student_rng(17, 4).integers(2**31) != teaching.student_rng(17, 5).integers(2**31)
    for student in (17, 42):
        lineup = teaching.anonymous_mechanisms(teaching.student_rng(student, 6))
        rows = pd.DataFrame([run_case(case, n_runs=20_000, rng=student).to_row() for case in lineup])
        assert rows["violation"].sum() == 1
        assert not any(case.expect_violation or case.note for case in lineup)  # only the audit tells
    names = [{case.name for case in teaching.anonymous_mechanisms(teaching.student_rng(s, 6))} for s in (17, 42)]
    assert names[0] != names[1]


def test_no_check_is_given_a_literal_number():
    """A literal in a check call (e.g. ``sensitivity=2.0``) would show an answer in the student's cell."""
    for index, cell in enumerate(nbformat.read(TUTORIAL, as_version=4).cells):
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "").startswith("check_"):
                for keyword in node.keywords:
                    literal = isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, (int, float))
                    assert not literal or isinstance(keyword.value.value, bool), (index, keyword.arg)


def test_grade_rows_and_submission_folder(tmp_path):
    with pytest.raises(ValueError, match="submissions .* holds no .ipynb"):
        find_submissions(tmp_path)
    assert list(grade_rows("x", None).columns) == COLUMNS
    assert main(["grade", str(tmp_path / "missing"), "--out", str(tmp_path / "graded")]) == 2
    assert not (tmp_path / "graded").exists()


def _outputs(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output.get("text", ""))
        for kind in ("text/plain", "text/html", "text/markdown"):
            parts.append(str(output.get("data", {}).get(kind, "")))
    return "\n".join(parts)


@pytest.mark.notebook
@pytest.mark.slow
def test_answer_key_differs_between_students_and_no_other_output_gives_it_away(tmp_path):
    keys = {}
    for student in (17, 42):
        out = tmp_path / str(student)
        reproduce("smoke", only="tutorial", out=out, notebooks_dir=NOTEBOOKS_DIR, progress=False,
                  parameters={"solutions": True, "student_seed": student})
        checks = pd.read_csv(out / "tutorial" / "checks.csv", dtype={"expected": str})
        assert list(checks["exercise"]) == list(teaching.EXERCISES)
        assert (checks["status"] == "correct").all(), checks
        assert (checks["student_seed"] == student).all()  # the -p parameter reached the notebook
        keys[student] = dict(zip(checks["exercise"], checks["expected"]))
        executed = nbformat.read(out / "tutorial" / "tutorial.ipynb", as_version=4)
        shown = "\n".join(_outputs(cell) for cell in executed.cells if cell.cell_type == "code")
        for exercise in teaching.EXERCISES:  # the answer key prints every expected value
            assert re.search(rf"✔ \[{exercise}\] correct — expected value: ", shown), exercise
        # every other output (not a check's line, not the final table of checks) must not show an answer
        others = "\n".join(_outputs(cell) for cell in executed.cells[:-1]
                           if cell.cell_type == "code" and "teaching.check_" not in cell.source)
        numbers = [float(token) for token in re.findall(r"(?<![\w.])-?\d+\.\d+(?:e[-+]?\d+)?", others)]
        for exercise, expected in keys[student].items():
            try:
                value = float(expected)
            except ValueError:
                continue  # a word or a name: shown as data the student reads (the decision, the audit table)
            if value != int(value):  # a number shown that the check would accept hands the answer out
                shown = [number for number in numbers if teaching.agrees(number, value)]
                assert not shown, (student, exercise, value, shown)
    differing = {exercise: (keys[17][exercise], keys[42][exercise]) for exercise in teaching.EXERCISES}
    same = {exercise: pair for exercise, pair in differing.items() if pair[0] == pair[1]}
    # ci_decision has two possible answers and histogram_sensitivity a handful: for these two students they differ
    assert not same, f"exercises with the same answer for students 17 and 42: {same}"


def _submission(folder: Path, student: str, seed: int, replacements: dict[str, str]) -> None:
    notebook = nbformat.read(TUTORIAL, as_version=4)
    replacements = {"student_seed = 0": f"student_seed = {seed}", **replacements}
    for old, new in replacements.items():
        hits = 0
        for cell in notebook.cells:
            if cell.cell_type == "code" and old in cell.source:
                cell.source = cell.source.replace(old, new)
                hits += 1
        assert hits, f"{old!r} not in the tutorial"
    nbformat.write(notebook, folder / f"{student}.ipynb")


def _tiny(folder: Path, student: str, body: str) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    notebook.cells = [nbformat.v4.new_code_cell("student_seed = 5\nout_dir = '.'", metadata={"tags": ["parameters"]}),
                      nbformat.v4.new_code_cell(body)]
    nbformat.write(notebook, folder / f"{student}.ipynb")


@pytest.mark.notebook
@pytest.mark.slow
def test_grading_reports_every_student(tmp_path, capsys):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    work = {"if solutions:": "if True:  # the student's own work"}  # every answer filled in, right
    _submission(submissions, "alice", 17, work)
    wrong = {**work, 'scale = teaching.solve("laplace_scale", sensitivity=sensitivity, epsilon=epsilon_2)':
             "scale = 1000.0"}
    _submission(submissions, "bob", 42, wrong)
    _submission(submissions, "carol", 17, {"answer = None  # your p-value": "answer = '0.01'  # your p-value"})
    _tiny(submissions, "dave", "raise RuntimeError('my notebook is broken')")
    _tiny(submissions, "erin", "x = 1  # not the tutorial")
    graded = tmp_path / "new" / "graded"  # the recipe creates its folders
    assert main(["grade", str(submissions), "--out", str(graded), "--profile", "smoke"]) == 0
    assert "wrote" in capsys.readouterr().out
    grades = pd.read_csv(graded / "grades.csv")
    assert list(grades.columns) == COLUMNS
    assert sorted(set(grades["student"])) == ["alice", "bob", "carol", "dave", "erin"]
    by = {student: part.set_index("exercise") for student, part in grades.groupby("student")}
    for student in ("alice", "bob", "carol"):
        assert list(by[student].index) == list(teaching.EXERCISES), student
    assert (by["alice"]["status"] == "correct").all(), by["alice"]
    assert (by["alice"]["student_seed"] == 17).all()
    assert by["bob"].loc["laplace_scale", "status"] == "incorrect"
    assert (by["bob"].drop(index="laplace_scale")["status"] == "correct").all()
    assert by["carol"].loc["g2_p_value", "status"] == "incorrect"
    assert by["carol"].loc["g2_p_value", "detail"].startswith("expected a number")
    assert (by["carol"].drop(index="g2_p_value")["status"] == "not yet answered").all()
    assert by["dave"]["status"].tolist() == [NOTEBOOK_FAILED] and "RuntimeError" in by["dave"]["detail"].iloc[0]
    assert by["dave"]["student_seed"].tolist() == [5]
    assert by["erin"]["status"].tolist() == [NO_CHECKS]
    assert (graded / "dave" / "dave.failed.ipynb").exists() and (graded / "carol" / "carol.ipynb").exists()

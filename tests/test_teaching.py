"""``dpcd.teaching`` checks and ``notebooks/tutorial.ipynb`` under papermill (with and without solutions)."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from dpcd import teaching
from dpcd.datasets import load_bnlearn
from dpcd_papers.runner import reproduce

NOTEBOOKS_DIR = Path(__file__).resolve().parents[1] / "notebooks"


@pytest.fixture(scope="module")
def asia() -> pd.DataFrame:
    return load_bnlearn("asia", 3_000, rng=5).data


def cases(asia):
    truth = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "d")])
    estimate = nx.DiGraph([("a", "b"), ("c", "b"), ("a", "d")])
    audit = pd.DataFrame({"name": ["mechanism A", "mechanism B"], "violation": [False, True]})
    return [
        (teaching.check_g2_p_value, {"data": asia, "x": "smoke", "y": "dysp", "given": ["bronc"]}, "g2_p_value"),
        (teaching.check_histogram_sensitivity, {"relation": "replace"}, "histogram_sensitivity"),
        (teaching.check_laplace_scale, {"sensitivity": 2.0, "epsilon": 0.5}, "laplace_scale"),
        (teaching.check_flip_probability, {"margin": 0.3, "scale": 0.7}, "flip_probability"),
        (teaching.check_skeleton_f1, {"estimated": estimate, "true": truth}, "skeleton_f1"),
        (teaching.check_basic_composition, {"epsilons": [0.1, 0.25, 0.25]}, "basic_composition"),
        (teaching.check_broken_mechanism, {"audit": audit}, "broken_mechanism"),
    ]


def test_each_check_says_right_wrong_or_open_and_never_gives_the_answer(asia):
    for check, context, exercise in cases(asia):
        expected = teaching.solve(exercise, **context)
        assert check(expected, **context).status == "correct", exercise
        for open_answer in (None, ...):
            assert check(open_answer, **context).status == "not yet answered", exercise
        wrong = "mechanism A" if isinstance(expected, str) else expected * 1.5 + 0.1
        feedback = check(wrong, **context)
        assert feedback.status == "incorrect" and feedback.hint, exercise
        assert str(expected) not in feedback.hint and f"{expected:.3g}" not in feedback.hint \
            if not isinstance(expected, str) else expected not in feedback.hint
        assert check("not a number", **context).status == "incorrect"  # never an exception


def test_known_answers():
    assert teaching.solve("histogram_sensitivity", relation="replace") == 2.0
    assert teaching.solve("histogram_sensitivity", relation="add/remove") == 1.0
    assert teaching.solve("flip_probability", margin=1.0, scale=1.0) == pytest.approx(0.5 * np.exp(-1.0))
    assert teaching.check_ci_decision("independent", p_value=0.3, alpha=0.05).status == "correct"
    assert teaching.check_ci_decision("dependent", p_value=0.3, alpha=0.05).status == "incorrect"
    with pytest.raises(ValueError, match="unknown exercise"):
        teaching.solve("nope")
    table = teaching.summary([teaching.check_laplace_scale(None, sensitivity=1.0, epsilon=1.0)])
    assert table.to_dict("records") == [{"exercise": "laplace_scale", "status": "not yet answered"}]


@pytest.mark.notebook
@pytest.mark.slow
def test_tutorial_with_solutions_checks_every_exercise_correct(tmp_path):
    reproduce("smoke", only="tutorial", out=tmp_path, notebooks_dir=NOTEBOOKS_DIR, progress=False,
              parameters={"solutions": True, "student_seed": 17})
    checks = pd.read_csv(tmp_path / "tutorial" / "checks.csv")
    assert set(checks["exercise"]) == set(teaching.EXERCISES)
    assert (checks["status"] == "correct").all(), checks
    assert (checks["student_seed"] == 17).all()  # the -p parameter reached the notebook

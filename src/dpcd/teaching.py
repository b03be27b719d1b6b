"""Checks for the exercises of ``notebooks/tutorial.ipynb``: right or wrong with a hint, never the answer.

Every ``check_*`` function takes the student's ``answer`` (``None`` or ``...``
while the exercise is open) and the context the notebook built from the
student's own data and numbers (``student_seed``), and returns a
:class:`Feedback` whose ``status`` is ``"correct"``, ``"incorrect"`` or
``"not yet answered"``; it never raises on a wrong or missing answer and its
hint never contains the expected value. :func:`solve` gives the expected
answer and is what the notebook uses when run with ``solutions=True`` (the
instructor's copy and the test suite).

>>> check_laplace_scale(None, sensitivity=2.0, epsilon=0.5).status
'not yet answered'
>>> check_laplace_scale(4.0, sensitivity=2.0, epsilon=0.5).status
'correct'
>>> "4" in check_laplace_scale(3.0, sensitivity=2.0, epsilon=0.5).hint
False
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import networkx as nx
import numpy as np
import pandas as pd

from .ci.discrete import g2_test
from .graphs import skeleton_prf

__all__ = ["Feedback", "EXERCISES", "check_g2_p_value", "check_ci_decision", "check_histogram_sensitivity",
           "check_laplace_scale", "check_flip_probability", "check_skeleton_f1", "check_basic_composition",
           "check_broken_mechanism", "solve", "summary"]

Status = Literal["correct", "incorrect", "not yet answered"]
EXERCISES = ("g2_p_value", "ci_decision", "histogram_sensitivity", "laplace_scale", "flip_probability",
             "skeleton_f1", "basic_composition", "broken_mechanism")


@dataclass(frozen=True)
class Feedback:
    """The result of a check: which exercise, its status, and a hint (never the answer)."""

    exercise: str
    status: Status
    hint: str

    def __bool__(self) -> bool:
        return self.status == "correct"

    def __str__(self) -> str:
        mark = {"correct": "✔", "incorrect": "✘", "not yet answered": "…"}[self.status]
        return f"{mark} [{self.exercise}] {self.status}: {self.hint}"

    def _repr_markdown_(self) -> str:  # shown by Jupyter
        return f"**{self.exercise}: {self.status}.** {self.hint}"


def _open(answer: Any) -> bool:
    return answer is None or answer is Ellipsis


def _number(answer: Any) -> float | None:
    if isinstance(answer, (bool, np.bool_)):
        return None
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _numeric_check(exercise: str, answer: Any, expected: float, *, rel: float, abs_: float, hint_wrong: str,
                   hint_open: str) -> Feedback:
    if _open(answer):
        return Feedback(exercise, "not yet answered", hint_open)
    value = _number(answer)
    if value is None:
        return Feedback(exercise, "incorrect", f"the answer must be one finite number, got {type(answer).__name__}")
    if math.isclose(value, expected, rel_tol=rel, abs_tol=abs_):
        return Feedback(exercise, "correct", "well done")
    direction = "too large" if value > expected else "too small"
    return Feedback(exercise, "incorrect", f"your number is {direction}. {hint_wrong}")


def check_g2_p_value(answer: Any, *, data: pd.DataFrame, x: str, y: str, given: Sequence[str] = (),
                     levels: Mapping[str, int] | None = None) -> Feedback:
    """The p-value of the G² test of ``x ⫫ y | given`` on ``data`` (integer codes)."""
    return _numeric_check(
        "g2_p_value", answer, solve("g2_p_value", data=data, x=x, y=y, given=given, levels=levels),
        rel=1e-4, abs_=1e-9,
        hint_wrong="Count the table of (x, y) within each stratum of the conditioning set, compute "
                   "G² = 2 Σ O log(O/E) with E from the stratum's margins, and compare with a χ² distribution whose "
                   "degrees of freedom add (|x|−1)(|y|−1) over the strata (dpcd.ci.g2_test does all of it).",
        hint_open="run the test on your sample and put the p-value in `answer`")


def check_ci_decision(answer: Any, *, p_value: float, alpha: float) -> Feedback:
    """``"independent"`` or ``"dependent"``: the PC decision for a test with ``p_value`` at level ``alpha``."""
    if _open(answer):
        return Feedback("ci_decision", "not yet answered", "answer 'independent' or 'dependent'")
    if not isinstance(answer, str) or answer.strip().lower() not in {"independent", "dependent"}:
        return Feedback("ci_decision", "incorrect", "answer with the word 'independent' or 'dependent'")
    if answer.strip().lower() == solve("ci_decision", p_value=p_value, alpha=alpha):
        return Feedback("ci_decision", "correct", "and so PC removes the edge exactly when it decides 'independent'")
    return Feedback("ci_decision", "incorrect", "PC removes an edge when the data give no evidence against "
                                               "independence: compare the p-value with α, which way round?")


def check_histogram_sensitivity(answer: Any, *, relation: str = "replace") -> Feedback:
    """The L1 sensitivity of a histogram (one count per category) under ``relation``."""
    return _numeric_check(
        "histogram_sensitivity", answer, solve("histogram_sensitivity", relation=relation), rel=0, abs_=1e-9,
        hint_wrong=f"Under {relation!r}, follow one record: which counts can it change, and by how much each?",
        hint_open="give the largest change of the histogram in L1 norm when the neighbouring record changes")


def check_laplace_scale(answer: Any, *, sensitivity: float, epsilon: float) -> Feedback:
    """The scale b of the Laplace noise that makes a query with this L1 ``sensitivity`` ε-DP."""
    return _numeric_check(
        "laplace_scale", answer, solve("laplace_scale", sensitivity=sensitivity, epsilon=epsilon), rel=1e-6,
        abs_=1e-12, hint_wrong="The density ratio of Laplace(b) at two points Δ apart is at most exp(Δ/b); set it "
                               "equal to exp(ε).",
        hint_open="give the noise scale b")


def check_flip_probability(answer: Any, *, margin: float, scale: float) -> Feedback:
    """The probability that Laplace noise of ``scale`` moves a statistic ``margin`` above a threshold below it."""
    return _numeric_check(
        "flip_probability", answer, solve("flip_probability", margin=margin, scale=scale), rel=1e-3, abs_=1e-9,
        hint_wrong="You need P(noise < −margin) for Laplace(0, b): integrate the density (1/2b)·exp(−|z|/b) over "
                   "one tail.",
        hint_open="give a probability between 0 and 1")


def check_skeleton_f1(answer: Any, *, estimated: nx.DiGraph, true: nx.DiGraph) -> Feedback:
    """The F1 score of the estimated skeleton against the true one (edges without direction)."""
    return _numeric_check(
        "skeleton_f1", answer, solve("skeleton_f1", estimated=estimated, true=true), rel=1e-6, abs_=1e-9,
        hint_wrong="Ignore directions; precision = shared edges / estimated edges, recall = shared edges / true "
                   "edges, F1 their harmonic mean.",
        hint_open="give a number between 0 and 1")


def check_basic_composition(answer: Any, *, epsilons: Sequence[float]) -> Feedback:
    """The total ε of the charges ``epsilons`` (pure ε-DP mechanisms run in sequence) by basic composition."""
    return _numeric_check(
        "basic_composition", answer, solve("basic_composition", epsilons=epsilons), rel=1e-9, abs_=1e-12,
        hint_wrong="Basic composition of pure ε-DP mechanisms multiplies the likelihood ratios: what happens to "
                   "the ε's?",
        hint_open="give the total ε of the run's charges")


def check_broken_mechanism(answer: Any, *, audit: pd.DataFrame) -> Feedback:
    """The name of the mechanism the audit table (columns ``name``, ``violation``) shows to be broken."""
    if _open(answer):
        return Feedback("broken_mechanism", "not yet answered", "give the name of the mechanism, as in the table")
    names = set(audit["name"])
    if answer not in names:
        return Feedback("broken_mechanism", "incorrect", f"give one of the names in the table ({len(names)} rows)")
    if answer == solve("broken_mechanism", audit=audit):
        return Feedback("broken_mechanism", "correct", "its audited lower bound exceeds the ε it claims")
    return Feedback("broken_mechanism", "incorrect", "look for the row whose audited lower bound on ε exceeds the "
                                                     "claimed ε (the lower bound is a 95 % bound, so noise alone "
                                                     "rarely crosses it)")


def solve(exercise: str, **context: Any) -> Any:
    """The expected answer of ``exercise`` in ``context`` (for ``solutions=True`` and the checks)."""
    if exercise == "g2_p_value":
        data = context["data"]
        columns = list(data.columns)
        levels = context.get("levels")
        level_array = None if levels is None else np.array([levels[c] for c in columns])
        return float(g2_test(data.to_numpy(), columns.index(context["x"]), columns.index(context["y"]),
                             [columns.index(s) for s in context.get("given", ())], levels=level_array).p_value)
    if exercise == "ci_decision":
        return "independent" if context["p_value"] > context["alpha"] else "dependent"
    if exercise == "histogram_sensitivity":
        relation = context.get("relation", "replace")
        if relation not in ("replace", "add/remove"):
            raise ValueError(f"relation must be 'replace' or 'add/remove', got {relation!r}")
        return 2.0 if relation == "replace" else 1.0
    if exercise == "laplace_scale":
        return float(context["sensitivity"]) / float(context["epsilon"])
    if exercise == "flip_probability":
        return 0.5 * math.exp(-abs(float(context["margin"])) / float(context["scale"]))
    if exercise == "skeleton_f1":
        return float(skeleton_prf(context["estimated"], context["true"])["f1"])
    if exercise == "basic_composition":
        return float(np.sum(np.asarray(context["epsilons"], dtype=float)))
    if exercise == "broken_mechanism":
        audit = context["audit"]
        broken = audit.loc[audit["violation"].astype(bool), "name"]
        if len(broken) != 1:
            raise ValueError(f"the audit shows {len(broken)} broken mechanisms; the exercise needs exactly one")
        return str(broken.iloc[0])
    raise ValueError(f"unknown exercise {exercise!r}; known: {list(EXERCISES)}")


def summary(feedback: Sequence[Feedback]) -> pd.DataFrame:
    """One row per exercise (``exercise``, ``status``): what an instructor collects from a submitted notebook."""
    return pd.DataFrame([{"exercise": f.exercise, "status": f.status} for f in feedback],
                        columns=["exercise", "status"])

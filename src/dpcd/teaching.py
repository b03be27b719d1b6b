"""Checks for the exercises of ``notebooks/tutorial.ipynb``: right or wrong with a hint, never the answer.

Every ``check_*`` function takes the student's ``answer`` (``None`` or ``...``
while the exercise is open) and the context the notebook built from the
student's own data and numbers (``student_seed``, through :func:`student_rng`),
and returns a :class:`Feedback` whose ``status`` is ``"correct"``,
``"incorrect"`` or ``"not yet answered"``. A check never raises on a student's
answer, whatever its type (a string where a number is expected is
*incorrect: expected a number*); it raises only on a bad context, which is the
notebook's doing. Its hint explains the method and never contains the expected
value, nor says whether a number is too large or too small (that would allow
bisection). :func:`solve` gives the expected answer: the notebook uses it when
run with ``solutions=True``, and then passes ``reveal=True`` so that each check
also shows the expected value (the instructor's answer key).

A number is correct when it agrees with the expected value to
:data:`DIGITS` significant digits (:func:`agrees`): 0.67 for 2/3, 0.16 for
0.1606.

>>> check_laplace_scale(None, sensitivity=2.0, epsilon=0.5).status
'not yet answered'
>>> check_laplace_scale(4.0, sensitivity=2.0, epsilon=0.5).status
'correct'
>>> "4" in check_laplace_scale(3.0, sensitivity=2.0, epsilon=0.5).hint
False
>>> str(check_laplace_scale("4", sensitivity=2.0, epsilon=0.5))[:37]
'✘ [laplace_scale] incorrect: expected'
>>> str(check_laplace_scale(4.0, sensitivity=2.0, epsilon=0.5, reveal=True))
'✔ [laplace_scale] correct — expected value: 4'
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import networkx as nx
import numpy as np
import pandas as pd

from .audit import AuditCase, broken_cases, mechanism_cases
from .ci.discrete import g2_test
from .graphs import skeleton_edges, skeleton_prf
from .validation import RngLike, as_rng, check_epsilon, check_int, check_positive, check_probability

__all__ = ["Feedback", "EXERCISES", "DIGITS", "RELATIONS", "agrees", "student_rng", "skeleton_pairs",
           "anonymous_mechanisms", "check_g2_p_value", "check_ci_decision", "check_histogram_sensitivity",
           "check_laplace_scale", "check_flip_probability", "check_skeleton_f1", "check_basic_composition",
           "check_broken_mechanism", "solve", "summary"]

Status = Literal["correct", "incorrect", "not yet answered"]
EXERCISES = ("g2_p_value", "ci_decision", "histogram_sensitivity", "laplace_scale", "flip_probability",
             "skeleton_f1", "basic_composition", "broken_mechanism")
DIGITS = 2
"""Significant digits a numeric answer must share with the expected value (hand work, not float equality)."""
RELATIONS = ("replace", "add/remove")


@dataclass(frozen=True)
class Feedback:
    """The result of a check: which exercise, its status, a hint (never the answer) and, only when the check
    was asked to reveal it (the answer key), the expected value as text.

    >>> str(Feedback("basic_composition", "incorrect", "add the charges"))
    '✘ [basic_composition] incorrect: add the charges'
    """

    exercise: str
    status: Status
    hint: str
    expected: str | None = None

    def __bool__(self) -> bool:
        return self.status == "correct"

    def __str__(self) -> str:
        mark = {"correct": "✔", "incorrect": "✘", "not yet answered": "…"}[self.status]
        if self.expected is None:
            return f"{mark} [{self.exercise}] {self.status}: {self.hint}"
        text = f"{mark} [{self.exercise}] {self.status} — expected value: {self.expected}"
        return text if self.status == "correct" else f"{text} ({self.hint})"

    def _repr_markdown_(self) -> str:  # shown by Jupyter
        shown = f" Expected value: `{self.expected}`." if self.expected is not None else ""
        return f"**{self.exercise}: {self.status}.** {self.hint}{shown}"


def agrees(value: float, expected: float, *, digits: int = DIGITS, abs_tol: float = 0.0) -> bool:
    """True when ``value`` equals ``expected`` to ``digits`` significant digits, or lies within ``abs_tol`` of it.

    "To d significant digits" means within half a unit of the d-th significant
    digit of ``expected``: any value that rounds to the expected value's d
    digits, or that carries more correct digits, agrees.

    >>> agrees(0.67, 2 / 3), agrees(0.16, 0.1606), agrees(0.1606, 0.1606), agrees(0.66, 2 / 3)
    (True, True, True, False)
    >>> agrees(0.0, 3e-15, abs_tol=1e-12), agrees(12.4, 12.0), agrees(11.0, 12.0)
    (True, True, False)
    """
    value = float(value)
    expected = float(expected)
    digits = check_int(digits, "digits", minimum=1)
    abs_tol = check_positive(abs_tol, "abs_tol", allow_zero=True)
    if not (math.isfinite(value) and math.isfinite(expected)):
        return False
    if abs(value - expected) <= abs_tol:
        return True
    if expected == 0.0:
        return False
    unit = 10.0 ** (math.floor(math.log10(abs(expected))) - digits + 1)
    return abs(value - expected) <= 0.5 * unit * (1.0 + 1e-9)


def student_rng(student_seed: int, *parts: int, seed: int = 0) -> np.random.Generator:
    """The random generator of one part of the tutorial for one student.

    Every random draw of an exercise (data, noise, the numbers of the
    exercise) comes from a generator of ``(seed, student_seed, *parts)``, so
    two students get different answers, one student always gets the same, and
    the parts are independent streams (adding a draw to one section does not
    change another). ``seed`` is the notebook-wide seed (the whole class shares it).

    >>> draw = lambda student: int(student_rng(student, 4).integers(2**31))
    >>> draw(17) == draw(17), draw(17) == draw(42)
    (True, False)
    >>> student_rng("17", 1)
    Traceback (most recent call last):
    ...
    TypeError: student_seed must be an integer, got str
    """
    student_seed = check_int(student_seed, "student_seed", minimum=0)
    seed = check_int(seed, "seed", minimum=0)
    parts = tuple(check_int(part, f"parts[{index}]", minimum=0) for index, part in enumerate(parts))
    return np.random.default_rng([seed, student_seed, *parts])


def skeleton_pairs(graph: nx.DiGraph) -> list[tuple[str, str]]:
    """The adjacencies of ``graph`` without direction, each as a sorted pair, sorted: what F1 by hand counts.

    >>> skeleton_pairs(nx.DiGraph([("b", "a"), ("a", "b"), ("c", "b")]))
    [('a', 'b'), ('b', 'c')]
    """
    if not isinstance(graph, nx.DiGraph):
        raise TypeError(f"graph must be a networkx DiGraph, got {type(graph).__name__}")
    return sorted(tuple(sorted(map(str, pair))) for pair in skeleton_edges(graph))


def anonymous_mechanisms(rng: RngLike, *, epsilon: float = 1.0) -> list[AuditCase]:
    """Four audit cases, each named ``"mechanism <three digits>"`` (numbers drawn at random, so one student's
    answer means nothing to another), sorted by name; exactly one is broken.

    The three correct ones are the classical and the analytic Gaussian
    mechanisms and a Laplace mechanism calibrated to ε/2 that claims ε (more
    noise than needed, so its audited lower bound stays well below its claim);
    the broken one is a Laplace mechanism with its noise scale halved or its
    sensitivity off by 2 (truly 2ε-DP). The correct Laplace mechanism at its
    exact ε is left out: its audited lower bound comes so close to ε that a
    rare run flags it. Which name is broken depends on ``rng`` only.

    >>> from dpcd.audit import run_case
    >>> cases = anonymous_mechanisms(3)
    >>> [case.name for case in cases]
    ['mechanism 260', 'mechanism 263', 'mechanism 312', 'mechanism 821']
    >>> sum(run_case(case, n_runs=20_000, rng=0).violation for case in cases)
    1
    """
    generator = as_rng(rng)
    epsilon = check_epsilon(epsilon)
    seed = int(generator.integers(2**31))
    gaussians = [case for case in mechanism_cases(epsilon=epsilon, rng=seed) if case.name.startswith("Gaussian")]
    half = [case for case in mechanism_cases(epsilon=epsilon / 2, rng=seed) if case.name == "Laplace"][0]
    broken = [case for case in broken_cases(epsilon=epsilon, rng=seed) if case.name.startswith("BROKEN Laplace")]
    cases = [*gaussians, dataclasses.replace(half, epsilon=epsilon), broken[int(generator.integers(len(broken)))]]
    numbers = generator.choice(np.arange(100, 1000), size=len(cases), replace=False)
    # nothing but the audit tells them apart: same kind of name, no note, no expected verdict
    named = [dataclasses.replace(case, name=f"mechanism {number}", note="", expect_violation=False)
             for case, number in zip(cases, numbers)]
    return sorted(named, key=lambda case: case.name)


def _open(answer: Any) -> bool:
    return answer is None or answer is Ellipsis


def _number(answer: Any) -> float | None:
    """The answer as a float when it is a real number (not a string, not a bool), else None."""
    if isinstance(answer, (bool, np.bool_)) or not isinstance(answer, numbers.Real):
        return None
    return float(answer)


def _shown(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _numeric_check(exercise: str, answer: Any, expected: float, *, hint_wrong: str, hint_open: str,
                   reveal: bool, abs_tol: float = 0.0) -> Feedback:
    shown = _shown(expected) if reveal else None
    if _open(answer):
        return Feedback(exercise, "not yet answered", hint_open, shown)
    value = _number(answer)
    if value is None:
        got = f"{type(answer).__name__} {answer!r}" if isinstance(answer, str) else type(answer).__name__
        return Feedback(exercise, "incorrect", f"expected a number, got a {got}; write the number itself, "
                                               "without quotes", shown)
    if not math.isfinite(value):
        return Feedback(exercise, "incorrect", f"expected a finite number, got {value}", shown)
    if agrees(value, expected, abs_tol=abs_tol):
        return Feedback(exercise, "correct", f"well done (checked to {DIGITS} significant digits)", shown)
    return Feedback(exercise, "incorrect", f"not within {DIGITS} significant digits of the expected value. "
                                           f"{hint_wrong}", shown)


def check_g2_p_value(answer: Any, *, data: pd.DataFrame, x: str, y: str, given: Sequence[str] = (),
                     levels: Mapping[str, int] | None = None, reveal: bool = False) -> Feedback:
    """The p-value of the G² test of ``x ⫫ y | given`` on ``data`` (integer codes).

    A p-value that underflows is matched within 1e-12 (so 0 is right for 3e-15).

    >>> from dpcd.datasets import load_bnlearn
    >>> data = load_bnlearn("asia", 1000, rng=0).data
    >>> check_g2_p_value(0.5, data=data, x="asia", y="smoke").status
    'incorrect'
    """
    return _numeric_check(
        "g2_p_value", answer, solve("g2_p_value", data=data, x=x, y=y, given=given, levels=levels),
        hint_wrong="Count the table of (x, y) within each stratum of the conditioning set, compute "
                   "G² = 2 Σ O log(O/E) with E from the stratum's margins, and compare with a χ² distribution whose "
                   "degrees of freedom add (|x|−1)(|y|−1) over the strata (dpcd.ci.discrete.g2_test does all of it; "
                   "its columns are given by their index).",
        hint_open="run the test on your sample and put the p-value in `answer`", reveal=reveal, abs_tol=1e-12)


def check_ci_decision(answer: Any, *, alpha: float, p_value: float | None = None, data: pd.DataFrame | None = None,
                      x: str | None = None, y: str | None = None, given: Sequence[str] = (),
                      levels: Mapping[str, int] | None = None, reveal: bool = False) -> Feedback:
    """``"independent"`` or ``"dependent"``: the PC decision at level ``alpha`` for a test given either by its
    ``p_value`` or by ``data``, ``x``, ``y`` and ``given`` (the G² test, as :func:`check_g2_p_value`).

    >>> check_ci_decision("independent", p_value=0.3, alpha=0.05).status
    'correct'
    >>> check_ci_decision(1, p_value=0.3, alpha=0.05).hint
    "expected the word 'independent' or 'dependent'"
    """
    context: dict[str, Any] = {"alpha": alpha, "p_value": p_value, "data": data, "x": x, "y": y, "given": given,
                               "levels": levels}
    expected = solve("ci_decision", **context)
    shown = expected if reveal else None
    if _open(answer):
        return Feedback("ci_decision", "not yet answered", "answer 'independent' or 'dependent'", shown)
    if not isinstance(answer, str) or answer.strip().lower() not in {"independent", "dependent"}:
        return Feedback("ci_decision", "incorrect", "expected the word 'independent' or 'dependent'", shown)
    if answer.strip().lower() == expected:
        return Feedback("ci_decision", "correct", "and so PC removes the edge exactly when it decides 'independent'",
                        shown)
    return Feedback("ci_decision", "incorrect", "PC removes an edge when the data give no evidence against "
                                               "independence: compare the p-value with α, which way round?", shown)


def check_histogram_sensitivity(answer: Any, *, relation: str = "replace", histograms: int = 1,
                                reveal: bool = False) -> Feedback:
    """The L1 sensitivity of ``histograms`` histograms (one count per category each) released together, under
    the neighbouring ``relation`` (``"replace"`` one record, or ``"add/remove"`` one record).

    >>> check_histogram_sensitivity(2, relation="replace").status
    'correct'
    """
    return _numeric_check(
        "histogram_sensitivity", answer, solve("histogram_sensitivity", relation=relation, histograms=histograms),
        hint_wrong=f"Under {relation!r}, follow the one record that differs: in each of the {histograms} "
                   "histogram(s), which counts can it change and by how much? The L1 sensitivity adds the absolute "
                   "changes over every count released.",
        hint_open="give the largest change, in L1 norm, of all the counts released when the data set changes to a "
                  "neighbour", reveal=reveal)


def check_laplace_scale(answer: Any, *, sensitivity: float, epsilon: float, reveal: bool = False) -> Feedback:
    """The scale b of the Laplace noise that makes a query with this L1 ``sensitivity`` ε-DP."""
    return _numeric_check(
        "laplace_scale", answer, solve("laplace_scale", sensitivity=sensitivity, epsilon=epsilon),
        hint_wrong="The density ratio of Laplace(b) at two points Δ apart is at most exp(Δ/b); set it equal to "
                   "exp(ε). Use the sensitivity of your query (exercise 2a), not of one count.",
        hint_open="give the noise scale b", reveal=reveal)


def check_flip_probability(answer: Any, *, margin: float, scale: float, reveal: bool = False) -> Feedback:
    """The probability that Laplace noise of ``scale`` moves a statistic ``margin`` above a threshold below it.

    >>> check_flip_probability(0.18, margin=1.0, scale=1.0).status
    'correct'
    """
    return _numeric_check(
        "flip_probability", answer, solve("flip_probability", margin=margin, scale=scale),
        hint_wrong="You need P(noise < −margin) for Laplace(0, b): integrate the density (1/2b)·exp(−|z|/b) over "
                   "one tail, then put in the margin of the exercise (not the one simulated).",
        hint_open="give a probability between 0 and 1", reveal=reveal)


def check_skeleton_f1(answer: Any, *, estimated: nx.DiGraph, true: nx.DiGraph, reveal: bool = False) -> Feedback:
    """The F1 score of the estimated skeleton against the true one (edges without direction)."""
    return _numeric_check(
        "skeleton_f1", answer, solve("skeleton_f1", estimated=estimated, true=true),
        hint_wrong="Ignore directions; precision = shared edges / estimated edges, recall = shared edges / true "
                   "edges, F1 their harmonic mean (= 2·shared / (estimated + true)).",
        hint_open="give a number between 0 and 1", reveal=reveal)


def check_basic_composition(answer: Any, *, epsilons: Sequence[float], reveal: bool = False) -> Feedback:
    """The total ε of the charges ``epsilons`` (pure ε-DP mechanisms run in sequence) by basic composition.

    >>> check_basic_composition(0.6, epsilons=[0.1, 0.25, 0.25]).status
    'correct'
    """
    return _numeric_check(
        "basic_composition", answer, solve("basic_composition", epsilons=epsilons),
        hint_wrong="Basic composition of pure ε-DP mechanisms multiplies the likelihood ratios: what happens to "
                   "the ε's? Take every charge of the ledger, not the distinct values.",
        hint_open="give the total ε of the run's charges", reveal=reveal)


def check_broken_mechanism(answer: Any, *, audit: pd.DataFrame, reveal: bool = False) -> Feedback:
    """The name of the mechanism the audit table (columns ``name``, ``violation``) shows to be broken."""
    expected = solve("broken_mechanism", audit=audit)
    shown = expected if reveal else None
    if _open(answer):
        return Feedback("broken_mechanism", "not yet answered", "give the name of the mechanism, as in the table",
                        shown)
    names = sorted(map(str, audit["name"]))
    if not isinstance(answer, str) or answer.strip() not in names:
        return Feedback("broken_mechanism", "incorrect", f"expected one of the names in the table: {names}", shown)
    if answer.strip() == expected:
        return Feedback("broken_mechanism", "correct", "its audited lower bound exceeds the ε it claims", shown)
    return Feedback("broken_mechanism", "incorrect", "look for the row whose audited lower bound on ε exceeds the "
                                                     "claimed ε (the lower bound is a 95 % bound, so noise alone "
                                                     "rarely crosses it)", shown)


def _need(exercise: str, context: Mapping[str, Any], *names: str) -> None:
    missing = [name for name in names if context.get(name) is None]
    if missing:
        raise TypeError(f"solve({exercise!r}) needs the context argument(s) {missing}")


def _g2_p_value(context: Mapping[str, Any]) -> float:
    data = context["data"]
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    columns = list(data.columns)
    given = list(context.get("given") or ())
    for argument, names in (("x", [context["x"]]), ("y", [context["y"]]), ("given", given)):
        unknown = [name for name in names if name not in columns]
        if unknown:
            raise ValueError(f"{argument}: {unknown} not a column of data (columns: {columns})")
    levels = context.get("levels")
    level_array = None if levels is None else np.array([levels[c] for c in columns])
    return float(g2_test(data.to_numpy(), columns.index(context["x"]), columns.index(context["y"]),
                         [columns.index(s) for s in given], levels=level_array).p_value)


def solve(exercise: str, **context: Any) -> Any:
    """The expected answer of ``exercise`` in ``context`` (the answer key, and what the checks compare with).

    >>> solve("histogram_sensitivity", relation="replace", histograms=3), solve("laplace_scale", sensitivity=6, epsilon=2)
    (6.0, 3.0)
    >>> solve("basic_composition", epsilons=[0.1, 0.25, 0.25])
    0.6
    >>> solve("laplace_scale", sensitivity=6, epsilon=0)
    Traceback (most recent call last):
    ...
    ValueError: epsilon must be > 0, got 0.0
    """
    if exercise == "g2_p_value":
        _need(exercise, context, "data", "x", "y")
        return _g2_p_value(context)
    if exercise == "ci_decision":
        _need(exercise, context, "alpha")
        alpha = check_probability(context["alpha"], "alpha")
        if context.get("p_value") is not None:
            p_value = check_probability(context["p_value"], "p_value", open_low=False, open_high=False)
        else:
            _need(exercise, context, "data", "x", "y")
            p_value = _g2_p_value(context)
        return "independent" if p_value > alpha else "dependent"
    if exercise == "histogram_sensitivity":
        relation = context.get("relation", "replace")
        if relation not in RELATIONS:
            raise ValueError(f"relation must be one of {list(RELATIONS)}, got {relation!r}")
        histograms = check_int(context.get("histograms", 1), "histograms", minimum=1)
        return (2.0 if relation == "replace" else 1.0) * histograms
    if exercise == "laplace_scale":
        _need(exercise, context, "sensitivity", "epsilon")
        return check_positive(context["sensitivity"], "sensitivity") / check_epsilon(context["epsilon"])
    if exercise == "flip_probability":
        _need(exercise, context, "margin", "scale")
        margin = check_positive(context["margin"], "margin", allow_zero=True)
        return 0.5 * math.exp(-margin / check_positive(context["scale"], "scale"))
    if exercise == "skeleton_f1":
        _need(exercise, context, "estimated", "true")
        return float(skeleton_prf(context["estimated"], context["true"])["f1"])
    if exercise == "basic_composition":
        _need(exercise, context, "epsilons")
        epsilons = np.asarray(context["epsilons"], dtype=float)
        if epsilons.ndim != 1 or not np.all(np.isfinite(epsilons)) or np.any(epsilons < 0):
            raise ValueError("epsilons must be a list of finite, non-negative numbers")
        return round(float(np.sum(epsilons)), 12)
    if exercise == "broken_mechanism":
        _need(exercise, context, "audit")
        audit = context["audit"]
        if not isinstance(audit, pd.DataFrame) or not {"name", "violation"} <= set(audit.columns):
            raise TypeError("audit must be a DataFrame with the columns 'name' and 'violation'")
        broken = audit.loc[audit["violation"].astype(bool), "name"]
        if len(broken) != 1:
            raise ValueError(f"the audit shows {len(broken)} broken mechanisms; the exercise needs exactly one")
        return str(broken.iloc[0])
    raise ValueError(f"unknown exercise {exercise!r}; known: {list(EXERCISES)}")


def summary(feedback: Sequence[Feedback]) -> pd.DataFrame:
    """One row per exercise (``exercise``, ``status``, ``hint``, and ``expected`` when the checks revealed it):
    what the notebook writes to ``checks.csv`` and an instructor collects.

    >>> summary([check_laplace_scale(None, sensitivity=1.0, epsilon=1.0)]).to_dict("records")
    [{'exercise': 'laplace_scale', 'status': 'not yet answered', 'hint': 'give the noise scale b'}]
    """
    if isinstance(feedback, Feedback) or not all(isinstance(f, Feedback) for f in feedback):
        raise TypeError("feedback must be a sequence of Feedback")
    columns = ["exercise", "status", "hint"]
    if any(f.expected is not None for f in feedback):
        columns.append("expected")
    return pd.DataFrame([{"exercise": f.exercise, "status": f.status, "hint": f.hint, "expected": f.expected}
                         for f in feedback], columns=columns)

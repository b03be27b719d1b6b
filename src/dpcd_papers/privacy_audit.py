"""Grid cells of the ``privacy_audit`` notebook: one audit case per cell, so a long audit resumes.

Each case of :mod:`dpcd.audit` (a mechanism or algorithm, a pair of
neighbouring datasets built to break its claim, and the events whose
probabilities are compared) is rebuilt inside the cell from its group and
name and audited with the cell's own generator. Rebuilding by name keeps the
cell's parameters plain values, so :func:`dpcd_papers.experiments.run_grid`
can key, cache and resume it; an interrupted audit then loses at most the
cases that were running.

The claim audited is each case's own (its ``epsilon``/``delta`` and
neighbouring relation, stated in :mod:`dpcd.audit`); a violation is reported
when the lower bound on ε at the requested confidence exceeds the claim.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from dpcd import audit
from dpcd.validation import RngLike, as_rng

__all__ = ["GROUPS", "AS_PUBLISHED", "build_cases", "as_published_cases", "case_names", "audit_cell", "bound_figure"]

GROUPS = ("mechanism", "algorithm", "discover")
"""Mechanisms (vectorised or per-run) and the dpHSIC test, private discovery algorithms and ANM scores, and
``discover`` as a black box."""


def build_cases(group: str, *, epsilon: float, delta: float, size: str, rng: RngLike) -> list[audit.AuditCase]:
    """Every audit case of ``group`` (broken variants included), built with ``rng``.

    ``algorithm`` covers the registry algorithms whose module is available, the
    ANM scores (test-set privacy, the IQR score too) and HSIC with training-set privacy, PCD's Kendall
    decision without a usable stratum and the broken algorithm variants.
    """
    if group == "mechanism":
        seed = int(as_rng(rng).integers(2**31))
        return (audit.mechanism_cases(epsilon=epsilon, delta=delta, rng=seed) + [audit.sieve_case(epsilon=epsilon)]
                + audit.broken_cases(epsilon=epsilon, rng=seed) + audit.dp_hsic_cases(epsilon=epsilon, rng=seed,
                                                                                      size=size)
                + audit.spread_cases(epsilon=epsilon, delta=delta, rng=seed)
                + audit.norm_clip_cases(epsilon=epsilon, delta=delta, rng=seed)
                + audit.interaction_cases(epsilon=epsilon, delta=delta, rng=seed))
    if group == "algorithm":
        generator = as_rng(rng)
        cases = [audit.algorithm_case(name, epsilon=epsilon, rng=generator, size=size) for name in audit.CASES]
        published = as_published_cases(dict(zip(audit.CASES, cases)))
        cases += [audit.anm_case(score, epsilon=epsilon, rng=generator, size=size) for score in audit.ANM_SCORES.values()]
        cases.append(audit.pcd_decision_case(epsilon=epsilon, rng=generator, size=size))
        return (cases + audit.broken_algorithm_cases(epsilon=epsilon, rng=generator, size=size) + published
                + [audit.anm_training_case(epsilon=epsilon, rng=generator, size=size),
                   audit.anm_iqr_case(epsilon=epsilon, delta=delta, rng=generator, size=size),
                   audit.gcm_spread_case(epsilon, generator, size)])
    if group == "discover":
        seed = int(as_rng(rng).integers(2**31))
        return (audit.discover_cases(epsilon=epsilon, rng=seed, size=size)
                + audit.broken_discover_cases(epsilon=epsilon, rng=seed, size=size))
    raise ValueError(f"group must be one of {list(GROUPS)}, got {group!r}")


AS_PUBLISHED = {
    "Priv-PC": "Priv-PC as published, sensitivity 6/sqrt(n)",
    "SVT-PC": "SVT-PC as published, sensitivity 6/sqrt(n)",
    "CURATE": "CURATE as published, Eq. 16 sensitivity",
}
"""Audit case name of each published algorithm whose paper's calibration differs from dpcd's corrected one."""


def as_published_cases(by_name: dict[str, audit.AuditCase]) -> list[audit.AuditCase]:
    """The registry cases of Priv-PC, SVT-PC and CURATE re-run as their papers calibrate them (same pairs, same
    claims): Priv-PC and SVT-PC with the authors' Δ_Z = 6/√n, CURATE with Eq. 16's p-value sensitivity at the
    pair's n. Built from the given cases, so they draw nothing from the generator."""
    from .curate import eq16_sensitivity

    reference = {"sensitivity": "reference"}
    n = len(by_name["curate"].pair.data)
    return [
        audit.as_published(by_name["priv_pc"], reference, AS_PUBLISHED["Priv-PC"],
                           "the authors' Delta_Z = 6/sqrt(n), proven for unconditional tests only"),
        audit.as_published(by_name["svt_pc"], reference, AS_PUBLISHED["SVT-PC"],
                           "the authors' Delta_Z = 6/sqrt(n), proven for unconditional tests only"),
        audit.as_published(by_name["curate"], {"sensitivity": eq16_sensitivity(n)}, AS_PUBLISHED["CURATE"],
                           f"Eq. 16's p-value sensitivity {eq16_sensitivity(n):.3g} at n = {n}, not a bound"),
    ]


def case_names(group: str, *, epsilon: float, delta: float, size: str) -> list[str]:
    """The names of :func:`build_cases` of ``group``, in order (they do not depend on the generator).

    >>> case_names("mechanism", epsilon=1.0, delta=1e-5, size="smoke")[0]
    'Laplace'
    """
    return [case.name for case in build_cases(group, epsilon=epsilon, delta=delta, size=size, rng=0)]


def _one_case(group: str, name: str, *, epsilon: float, delta: float, size: str, rng) -> audit.AuditCase:
    if group == "algorithm":  # build only the case asked for when its name says which: cases sample their data
        from dpcd.registry import ALGORITHMS

        for key in audit.CASES:
            if ALGORITHMS[key].label == name:
                case = audit.algorithm_case(key, epsilon=epsilon, rng=rng, size=size)
                if case.name == name:
                    return case
    cases = {case.name: case for case in build_cases(group, epsilon=epsilon, delta=delta, size=size, rng=rng)}
    if name not in cases:
        raise ValueError(f"no audit case named {name!r} in group {group!r}; available: {sorted(cases)}")
    return cases[name]


def audit_cell(*, group: str, case: str, request_epsilon: float, request_delta: float, size: str, level: float,
               n_runs: int | None = None, budget_seconds: float | None = None, min_runs: int = 20,
               max_runs: int = 100_000, rng: RngLike) -> dict[str, Any]:
    """Audit the case named ``case`` of ``group``: a row of :meth:`dpcd.audit.AuditResult.to_row` plus bookkeeping.

    The cases are built for the requested ``request_epsilon``/``request_delta``
    (each case states the claim it audits: ``claimed_epsilon``, ``delta``) and
    audited at confidence ``level``. The number of runs per dataset is
    ``n_runs``, or else as many as fit in ``budget_seconds``
    (:func:`dpcd.audit.runs_for_budget`, between ``min_runs`` and
    ``max_runs``). ``expected`` says whether the case was built to violate its
    claim; ``seconds`` is the wall-clock time of building and auditing it.
    (Parameter names differ from the row's keys, which run_grid keeps apart.)
    """
    if (n_runs is None) == (budget_seconds is None):
        raise ValueError("give exactly one of n_runs and budget_seconds")
    generator = as_rng(rng)
    case_rng, run_rng = generator.spawn(2)
    started = time.perf_counter()
    built = _one_case(group, case, epsilon=request_epsilon, delta=request_delta, size=size, rng=case_rng)
    if n_runs is None:
        n_runs = audit.runs_for_budget(built, seconds=budget_seconds, rng=run_rng, minimum=min_runs,
                                       maximum=max_runs)
    result = audit.run_case(built, n_runs=n_runs, rng=run_rng, confidence=level)
    return {**result.to_row(), "expected": "violation" if built.expect_violation else "no violation",
            "note": built.note, "seconds": time.perf_counter() - started}


def bound_figure(frame: pd.DataFrame, title: str):
    """Bars of the audited lower bound on ε, one per case, with the claimed ε as a black tick.

    ``frame`` has columns ``name``, ``claimed_epsilon``, ``epsilon_lower`` and
    ``violation`` (rows of :func:`audit_cell` or the notebook's ``summary.csv``).
    A bar is red where the claim is refuted (the bound exceeds it), blue where
    it holds; an infinite bound has no bar. The legend sits under the axes, so
    it never covers a bar or a tick. Returns the matplotlib figure.

    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> fig = bound_figure(pd.DataFrame({"name": ["a", "b"], "claimed_epsilon": [1.0, 1.0],
    ...                                  "epsilon_lower": [0.9, 3.0], "violation": [False, True]}), "t")
    >>> [t.get_text() for t in fig.legends[0].get_texts()]
    ['claimed ε', 'lower bound, claim holds', 'lower bound, claim refuted']
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    holds, refuted = "#2e86c1", "#c0392b"
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(frame) + 1.7), layout="constrained")
    y = np.arange(len(frame))
    colours = [refuted if v else holds for v in frame["violation"]]
    ax.barh(y, frame["epsilon_lower"].replace(np.inf, np.nan), color=colours)
    tick = ax.scatter(frame["claimed_epsilon"], y, marker="|", s=400, color="black", zorder=3)
    ax.set_yticks(y, frame["name"])
    ax.invert_yaxis()
    ax.set_xlabel("ε (bar: 95 % audited lower bound)")
    ax.set_title(title)
    fig.legend([tick, Patch(color=holds), Patch(color=refuted)],
               ["claimed ε", "lower bound, claim holds", "lower bound, claim refuted"],
               loc="outside lower center", ncol=3, frameon=False)
    return fig

"""Paper 002's Thm. 4 (the permutation p-value's sensitivity, Eq. 6) checked directly on neighbouring data sets.

Thm. 4 states that replacing one record moves RCIT's permutation p-value by at
most Δ_P = max{p − A, B − p} (Eqs. 6–8), where A and B move the observed score
by ∓2Δ_R against the permuted scores (Δ_R from Eq. 3, Thm. 3). The proof
assumes that each of the k + 1 scores moves by at most Δ_R; a permuted score of
a neighbour pairs the replaced record's residual of X with another record's
residual of Y, so two pairs differ, and every residual moves with the
regressions. The check here asks the same question as the paper's statement:
for data sets of Fig. 1's model and one row replaced by a record at a corner
of the model's bounds (:data:`dpcd_papers.pcd.EXTREME_RECORDS`), with the same
k permutations on both sides, is ``|p − p'| ≤ Δ_P(D)``? The tests are ones
whose null hypothesis holds, so that p spreads over [0, 1] and can move
(Fig. 1's X ⫫ Y | Z₁..Z₅ has p = 0 on every data set, which no replacement
moves): Z₁ ⫫ Z₂ | Z₃, Z₄, Z₅ (Eq. 3's Δ_R) and Z₁ ⫫ Z₂ (Eq. 4's). A ratio above 1
refutes Eq. 6; a search that finds none says *not refuted*, not proven.

Kept apart from :mod:`dpcd_papers.pcd` so that this check's cells, judged in
the privacy_audit notebook, do not change the code fingerprint of pcd's.
"""

from __future__ import annotations

import math

import pandas as pd

from dpcd.ci.rcit import permutation_sensitivity, rcit
from dpcd.validation import RngLike, as_rng, check_int

from .pcd import EXTREME_RECORDS, sample_ci_case

__all__ = ["THM4_CLAIM", "THM4_RULE", "THM4_TESTS", "thm4_cell", "thm4_claim_row"]

THM4_CLAIM = "pcd:thm4:eq6-bounds-the-p-value"
THM4_TESTS = {"Z1 _||_ Z2 | Z3, Z4, Z5": (2, 3, (4, 5, 6)), "Z1 _||_ Z2": (2, 3, ())}
"""(x, y, S) on :func:`dpcd_papers.pcd.sample_ci_case` columns: tests whose null hypothesis holds."""
THM4_RULE = ("per m: no searched replacement of one record moves the permutation p-value of a Fig. 1-model test "
             "whose null holds (k = 100 permutations, the same on both sides) by more than Eq. 6's Delta_P of the "
             "data set")


def thm4_cell(*, m: int, rng: RngLike, n_permutations: int = 100, lam: float = 1.0) -> list[dict]:
    """One data set of Fig. 1's model (``m`` rows), each extreme record replacing a random row: the change of
    the p-value of each test of :data:`THM4_TESTS` against Eq. 6's two-sided Δ_P of the data set.

    ``ratio`` is ``|p − p'| / Δ_P`` (0 when neither moves, ``inf`` when p moves and Δ_P = 0); above 1 refutes
    Thm. 4. Both p-values use the same ``n_permutations`` permutations (seed 0), as the theorem compares them.
    """
    m = check_int(m, "m", minimum=10)
    n_permutations = check_int(n_permutations, "n_permutations", minimum=1)
    data_rng, pick_rng = as_rng(rng).spawn(2)
    data = sample_ci_case(m, data_rng)
    neighbours = []
    for record in EXTREME_RECORDS:
        other = data.copy()
        other[int(pick_rng.integers(m))] = record
        neighbours.append(other)
    rows = []
    for test, (x, y, S) in THM4_TESTS.items():
        first = rcit(data, x, y, S, rng=0, n_permutations=n_permutations, lam=lam)
        bound = permutation_sensitivity(first, one_sided=False)
        for other in neighbours:
            second = rcit(other, x, y, S, rng=0, n_permutations=n_permutations, lam=lam)
            change = abs(second.p_value - first.p_value)
            ratio = change / bound if bound > 0 else (0.0 if change == 0 else math.inf)
            rows.append({"test": test, "p": first.p_value, "p_neighbour": second.p_value, "change": change,
                         "bound": bound, "ratio": ratio})
    return rows


def thm4_claim_row(checks: pd.DataFrame) -> dict:
    """The comparison row of :data:`THM4_CLAIM` from the rows of :func:`thm4_cell` (columns m, ratio, and
    bound if present: the note states the median Δ_P, which shows how much room the bound leaves).

    A privacy claim: *not refuted* when no replacement exceeds Δ_P at any m, *not reproduced* (refuted, with the
    pair's ratio) otherwise; ``ours`` is the largest ratio found.

    >>> row = thm4_claim_row(pd.DataFrame({"m": [200, 200, 500], "ratio": [0.0, 0.5, 3.0]}))
    >>> row["verdict"], row["ours"]
    ('not reproduced', 3.0)
    """
    largest = checks.groupby("m")["ratio"].max()
    refuted = bool((largest > 1.0).any())
    bounds = checks.groupby("m")["bound"].median() if "bound" in checks else None
    detail = "; ".join(f"m = {int(m)}: largest |p - p'| / Delta_P = {value:.3g}"
                       + ("" if bounds is None else f" (median Delta_P {bounds[m]:.2g})")
                       for m, value in largest.items())
    return {"claim_id": THM4_CLAIM, "paper": "pcd", "item": "PCD, Thm. 4",
            "metric": "Eq. 6 bounds the change of the permutation p-value",
            "paper_value": "|p - p~| <= max{p - A, B - p} for neighbouring data sets (Thm. 4, Eqs. 6-8)",
            "ours": float(largest.max()), "difference": float("nan"), "tolerance": 1.0,
            "verdict": "not reproduced" if refuted else "not refuted", "line": "RCIT of dpcd.ci.rcit (Eq. 2)",
            "diagnosis": ("a replaced record moves the p-value beyond Eq. 6's bound: the permuted scores of a "
                          "neighbour differ in two pairs, not one, and move with the regressions" if refuted else ""),
            "diagnostic": "", "diagnostic_value": float("nan"),
            "note": f"{THM4_RULE}; {detail} over {len(checks)} replacements; a search, not a proof"}

"""Sensitivities of the rank statistics used by private CI tests.

One function per statistic, each stating the neighbouring relation, what is
public and where the bound comes from. ``n`` is always the (public) number of
rows of the dataset the statistic is computed on; neighbours under
"add/remove" have n − 1 or n + 1 rows, under "replace" n rows.

Statistics (Wang, Pang & Song 2020, App. D–E; Kusner et al. 2016):

* Kendall's τ-a, τ = (C − D)/(n(n − 1)/2) (C, D: concordant / discordant
  pairs; tied pairs count in neither). ``kendall_tau_sensitivity``.
* Conditional Kendall's τ, Z = Σᵢ wᵢτᵢ / √Σⱼ wⱼ with wᵢ = 9nᵢ(nᵢ − 1)/(2(2nᵢ + 5))
  over the k strata of the conditioning set (App. D, Def. 6; this is the
  statistic of :func:`dpcd.ci.stratified_kendall`, a z-score under
  independence). ``conditional_kendall_sensitivity``.
* Spearman's ρ = 1 − 6Σdᵢ²/(n(n² − 1)) on untied data, and its conditional
  version Σᵢ(nᵢ − 1)ρᵢ / √Σⱼ(nⱼ − 1) (App. E, Defs. 7–8).
  ``spearman_sensitivity``, ``conditional_spearman_sensitivity``.
* The one-sided p-value 1 − Φ(|Z|) that Priv-PC thresholds:
  ``pvalue_sensitivity`` (from any z-sensitivity) and
  ``reference_pvalue_sensitivity`` (the authors' public code: Φ(6/√n) − ½).

Corrections to the paper (each checked by brute force in tests/test_sensitivity.py)
---------------------------------------------------------------------------------
* Theorem 6 states τ is 2/(n − 1)-sensitive. That is too small: n points on a
  decreasing line (τ = −1) plus one point above and to the right of all of
  them (concordant with every point) give τ' = (3 − n)/(n + 1), a change of
  4/(n + 1). The proof drops the growth of the denominator. The correct bound
  is 4/n under both relations (Δτ = |2δ(n−1) − 4S|/(n(n+1)(n−1)) with
  |δ| ≤ n, |S| ≤ n(n − 1)/2 for one added row; replace = remove + add).
* Theorem 7 assumes every stratum has at least c₁ rows, which is a property
  of the private data. ``conditional_kendall_sensitivity`` derives an explicit
  bound that needs no assumption (``min_stratum_size=1``) and reproduces the
  paper's assumption when asked (``min_stratum_size=c1``); see its docstring.
* The paper's Spearman bound (Theorem 8) holds for untied data; with mid-ranks
  on tied (discrete) data a stratum that turns from constant to varying
  moves ρ by up to 1, so no O(1/n) bound exists — use Kendall's τ-a there.

References
----------
.. [WPS20] L. Wang, Q. Pang, D. Song. Towards practical differentially private
   causal graph discovery. NeurIPS 2020, App. D (Thms 6–7), App. E (Thms 8–9).
.. [KSSW16] M. Kusner, Y. Sun, K. Sridharan, K. Weinberger. Private causal
   inference. AISTATS 2016.
"""

from __future__ import annotations

import math

from scipy import special

from ..validation import check_int, check_positive
from .relation import RELATION_NAMES, RelationName

__all__ = [
    "kendall_tau_sensitivity",
    "conditional_kendall_sensitivity",
    "spearman_sensitivity",
    "conditional_spearman_sensitivity",
    "pvalue_sensitivity",
    "conditional_kendall_pvalue_sensitivity",
    "reference_pvalue_sensitivity",
    "one_sided_kendall_pvalue_sensitivity",
    "max_strata",
    "two_sided_kendall_pvalue_sensitivity",
    "KENDALL_A_STEP",
    "KENDALL_W_STEP",
]


#: sup over stratum sizes m of |Δ(wτ)| when one row joins a stratum of m rows:
#: 9m(3m + 4)/((2m + 5)(2m + 7)) < 27/4.
KENDALL_A_STEP = 27.0 / 4.0
#: sup over m of the weight increase w(m + 1) − w(m) = 9m(m + 6)/((2m + 5)(2m + 7)) < 9/4.
KENDALL_W_STEP = 9.0 / 4.0


def _relation(relation: RelationName) -> str:
    if relation not in RELATION_NAMES:
        raise ValueError(f"relation must be one of {RELATION_NAMES}, got {relation!r}")
    return relation


def kendall_tau_sensitivity(n: int, *, relation: RelationName = "add/remove") -> float:
    """Global sensitivity of Kendall's τ-a on n rows: 4/n (both relations).

    Add/remove: a row added to m rows changes C − D by δ with |δ| ≤ m, so
    |τ' − τ| = |2δ(m − 1) − 4S|/(m(m + 1)(m − 1)) ≤ 4/(m + 1); the worst
    neighbouring pair of an n-row dataset has (n − 1, n) rows: 4/n.
    Replace: C − D moves by at most 2(n − 1), so |Δτ| ≤ 4/n. Both are attained
    (points on a decreasing line plus one point concordant with all of them).

    Wang et al. (2020), Thm 6, state 2/(n − 1); that is violated by the example
    above (see the module docstring). Public: n. Ties may be present (τ-a
    counts tied pairs in neither C nor D).
    """
    n = check_int(n, "n", minimum=2)
    _relation(relation)
    return 4.0 / n


def _kendall_c2(min_stratum_size: int) -> float:
    """c₂ with w(m) ≥ c₂(m − 1) for every m ≥ c₁ (and for m ≤ 1): 9c₁/(2(2c₁ + 5))."""
    c1 = min_stratum_size
    return 9.0 * c1 / (2.0 * (2.0 * c1 + 5.0))


def conditional_kendall_sensitivity(n: int, k: int, *, relation: RelationName = "add/remove",
                                    min_stratum_size: int = 1) -> float:
    """Sensitivity of the conditional Kendall z-score Z = Σwᵢτᵢ/√Σwⱼ over k strata.

    Derivation (τ-a, wᵢ = 9nᵢ(nᵢ − 1)/(2(2nᵢ + 5)) as in [WPS20, Def. 6]):
    write aᵢ = wᵢτᵢ = 9Sᵢ/(2nᵢ + 5) with Sᵢ = Cᵢ − Dᵢ, A = Σaᵢ, W = Σwᵢ, so
    |A| ≤ W. Adding one row to a stratum of m rows changes aᵢ by at most
    9m(3m + 4)/((2m + 5)(2m + 7)) < 27/4 and W by 0 ≤ d < 9/4. Then

        |Z' − Z| ≤ |Δa|/√W + |A|(1/√W − 1/√(W + d)) ≤ (27/4 + 9/8)/√W,

    W taken on the smaller of the two datasets. With every non-empty stratum of
    at least c₁ = ``min_stratum_size`` rows, w(m) ≥ c₂(m − 1) with
    c₂ = 9c₁/(2(2c₁ + 5)), so W ≥ c₂(N − k) for N rows in k strata. c₁ = 1
    (the default) needs **no assumption** on the data (c₂ = 9/14); larger c₁ is
    the paper's assumption "nᵢ ≥ c₁ for all i" (Thm 7), which is a property of
    the private data and so not a worst-case guarantee.

    Add/remove: N = n − 1 (the smaller neighbour) and the bound is
    c_τ/√(n − 1 − k) with c_τ = (63/8)/√c₂ (≈ 9.82 for c₁ = 1, → 5.25 as
    c₁ → ∞; the paper's constant → 9/2 omits the weight change).
    Replace = remove then add through an (n − 1)-row dataset: twice that.

    Public: n and k (k = the number of strata, e.g. the product of the
    conditioning variables' domain sizes; an upper bound on non-empty strata
    is fine). Requires n − 1 > k.
    """
    n = check_int(n, "n", minimum=2)
    k = check_int(k, "k", minimum=1)
    relation = _relation(relation)
    c1 = check_int(min_stratum_size, "min_stratum_size", minimum=1)
    rows = n - 1
    if rows <= k:
        raise ValueError(f"n must exceed k + 1 for a finite bound, got n={n}, k={k}")
    bound = (KENDALL_A_STEP + KENDALL_W_STEP / 2.0) / math.sqrt(_kendall_c2(c1) * (rows - k))
    return 2.0 * bound if relation == "replace" else bound


def spearman_sensitivity(n: int, *, relation: RelationName = "add/remove") -> float:
    """Sensitivity of Spearman's ρ on n untied rows: 30/n ([WPS20, Thm 8]; [KSSW16]).

    Holds for add/remove and replace on data without ties (continuous data, or
    ranks with random tie-breaking); with n the size of the smaller dataset of
    a neighbouring pair the paper's proof gives 30/n, and we return 30/(n − 1)
    for add/remove so the bound covers the (n − 1, n) pair. Brute force finds
    at most ≈ 6/n, so the bound is loose but valid. It does not hold for
    mid-ranks on tied data (see the module docstring).
    """
    n = check_int(n, "n", minimum=3)
    relation = _relation(relation)
    return 30.0 / (n - 1) if relation == "add/remove" else 30.0 / n


def conditional_spearman_sensitivity(n: int, k: int, *, relation: RelationName = "add/remove") -> float:
    """Sensitivity of the conditional Spearman z-score Σ(nᵢ − 1)ρᵢ/√Σ(nⱼ − 1) over k strata (untied data).

    Derivation in the style of ``conditional_kendall_sensitivity``: with
    aᵢ = (nᵢ − 1)ρᵢ, one row joining a stratum of m rows changes aᵢ by at most
    m·(30/m) + 1 = 31 and W = Σwⱼ by d ≤ 2 (a stratum enters the sum at 3 rows),
    so |ΔZ| ≤ (31 + 1)/√W with W ≥ N − 2k on N rows (strata of 1–2 rows have
    weight 0 in :func:`dpcd.ci.spearman_weights`).

    Add/remove: 32/√(n − 1 − 2k); replace: twice that. The paper's Thm 9 states
    c_ρ√k/√(n − k) with c_ρ ≈ 31. Public: n, k. Requires n − 1 > 2k and untied
    data within strata.
    """
    n = check_int(n, "n", minimum=3)
    k = check_int(k, "k", minimum=1)
    relation = _relation(relation)
    rows = n - 1
    if rows <= 2 * k:
        raise ValueError(f"n must exceed 2k + 1 for a finite bound, got n={n}, k={k}")
    bound = 32.0 / math.sqrt(rows - 2 * k)
    return 2.0 * bound if relation == "replace" else bound


def pvalue_sensitivity(z_sensitivity: float) -> float:
    """Sensitivity of the one-sided p-value p = 1 − Φ(|Z|) given that of Z: Φ(Δ_z) − ½.

    |Z| has the sensitivity Δ_z of Z, and u ↦ 1 − Φ(u) on u ≥ 0 moves most over
    [0, Δ_z]. (A two-sided p = 2(1 − Φ(|Z|)) has twice this sensitivity.)
    Thresholding p at α is thresholding |Z| at Φ⁻¹(1 − α), so the same noise
    could be calibrated on Z; the p-value scale is used because the authors'
    code and their α, t are stated on it.
    """
    z_sensitivity = check_positive(z_sensitivity, "z_sensitivity")
    return float(special.ndtr(z_sensitivity) - 0.5)


def conditional_kendall_pvalue_sensitivity(n: int, k: int = 1, *, relation: RelationName = "add/remove",
                                           two_sided: bool = False) -> float:
    """Sensitivity of the p-value of the conditional Kendall test on n rows in k strata.

    One-sided p = 1 − Φ(|Z|): Φ(Δ_z) − ½ with Δ_z =
    :func:`conditional_kendall_sensitivity` (n, k, ``neighbouring``); the
    two-sided p = 2(1 − Φ(|Z|)) moves twice as much. A p-value cannot move more
    than its range, so the result is capped at ½ (one-sided) or 1 (two-sided),
    which is also the value when n − 1 ≤ k and the z-score has no finite bound.
    """
    n = check_int(n, "n", minimum=2)
    k = check_int(k, "k", minimum=1)
    cap = 1.0 if two_sided else 0.5
    if n - 1 <= k:
        return cap
    one_sided = pvalue_sensitivity(conditional_kendall_sensitivity(n, k, relation=relation))
    return min(cap, 2.0 * one_sided if two_sided else one_sided)


def reference_pvalue_sensitivity(n: int) -> float:
    """The p-value sensitivity of the authors' public Priv-PC code: Φ(6/√n) − ½.

    It is :func:`pvalue_sensitivity` of a z-sensitivity 6/√n, i.e. the paper's
    Thm 7 rounded up from 9/2 to 6 and with n − k replaced by n. It exceeds
    the unconditional asymptotic worst case (5.25/√n) but not the
    assumption-free conditional bound of ``conditional_kendall_sensitivity``;
    use it only to reproduce the paper's setting.
    """
    n = check_int(n, "n", minimum=2)
    return pvalue_sensitivity(6.0 / math.sqrt(n))


def max_strata(levels, max_order: int) -> int:
    """The most strata a conditioning set of at most ``max_order`` variables can have: the product of the
    ``max_order`` largest public domain sizes (1 for the empty set)."""
    top = sorted((int(k) for k in levels), reverse=True)[:max_order]
    return int(math.prod(top)) if top else 1


def one_sided_kendall_pvalue_sensitivity(n: int, levels, max_order: int, *, mode: str = "proven") -> float:
    """Replace-one sensitivity of the **one-sided** conditional Kendall p-value 1 − Φ(|Z|) on n rows — the query
    thresholded by Priv-PC, SVT-PC and the sub-sampled Gaussian baseline [WPS20].

    ``levels``: the public domain sizes; ``max_order``: the largest
    conditioning set, which fixes the largest number of strata k
    (:func:`max_strata`). ``mode="proven"``: :func:`conditional_kendall_pvalue_sensitivity`
    (n, k, replace); when n − 1 ≤ k the z-score has no finite bound and the
    trivial ½ is returned. ``mode="reference"``: the authors' Φ(6/√n) − ½
    (:func:`reference_pvalue_sensitivity`), not proven for conditional tests.

    >>> round(one_sided_kendall_pvalue_sensitivity(10_000, [2, 2, 3], 1), 4)
    0.0779
    """
    n = check_int(n, "n", minimum=2)
    max_order = check_int(max_order, "max_order", minimum=0)
    if mode == "reference":
        return reference_pvalue_sensitivity(n)
    if mode != "proven":
        raise ValueError(f"sensitivity must be 'proven' or 'reference', got {mode!r}")
    return conditional_kendall_pvalue_sensitivity(n, max_strata(levels, max_order), relation="replace")


def two_sided_kendall_pvalue_sensitivity(n: int, k: int = 1) -> float:
    """Replace-one sensitivity of the **two-sided** conditional Kendall p-value 2(1 − Φ(|Z|)) on n rows in k
    strata — the noisy p-value of CURATE and of PCD's Kendall baseline: 2Φ(Δ_z) − 1, capped at 1 (also when
    n − 1 ≤ k), Δ_z = :func:`conditional_kendall_sensitivity` (n, k, replace).

    >>> round(two_sided_kendall_pvalue_sensitivity(10_000), 4)
    0.1557
    """
    n = check_int(n, "n", minimum=2)
    k = check_int(k, "k", minimum=1)
    return conditional_kendall_pvalue_sensitivity(n, k, relation="replace", two_sided=True)

"""Discrete conditional-independence tests from stratified contingency tables.

Every test of X ⫫ Y | S builds the (S-stratum, X, Y) table once with
``np.bincount`` on mixed-radix codes; G², χ², Kendall's τ and Spearman's ρ
are all computed from that table without a Python loop over rows or strata
(concordant and discordant pairs by 2-D cumulative sums, in O(levels²)).

>>> import numpy as np
>>> codes = np.array([[0, 0], [1, 1], [0, 0], [1, 1], [0, 1], [1, 0]] * 20)
>>> g2_test(codes, 0, 1).p_value < 0.001
True
>>> contingency_table(codes, 0, 1).shape
(1, 2, 2)
"""

from __future__ import annotations

import math
from typing import Literal, Sequence

import numpy as np
from scipy import special, stats

from ..validation import as_data_matrix
from .result import CIResult, normal_two_sided_p

__all__ = [
    "distinct_rows",
    "DEGENERATE_CONVENTIONS",
    "check_degenerate",
    "informative_strata",
    "observed_levels",
    "contingency_table",
    "chi2_type_statistic",
    "g2_test",
    "chi2_test",
    "kendall_tau",
    "kendall_tau_test",
    "kendall_weights",
    "spearman_rho_test",
    "spearman_weights",
    "stratified_kendall",
    "stratified_spearman",
]


DEGENERATE_CONVENTIONS = ("independent", "keep_edge")
"""How a rank test treats degenerate strata (``degenerate=`` of :func:`stratified_kendall`,
:class:`dpcd.ci.CITester` and :func:`dpcd.discovery.pc.pc`).

* ``"independent"`` (default): every stratum with at least two rows enters the
  pooled statistic with its weight; in a stratum where X or Y takes a single
  value τ is 0, and a test without any informative stratum has z = 0 (p = 1):
  no evidence of dependence, so PC removes the edge. The weights depend on the
  stratum sizes only, which is what the sensitivity bounds of
  :mod:`dpcd.privacy.sensitivity` assume.
* ``"keep_edge"``: the convention of the public code of Wang, Pang & Song
  (2020): a stratum in which X or Y takes a single value (τ undefined: every
  pair tied, zero degrees of freedom) or that has at most two rows is left out
  of the pooled statistic, and a test left without any informative stratum
  returns NaN, which PC reads as "not independent": the edge is kept. For
  non-private use only: whether a stratum is degenerate is read from the data
  without noise, so no differentially private algorithm accepts it.
"""


def check_degenerate(degenerate: str) -> str:
    """Return ``degenerate`` if it is one of :data:`DEGENERATE_CONVENTIONS`, else raise a ``ValueError``.

    >>> check_degenerate("keep_edge")
    'keep_edge'
    """
    if not isinstance(degenerate, str) or degenerate not in DEGENERATE_CONVENTIONS:
        raise ValueError(f"degenerate must be one of {DEGENERATE_CONVENTIONS}, got {degenerate!r}")
    return degenerate


# Contingency tables


def observed_levels(codes: np.ndarray) -> np.ndarray:
    """Max code + 1 per column: domain sizes read from the data (non-private use only)."""
    return codes.max(axis=0).astype(np.int64) + 1 if codes.size else np.zeros(codes.shape[1], np.int64)


def _stratum_codes(columns: Sequence[np.ndarray], levels: Sequence[int], n: int) -> tuple[np.ndarray, int]:
    """Mixed-radix code of the conditioning set per row, compressed when large."""
    if len(columns) == 0:
        return np.zeros(n, dtype=np.intp), 1
    code = columns[0].astype(np.intp, copy=True)
    radix = int(levels[0])
    for column, k in zip(columns[1:], levels[1:]):
        code *= int(k)
        code += column
        radix *= int(k)
        if radix > 1 << 40:  # keep the product representable: compress to observed strata
            uniq, code = np.unique(code, return_inverse=True)
            radix = len(uniq)
    if radix > 4 * n:  # many empty strata: compress so bincount stays O(n)
        uniq, code = np.unique(code, return_inverse=True)
        radix = len(uniq)
    return code, radix


def marginal_table(codes: np.ndarray, levels: Sequence[int], columns: Sequence[int]) -> np.ndarray:
    """Counts of the joint values of ``columns`` (in that order), every cell kept: shape ``levels[columns]``.

    Unlike :func:`contingency_table` no empty cell or stratum is dropped, so the
    shape depends on the public domain sizes only — what a mechanism releasing
    the table needs.

    >>> marginal_table(np.array([[0, 1], [0, 1], [1, 0]]), [2, 3], (1, 0)).tolist()
    [[0.0, 1.0], [2.0, 0.0], [0.0, 0.0]]
    """
    shape = tuple(int(levels[j]) for j in columns)
    flat = np.zeros(codes.shape[0], dtype=np.int64)
    for j in columns:
        flat *= int(levels[j])
        flat += codes[:, j]
    return np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape).astype(np.float64)


def contingency_table(codes: np.ndarray, x: int, y: int, S: Sequence[int] = (),
                      levels: np.ndarray | None = None, weights: np.ndarray | None = None) -> np.ndarray:
    """Counts of (S-stratum, X, Y) as an array of shape (strata, |X|, |Y|).

    ``codes`` holds integer codes 0..k−1 per column (rows × variables; a
    Fortran-ordered array is fastest, since each test reads whole columns).
    Only strata that occur in the data are kept (empty strata carry no
    information and are dropped, as in causal-learn and pgmpy). ``weights``
    (optional) is each row's multiplicity when ``codes`` holds distinct rows
    (:func:`distinct_rows`): the table is the same integer array.
    """
    if levels is None:
        levels = observed_levels(codes)
    kx, ky = int(levels[x]), int(levels[y])
    S = list(S)
    n = codes.shape[0]
    cells = math.prod(int(levels[s]) for s in S) * kx * ky
    if cells <= max(4 * n, 1 << 16) and cells < 1 << 31:
        # every stratum code fits a small integer: build it in the narrowest type (fewer bytes per pass);
        # the table is the same as through _stratum_codes, whose compression keeps the strata in code order
        dtype = np.int16 if cells < 1 << 15 else np.int32
        first, *rest = [*S, x, y]
        s_code = codes[:, first].astype(dtype)
        for column in rest:
            s_code *= dtype(levels[column])
            s_code += codes[:, column]
        ks = cells // (kx * ky)
    else:
        s_code, ks = _stratum_codes([codes[:, s] for s in S], [levels[s] for s in S], n)
        s_code *= kx
        s_code += codes[:, x]
        s_code *= ky
        s_code += codes[:, y]
    if weights is None:
        table = np.bincount(s_code, minlength=ks * kx * ky)
    else:  # integer multiplicities summed in float64 are exact below 2**53: the same counts
        table = np.bincount(s_code, weights=weights, minlength=ks * kx * ky).astype(np.int64)
    table = table.reshape(ks, kx, ky)
    if ks > 1:
        table = table[table.sum(axis=(1, 2)) > 0]
    return table


def distinct_rows(codes: np.ndarray, levels: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``codes`` (in first-occurrence order) and how often each occurs.

    Every count of a contingency table is a sum over rows, so the tables of
    the distinct rows weighted by their multiplicities equal those of the
    data (:func:`contingency_table` with ``weights``). Rows are keyed by
    mixed-radix codes over the public ``levels`` (several 63-bit words when
    the product of the levels is larger), sorted once.

    >>> rows, counts = distinct_rows(np.array([[0, 1], [1, 0], [0, 1]]), [2, 2])
    >>> rows.tolist(), counts.tolist()
    ([[0, 1], [1, 0]], [2, 1])
    """
    n = codes.shape[0]
    words: list[np.ndarray] = []
    key = np.zeros(n, dtype=np.int64)
    radix = 1
    for j in range(codes.shape[1]):
        k = max(int(levels[j]), 1)
        if radix * k >= 1 << 62:
            words.append(key)
            key, radix = np.zeros(n, dtype=np.int64), 1
        key *= k
        key += codes[:, j]
        radix *= k
    words.append(key)
    order = np.lexsort(words[::-1])
    sorted_words = [w[order] for w in words]
    new = np.ones(n, dtype=bool)
    if n:
        new[1:] = np.any([w[1:] != w[:-1] for w in sorted_words], axis=0)
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, n))
    first = order[starts]  # lexsort is stable: the first occurrence of each distinct row
    by_position = np.argsort(first, kind="stable")
    return np.asfortranarray(codes[first[by_position]]), counts[by_position].astype(np.int64)


def chi2_type_statistic(table: np.ndarray, kind: Literal["g2", "chi2"]) -> tuple[float, float, float]:
    """Statistic, degrees of freedom and p-value for a stratified table.

    Degrees of freedom follow causal-learn and pgmpy: per non-empty stratum,
    (|X| − 1 − empty rows)(|Y| − 1 − empty columns), summed. A test with zero
    degrees of freedom carries no evidence against independence and gets
    p = 1 (causal-learn's convention; pgmpy returns NaN instead).
    """
    table = table.astype(np.float64, copy=False)
    n_s = table.sum(axis=(1, 2))
    row = table.sum(axis=2)
    col = table.sum(axis=1)
    expected = row[:, :, None] * col[:, None, :] / n_s[:, None, None]
    if kind == "g2":
        observed = table
        positive = observed > 0
        ratio = np.ones_like(observed)
        np.divide(observed, expected, out=ratio, where=positive)
        statistic = 2.0 * float(np.sum(observed * np.log(ratio)))
    else:
        positive = expected > 0
        diff2 = np.zeros_like(table)
        np.divide((table - expected) ** 2, expected, out=diff2, where=positive)
        statistic = float(diff2.sum())
    kx, ky = table.shape[1], table.shape[2]
    dof = float(np.sum((kx - 1 - (row == 0).sum(axis=1)) * (ky - 1 - (col == 0).sum(axis=1))))
    p_value = 1.0 if dof <= 0 else float(special.chdtrc(dof, statistic))
    return statistic, dof, p_value


def g2_test(data, x: int, y: int, S: Sequence[int] = (), *, levels: np.ndarray | None = None) -> CIResult:
    """G² (likelihood-ratio) test of X ⫫ Y | S on integer-coded discrete data.

    G² = 2 Σ O ln(O/E) with E the product of the stratum's margins; degrees of
    freedom as in causal-learn/pgmpy (see ``chi2_type_statistic``).
    """
    codes = data if levels is not None else as_data_matrix(data, kind="discrete")
    stat, dof, p = chi2_type_statistic(contingency_table(codes, x, y, S, levels), "g2")
    return CIResult(stat, p, dof)


def chi2_test(data, x: int, y: int, S: Sequence[int] = (), *, levels: np.ndarray | None = None) -> CIResult:
    """Pearson χ² test of X ⫫ Y | S on integer-coded discrete data."""
    codes = data if levels is not None else as_data_matrix(data, kind="discrete")
    stat, dof, p = chi2_type_statistic(contingency_table(codes, x, y, S, levels), "chi2")
    return CIResult(stat, p, dof)


# Rank correlations from stratified contingency tables


def _pairs_from_table(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concordant and discordant pair counts per stratum, in O(|X|·|Y|).

    For cell (a, b), the concordant partners are the cells (a', b') with
    a' > a and b' > b, the discordant ones a' > a and b' < b; both come from
    2-D suffix sums of the table.
    """
    t = table.astype(np.float64, copy=False)
    # suffix[s, a, b] = sum over a' >= a, b' >= b
    suffix = t[:, ::-1, ::-1].cumsum(axis=1).cumsum(axis=2)[:, ::-1, ::-1]
    greater = np.zeros_like(t)
    greater[:, :-1, :-1] = suffix[:, 1:, 1:]  # a' > a, b' > b
    # lower-left: a' > a, b' < b  -> prefix over b, suffix over a
    prefix_b = t[:, ::-1, :].cumsum(axis=1)[:, ::-1, :].cumsum(axis=2)  # a' >= a, b' <= b
    lower = np.zeros_like(t)
    lower[:, :-1, 1:] = prefix_b[:, 1:, :-1]  # a' > a, b' < b
    concordant = (t * greater).sum(axis=(1, 2))
    discordant = (t * lower).sum(axis=(1, 2))
    return concordant, discordant


def _kendall_from_table(table: np.ndarray, variant: Literal["a", "b"]) -> tuple[np.ndarray, np.ndarray]:
    """Kendall's τ per stratum and the stratum sizes."""
    n = table.sum(axis=(1, 2)).astype(np.float64)
    concordant, discordant = _pairs_from_table(table)
    n0 = n * (n - 1) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        if variant == "a":
            tau = (concordant - discordant) / n0
        else:
            tx = table.sum(axis=2).astype(np.float64)
            ty = table.sum(axis=1).astype(np.float64)
            n1 = (tx * (tx - 1) / 2).sum(axis=1)
            n2 = (ty * (ty - 1) / 2).sum(axis=1)
            tau = (concordant - discordant) / np.sqrt((n0 - n1) * (n0 - n2))
    return np.nan_to_num(tau, nan=0.0), n


def _spearman_from_table(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spearman's ρ per stratum (Pearson correlation of mid-ranks) and stratum sizes."""
    t = table.astype(np.float64, copy=False)
    n = t.sum(axis=(1, 2))
    tx = t.sum(axis=2)
    ty = t.sum(axis=1)
    # mid-rank of level a within the stratum: (#below) + (count + 1)/2
    rx = np.cumsum(tx, axis=1) - tx + (tx + 1) / 2
    ry = np.cumsum(ty, axis=1) - ty + (ty + 1) / 2
    mean = (n + 1) / 2
    dx = rx - mean[:, None]
    dy = ry - mean[:, None]
    cov = np.einsum("sab,sa,sb->s", t, dx, dy)
    vx = np.einsum("sa,sa->s", tx, dx * dx)
    vy = np.einsum("sb,sb->s", ty, dy * dy)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = cov / np.sqrt(vx * vy)
    return np.nan_to_num(rho, nan=0.0), n


def _weighted_z(values: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """Inverse-variance pooled statistic Σ wᵢ vᵢ / √Σ wᵢ and its two-sided normal p-value."""
    keep = weights > 0
    total = weights[keep].sum()
    if total <= 0:
        return 0.0, 1.0
    z = float((weights[keep] * values[keep]).sum() / np.sqrt(total))
    return z, float(normal_two_sided_p(z))


def kendall_weights(n: np.ndarray) -> np.ndarray:
    """wᵢ = 9 nᵢ(nᵢ − 1) / (2(2nᵢ + 5)): inverse null variance of τ in a stratum of nᵢ rows.

    Wang, Pang & Song (NeurIPS 2020), App. D, Definition 6. Strata with fewer
    than two rows get weight 0.
    """
    n = np.asarray(n, dtype=np.float64)
    return np.where(n >= 2, 9 * n * (n - 1) / (2 * (2 * n + 5)), 0.0)


def spearman_weights(n: np.ndarray) -> np.ndarray:
    """wᵢ = nᵢ − 1: inverse null variance of ρ in a stratum (App. E, Definition 8)."""
    n = np.asarray(n, dtype=np.float64)
    return np.where(n >= 3, n - 1, 0.0)


def informative_strata(table: np.ndarray) -> np.ndarray:
    """Per stratum of a (strata, |X|, |Y|) table: X and Y each take at least two values and it has ≥ 3 rows.

    The strata on which the public code of Wang, Pang & Song (2020) computes
    Kendall's τ; the others are *degenerate* (see :data:`DEGENERATE_CONVENTIONS`).

    >>> table = np.array([[[5, 0], [0, 5]], [[4, 3], [0, 0]]])  # stratum 2: X constant
    >>> informative_strata(table).tolist()
    [True, False]
    """
    table = np.asarray(table)
    if table.ndim != 3:
        raise ValueError(f"table must have shape (strata, |X|, |Y|), got shape {table.shape}")
    x_values = (table.sum(axis=2) > 0).sum(axis=1)
    y_values = (table.sum(axis=1) > 0).sum(axis=1)
    return (x_values >= 2) & (y_values >= 2) & (table.sum(axis=(1, 2)) >= 3)


def stratified_kendall(table: np.ndarray, variant: Literal["a", "b"] = "a", *,
                       degenerate: str = "independent") -> CIResult:
    """Conditional Kendall's τ test from a stratified table (strata, |X|, |Y|).

    statistic = Σ wᵢ τᵢ / √Σ wᵢ with wᵢ = ``kendall_weights`` (Wang et al. 2020,
    App. D, Def. 6) — a z-score under independence; two-sided normal p-value.
    ``effect`` is the weight-averaged τ.

    ``degenerate`` (:data:`DEGENERATE_CONVENTIONS`): ``"independent"`` (default)
    pools every stratum, a degenerate one with τ = 0, and gives p = 1 when no
    stratum is informative; ``"keep_edge"`` (the Priv-PC authors' code, not for
    private use) pools only :func:`informative_strata` and returns p = NaN when
    there is none, so PC keeps the edge.

    >>> table = np.array([[[40, 30], [0, 0]]])  # one stratum, X constant in it
    >>> stratified_kendall(table).p_value, math.isnan(stratified_kendall(table, degenerate="keep_edge").p_value)
    (1.0, True)
    """
    check_degenerate(degenerate)
    tau, n = _kendall_from_table(table, variant)
    w = kendall_weights(n)
    if degenerate == "keep_edge":
        informative = informative_strata(table)
        if not informative.any():
            return CIResult(math.nan, math.nan, None, math.nan)
        w = np.where(informative, w, 0.0)
    z, p = _weighted_z(tau, w)
    effect = float((w * tau).sum() / w.sum()) if w.sum() > 0 else 0.0
    return CIResult(z, p, None, effect)


def stratified_spearman(table: np.ndarray) -> CIResult:
    """Conditional Spearman's ρ test from a stratified table (App. E, Def. 8)."""
    rho, n = _spearman_from_table(table)
    w = spearman_weights(n)
    z, p = _weighted_z(rho, w)
    effect = float((w * rho).sum() / w.sum()) if w.sum() > 0 else 0.0
    return CIResult(z, p, None, effect)


def kendall_tau(a: np.ndarray, b: np.ndarray, variant: Literal["a", "b"] = "b") -> float:
    """Kendall's τ of two samples (τ-b by default, equal to ``scipy.stats.kendalltau``).

    τ-a = (C − D)/(n(n−1)/2); τ-b divides by √((n₀ − n₁)(n₀ − n₂)) instead
    (tie-corrected). Few distinct values: computed from the contingency table
    of the rank codes in O(levels²); many: by scipy's O(n log n) sort.
    """
    a = np.asarray(a)
    b = np.asarray(b)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"a and b must be 1-D arrays of equal length, got shapes {a.shape} and {b.shape}")
    ua, ca, na = np.unique(a, return_inverse=True, return_counts=True)
    ub, cb, nb = np.unique(b, return_inverse=True, return_counts=True)
    if len(ua) * len(ub) <= 1_000_000:
        tau, _ = _kendall_from_table(contingency_table(np.column_stack([ca, cb]), 0, 1), variant)
        return float(tau[0])
    tau_b = float(stats.kendalltau(a, b).statistic)
    if variant == "b":
        return tau_b
    n0 = len(a) * (len(a) - 1) / 2
    n1 = float((na * (na - 1) / 2).sum())
    n2 = float((nb * (nb - 1) / 2).sum())
    return tau_b * float(np.sqrt((n0 - n1) * (n0 - n2))) / n0


def kendall_tau_test(data, x: int, y: int, S: Sequence[int] = (), *, variant: Literal["a", "b"] = "a",
                     levels: np.ndarray | None = None, degenerate: str = "independent") -> CIResult:
    """Conditional Kendall's τ test on integer-coded (ordinal) data, stratified by S.

    The weights are the no-ties inverse variances of Wang et al. (2020),
    Def. 6. With τ-a (the default, as in that paper) ties shrink τ towards 0,
    so the test is conservative on tied data; τ-b with the same weights is
    anti-conservative on heavily tied data. ``degenerate``: how strata in
    which X or Y is constant count (:data:`DEGENERATE_CONVENTIONS`).
    """
    codes = data if levels is not None else as_data_matrix(data, kind="discrete")
    return stratified_kendall(contingency_table(codes, x, y, S, levels), variant, degenerate=degenerate)


def spearman_rho_test(data, x: int, y: int, S: Sequence[int] = (), *, levels: np.ndarray | None = None) -> CIResult:
    """Conditional Spearman's ρ test on integer-coded (ordinal) data, stratified by S."""
    codes = data if levels is not None else as_data_matrix(data, kind="discrete")
    return stratified_spearman(contingency_table(codes, x, y, S, levels))

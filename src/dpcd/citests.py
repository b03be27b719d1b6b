"""Conditional-independence tests.

Every test is a function of (data, x, y, S) returning a :class:`CIResult`
(statistic, p-value, degrees of freedom where they exist). Large p-values mean
"independent": the PC rule removes an edge when ``p_value > alpha``.

Discrete tests build the stratified contingency table of (S, X, Y) once with
``np.bincount`` on mixed-radix codes; G², χ², Kendall's τ and Spearman's ρ are
all computed from that table without a Python loop over rows or strata.
Numeric tests (Fisher-z) work from data or from a given covariance/correlation
matrix, so a noisy private covariance plugs in directly.

:class:`CITester` binds a test to a dataset, memoises results per (x, y, S)
and counts how many distinct tests were computed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Sequence

import numpy as np
from scipy import special, stats

from ._validation import as_data_matrix
from .schema import check_codes, public_levels

__all__ = [
    "CIResult",
    "CITester",
    "TESTS",
    "contingency_table",
    "g2_test",
    "chi2_test",
    "fisher_z_test",
    "fisher_z_from_matrix",
    "partial_correlation",
    "kendall_tau",
    "kendall_tau_test",
    "spearman_rho_test",
    "stratified_kendall",
    "stratified_spearman",
]


@dataclass(frozen=True)
class CIResult:
    """Outcome of one conditional-independence test.

    ``statistic`` is the test statistic (G², χ², Fisher's |z|·√(n−|S|−3), or
    the inverse-variance-weighted z of the conditional rank correlations);
    ``p_value`` its p-value; ``dof`` the degrees of freedom of χ²-type tests.
    ``effect`` is the raw association (Kendall's τ or Spearman's ρ pooled over
    strata, partial correlation for Fisher-z) where one exists.
    """

    statistic: float
    p_value: float
    dof: float | None = None
    effect: float | None = None


# ---------------------------------------------------------------------------
# Contingency tables


def _levels(codes: np.ndarray) -> np.ndarray:
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


def contingency_table(codes: np.ndarray, x: int, y: int, S: Sequence[int] = (),
                      levels: np.ndarray | None = None) -> np.ndarray:
    """Counts of (S-stratum, X, Y) as an array of shape (strata, |X|, |Y|).

    ``codes`` holds integer codes 0..k−1 per column (rows × variables; a
    Fortran-ordered array is fastest, since each test reads whole columns).
    Only strata that occur in the data are kept (empty strata carry no
    information and are dropped, as in causal-learn and pgmpy).
    """
    if levels is None:
        levels = _levels(codes)
    kx, ky = int(levels[x]), int(levels[y])
    S = list(S)
    s_code, ks = _stratum_codes([codes[:, s] for s in S], [levels[s] for s in S], codes.shape[0])
    s_code *= kx
    s_code += codes[:, x]
    s_code *= ky
    s_code += codes[:, y]
    table = np.bincount(s_code, minlength=ks * kx * ky).reshape(ks, kx, ky)
    if ks > 1:
        table = table[table.sum(axis=(1, 2)) > 0]
    return table


def _chi2_type_statistic(table: np.ndarray, kind: Literal["g2", "chi2"]) -> tuple[float, float, float]:
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
    freedom as in causal-learn/pgmpy (see ``_chi2_type_statistic``).
    """
    codes = data if levels is not None else as_data_matrix(data, kind="discrete")
    stat, dof, p = _chi2_type_statistic(contingency_table(codes, x, y, S, levels), "g2")
    return CIResult(stat, p, dof)


def chi2_test(data, x: int, y: int, S: Sequence[int] = (), *, levels: np.ndarray | None = None) -> CIResult:
    """Pearson χ² test of X ⫫ Y | S on integer-coded discrete data."""
    codes = data if levels is not None else as_data_matrix(data, kind="discrete")
    stat, dof, p = _chi2_type_statistic(contingency_table(codes, x, y, S, levels), "chi2")
    return CIResult(stat, p, dof)


# ---------------------------------------------------------------------------
# Fisher-z


def partial_correlation(matrix: np.ndarray, x: int, y: int, S: Sequence[int] = ()) -> float:
    """Partial correlation of X and Y given S from a covariance or correlation matrix.

    Uses the inverse of the sub-matrix of (X, Y, S): r = −P₀₁ / √(P₀₀ P₁₁).
    A singular sub-matrix raises ``ValueError``.
    """
    idx = [x, y, *S]
    sub = np.asarray(matrix, dtype=np.float64)[np.ix_(idx, idx)]
    try:
        precision = np.linalg.inv(sub)
    except np.linalg.LinAlgError as err:
        raise ValueError(f"the covariance sub-matrix of variables {idx} is singular") from err
    r = -precision[0, 1] / np.sqrt(abs(precision[0, 0] * precision[1, 1]))
    return float(r)


def fisher_z_from_matrix(matrix: np.ndarray, n: int, x: int, y: int, S: Sequence[int] = ()) -> CIResult:
    """Fisher-z test of X ⫫ Y | S from a covariance/correlation matrix and sample size n.

    z = ½ ln((1 + r)/(1 − r)), statistic = √(n − |S| − 3)·|z|, two-sided
    normal p-value (the same formula as causal-learn's ``fisherz``). The
    matrix may be a noisy private estimate (PrivPC*).
    """
    if n - len(S) - 3 <= 0:
        raise ValueError(f"n={n} is too small for a Fisher-z test with |S|={len(S)} (need n > |S| + 3)")
    r = partial_correlation(matrix, x, y, S)
    if abs(r) >= 1:
        r = (1.0 - np.finfo(float).eps) * np.sign(r)
    z = 0.5 * np.log((1 + r) / (1 - r))
    statistic = float(np.sqrt(n - len(S) - 3) * abs(z))
    p_value = float(normal_two_sided_p(statistic))
    return CIResult(statistic, p_value, None, r)


def fisher_z_test(data, x: int, y: int, S: Sequence[int] = ()) -> CIResult:
    """Fisher-z test of X ⫫ Y | S on numeric data (via the correlation matrix)."""
    array = as_data_matrix(data, kind="numeric")
    corr = np.corrcoef(array[:, [x, y, *S]].T)
    return fisher_z_from_matrix(corr, array.shape[0], 0, 1, list(range(2, 2 + len(S))))


# ---------------------------------------------------------------------------
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


def stratified_kendall(table: np.ndarray, variant: Literal["a", "b"] = "a") -> CIResult:
    """Conditional Kendall's τ test from a stratified table (strata, |X|, |Y|).

    statistic = Σ wᵢ τᵢ / √Σ wᵢ with wᵢ = ``kendall_weights`` (Wang et al. 2020,
    App. D, Def. 6) — a z-score under independence; two-sided normal p-value.
    ``effect`` is the weight-averaged τ.
    """
    tau, n = _kendall_from_table(table, variant)
    w = kendall_weights(n)
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
                     levels: np.ndarray | None = None) -> CIResult:
    """Conditional Kendall's τ test on integer-coded (ordinal) data, stratified by S.

    The weights are the no-ties inverse variances of Wang et al. (2020),
    Def. 6. With τ-a (the default, as in that paper) ties shrink τ towards 0,
    so the test is conservative on tied data; τ-b with the same weights is
    anti-conservative on heavily tied data.
    """
    codes = data if levels is not None else as_data_matrix(data, kind="discrete")
    return stratified_kendall(contingency_table(codes, x, y, S, levels), variant)


def spearman_rho_test(data, x: int, y: int, S: Sequence[int] = (), *, levels: np.ndarray | None = None) -> CIResult:
    """Conditional Spearman's ρ test on integer-coded (ordinal) data, stratified by S."""
    codes = data if levels is not None else as_data_matrix(data, kind="discrete")
    return stratified_spearman(contingency_table(codes, x, y, S, levels))


# ---------------------------------------------------------------------------
# A test bound to one dataset, memoised


TESTS: dict[str, str] = {
    "g2": "discrete",
    "chi2": "discrete",
    "kendall": "discrete",
    "spearman": "discrete",
    "fisherz": "numeric",
}


class CITester:
    """A CI test bound to one dataset: ``tester(x, y, S) -> CIResult``.

    Results are memoised per unordered pair and conditioning *set*, so the
    PC engine may ask the same question from both ends of an edge at no cost;
    ``n_computed`` counts the distinct tests actually computed. Data are
    validated once (discrete tests need integer codes; Fisher-z needs finite
    numbers) and pre-processed once (levels, correlation matrix).

    Parameters
    ----------
    data : array or DataFrame, rows × variables.
    test : one of ``TESTS`` ("g2", "chi2", "kendall", "spearman", "fisherz"),
        or a callable ``f(data, x, y, S) -> CIResult`` for a custom test.
    variant : for "kendall", τ-"a" (default, see ``kendall_tau_test``) or τ-"b".
    levels : public domain sizes of the columns for the discrete tests
        (a sequence, a mapping or a :class:`~dpcd.schema.Schema`); private
        algorithms pass them so that table shapes never depend on the data.
        Default: max code + 1 per column, read from the data (non-private use only).
    """

    def __init__(self, data, test: str | Callable = "g2", *, variant: Literal["a", "b"] = "a",
                 levels=None):
        if callable(test):
            self._kind = "custom"
            self._custom = test
            self.data = data
            self.n_rows = len(data)
            self.n_vars = np.shape(data)[1]
        else:
            if test not in TESTS:
                raise ValueError(f"test must be one of {sorted(TESTS)} or a callable, got {test!r}")
            self._kind = test
            kind = TESTS[test]
            self.data = as_data_matrix(data, kind=kind)
            self.n_rows, self.n_vars = self.data.shape
            if kind == "discrete":
                self.data = np.asfortranarray(self.data)  # each test reads whole columns
                if levels is None:
                    self.levels = _levels(self.data)
                else:
                    self.levels = public_levels(levels, self.n_vars, getattr(data, "columns", None))
                    check_codes(self.data, self.levels)
            else:
                self.correlation = np.corrcoef(self.data.T)
        if variant not in ("a", "b"):
            raise ValueError(f"variant must be 'a' or 'b', got {variant!r}")
        self.test = test
        self.variant = variant
        self._cache: dict[tuple, CIResult] = {}
        self.n_computed = 0

    def __call__(self, x: int, y: int, S: Sequence[int] = ()) -> CIResult:
        key = (min(x, y), max(x, y), tuple(sorted(S)))
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        result = self._compute(x, y, tuple(S))
        self._cache[key] = result
        self.n_computed += 1
        return result

    def _compute(self, x: int, y: int, S: tuple[int, ...]) -> CIResult:
        kind = self._kind
        if kind == "custom":
            return self._custom(self.data, x, y, S)
        if kind == "fisherz":
            return fisher_z_from_matrix(self.correlation, self.n_rows, x, y, S)
        table = contingency_table(self.data, x, y, S, self.levels)
        if kind in ("g2", "chi2"):
            stat, dof, p = _chi2_type_statistic(table, kind)
            return CIResult(stat, p, dof)
        if kind == "kendall":
            return stratified_kendall(table, self.variant)
        return stratified_spearman(table)

    def table(self, x: int, y: int, S: Sequence[int] = ()) -> np.ndarray:
        """The stratified contingency table of a discrete test (for sensitivity-aware deciders)."""
        if TESTS.get(self._kind) != "discrete":
            raise ValueError(f"test {self.test!r} has no contingency table")
        return contingency_table(self.data, x, y, S, self.levels)


def normal_two_sided_p(z: float | np.ndarray) -> float | np.ndarray:
    """Two-sided normal p-value 2·(1 − Φ(|z|)), computed without cancellation."""
    return special.erfc(np.abs(z) / np.sqrt(2))

"""Gaussian kernels, HSIC with its permutation null, and kernel ridge regression.

One implementation of the kernel machinery for the project: the regression-based
CI test (RCIT, :mod:`dpcd.ci.rcit`) and the private additive-noise model both build
on it.

* :func:`gaussian_gram` — ``k(a, b) = exp(-||a - b||² / (2 σ²))``; the bandwidth
  ``σ`` defaults to the median heuristic :func:`median_bandwidth` (median
  Euclidean distance between distinct points; for one-dimensional data an exact
  O(m log m) selection that returns the same number without an m × m matrix).
* :func:`hsic` — the biased empirical HSIC of Def. 4 of Zhang et al. (2023),
  ``tr(K H L H) / (m - 1)²`` with ``H = I - 11ᵀ/m`` (Gretton et al. 2005).
* :func:`hsic_permutation_test` — the statistic, its ``k`` permutation scores
  ``HSIC(ψ_i(U), V)`` (Eq. 5 of Zhang et al.) and the permutation p-value
  ``p = #{i : HSIC(U, V) < HSIC(ψ_i(U), V)} / k``. The centred Gram matrices are
  built once; every permutation is an index permutation of them. With
  ``method="lowrank"`` the Gram matrices are replaced by pivoted incomplete
  Cholesky factors ``K ≈ F Fᵀ`` whose neglected trace is at most ``tol``
  (default 1e-10), so each permuted score is ``||F_c[ψ]ᵀ G_c||²_F / (m-1)²`` in
  O(m r s) instead of O(m²); the scores differ from the exact ones by at most
  ``tol · ||H L H||₂ / (m - 1)²`` (checked in the tests).
* :func:`krr_factor` / :func:`krr_residuals` — kernel ridge regression of Eq. 2
  of Zhang et al. (2023): ``min_w λ/2 ||w||² + (1/m) Σ (wᵀφ(z_i) - x_i)²``, whose
  residuals are ``U = c (K + c I)⁻¹ x`` with ``c = m λ / 2`` (the same fit as
  scikit-learn's ``KernelRidge(alpha=m λ / 2)``). The factor is computed once
  per conditioning set and reused for every regressed variable: the Cholesky
  factor of ``K + c I`` (``method="exact"``), or (``"lowrank"``/``"auto"``) a
  pivoted incomplete Cholesky factor ``K ≈ F Fᵀ`` with neglected trace ≤ ``tol``
  and the Woodbury identity, O(m r²) instead of O(m³), with residuals within
  ``(tol / c) ||t||₂`` of the exact ones (a Gaussian kernel on |Z| = 2 at
  m = 2000 needs r ≈ 90 columns at tol = 1e-10).

Nothing here is private by itself; the sensitivities live in :mod:`dpcd.ci.rcit`.

References
----------
Gretton, A., Bousquet, O., Smola, A., Schölkopf, B. (2005). Measuring statistical
dependence with Hilbert–Schmidt norms. ALT.
Fine, S., Scheinberg, K. (2001). Efficient SVM training using low-rank kernel
representations. JMLR 2 (pivoted incomplete Cholesky).
Pfister, N., Bühlmann, P., Schölkopf, B., Peters, J. (2018). Kernel-based tests for
joint independence. JRSS-B (permutation approximation).
Zhang, H., Xia, Y., Ren, Y., Guan, J., Zhou, S. (2023). Differentially private
nonlinear causal discovery from numerical data. AAAI (Def. 4, Eq. 2, Eq. 5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import linalg

from .validation import RngLike, as_rng, check_int, check_positive

__all__ = [
    "HSICPermutationResult",
    "KRRFactor",
    "as_points",
    "center_gram",
    "gaussian_gram",
    "hsic",
    "hsic_permutation_test",
    "incomplete_cholesky",
    "krr_factor",
    "krr_residuals",
    "median_bandwidth",
    "pairwise_sq_dists",
]

#: Above this many rows the median heuristic uses this many evenly spaced rows
#: (deterministic, so the bandwidth is a function of the data only).
MEDIAN_MAX_POINTS = 2000


def as_points(x, name: str = "x") -> np.ndarray:
    """Return ``x`` as a float (m, d) array of finite values (a 1-D input is one column)."""
    array = np.asarray(x, dtype=np.float64)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D (rows x dimensions), got shape {array.shape}")
    if array.shape[0] < 2:
        raise ValueError(f"{name} needs at least 2 rows, got {array.shape[0]}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return array


def pairwise_sq_dists(x, y=None) -> np.ndarray:
    """Squared Euclidean distances between the rows of ``x`` (and ``y``), clipped at 0."""
    x = as_points(x)
    y = x if y is None else as_points(y, "y")
    if x.shape[1] == 1 and y.shape[1] == 1:
        dist = np.subtract.outer(x[:, 0], y[:, 0])
        np.square(dist, out=dist)
        return dist
    sq_x = np.einsum("ij,ij->i", x, x)
    sq_y = sq_x if y is x else np.einsum("ij,ij->i", y, y)
    dist = x @ y.T
    dist *= -2.0
    dist += sq_x[:, None]
    dist += sq_y[None, :]
    np.maximum(dist, 0.0, out=dist)
    return dist


def _two_middle(values: np.ndarray, lo: int) -> tuple[float, float]:
    """The ``lo``-th and ``(lo + 1)``-th smallest of ``values`` (0-based; the second is ``inf`` if absent).

    One selection (``np.partition`` at ``lo``) and a minimum over the part
    above it, cheaper than partitioning at two ranks.
    """
    part = np.partition(values, lo)
    upper = part[lo + 1:]
    return float(part[lo]), float(upper.min()) if upper.size else np.inf


def _median_root(values: np.ndarray) -> float:
    """``np.median(np.sqrt(values))`` without taking 2·10⁶ square roots (order statistics commute with √)."""
    n = values.size
    lo, hi = (n - 1) // 2, n // 2
    first, second = _two_middle(values, lo)
    if hi == lo:
        second = first
    return float((np.sqrt(first) + np.sqrt(second)) / 2)


def _median_from_sq_dists(dist: np.ndarray) -> float:
    """Median heuristic from a square matrix of squared distances (strict upper triangle, zeros dropped)."""
    mask = ~np.tri(dist.shape[0], dtype=bool)  # i < j
    mask &= dist > 0
    values = dist[mask]
    return 1.0 if values.size == 0 else _median_root(values)


def _median_1d(values: np.ndarray) -> float:
    """Median of ``sqrt(fl((x_i - x_j)²))`` over pairs with a positive square, in O(m log m) memory O(m).

    Exact selection (the same number :func:`_median_from_sq_dists` returns): on
    the sorted values ``s`` each row ``i`` of ``fl((s_j - s_i)²)``, ``j > i``, is
    non-decreasing in ``j`` (rounding is monotone), so the number of pairs with a
    square ≤ t is a sum of per-row prefix lengths found by a vectorised binary
    search. Bisection on ``t`` narrows the two middle ranks to at most ``4m``
    candidate pairs, which are then listed and partitioned.
    """
    s = np.sort(values)
    m = s.size
    rows = np.arange(m)
    last = m - 1

    def first_above(t: float) -> np.ndarray:
        # per row i: the smallest j in [i + 1, m] with fl((s_j - s_i)^2) > t (m if none)
        lo = rows + 1
        hi = np.full(m, m)
        active = lo < hi
        while active.any():
            mid = (lo + hi) >> 1
            diff = s[np.minimum(mid, last)] - s
            below = diff * diff <= t
            lo = np.where(active & below, mid + 1, lo)
            hi = np.where(active & ~below, mid, hi)
            active = lo < hi
        return lo

    start = first_above(0.0)
    n = int((m - start).sum())
    if n == 0:
        return 1.0
    k_lo, k_hi = (n - 1) // 2, n // 2
    lo_t, lo_idx, count_lo = 0.0, start, 0
    span = s[-1] - s[0]
    hi_t, hi_idx, count_hi = float(span * span), np.full(m, m), n
    budget = max(4 * m, 1024)
    while count_hi - count_lo > budget:
        t = lo_t + 0.5 * (hi_t - lo_t)
        if not lo_t < t < hi_t:
            break
        idx = first_above(t)
        count = int((idx - start).sum())
        if count <= k_lo:
            lo_t, lo_idx, count_lo = t, idx, count
        elif count > k_hi:
            hi_t, hi_idx, count_hi = t, idx, count
        else:
            break
    # the candidates: rows i, columns j in [lo_idx_i, hi_idx_i); ranks k_lo, k_hi are among them
    lengths = hi_idx - lo_idx
    total = int(lengths.sum())
    row = np.repeat(rows, lengths)
    col = np.repeat(lo_idx - np.cumsum(lengths) + lengths, lengths) + np.arange(total)
    diff = s[col] - s[row]
    squares = diff * diff
    first, second = _two_middle(squares, k_lo - count_lo)
    if k_hi == k_lo:
        second = first
    return float((np.sqrt(first) + np.sqrt(second)) / 2)


def _thinned(x: np.ndarray) -> np.ndarray:
    m = x.shape[0]
    if m > MEDIAN_MAX_POINTS:
        return x[np.linspace(0, m - 1, MEDIAN_MAX_POINTS).astype(np.intp)]
    return x


def median_bandwidth(x) -> float:
    """Median heuristic: the median Euclidean distance between pairs of distinct rows.

    Rows beyond :data:`MEDIAN_MAX_POINTS` are thinned to that many evenly spaced
    rows (deterministic). Returns 1.0 when all rows coincide. One-dimensional
    data take an exact O(m log m) selection (no m × m matrix); otherwise the
    median is taken over the upper triangle of :func:`pairwise_sq_dists`. Both
    return exactly ``np.median`` of the square roots of the positive squared
    distances.
    """
    x = _thinned(as_points(x))
    if x.shape[1] == 1:
        return _median_1d(x[:, 0])
    return _median_from_sq_dists(pairwise_sq_dists(x))


def gaussian_gram(x, *, bandwidth: float | None = None) -> np.ndarray:
    """Gaussian Gram matrix ``exp(-||x_i - x_j||² / (2 σ²))``; ``σ`` = median heuristic by default."""
    x = as_points(x)
    sigma = median_bandwidth(x) if bandwidth is None else check_positive(bandwidth, "bandwidth")
    gram = pairwise_sq_dists(x)
    gram *= -0.5 / sigma**2
    np.exp(gram, out=gram)
    return gram


def center_gram(gram: np.ndarray) -> np.ndarray:
    """``H K H`` with ``H = I - 11ᵀ/m`` (returns a new array)."""
    gram = np.asarray(gram, dtype=np.float64)
    if gram.ndim != 2 or gram.shape[0] != gram.shape[1]:
        raise ValueError(f"gram must be a square matrix, got shape {gram.shape}")
    row = gram.mean(axis=0)
    col = gram.mean(axis=1)
    return gram - row[None, :] - col[:, None] + row.mean()


def hsic(K: np.ndarray, L: np.ndarray) -> float:
    """Biased empirical HSIC ``tr(K H L H) / (m - 1)²`` (Def. 4 of Zhang et al. 2023)."""
    K = np.asarray(K, dtype=np.float64)
    L = np.asarray(L, dtype=np.float64)
    if K.shape != L.shape or K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K and L must be square matrices of the same shape, got {K.shape} and {L.shape}")
    m = K.shape[0]
    if m < 2:
        raise ValueError("K and L need at least 2 rows")
    return float(np.vdot(center_gram(K), center_gram(L))) / (m - 1) ** 2


def _pivoted_cholesky(x: np.ndarray, sigma: float, tol: float, max_rank: int) -> tuple[np.ndarray, float]:
    m = x.shape[0]
    factor = np.zeros((max_rank, m))  # row j = column j of F (contiguous updates)
    residual = np.ones(m)
    scale = -0.5 / sigma**2
    rank = 0
    while rank < max_rank and residual.sum() > tol:
        pivot = int(np.argmax(residual))
        pivot_value = residual[pivot]
        diff = x - x[pivot]
        column = np.exp(scale * np.einsum("ij,ij->i", diff, diff))
        if rank:
            column -= factor[:rank, pivot] @ factor[:rank]
        column /= np.sqrt(pivot_value)
        factor[rank] = column
        residual -= column**2
        np.maximum(residual, 0.0, out=residual)
        residual[pivot] = 0.0
        rank += 1
    return factor[:rank].T.copy(), float(residual.sum())


def incomplete_cholesky(x, *, bandwidth: float, tol: float = 1e-10,
                        max_rank: int | None = None) -> np.ndarray:
    """Pivoted incomplete Cholesky factor ``F`` (m × r) of the Gaussian Gram matrix of ``x``.

    Stops when the trace of the residual ``K - F Fᵀ`` (which is positive
    semi-definite) is at most ``tol`` or when ``max_rank`` columns are built.
    """
    x = as_points(x)
    sigma = check_positive(bandwidth, "bandwidth")
    tol = check_positive(tol, "tol", allow_zero=True)
    m = x.shape[0]
    max_rank = m if max_rank is None else min(check_int(max_rank, "max_rank", minimum=1), m)
    return _pivoted_cholesky(x, sigma, tol, max_rank)[0]


@dataclass(frozen=True)
class HSICPermutationResult:
    """HSIC score of (U, V), its ``k`` permutation scores and the permutation p-value.

    ``p_value = mean(permuted > statistic)`` (Eq. 5 and the rule after it in
    Zhang et al. 2023); ``bandwidth_x``/``bandwidth_y`` are the Gaussian kernel
    bandwidths ``δ_k``/``δ_l`` used; ``method`` is "exact" or "lowrank".
    """

    statistic: float
    permuted: np.ndarray
    p_value: float
    bandwidth_x: float
    bandwidth_y: float
    method: str
    m: int


def _exact_scores(Kc: np.ndarray, Lc: np.ndarray, perms: np.ndarray) -> np.ndarray:
    scores = np.empty(perms.shape[0])
    for i, perm in enumerate(perms):
        scores[i] = np.vdot(Kc[np.ix_(perm, perm)], Lc)
    return scores


def _lowrank_scores(Fc: np.ndarray, Gc: np.ndarray, perms: np.ndarray, chunk_bytes: int = 1 << 27) -> np.ndarray:
    """``||Fc[ψ]ᵀ Gc||²_F`` for every row ψ of ``perms``: one (s × m) @ (m × c·r) product per chunk.

    ``Fc[block.T]`` is (m, c, r) and contiguous, so the c permuted factors sit
    side by side as the columns of one m × c·r matrix without a copy.
    """
    m, r = Fc.shape
    s = Gc.shape[1]
    Gt = np.ascontiguousarray(Gc.T)
    chunk = max(1, chunk_bytes // max(m * r * 8, 1))
    scores = np.empty(perms.shape[0])
    for start in range(0, perms.shape[0], chunk):
        block = perms[start:start + chunk]
        stacked = Fc[block.T].reshape(m, len(block) * r)
        cross = (Gt @ stacked).reshape(s, len(block), r)
        scores[start:start + chunk] = np.einsum("skr,skr->k", cross, cross)
    return scores


def hsic_permutation_test(x, y, *, n_permutations: int = 100, rng: RngLike,
                          bandwidth_x: float | None = None, bandwidth_y: float | None = None,
                          method: Literal["auto", "exact", "lowrank"] = "auto",
                          tol: float = 1e-10) -> HSICPermutationResult:
    """HSIC independence test of ``x`` and ``y`` with ``n_permutations`` permutations.

    The p-value is the fraction of permutations ``ψ_i`` of the rows of ``x``
    with ``HSIC(x, y) < HSIC(ψ_i(x), y)`` (Zhang et al. 2023, Eq. 5), so small
    p-values mean dependence. ``method="exact"`` permutes the centred Gram
    matrices (O(k m²)); ``"lowrank"`` uses incomplete Cholesky factors with
    neglected trace ≤ ``tol`` (O(k m r s)); ``"auto"`` takes the low-rank route
    unless a factor would have more than m/4 columns.
    """
    x = as_points(x, "x")
    y = as_points(y, "y")
    m = x.shape[0]
    if y.shape[0] != m:
        raise ValueError(f"x and y must have the same number of rows, got {m} and {y.shape[0]}")
    k = check_int(n_permutations, "n_permutations", minimum=1)
    if method not in ("auto", "exact", "lowrank"):
        raise ValueError(f"method must be 'auto', 'exact' or 'lowrank', got {method!r}")
    rng = as_rng(rng)
    sx = median_bandwidth(x) if bandwidth_x is None else check_positive(bandwidth_x, "bandwidth_x")
    sy = median_bandwidth(y) if bandwidth_y is None else check_positive(bandwidth_y, "bandwidth_y")
    perms = np.argsort(rng.random((k, m)), axis=1)
    used = "exact"
    if method != "exact":
        tol = check_positive(tol, "tol", allow_zero=True)
        cap = m if method == "lowrank" else max(1, m // 4)
        F, rest_x = _pivoted_cholesky(x, sx, tol, cap)
        if method == "lowrank" or rest_x <= tol:
            G, rest_y = _pivoted_cholesky(y, sy, tol, cap)
            if method == "lowrank" or rest_y <= tol:
                used = "lowrank"
    if used == "lowrank":
        Fc = F - F.mean(axis=0)
        Gc = G - G.mean(axis=0)
        cross = Fc.T @ Gc
        statistic = float(np.vdot(cross, cross))
        scores = _lowrank_scores(Fc, Gc, perms)
    else:
        Kc = center_gram(gaussian_gram(x, bandwidth=sx))
        Lc = center_gram(gaussian_gram(y, bandwidth=sy))
        statistic = float(np.vdot(Kc, Lc))
        scores = _exact_scores(Kc, Lc, perms)
    norm = float((m - 1) ** 2)
    statistic /= norm
    scores = scores / norm
    p_value = float(np.mean(statistic < scores))
    return HSICPermutationResult(statistic=statistic, permuted=scores, p_value=p_value,
                                 bandwidth_x=sx, bandwidth_y=sy, method=used, m=m)


@dataclass(frozen=True)
class KRRFactor:
    """Factor of ``K_Z + c I`` (``c = m λ / 2``) for the KRR of Eq. 2 on one conditioning set.

    ``method="exact"``: ``cho`` is the Cholesky factor of ``K_Z + c I`` (as
    returned by ``scipy.linalg.cho_factor``). ``method="lowrank"``: ``lowrank``
    is an incomplete Cholesky factor ``F`` (m × r) with ``tr(K_Z - F Fᵀ) ≤ tol``
    and ``cho`` the Cholesky factor of the r × r system ``c I + Fᵀ F``; the
    residuals ``t - F (c I + FᵀF)⁻¹ Fᵀ t`` (Woodbury) then differ from the exact
    ones by at most ``(tol / c) ||t||₂`` per column, because
    ``||c (A + E)⁻¹ - c A⁻¹||₂ ≤ ||E||₂ / c`` for ``A, A + E ⪰ c I``.
    """

    cho: tuple
    c: float
    lam: float
    bandwidth: float
    m: int
    method: str = "exact"
    lowrank: np.ndarray | None = None
    tol: float = 0.0

    def residuals(self, targets) -> np.ndarray:
        """Residuals ``t - f(z)`` = ``c (K + c I)⁻¹ t`` for a vector or the columns of a matrix."""
        targets = np.asarray(targets, dtype=np.float64)
        if targets.shape[0] != self.m:
            raise ValueError(f"targets must have {self.m} rows, got {targets.shape[0]}")
        if self.lowrank is None:
            return self.c * linalg.cho_solve(self.cho, targets, check_finite=False)
        F = self.lowrank
        return targets - F @ linalg.cho_solve(self.cho, F.T @ targets, check_finite=False)


def krr_factor(z, *, lam: float = 1.0, bandwidth: float | None = None,
               method: Literal["auto", "exact", "lowrank"] = "exact", tol: float = 1e-10) -> KRRFactor:
    """Factor the kernel ridge regression of Eq. 2 (Zhang et al. 2023) on inputs ``z``.

    Gaussian kernel with the median-heuristic bandwidth unless ``bandwidth`` is
    given; ``lam`` is λ in ``λ/2 ||w||² + (1/m) Σ (wᵀφ(z_i) - t_i)²``.
    ``method="exact"`` factors the m × m system ``K + c I`` once (Cholesky,
    O(m³)); ``"lowrank"`` replaces ``K`` by a pivoted incomplete Cholesky factor
    with neglected trace ≤ ``tol`` (O(m r²); residual error ≤ (tol/c)·||t||₂, see
    :class:`KRRFactor`); ``"auto"`` takes the low-rank route unless the factor
    would need more than m/4 columns (then the exact one).
    """
    z = as_points(z, "z")
    lam = check_positive(lam, "lam")
    if method not in ("auto", "exact", "lowrank"):
        raise ValueError(f"method must be 'auto', 'exact' or 'lowrank', got {method!r}")
    m = z.shape[0]
    c = m * lam / 2.0
    dist = None
    if bandwidth is not None:
        sigma = check_positive(bandwidth, "bandwidth")
    elif z.shape[1] == 1 or m > MEDIAN_MAX_POINTS:
        sigma = median_bandwidth(z)
    else:  # the squared distances of the median heuristic are those of the Gram matrix: compute them once
        dist = pairwise_sq_dists(z)
        sigma = _median_from_sq_dists(dist)
    if method != "exact":
        tol = check_positive(tol, "tol", allow_zero=True)
        cap = m if method == "lowrank" else max(1, m // 4)
        F, rest = _pivoted_cholesky(z, sigma, tol, cap)
        if method == "lowrank" or rest <= tol:
            core = F.T @ F
            core[np.diag_indices_from(core)] += c
            cho = linalg.cho_factor(core, lower=True, overwrite_a=True, check_finite=False)
            return KRRFactor(cho=cho, c=c, lam=lam, bandwidth=sigma, m=m, method="lowrank", lowrank=F, tol=tol)
    system = pairwise_sq_dists(z) if dist is None else dist
    system *= -0.5 / sigma**2
    np.exp(system, out=system)
    system[np.diag_indices(m)] += c
    # the transpose is Fortran-ordered, so LAPACK factors it in place (its lower triangle is the
    # upper triangle of ``system``, which is what the factorisation reads either way)
    cho = linalg.cho_factor(system.T, lower=True, overwrite_a=True, check_finite=False)
    return KRRFactor(cho=cho, c=c, lam=lam, bandwidth=sigma, m=m)


def krr_residuals(z, targets, *, lam: float = 1.0, bandwidth: float | None = None,
                  method: Literal["auto", "exact", "lowrank"] = "exact", tol: float = 1e-10) -> np.ndarray:
    """Residuals of the kernel ridge regression (Eq. 2) of ``targets`` on ``z`` (``method``: :func:`krr_factor`)."""
    return krr_factor(z, lam=lam, bandwidth=bandwidth, method=method, tol=tol).residuals(targets)

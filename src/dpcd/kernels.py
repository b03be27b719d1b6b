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
  ``tol · ||H L H||₂ / (m - 1)²`` (checked in the tests). The per-sample part
  (bandwidth and centred factor, :func:`hsic_factor`) can be computed once and
  reused by every test of that sample (:func:`hsic_permutation_test_factors`);
  the permuted scores are one small (r × m) @ (m × s) product per permutation
  on a reused buffer, which keeps the working set in cache.
* :func:`krr_factor` / :func:`krr_residuals` — kernel ridge regression of Eq. 2
  of Zhang et al. (2023): ``min_w λ/2 ||w||² + (1/m) Σ (wᵀφ(z_i) - x_i)²``, whose
  residuals are ``U = c (K + c I)⁻¹ x`` with ``c = m λ / 2`` (the same fit as
  scikit-learn's ``KernelRidge(alpha=m λ / 2)``). The factor is computed once
  per conditioning set and reused for every regressed variable: the Cholesky
  factor of ``K + c I`` (``method="exact"``), or (``"lowrank"``/``"auto"``) a
  pivoted incomplete Cholesky factor ``K ≈ F Fᵀ`` with neglected trace ≤ ``tol``
  and the Woodbury identity, O(m r²) instead of O(m³), with residuals within
  ``(tol / c) ||t||₂`` of the exact ones (a Gaussian kernel on |Z| = 2 at
  m = 2000 needs r ≈ 90 columns at tol = 1e-10). When the factor would need
  more columns (|Z| ≥ 3), ``"auto"`` solves ``(K + c I) w = t`` by conjugate
  gradients (``method="cg"``) instead of an O(m³) Cholesky factorisation: the
  eigenvalues of ``K + c I`` lie in ``[c, m + c]`` (the entries of K are in
  [0, 1]), so with the paper's λ = 1 (c = m/2) the condition number is at most
  3 and each iteration cuts the error by a factor ≥ 3.7; the iteration stops
  when the *true* residual ``||t - (K + c I) w||₂`` is at most
  ``(tol / c) ||t||₂``, which bounds the error of ``c w`` by ``(tol / c) ||t||₂``
  — the same bound as the low-rank route — in about 8 matrix products
  (O(m² p) each, for p targets) instead of m³/3 flops. Both bounds hold in
  exact arithmetic; in floating point each route adds its rounding error,
  of order ε_mach · ||K||₂ · ||w||₂ (the exact Cholesky route has the same):
  about 0.1 % of the bound at m = 2000 with RCIT's ``tol = 1e-10``, growing
  about linearly with m, so the stated bound holds there with room; near
  ``tol / c ≈ ε_mach · m / c`` it no longer does.

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

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import linalg

from .validation import RngLike, as_rng, check_int, check_positive

__all__ = [
    "HSICFactor",
    "HSICPermutationResult",
    "KRRFactor",
    "as_points",
    "center_gram",
    "gaussian_gram",
    "hsic",
    "hsic_factor",
    "hsic_permutation_test",
    "hsic_permutation_test_factors",
    "incomplete_cholesky",
    "krr_factor",
    "krr_residuals",
    "median_bandwidth",
    "pairwise_sq_dists",
    "random_permutations",
]

#: Above this many rows the median heuristic uses this many evenly spaced rows
#: (deterministic, so the bandwidth is a function of the data only).
MEDIAN_MAX_POINTS = 2000

#: ``krr_factor(method="auto")`` tries an incomplete Cholesky factor of at most
#: ``min(m // 4, KRR_AUTO_MAX_RANK)`` columns before it turns to conjugate
#: gradients (preconditioned by that factor): building r columns costs
#: O(m r²), more than the preconditioned solve beyond about 700 columns at
#: m = 8000.
KRR_AUTO_MAX_RANK = 768

#: ``krr_factor(method="auto")`` uses conjugate gradients only when the
#: condition number of ``K + c I`` is at most ``1 + m / c`` ≤ this (λ ≥ 2/3);
#: for smaller ridge terms (e.g. c = 1) the Cholesky factorisation is used.
KRR_CG_MAX_CONDITION = 4.0

#: Iteration cap of the conjugate-gradient KRR solve; if the residual bound is not
#: met by then (it is met after about 10 iterations at condition number 3) the
#: solve falls back to the Cholesky factorisation.
KRR_CG_MAX_ITER = 200


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


#: Rows per block of :func:`pairwise_sq_dists` and :func:`gaussian_gram`: a block of
#: an m × m matrix stays in cache while it is scaled, clipped and exponentiated.
GRAM_BLOCK_ROWS = 128


def _check_out(out: np.ndarray | None, shape: tuple[int, int], name: str = "out") -> np.ndarray:
    if out is None:
        return np.empty(shape)
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError(f"{name} must be a C-contiguous float64 array of shape {shape}")
    return out


def _sq_dists_into(x: np.ndarray, y: np.ndarray, out: np.ndarray | None, sigma: float | None) -> np.ndarray:
    """Squared distances between the rows of ``x`` and ``y`` (clipped at 0), in row blocks, into ``out``.

    With ``sigma`` each block is turned into Gaussian kernel values
    ``exp(-d / (2 σ²))`` while it is in cache: one pass over the matrix.
    """
    dist = _check_out(out, (x.shape[0], y.shape[0]))
    one_d = x.shape[1] == 1 and y.shape[1] == 1
    if not one_d:
        sq_x = np.einsum("ij,ij->i", x, x)
        sq_y = sq_x if y is x else np.einsum("ij,ij->i", y, y)
    for start in range(0, x.shape[0], GRAM_BLOCK_ROWS):
        stop = start + GRAM_BLOCK_ROWS
        rows = dist[start:stop]
        if one_d:
            np.subtract.outer(x[start:stop, 0], y[:, 0], out=rows)
            np.square(rows, out=rows)
        else:
            np.matmul(x[start:stop], y.T, out=rows)
            rows *= -2.0
            rows += sq_x[start:stop, None]
            rows += sq_y[None, :]
            np.maximum(rows, 0.0, out=rows)
        if sigma is not None:
            _gaussian_of_sq_dists(rows, sigma)
    return dist


def _gaussian_of_sq_dists(dist: np.ndarray, sigma: float) -> np.ndarray:
    """``exp(-dist / (2 σ²))`` in place."""
    dist *= -0.5 / sigma**2
    return np.exp(dist, out=dist)


def pairwise_sq_dists(x, y=None, *, out: np.ndarray | None = None) -> np.ndarray:
    """Squared Euclidean distances between the rows of ``x`` (and ``y``), clipped at 0.

    ``out``: a C-contiguous float64 array of the result's shape to fill
    instead of new memory.

    >>> pairwise_sq_dists([[0.0, 0.0], [3.0, 4.0]]).tolist()
    [[0.0, 25.0], [25.0, 0.0]]
    """
    x = as_points(x)
    y = x if y is None else as_points(y, "y")
    return _sq_dists_into(x, y, out, None)


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


def gaussian_gram(x, *, bandwidth: float | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """Gaussian Gram matrix ``exp(-||x_i - x_j||² / (2 σ²))``; ``σ`` = median heuristic by default.

    Computed in row blocks of :data:`GRAM_BLOCK_ROWS` (each block is scaled and
    exponentiated while in cache); ``out``: a C-contiguous float64 m × m array
    to fill instead of new memory.

    >>> gaussian_gram([0.0, 1.0], bandwidth=1.0).round(4).tolist()
    [[1.0, 0.6065], [0.6065, 1.0]]
    """
    x = as_points(x)
    sigma = median_bandwidth(x) if bandwidth is None else check_positive(bandwidth, "bandwidth")
    return _sq_dists_into(x, x, out, sigma)


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


def _pivoted_cholesky(x: np.ndarray, sigma: float, tol: float, max_rank: int,
                      give_up: bool = False) -> tuple[np.ndarray, float]:
    """Pivoted incomplete Cholesky factor (m × r) of the Gaussian Gram matrix and its neglected trace.

    Stops at neglected trace ≤ ``tol`` or ``max_rank`` columns. With
    ``give_up`` it also stops at a checkpoint (ranks 64, 128, 256, …) when
    the neglected trace, extrapolated log-linearly from the previous
    checkpoint, would still exceed ``tol`` at ``max_rank`` columns: a factor
    that would probably be discarded is not built to the end. This is a
    heuristic about speed only (on the Gaussian Gram matrices met here the
    neglected trace decays ever more slowly with the rank, so the log-linear
    extrapolation tends to be optimistic); the caller checks the returned
    trace against ``tol`` either way, and the columns built are the same.
    """
    m = x.shape[0]
    factor = np.zeros((max_rank, m))  # row j = column j of F (contiguous updates)
    residual = np.ones(m)
    scale = -0.5 / sigma**2
    rank = 0
    checkpoint, last_rank, last_rest = 64, 0, float(m)
    while rank < max_rank and (rest := residual.sum()) > tol:
        if give_up and rank == checkpoint:
            if rest >= last_rest or tol <= 0.0:
                break
            slope = (math.log(rest) - math.log(last_rest)) / (rank - last_rank)
            if rank + (math.log(tol) - math.log(rest)) / slope > max_rank:
                break
            checkpoint, last_rank, last_rest = 2 * checkpoint, rank, rest
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


def _stacked_scores(Fc: np.ndarray, Gc: np.ndarray, perms: np.ndarray, chunk_bytes: int = 1 << 21) -> np.ndarray:
    """``||Fc[ψ]ᵀ Gc||²_F`` for every row ψ of ``perms``: one (s × m) @ (m × c·r) product per chunk of c.

    The c permuted factors are gathered side by side, as the columns of one
    m × c·r matrix, into a buffer of at most ``chunk_bytes`` reused for every
    chunk. 2 MB keeps the buffer the product reads in the core's cache; the
    former 16 MB spilled it, and with two workers their buffers filled a
    32 MB shared cache: 1.3–2.3× slower at m = 1000–8000 and ranks 15–60
    (``tests/benchmarks/test_bench_pcd.py``). A chunk holds at least one
    permutation whatever its size. The chunk's permutations are first copied,
    transposed, into a contiguous m × c index buffer: gathering rows through
    a strided index array costs up to twice as much at small r. The buffers
    are flat, so a short last chunk is contiguous as well. Scores depend on
    the chunk size only through the order of the floating-point sums inside
    the product.
    """
    m, r = Fc.shape
    s = Gc.shape[1]
    Gt = np.ascontiguousarray(Gc.T)
    chunk = max(1, min(perms.shape[0], chunk_bytes // max(m * r * 8, 1)))
    stacked = np.empty(m * chunk * r)
    index = np.empty(m * chunk, dtype=np.intp)
    cross = np.empty(s * chunk * r)
    scores = np.empty(perms.shape[0])
    for start in range(0, perms.shape[0], chunk):
        block = perms[start:start + chunk]
        c = len(block)
        rows = index[:m * c].reshape(m, c)
        np.copyto(rows, block.T, casting="same_kind")
        gathered = stacked[:m * c * r].reshape(m, c, r)
        np.take(Fc, rows, axis=0, out=gathered)
        product = cross[:s * c * r].reshape(s, c * r)
        np.matmul(Gt, gathered.reshape(m, c * r), out=product)
        product = product.reshape(s, c, r)
        scores[start:start + c] = np.einsum("skr,skr->k", product, product)
    return scores


def random_permutations(k: int, m: int, *, rng: RngLike) -> np.ndarray:
    """``k`` independent, uniformly random permutations of ``range(m)``, one per row (k × m, ``np.intp``).

    Each row is shuffled on its own by :meth:`numpy.random.Generator.permuted`
    (Fisher–Yates, O(m) per row). The permutations were formerly the
    ``argsort`` of a k × m uniform draw (O(m log m) per row, 3–4× slower at
    m = 4000–8000): the same distribution, but other draws for a given
    ``rng``, so a permutation p-value computed with one seed by the two
    differs run by run, not in law.

    >>> perms = random_permutations(3, 5, rng=0)
    >>> perms.shape, all(sorted(row) == [0, 1, 2, 3, 4] for row in perms.tolist())
    ((3, 5), True)
    """
    k = check_int(k, "k", minimum=0)
    m = check_int(m, "m", minimum=0)
    perms = np.tile(np.arange(m, dtype=np.intp), (k, 1))
    as_rng(rng).permuted(perms, axis=1, out=perms)
    return perms


def _inverse_permutations(perms: np.ndarray) -> np.ndarray:
    """Row-wise inverse permutations: ``inverse[i, perms[i, j]] = j``."""
    inverse = np.empty_like(perms)
    np.put_along_axis(inverse, perms, np.arange(perms.shape[1])[None, :], axis=1)
    return inverse


def _lowrank_scores(Fc: np.ndarray, Gc: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """``||Fc[ψ]ᵀ Gc||²_F`` for every row ψ of ``perms`` (the permuted HSIC scores × (m - 1)²).

    The permuted factor is gathered row by row (m × r numbers per
    permutation), which costs about as much as the product itself at small
    ranks, so the factor with fewer columns is the one gathered: since
    ``Σ_i Fc[ψ(i)] Gc[i]ᵀ = Σ_j Fc[j] Gc[ψ⁻¹(j)]ᵀ``, the score of ψ is also
    ``||Gc[ψ⁻¹]ᵀ Fc||²_F``. Equal to the former route (all k permuted factors
    in one product, the wider factor gathered when it is ``Fc``) up to the
    order of the floating-point sums.
    """
    if Fc.shape[1] <= Gc.shape[1]:
        return _stacked_scores(Fc, Gc, perms)
    return _stacked_scores(Gc, Fc, _inverse_permutations(perms))


@dataclass(frozen=True)
class HSICFactor:
    """The per-sample part of an HSIC permutation test, computed once and reusable (:func:`hsic_factor`).

    ``points`` is the (m, d) sample; ``bandwidth`` the Gaussian kernel
    bandwidth; ``centred`` the column-centred pivoted incomplete Cholesky
    factor ``F - 1 mean(F)ᵀ`` (m × r, so ``H K H ≈ centred centredᵀ``) whose
    neglected trace ``rest = tr(K - F Fᵀ)`` is at most the ``tol`` it was built
    with, or None when the test must use the Gram matrix (``method="exact"``,
    ``rest = inf``, or ``"auto"`` when more than m/4 columns would be needed).
    """

    points: np.ndarray
    bandwidth: float
    centred: np.ndarray | None
    rest: float

    @property
    def m(self) -> int:
        return int(self.points.shape[0])

    @property
    def lowrank(self) -> bool:
        return self.centred is not None


def _check_method(method: str, name: str = "method", allowed: tuple[str, ...] = ("auto", "exact", "lowrank")) -> str:
    if method not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(repr(a) for a in allowed)}, got {method!r}")
    return method


def hsic_factor(x, *, bandwidth: float | None = None, method: Literal["auto", "exact", "lowrank"] = "auto",
                tol: float = 1e-10, name: str = "x") -> HSICFactor:
    """Bandwidth and centred low-rank kernel factor of one sample, for :func:`hsic_permutation_test_factors`.

    ``bandwidth`` defaults to the median heuristic. ``method="lowrank"`` always
    builds the pivoted incomplete Cholesky factor (neglected trace ≤ ``tol``);
    ``"auto"`` keeps it only if at most m/4 columns reach ``tol`` (otherwise
    the test uses the Gram matrix); ``"exact"`` builds none. A pure function of
    the sample: a test of (x, y) built from the factors of x and y equals
    :func:`hsic_permutation_test` on x and y with the same ``rng``.

    >>> import numpy as np
    >>> f = hsic_factor(np.linspace(0.0, 1.0, 200))
    >>> f.lowrank, f.centred.shape[1] < 50, f.rest <= 1e-10
    (True, True, True)
    """
    x = as_points(x, name)
    _check_method(method)
    sigma = median_bandwidth(x) if bandwidth is None else check_positive(bandwidth, f"bandwidth_{name}")
    if method == "exact":
        return HSICFactor(points=x, bandwidth=sigma, centred=None, rest=math.inf)
    tol = check_positive(tol, "tol", allow_zero=True)
    m = x.shape[0]
    cap = m if method == "lowrank" else max(1, m // 4)
    F, rest = _pivoted_cholesky(x, sigma, tol, cap)
    if method == "auto" and rest > tol:
        return HSICFactor(points=x, bandwidth=sigma, centred=None, rest=rest)
    return HSICFactor(points=x, bandwidth=sigma, centred=F - F.mean(axis=0), rest=rest)


def hsic_permutation_test_factors(fx: HSICFactor, fy: HSICFactor, *, n_permutations: int = 100,
                                  rng: RngLike) -> HSICPermutationResult:
    """The HSIC permutation test of :func:`hsic_permutation_test` from precomputed :func:`hsic_factor` s.

    Low-rank when both factors are (O(k m r s): statistic ``||Fcᵀ Gc||²_F``,
    scores ``||Fc[ψ]ᵀ Gc||²_F``, all over (m - 1)²), else the centred Gram
    matrices (O(k m²)). The k permutations are :func:`random_permutations`
    drawn from ``rng``, as in :func:`hsic_permutation_test`.

    >>> import numpy as np
    >>> x = np.linspace(0.0, 1.0, 60)
    >>> test = hsic_permutation_test_factors(hsic_factor(x), hsic_factor(np.sin(6 * x), name="y"), rng=0)
    >>> test.p_value, test.method
    (0.0, 'lowrank')
    """
    m = fx.m
    if fy.m != m:
        raise ValueError(f"x and y must have the same number of rows, got {m} and {fy.m}")
    k = check_int(n_permutations, "n_permutations", minimum=1)
    rng = as_rng(rng)
    perms = random_permutations(k, m, rng=rng)
    if fx.lowrank and fy.lowrank:
        used = "lowrank"
        cross = fx.centred.T @ fy.centred
        statistic = float(np.vdot(cross, cross))
        scores = _lowrank_scores(fx.centred, fy.centred, perms)
    else:
        used = "exact"
        Kc = center_gram(gaussian_gram(fx.points, bandwidth=fx.bandwidth))
        Lc = center_gram(gaussian_gram(fy.points, bandwidth=fy.bandwidth))
        statistic = float(np.vdot(Kc, Lc))
        scores = _exact_scores(Kc, Lc, perms)
    norm = float((m - 1) ** 2)
    statistic /= norm
    scores = scores / norm
    p_value = float(np.mean(statistic < scores))
    return HSICPermutationResult(statistic=statistic, permuted=scores, p_value=p_value,
                                 bandwidth_x=fx.bandwidth, bandwidth_y=fy.bandwidth, method=used, m=m)


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
    unless a factor would have more than m/4 columns. Equal to
    :func:`hsic_permutation_test_factors` on the two :func:`hsic_factor` s.
    """
    x = as_points(x, "x")
    y = as_points(y, "y")
    m = x.shape[0]
    if y.shape[0] != m:
        raise ValueError(f"x and y must have the same number of rows, got {m} and {y.shape[0]}")
    check_int(n_permutations, "n_permutations", minimum=1)
    _check_method(method)
    rng = as_rng(rng)
    fx = hsic_factor(x, bandwidth=bandwidth_x, method=method, tol=tol, name="x")
    if method == "auto" and not fx.lowrank:  # the test is exact either way: no factor of y needed
        fy = hsic_factor(y, bandwidth=bandwidth_y, method="exact", name="y")
    else:
        fy = hsic_factor(y, bandwidth=bandwidth_y, method=method, tol=tol, name="y")
    return hsic_permutation_test_factors(fx, fy, n_permutations=n_permutations, rng=rng)


def _cg_krr_residuals(gram: np.ndarray, c: float, targets: np.ndarray, tol: float,
                      preconditioner: tuple[np.ndarray, tuple] | None = None,
                      max_iter: int = KRR_CG_MAX_ITER) -> np.ndarray | None:
    """``c (K + c I)⁻¹ T`` by preconditioned conjugate gradients on all columns of ``T``, or None.

    ``preconditioner = (F, cho)``: a low-rank factor ``F`` (m × r, ``K ⪰ F Fᵀ``)
    and the Cholesky factor of ``c I + FᵀF``; the iteration is preconditioned
    by ``M = F Fᵀ + c I`` (applied by Woodbury in O(m r) per column), so the
    condition number of ``M⁻¹(K + c I)`` is at most ``1 + tr(K - F Fᵀ) / c``.
    Stops when every column's true residual ``||t - (K + c I) w||₂`` is at
    most ``(tol / c) ||t||₂``: recomputed from ``w``, not the recursion's
    residual, which drifts from it by rounding (the directions restart from
    the true residual when it does not yet meet the bound), and not the
    preconditioned norm ``√(rᵀ M⁻¹ r)``, which can lie far below ``||r||₂``. Since
    ``||(K + c I)⁻¹||₂ ≤ 1 / c``, ``||c w - c w*||₂ ≤ ||t - (K + c I) w||₂`` in
    exact arithmetic. The recomputed residual carries its own rounding error,
    about ε_mach · ||K||₂ · ||w||₂, so the bound on ``c w`` holds up to that
    term: about 0.1 % of the bound at m = 2000 with RCIT's tolerance, growing
    about linearly with m; at ``tol`` near that floor a solution a few times
    outside ``(tol / c) ||t||₂`` can pass, and far larger samples run out of
    iterations rather than converge slowly. Returns None when ``max_iter``
    iterations do not reach the bound (the caller then solves exactly).
    """
    T = targets if targets.ndim == 2 else targets[:, None]

    def solve_m(V: np.ndarray) -> np.ndarray:
        if preconditioner is None:
            return V / c
        F, cho = preconditioner
        return (V - F @ linalg.cho_solve(cho, F.T @ V, check_finite=False)) / c

    def dot(A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return np.einsum("ij,ij->j", A, B)

    def true_residual(W: np.ndarray) -> tuple[np.ndarray, bool]:
        true = T - gram @ W
        true -= c * W
        return true, bool(np.all(np.linalg.norm(true, axis=0) <= limit))

    def answer(W: np.ndarray) -> np.ndarray:
        out = c * W
        return out if targets.ndim == 2 else out[:, 0]

    W = np.zeros_like(T)
    R = T.copy()
    limit = (tol / c) * np.linalg.norm(T, axis=0)
    Z = solve_m(R)
    P = Z.copy()
    rz = dot(R, Z)
    AP = np.empty_like(T)
    for _ in range(max_iter):
        if np.all(np.sqrt(dot(R, R)) <= limit):
            true, converged = true_residual(W)
            if converged:
                return answer(W)
            R = true
            Z = solve_m(R)
            P = Z.copy()
            rz = dot(R, Z)
        np.matmul(gram, P, out=AP)
        AP += c * P
        curvature = dot(P, AP)
        alpha = np.divide(rz, curvature, out=np.zeros_like(rz), where=curvature > 0)
        W += alpha * P
        R -= alpha * AP
        Z = solve_m(R)
        new = dot(R, Z)
        beta = np.divide(new, rz, out=np.zeros_like(rz), where=rz > 0)
        P *= beta
        P += Z
        rz = new
    return answer(W) if np.all(np.sqrt(dot(R, R)) <= limit) and true_residual(W)[1] else None


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
    ``method="cg"``: ``gram`` is ``K_Z`` and the residuals ``c (K_Z + c I)⁻¹ t``
    are solved by conjugate gradients to the same bound ``(tol / c) ||t||₂``
    (on the true residual of the system, up to its rounding error, see
    :func:`_cg_krr_residuals`; a Cholesky factorisation is the
    fallback if the iteration cap is hit), preconditioned by ``F Fᵀ + c I``
    when ``lowrank`` holds a (too coarse to be used alone) incomplete Cholesky
    factor ``F``, with ``cho`` the Cholesky factor of ``c I + FᵀF``.
    """

    cho: tuple | None
    c: float
    lam: float
    bandwidth: float
    m: int
    method: str = "exact"
    lowrank: np.ndarray | None = None
    tol: float = 0.0
    gram: np.ndarray | None = None

    def residuals(self, targets) -> np.ndarray:
        """Residuals ``t - f(z)`` = ``c (K + c I)⁻¹ t`` for a vector or the columns of a matrix."""
        targets = np.asarray(targets, dtype=np.float64)
        if targets.shape[0] != self.m:
            raise ValueError(f"targets must have {self.m} rows, got {targets.shape[0]}")
        if self.gram is not None:
            preconditioner = None if self.lowrank is None else (self.lowrank, self.cho)
            out = _cg_krr_residuals(self.gram, self.c, targets, self.tol, preconditioner)
            if out is not None:
                return out
            system = self.gram.copy()
            system[np.diag_indices(self.m)] += self.c
            cho = linalg.cho_factor(system, lower=True, overwrite_a=True, check_finite=False)
            return self.c * linalg.cho_solve(cho, targets, check_finite=False)
        if self.lowrank is None:
            return self.c * linalg.cho_solve(self.cho, targets, check_finite=False)
        F = self.lowrank
        return targets - F @ linalg.cho_solve(self.cho, F.T @ targets, check_finite=False)


def krr_factor(z, *, lam: float = 1.0, bandwidth: float | None = None,
               method: Literal["auto", "exact", "lowrank", "cg"] = "exact", tol: float = 1e-10,
               workspace: np.ndarray | None = None) -> KRRFactor:
    """Factor the kernel ridge regression of Eq. 2 (Zhang et al. 2023) on inputs ``z``.

    Gaussian kernel with the median-heuristic bandwidth unless ``bandwidth`` is
    given; ``lam`` is λ in ``λ/2 ||w||² + (1/m) Σ (wᵀφ(z_i) - t_i)²``.
    ``method="exact"`` factors the m × m system ``K + c I`` once (Cholesky,
    O(m³)); ``"lowrank"`` replaces ``K`` by a pivoted incomplete Cholesky factor
    with neglected trace ≤ ``tol`` (O(m r²); residual error ≤ (tol/c)·||t||₂, see
    :class:`KRRFactor`); ``"cg"`` keeps ``K`` and solves by conjugate gradients
    to the same error bound (O(m² p) per iteration for p targets; the
    condition number of ``K + c I`` is at most ``1 + m / c``, 3 at λ = 1, and
    the iteration is preconditioned by the incomplete Cholesky factor built
    so far, which brings it to ``1 + tr(K - F Fᵀ) / c``: 2–6 iterations at
    m = 8000); ``"auto"`` takes the low-rank route when at most
    ``min(m/4, KRR_AUTO_MAX_RANK)`` columns reach ``tol`` (it stops building
    the factor early when its trace decay shows it would not), otherwise
    conjugate gradients when ``1 + m/c ≤ KRR_CG_MAX_CONDITION`` and the
    Cholesky factorisation when not. Every route but "exact" returns residuals
    within ``(tol / c) ||t||₂`` of the exact ones. ``workspace``: an m × m
    float array that the "cg" route fills with ``K`` instead of new memory
    (at m = 8000 a fresh 512 MB array costs more to map than to fill); the
    factor then uses it, so compute its residuals before reusing it.

    >>> import numpy as np
    >>> z = np.random.default_rng(0).uniform(size=(300, 3))
    >>> t = np.sin(z.sum(axis=1))
    >>> exact = krr_factor(z).residuals(t)
    >>> cg = krr_factor(z, method="cg")
    >>> bool(np.linalg.norm(cg.residuals(t) - exact) <= 1e-10 / cg.c * np.linalg.norm(t))
    True
    """
    z = as_points(z, "z")
    lam = check_positive(lam, "lam")
    _check_method(method, allowed=("auto", "exact", "lowrank", "cg"))
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
    F = None
    if method != "exact":
        cap = m if method == "lowrank" else max(1, min(m // 4, KRR_AUTO_MAX_RANK))
        F, rest = _pivoted_cholesky(z, sigma, tol, cap, give_up=method != "lowrank")
        core = F.T @ F
        core[np.diag_indices_from(core)] += c
        cho = linalg.cho_factor(core, lower=True, overwrite_a=True, check_finite=False)
        if method == "lowrank" or (method == "auto" and rest <= tol):
            return KRRFactor(cho=cho, c=c, lam=lam, bandwidth=sigma, m=m, method="lowrank", lowrank=F, tol=tol)
    if method == "cg" or (method == "auto" and 1.0 + m / c <= KRR_CG_MAX_CONDITION):
        # K itself, in row blocks; the coarse factor F preconditions the iteration
        if workspace is not None:
            _check_out(workspace, (m, m), "workspace")
        return KRRFactor(cho=cho, c=c, lam=lam, bandwidth=sigma, m=m, method="cg", lowrank=F, tol=tol,
                         gram=gaussian_gram(z, bandwidth=sigma, out=workspace))
    system = gaussian_gram(z, bandwidth=sigma) if dist is None else _gaussian_of_sq_dists(dist, sigma)
    system[np.diag_indices(m)] += c
    # the transpose is Fortran-ordered, so LAPACK factors it in place (its lower triangle is the
    # upper triangle of ``system``, which is what the factorisation reads either way)
    cho = linalg.cho_factor(system.T, lower=True, overwrite_a=True, check_finite=False)
    return KRRFactor(cho=cho, c=c, lam=lam, bandwidth=sigma, m=m)


def krr_residuals(z, targets, *, lam: float = 1.0, bandwidth: float | None = None,
                  method: Literal["auto", "exact", "lowrank", "cg"] = "exact", tol: float = 1e-10) -> np.ndarray:
    """Residuals of the kernel ridge regression (Eq. 2) of ``targets`` on ``z`` (``method``: :func:`krr_factor`)."""
    return krr_factor(z, lam=lam, bandwidth=bandwidth, method=method, tol=tol).residuals(targets)

"""Regression-based conditional independence test (RCIT) and its sensitivities.

RCIT (Ramsey 2014; Zhang et al. 2017) tests X ⫫ Y | Z through the residuals of
two kernel ridge regressions, U = X − E[X|Z] and V = Y − E[Y|Z] (Eq. 2 of
Zhang et al. 2023, Gaussian kernel with the median-heuristic bandwidth, λ = 1),
followed by an HSIC independence test of U and V with k = 100 permutations
(Def. 4 and Eq. 5). With Z = ∅ it is the HSIC independence test of X and Y.

Sensitivities (Zhang et al. 2023)
---------------------------------
* Δ_R — of the RCIT score ``HSIC(U, V)``: Eq. 3 (Z ≠ ∅, from the HSIC
  bandwidths δ_k, δ_l and λ) and Eq. 4 = (12m − 11)/(m − 1)² (Z = ∅, Kusner et
  al. 2016). :func:`rcit_score_sensitivity`.
* Δ_P — of the permutation p-value: Thm. 4 with the one-sided improvement
  after Cor. 1 (B − p when p ≤ α, p − A when p > α, A and B of Eqs. 7–8).
  :func:`permutation_sensitivity`.

Both are **local** sensitivities: the bandwidths, the residuals and the
permutation scores are functions of the private data, so noise calibrated to
them does not by itself give ε-differential privacy (Nissim et al. 2007). They
are implemented as published. The neighbouring relation of the paper is
"replace one record" (datasets of equal size m differing in one tuple).
Eq. 3 rests on Thm. 2, which bounds the change of the *fitted regression
function*; the replaced record's own residual can change by O(1), which Eq. 3
does not cover — :func:`rcit_score_sensitivity` returns Eq. 3 as published and
tests/test_rcit.py checks it on random neighbours (m ≤ 300); as Eq. 3 shrinks like
1/m² while a replaced record moves HSIC by O(1/m), it must fail for large enough m.

The conditional Kendall's τ baseline of the paper's experiments is
:func:`kendall_ci_test` (the statistic of :func:`dpcd.ci.stratified_kendall`)
with the p-value sensitivity of :mod:`dpcd.privacy.sensitivity`
(:func:`dpcd.privacy.sensitivity.two_sided_kendall_pvalue_sensitivity`).

References
----------
Zhang, H., Xia, Y., Ren, Y., Guan, J., Zhou, S. (2023). Differentially private
nonlinear causal discovery from numerical data. AAAI. (Def. 4, Eqs. 2–8, Thms. 1–4.)
Zhang, H., Zhou, S., Zhang, K., Guan, J. (2017). Causal discovery using
regression-based conditional independence tests. AAAI.
Kusner, M. et al. (2016). Private causal inference. AISTATS (Eq. 4, Thm. 5).
Wang, L., Pang, Q., Song, D. (2020). Towards practical differentially private
causal graph discovery. NeurIPS (conditional Kendall's τ, App. D).
Nissim, K., Raskhodnikova, S., Smith, A. (2007). Smooth sensitivity and sampling
in private data analysis. STOC.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Hashable, Literal, Sequence

import numpy as np

from ..kernels import HSICFactor, hsic_factor, hsic_permutation_test_factors, krr_factor
from ..validation import (
    RngLike,
    as_data_matrix,
    as_rng,
    check_int,
    check_positive,
    check_probability,
)
from .discrete import kendall_tau, kendall_weights
from .result import CIResult, normal_two_sided_p
from .tester import CITester

__all__ = [
    "LRUCache",
    "RCITResult",
    "RCITTester",
    "KendallTester",
    "kendall_ci_test",
    "permutation_bounds",
    "permutation_sensitivity",
    "rcit",
    "rcit_score_sensitivity",
]


@dataclass(frozen=True)
class RCITResult:
    """One RCIT: score, permutation scores, p-value and what the sensitivities need.

    ``statistic`` = HSIC(U, V) (Def. 4); ``permuted`` = HSIC(ψ_i(U), V) for the
    k permutations; ``p_value`` = #{i: statistic < permuted_i}/k (Eq. 5);
    ``bandwidth_x``/``bandwidth_y`` = δ_k, δ_l of the HSIC kernels on U and V;
    ``lam`` = λ of the regressions; ``conditioned`` = Z ≠ ∅.
    """

    statistic: float
    p_value: float
    permuted: np.ndarray
    bandwidth_x: float
    bandwidth_y: float
    m: int
    lam: float
    conditioned: bool

    def as_ci_result(self) -> CIResult:
        return CIResult(self.statistic, self.p_value)

    @property
    def score_sensitivity(self) -> float:
        """Δ_R of this test (Eq. 3 or Eq. 4)."""
        return rcit_score_sensitivity(self.m, lam=self.lam, bandwidth_x=self.bandwidth_x,
                                      bandwidth_y=self.bandwidth_y, conditioned=self.conditioned)


def _column(data: np.ndarray, index: int, name: str) -> np.ndarray:
    index = check_int(index, name, minimum=0)
    if index >= data.shape[1]:
        raise ValueError(f"{name}={index} is out of range for data with {data.shape[1]} columns")
    return data[:, index]


def rcit(data, x: int, y: int, S: Sequence[int] = (), *, rng: RngLike, n_permutations: int = 100,
         lam: float = 1.0) -> RCITResult:
    """RCIT of X ⫫ Y | S on numeric ``data`` (rows × variables).

    Kernel ridge regression (Eq. 2, λ = ``lam``, Gaussian kernel with median
    bandwidth) of columns x and y on the columns S, then the HSIC permutation
    test of the residuals (``n_permutations`` = k). No privacy by itself.
    """
    data = as_data_matrix(data, kind="numeric")
    return RCITTester(data, rng=rng, n_permutations=n_permutations, lam=lam).result(x, y, S)


class LRUCache:
    """A dict that keeps its most recently used entries up to ``max_bytes`` (each entry's size given on insert).

    The RCIT tester caches results that are pure functions of the data (KRR
    residuals, HSIC factors), so an evicted entry is recomputed to the same
    numbers: the bound changes memory and time, never a result. The most
    recent entry is always kept, even if it alone exceeds ``max_bytes``.

    >>> cache = LRUCache(max_bytes=16)
    >>> cache.put("a", 1, size=8); cache.put("b", 2, size=8); cache.get("a")
    1
    >>> cache.put("c", 3, size=8); "b" in cache, "a" in cache, len(cache)
    (False, True, 2)
    """

    def __init__(self, max_bytes: int):
        self.max_bytes = check_int(max_bytes, "max_bytes", minimum=0)
        self.nbytes = 0
        self._entries: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()

    def get(self, key: Hashable):
        """The value stored under ``key`` (marked as most recently used), or None."""
        hit = self._entries.get(key)
        if hit is None:
            return None
        self._entries.move_to_end(key)
        return hit[0]

    def put(self, key: Hashable, value, *, size: int) -> None:
        """Store ``value`` (``size`` bytes) under ``key`` and evict the least recently used beyond ``max_bytes``."""
        old = self._entries.pop(key, None)
        if old is not None:
            self.nbytes -= old[1]
        self._entries[key] = (value, int(size))
        self.nbytes += int(size)
        while self.nbytes > self.max_bytes and len(self._entries) > 1:
            _, (_, freed) = self._entries.popitem(last=False)
            self.nbytes -= freed

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)


#: Default memory bounds of one :class:`RCITTester`'s caches (bytes).
RESIDUAL_CACHE_BYTES = 1 << 30
FACTOR_CACHE_BYTES = 1 << 28


def _read_only_copy(array: np.ndarray, order: Literal["C", "F"] = "C") -> np.ndarray:
    """A private, read-only copy of ``array``: a tester's memoised results stay true to the data it was given."""
    copy = np.array(array, order=order, copy=True)
    copy.setflags(write=False)
    return copy


class RCITTester:
    """RCIT bound to one dataset: ``tester(x, y, S) -> CIResult``, memoised per (x, y, S).

    The KRR system of a conditioning set S is factored once and the residuals
    of every variable on S are computed from that one factor and cached, so all
    tests sharing S reuse them; the HSIC kernel factor (bandwidth and centred
    incomplete Cholesky factor, :func:`dpcd.kernels.hsic_factor`) of each
    residual (variable, S) is cached too, so the tests of (x, y₁, S),
    (x, y₂, S), … build x's factor once. Both caches are least-recently-used
    with a memory bound (``residual_cache_bytes``, ``factor_cache_bytes``);
    their entries are pure functions of the data, handed out read-only, so
    eviction never changes a result. The conjugate-gradient KRR route writes K into one m × m buffer
    kept for the tester's life (allocated at the first such S). ``result(x, y, S)`` gives the full :class:`RCITResult` (scores for
    the sensitivities); ``n_computed`` counts the distinct tests. Randomness
    (the permutations) comes from ``rng``, one draw per distinct test in the
    order the tests are asked.
    ``krr_method`` is passed to :func:`dpcd.kernels.krr_factor`: the default
    "auto" uses an incomplete Cholesky factor of the KRR kernel when it has at
    most min(m/4, 768) columns at neglected trace 1e-10 (as it does for |Z| ≤ 3
    at m = 2000), and otherwise conjugate gradients (λ ≥ 2/3) or the Cholesky
    factor; every route gives residuals within 1e-10/c·||t||₂ of the exact
    ones (c = mλ/2).
    """

    def __init__(self, data, *, rng: RngLike, n_permutations: int = 100, lam: float = 1.0,
                 krr_method: Literal["auto", "exact", "lowrank", "cg"] = "auto",
                 residual_cache_bytes: int = RESIDUAL_CACHE_BYTES, factor_cache_bytes: int = FACTOR_CACHE_BYTES):
        self.data = _read_only_copy(as_data_matrix(data, kind="numeric"), order="F")
        self.n_rows, self.n_vars = self.data.shape
        self.rng = as_rng(rng)
        self.n_permutations = check_int(n_permutations, "n_permutations", minimum=1)
        self.lam = check_positive(lam, "lam")
        if krr_method not in ("auto", "exact", "lowrank", "cg"):
            raise ValueError(f"krr_method must be 'auto', 'exact', 'lowrank' or 'cg', got {krr_method!r}")
        self.krr_method = krr_method
        self._results: dict[tuple, RCITResult] = {}
        self._residuals = LRUCache(residual_cache_bytes)
        self._factors = LRUCache(factor_cache_bytes)
        self._workspace: np.ndarray | None = None  # m × m, filled with K by the conjugate-gradient KRR route
        self.n_computed = 0

    def residuals(self, S: tuple[int, ...]) -> np.ndarray:
        """Residual matrix (rows × variables) of every variable regressed on the columns S."""
        hit = self._residuals.get(S)
        if hit is None:
            if self._workspace is None and self.krr_method in ("auto", "cg"):
                self._workspace = np.empty((self.n_rows, self.n_rows))
            factor = krr_factor(self.data[:, list(S)], lam=self.lam, method=self.krr_method,
                                workspace=self._workspace)
            hit = np.asfortranarray(factor.residuals(self.data))
            hit.setflags(write=False)  # cached: a caller's write must not change later results
            self._residuals.put(S, hit, size=hit.nbytes)
        return hit

    def factor(self, variable: int, S: tuple[int, ...]) -> HSICFactor:
        """HSIC factor (:func:`dpcd.kernels.hsic_factor`, "auto") of ``variable``'s residual on S (the data if S = ())."""
        key = (variable, S)
        hit = self._factors.get(key)
        if hit is None:
            column = self.residuals(S)[:, variable] if S else self.data[:, variable]
            hit = hsic_factor(column.copy())  # a copy: the factor must not keep the residual matrix alive
            for array in (hit.points, hit.centred):
                if array is not None:
                    array.setflags(write=False)
            size = hit.points.nbytes + (hit.centred.nbytes if hit.lowrank else 0)
            self._factors.put(key, hit, size=size)
        return hit

    def result(self, x: int, y: int, S: Sequence[int] = ()) -> RCITResult:
        _column(self.data, x, "x")
        _column(self.data, y, "y")
        S = tuple(sorted(int(s) for s in S))
        for s in S:
            _column(self.data, s, "S")
        if x == y or x in S or y in S:
            raise ValueError(f"x, y and S must be distinct variables, got x={x}, y={y}, S={S}")
        key = (min(x, y), max(x, y), S)
        hit = self._results.get(key)
        if hit is not None:
            return hit
        a, b = key[0], key[1]
        test = hsic_permutation_test_factors(self.factor(a, S), self.factor(b, S),
                                             n_permutations=self.n_permutations, rng=self.rng)
        result = RCITResult(test.statistic, test.p_value, test.permuted, test.bandwidth_x, test.bandwidth_y,
                            self.n_rows, self.lam, bool(S))
        self._results[key] = result
        self.n_computed += 1
        return result

    def __call__(self, x: int, y: int, S: Sequence[int] = ()) -> CIResult:
        return self.result(x, y, S).as_ci_result()


def rcit_score_sensitivity(m: int, *, lam: float = 1.0, bandwidth_x: float | None = None,
                           bandwidth_y: float | None = None, conditioned: bool = True) -> float:
    """Δ_R, the bound of Thm. 3 on the change of the RCIT score between neighbours.

    Z ≠ ∅ (Eq. 3): 2(m² − m)(2 − exp(−128/(m²λ³δ_k²)) − exp(−128/(m²λ³δ_l²)))/(m − 1)²,
    with δ_k, δ_l the bandwidths of the Gaussian HSIC kernels on U and V.
    Z = ∅ (Eq. 4, Kusner et al. 2016): (12m − 11)/(m − 1)².

    Neighbouring relation: replace one of m records. Eq. 4 is a global bound
    for kernels with values in [0, 1] and fixed bandwidths; Eq. 3 is global
    only if δ_k, δ_l, λ are fixed in advance — with the median heuristic it is
    local — and see the module docstring for what Thm. 2 (on which it rests)
    does not cover.
    """
    m = check_int(m, "m", minimum=2)
    if not conditioned:
        return (12.0 * m - 11.0) / (m - 1.0) ** 2
    lam = check_positive(lam, "lam")
    if bandwidth_x is None or bandwidth_y is None:
        raise ValueError("bandwidth_x and bandwidth_y (δ_k, δ_l) are needed for Eq. 3 (conditioned=True)")
    dk = check_positive(bandwidth_x, "bandwidth_x")
    dl = check_positive(bandwidth_y, "bandwidth_y")
    base = 128.0 / (m**2 * lam**3)
    # 2 - e^{-a} - e^{-b} = -expm1(-a) - expm1(-b), without cancellation for small a, b
    gap = -math.expm1(-base / dk**2) - math.expm1(-base / dl**2)
    return 2.0 * (m**2 - m) * gap / (m - 1.0) ** 2


def permutation_bounds(statistic: float, permuted: np.ndarray, score_sensitivity: float) -> tuple[float, float, float]:
    """(p, A, B) of Thm. 4: the p-value and Eqs. 7–8 with the score moved by ∓2Δ_R."""
    permuted = np.asarray(permuted, dtype=np.float64)
    delta_r = check_positive(score_sensitivity, "score_sensitivity", allow_zero=True)
    p = float(np.mean(statistic < permuted))
    A = float(np.mean(statistic < permuted - 2.0 * delta_r))
    B = float(np.mean(statistic < permuted + 2.0 * delta_r))
    return p, A, B


def permutation_sensitivity(result: RCITResult, *, alpha: float = 0.05, one_sided: bool = True,
                            score_sensitivity: float | None = None) -> float:
    """Δ_P, the (local) sensitivity of the permutation p-value (Thm. 4, Eq. 6).

    ``one_sided=True`` (the improvement after Cor. 1, used by Alg. 1): B − p
    when p ≤ α, p − A when p > α; ``one_sided=False``: max(p − A, B − p).
    ``score_sensitivity`` defaults to the result's Δ_R (Eq. 3/4). This is a
    local sensitivity of the private data (module docstring).
    """
    alpha = check_probability(alpha, "alpha")
    delta_r = result.score_sensitivity if score_sensitivity is None else score_sensitivity
    p, A, B = permutation_bounds(result.statistic, result.permuted, delta_r)
    if not one_sided:
        return max(p - A, B - p)
    return B - p if p <= alpha else p - A


# ---------------------------------------------------------------------------
# The conditional Kendall's tau baseline on numeric data


#: Largest sample for which :func:`dpcd.ci.discrete.kendall_tau` counts pairs from the n × n contingency
#: table of two tie-free samples (above it, it sorts); :func:`_untied_tau_a` replaces that route.
_TABLE_ROUTE_MAX_ROWS = 1000


def _untied_tau_a(a: np.ndarray, b: np.ndarray) -> float | None:
    """Kendall's τ-a of two samples without ties and at most 1000 rows, or None otherwise.

    :func:`dpcd.ci.discrete.kendall_tau` takes its contingency-table route on
    such samples (an n × n table, O(n²) cumulative sums over it). Here the
    discordant pairs D are counted exactly on the sorted order (O(n²) boolean
    comparisons, no table), and τ-a = (C − D) / (n(n − 1)/2) with C − D =
    n(n − 1)/2 − 2D: the same exact integer over the same denominator, hence
    the same floating-point number as the table route.
    """
    n = len(a)
    if n > _TABLE_ROUTE_MAX_ROWS or n < 2 or np.unique(a).size < n or np.unique(b).size < n:
        return None
    ordered = b[np.argsort(a)]
    discordant = int(np.count_nonzero(np.triu(ordered[:, None] > ordered[None, :], 1)))
    pairs = n * (n - 1) // 2
    return float(pairs - 2 * discordant) / (float(n) * (n - 1) / 2)


def kendall_ci_test(data, x: int, y: int, S: Sequence[int] = ()) -> CIResult:
    """Conditional Kendall's τ-a test on numeric data, strata = distinct values of S.

    The statistic of Wang et al. (2020), App. D (:func:`dpcd.ci.stratified_kendall`):
    Z = Σ wᵢτᵢ/√Σ wᵢ over the strata of the conditioning set with ≥ 2 rows,
    two-sided normal p-value. On continuous S every stratum has one row and τ
    is undefined; as in the experiments of Zhang et al. (2023) ("it directly
    treats all cases as being not conditionally independent") the test then
    returns p = 0 (dependent). ``dof`` holds the number of strata.
    """
    data = as_data_matrix(data, kind="numeric")
    a = _column(data, x, "x")
    b = _column(data, y, "y")
    S = tuple(int(s) for s in S)
    if not S:
        n = len(a)
        weight = float(kendall_weights(np.array([n]))[0])
        tau = _untied_tau_a(a, b)
        if tau is None:
            tau = kendall_tau(a, b, variant="a")
        z = tau * math.sqrt(weight)
        return CIResult(z, float(normal_two_sided_p(z)), 1.0, tau)
    _, strata, counts = np.unique(data[:, list(S)], axis=0, return_inverse=True, return_counts=True)
    strata = strata.ravel()
    usable = np.flatnonzero(counts >= 2)
    if usable.size == 0:
        return CIResult(0.0, 0.0, float(len(counts)), None)
    order = np.argsort(strata, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(counts)])
    taus = np.array([kendall_tau(a[order[bounds[i]:bounds[i + 1]]], b[order[bounds[i]:bounds[i + 1]]], "a")
                     for i in usable])  # loop over strata with >= 2 rows, not over rows
    weights = kendall_weights(counts[usable])
    z = float((weights * np.nan_to_num(taus)).sum() / math.sqrt(weights.sum()))
    return CIResult(z, float(normal_two_sided_p(z)), float(len(counts)),
                    float((weights * taus).sum() / weights.sum()))


class KendallTester(CITester):
    """The memoised :func:`kendall_ci_test` on a read-only copy of numeric data.

    The copy keeps memoised results true to the data they came from, whatever
    the caller does with its array afterwards.

    >>> import numpy as np
    >>> data = np.column_stack([np.arange(6.0), [0, 0, 1, 1, 2, 2], np.sin(np.arange(6.0))])
    >>> tester = KendallTester(data)
    >>> tester(1, 2, (0,)).p_value  # column 0 has no ties: no stratum holds two rows
    0.0
    >>> tester.data.flags.writeable
    False
    """

    def __init__(self, data):
        super().__init__(_read_only_copy(as_data_matrix(data, kind="numeric")), kendall_ci_test)

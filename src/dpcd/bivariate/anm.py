"""Private bivariate additive-noise-model (ANM) causal direction (Kusner et al. 2016).

The ANM method (Alg. 1 of [KSSW16], after Mooij et al. [MPJZS16]) splits the
pairs ``(x_i, y_i)`` into a training half and a test half, regresses ``y`` on
``x`` and ``x`` on ``y`` by kernel ridge regression (Eq. 5) on the training
half, computes the residuals ``r'_Y = y' - f(x')`` and ``r'_X = x' - g(y')`` on
the test half and scores the dependence ``s_{X→Y} = s(x', r'_Y)`` and
``s_{Y→X} = s(y', r'_X)``; the direction with the smaller score wins.

Dependence scores (:data:`SCORES`)
----------------------------------
``"spearman"``  ``|ρ|`` of the ranks (Sec. 3.3);
``"kendall"``   ``|C - D| / (m(m-1)/2)`` (Sec. 3.3);
``"hsic"``      biased empirical HSIC ``tr(KHLH)/(m-1)²`` (Eq. 4) with Gaussian
                kernels (bounded by 1), computed by :func:`dpcd.kernels.hsic`;
``"iqr"``       ``log IQR(a) + log IQR(b)`` (Eq. 2);
``"hsic_norm"`` (an extension, :data:`EXTENSION_SCORES`, not in the paper) the statistic of dpHSIC (Kim & Schrab
                2023, :mod:`dpcd.ci.hsic`): ``||Ĉ||_HS = sqrt(tr(KHLH)) / m``, the root of the HSIC above up to
                (m − 1)/m, whose replace-one sensitivity ``4(m − 1)/m²`` (the Lemma there) is a third of HSIC's
                while the score of a weak dependence is far larger than HSIC's.

Ranks break ties by random priorities drawn from ``rng`` (independently of the
data), so ranks are always a permutation, as the sensitivity proofs of Thm. 1
assume.

Privacy
-------
*Test-set privacy* (Sec. 4): neighbouring = **replace one test record**
``(x'_k, y'_k)``; the training half, the split, ``n`` and ``m`` and the variable
bounds are public (the training half is not protected in this mode). Spearman,
Kendall and HSIC scores get Laplace noise with the global sensitivities of
Thm. 1 (30/m, 4/m) and Thm. 3 ((12m - 11)/(m - 1)²), the HSIC norm with ``4(m − 1)/m²``; each score is
released with
``Lap(Δ/ε)``, so the pair of scores of one dependence measure is (2ε, 0)-DP
(Sec. 4.1). The IQR score is released by Dwork & Lei's propose-test-release
for scale (Sec. 4.3, [DL09]): each private log-IQR is (3ε, δ)-DP and may be ⊥.

*Training-set privacy* (Sec. 5): neighbouring = **replace one training
record**; the test half, ``n``, ``m``, the kernel bandwidth and λ are public. A
single training change moves every test residual by at most ``R/n`` with
``R = 8/λ^{3/2}`` (Thm. 5, λ ≤ 1, |x|, |y| ≤ 1, kernel ≤ 1). HSIC gets Laplace
noise with the sensitivity of Thm. 7; the rank scores are released exactly by
propose-test-release with the distance-to-instability lower bound
``⌊n γ λ^{3/2} / 16⌋`` (Sec. 5.1, [DR14, Alg. 13]).

Known gaps in the text and what this module does about them:

* The paper's modified Dwork–Lei algorithm is in its (missing) appendix. We
  implement the scale algorithm as Sec. 4.3 describes it: two log-scale bins of
  width 1 (offset by 1/2) containing the IQR, ``A_j`` = a lower bound (sensitivity 1)
  on the number of changes that push the IQR out of bin ``j``, ``R_j = A_j + Lap(1/ε)``,
  release ``log IQR + Lap(1/ε)`` if some ``R_j > 1 + ln(1/δ)/ε`` and ⊥ otherwise.
* Sec. 4.3 counts three IQR releases per variable; under the record-level
  relation one test record enters all four released log-IQRs (of x', y', r'_Y,
  r'_X), so the ledger charges four (3ε, δ) releases.
* The Thm. 5 constant 8 cannot be re-derived without the appendix; the
  standard uniform-stability argument [SSSS09] gives
  ``4(√2 + √λ)/(n λ^{3/2})`` (:func:`krr_residual_sensitivity` with
  ``bound="stability"``). Both are checked against brute force in the tests.
* Thm. 7's formula is garbled in the text; ``bound="paper"`` reads it as
  ``32 L_l √m R / n``. ``bound="direct"`` is the bound obtained directly from
  ``|(HKH)_ij| ≤ 2`` and ``|ΔL_ij| ≤ 2 L_l R/n``: ``4 L_l R m² / (n (m-1)²)``.
* Thm. 3 states ``(16m - 8)/(m-1)²`` and then improves it to
  ``(12m - 11)/(m-1)²`` (proof in the missing appendix); the improved value is
  used and checked by brute force.

References
----------
.. [KSSW16] M. J. Kusner, Y. Sun, K. Sridharan, K. Q. Weinberger. Private Causal
   Inference. AISTATS 2016 (Alg. 1, Eq. 2, 4, 5, Thm. 1-7).
.. [MPJZS16] J. M. Mooij, J. Peters, D. Janzing, J. Zscheischler, B. Schölkopf.
   Distinguishing cause from effect using observational data: methods and
   benchmarks. JMLR 17(32), 2016.
.. [DL09] C. Dwork, J. Lei. Differential privacy and robust statistics. STOC 2009.
.. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy.
   2014 (Alg. 12-13, Cor. 3.21).
.. [SSSS09] S. Shalev-Shwartz, O. Shamir, N. Srebro, K. Sridharan. Stochastic
   convex optimization. COLT 2009.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Mapping, Optional, Sequence

import numpy as np
from scipy import linalg, stats

from ..ci.hsic import hsic_norm_sensitivity
from ..kernels import (
    gaussian_gram,
    hsic,
    krr_factor,
    median_bandwidth,
    pairwise_sq_dists,
)
from ..privacy import PrivacyLedger, laplace_noise
from ..privacy.sensitivity import kendall_tau_sensitivity
from ..privacy.sensitivity import spearman_sensitivity as _spearman_sensitivity
from ..validation import (
    RngLike,
    as_rng,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
)

__all__ = [
    "SCORES",
    "EXTENSION_SCORES",
    "ANMFit",
    "ANMResult",
    "PrivateANMResult",
    "IQRStability",
    "quartile_indices",
    "as_pair",
    "scale_to_unit",
    "split_indices",
    "check_split",
    "fit_anm",
    "fit_scores",
    "krr_predict",
    "score_sensitivity",
    "anm",
    "dependence_score",
    "spearman_score",
    "kendall_score",
    "hsic_score",
    "hsic_norm_score",
    "iqr",
    "iqr_score",
    "spearman_sensitivity",
    "kendall_sensitivity",
    "hsic_test_sensitivity",
    "krr_residual_sensitivity",
    "gaussian_kernel_lipschitz",
    "hsic_training_sensitivity",
    "iqr_stability",
    "dwork_lei_log_iqr",
    "dwork_lei_draws",
    "rank_distance_to_instability",
    "ptr_release",
    "iqr_epsilon_for_target",
    "private_anm_test_set",
    "private_anm_training_set",
    "prob_correct_laplace",
    "prob_correct_log_iqr",
]

SCORES: tuple[str, ...] = ("spearman", "kendall", "hsic", "iqr")
EXTENSION_SCORES: tuple[str, ...] = ("hsic_norm",)
"""Scores this library adds to the paper's :data:`SCORES` (accepted wherever a score is named, never a default)."""
Direction = Literal["x->y", "y->x", "tie", "bottom"]


# --------------------------------------------------------------------------- input


def as_pair(x, y, *, min_size: int = 4, require_variation: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Validate a cause-effect pair: two 1-D finite series of equal length (non-constant unless
    ``require_variation=False``, which the private paths use: whether a column is constant is a fact about
    the private values, so they never stop on it)."""
    min_size = check_int(min_size, "min_size", minimum=2)
    arrays = []
    for name, value in (("x", x), ("y", y)):
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be a 1-D numeric array, got {type(value).__name__}") from exc
        if array.ndim == 2 and array.shape[1] == 1:
            array = array[:, 0]
        if array.ndim != 1:
            raise ValueError(f"{name} must be 1-D (one value per sample), got shape {array.shape}")
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{name} contains NaN or infinite values; drop or impute them first")
        arrays.append(array)
    x_arr, y_arr = arrays
    if x_arr.shape != y_arr.shape:
        raise ValueError(f"x and y must have the same length, got {x_arr.size} and {y_arr.size}")
    if x_arr.size < min_size:
        raise ValueError(
            f"x and y have {x_arr.size} samples; at least {min_size} are needed for a train/test split"
        )
    for name, array in (("x", x_arr), ("y", y_arr)):
        if require_variation and np.ptp(array) == 0:
            raise ValueError(f"{name} is constant; a constant variable has no causal direction to infer")
    return x_arr, y_arr


def scale_to_unit(a, *, bounds: Optional[tuple[float, float]] = None) -> np.ndarray:
    """Map ``a`` affinely onto [-1, 1] (the ``|x|, |y| ≤ 1`` assumption of Sec. 5).

    ``bounds=(low, high)`` are public bounds (values outside are clipped); without
    them the observed minimum and maximum are used, i.e. the range of the
    variable is treated as public, as the paper does.
    """
    array = np.asarray(a, dtype=np.float64)
    if bounds is None:
        low, high = float(np.min(array)), float(np.max(array))
    else:
        if len(bounds) != 2:
            raise ValueError(f"bounds must be a pair (low, high), got {bounds!r}")
        low, high = float(bounds[0]), float(bounds[1])
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        raise ValueError(f"bounds must be finite with low < high, got ({low}, {high})")
    return np.clip(2.0 * (array - low) / (high - low) - 1.0, -1.0, 1.0)


def split_indices(size: int, *, train_fraction: float = 0.5, rng: RngLike) -> tuple[np.ndarray, np.ndarray]:
    """A random train/test split of ``range(size)`` (training part first)."""
    size = check_int(size, "size", minimum=4)
    train_fraction = check_probability(train_fraction, "train_fraction")
    n_train = int(round(train_fraction * size))
    if n_train < 2 or size - n_train < 2:
        raise ValueError(
            f"train_fraction={train_fraction} leaves {n_train} training and {size - n_train} test "
            "samples; both parts need at least 2"
        )
    perm = as_rng(rng).permutation(size)
    return np.sort(perm[:n_train]), np.sort(perm[n_train:])


def check_split(split, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Validate a public split ``(train_index, test_index)`` of ``range(size)``.

    Both parts must be 1-D integer index arrays with at least 2 entries each,
    inside ``[0, size)``, without repeats and disjoint (rows in neither part are
    unused). Returned as sorted ``int64`` arrays, the form :func:`split_indices` returns.
    """
    if not isinstance(split, (tuple, list)) or len(split) != 2:
        raise TypeError("split must be a pair (train_index, test_index) of integer index arrays")
    parts = []
    for name, part in zip(("train_index", "test_index"), split):
        array = np.asarray(part)
        if array.ndim != 1 or not (array.size == 0 or np.issubdtype(array.dtype, np.integer)):
            raise TypeError(f"split: {name} must be a 1-D array of integer row indices")
        if array.size < 2:
            raise ValueError(f"split: {name} needs at least 2 rows, got {array.size}")
        if np.any(array < 0) or np.any(array >= size):
            raise ValueError(f"split: {name} must index rows in [0, {size})")
        if np.unique(array).size != array.size:
            raise ValueError(f"split: {name} contains repeated rows")
        parts.append(np.sort(array.astype(np.int64)))
    if np.intersect1d(parts[0], parts[1]).size:
        raise ValueError("split: train_index and test_index must be disjoint")
    return parts[0], parts[1]


# --------------------------------------------------------------------------- scores


def _ranks(a: np.ndarray, priority: np.ndarray) -> np.ndarray:
    """Ranks 0..m-1 of ``a``; ties broken by ``priority`` (a permutation always)."""
    order = np.lexsort((priority, a))
    ranks = np.empty(a.size, dtype=np.float64)
    ranks[order] = np.arange(a.size, dtype=np.float64)
    return ranks


def _tie_priorities(m: int, rng: RngLike) -> tuple[np.ndarray, np.ndarray]:
    generator = as_rng(rng)
    return generator.random(m), generator.random(m)


def spearman_score(a, b, *, rng: RngLike) -> float:
    """``|1 - 6 Σ d_i² / (m(m² - 1))|`` on tie-broken ranks (Sec. 3.3)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    m = a.size
    pa, pb = _tie_priorities(m, rng)
    d = _ranks(a, pa) - _ranks(b, pb)
    return float(abs(1.0 - 6.0 * np.dot(d, d) / (m * (m * m - 1.0))))


def kendall_score(a, b, *, rng: RngLike) -> float:
    """``|C - D| / (m(m-1)/2)`` on tie-broken ranks (Sec. 3.3), in O(m log m)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    pa, pb = _tie_priorities(a.size, rng)
    tau = stats.kendalltau(_ranks(a, pa), _ranks(b, pb)).statistic
    return float(abs(tau))


def hsic_score(a, b, *, bandwidth_a: float, bandwidth_b: float) -> float:
    """Biased empirical HSIC of Eq. 4 with Gaussian kernels (values in (0, 1])."""
    K = gaussian_gram(np.asarray(a, dtype=np.float64), bandwidth=bandwidth_a)
    L = gaussian_gram(np.asarray(b, dtype=np.float64), bandwidth=bandwidth_b)
    return hsic(K, L)


def hsic_norm_score(a, b, *, bandwidth_a: float, bandwidth_b: float) -> float:
    """dpHSIC's statistic ``||Ĉ||_HS = sqrt(tr(KHLH)) / m`` with Gaussian kernels (:mod:`dpcd.ci.hsic`).

    >>> x = np.linspace(-1, 1, 50)
    >>> hsic_norm_score(x, x ** 2, bandwidth_a=0.5, bandwidth_b=0.5) > hsic_score(x, x ** 2, bandwidth_a=0.5,
    ...                                                                            bandwidth_b=0.5)
    True
    """
    m = np.asarray(a).shape[0]
    return math.sqrt(max(hsic_score(a, b, bandwidth_a=bandwidth_a, bandwidth_b=bandwidth_b), 0.0)) * (m - 1) / m


def quartile_indices(m: int) -> tuple[int, int]:
    """Order statistics (i1, i3) = (⌊(m − 1)/4⌋, ⌈3(m − 1)/4⌉) of the quartiles :func:`iqr` reads.

    >>> quartile_indices(9)
    (2, 6)
    """
    return (m - 1) // 4, -((-3 * (m - 1)) // 4)


def iqr(a) -> float:
    """Interquartile range ``a_(i3) - a_(i1)`` with order statistics ``i1 = ⌊(m-1)/4⌋``, ``i3 = ⌈3(m-1)/4⌉``."""
    s = np.sort(np.asarray(a, dtype=np.float64))
    i1, i3 = quartile_indices(s.size)
    return float(s[i3] - s[i1])


def _log_iqr(a) -> float:
    value = iqr(a)
    return math.log(value) if value > 0 else -math.inf


def iqr_score(a, b) -> float:
    """``log IQR(a) + log IQR(b)`` (Eq. 2); ``-inf`` when an IQR is 0."""
    return _log_iqr(a) + _log_iqr(b)


def dependence_score(score: str, a, b, *, rng: RngLike | None = None, bandwidth_a: float | None = None,
                     bandwidth_b: float | None = None) -> float:
    """One of :data:`SCORES` applied to ``(a, b)``."""
    if score == "spearman":
        return spearman_score(a, b, rng=rng)
    if score == "kendall":
        return kendall_score(a, b, rng=rng)
    if score in ("hsic", "hsic_norm"):
        ba = median_bandwidth(a) if bandwidth_a is None else bandwidth_a
        bb = median_bandwidth(b) if bandwidth_b is None else bandwidth_b
        kernel_score = hsic_score if score == "hsic" else hsic_norm_score
        return kernel_score(a, b, bandwidth_a=ba, bandwidth_b=bb)
    if score == "iqr":
        return iqr_score(a, b)
    raise ValueError(f"score must be one of {SCORES + EXTENSION_SCORES}, got {score!r}")


def _check_scores(scores: Sequence[str] | str) -> tuple[str, ...]:
    if isinstance(scores, str):
        scores = (scores,)
    scores = tuple(scores)
    if not scores:
        raise ValueError(f"scores must name at least one of {SCORES + EXTENSION_SCORES}")
    bad = [s for s in scores if s not in SCORES + EXTENSION_SCORES]
    if bad:
        raise ValueError(f"scores must be among {SCORES + EXTENSION_SCORES}, got {bad}")
    return tuple(dict.fromkeys(scores))


# --------------------------------------------------------------------------- sensitivities


def spearman_sensitivity(m: int) -> float:
    """Test-set global sensitivity of Spearman's score under replace-one: ``30/m`` (Thm. 1).

    Delegates to :func:`dpcd.privacy.sensitivity.spearman_sensitivity` (replace);
    valid on untied ranks, which :func:`spearman_score` guarantees.
    """
    m = check_int(m, "m", minimum=3)
    return _spearman_sensitivity(m, relation="replace")


def kendall_sensitivity(m: int) -> float:
    """Test-set global sensitivity of Kendall's score under replace-one: ``4/m`` (Thm. 1).

    Delegates to :func:`dpcd.privacy.sensitivity.kendall_tau_sensitivity` (replace).
    """
    m = check_int(m, "m", minimum=2)
    return kendall_tau_sensitivity(m, relation="replace")


def hsic_test_sensitivity(m: int) -> float:
    """Test-set global sensitivity of the HSIC score (kernels ≤ 1): ``(12m - 11)/(m - 1)²`` (Thm. 3)."""
    m = check_int(m, "m", minimum=2)
    return (12.0 * m - 11.0) / (m - 1.0) ** 2


def krr_residual_sensitivity(n: int, lam: float, *, bound: Literal["paper", "stability"] = "paper") -> float:
    """Largest change of a test residual when one of ``n`` training records is replaced.

    ``bound="paper"``: ``8/(n λ^{3/2})`` (Thm. 5; requires λ ≤ 1).
    ``bound="stability"``: ``4(√2 + √λ)/(n λ^{3/2})`` from λ-strong convexity of Eq. 5,
    ``||w|| ≤ √(2/λ)`` and the loss gradient bound ``2(√(2/λ) + 1)`` [SSSS09]; any λ > 0.
    Both assume ``|x|, |y| ≤ 1`` and a kernel with ``k(x, x) ≤ 1``.
    """
    n = check_int(n, "n", minimum=1)
    lam = check_positive(lam, "lam")
    if bound == "paper":
        if lam > 1:
            raise ValueError(f"lam must be <= 1 for the bound of Thm. 5, got {lam}; use bound='stability'")
        return 8.0 / (n * lam**1.5)
    if bound == "stability":
        return 4.0 * (math.sqrt(2.0) + math.sqrt(lam)) / (n * lam**1.5)
    raise ValueError(f"bound must be 'paper' or 'stability', got {bound!r}")


def gaussian_kernel_lipschitz(bandwidth: float) -> float:
    """Lipschitz constant ``1/(σ √e)`` of ``a ↦ exp(-(a - b)²/(2σ²))``."""
    bandwidth = check_positive(bandwidth, "bandwidth")
    return 1.0 / (bandwidth * math.sqrt(math.e))


def hsic_training_sensitivity(
    m: int, n: int, lam: float, *, lipschitz: float,
    bound: Literal["paper", "direct"] = "paper",
    residual_bound: Literal["paper", "stability"] = "paper",
) -> float:
    """Training-set sensitivity of the HSIC score (Thm. 7).

    With ``r = krr_residual_sensitivity(n, lam) = R/n``:
    ``bound="paper"``: ``32 L_l √m r`` (our reading of the garbled Thm. 7);
    ``bound="direct"``: ``4 L_l r m²/(m-1)²``, because ``|(HKH)_ij| ≤ 2`` for a
    kernel with values in [0, 1] and ``|ΔL_ij| ≤ L_l(|Δr_i| + |Δr_j|) ≤ 2 L_l r``.
    """
    m = check_int(m, "m", minimum=2)
    lipschitz = check_positive(lipschitz, "lipschitz")
    r = krr_residual_sensitivity(n, lam, bound=residual_bound)
    if bound == "paper":
        return 32.0 * lipschitz * math.sqrt(m) * r
    if bound == "direct":
        return 4.0 * lipschitz * r * m * m / (m - 1.0) ** 2
    raise ValueError(f"bound must be 'paper' or 'direct', got {bound!r}")


def iqr_epsilon_for_target(epsilon_total: float, delta_prime: float) -> float:
    """Per-step ε of a (3ε, δ) IQR release so that three releases are ε'-DP by Cor. 3.21 of [DR14].

    Sec. 4.3: ``3ε = ε' / (2 √(6 ln(1/δ')))`` for ``0 < ε' < 1``.
    """
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    if epsilon_total >= 1:
        raise ValueError(f"epsilon_total must be < 1 for Cor. 3.21 as used in Sec. 4.3, got {epsilon_total}")
    delta_prime = check_delta(delta_prime, "delta_prime")
    return epsilon_total / (2.0 * math.sqrt(6.0 * math.log(1.0 / delta_prime))) / 3.0


# --------------------------------------------------------------------------- Dwork-Lei IQR


@dataclass(frozen=True)
class IQRStability:
    """IQR of a sample and the distances ``A_1``, ``A_2`` to leaving its two log-scale bins.

    ``bins[j] = (low, high)``: ``B_1 = [e^k, e^{k+1})`` with ``k = ⌊ln IQR⌋`` and
    ``B_2 = [e^{h-1/2}, e^{h+1/2})`` with ``h = ⌊ln IQR + 1/2⌋``. ``A_j`` is the
    smallest ``k`` such that changing ``k`` points may move the IQR out of
    ``B_j`` (a lower bound on the true number, with sensitivity 1); 0 when the IQR is 0.
    """

    iqr: float
    a1: int
    a2: int
    bins: tuple[tuple[float, float], tuple[float, float]]


def iqr_stability(a) -> IQRStability:
    """Compute :class:`IQRStability` (vectorised over all ``k`` at once).

    After ``k`` replacements the ``i``-th order statistic lies in
    ``[a_(i-k), a_(i+k)]`` (``±∞`` beyond the sample), so the IQR lies in
    ``[max(0, a_(i3-k) - a_(i1+k)), a_(i3+k) - a_(i1-k)]``; ``A_j`` is the first ``k``
    at which this envelope is not inside ``B_j``. The envelope at ``k`` for a
    neighbour is inside the envelope at ``k + 1`` for the data, hence sensitivity 1.
    """
    s = np.sort(np.asarray(a, dtype=np.float64))
    m = s.size
    i1, i3 = quartile_indices(m)
    value = float(s[i3] - s[i1])
    if value <= 0:
        return IQRStability(value, 0, 0, ((0.0, 0.0), (0.0, 0.0)))
    k = np.arange(m + 1)
    up = i3 + k
    down = i1 - k
    hi = np.where((up <= m - 1) & (down >= 0),
                  s[np.minimum(up, m - 1)] - s[np.maximum(down, 0)], np.inf)
    lo_up, lo_down = i3 - k, i1 + k
    lo = np.where((lo_down <= lo_up) & (lo_down <= m - 1) & (lo_up >= 0),
                  s[np.clip(lo_up, 0, m - 1)] - s[np.clip(lo_down, 0, m - 1)], 0.0)
    log_iqr = math.log(value)
    k1 = math.floor(log_iqr)
    k2 = math.floor(log_iqr + 0.5)
    bins = ((math.exp(k1), math.exp(k1 + 1)), (math.exp(k2 - 0.5), math.exp(k2 + 0.5)))
    distances = []
    for low, high in bins:
        outside = (lo < low) | (hi >= high)
        distances.append(int(np.argmax(outside)) if outside.any() else m + 1)
    return IQRStability(value, distances[0], distances[1], bins)


def dwork_lei_draws(log_iqr: np.ndarray, distances: np.ndarray, *, epsilon: float, delta: float,
                     rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised Dwork–Lei releases: ``q`` log-IQRs, ``distances`` (q, 2) → (size, q) values and mask.

    Released iff ``max_j A_j + Lap(1/ε) > 1 + ln(1/δ)/ε``; value ``log IQR + Lap(1/ε)``.
    """
    q = log_iqr.size
    threshold = 1.0 + math.log(1.0 / delta) / epsilon
    tests = distances[None, :, :] + laplace_noise(1.0 / epsilon, (size, q, 2), rng=rng)
    released = (tests > threshold).any(axis=2)
    values = log_iqr[None, :] + laplace_noise(1.0 / epsilon, (size, q), rng=rng)
    released &= np.isfinite(log_iqr)[None, :]
    return np.where(released, values, np.nan), released


def dwork_lei_log_iqr(a, *, epsilon: float, delta: float, rng: RngLike) -> Optional[float]:
    """Private ``log IQR(a)`` by Dwork & Lei's propose-test-release for scale, or ``None`` (⊥).

    Privacy: (3ε, δ)-DP under replace-one [DL09, Sec. 3; KSSW16, Sec. 4.3]: two
    noisy stability tests ``R_j = A_j + Lap(1/ε)`` (``A_j`` has sensitivity 1)
    and, if some ``R_j > 1 + ln(1/δ)/ε`` (i.e. the distance ``A_j - 1`` to a data
    set whose neighbours may leave ``B_j`` exceeds ``ln(1/δ)/ε`` after noise), one
    release ``log IQR + Lap(1/ε)`` whose local sensitivity is < 1 inside ``B_j``.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    array = np.asarray(a, dtype=np.float64)
    if array.ndim != 1 or array.size < 4 or not np.all(np.isfinite(array)):
        raise ValueError("a must be a 1-D finite array with at least 4 values")
    stab = iqr_stability(array)
    log_value = math.log(stab.iqr) if stab.iqr > 0 else -math.inf
    values, released = dwork_lei_draws(np.array([log_value]), np.array([[stab.a1, stab.a2]], dtype=float),
                                        epsilon=epsilon, delta=delta, rng=as_rng(rng), size=1)
    return float(values[0, 0]) if released[0, 0] else None


def rank_distance_to_instability(residuals, *, n: int, lam: float,
                                 residual_bound: Literal["paper", "stability"] = "paper") -> int:
    """Lower bound ``⌊γ / (2 r)⌋`` on the training changes that can reorder ``residuals`` (Sec. 5.1).

    ``γ`` is the smallest gap between sorted residuals and ``r`` the per-change
    residual bound; with Thm. 5 (``r = 8/(nλ^{3/2})``) this is ``⌊n γ λ^{3/2}/16⌋``.
    Sensitivity 1: one change moves ``γ`` by at most ``2r``.
    """
    r = krr_residual_sensitivity(n, lam, bound=residual_bound)
    s = np.sort(np.asarray(residuals, dtype=np.float64))
    gamma = float(np.min(np.diff(s))) if s.size > 1 else math.inf
    return int(math.floor(gamma / (2.0 * r)))


def ptr_release(value: float, *, distance: float, epsilon: float, delta: float, rng: RngLike) -> Optional[float]:
    """Propose-test-release with a stability bound [DR14, Alg. 13]: ``value`` or ``None`` (⊥).

    Releases ``value`` exactly iff ``distance + Lap(1/ε) > ln(1/δ)/ε``. (ε, δ)-DP
    when ``distance`` is a lower bound, of sensitivity 1, on the number of records
    to change before ``value`` can change [DR14, Sec. 3.6; KSSW16, Thm. 6].
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    distance = check_positive(distance, "distance", allow_zero=True)
    noisy = distance + laplace_noise(1.0 / epsilon, rng=as_rng(rng))
    return float(value) if noisy > math.log(1.0 / delta) / epsilon else None


# --------------------------------------------------------------------------- ANM


@dataclass(frozen=True)
class ANMFit:
    """Everything Alg. 1 computes before scoring (scaled data, split, residuals, bandwidths)."""

    x_test: np.ndarray
    y_test: np.ndarray
    residual_y: np.ndarray  # r'_Y = y' - f(x')
    residual_x: np.ndarray  # r'_X = x' - g(y')
    n: int
    m: int
    lam: float
    bandwidths: Mapping[str, float]
    train_index: np.ndarray = field(repr=False)
    test_index: np.ndarray = field(repr=False)


def krr_predict(train_in: np.ndarray, train_out: np.ndarray, test_in: np.ndarray, *, lam: float,
                 bandwidth: float) -> tuple[np.ndarray, np.ndarray]:
    """KRR of Eq. 5 on the training half: (test predictions, training residuals)."""
    factor = krr_factor(train_in, lam=lam, bandwidth=bandwidth)
    alpha = linalg.cho_solve(factor.cho, train_out, check_finite=False)
    cross = pairwise_sq_dists(test_in, train_in)
    cross *= -0.5 / bandwidth**2
    np.exp(cross, out=cross)
    return cross @ alpha, factor.c * alpha


def fit_anm(x, y, *, lam: float = 1e-3, train_fraction: float = 0.5, rng: RngLike,
            bandwidth: float | None = None, bounds_x: Optional[tuple[float, float]] = None,
            bounds_y: Optional[tuple[float, float]] = None,
            split: Optional[tuple[np.ndarray, np.ndarray]] = None, require_variation: bool = True) -> ANMFit:
    """Steps 1-5 of Alg. 1: scale to [-1, 1], split, KRR both ways (Eq. 5), test residuals.

    ``bounds_x``, ``bounds_y``: (low, high) used to scale each variable onto
    [−1, 1] (values outside clipped); None uses the observed range of all rows
    (non-private use; the private functions pass public or training-half bounds).
    ``require_variation=False`` skips the refusal of a constant variable (the
    private paths never stop on a fact about the private values).

    ``bandwidth=None`` uses the median heuristic on the **training** half for the
    regression kernels and for the HSIC kernels (input and training residuals),
    so nothing but the scores depends on the test half. A float fixes every
    bandwidth (a public choice, needed for training-set privacy).

    ``split=(train_index, test_index)`` fixes the split (see :func:`check_split`;
    ``train_fraction`` is then ignored and ``rng`` is not used); ``None`` draws
    a random split with :func:`split_indices` from ``rng``.
    """
    x, y = as_pair(x, y, require_variation=require_variation)
    lam = check_positive(lam, "lam")
    if bandwidth is not None:
        bandwidth = check_positive(bandwidth, "bandwidth")
    generator = as_rng(rng)
    xs, ys = scale_to_unit(x, bounds=bounds_x), scale_to_unit(y, bounds=bounds_y)
    if split is None:
        train, test = split_indices(x.size, train_fraction=train_fraction, rng=generator)
    else:
        train, test = check_split(split, x.size)
    x_tr, y_tr, x_te, y_te = xs[train], ys[train], xs[test], ys[test]
    bw_x = median_bandwidth(x_tr) if bandwidth is None else bandwidth
    bw_y = median_bandwidth(y_tr) if bandwidth is None else bandwidth
    pred_y, train_res_y = krr_predict(x_tr, y_tr, x_te, lam=lam, bandwidth=bw_x)
    pred_x, train_res_x = krr_predict(y_tr, x_tr, y_te, lam=lam, bandwidth=bw_y)
    bandwidths = {
        "x": bw_x, "y": bw_y,
        "residual_y": median_bandwidth(train_res_y) if bandwidth is None else bandwidth,
        "residual_x": median_bandwidth(train_res_x) if bandwidth is None else bandwidth,
    }
    return ANMFit(x_test=x_te, y_test=y_te, residual_y=y_te - pred_y, residual_x=x_te - pred_x,
                  n=int(train.size), m=int(test.size), lam=lam, bandwidths=bandwidths,
                  train_index=train, test_index=test)


def fit_scores(fit: ANMFit, score: str, rng: np.random.Generator) -> tuple[float, float]:
    """(s_{X→Y}, s_{Y→X}) of one score on a fit."""
    bw = fit.bandwidths
    if score in ("hsic", "hsic_norm"):
        kernel_score = hsic_score if score == "hsic" else hsic_norm_score
        return (kernel_score(fit.x_test, fit.residual_y, bandwidth_a=bw["x"], bandwidth_b=bw["residual_y"]),
                kernel_score(fit.y_test, fit.residual_x, bandwidth_a=bw["y"], bandwidth_b=bw["residual_x"]))
    return (dependence_score(score, fit.x_test, fit.residual_y, rng=rng),
            dependence_score(score, fit.y_test, fit.residual_x, rng=rng))


def _decide(s_xy: float, s_yx: float) -> Direction:
    if s_xy < s_yx:
        return "x->y"
    if s_xy > s_yx:
        return "y->x"
    return "tie"


@dataclass(frozen=True)
class ANMResult:
    """Non-private ANM: per score ``(s_{X→Y}, s_{Y→X})`` and the decision (``"tie"`` if equal)."""

    scores: Mapping[str, tuple[float, float]]
    decisions: Mapping[str, Direction]
    fit: ANMFit


def anm(x, y, *, scores: Sequence[str] | str = SCORES, lam: float = 1e-3, train_fraction: float = 0.5,
        rng: RngLike, bandwidth: float | None = None,
        split: Optional[tuple[np.ndarray, np.ndarray]] = None) -> ANMResult:
    """Alg. 1 of [KSSW16] (non-private) with the requested dependence scores.

    ``split=(train_index, test_index)`` fixes the train/test split (:func:`fit_anm`).
    """
    names = _check_scores(scores)
    generator = as_rng(rng)
    fit = fit_anm(x, y, lam=lam, train_fraction=train_fraction, rng=generator, bandwidth=bandwidth, split=split)
    values = {name: fit_scores(fit, name, generator) for name in names}
    return ANMResult(scores=values, decisions={k: _decide(*v) for k, v in values.items()}, fit=fit)


# --------------------------------------------------------------------------- private ANM


@dataclass(frozen=True)
class PrivateANMResult:
    """Released scores (``None`` = ⊥), the decisions taken from them, and the ledger.

    ``privacy`` is ``"test"`` or ``"training"``; the ledger states the
    neighbouring relation (replace one record of that half) and what is public.
    Nothing derived from the data without noise is kept here.
    """

    scores: Mapping[str, tuple[Optional[float], Optional[float]]]
    decisions: Mapping[str, Direction]
    ledger: PrivacyLedger
    privacy: str
    epsilon: float
    delta: float
    n: int
    m: int


def score_sensitivity(score: str, m: int) -> float:
    """Replace-one sensitivity of a test-set score on m test records (Thm. 1: Spearman, Kendall; Thm. 3: HSIC;
    the dpHSIC Lemma of :mod:`dpcd.ci.hsic`: the HSIC norm, Gaussian kernels)."""
    return {"spearman": spearman_sensitivity, "kendall": kendall_sensitivity,
            "hsic": hsic_test_sensitivity, "hsic_norm": hsic_norm_sensitivity}[score](m)


def _private_decision(released: tuple[Optional[float], Optional[float]]) -> Direction:
    if released[0] is None or released[1] is None:
        return "bottom"
    return _decide(*released)


def private_anm_test_set(x, y, *, epsilon: float, delta: float = 1e-6, scores: Sequence[str] | str = SCORES,
                         lam: float = 1e-3, train_fraction: float = 0.5, bandwidth: float | None = None,
                         rng: RngLike, split: Optional[tuple[np.ndarray, np.ndarray]] = None,
                         bounds_x: Optional[tuple[float, float]] = None,
                         bounds_y: Optional[tuple[float, float]] = None) -> PrivateANMResult:
    """ANM with test-set privacy (Sec. 4 of [KSSW16]).

    Privacy (replace one test record; training half, split, n, m, bounds public):
    Spearman/Kendall/HSIC: each of the two scores gets ``Lap(Δ/ε)`` with Δ from
    Thm. 1/Thm. 3, so each score pair is (2ε, 0)-DP [DR14, Thm. 3.6]. IQR: four
    Dwork–Lei releases (log IQR of x', y', r'_Y, r'_X), each (3ε, δ)-DP
    (:func:`dwork_lei_log_iqr`); a ⊥ makes the IQR decision ``"bottom"``. The
    ledger composes everything released (basic: Σε, Σδ).

    Nothing but the released scores depends on the test half: the split is
    drawn from ``rng`` (or given, :func:`check_split`), and without public
    ``bounds_x``, ``bounds_y`` each variable is scaled by the range of the
    **training** half, which is public in this mode (test values outside it are
    clipped); kernel bandwidths come from the training half too. Two data sets
    that differ in one test row are then neighbours exactly as the guarantee
    states (this is how :mod:`dpcd.audit` audits it).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    names = _check_scores(scores)
    generator = as_rng(rng)
    x, y = as_pair(x, y, require_variation=False)
    if split is None:
        split = split_indices(x.size, train_fraction=train_fraction, rng=generator)
    train, _ = check_split(split, x.size)
    if bounds_x is None:
        bounds_x = (float(x[train].min()), float(x[train].max()))
    if bounds_y is None:
        bounds_y = (float(y[train].min()), float(y[train].max()))
    fit = fit_anm(x, y, lam=lam, train_fraction=train_fraction, rng=generator, bandwidth=bandwidth,
                  bounds_x=bounds_x, bounds_y=bounds_y, split=split, require_variation=False)
    ledger = PrivacyLedger(relation="replace",
                           public=("n", "m", "train/test split", "training half", "variable bounds"))
    released: dict[str, tuple[Optional[float], Optional[float]]] = {}
    for name in names:
        if name == "iqr":
            parts = []
            for sample in (fit.x_test, fit.residual_y, fit.y_test, fit.residual_x):
                parts.append(dwork_lei_log_iqr(sample, epsilon=epsilon, delta=delta, rng=generator))
            ledger.charge("dwork_lei_log_iqr", epsilon=3 * epsilon, delta=delta, count=4, kind="approx",
                          note="Dwork-Lei scale release (Sec. 4.3); one per log-IQR of x', r'_Y, y', r'_X")
            if any(p is None for p in parts):
                released[name] = (None, None)
            else:
                released[name] = (parts[0] + parts[1], parts[2] + parts[3])
            continue
        sensitivity = score_sensitivity(name, fit.m)
        s_xy, s_yx = fit_scores(fit, name, generator)
        scale = sensitivity / epsilon
        noise = laplace_noise(scale, 2, rng=generator)
        released[name] = (float(s_xy + noise[0]), float(s_yx + noise[1]))
        ledger.charge(f"{name}_score", epsilon=epsilon, count=2, kind="laplace", sensitivity=sensitivity,
                      scale=scale, note={"hsic": "Thm. 3", "hsic_norm": "dpHSIC Lemma"}.get(name, "Thm. 1"))
    return PrivateANMResult(scores=released, decisions={k: _private_decision(v) for k, v in released.items()},
                            ledger=ledger, privacy="test", epsilon=epsilon, delta=delta, n=fit.n, m=fit.m)


def private_anm_training_set(x, y, *, epsilon: float, delta: float = 1e-6,
                             scores: Sequence[str] | str = ("hsic",), lam: float, bandwidth: float,
                             bounds_x: tuple[float, float], bounds_y: tuple[float, float],
                             train_fraction: float = 0.5, hsic_bound: Literal["paper", "direct"] = "paper",
                             residual_bound: Literal["paper", "stability"] = "paper",
                             rng: RngLike, split: Optional[tuple[np.ndarray, np.ndarray]] = None) -> PrivateANMResult:
    """ANM with training-set privacy (Sec. 5 of [KSSW16]).

    ``bounds_x``, ``bounds_y``: the public (low, high) range of each variable;
    values are mapped onto [−1, 1] with them and clipped (Thm. 5 needs
    |x|, |y| ≤ 1). They must not come from the data: scaling by the training
    rows' own minimum and maximum lets one training record rescale the whole
    variable, which the audit measures at ε ≥ 2.4 for a claimed 2.

    Privacy (replace one training record; test half, n, m, λ, ``bandwidth`` and
    the bounds public): HSIC gets ``Lap(Δ/ε)`` per score with Δ of
    Thm. 7 (:func:`hsic_training_sensitivity`), (2ε, 0)-DP for the pair;
    Spearman/Kendall are released exactly by propose-test-release [DR14, Alg. 13]
    with ``d = ⌊nγλ^{3/2}/16⌋`` (Sec. 5.1), each (ε, δ)-DP, ⊥ when
    ``d + Lap(1/ε) ≤ ln(1/δ)/ε``. The IQR score is not offered (Sec. 5.3 gives no
    usable bound on its distance to instability). ``split=(train_index,
    test_index)`` fixes the public split (:func:`check_split`); None draws it
    from ``rng``.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    names = _check_scores(scores)
    unsupported = [name for name in names if name not in ("hsic", "spearman", "kendall")]
    if unsupported:  # the IQR has no training-set mechanism; the HSIC norm's training-set sensitivity is unproven
        raise ValueError(f"scores: {unsupported} have no training-set mechanism here; use 'hsic', 'spearman' "
                         "or 'kendall'")
    bandwidth = check_positive(bandwidth, "bandwidth")
    for name, bounds in (("bounds_x", bounds_x), ("bounds_y", bounds_y)):
        if bounds is None:
            raise TypeError(f"{name}: pass the public (low, high) range of the variable; training-set privacy "
                            "cannot read it from the training rows")
    generator = as_rng(rng)
    x, y = as_pair(x, y, require_variation=False)
    fit = fit_anm(x, y, lam=lam, train_fraction=train_fraction, rng=generator, bandwidth=bandwidth,
                  bounds_x=bounds_x, bounds_y=bounds_y, require_variation=False,
                  split=None if split is None else check_split(split, x.size))
    krr_residual_sensitivity(fit.n, lam, bound=residual_bound)  # validates λ for the chosen bound
    ledger = PrivacyLedger(relation="replace",
                           public=("n", "m", "train/test split", "test half", "lam", "bandwidth",
                                   "variable bounds"))
    released: dict[str, tuple[Optional[float], Optional[float]]] = {}
    for name in names:
        s_xy, s_yx = fit_scores(fit, name, generator)
        if name == "hsic":
            sensitivity = hsic_training_sensitivity(fit.m, fit.n, lam, lipschitz=gaussian_kernel_lipschitz(
                bandwidth), bound=hsic_bound, residual_bound=residual_bound)
            scale = sensitivity / epsilon
            noise = laplace_noise(scale, 2, rng=generator)
            released[name] = (float(s_xy + noise[0]), float(s_yx + noise[1]))
            ledger.charge("hsic_score", epsilon=epsilon, count=2, kind="laplace", sensitivity=sensitivity,
                          scale=scale, note=f"Thm. 7 ({hsic_bound} bound), Thm. 5 ({residual_bound})")
            continue
        out = []
        for value, residual in ((s_xy, fit.residual_y), (s_yx, fit.residual_x)):
            d = rank_distance_to_instability(residual, n=fit.n, lam=lam, residual_bound=residual_bound)
            out.append(ptr_release(value, distance=d, epsilon=epsilon, delta=delta, rng=generator))
        released[name] = (out[0], out[1])
        ledger.charge(f"{name}_ptr", epsilon=epsilon, delta=delta, count=2, kind="approx",
                      note="propose-test-release, DR14 Alg. 13, d = floor(n gamma lam^1.5 / 16)")
    return PrivateANMResult(scores=released, decisions={k: _private_decision(v) for k, v in released.items()},
                            ledger=ledger, privacy="training", epsilon=epsilon, delta=delta, n=fit.n, m=fit.m)


# --------------------------------------------------------------------------- closed forms


def _margin_sigma(margin, sigma) -> tuple[np.ndarray, np.ndarray]:
    g = np.asarray(margin, dtype=np.float64)
    s = np.asarray(sigma, dtype=np.float64)
    if np.any(np.isnan(g)):
        raise ValueError("margin contains NaN")
    if np.any(~(s >= 0)):
        raise ValueError("sigma must be >= 0")
    return np.broadcast_arrays(g, s)


def _closed_form(margin, sigma, tail) -> np.ndarray | float:
    g, s = _margin_sigma(margin, sigma)
    out = np.where(g > 0, 1.0, np.where(g < 0, 0.0, 0.5)).astype(np.float64)
    noisy = s > 0
    if np.any(noisy):
        a = np.minimum(np.abs(g[noisy]) / s[noisy], 1e3)  # e^{-1000} = 0: avoids inf * 0
        p_wrong = tail(a)
        out[noisy] = np.where(g[noisy] >= 0, 1.0 - p_wrong, p_wrong)
    return float(out) if out.ndim == 0 else out


def prob_correct_laplace(margin, sigma) -> np.ndarray | float:
    """Thm. 2: ``P(p_{X→Y} < p_{Y→X}) = 1 - (γ + 2σ)/(4σ) e^{-γ/σ}`` for margin ``γ ≥ 0``.

    ``margin = s_{Y→X} - s_{X→Y}`` (positive when the scores are correctly
    ordered), ``sigma = Δ/ε`` is the Laplace scale of each score. For ``γ < 0``
    the symmetric value ``(|γ| + 2σ)/(4σ) e^{-|γ|/σ}`` is returned; ``σ = 0``
    gives 1, 1/2 or 0. Vectorised.
    """
    return _closed_form(margin, sigma, lambda a: (a + 2.0) / 4.0 * np.exp(-a))


def prob_correct_log_iqr(margin, sigma) -> np.ndarray | float:
    """Thm. 4.2: ``1 - e^{-γ/σ}(48σ³ + 33σ²γ + 9σγ² + γ³)/(96σ³)`` (four Laplace(σ) terms, all released).

    ``margin = Q_{y'} + Q_{r'_X} - Q_{x'} - Q_{r'_Y}``, ``sigma = 1/ε``.
    """
    return _closed_form(margin, sigma, lambda a: np.exp(-a) * (48.0 + 33.0 * a + 9.0 * a**2 + a**3) / 96.0)

"""A differentially private HSIC independence test (dpHSIC, after Kim & Schrab 2023).

The statistic is the Hilbert–Schmidt norm of the empirical cross-covariance
operator, ``T = ||Ĉ_XY||_HS = sqrt(tr(K H L H)) / m`` — the square root of the
biased HSIC up to the factor (m − 1)/m — with bounded kernels on columns
mapped by their **public** bounds onto [−1, 1] (values outside clamped). Its
replace-one sensitivity is small and proven below; the test is the
permutation test of Kim & Schrab (2023, Alg. 1) with Laplace noise on the
observed and on every permuted statistic, and it releases **only the
decision** at level α.

Sensitivity (Lemma)
-------------------
Let φ, ψ be feature maps with ``||φ(a) − φ(b)|| ≤ d_x`` and
``||ψ(a) − ψ(b)|| ≤ d_y`` for all a, b. Since
``Ĉ = (1/m) Σ_i φ_i⊗ψ_i − φ̄⊗ψ̄ = (1/m²) Σ_{i<j} (φ_i − φ_j)⊗(ψ_i − ψ_j)``,
replacing record k changes only the m − 1 terms with k ∈ {i, j}, each of norm
at most ``d_x d_y``; so ``||Ĉ − Ĉ'|| ≤ 2 (m − 1) d_x d_y / m²`` and, by the
triangle inequality, ``|T − T'| ≤ Δ := 2 (m − 1) d_x d_y / m²``. For a sample
whose y-values are permuted by π, the replaced record moves φ_k in pair k and
ψ_k in pair π⁻¹(k); each of the two changes alone moves m − 1 terms by at most
``||φ'_k − φ_k||·d_y ≤ d_x d_y`` (resp. ``d_x d_y``), so every permuted
statistic also moves by at most Δ. The Gaussian kernel has ``k ∈ (0, 1]`` and
``k(a, a) = 1``, so ``d² = 2 − 2k ≤ 2`` and ``Δ = 4 (m − 1) / m²``
(``method="exact"``); random Fourier features with frequencies drawn from
``rng`` (independently of the data), ``φ(a) = (cos(aW), sin(aW)) / √D``, have
``||φ|| = 1`` and ``d ≤ 2``, so ``Δ = 8 (m − 1) / m²`` (``method="rff"``).

Theorem (privacy of the decision)
---------------------------------
Neighbouring data sets differ in one record (replace-one); the bounds, the
bandwidth, m, α, the number of permutations B, the method and the number of
features are public. Let ``M_b = T_b + ξ_b`` (b = 0 the observed statistic,
b ≥ 1 the permuted ones, one set of permutations drawn from ``rng``), ``ξ_b``
i.i.d. ``Lap(2Δ/ε)``, and reject when
``(1 + #{b ≥ 1 : M_b ≥ M_0}) / (B + 1) ≤ α``. The decision is ε-DP.
*Proof.* Fix the permutations and the noises ξ_1..ξ_B. Under the neighbour,
shifting ξ_0 by ``c = T_0 − T'_0 + Δ ∈ [0, 2Δ]`` gives ``M'_0 = M_0 + Δ`` while
``M'_b ≤ M_b + Δ``, so the count can only fall: every noise vector that
rejects under D rejects under D' after the shift, and the Laplace density
changes by at most ``e^{c ε / (2Δ)} ≤ e^ε``. Shifting by ``T_0 − T'_0 − Δ``
shows the same for acceptance. (This is Kim & Schrab's Thm. 3; the noise on
the permuted statistics is not needed for privacy but keeps them exchangeable
with the observed one.) *Validity:* under independence with i.i.d. records
the B + 1 noisy statistics are exchangeable, so the rejection rate is at most
α for every ε.

In the PC engine (order 0)
-------------------------
:class:`DPHSICTest` is a test function for :class:`dpcd.ci.CITester`
(``CITester(data, DPHSICTest(...))`` with ``PValueDecider`` and
``run_pc(..., max_order=0)``): each unordered pair is tested at most once
(the tester memoises; a repeated question re-reads the released decision),
so a run of p columns is ``(ε · p(p − 1)/2, 0)``-DP by basic composition —
its data-independent worst case, which ``n_released`` never exceeds. It
refuses conditioning sets. Per-test budgets make it costly beside GCM-PC,
which pays once for every test of a run (:mod:`dpcd.discovery.gcm_pc`):
at p = 20 each of the 190 tests gets ε/190.

Nothing else leaves the test: the returned :class:`DPHSICResult` carries the
decision and public numbers only (its ``p_value`` is 0 for reject, 1 for
accept, so a PC engine reading ``p_value > alpha`` sees the decision alone).

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> x = rng.uniform(-1, 1, 1000)
>>> y = np.clip(np.cos(3 * x) + 0.2 * rng.normal(size=1000), -1, 1)
>>> dp_hsic_test(x, y, epsilon=1.0, bounds_x=(-1, 1), bounds_y=(-1, 1), rng=1).reject
True
>>> round(hsic_norm_sensitivity(1000), 7)
0.003996

References
----------
Kim, I., Schrab, A. (2023). Differentially private permutation tests:
applications to kernel methods. arXiv:2310.19043.
Gretton, A., Bousquet, O., Smola, A., Schölkopf, B. (2005). Measuring
statistical dependence with Hilbert–Schmidt norms. ALT.
Rahimi, A., Recht, B. (2007). Random features for large-scale kernel machines. NeurIPS.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, Sequence

import numpy as np

from ..kernels import HSICFactor, as_points, hsic_permutation_test_factors
from ..privacy.mechanisms import laplace_noise
from ..schema import public_bounds, scale_to_box
from ..validation import RngLike, as_rng, check_epsilon, check_int, check_positive, check_probability
from .result import CIResult

__all__ = ["DPHSICResult", "DPHSICTest", "order_zero_worst_case", "hsic_norm_sensitivity", "kernel_diameter", "fourier_features", "hsic_norms",
           "dp_hsic_test", "noisy_permutation_decision", "DEFAULT_BANDWIDTH", "DEFAULT_PERMUTATIONS", "DEFAULT_FEATURES", "EXACT_MAX_ROWS"]

DEFAULT_BANDWIDTH = 0.5
"""Gaussian kernel bandwidth on the [−1, 1] box (a quarter of its width): public, never the median heuristic,
which would read the data."""
DEFAULT_PERMUTATIONS = 199
"""B: with B + 1 = 200 statistics the smallest p-value is 0.005, well below α = 0.05."""
DEFAULT_FEATURES = 64
"""Frequencies D of the random Fourier features (2D features per variable)."""
EXACT_MAX_ROWS = 2000
"""``method="auto"`` uses the exact Gaussian Gram matrices up to this m (O(B m²)) and random features above it
(O(B m D²)); a choice from the public m only."""


@dataclass(frozen=True)
class DPHSICResult:
    """The released decision of :func:`dp_hsic_test` and the public numbers it was computed with.

    ``reject`` is the only data-dependent field; ``sensitivity`` Δ and
    ``noise_scale`` 2Δ/ε follow from the public m and method.
    """

    reject: bool
    alpha: float
    epsilon: float
    sensitivity: float
    noise_scale: float
    m: int
    method: str
    n_permutations: int

    @property
    def p_value(self) -> float:
        """0 when the test rejects, 1 when it does not: the decision, in the form a PC engine reads."""
        return 0.0 if self.reject else 1.0


def kernel_diameter(method: str) -> float:
    """sup ||φ(a) − φ(b)|| of the feature map: √2 for the Gaussian kernel (``"exact"``), 2 for random Fourier
    features (``"rff"``).

    >>> kernel_diameter("exact") ** 2, kernel_diameter("rff")
    (2.0000000000000004, 2.0)
    """
    if method == "exact":
        return math.sqrt(2.0)
    if method == "rff":
        return 2.0
    raise ValueError(f"method must be 'exact' or 'rff', got {method!r}")


def hsic_norm_sensitivity(m: int, method: Literal["exact", "rff"] = "exact") -> float:
    """Replace-one sensitivity of ``T = ||Ĉ_XY||_HS`` on m records: ``2 (m − 1) d_x d_y / m²`` (module Lemma).

    >>> round(hsic_norm_sensitivity(100), 12), round(hsic_norm_sensitivity(100, "rff"), 12)
    (0.0396, 0.0792)
    """
    m = check_int(m, "m", minimum=2)
    d = kernel_diameter(method)
    return 2.0 * (m - 1) * d * d / (m * m)  # never rounded: a rounded-down Δ would under-calibrate the noise


def fourier_features(points: np.ndarray, bandwidth: float, n_features: int, rng: RngLike) -> np.ndarray:
    """Random Fourier features ``(cos(aW), sin(aW)) / √D`` of the Gaussian kernel (Rahimi & Recht 2007).

    ``W`` (d × D) has i.i.d. N(0, 1/bandwidth²) entries drawn from ``rng``
    alone, so the map is fixed before any record is read; every feature vector
    has norm exactly 1.

    >>> f = fourier_features(np.zeros((3, 1)), 0.5, 8, rng=0)
    >>> f.shape, np.allclose(np.linalg.norm(f, axis=1), 1.0)
    ((3, 16), True)
    """
    points = as_points(points, "points")
    n_features = check_int(n_features, "n_features", minimum=1)
    bandwidth = check_positive(bandwidth, "bandwidth")
    W = as_rng(rng).normal(0.0, 1.0 / bandwidth, size=(points.shape[1], n_features))
    angles = points @ W
    return np.hstack([np.cos(angles), np.sin(angles)]) / math.sqrt(n_features)


def _box(values, bounds, name: str) -> np.ndarray:
    """A column mapped from its public ``bounds`` onto [−1, 1], values outside clamped (:func:`scale_to_box`)."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {values.shape}")
    try:
        box = public_bounds([bounds], 1)
    except (TypeError, ValueError) as error:
        raise ValueError(f"bounds_{name} must be a finite pair (lower, upper) with lower < upper, got {bounds!r} "
                         f"({error})") from None
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite (missing values are handled before the release)")
    return scale_to_box(values[:, None], box)[:, 0]


def _method_for(m: int, method: str) -> str:
    if method == "auto":
        return "exact" if m <= EXACT_MAX_ROWS else "rff"
    if method not in ("exact", "rff"):
        raise ValueError(f"method must be 'auto', 'exact' or 'rff', got {method!r}")
    return method


def _factor(points: np.ndarray, bandwidth: float, method: str, n_features: int, rng: np.random.Generator
            ) -> HSICFactor:
    if method == "exact":
        return HSICFactor(points=points, bandwidth=bandwidth, centred=None, rest=math.inf)
    features = fourier_features(points, bandwidth, n_features, rng)
    return HSICFactor(points=points, bandwidth=bandwidth, centred=features - features.mean(axis=0), rest=0.0)


def hsic_norms(x_box: np.ndarray, y_box: np.ndarray, *, bandwidth: float = DEFAULT_BANDWIDTH,
               n_permutations: int = DEFAULT_PERMUTATIONS, method: Literal["exact", "rff"] = "exact",
               n_features: int = DEFAULT_FEATURES, rng: RngLike) -> tuple[float, np.ndarray]:
    """The exact statistic ``T_0 = ||Ĉ_XY||_HS`` of two columns already on [−1, 1] and its B permuted values.

    Not private: :func:`dp_hsic_test` adds the noise. The features (for
    ``"rff"``) and then the permutations are drawn from ``rng``.

    >>> x = np.linspace(-1, 1, 50)
    >>> t0, permuted = hsic_norms(x, x ** 2, n_permutations=20, rng=0)
    >>> bool(t0 > permuted.max())
    True
    """
    generator = as_rng(rng)
    bandwidth = check_positive(bandwidth, "bandwidth")
    fx = _factor(as_points(x_box, "x"), bandwidth, method, n_features, generator)
    fy = _factor(as_points(y_box, "y"), bandwidth, method, n_features, generator)
    test = hsic_permutation_test_factors(fx, fy, n_permutations=n_permutations, rng=generator)
    m = fx.m
    scale = (m - 1) / m          # hsic_permutation_test_factors divides tr(KHLH) by (m - 1)²; T divides √ by m
    return (math.sqrt(max(test.statistic, 0.0)) * scale,
            np.sqrt(np.maximum(test.permuted, 0.0)) * scale)


def dp_hsic_test(x, y, *, epsilon: float, bounds_x, bounds_y, alpha: float = 0.05,
                 bandwidth: float = DEFAULT_BANDWIDTH, n_permutations: int = DEFAULT_PERMUTATIONS,
                 method: Literal["auto", "exact", "rff"] = "auto", n_features: int = DEFAULT_FEATURES,
                 rng: RngLike) -> DPHSICResult:
    """ε-DP test of X ⫫ Y: the permutation test of the module with Laplace noise ``2Δ/ε`` on every statistic.

    Neighbouring: replace one record (x_i, y_i). Public: ``bounds_x``,
    ``bounds_y`` (values outside are clamped — a schema rule, not a reading
    of the data), ``bandwidth`` on the [−1, 1] box, m, α, B, method (``"auto"``
    picks it from m alone) and ``n_features``. Guarantee: the decision is
    (ε, 0)-DP (module Theorem); its rejection rate under independence is at
    most α. The Laplace noise comes from ``rng`` after the permutations.
    """
    epsilon = check_epsilon(epsilon)
    alpha = check_probability(alpha, "alpha")
    n_permutations = check_int(n_permutations, "n_permutations", minimum=1)
    x_box = _box(x, bounds_x, "x")
    y_box = _box(y, bounds_y, "y")
    m = x_box.size
    if y_box.size != m:
        raise ValueError(f"x and y must have the same length, got {m} and {y_box.size}")
    if m < 2:
        raise ValueError(f"x and y need at least 2 records, got {m}")
    used = _method_for(m, method)
    generator = as_rng(rng)
    t0, permuted = hsic_norms(x_box, y_box, bandwidth=bandwidth, n_permutations=n_permutations, method=used,
                              n_features=n_features, rng=generator)
    sensitivity = hsic_norm_sensitivity(m, used)
    scale = 2.0 * sensitivity / epsilon
    reject = bool(noisy_permutation_decision(t0, permuted, scale=scale, alpha=alpha, rng=generator)[0])
    return DPHSICResult(reject=reject, alpha=alpha, epsilon=epsilon, sensitivity=sensitivity,
                        noise_scale=scale, m=m, method=used, n_permutations=n_permutations)


def noisy_permutation_decision(t0: float, permuted: np.ndarray, *, scale: float, alpha: float, rng: RngLike,
                               size: int = 1) -> np.ndarray:
    """``size`` independent decisions of the noisy permutation test on fixed statistics: reject when
    ``(1 + #{b : T_b + ξ_b ≥ T_0 + ξ_0}) / (B + 1) ≤ α`` with ξ i.i.d. ``Lap(scale)`` (module Theorem).

    The step of :func:`dp_hsic_test` after the statistics; the audit draws many decisions of one data set at once.

    >>> noisy_permutation_decision(1.0, np.zeros(19), scale=1e-9, alpha=0.05, rng=0, size=3).tolist()
    [True, True, True]
    """
    permuted = np.asarray(permuted, dtype=np.float64)
    noise = laplace_noise(scale, (size, permuted.size + 1), rng=as_rng(rng))
    count = np.count_nonzero(permuted[None, :] + noise[:, 1:] >= t0 + noise[:, :1], axis=1)
    return (1.0 + count) / (permuted.size + 1.0) <= alpha


def order_zero_worst_case(p: int, epsilon_per_test: float) -> float:
    """The ε of a PC run's order-0 stage with :class:`DPHSICTest` on p columns: one test per unordered pair, basic
    composition (data-independent: the plan, never the count a run happened to make).

    >>> round(order_zero_worst_case(20, 0.01), 12)
    1.9
    """
    p = check_int(p, "p", minimum=2)
    return check_epsilon(epsilon_per_test, "epsilon_per_test") * p * (p - 1) / 2


class DPHSICTest:
    """dpHSIC as a test function of :class:`dpcd.ci.CITester`: ``test(data, x, y, S)`` for S = () only.

    ``bounds``: one public (lower, upper) pair per column; ``epsilon_per_test``
    the ε of each decision (the run's total: :func:`order_zero_worst_case`).
    The returned :class:`~dpcd.ci.CIResult` carries the decision alone
    (p-value 0 = dependent, 1 = independent; ``statistic`` NaN), so any α in
    (0, 1) of the decider reads it. Draws from ``rng`` in the order the tests
    are asked; use one process (``n_jobs=1``): copies in workers would repeat
    the noise. ``n_released`` counts the decisions released.

    >>> import numpy as np
    >>> from dpcd.ci import CITester
    >>> from dpcd.discovery.pc import PValueDecider, run_pc
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, 600)
    >>> data = np.column_stack([x, np.sin(3 * x) + 0.1 * rng.normal(size=600), rng.uniform(-1, 1, 600)])
    >>> test = DPHSICTest(bounds=[(-1, 1), (-1.5, 1.5), (-1, 1)], epsilon_per_test=2.0, rng=1)
    >>> result = run_pc(["x", "y", "z"], PValueDecider(CITester(data, test), 0.5), max_order=0)
    >>> sorted(map(sorted, result.skeleton)), test.n_released
    ([['x', 'y']], 3)
    """

    def __init__(self, *, bounds: Sequence[Any], epsilon_per_test: float, alpha: float = 0.05,
                 bandwidth: float = DEFAULT_BANDWIDTH, n_permutations: int = DEFAULT_PERMUTATIONS,
                 method: Literal["auto", "exact", "rff"] = "auto", n_features: int = DEFAULT_FEATURES,
                 rng: RngLike):
        self.bounds = [tuple(b) for b in bounds]
        self.epsilon = check_epsilon(epsilon_per_test, "epsilon_per_test")
        self.alpha = check_probability(alpha, "alpha")
        self.options = {"bandwidth": bandwidth, "n_permutations": n_permutations, "method": method,
                        "n_features": n_features}
        self.rng = as_rng(rng)
        self.n_released = 0

    def __call__(self, data: np.ndarray, x: int, y: int, S: Sequence[int] = ()) -> CIResult:
        if len(S):
            raise ValueError(f"S: dpHSIC tests unconditional independence only (order 0), got S = {tuple(S)}")
        values = np.asarray(data, dtype=np.float64)
        if values.ndim != 2 or len(self.bounds) != values.shape[1]:
            raise ValueError(f"bounds must give one pair per column: {len(self.bounds)} pairs for data of shape "
                             f"{values.shape}")
        result = dp_hsic_test(values[:, x], values[:, y], epsilon=self.epsilon, bounds_x=self.bounds[x],
                              bounds_y=self.bounds[y], alpha=self.alpha, rng=self.rng, **self.options)
        self.n_released += 1
        return CIResult(statistic=math.nan, p_value=result.p_value)

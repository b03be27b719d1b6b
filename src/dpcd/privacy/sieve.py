"""Sieve-and-examine (Wang, Pang & Song 2020, Alg. 1), repeated over a query stream.

A round of sieve-and-examine:

1. *sieve*: draw a sub-sample D' of m of the n records (uniformly, without
   replacement) and run AboveThreshold on it with threshold T − t and privacy
   parameter ε' = ln((n/m)(e^{ε/2} − 1) + 1): noisy threshold
   T − t + Lap(2Δ'/ε'), each query f_i(D') + Lap(4Δ'/ε'), stop at the first
   query that reaches the noisy threshold. Δ' is the query's sensitivity on m
   records. By amplification by sub-sampling without replacement
   [BBG18, Thm 9] the sieve is ε/2-DP with respect to D.
2. *examine*: the query that passed is answered on the full data with
   f_k(D) + Lap(2Δ/ε) ≥ T (ε/2-DP, Laplace mechanism), the answer is released,
   and a new round starts with a fresh sub-sample and a fresh Laplace threshold.

Each round is ε-DP (basic composition of its two halves, [WPS20, Thm 1]);
rounds compose adaptively. The ledger records, per examined query, one
"sieve" charge (ε/2, kind "pure": an amplified AboveThreshold) and one
"examine" charge (ε/2, kind "laplace" with its sensitivity and scale), so the
number of examine charges equals the number of examined queries. A last sieve
that answered queries but never passed one has released "all below" answers,
which is also ε/2-DP and is charged by :meth:`SieveAndExamine.finish` (the
authors' code omits it).

Privacy relation: *replace one record* with n public — the relation under
which sampling m of n without replacement amplifies (BBG18, Thm 9); the
sensitivities Δ, Δ' passed in must be replace-one sensitivities on n and m
records.

Error bounds (Thm 2; tested in tests/test_sieve.py): a query with value
≥ T + a is missed by the sieve with probability at most
exp(−ε'(a + t)/(6Δ')) − ¼exp(−ε'(a + t)/(3Δ')) (Thm 4, which ignores the
examine step; the examine step adds at most ½exp(−aε/(2Δ))). A query ≤ T − a
(a ≥ t) passes both steps with probability at most
[exp(−ε'(a − t)/(6Δ')) − ¼exp(−ε'(a − t)/(3Δ'))]·½exp(−aε/(2Δ)); the paper's
Thm 5 writes the examine factor as exp(−2εa/Δ), which is smaller than the
Laplace tail ½exp(−εa/(2Δ)) of the scale it uses, so we test the corrected one.

References
----------
.. [WPS20] L. Wang, Q. Pang, D. Song. Towards practical differentially private
   causal graph discovery. NeurIPS 2020, Alg. 1, Thms 1–2, App. C.
.. [BBG18] B. Balle, G. Barthe, M. Gaboardi. Privacy amplification by
   subsampling: tight analyses via couplings and divergences. NeurIPS 2018.
.. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy, Alg. 1.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from scipy import optimize

from ..validation import RngLike, as_rng, check_epsilon, check_int, check_positive
from .ledger import PrivacyLedger
from .mechanisms import SparseVector, epsilon_for_subsampled, laplace_noise, laplace_scale

__all__ = ["SieveAndExamine", "sieve_epsilon", "optimal_subsample_size", "type_one_bound", "type_two_bound"]


def sieve_epsilon(epsilon: float, n: int, subsample_size: int) -> float:
    """ε' = ln((n/m)(e^{ε/2} − 1) + 1): the sieve's budget on the sub-sample (Alg. 1, line 3).

    The sub-sampled sieve is then ε/2-DP on the full data [BBG18, Thm 9].

    >>> from dpcd.privacy.mechanisms import subsampled_epsilon
    >>> eps_sieve = sieve_epsilon(0.1, 1000, 100)   # a 10 % sub-sample may spend ε' ≫ ε/2 = 0.05
    >>> round(eps_sieve, 4), round(subsampled_epsilon(eps_sieve, 100 / 1000), 12)
    (0.4139, 0.05)
    >>> round(sieve_epsilon(0.1, 1000, 1000), 12)   # m = n: no amplification, ε' = ε/2
    0.05
    """
    epsilon = check_epsilon(epsilon)
    n = check_int(n, "n", minimum=1)
    m = check_int(subsample_size, "subsample_size", minimum=1)
    if m > n:
        raise ValueError(f"subsample_size must be at most n={n}, got {m}")
    return epsilon_for_subsampled(epsilon / 2.0, m / n)


def optimal_subsample_size(n: int, epsilon: float, *, lower_fraction: float = 1 / 20) -> int:
    """m minimising √(n/m) / ln((n/m)(e^{ε/2} − 1) + 1), clipped to [n/20, n] (Sec. 3.2).

    The objective is the sieve's noise level for a statistic whose sensitivity
    scales as 1/√m. Solved on r = n/m ∈ [1, 1/lower_fraction] with a bounded
    scalar minimiser (the paper uses BFGS and clips; the same optimum).

    >>> optimal_subsample_size(10_000, 0.1)   # small ε: the smallest allowed sub-sample, n/20
    500
    >>> optimal_subsample_size(10_000, 1.0)
    1654
    >>> optimal_subsample_size(10_000, 10.0)   # large ε: sub-sampling no longer pays, m = n
    10000
    """
    n = check_int(n, "n", minimum=1)
    epsilon = check_epsilon(epsilon)
    lower_fraction = check_positive(lower_fraction, "lower_fraction")
    if lower_fraction > 1:
        raise ValueError(f"lower_fraction must be in (0, 1], got {lower_fraction}")
    half = epsilon / 2.0

    def noise(r: float) -> float:
        if half <= 1.0:
            return math.sqrt(r) / math.log1p(r * math.expm1(half))
        # ln(r(e^h − 1) + 1) = h + ln r + ln(1 + (1/r − 1)e^{−h}), no overflow for large ε
        return math.sqrt(r) / (half + math.log(r) + math.log1p((1.0 / r - 1.0) * math.exp(-half)))

    r_max = 1.0 / lower_fraction
    best = optimize.minimize_scalar(noise, bounds=(1.0, r_max), method="bounded", options={"xatol": 1e-6})
    r = min((1.0, r_max, float(best.x)), key=noise)
    return int(min(n, max(math.ceil(n * lower_fraction), round(n / r))))


def type_one_bound(gap: float, *, threshold_tweak: float, sieve_epsilon: float, subsample_sensitivity: float) -> float:
    """Thm 2 (type I): P[sieve misses a query ≥ T + gap] ≤ e^{−x/6} − ¼e^{−x/3}, x = ε'(gap + t)/Δ'.

    The bound falls as the query moves above the threshold:

    >>> [round(type_one_bound(gap, threshold_tweak=0.02, sieve_epsilon=0.4139, subsample_sensitivity=0.01), 4)
    ...  for gap in (0.0, 0.05, 0.2)]
    [0.6814, 0.5218, 0.2072]
    """
    x = sieve_epsilon * (gap + threshold_tweak) / subsample_sensitivity
    return math.exp(-x / 6) - 0.25 * math.exp(-x / 3)


def type_two_bound(gap: float, *, threshold_tweak: float, epsilon: float, sieve_epsilon: float,
                   sensitivity: float, subsample_sensitivity: float) -> float:
    """Thm 2 (type II), corrected examine factor: P[a query ≤ T − gap is output], gap ≥ t.

    >>> settings = dict(threshold_tweak=0.02, epsilon=0.1, sieve_epsilon=0.4139, sensitivity=0.003,
    ...                 subsample_sensitivity=0.01)
    >>> [round(type_two_bound(gap, **settings), 4) for gap in (0.05, 0.2)]
    [0.1408, 0.0048]
    >>> type_two_bound(0.01, **settings)
    Traceback (most recent call last):
    ...
    ValueError: gap must be at least threshold_tweak=0.02, got 0.01
    """
    if gap < threshold_tweak:
        raise ValueError(f"gap must be at least threshold_tweak={threshold_tweak}, got {gap}")
    x = sieve_epsilon * (gap - threshold_tweak) / subsample_sensitivity
    return (math.exp(-x / 6) - 0.25 * math.exp(-x / 3)) * 0.5 * math.exp(-gap * epsilon / (2 * sensitivity))


class SieveAndExamine:
    """Repeated sieve-and-examine over an adaptive query stream (see the module docstring).

    Parameters
    ----------
    n : number of records (public).
    threshold : T; a query is "above" when its value reaches T.
    threshold_tweak : t; the sieve uses T − t.
    epsilon : ε, the privacy parameter of one round (one examined query).
    sensitivity : Δ of a query on the n records (replace one record).
    subsample_sensitivity : Δ' of a query on m records.
    subsample_size : m, 1 ≤ m ≤ n.
    rng : Generator or seed.
    ledger : a ``PrivacyLedger(relation="replace")`` to charge (a new one if None).

    Use :meth:`query` with two callables (value on the current sub-sample rows,
    value on the full data), or :meth:`sieve` and :meth:`examine` directly.
    Call :meth:`finish` at the end to charge a sieve left open.

    Examples
    --------
    Five queries with constant values; the two far above T = 0.5 pass the
    sieve and are examined, each examined query costs ε, the open sieve ε/2:

    >>> stream = SieveAndExamine(n=1000, threshold=0.5, threshold_tweak=0.02, epsilon=1.0, sensitivity=0.001,
    ...                          subsample_sensitivity=0.005, subsample_size=200, rng=0)
    >>> round(stream.sieve_epsilon, 4), round(stream.examine_scale, 6), stream.subsample.shape
    (1.4454, 0.002, (200,))
    >>> [stream.query(lambda rows, v=v: v, lambda v=v: v) for v in (0.0, 0.9, 0.1, 0.9, 0.2)]
    [False, True, False, True, False]
    >>> stream.finish()
    >>> [charge.mechanism for charge in stream.ledger.entries], stream.ledger.total("basic").epsilon
    (['sieve', 'examine', 'sieve', 'examine', 'sieve (open)'], 2.5)
    """

    def __init__(self, *, n: int, threshold: float, threshold_tweak: float, epsilon: float, sensitivity: float,
                 subsample_sensitivity: float, subsample_size: int, rng: RngLike,
                 ledger: PrivacyLedger | None = None) -> None:
        self.n = check_int(n, "n", minimum=1)
        self.threshold = float(threshold)
        if not math.isfinite(self.threshold):
            raise ValueError(f"threshold must be finite, got {threshold}")
        self.threshold_tweak = check_positive(threshold_tweak, "threshold_tweak", allow_zero=True)
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_positive(sensitivity, "sensitivity")
        self.subsample_sensitivity = check_positive(subsample_sensitivity, "subsample_sensitivity")
        self.subsample_size = check_int(subsample_size, "subsample_size", minimum=1)
        if self.subsample_size > self.n:
            raise ValueError(f"subsample_size must be at most n={self.n}, got {self.subsample_size}")
        if ledger is None:
            ledger = PrivacyLedger(relation="replace", public=("n",))
        if not isinstance(ledger, PrivacyLedger):
            raise TypeError(f"ledger must be a PrivacyLedger, got {type(ledger).__name__}")
        if ledger.relation != "replace":
            raise ValueError("ledger must use relation='replace': sub-sampling without replacement "
                             "amplifies privacy under replace-one neighbours")
        self.ledger = ledger
        self.sieve_epsilon = sieve_epsilon(self.epsilon, self.n, self.subsample_size)
        self.examine_scale = laplace_scale(self.sensitivity, self.epsilon / 2.0)  # = 2Δ/ε
        self._rng = as_rng(rng)
        self.n_examined = 0
        self.n_removed = 0
        self.n_sieved = 0
        self._open_queries = 0
        self._pending = False
        self._new_round()

    # ------------------------------------------------------------------ rounds

    def _new_round(self) -> None:
        self.subsample = np.sort(self._rng.choice(self.n, size=self.subsample_size, replace=False))
        # AboveThreshold on the sub-sample: Lap(2Δ'/ε') threshold, Lap(4Δ'/ε') per query (always Laplace)
        self._svt = SparseVector(self.threshold - self.threshold_tweak, epsilon=self.sieve_epsilon,
                                 sensitivity=self.subsample_sensitivity, rng=self._rng, max_hits=1)
        self._open_queries = 0

    @property
    def sieve_threshold_scale(self) -> float:
        return self._svt.threshold_scale

    @property
    def sieve_query_scale(self) -> float:
        return self._svt.query_scale

    def sieve(self, value: float) -> bool:
        """One sieve query on the current sub-sample; True = passed, examine next."""
        if self._pending:
            raise RuntimeError("the previous query passed the sieve: call examine() before sieving again")
        self.n_sieved += 1
        self._open_queries += 1
        passed = self._svt.query(value)
        self._pending = passed
        return passed

    def examine(self, value: float) -> bool:
        """Examine the query that passed the sieve on the full data; charges ε and starts a new round."""
        if not self._pending:
            raise RuntimeError("examine() needs a query that passed the sieve")
        above = value + float(laplace_noise(self.examine_scale, rng=self._rng)) >= self.threshold
        self.ledger.charge("sieve", epsilon=self.epsilon / 2.0, kind="pure",
                           note=f"AboveThreshold on m={self.subsample_size} of n={self.n} at "
                                f"eps'={self.sieve_epsilon:.6g}, amplified (BBG18 Thm 9)")
        self.ledger.charge("examine", epsilon=self.epsilon / 2.0, kind="laplace",
                           sensitivity=self.sensitivity, scale=self.examine_scale)
        self.n_examined += 1
        self.n_removed += int(above)
        self._pending = False
        self._new_round()
        return above

    def query(self, on_subsample: Callable[[np.ndarray], float], on_full: Callable[[], float]) -> bool:
        """Sieve ``on_subsample(rows)`` and, if it passes, return the examined answer of ``on_full()``."""
        if not self.sieve(on_subsample(self.subsample)):
            return False
        return self.examine(on_full())

    def finish(self) -> None:
        """Charge the open sieve (ε/2) if it answered queries since the last examine. Idempotent."""
        if self._open_queries > 0:
            self.ledger.charge("sieve (open)", epsilon=self.epsilon / 2.0, kind="pure",
                               note=f"{self._open_queries} below-threshold answers of an unfinished sieve")
            self._open_queries = 0

"""Audit cases for the privacy mechanisms of :mod:`dpcd.privacy`, and deliberately broken variants.

* :func:`mechanism_cases` — Laplace, Gaussian (classical and analytic),
  exponential mechanism and sparse vector, each on the adversarial pair where
  its privacy loss is largest;
* :func:`sieve_case` — Priv-PC's sieve-and-examine on mean queries;
* :func:`spread_cases` — the private spread box of GCM-PC's first stage, and a variant with noise for half its
  sensitivity;
* :func:`norm_clip_cases` — the moment release of records scaled onto a public L2 ball (GCM-PC's norm clip), and a
  variant that claims the ball's sensitivity without scaling the records;
* :func:`interaction_cases` — Marginal-PC's order-0 release of every pair's interaction and every margin
  (:mod:`dpcd.privacy.interactions`), on the neighbour that attains its sensitivity, and a variant that takes the
  full tables' worst case (a record changed in every column) for its own;
* :func:`broken_cases` — mechanisms with a known flaw (noise halved,
  sensitivity under-stated, one noise draw re-used by a sparse vector) that
  the auditor must flag.

Claims are the mechanisms' own theorems for the parameters passed (never a
ledger read back): e.g. Laplace with scale Δ/ε is ε-DP [DR14, Thm 3.6].

Examples
--------
>>> [case.name for case in broken_cases()][:1]
['BROKEN Laplace, noise scale halved']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..privacy import (
    SparseVector,
    analytic_gaussian_sigma,
    exponential_mechanism,
    gaussian_mechanism,
    gaussian_sigma,
    laplace_mechanism,
)
from ..validation import RngLike, as_rng, check_delta, check_epsilon, check_int
from .events import Event, equals, threshold_events
from .neighbours import add_record, replace_record
from .runner import AuditCase

__all__ = ["mechanism_cases", "broken_cases", "sieve_case", "spread_cases", "norm_clip_cases", "interaction_cases"]


@dataclass(frozen=True)
class _SumQuery:
    """Sum of records clipped to [0, bound]: L1/L2 sensitivity ``bound`` under add/remove."""

    bound: float

    def __call__(self, data: np.ndarray) -> float:
        return float(np.clip(np.asarray(data, dtype=np.float64), 0.0, self.bound).sum())


@dataclass(frozen=True)
class _LaplaceSum:
    epsilon: float
    sensitivity: float
    query: _SumQuery

    def __call__(self, data, rng, size):
        return laplace_mechanism(np.full(size, self.query(data)), sensitivity=self.sensitivity,
                                 epsilon=self.epsilon, rng=rng)


@dataclass(frozen=True)
class _GaussianSum:
    epsilon: float
    delta: float
    sensitivity: float
    query: _SumQuery
    analytic: bool

    def __call__(self, data, rng, size):
        return gaussian_mechanism(np.full(size, self.query(data)), sensitivity=self.sensitivity,
                                  epsilon=self.epsilon, delta=self.delta, rng=rng, analytic=self.analytic)


@dataclass(frozen=True)
class _HalfScaleLaplace:
    """BROKEN on purpose: Laplace noise of half the calibrated scale (true ε is 2ε)."""

    epsilon: float
    sensitivity: float
    query: _SumQuery

    def __call__(self, data, rng, size):
        return self.query(data) + rng.laplace(0.0, 0.5 * self.sensitivity / self.epsilon, size=size)


@dataclass(frozen=True)
class _CountScoresEM:
    """Exponential mechanism on category counts (sensitivity 1: one record moves each count by ≤ 1)."""

    epsilon: float
    n_categories: int

    def __call__(self, data, rng):
        counts = np.bincount(np.asarray(data, dtype=np.int64), minlength=self.n_categories).astype(np.float64)
        return exponential_mechanism(counts, epsilon=self.epsilon, sensitivity=1.0, rng=rng)


@dataclass(frozen=True)
class _SparseVectorQueries:
    """Above-threshold (one hit) on the queries q_j(D) = offset_j + sign_j · #{records equal to 0}.

    Each query has sensitivity 1 under add/remove (sign_j ∈ {−1, 0, 1}, offsets
    public), and queries may move in opposite directions. Output: the answer
    pattern as a tuple (1 = above, 0 = below, −1 = not asked after the hit).
    """

    epsilon: float
    threshold: float
    offsets: tuple[float, ...]
    signs: tuple[int, ...]
    broken: bool = False

    def __call__(self, data, rng):
        count = float(np.count_nonzero(np.asarray(data) == 0))
        values = np.asarray(self.offsets, dtype=np.float64) + np.asarray(self.signs, dtype=np.float64) * count
        answers = [-1] * len(values)
        sv = SparseVector(self.threshold, epsilon=self.epsilon, sensitivity=1.0, rng=rng)
        if self.broken:
            # BROKEN on purpose: one Laplace draw is re-used as the noise of every query
            # (the threshold noise is drawn as usual), so comparisons between queries are exact.
            nu = float(rng.laplace(0.0, sv.query_scale))
            noisy_threshold = sv.threshold + float(rng.laplace(0.0, sv.threshold_scale))
            for j, value in enumerate(values):
                answers[j] = int(value + nu >= noisy_threshold)
                if answers[j]:
                    break
            return tuple(answers)
        for j, value in enumerate(values):
            answers[j] = int(sv.query(float(value)))
            if answers[j]:
                break
        return tuple(answers)


def _pattern_events(n_queries: int) -> list[Event]:
    """"first hit at query j" for each j, and "no hit"."""
    events = []
    for j in range(n_queries):
        pattern = tuple([0] * j + [1] + [-1] * (n_queries - j - 1))
        events.append(equals(pattern, name=f"first hit at query {j}"))
    events.append(equals(tuple([0] * n_queries), name="no hit"))
    return events


def _threshold_grid(centre: float, spread: float, count: int = 41) -> tuple[Event, ...]:
    return tuple(threshold_events(np.linspace(centre - spread, centre + spread, count)))


def mechanism_cases(
    *, epsilon: float = 1.0, delta: float = 1e-5, n_records: int = 50, rng: RngLike = 0
) -> list[AuditCase]:
    """Audit cases for the library's mechanisms, each on an adversarial pair.

    * Laplace / Gaussian / analytic Gaussian on the clipped sum of records in
      [0, 1] (sensitivity 1 under add/remove), D′ = D plus one record **at the
      clipping bound** (:func:`dpcd.audit.neighbours.add_record`), events "M ≥ c"
      on a grid of c around the two sums (the tails carry the largest ratio).
    * Exponential mechanism on category counts with D′ = D with one record of
      the leading category replaced by the trailing one (both scores move by
      1, in opposite directions), events "category j selected".
    * Sparse vector (one hit) on 8 sensitivity-1 queries: seven just below the
      threshold that fall by 1 and a last one that rises by 1 when D′ adds a
      record, events "first hit at query j" (Lyu et al.'s worst case).

    The classical Gaussian case uses ε = min(epsilon, 0.5) because its
    calibration needs ε < 1.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    n_records = check_int(n_records, "n_records", minimum=2)
    generator = as_rng(rng)
    records = generator.uniform(0.0, 1.0, size=n_records)
    query = _SumQuery(1.0)
    sum_pair = add_record(records, 1.0, description="D′ = D + one record at the clipping bound 1")
    total = query(records)
    cases = [
        AuditCase("Laplace", _LaplaceSum(epsilon, 1.0, query), sum_pair,
                  _threshold_grid(total + 0.5, 6.0 / epsilon), epsilon, 0.0, True,
                  note="sum of records in [0, 1], Lap(1/ε)"),
    ]
    eps_classic = min(epsilon, 0.5)
    sigma_c = gaussian_sigma(1.0, eps_classic, delta)
    cases.append(AuditCase(
        "Gaussian (classical)", _GaussianSum(eps_classic, delta, 1.0, query, False), sum_pair,
        _threshold_grid(total + 0.5, 5.0 * sigma_c), eps_classic, delta, True,
        note="σ = √(2 ln(1.25/δ))/ε (Dwork & Roth Thm 3.22)"))
    sigma_a = analytic_gaussian_sigma(1.0, epsilon, delta)
    cases.append(AuditCase(
        "Gaussian (analytic)", _GaussianSum(epsilon, delta, 1.0, query, True), sum_pair,
        _threshold_grid(total + 0.5, 5.0 * sigma_a), epsilon, delta, True,
        note="σ from Balle & Wang (2018), Thm 8"))
    # exponential mechanism: 3 categories with counts (k+6, k, k) style gap; replace one record of 0 by 1
    gap = max(2, int(round(4.0 / epsilon)))
    categories = np.concatenate([np.zeros(gap + 5, dtype=np.int64), np.ones(5, dtype=np.int64),
                                 np.full(5, 2, dtype=np.int64)])
    em_pair = replace_record(categories, 0, 1, description="one record of the leading category replaced by "
                                                          "one of a trailing category")
    cases.append(AuditCase(
        "Exponential mechanism", _CountScoresEM(epsilon, 3), em_pair,
        tuple(equals(j, name=f"category {j} selected") for j in range(3)), epsilon, 0.0, False,
        note="scores = category counts, Δ = 1"))
    cases.append(_sparse_vector_case(epsilon))
    return cases


def _sparse_vector_case(epsilon: float) -> AuditCase:
    """Seven queries just below T that fall by one on D′ and a last one, at T, that rises by one.

    D holds 10 records equal to 0 and 5 equal to 1; D′ adds a record 0. The
    first m − 1 queries are T − 1 on D and T − 2 on D′, the last is T on D
    and T + 1 on D′: the pattern "below, …, below, above" is the one whose
    probability ratio approaches e^ε (every below answer and the final above
    answer become more likely together).
    """
    m, threshold, count = 8, 20.0, 10
    offsets = tuple([threshold - 1 + count] * (m - 1) + [threshold - count])
    signs = tuple([-1] * (m - 1) + [1])
    data = np.array([0] * count + [1] * 5, dtype=np.int64)
    pair = add_record(data, 0, description="7 queries at T−1 fall by 1, the last (at T) rises by 1: "
                                           "D′ = D + one record")
    return AuditCase("Sparse vector", _SparseVectorQueries(epsilon, threshold, offsets, signs), pair,
                     tuple(_pattern_events(m)), epsilon, 0.0, False,
                     note="above-threshold (c = 1), Dwork & Roth calibration")


def broken_cases(*, epsilon: float = 1.0, n_records: int = 50, rng: RngLike = 0) -> list[AuditCase]:
    """Deliberately broken mechanisms the auditor must flag (``expect_violation=True``).

    * **Laplace, noise scale halved**: Lap(Δ/(2ε)) — truly 2ε-DP.
    * **Laplace, sensitivity off by 2**: records are clipped to [0, 2] but the
      noise is calibrated to Δ = 1; the adversarial neighbour adds a record at
      the (true) bound 2 — truly 2ε-DP.
    * **Sparse vector re-using one noise draw for every query** (the fresh
      per-query noise of [DR14, Alg. 1] replaced by a single draw, a flaw of
      several published variants discussed in [LSL17]): comparisons between
      queries become exact, so on the pair q(D) = (T−1, T), q(D′) = (T, T)
      the pattern "first hit at query 1" has positive probability on D and
      probability 0 on D′: the true privacy loss is unbounded.
    """
    epsilon = check_epsilon(epsilon)
    n_records = check_int(n_records, "n_records", minimum=2)
    generator = as_rng(rng)
    records = generator.uniform(0.0, 1.0, size=n_records)
    query1 = _SumQuery(1.0)
    pair1 = add_record(records, 1.0, description="D′ = D + one record at the clipping bound 1")
    total = query1(records)
    half = AuditCase("BROKEN Laplace, noise scale halved", _HalfScaleLaplace(epsilon, 1.0, query1), pair1,
                     _threshold_grid(total + 0.5, 4.0 / epsilon), epsilon, 0.0, True,
                     note="Lap(Δ/(2ε)): truly 2ε-DP", expect_violation=True)
    query2 = _SumQuery(2.0)
    pair2 = add_record(records, 2.0, description="D′ = D + one record at the true clipping bound 2")
    off = AuditCase("BROKEN Laplace, sensitivity off by 2", _LaplaceSum(epsilon, 1.0, query2), pair2,
                    _threshold_grid(total + 1.0, 7.0 / epsilon), epsilon, 0.0, True,
                    note="records clipped to [0, 2], noise for Δ = 1: truly 2ε-DP", expect_violation=True)
    # q(D) = (T−1, T) and D′ = D + a record 0, so q(D′) = (T, T): with one shared noise draw
    # the pattern "below at 0, above at 1" needs q₀ < τ ≤ q₁, impossible on D′.
    threshold, count = 10.0, 9
    data = np.array([0] * count + [1] * 5, dtype=np.int64)
    pair3 = add_record(data, 0, description="q(D) = (T−1, T); D′ = D + one record that raises query 0 to T")
    sv = AuditCase("BROKEN sparse vector, one noise draw for all queries",
                   _SparseVectorQueries(epsilon, threshold, (threshold - 1 - count, threshold), (1, 0), broken=True),
                   pair3, tuple(_pattern_events(2)), epsilon, 0.0, False,
                   note="query noise drawn once and re-used", expect_violation=True)
    return [half, off, sv]


@dataclass(frozen=True)
class _SieveStream:
    """One round of sieve-and-examine over queries q_j(rows) = offset_j + mean of the records in ``rows``.

    Output: a tuple per query: −1 not asked, 0 below in the sieve, 1 passed and
    examined above, 2 passed and examined below. The mean of m records has
    replace-one sensitivity 1/m (values in [0, 1]).
    """

    epsilon: float
    threshold: float
    threshold_tweak: float
    offsets: tuple[float, ...]
    subsample_size: int

    def __call__(self, data, rng):
        from ..privacy.sieve import SieveAndExamine

        values = np.asarray(data, dtype=np.float64)
        n = values.shape[0]
        sieve = SieveAndExamine(n=n, threshold=self.threshold, threshold_tweak=self.threshold_tweak,
                                epsilon=self.epsilon, sensitivity=1.0 / n,
                                subsample_sensitivity=1.0 / self.subsample_size,
                                subsample_size=self.subsample_size, rng=rng)
        answers = [-1] * len(self.offsets)
        for j, offset in enumerate(self.offsets):
            if sieve.sieve(offset + float(values[sieve.subsample].mean())):
                answers[j] = 1 if sieve.examine(offset + float(values.mean())) else 2
                break
            answers[j] = 0
        return tuple(answers)


def sieve_case(*, epsilon: float = 1.0, n: int = 40, subsample_size: int = 10) -> AuditCase:
    """Sieve-and-examine (Priv-PC's mechanism, ``dpcd.privacy.sieve``) on mean queries, replace one record.

    D holds ``n`` records, half 0 and half 1; D′ replaces a 0 by a 1. Queries
    sit just below the threshold, so the sieve passes some of them and the
    examine step decides. The claim is ε per examined query (sieve ε/2 by
    sub-sampling amplification + examine ε/2, [WPS20, Thm 1]).
    """
    epsilon = check_epsilon(epsilon)
    n = check_int(n, "n", minimum=4)
    subsample_size = check_int(subsample_size, "subsample_size", minimum=1)
    data = np.array([0.0] * (n // 2) + [1.0] * (n - n // 2))
    pair = replace_record(data, 0, 1.0, description="one record 0 replaced by 1 (mean queries in [0, 1])")
    offsets = (0.0, 0.0, 0.0, 0.0)
    threshold = 0.5 + 1.0 / n
    mechanism = _SieveStream(epsilon, threshold, 0.0, offsets, subsample_size)
    events = [equals(tuple([0] * j + [k] + [-1] * (len(offsets) - j - 1)), name=f"query {j}: "
                     + ("examined above" if k == 1 else "examined below")) for j in range(len(offsets))
              for k in (1, 2)]
    events.append(equals(tuple([0] * len(offsets)), name="no query passed the sieve"))
    return AuditCase("Sieve-and-examine", mechanism, pair, tuple(events), epsilon, 0.0, False,
                     note=f"n = {n}, m = {subsample_size}, ε per examined query")


@dataclass(frozen=True)
class _SpreadCentre:
    """The centre of column 0's box from :func:`dpcd.privacy.spread.private_spread_box` at ``mu_factor`` times
    the claim's μ (1: the library's calibration; 2: noise for half the sensitivity — the broken variant)."""

    mu: float
    k: float
    mu_factor: float = 1.0

    def __call__(self, data, rng):
        from ..privacy.spread import private_spread_box

        _, edges = private_spread_box(np.asarray(data, dtype=np.float64)[:, None], mu=self.mu * self.mu_factor,
                                      k=self.k, rng=rng)
        return float(edges[0].mean())


def spread_cases(*, epsilon: float = 1.0, delta: float = 1e-5, n_records: int = 200, rng: RngLike = 0
                 ) -> list[AuditCase]:
    """The private spread box (:mod:`dpcd.privacy.spread`) alone, claimed (ε, δ) at μ = ``gdp_mu(ε, δ)``, and a
    variant with noise for half its sensitivity (2μ: the bound of the squares alone, √p) that must be flagged.

    One column (p = 1), records in [−0.2, 0.2]; D′ replaces a record at +1 by one at −1 — the pair that attains the
    sensitivity 2√p (the sums move by 2, the squares not at all). The output is the box's centre, the noisy mean
    (as long as the box stays inside [−1, 1]), and the events are thresholds on it.
    """
    from ..privacy.gdp import gdp_mu

    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    n_records = check_int(n_records, "n_records", minimum=2)
    records = as_rng(rng).uniform(-0.2, 0.2, size=n_records)
    records[0] = 1.0
    pair = replace_record(records, 0, -1.0, description="one record at +1 replaced by one at -1 (one column)")
    mu = gdp_mu(epsilon, delta)
    spread = 2.0 / (mu * n_records)        # the noisy mean's standard deviation
    centre = float(records.mean()) - 1.0 / n_records
    events = _threshold_grid(centre, 5.0 * spread)
    return [AuditCase("Private spread box", _SpreadCentre(mu, 1.5), pair, events, epsilon, delta, False,
                      note="Gaussian on the sums and squares at mu-GDP, Delta = 2 sqrt(p)"),
            AuditCase("BROKEN private spread box, noise for half the sensitivity", _SpreadCentre(mu, 1.5, 2.0), pair,
                      events, epsilon, delta, False, note="2 mu: the squares' bound sqrt(p) only",
                      expect_violation=True)]


@dataclass(frozen=True)
class _ClippedMomentProjection:
    """The noisy moment release of :func:`dpcd.privacy.moments.noisy_moments` — the exact vector
    (:func:`~dpcd.privacy.moments.moment_vector`, records scaled onto the ball of L2 ``radius``) plus the Gaussian
    mechanism with the ball's sensitivity at ``mu`` — read along the unit ``direction`` in which the pair's exact
    releases differ (the likelihood ratio of a Gaussian release is a function of that projection); vectorised.
    With ``clip=False`` the records are not scaled but the noise stays the ball's (the broken variant)."""

    mu: float
    radius: float
    direction: tuple[float, ...]
    clip: bool = True

    def __call__(self, data, rng, size):
        from ..privacy.mechanisms import gdp_gaussian_mechanism
        from ..privacy.moments import moment_vector, release_sensitivity

        records = np.asarray(data, dtype=np.float64)
        exact = moment_vector(records, radius=self.radius if self.clip else None)  # the mistake: clip=False
        sensitivity = release_sensitivity(np.ones(records.shape[1]), self.radius)
        noisy = gdp_gaussian_mechanism(np.broadcast_to(exact, (size, exact.size)), sensitivity=sensitivity,
                                       mu=self.mu, rng=rng)
        return noisy @ np.asarray(self.direction)


def norm_clip_cases(*, epsilon: float = 1.0, delta: float = 1e-5, n_records: int = 200, dimension: int = 16,
                    rng: RngLike = 0) -> list[AuditCase]:
    """The moment release of records scaled onto the L2 ball of radius R = √(``dimension``/4) (GCM-PC's norm clip,
    :mod:`dpcd.privacy.moments`), claimed (ε, δ) at μ = ``gdp_mu(ε, δ)`` with sensitivity √(4R² + R⁴ + R²), and a
    variant with the same noise whose records are **not** scaled onto the ball, which must be flagged.

    Records in [−0.2, 0.2]^D; D′ replaces the record (1, …, 1) (norm √D = 2R) by (1, −1, 1, −1, …): unscaled,
    the release moves by √(2D + D²) — √8 times the ball's sensitivity at D = 16 — and scaled onto the ball by
    √(24/36) of it (the largest move between two records of the ball and of [−1, 1]^16 is about √(28.8/36) of
    it). The output is the noisy release projected on the direction of the pair's exact difference (each
    variant's own), and the events are thresholds on it.
    """
    from ..privacy.gdp import gdp_mu
    from ..privacy.moments import moment_vector, release_sensitivity

    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    n_records = check_int(n_records, "n_records", minimum=2)
    dimension = check_int(dimension, "dimension", minimum=2)
    radius = float(np.sqrt(dimension / 4.0))
    records = as_rng(rng).uniform(-0.2, 0.2, size=(n_records, dimension))
    records[0] = 1.0
    signs = np.where(np.arange(dimension) % 2 == 0, 1.0, -1.0)
    pair = replace_record(records, 0, signs, description="one record (1, ..., 1) replaced by (1, -1, 1, -1, ...)")
    mu = gdp_mu(epsilon, delta)
    sigma = release_sensitivity(np.ones(dimension), radius) / mu
    cases = []
    for clip, name, flawed in [(True, "Norm-clipped moments", False),
                               (False, "BROKEN norm-clipped moments, records not scaled onto the ball", True)]:
        used = radius if clip else None
        first, second = (moment_vector(d, radius=used) for d in (pair.data, pair.neighbour))
        direction = (second - first) / np.linalg.norm(second - first)
        centre = float(first @ direction) + 0.5 * float(np.linalg.norm(second - first))
        spread = 5.0 * sigma + 0.5 * float(np.linalg.norm(second - first))
        cases.append(AuditCase(name, _ClippedMomentProjection(mu, radius, tuple(direction.tolist()), clip), pair,
                               _threshold_grid(centre, spread), epsilon, delta, True,
                               note=f"Gaussian at mu-GDP, Delta = sqrt(4 R^2 + R^4 + R^2), R = {radius:g}"
                                    + ("; records not scaled" if flawed else ""),
                               expect_violation=flawed))
    return cases


@dataclass(frozen=True)
class _InteractionProjection:
    """The release of :func:`dpcd.privacy.interactions.pair_interaction_mechanism` — the exact vector
    (:func:`~dpcd.privacy.interactions.interaction_vector`) plus Gaussian noise for ``sensitivity`` at ``mu`` — read
    along the unit ``direction`` in which the pair's exact releases differ (the likelihood ratio of a Gaussian
    release is a function of that projection); vectorised."""

    mu: float
    levels: tuple[int, ...]
    sensitivity: float
    direction: tuple[float, ...]

    def __call__(self, data, rng, size):
        from ..privacy.mechanisms import gdp_gaussian_mechanism

        exact = _pair_vector(np.asarray(data), self.levels)
        noisy = gdp_gaussian_mechanism(np.broadcast_to(exact, (size, exact.size)), sensitivity=self.sensitivity,
                                       mu=self.mu, rng=rng)
        return noisy @ np.asarray(self.direction)


def _pair_vector(codes: np.ndarray, levels: tuple[int, ...]) -> np.ndarray:
    from itertools import combinations

    from ..discovery.counted import marginal_table
    from ..privacy.interactions import interaction_vector

    tables = {pair: marginal_table(codes, levels, pair) for pair in combinations(range(len(levels)), 2)}
    return interaction_vector(tables, levels)


def interaction_cases(*, epsilon: float = 1.0, delta: float = 1e-5, n_records: int = 200, p: int = 30,
                      rng: RngLike = 0) -> list[AuditCase]:
    """Every pair's interaction and every column's margin of ``p`` binary columns released at μ = ``gdp_mu(ε, δ)``
    with the attained sensitivity (:func:`dpcd.privacy.interactions.interaction_sensitivity`, Δ² = ⌊(p + 2)²/4⌋),
    claimed (ε, δ); and a variant that takes for its sensitivity the move of a record changed in **every** column
    (Δ² = 2p: the full tables' worst case, which is not this release's), which must be flagged.

    The neighbour is built for the statistic: one record replaced by one that differs from it in exactly the
    columns :func:`~dpcd.privacy.interactions.worst_columns` names (⌊(p + 2)/2⌋ of them), which moves the release
    by the full Δ — a record changed in every column moves it by √(2p) only. The output is the noisy release
    projected on the direction of the pair's exact difference, and the events are thresholds on it.
    """
    from ..privacy.gdp import gdp_mu
    from ..privacy.interactions import interaction_sensitivity, worst_columns

    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    n_records = check_int(n_records, "n_records", minimum=2)
    p = check_int(p, "p", minimum=2)
    levels = (2,) * p
    codes = as_rng(rng).integers(0, 2, size=(n_records, p))
    changed = list(worst_columns(levels))
    record = codes[0].copy()
    record[changed] = 1 - record[changed]
    pair = replace_record(codes, 0, record, description=f"one record replaced by one that differs in the "
                                                         f"{len(changed)} columns worst_columns names (of {p})")
    first, second = (_pair_vector(np.asarray(d), levels) for d in (pair.data, pair.neighbour))
    move = float(np.linalg.norm(second - first))
    direction = tuple(((second - first) / move).tolist())
    mu = gdp_mu(epsilon, delta)
    centre = float(np.asarray(first) @ np.asarray(direction)) + 0.5 * move
    cases = []
    for sensitivity, name, flawed in [(interaction_sensitivity(levels), "Pair interactions and margins", False),
                                      (float(np.sqrt(2.0 * p)), "BROKEN pair interactions and margins, the "
                                       "sensitivity of a record changed in every column", True)]:
        sigma = sensitivity / mu
        cases.append(AuditCase(name, _InteractionProjection(mu, levels, sensitivity, direction), pair,
                               _threshold_grid(centre, 5.0 * sigma + 0.5 * move), epsilon, delta, True,
                               note=f"Gaussian at mu-GDP, Delta^2 = {sensitivity ** 2:.4g} ({p} binary columns; "
                                    f"the pair moves it by {move:.4g})", expect_violation=flawed))
    return cases

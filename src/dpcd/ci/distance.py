"""Distance scores of G² tests: how many records must change before a decision flips.

EM-PC (Xu, Yuan & Wu 2017, Eq. 5) replaces the p-value of a G² test by the
*distance score*: the minimum number of records that must be added or removed
until the test's decision changes side. It has sensitivity 1 because one
record is one step of that distance (triangle inequality), while the p-value
itself can move arbitrarily.

Conventions used here
---------------------
* The test is G² with the **public** degrees of freedom of the paper
  (Sec. III-A): df = (|X| − 1)(|Y| − 1) ∏ |S_h| from the domain sizes, so the
  decision "independent" ⇔ p > α ⇔ G² < c with c = χ²_df⁻¹(1 − α) fixed. (The
  non-private :func:`dpcd.ci.g2_test` subtracts empty rows/columns from
  df as causal-learn does; on tables without empty rows/columns they agree.)
* A *step* adds or removes one record, i.e. changes one cell of the full
  (stratum, X, Y) table by ±1 (the add/remove neighbouring relation). Every
  stratum of the domain is a cell block, also the empty ones; empty strata are
  interchangeable, so at most two of them are kept (:func:`full_table`).
* The signed score is ``k − 1`` when the test says independent and ``−k``
  when it says dependent, where ``k`` is the flip distance. The paper writes
  ±k (Eq. 5); that has sensitivity 2 at the decision boundary (a neighbour on
  the other side has score ∓1). Shifting one side by one makes it 1-Lipschitz
  and turns the paper's quality q₂ (Eq. 6–8, whose "− 1" terms assume
  exactly this shift) into ``min(u_(t), −u_(t+1) − 1)`` over the sorted
  scores, see :func:`count_quality`.
* Scores are clipped to ``[−max_distance, max_distance − 1]`` with a
  data-independent ``max_distance``; clipping keeps the sensitivity at 1.

Two ways to compute k
---------------------
``method="lipschitz"`` (the default, and the one EM-PC uses unless told
otherwise) returns a **provable** sensitivity-1 lower bound of the flip
distance, k = max(k_B, min(k*, 3)):

* k_B = the smallest k ≥ 1 with B₀ + … + B_{k−1} ≥ |G² − c|, where B_i bounds
  how much one added or removed record can move G² at any table within i
  steps of the data (Lemma below). Every path that flips the decision in k
  steps moves G² by at most that sum, so k* ≥ k_B.
* min(k*, 3) is found exactly by a breadth-first search over the tables one
  step away (two empty strata suffice for paths of length ≤ 2). A minimum of
  the exact distance and a constant is 1-Lipschitz.

*k_B is 1-Lipschitz.* B_i(D) is the supremum of the one-step change over the
box of tables whose cells and margins lie within i + 1 of D's, so for a
neighbour D′ the box of D′ at radius i + 1 lies inside the box of D at radius
i + 2: B_i(D′) ≤ B_{i+1}(D); and |G² − c| moves by at most B₀(D) from D to D′.
If the sums of D′ reach its gap in k steps, those of D reach its gap in k + 1;
by symmetry |k_B(D) − k_B(D′)| ≤ 1. The maximum of two 1-Lipschitz functions is
1-Lipschitz, so every score of this method has sensitivity 1 under add/remove
one record with only the domain sizes public, and the exponential mechanism of
EM-PC keeps its ε-DP guarantee.

*Lemma (one step).* Write G²/2 = Σ f(O) − Σ f(R) − Σ f(C) + f(N) per stratum
with f(x) = x ln x, where O are the cells, R and C the margins and N the
stratum size. Adding a record to a cell changes G²/2 by
Δf(O) − Δf(R) − Δf(C) + Δf(N), with Δf(x) = f(x + 1) − f(x) =
ln(x + 1) + x ln(1 + 1/x) increasing in x; removing one is minus the addition
at the table with that record removed. Over a box where each of O, R, C, N
varies in [x − j, x + j] ∩ [0, ∞) the change therefore lies between
Δf(O − j) − Δf(R + j) − Δf(C + j) + Δf(N − j) and
Δf(O + j) − Δf(R − j) − Δf(C − j) + Δf(N + j) — this is B_i with j = i + 1.
Far from the boundary, where the counts are large and the table is close to
independence, B_i grows roughly linearly in i, so k_B grows like the square
root of the gap times the smallest count, as the exact distance does.

``method="search"`` reproduces the *utility* of the paper's exact distance as
closely as the search allows: a **greedy** search (repeatedly apply the
single-cell change that moves G² furthest towards the threshold, several
copies at once while the marginal gain stays the best) gives an upper bound,
and an **exact** breadth-first search over all tables within ``bound − 1``
steps (at most ``exact_states`` tables) confirms it or finds a shorter path.
Exact distances have sensitivity 1 (Corollaries 1–2 of the paper); greedy
ones do not: measured on 300 random add/remove neighbours (3×3×2 tables,
n = 200–3000, greedy only), greedy scores differed by more than 1 in about a
third of the pairs, by up to 26, all on the dependent side. A run with
``method="search"`` whose scores were not all exact therefore carries **no**
proven ε-DP guarantee; it is kept to compare with the paper's numbers.

References
----------
Xu, Yuan & Wu (2017), "Differential privacy preserving causal graph
discovery", IEEE PAC, Eq. 5–8, Cor. 1–2.
Johnson & Shmatikov (2013), "Privacy-preserving data exploration in
genome-wide association studies", KDD (the distance score).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np
from scipy import special

from ..validation import check_int, check_probability

__all__ = [
    "DistanceResult",
    "xlogx",
    "g2_statistic",
    "g2_public_dof",
    "g2_threshold",
    "full_table",
    "flip_distance",
    "step_bounds",
    "distance_score",
    "count_quality",
]


def xlogx(x: np.ndarray | float) -> np.ndarray:
    """x·ln x with 0·ln 0 = 0 (elementwise)."""
    return special.xlogy(x, x)


def _stratum_g2(table: np.ndarray) -> np.ndarray:
    """G² of each stratum: 2[Σ O ln O − Σ r ln r − Σ c ln c + n ln n]."""
    return 2.0 * (xlogx(table).sum(axis=(1, 2)) - xlogx(table.sum(axis=2)).sum(axis=1)
                  - xlogx(table.sum(axis=1)).sum(axis=1) + xlogx(table.sum(axis=(1, 2))))


def g2_statistic(table: np.ndarray) -> float:
    """G² = 2 Σ O ln(O/E) of a stratified table (strata, |X|, |Y|), E from each stratum's margins."""
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 3:
        raise ValueError(f"table must have shape (strata, |X|, |Y|), got {table.shape}")
    return float(max(_stratum_g2(table).sum(), 0.0))


def g2_public_dof(levels_x: int, levels_y: int, levels_S: Sequence[int] = ()) -> int:
    """df = (|X| − 1)(|Y| − 1) ∏ |S_h| from the (public) domain sizes (paper 000, Sec. III-A)."""
    dof = (int(levels_x) - 1) * (int(levels_y) - 1)
    for k in levels_S:
        dof *= int(k)
    return max(dof, 1)


def g2_threshold(dof: int, alpha: float) -> float:
    """c with P(χ²_dof ≥ c) = α: the test says independent (p > α) iff G² < c."""
    alpha = check_probability(alpha, "alpha")
    return float(special.chdtri(dof, alpha))


def full_table(codes: np.ndarray, x: int, y: int, S: Sequence[int], levels: np.ndarray,
               *, max_empty_strata: int = 2) -> np.ndarray:
    """Counts of (stratum, X, Y) over the observed strata plus up to ``max_empty_strata`` empty ones.

    ``codes`` are integer codes (rows × variables), ``levels`` the public
    domain sizes. Empty strata of the domain are interchangeable for the flip
    distance, so keeping two of them (when the domain has that many) loses
    nothing a short path could use.
    """
    kx, ky = int(levels[x]), int(levels[y])
    n = codes.shape[0]
    code = np.zeros(n, dtype=np.int64)
    n_strata = 1
    for s in S:
        code *= int(levels[s])
        code += codes[:, s]
        n_strata *= int(levels[s])
    if n_strata <= 4 * n + 16:
        counts = np.bincount(code * (kx * ky) + codes[:, x] * ky + codes[:, y], minlength=n_strata * kx * ky)
        table = counts.reshape(n_strata, kx, ky)
        occupied = table.sum(axis=(1, 2)) > 0
        n_empty = n_strata - int(occupied.sum())
    else:
        uniq, inverse = np.unique(code, return_inverse=True)
        counts = np.bincount(inverse * (kx * ky) + codes[:, x] * ky + codes[:, y], minlength=len(uniq) * kx * ky)
        table = counts.reshape(len(uniq), kx, ky)
        occupied = np.ones(len(uniq), dtype=bool)
        n_empty = n_strata - len(uniq)
    kept = table[occupied]
    extra = min(n_empty, int(max_empty_strata))
    if extra:
        kept = np.concatenate([kept, np.zeros((extra, kx, ky), dtype=kept.dtype)])
    return kept.astype(np.float64)


@dataclass(frozen=True)
class DistanceResult:
    """Flip distance ``k`` (≥ 1, at most ``max_distance``) and how it was obtained.

    ``exact``: k is the exact (capped) flip distance. ``provable``: k is a
    1-Lipschitz function of the data (exact, or the ``lipschitz`` bound).
    """

    k: int
    exact: bool
    independent: bool
    statistic: float
    provable: bool = True

    @property
    def score(self) -> int:
        """Signed, 1-Lipschitz score: k − 1 when independent, −k when dependent."""
        return self.k - 1 if self.independent else -self.k


def _unit_gains(T: np.ndarray, r: np.ndarray, c: np.ndarray, n: np.ndarray, sign: int) -> np.ndarray:
    """Change of G² when one record is added (sign=+1) to / removed (−1) from each cell."""
    def d(v: np.ndarray) -> np.ndarray:
        return xlogx(v + sign) - xlogx(v)
    gains = 2.0 * (d(T) - d(r)[:, :, None] - d(c)[:, None, :] + d(n)[:, None, None])
    if sign < 0:
        gains[T < 1] = np.nan
    return gains


def _greedy(T: np.ndarray, threshold: float, increase: bool, cap: int) -> int:
    """Length of a greedy path of unit changes that moves G² across ``threshold`` (≤ cap, else cap)."""
    T = T.copy()
    r, c, n = T.sum(axis=2), T.sum(axis=1), T.sum(axis=(1, 2))
    g = _stratum_g2(T)
    total = float(g.sum())
    want = 1.0 if increase else -1.0
    k = 0
    while k < cap:
        plus = _unit_gains(T, r, c, n, +1) * want
        minus = _unit_gains(T, r, c, n, -1) * want
        both = np.stack([plus, minus])
        flat = np.where(np.isnan(both), -np.inf, both).ravel()
        order = np.argsort(flat)[::-1][:2]
        best = order[0]
        if not np.isfinite(flat[best]) or flat[best] <= 0:
            return cap  # no unit change moves towards the threshold
        second = flat[order[1]] if len(order) > 1 and np.isfinite(flat[order[1]]) else 0.0
        which, s, a, b = np.unravel_index(best, both.shape)
        sign = 1 if which == 0 else -1
        limit = cap - k
        if sign < 0:
            limit = min(limit, int(T[s, a, b]))
        limit = max(1, min(limit, 4096))
        m = np.arange(1, limit + 1, dtype=np.float64) * sign
        new_g = g[s] + 2.0 * (xlogx(T[s, a, b] + m) - xlogx(T[s, a, b]) - xlogx(r[s, a] + m) + xlogx(r[s, a])
                              - xlogx(c[s, b] + m) + xlogx(c[s, b]) + xlogx(n[s] + m) - xlogx(n[s]))
        new_total = total - g[s] + new_g
        crossed = new_total >= threshold if increase else new_total < threshold
        if crossed.any():
            return k + int(np.argmax(crossed)) + 1
        marginal = np.diff(np.concatenate([[g[s]], new_g])) * want
        keep = marginal >= max(second, 0.0) - 1e-12
        steps = int(np.argmin(keep)) if not keep.all() else limit
        # far from the threshold, take at least a quarter of the linearised remaining gap at once
        gap = abs(threshold - total)
        steps = min(max(steps, 1, int(gap / (4.0 * flat[best]))), limit)
        delta = steps * sign
        T[s, a, b] += delta
        r[s, a] += delta
        c[s, b] += delta
        n[s] += delta
        g[s] = new_g[steps - 1]
        total = float(g.sum())
        k += steps
    return cap


def _one_step(state: np.ndarray, threshold: float, increase: bool) -> tuple[bool, list[tuple[int, np.ndarray]]]:
    """Whether one unit change of ``state`` moves G² across ``threshold`` and, if none does, the cells each sign can
    change (a record can be removed only from a non-empty cell)."""
    r, c, n = state.sum(axis=2), state.sum(axis=1), state.sum(axis=(1, 2))
    base = float(_stratum_g2(state).sum())
    moves = []
    for sign in (+1, -1):
        gains = _unit_gains(state, r, c, n, sign)
        valid = ~np.isnan(gains)
        new = base + np.where(valid, gains, 0.0)
        hit = (new >= threshold) if increase else (new < threshold)
        if np.any(hit & valid):
            return True, []
        moves.append((sign, valid))
    return False, moves


def _exact(T: np.ndarray, threshold: float, increase: bool, depth: int, max_states: int) -> int | None:
    """Breadth-first search: the smallest k ≤ depth crossing the threshold, ``depth + 1`` if none,
    ``None`` when more than ``max_states`` tables would have to be visited."""
    layer = {T.tobytes(): T}
    seen = set(layer)
    for k in range(1, depth + 1):
        nxt: dict[bytes, np.ndarray] = {}
        for state in layer.values():
            crossed, moves = _one_step(state, threshold, increase)
            if crossed:
                return k
            if k == depth:
                continue
            for sign, valid in moves:
                for idx in zip(*np.nonzero(valid)):
                    child = state.copy()
                    child[idx] += sign
                    key = child.tobytes()
                    if key not in seen:
                        seen.add(key)
                        nxt[key] = child
                        if len(seen) > max_states:
                            return None
        layer = nxt
        if not layer:
            break
    return depth + 1


def _near(T: np.ndarray, threshold: float, increase: bool, depth: int) -> int:
    """min(k*, ``depth`` + 1) for ``depth`` ≤ 2: the result of :func:`_exact` without a state budget, but with one
    neighbouring table in memory at a time.

    :func:`_exact` keeps the whole layer of tables one step away (2 · cells tables of cells counts, with their
    byte keys: about 32 · cells² bytes), so its memory, and with it whether a release could fail for want of
    memory, would depend on the table's occupied strata and on how near the test is to its threshold — both
    read from the data. Here each neighbour is built, checked and undone in place.
    """
    if depth > 2:
        raise ValueError(f"depth must be at most 2, got {depth}")
    crossed, moves = _one_step(T, threshold, increase) if depth >= 1 else (False, [])
    if crossed:
        return 1
    if depth == 2:
        child = T.copy()
        for sign, valid in moves:
            for idx in zip(*np.nonzero(valid)):
                child[idx] += sign
                hit = _one_step(child, threshold, increase)[0]
                child[idx] -= sign
                if hit:
                    return 2
    return depth + 1


def _exact_feasible(cells: int, depth: int, max_states: int) -> bool:
    """Whether the search over tables within ``depth`` steps fits its budget: the integer
    points of the L1 ball of radius depth − 1 in ``cells`` dimensions number
    Σ_j 2^j C(cells, j) C(depth − 1, j) (non-negativity removes some of them)."""
    if depth <= 1:
        return True
    radius = depth - 1
    j = np.arange(0, min(cells, radius) + 1)
    with np.errstate(over="ignore"):  # an overflowing count is simply "too many"
        points = float(np.sum(2.0 ** j * special.comb(cells, j) * special.comb(radius, j)))
    return points <= 4 * max_states


def _delta_f(x: np.ndarray) -> np.ndarray:
    """Δf(x) = f(x + 1) − f(x) for f(x) = x ln x."""
    return xlogx(x + 1.0) - xlogx(x)


def step_bounds(table: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """B_i for each i in ``radii``: how far one added/removed record can move G² within i steps of ``table``.

    The supremum of |ΔG²| over the box of tables whose cells, margins and
    stratum sizes lie within i + 1 of ``table``'s (see the Lemma in the module
    docstring). Vectorised over radii and cells.
    """
    T = np.asarray(table, dtype=np.float64)
    j = np.asarray(radii, dtype=np.float64).reshape(-1, 1, 1, 1) + 1.0
    O = T[None]
    R = T.sum(axis=2)[None, :, :, None]
    C = T.sum(axis=1)[None, :, None, :]
    N = T.sum(axis=(1, 2))[None, :, None, None]

    def low(x):
        return np.maximum(x - j, 0.0)

    up = _delta_f(O + j) - _delta_f(low(R)) - _delta_f(low(C)) + _delta_f(N + j)
    down = _delta_f(low(O)) - _delta_f(R + j) - _delta_f(C + j) + _delta_f(low(N))
    return 2.0 * np.maximum(up, -down).reshape(len(j), -1).max(axis=1)


BOX_CHUNK_ELEMENTS = 1 << 22
"""Most cells × radii :func:`_box_distance` hands :func:`step_bounds` at once (each of its temporaries then holds at
most 32 MiB, whatever the table's size)."""


def _box_distance(T: np.ndarray, gap: float, cap: int) -> int:
    """Smallest k ≥ 1 with B₀ + … + B_{k−1} ≥ gap (``cap`` if not reached by then)."""
    total = 0.0
    start, chunk = 0, 16
    most = max(1, BOX_CHUNK_ELEMENTS // max(T.size, 1))
    while start < cap:
        chunk = min(chunk, most)
        radii = np.arange(start, min(start + chunk, cap))
        cumulative = total + np.cumsum(step_bounds(T, radii))
        reached = np.flatnonzero(cumulative >= gap)
        if reached.size:
            return max(1, start + int(reached[0]) + 1)
        total = float(cumulative[-1])
        start += len(radii)
        chunk = min(chunk * 2, 4096)
    return cap


def flip_distance(table: np.ndarray, *, threshold: float, max_distance: int = 100_000,
                  exact_states: int = 500, method: Literal["lipschitz", "search"] = "lipschitz") -> DistanceResult:
    """Number of added/removed records needed to move G² of ``table`` across ``threshold``.

    ``table``: counts (strata, |X|, |Y|), e.g. from :func:`full_table`.
    ``threshold``: c of :func:`g2_threshold` (independent iff G² < c).
    ``max_distance``: data-independent cap; k is reported as ``min(k, max_distance)``.
    ``method``: "lipschitz" (provable sensitivity-1 lower bound, the default)
    or "search" (greedy upper bound refined by an exact search; no proven
    sensitivity where not exact) — see the module docstring.
    ``exact_states``: budget of the exact search of ``method="search"``.
    """
    T = np.asarray(table, dtype=np.float64)
    if T.ndim != 3:
        raise ValueError(f"table must have shape (strata, |X|, |Y|), got {T.shape}")
    if np.any(T < 0) or not np.all(np.isfinite(T)):
        raise ValueError("table must hold finite non-negative counts")
    max_distance = check_int(max_distance, "max_distance", minimum=1)
    exact_states = check_int(exact_states, "exact_states", minimum=0)
    if method not in ("lipschitz", "search"):
        raise ValueError(f"method must be 'lipschitz' or 'search', got {method!r}")
    statistic = g2_statistic(T)
    independent = statistic < threshold
    if method == "lipschitz":
        bound = _box_distance(T, abs(statistic - threshold), max_distance)
        if bound >= 3 or max_distance <= bound:  # min(k*, 3) ≤ 3 ≤ bound: the search cannot raise k
            return DistanceResult(min(bound, max_distance), False, independent, statistic, True)
        near = _near(T, threshold, independent, min(2, max_distance - 1))  # = min(k*, 3)
        return DistanceResult(min(max(bound, near), max_distance), near < 3, independent, statistic, True)
    upper = _greedy(T, threshold, increase=independent, cap=max_distance)
    if upper <= 1:
        return DistanceResult(1, True, independent, statistic, True)
    if exact_states and _exact_feasible(T.size, upper - 1, exact_states):
        found = _exact(T, threshold, independent, upper - 1, exact_states)
        if found is not None:
            return DistanceResult(min(found, upper), True, independent, statistic, True)
    return DistanceResult(upper, False, independent, statistic, False)


def distance_score(table: np.ndarray, *, threshold: float, max_distance: int = 100_000,
                   exact_states: int = 500, method: Literal["lipschitz", "search"] = "lipschitz") -> int:
    """Signed 1-Lipschitz distance score: k − 1 if the test says independent, −k otherwise (k = flip distance)."""
    return flip_distance(table, threshold=threshold, max_distance=max_distance, exact_states=exact_states,
                         method=method).score


def count_quality(scores: np.ndarray) -> np.ndarray:
    """Quality q₂(t), t = 0..α, of "t neighbours are independent" (paper 000, Eq. 6–8).

    With the scores u sorted decreasingly (u_(0) = +∞, u_(α+1) = −∞),
    q₂(t) = min(u_(t), −u_(t+1) − 1). This is exactly Eq. 6–8 written with the
    shifted scores of :class:`DistanceResult` (independent ⇔ u ≥ 0): the right
    count gets min(k_t − 1, k'_{t+1} − 1) ≥ 0, too small a count −k_{t+1}, too
    large a count −k'_t. Order statistics and minima of 1-Lipschitz functions
    are 1-Lipschitz, so q₂ has sensitivity 1 when every score has.
    """
    u = np.sort(np.asarray(scores, dtype=np.float64))[::-1]
    upper = np.concatenate([[np.inf], u])
    lower = np.concatenate([u, [-np.inf]])
    return np.minimum(upper, -lower - 1.0)

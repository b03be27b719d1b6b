"""Every pair table of a categorical data set released as its interaction and its margins (Gaussian mechanism).

A two-way table T of columns x and y (d_x × d_y counts) splits exactly into
an *additive* part, fixed by its row sums r, column sums c and total n, and an
*interaction* part, the double-centred table C_x T C_y (C_d = I − 11ᵀ/d):

    T = C_x T C_y + r 1ᵀ/d_y + 1 cᵀ/d_x − n 11ᵀ/(d_x d_y).

A test of x ⫫ y reads the interaction (the margins only set the expected
counts), and every pair table holding x has the same row sums, x's one-way
margin. So :func:`pair_interaction_mechanism` releases, for p columns, the
interaction of each of the p(p − 1)/2 pairs — its (d_x − 1)(d_y − 1)
coordinates Hᵀ T H in the orthonormal basis H of 1^⊥ (:func:`centred_basis`) —
and each column's one-way margin, with one Gaussian mechanism, and rebuilds
every pair table from them (post-processing). Its L2 sensitivity is smaller
than the full tables' √(2M) on many columns of few categories (a quarter of the
variance on many binary columns; the comparison is of public sizes): a replaced record that changes column x
but not y moves the (x, y) interaction by 2(1 − 1/d_y) in squared norm, one
that changes both by 2(1 − 1/d_x − 1/d_y) — so changing every column, the
worst case of full tables, is not the worst case here.

**Theorem (sensitivity).** Let a_x = 1/d_x, A = Σ_x a_x and b_x = p − A + a_x.
Under replace-one, the squared L2 distance between the released vectors of
two neighbouring data sets is at most

    Δ² = max_{k = 0..p} 2 (Σ_{the k largest b_x} b_x − k(k − 1)/2),

and this bound is attained (:func:`interaction_sensitivity`).

*Proof.* Let the replaced record change the columns of a set D (u_x = 1 for
x ∈ D). Column x's margin moves one count: squared change 2u_x. In the (x, y)
table one count moves from cell (i, j) to (i', j'); its interaction moves by
C_x e_{i'} ⊗ C_y e_{j'} − C_x e_i ⊗ C_y e_j, whose squared norm, from
‖C e_i‖² = 1 − a and ⟨C e_i, C e_{i'}⟩ = −a (i ≠ i'), is 0 if neither column
changes, 2(1 − a_y) if only x does, 2(1 − a_x) if only y does and
2(1 − a_x − a_y) if both do — whatever the values. In every case it equals
2[u_x(1 − a_y) + u_y(1 − a_x) − u_x u_y]. Summed over the margins and the pairs,
the squared distance is 2[Σ_x u_x b_x − k(k − 1)/2] with k = |D|, a function of
D alone; for a fixed k it is largest when D holds the k columns of largest b_x,
and every D is the change set of some replaced record. ∎

**Theorem (privacy).** Adding N(0, σ²) to every released coordinate with
σ = Δ/μ is μ-GDP under replace-one [Dong, Roth & Su 2022, Thm. 2.7]; the
rebuilt tables, and everything computed from them, are post-processing. The
worst case is data-independent: Δ depends on the public domain sizes only.

For p binary columns Δ² = ⌊(p + 2)²/4⌋ against the full tables' 2M = p(p − 1):
a quarter of the noise variance at p = 70 for the same μ.

**Noise of a rebuilt table.** T̂ = T + H E Hᵀ + e_x 1ᵀ/d_y + 1 e_yᵀ/d_x with
E, e_x, e_y i.i.d. N(0, σ²): in law, C_x G C_y for G with i.i.d. N(0, σ²)
cells, plus the two margins' noise spread evenly over the other column —
:func:`dpcd.ci.noisy.pair_table_noise` draws exactly this for the tests'
bootstrap, and two rebuilt tables that share a column share its margin noise.

Relation: replace one record (n public). Public: the domain sizes, n, μ.

>>> import numpy as np
>>> round(interaction_sensitivity([2, 2, 2, 2]) ** 2, 9), 2 * 6          # binary p = 4: 9 against 12
(9.0, 12)
>>> rng = np.random.default_rng(0)
>>> codes = rng.integers(0, 2, size=(1_000, 3))
>>> tables = {(a, b): np.histogram2d(codes[:, a], codes[:, b], bins=2)[0] for a, b in [(0, 1), (0, 2), (1, 2)]}
>>> exact, sigma, sensitivity = pair_interaction_mechanism(tables, [2, 2, 2], n=1_000, mu=1e9, rng=1)  # no noise
>>> all(np.allclose(exact[key], tables[key], atol=1e-6) for key in tables), round(sensitivity ** 2, 9)
(True, 6.0)
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Mapping, Sequence

import numpy as np

from ..validation import RngLike, as_rng, check_int, check_positive
from .mechanisms import gdp_gaussian_mechanism

__all__ = ["centred_basis", "interaction_sensitivity", "worst_columns", "interaction_vector",
           "pair_interaction_mechanism"]


def _levels(levels: Sequence[int]) -> np.ndarray:
    values = np.asarray([check_int(d, "levels", minimum=2) for d in levels], dtype=np.int64)
    if values.size < 2:
        raise ValueError(f"levels must give at least two columns' domain sizes, got {list(levels)!r}")
    return values


def centred_basis(d: int) -> np.ndarray:
    """An orthonormal basis (d × (d − 1), Helmert's) of the vectors of length ``d`` that sum to zero. Public.

    >>> basis = centred_basis(3)
    >>> bool(np.allclose(basis.T @ basis, np.eye(2))), bool(np.allclose(basis.sum(axis=0), 0.0))
    (True, True)
    """
    d = check_int(d, "d", minimum=2)
    basis = np.zeros((d, d - 1))
    for k in range(1, d):
        basis[:k, k - 1] = 1.0 / math.sqrt(k * (k + 1))
        basis[k, k - 1] = -k / math.sqrt(k * (k + 1))
    return basis


def _scores(levels: np.ndarray) -> np.ndarray:
    inverse = 1.0 / levels
    return levels.size - inverse.sum() + inverse


def _worst(levels: np.ndarray) -> tuple[float, int]:
    """Δ² and the size k of the worst change set (module theorem)."""
    best = np.sort(_scores(levels))[::-1]
    k = np.arange(levels.size + 1)
    squared = 2.0 * (np.concatenate([[0.0], np.cumsum(best)]) - k * (k - 1) / 2.0)
    size = int(np.argmax(squared))
    return float(squared[size]), size


def interaction_sensitivity(levels: Sequence[int]) -> float:
    """Δ, the L2 sensitivity under replace-one of every pair's interaction and every column's margin (module
    theorem, attained). A function of the public domain sizes only.

    >>> round(interaction_sensitivity([2] * 70) ** 2), 70 * 69            # against the full pair tables' 2M
    (1296, 4830)
    """
    return math.sqrt(_worst(_levels(levels))[0])


def worst_columns(levels: Sequence[int]) -> tuple[int, ...]:
    """Columns a replaced record changes to move the released vector by the full :func:`interaction_sensitivity`
    (the k columns of the largest scores b_x, i.e. the fewest categories): the neighbour an audit needs.

    >>> worst_columns([2, 2, 2, 2])
    (0, 1, 2)
    """
    values = _levels(levels)
    size = _worst(values)[1]
    order = np.argsort(-_scores(values), kind="stable")
    return tuple(sorted(int(c) for c in order[:size]))


def _pairs(tables: Mapping[tuple[int, int], np.ndarray], p: int) -> list[tuple[int, int]]:
    pairs = list(combinations(range(p), 2))
    if set(tables) != set(pairs):
        raise ValueError(f"tables must hold the pair table of every pair (a, b), a < b, of the {p} columns")
    return pairs


def _bases(values: np.ndarray) -> dict[int, np.ndarray]:
    return {int(d): centred_basis(int(d)) for d in set(values.tolist())}


def interaction_vector(tables: Mapping[tuple[int, int], np.ndarray], levels: Sequence[int]) -> np.ndarray:
    """The released statistic before noise: every pair's interaction coordinates Hᵀ T H (pairs in lexicographic
    order), then every column's margin (from the first pair table holding it). Exact; no privacy by itself.

    >>> t = {(0, 1): np.array([[3.0, 1.0], [1.0, 3.0]])}
    >>> np.round(interaction_vector(t, [2, 2]), 9).tolist()
    [2.0, 4.0, 4.0, 4.0, 4.0]
    """
    values = _levels(levels)
    return _interaction_vector(tables, values, _pairs(tables, values.size), _bases(values))


def _interaction_vector(tables: Mapping[tuple[int, int], np.ndarray], values: np.ndarray,
                        pairs: list[tuple[int, int]], bases: dict[int, np.ndarray]) -> np.ndarray:
    parts = []
    for a, b in pairs:
        table = np.asarray(tables[(a, b)], dtype=np.float64)
        if table.shape != (values[a], values[b]):
            raise ValueError(f"the ({a}, {b}) table has shape {table.shape}, expected {(values[a], values[b])}")
        parts.append((bases[int(values[a])].T @ table @ bases[int(values[b])]).ravel())
    margins = [np.asarray(tables[(0, 1)], dtype=np.float64).sum(axis=1)]
    margins += [np.asarray(tables[(0, c)], dtype=np.float64).sum(axis=0) for c in range(1, values.size)]
    return np.concatenate(parts + margins)


def pair_interaction_mechanism(tables: Mapping[tuple[int, int], np.ndarray], levels: Sequence[int], *, n: int,
                               mu: float, rng: RngLike) -> tuple[dict[tuple[int, int], np.ndarray], float, float]:
    """Release every pair table of p columns as interactions and margins with Gaussian noise (module theorem).

    ``tables`` maps each pair (a, b), a < b, of the p columns to its exact
    (d_a × d_b) table over one data set of ``n`` records; ``levels`` are the
    public domain sizes and ``n`` the public number of records (the rebuild's
    total; never read from the tables). Returns the rebuilt noisy pair tables (same keys),
    σ (per released coordinate) and the sensitivity Δ. μ-GDP under replace-one
    with n and the domains public; the noise of each rebuilt table is
    :func:`dpcd.ci.noisy.pair_table_noise`'s.
    """
    values = _levels(levels)
    mu = check_positive(mu, "mu")
    pairs = _pairs(tables, values.size)
    n = float(check_int(n, "n", minimum=0))
    sensitivity = interaction_sensitivity(values)
    bases = _bases(values)
    noisy = gdp_gaussian_mechanism(_interaction_vector(tables, values, pairs, bases), sensitivity=sensitivity, mu=mu,
                                   rng=as_rng(rng))
    sizes = [int((values[a] - 1) * (values[b] - 1)) for a, b in pairs]
    start = int(np.sum(sizes))
    margin_at = np.concatenate([[start], start + np.cumsum(values)])
    margins = [noisy[margin_at[c]:margin_at[c + 1]] for c in range(values.size)]
    released: dict[tuple[int, int], np.ndarray] = {}
    offset = 0
    for (a, b), size in zip(pairs, sizes):
        da, db = int(values[a]), int(values[b])
        coordinates = noisy[offset:offset + size].reshape(da - 1, db - 1)
        offset += size
        released[(a, b)] = (bases[da] @ coordinates @ bases[db].T + margins[a][:, None] / db
                            + margins[b][None, :] / da - n / (da * db))
    return released, sensitivity / mu, sensitivity

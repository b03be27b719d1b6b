"""One consistent estimate of a released table from every released table that overlaps it (post-processing).

A private search releases tables of overlapping column sets with independent
Gaussian noise: Marginal-PC releases every pair table at order 0, three-way
tables at order 1, four-way tables at order 2. A four-way table of
{x, y, z₁, z₂} is noisy in every cell, but its two- and three-way margins were
also measured — with far less noise per count, because a pair table's cell
sums many cells of a four-way table. :class:`TableEstimator` combines them.

**Components.** Give each column c of d_c categories the orthonormal basis
Q_c = [1/√d_c, H_c] of ℝ^{d_c} (H_c: :func:`dpcd.privacy.interactions.centred_basis`).
A table T over a column set C has the coordinates T ×_c Q_cᵀ; those whose
index is ≥ 1 exactly on the columns of A ⊆ C form its *A-component*. The
A-component of T is the A-component of T's A-margin M_A divided by
√(∏_{c ∈ C∖A} d_c), so every released table D ⊇ A measures the same vector,
the A-component of M_A:

    u_A(D) = √(∏_{c ∈ D∖A} d_c) · (A-component of D),

with i.i.d. noise of variance σ_D² ∏_{c ∈ D∖A} d_c per coordinate when D's cells
have i.i.d. N(0, σ_D²) noise (an orthonormal change of basis keeps i.i.d. noise
i.i.d.). A pair table rebuilt from interactions and margins
(:func:`~dpcd.privacy.interactions.pair_interaction_mechanism`) measures its
{a, b}-component with variance σ² per coordinate and its {a}-component through
column a's one released margin, the same for every pair holding a — that
margin counts once. The ∅-component is n, public.

**Estimate.** Measurements of different components, or of the same component
in different tables, have independent noise; within a component the
inverse-variance mean of the measurements is the best linear unbiased
estimate, with variance 1/Σ_D σ_D^{-2}∏^{-1}. Joining the components rebuilds
the table (:meth:`TableEstimator.table`): every margin it shares with another
table is the shared estimate, it sums to n, and its noise is again Gaussian
with a known variance per component (:class:`ComponentNoise`), which the tests'
bootstrap draws. On its highest component (no other table holds all of C) the
table keeps its own noise; on the margins it gains the other tables' precision.
This is the closed form of the least-squares fit of overlapping noisy marginals
(Private-PGM's estimation step, McKenna, Sheldon & Miklau 2019) when the
measurements are whole marginals with i.i.d. noise (the residual basis of
Xiao et al. 2023).

Privacy: post-processing of released tables and public values (n, the domain
sizes, the noise variances the mechanisms chose); it reads no data.

References
----------
McKenna, Sheldon & Miklau (2019), "Graphical-model based estimation and inference for differential privacy", ICML.
Xiao, Ding, Kifer et al. (2023), "An optimal and scalable matrix mechanism for noisy marginals under convex loss
functions" (ResidualPlanner), NeurIPS.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> codes = rng.integers(0, 2, size=(5_000, 3))
>>> exact = {c: np.histogramdd(codes[:, list(c)], bins=[2] * len(c))[0] for c in [(0, 1), (0, 2), (1, 2), (0, 1, 2)]}
>>> noisy = {c: t + rng.normal(0.0, 30.0 if len(c) == 2 else 300.0, size=t.shape) for c, t in exact.items()}
>>> estimator = TableEstimator([2, 2, 2], 5_000, [Measurement(c, t, 30.0 ** 2 if len(c) == 2 else 300.0 ** 2)
...                                               for c, t in noisy.items()])
>>> table, noise = estimator.table((0, 1, 2))
>>> round(float(table.sum()))                                          # the public n
5000
>>> bool(np.abs(table - exact[(0, 1, 2)]).mean() < np.abs(noisy[(0, 1, 2)] - exact[(0, 1, 2)]).mean())
True
>>> noise.cell_variance < 300.0 ** 2
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Iterable, Sequence

import numpy as np

from ..privacy.interactions import centred_basis
from ..validation import check_int, check_positive

__all__ = ["Measurement", "ComponentNoise", "TableEstimator", "full_basis"]


def full_basis(d: int) -> np.ndarray:
    """Q_d = [1/√d, H_d]: an orthonormal basis of ℝ^d whose first vector is constant. Public.

    >>> bool(np.allclose(full_basis(4).T @ full_basis(4), np.eye(4)))
    True
    """
    d = check_int(d, "d", minimum=2)
    return np.hstack([np.full((d, 1), 1.0 / math.sqrt(d)), centred_basis(d)])


def _change_basis(array: np.ndarray, bases: Sequence[np.ndarray], *, inverse: bool, first: int = 0) -> np.ndarray:
    """Multiply axis ``first + i`` of ``array`` by Q_iᵀ (to coordinates) or by Q_i (``inverse``: back to cells)."""
    for i, basis in enumerate(bases):
        matrix = basis if inverse else basis.T
        array = np.moveaxis(np.tensordot(matrix, array, axes=([1], [first + i])), 0, first + i)
    return array


@dataclass(frozen=True)
class Measurement:
    """One released table: ``columns`` (sorted, distinct), the noisy ``table`` (axes in that order), ``variance`` per
    cell of its i.i.d. Gaussian noise — or, with ``shared_margins`` (a pair table rebuilt by
    :func:`~dpcd.privacy.interactions.pair_interaction_mechanism`), per released coordinate, its one-way margins
    being the columns' released margins, shared by every such pair table."""

    columns: tuple[int, ...]
    table: np.ndarray
    variance: float
    shared_margins: bool = False


@dataclass(frozen=True)
class ComponentNoise:
    """The noise law of an estimated table: per coordinate in the bases ``bases`` (one per axis) an independent
    N(0, ``sd``²), ``sd`` of the table's shape. Draws are public randomness (the tests' bootstrap)."""

    sd: np.ndarray
    bases: tuple[np.ndarray, ...]

    @property
    def cell_variance(self) -> float:
        """The noise variance of each cell (the same for every cell: each component's projector has a constant
        diagonal)."""
        return float(np.sum(self.sd ** 2) / self.sd.size)

    def transpose(self, axes: Sequence[int]) -> "ComponentNoise":
        """The same law with the table's axes permuted."""
        return ComponentNoise(np.transpose(self.sd, axes), tuple(self.bases[a] for a in axes))

    def draw(self, draws: int, rng: np.random.Generator) -> np.ndarray:
        """``draws`` independent noise tables, shape (draws, *table shape)."""
        coordinates = rng.normal(size=(check_int(draws, "draws", minimum=1), *self.sd.shape)) * self.sd
        return _change_basis(coordinates, self.bases, inverse=True, first=1)


class TableEstimator:
    """Inverse-variance estimates of every component the ``measurements`` share (module docstring).

    ``levels`` are the public domain sizes, ``n`` the public number of records.
    Post-processing: reads the released tables and public values only.
    """

    def __init__(self, levels: Sequence[int], n: int, measurements: Iterable[Measurement] = ()):
        self.levels = np.asarray(levels, dtype=np.int64)
        self.n = float(check_int(n, "n", minimum=0))
        self.bases = {int(d): full_basis(int(d)) for d in set(self.levels.tolist())}
        self._sources: dict[tuple[int, ...], list[tuple[np.ndarray, float]]] = {}
        self._margins: set[int] = set()
        self._estimates: dict[tuple[int, ...], tuple[np.ndarray, float]] = {}
        self.add(measurements)

    def add(self, measurements: Iterable[Measurement]) -> None:
        """Add released tables; every estimate is refreshed on its next use."""
        for m in measurements:
            columns = tuple(int(c) for c in m.columns)
            if list(columns) != sorted(set(columns)):
                raise ValueError(f"measurement columns must be sorted and distinct, got {m.columns!r}")
            table = np.asarray(m.table, dtype=np.float64)
            if table.shape != tuple(int(self.levels[c]) for c in columns):
                raise ValueError(f"the table of columns {columns} has shape {table.shape}, expected "
                                 f"{tuple(int(self.levels[c]) for c in columns)}")
            variance = check_positive(m.variance, "variance")
            coordinates = _change_basis(table, [self.bases[int(self.levels[c])] for c in columns], inverse=False)
            for size in range(1, len(columns) + 1):
                for subset in combinations(range(len(columns)), size):
                    component = tuple(columns[i] for i in subset)
                    shared = m.shared_margins and size == 1
                    if shared and component[0] in self._margins:
                        continue  # one released margin, whichever pair table rebuilt it
                    if shared:
                        self._margins.add(component[0])
                    factor = float(np.prod([self.levels[c] for c in columns if c not in component]))
                    index = tuple(slice(1, None) if i in subset else 0 for i in range(len(columns)))
                    self._sources.setdefault(component, []).append(
                        (math.sqrt(factor) * coordinates[index], variance if shared else variance * factor))
        self._estimates.clear()

    def component(self, component: tuple[int, ...]) -> tuple[np.ndarray, float]:
        """The estimate of the ``component`` (sorted columns) of its own margin and its noise variance per
        coordinate; KeyError if no measurement holds those columns."""
        if component not in self._estimates:
            sources = self._sources[component]
            weights = np.array([1.0 / v for _, v in sources])
            value = sum(w * u for w, (u, _) in zip(weights, sources)) / weights.sum()
            self._estimates[component] = (value, 1.0 / float(weights.sum()))
        return self._estimates[component]

    def table(self, columns: Sequence[int]) -> tuple[np.ndarray, ComponentNoise]:
        """The estimated table of ``columns`` (axes in the order given) and its noise law. Every non-empty subset of
        the columns must lie in some measurement."""
        columns = tuple(int(c) for c in columns)
        ordered = tuple(sorted(columns))
        if len(set(ordered)) != len(ordered) or not ordered:
            raise ValueError(f"columns must be distinct and non-empty, got {columns!r}")
        shape = tuple(int(self.levels[c]) for c in ordered)
        coordinates = np.zeros(shape)
        sd = np.zeros(shape)
        total = float(np.prod(shape))
        coordinates[(0,) * len(shape)] = self.n / math.sqrt(total)
        for size in range(1, len(ordered) + 1):
            for subset in combinations(range(len(ordered)), size):
                value, variance = self.component(tuple(ordered[i] for i in subset))
                rest = float(np.prod([shape[i] for i in range(len(shape)) if i not in subset]))
                index = tuple(slice(1, None) if i in subset else 0 for i in range(len(shape)))
                coordinates[index] = value / math.sqrt(rest)
                sd[index] = math.sqrt(variance / rest)
        bases = tuple(self.bases[d] for d in shape)
        table = _change_basis(coordinates, bases, inverse=True)
        axes = [ordered.index(c) for c in columns]
        return np.transpose(table, axes), ComponentNoise(sd, bases).transpose(axes)

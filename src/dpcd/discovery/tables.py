"""PC decisions from one released contingency table: its marginals, summed in few passes, and G² tests on them.

Shared by the algorithms that release (or fit) a full table and run PC on it — LapMech
(:mod:`dpcd.discovery.lapmech`, a Laplace-noised table) and AIM-PC (:mod:`dpcd.discovery.aim_pc`, a fitted
distribution scaled to n). Everything here reads the table only: post-processing of whatever released it.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy import special

from ..ci.distance import g2_public_dof, g2_statistic
from ..validation import check_int
from .pc import Decider

__all__ = ["all_marginals", "NoisyTableDecider", "check_table_cells"]


def check_table_cells(levels: Sequence[int], max_cells: int, algorithm: str) -> int:
    """The number of cells of the full table over the public domain sizes ``levels``; ``ValueError`` naming
    ``max_cells`` when there are more. A function of public values only, so the refusal says nothing about the data
    (callers check it before they read any).

    >>> check_table_cells((2, 3, 4), 24, "LapMech")
    24
    """
    cells = math.prod(int(k) for k in levels)
    if cells > max_cells:
        raise ValueError(
            f"{algorithm} needs the full contingency table of {cells:,} cells (product of the domain sizes "
            f"{[int(k) for k in levels]}), more than max_cells={max_cells:,} ({4 * max_cells / 2**20:.0f} MiB as "
            f"float32); it is infeasible for this many variables/categories (raise max_cells only if the memory is "
            "really there)")
    return cells


def all_marginals(table: np.ndarray, size: int) -> dict[tuple[int, ...], np.ndarray]:
    """Every marginal of ``table`` over ``size`` of its axes, as float64 sums.

    Returns ``{axes: marginal}`` with ``axes`` an increasing tuple and the
    marginal's axes in that order (``table.sum`` over the other axes). A
    depth-first sweep sums out one axis at a time, from the last, and shares
    each partial sum between all sets that agree on the axes already passed:
    the work is a small multiple of the table's size instead of one pass over
    the table per marginal.

    >>> t = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    >>> m = all_marginals(t, 2)
    >>> sorted(m), bool(np.allclose(m[(0, 2)], t.sum(axis=1)))
    ([(0, 1), (0, 2), (1, 2)], True)
    """
    if not isinstance(table, np.ndarray):
        raise TypeError(f"table must be a numpy array, got {type(table).__name__}")
    size = check_int(size, "size", minimum=0)
    if size > table.ndim:
        raise ValueError(f"size must be at most the number of axes ({table.ndim}), got {size}")
    out: dict[tuple[int, ...], np.ndarray] = {}

    def visit(array: np.ndarray, j: int, kept: tuple[int, ...]) -> None:
        # axes 0..j-1 of the table are still to be passed; the array holds them, then the kept axes
        if j == 0:
            out[kept] = np.asarray(array, dtype=np.float64)
            return
        axis = j - 1
        if len(kept) < size:
            visit(array, axis, (axis, *kept))
        if axis >= size - len(kept):
            visit(array.sum(axis=axis, dtype=np.float64), axis, kept)

    visit(table, table.ndim, ())
    return out


class NoisyTableDecider(Decider):
    """PC decisions from G² tests on marginals of one released noisy table (post-processing only)."""

    def __init__(self, table: np.ndarray, alpha: float, *, batch_size: int = 4):
        self.table = table
        self.alpha = alpha
        self.levels = table.shape
        self.batch_size = check_int(batch_size, "batch_size", minimum=0)
        self._cache: dict[tuple[int, int, tuple[int, ...]], float] = {}
        self._marginals: dict[tuple[int, ...], np.ndarray] = {}
        self._batched: set[int] = set()
        self.n_computed = 0

    def _sorted_marginal(self, axes: tuple[int, ...]) -> np.ndarray:
        """Unclipped float64 marginal over ``axes`` (increasing), its axes in that order.

        Marginals over at most ``batch_size`` variables are computed all at once,
        the first time one of that size is asked for (:func:`all_marginals`:
        a few passes over the table instead of one pass per test); larger ones
        are summed directly from the table. Post-processing of the released
        table only.
        """
        if axes in self._marginals:
            return self._marginals[axes]
        size = len(axes)
        if size <= self.batch_size and size not in self._batched:
            self._batched.add(size)
            self._marginals.update(all_marginals(self.table, size))
            return self._marginals[axes]
        drop = tuple(a for a in range(self.table.ndim) if a not in axes)
        return self.table.sum(axis=drop, dtype=np.float64) if drop else self.table.astype(np.float64)

    def marginal(self, x: int, y: int, S: Sequence[int]) -> np.ndarray:
        """Noisy (S, X, Y) table, negative cells clipped to 0, shape (∏|S|, |X|, |Y|)."""
        keep = [*S, x, y]
        remaining = sorted(keep)
        m = self._sorted_marginal(tuple(remaining))
        # the remaining axes are in increasing order; bring them to (S..., x, y)
        m = np.transpose(m, [remaining.index(a) for a in keep])
        m = m.reshape(-1, self.levels[x], self.levels[y])
        return np.clip(m, 0.0, None)

    def p_value(self, x: int, y: int, S: tuple[int, ...]) -> float:
        a, b = min(x, y), max(x, y)
        key = (a, b, tuple(sorted(S)))
        if key not in self._cache:
            self.n_computed += 1
            dof = g2_public_dof(self.levels[a], self.levels[b], [self.levels[s] for s in key[2]])
            statistic = g2_statistic(self.marginal(a, b, key[2]))
            self._cache[key] = float(special.chdtrc(dof, statistic))
        return self._cache[key]

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        return self.p_value(x, y, S) > self.alpha

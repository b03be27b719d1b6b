"""Neighbouring data sets for privacy audits: plain, random and adversarial constructions.

Differential privacy is a statement about *every* pair of neighbouring data
sets, so an audit (:mod:`dpcd.audit.runner`) is only as strong as the pair it runs
on. Random pairs rarely expose a problem; this module builds the pairs where
a mechanism is most sensitive:

* :func:`add_record`, :func:`remove_record`, :func:`replace_record` — a
  :class:`NeighbouringPair` from one data set and one record (e.g. a record
  **at the clipping bound**);
* :func:`random_neighbour` — a random record added, removed or replaced;
* :func:`adversarial_record` — the candidate record (from a small discrete
  domain, see :func:`discrete_domain`, or the corners of a box, see
  :func:`corner_records`) whose addition/replacement moves a statistic most;
* :func:`borderline_ci_pair` — categorical data whose marginal test of
  X ⫫ Y (G² for EM-PC and LapMech, Kendall's τ for Priv-PC, SVT-PC and
  CURATE) sits just at the significance level, and the one-record neighbour
  that **flips the test's decision** (the pair on which a PC-style decision
  is most fragile);
* :func:`outlier_pair` — numeric data plus one record at a corner of the
  clipping box that moves the correlation of X and Y the most.

Relations: ``"add/remove"`` (D′ has one record more or fewer) and
``"replace"`` (D′ has one record changed, same n); :class:`NeighbouringPair`
checks that its two data sets are neighbours under its relation.

References
----------
.. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. 2014, Def. 2.4.
.. [DWWZK18] Z. Ding et al. Detecting Violations of Differential Privacy. CCS 2018 (pair search).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..validation import RngLike, as_rng, check_int, check_positive, check_probability

__all__ = [
    "RELATIONS",
    "NeighbouringPair",
    "are_neighbours",
    "add_record",
    "remove_record",
    "replace_record",
    "random_neighbour",
    "discrete_domain",
    "corner_records",
    "adversarial_record",
    "g2_pvalue_2x2",
    "kendall_pvalue_2x2",
    "PVALUES_2X2",
    "borderline_ci_pair",
    "outlier_pair",
    "crossing_pair",
]

RELATIONS = ("add/remove", "replace")


def _records(data: Any) -> np.ndarray:
    """Data as a 2-D array of records (a 1-D array is one value per record)."""
    array = data.to_numpy() if isinstance(data, (pd.DataFrame, pd.Series)) else np.asarray(data)
    if array.ndim == 1:
        array = array.reshape(-1, 1)
    if array.ndim != 2:
        raise ValueError(f"data must be 1-D (one value per record) or 2-D (records x variables), got shape "
                         f"{array.shape}")
    return array


def _sorted_rows(array: np.ndarray) -> np.ndarray:
    if array.shape[0] == 0:
        return array
    order = np.lexsort(array.T[::-1])
    return array[order]


def are_neighbours(data: Any, neighbour: Any, relation: str) -> bool:
    """Whether the record multisets of ``data`` and ``neighbour`` differ by one record under ``relation``.

    add/remove: one has exactly one record more and contains the other;
    replace: same size, at most one record differs. Vectorised (sorting rows).
    """
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    a, b = _records(data), _records(neighbour)
    if a.shape[1] != b.shape[1]:
        return False
    if relation == "add/remove":
        if abs(a.shape[0] - b.shape[0]) != 1:
            return False
        small, large = (a, b) if a.shape[0] < b.shape[0] else (b, a)
        return _multiset_minus_one(large, small) is not None
    if a.shape[0] != b.shape[0]:
        return False
    sa, sb = _sorted_rows(a), _sorted_rows(b)
    if np.array_equal(sa, sb):
        return True
    # remove each distinct row of a that is not matched; exactly one row of a and one of b differ
    rows_a = [tuple(r) for r in sa.tolist()]
    rows_b = [tuple(r) for r in sb.tolist()]
    from collections import Counter

    diff_a = Counter(rows_a) - Counter(rows_b)
    diff_b = Counter(rows_b) - Counter(rows_a)
    return sum(diff_a.values()) == 1 and sum(diff_b.values()) == 1


def _multiset_minus_one(large: np.ndarray, small: np.ndarray) -> int | None:
    """Index (in sorted ``large``) of the one extra record, or None if small ⊄ large."""
    from collections import Counter

    diff = Counter(tuple(r) for r in large.tolist()) - Counter(tuple(r) for r in small.tolist())
    if sum(diff.values()) != 1:
        return None
    return 0


@dataclass(frozen=True)
class NeighbouringPair:
    """Two neighbouring data sets D (``data``) and D′ (``neighbour``) under ``relation``.

    ``description`` says how the pair was built (shown in audit tables);
    ``meta`` holds anything else worth reporting (e.g. the p-values on D and D′).
    The constructor checks the relation with :func:`are_neighbours` unless
    ``check=False``.
    """

    data: Any = field(repr=False)
    neighbour: Any = field(repr=False)
    relation: str = "add/remove"
    description: str = ""
    meta: dict = field(default_factory=dict, repr=False, compare=False)
    check: bool = field(default=True, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {RELATIONS}, got {self.relation!r}")
        if not isinstance(self.description, str):
            raise TypeError(f"description must be a string, got {type(self.description).__name__}")
        if self.check and not are_neighbours(self.data, self.neighbour, self.relation):
            raise ValueError(f"data and neighbour are not neighbours under {self.relation!r}")

    def swapped(self) -> "NeighbouringPair":
        """The same pair with D and D′ exchanged."""
        return NeighbouringPair(self.neighbour, self.data, self.relation, self.description, dict(self.meta),
                                check=False)


def _append(data: Any, record: Any) -> Any:
    if isinstance(data, pd.DataFrame):
        row = pd.DataFrame([np.asarray(record).reshape(-1)], columns=data.columns).astype(data.dtypes.to_dict())
        return pd.concat([data, row], ignore_index=True)
    array = np.asarray(data)
    if array.ndim == 1:
        return np.concatenate([array, np.asarray([record], dtype=array.dtype)])
    return np.vstack([array, np.asarray(record, dtype=array.dtype).reshape(1, -1)])


def _check_index(data: Any, index: int) -> int:
    n = len(data)
    index = check_int(index, "index")
    if not -n <= index < n:
        raise ValueError(f"index must lie in [{-n}, {n}), got {index}")
    return index % n


def add_record(data: Any, record: Any, *, description: str = "", meta: dict | None = None) -> NeighbouringPair:
    """D = ``data``, D′ = ``data`` plus ``record`` (add/remove relation)."""
    neighbour = _append(data, record)
    return NeighbouringPair(data, neighbour, "add/remove", description or f"D′ = D + record {record!r}",
                            dict(meta or {}))


def remove_record(data: Any, index: int, *, description: str = "", meta: dict | None = None) -> NeighbouringPair:
    """D = ``data``, D′ = ``data`` without its record number ``index`` (add/remove relation)."""
    index = _check_index(data, index)
    if isinstance(data, pd.DataFrame):
        neighbour = data.drop(index=data.index[index]).reset_index(drop=True)
    else:
        neighbour = np.delete(np.asarray(data), index, axis=0)
    return NeighbouringPair(data, neighbour, "add/remove", description or f"D′ = D − record {index}",
                            dict(meta or {}))


def replace_record(data: Any, index: int, record: Any, *, description: str = "",
                   meta: dict | None = None, check: bool = True) -> NeighbouringPair:
    """D = ``data``, D′ = ``data`` with record ``index`` replaced by ``record`` (replace relation)."""
    index = _check_index(data, index)
    if isinstance(data, pd.DataFrame):
        neighbour = data.copy()
        neighbour.iloc[index] = np.asarray(record).reshape(-1)
    else:
        neighbour = np.array(data, copy=True)
        neighbour[index] = record
    return NeighbouringPair(data, neighbour, "replace",
                            description or f"D′ = D with record {index} replaced by {record!r}", dict(meta or {}),
                            check=check)


def random_neighbour(data: Any, *, relation: str, rng: RngLike,
                     sample_record: Callable[[np.random.Generator], Any] | None = None) -> NeighbouringPair:
    """A random neighbour: add or replace with ``sample_record(rng)`` (default: a copy of a random
    record with one value taken from another random record), or remove a random record.
    """
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    generator = as_rng(rng)
    array = _records(data)
    n = array.shape[0]

    def default_record(g: np.random.Generator):
        base = array[g.integers(n)].copy()
        column = g.integers(array.shape[1])
        base[column] = array[g.integers(n), column]
        return base if np.asarray(data).ndim > 1 or isinstance(data, pd.DataFrame) else base[0]

    sampler = sample_record or default_record
    if relation == "replace":
        return replace_record(data, int(generator.integers(n)), sampler(generator), description="random replacement")
    if generator.random() < 0.5:
        return add_record(data, sampler(generator), description="random record added")
    return remove_record(data, int(generator.integers(n)), description="random record removed")


def discrete_domain(levels: Sequence[int]) -> np.ndarray:
    """Every record of the product domain ∏ {0..levels[j]−1} (rows), for small domains."""
    levels = [check_int(k, "levels", minimum=1) for k in levels]
    size = int(np.prod(levels))
    if size > 100_000:
        raise ValueError(f"the domain has {size} records; adversarial search enumerates at most 100000")
    return np.array(list(itertools.product(*[range(k) for k in levels])), dtype=np.int64)


def corner_records(low: Sequence[float], high: Sequence[float]) -> np.ndarray:
    """The 2^p corners of the box ∏ [low_j, high_j] (records at the clipping bounds)."""
    low = np.asarray(low, dtype=np.float64)
    high = np.asarray(high, dtype=np.float64)
    if low.shape != high.shape or low.ndim != 1:
        raise ValueError("low and high must be 1-D of the same length")
    if low.size > 16:
        raise ValueError("corner_records enumerates at most 2^16 corners")
    bits = np.array(list(itertools.product([0, 1], repeat=low.size)), dtype=bool)
    return np.where(bits, high, low)


def adversarial_record(
    data: Any,
    statistic: Callable[[Any], float],
    candidates: np.ndarray,
    *,
    relation: str = "add/remove",
    index: int | None = None,
) -> tuple[NeighbouringPair, float]:
    """The candidate neighbour that moves ``statistic`` the most.

    add/remove: D′ = D + r for each candidate r (and D′ = D − record i for each
    distinct record); replace: record ``index`` (default: each distinct record
    value) replaced by r. Returns ``(pair, |statistic(D′) − statistic(D)|)``
    for the maximiser. ``statistic`` takes the data in the same form as ``data``.
    """
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    if not callable(statistic):
        raise TypeError("statistic must be callable as statistic(data) -> float")
    candidates = np.asarray(candidates)
    if candidates.ndim == 1:
        candidates = candidates.reshape(-1, 1) if _records(data).shape[1] == 1 and np.asarray(data).ndim > 1 \
            else candidates
    base = float(statistic(data))
    array = np.asarray(data)
    best: tuple[float, NeighbouringPair | None] = (-1.0, None)

    def consider(pair: NeighbouringPair) -> None:
        nonlocal best
        change = abs(float(statistic(pair.neighbour)) - base)
        if change > best[0]:
            best = (change, pair)

    if relation == "add/remove":
        for record in candidates:
            consider(add_record(data, record, description=f"D′ = D + adversarial record {np.asarray(record).tolist()}"))
        _, first = np.unique(_records(data), axis=0, return_index=True)
        for i in first:
            consider(remove_record(data, int(i), description=f"D′ = D − adversarial record "
                                                             f"{np.asarray(array[i]).tolist()}"))
    else:
        indices = [index] if index is not None else np.unique(_records(data), axis=0, return_index=True)[1]
        for i in indices:
            for record in candidates:
                if np.array_equal(np.asarray(array[i]), np.asarray(record)):
                    continue
                consider(replace_record(data, int(i), record, description=(
                    f"D′ = D with record {np.asarray(array[i]).tolist()} replaced by {np.asarray(record).tolist()}")))
    assert best[1] is not None
    return best[1], best[0]


def g2_pvalue_2x2(table: np.ndarray) -> float:
    """p-value of the G² test of independence of a 2 × 2 table of counts (1 degree of freedom)."""
    table = np.asarray(table, dtype=np.float64)
    n = table.sum()
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(table > 0, table * np.log(table / expected), 0.0)
    g2 = 2.0 * float(terms.sum())
    return float(stats.chi2.sf(max(g2, 0.0), 1))


def kendall_pvalue_2x2(table: np.ndarray) -> float:
    """Two-sided p-value of the Kendall τ-a test of a 2 × 2 table of counts (:func:`dpcd.ci.stratified_kendall`)."""
    from ..ci import stratified_kendall

    return float(stratified_kendall(np.asarray(table, dtype=np.int64)[None, :, :], "a").p_value)


PVALUES_2X2: dict[str, Callable[[np.ndarray], float]] = {"g2": g2_pvalue_2x2, "kendall": kendall_pvalue_2x2}
"""The 2 × 2 tests a borderline pair can be built for."""


def _table_rows(table: np.ndarray) -> np.ndarray:
    """Rows (x, y) with the given 2 × 2 counts, in cell order."""
    cells = [(i, j) for i in range(2) for j in range(2)]
    return np.repeat(np.array(cells, dtype=np.int64), table.reshape(-1).astype(np.int64), axis=0)


def borderline_ci_pair(
    *, n: int, alpha: float, n_variables: int = 3, rng: RngLike, relation: str = "add/remove",
    test: str = "g2",
) -> NeighbouringPair:
    """Binary data where the test of X₀ ⫫ X₁ sits at α, and the neighbour that flips it.

    ``test``: "g2" (the statistic of EM-PC and LapMech) or "kendall" (the
    τ-a test of Priv-PC, SVT-PC and CURATE; two-sided p-value).

    Starts from the balanced independent 2 × 2 table of (X₀, X₁) with ``n``
    records and moves one record at a time from an off-diagonal to a diagonal
    cell (stronger dependence) until one record decides the test: with
    ``relation="add/remove"`` D′ differs from D by one record and the G²
    p-value is ≥ α on D and < α on D′ (or the reverse, by removal);
    with ``"replace"`` the last step itself is the pair. The other
    ``n_variables − 2`` columns are independent fair coins drawn with ``rng``,
    so in D the edge X₀ − X₁ is kept or removed by the order-0 test alone.
    ``meta`` holds both p-values.
    """
    n = check_int(n, "n", minimum=8)
    alpha = check_probability(alpha, "alpha")
    n_variables = check_int(n_variables, "n_variables", minimum=2)
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    if test not in PVALUES_2X2:
        raise ValueError(f"test must be one of {sorted(PVALUES_2X2)}, got {test!r}")
    pvalue = PVALUES_2X2[test]
    generator = as_rng(rng)
    quarter, extra = divmod(n, 4)
    table = np.full((2, 2), quarter, dtype=np.int64)
    for k in range(extra):
        table[k // 2, k % 2] += 1
    if pvalue(table) < alpha:
        raise ValueError("alpha is too large: even the balanced table is rejected")
    moves = itertools.cycle([((0, 1), (0, 0)), ((1, 0), (1, 1))])
    previous = table.copy()
    for source, target in moves:
        if table[source] == 0:
            raise ValueError(f"no borderline table with n={n} at alpha={alpha}")
        previous = table.copy()
        table[source] -= 1
        table[target] += 1
        added = table.copy()
        added[target] += 1
        if pvalue(table) >= alpha and pvalue(added) < alpha:
            before, after, kind = table, added, "add"
            break
        if pvalue(table) < alpha:
            # previous ≥ α, table < α: previous + target ≥ α? then removing the source record of it flips
            bigger = previous.copy()
            bigger[target] += 1
            if relation == "replace":
                before, after, kind = previous, table, "replace"
            elif pvalue(bigger) >= alpha:
                before, after, kind = bigger, table, "remove"
            else:
                before, after, kind = previous, bigger, "add"
            break
    if relation == "replace" and kind != "replace":
        # turn the add into a replace: take the record from an off-diagonal cell
        after = after.copy()
        after[(0, 1)] -= 1
        if pvalue(after) >= alpha:
            raise ValueError("could not build a flipping replace pair")
        kind = "replace"
    rows_before = _table_rows(before)
    rows_after = _table_rows(after)
    m = max(len(rows_before), len(rows_after))
    others = generator.integers(0, 2, size=(m, n_variables - 2))

    def assemble(rows: np.ndarray, index_map: np.ndarray) -> np.ndarray:
        return np.hstack([rows, others[index_map]])

    # align the extra columns so that the two data sets share all records but one
    if kind == "replace":
        data_b = assemble(rows_before, np.arange(len(rows_before)))
        # the changed record: the one that moved between cells
        diff_from = tuple(int(v) for v in np.argwhere(before - after > 0)[0])
        diff_to = tuple(int(v) for v in np.argwhere(after - before > 0)[0])
        idx = int(np.flatnonzero((rows_before == diff_from).all(axis=1))[0])
        data_a = data_b.copy()
        data_a[idx, :2] = diff_to
    else:
        small, large = (before, after) if kind == "add" else (after, before)
        rows_small = _table_rows(small)
        extra_cell = tuple(int(v) for v in np.argwhere(large - small > 0)[0])
        base = assemble(rows_small, np.arange(len(rows_small)))
        record = np.concatenate([extra_cell, others[len(rows_small)]]).astype(np.int64)
        with_extra = np.vstack([base, record])
        data_b, data_a = (base, with_extra) if kind == "add" else (with_extra, base)
    meta = {"p_value_D": pvalue(before), "p_value_D_prime": pvalue(after), "alpha": alpha}
    description = (f"borderline {'G²' if test == 'g2' else 'Kendall'} test of columns 0 ⫫ 1 "
                   f"(p = {meta['p_value_D']:.3g} on D, "
                   f"{meta['p_value_D_prime']:.3g} on D′, α = {alpha:g}); {kind} one record")
    return NeighbouringPair(data_b, data_a, relation, description, meta)


def outlier_pair(
    data: Any, *, bound: float, x: int = 0, y: int = 1, relation: str = "add/remove",
) -> NeighbouringPair:
    """Numeric data (clipped to [−bound, bound]) plus the corner record that moves corr(X_x, X_y) most.

    Candidates are the 2^p corners of the clipping box (at most 2^12 of them
    are enumerated; beyond that only the four sign patterns of (X_x, X_y),
    other coordinates at 0). With ``relation="replace"`` the replaced record is
    the one closest to the origin.
    """
    bound = check_positive(bound, "bound")
    array = np.clip(np.asarray(data, dtype=np.float64), -bound, bound)
    if array.ndim != 2 or array.shape[1] < 2:
        raise ValueError("data must be 2-D with at least two columns")
    p = array.shape[1]
    for name, value in (("x", x), ("y", y)):
        check_int(value, name, minimum=0)
        if value >= p:
            raise ValueError(f"{name} must be a column index < {p}, got {value}")
    if p <= 12:
        candidates = corner_records(np.full(p, -bound), np.full(p, bound))
    else:
        candidates = np.zeros((4, p))
        candidates[:, [x, y]] = np.array([[-1, -1], [-1, 1], [1, -1], [1, 1]]) * bound

    def corr(d: np.ndarray) -> float:
        return float(np.corrcoef(d[:, x], d[:, y])[0, 1])

    index = int(np.argmin(np.abs(array).sum(axis=1))) if relation == "replace" else None
    pair, change = adversarial_record(array, corr, candidates, relation=relation, index=index)
    description = f"D′ = D with one record at a corner of the clipping box [−{bound:g}, {bound:g}]^{p} " \
                  f"(|Δ corr(X{x}, X{y})| = {change:.3g})"
    return NeighbouringPair(pair.data, pair.neighbour, relation, description, {"correlation_change": change})


def crossing_pair(
    make_data: Callable[[float], np.ndarray],
    statistic: Callable[[np.ndarray], float],
    *,
    target: float,
    candidates: np.ndarray,
    relation: str = "replace",
    low: float = 0.0,
    high: float = 1.0,
    iterations: int = 40,
) -> NeighbouringPair:
    """A pair where ``statistic`` is just above ``target`` on D and below it on D′.

    ``make_data(c)`` builds a data set whose statistic decreases in ``c``;
    bisection on ``c`` ∈ [low, high] finds D with statistic just ≥ ``target``,
    then :func:`adversarial_record` picks the candidate record that lowers it
    the most. Used for algorithms with a data-dependent, noiseless branch
    (PCD skips the noise when p − Δ_P > α): D sits in the noiseless branch and
    D′ just outside it. Raises ``ValueError`` if no candidate crosses.
    """
    if not (callable(make_data) and callable(statistic)):
        raise TypeError("make_data and statistic must be callable")
    check_int(iterations, "iterations", minimum=1)
    if statistic(make_data(low)) < target or statistic(make_data(high)) >= target:
        raise ValueError("statistic(make_data(low)) must be >= target > statistic(make_data(high))")
    for _ in range(iterations):
        middle = 0.5 * (low + high)
        if statistic(make_data(middle)) >= target:
            low = middle
        else:
            high = middle
    data = make_data(low)
    best: NeighbouringPair | None = None
    best_value = np.inf
    array = np.asarray(data)
    indices = range(len(array)) if relation == "replace" else [None]
    for i in indices:
        for record in np.asarray(candidates):
            pair = (replace_record(data, i, record, check=False) if relation == "replace"
                    else add_record(data, record))
            value = float(statistic(pair.neighbour))
            if value < best_value:
                best, best_value = pair, value
        if best_value < target:
            break
    if best is None or best_value >= target:
        raise ValueError("no candidate record moves the statistic below target; try other candidates")
    value_d = float(statistic(data))
    return NeighbouringPair(data, best.neighbour, relation,
                            f"statistic {value_d:.4g} ≥ {target:.4g} on D, {best_value:.4g} on D′",
                            {"statistic_D": value_d, "statistic_D_prime": best_value, "target": target})

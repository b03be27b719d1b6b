"""A CI test bound to one dataset (:class:`CITester`), memoised per question, and the test names.

>>> import numpy as np
>>> codes = np.random.default_rng(0).integers(0, 2, size=(200, 3))
>>> tester = CITester(codes, "g2", levels=[2, 2, 2])
>>> tester(0, 1, (2,)).p_value == tester(1, 0, (2,)).p_value, tester.n_computed
(True, 1)
"""

from __future__ import annotations

import math
from typing import Callable, Literal, Sequence

import numpy as np

from ..schema import check_codes, public_levels
from ..validation import as_code_matrix, as_data_matrix
from .discrete import (
    check_degenerate,
    chi2_type_statistic,
    contingency_table,
    distinct_rows,
    observed_levels,
    stratified_kendall,
    stratified_spearman,
)
from .fisher import SingularCovarianceError, fisher_z_from_matrix
from .result import CIResult

__all__ = ["TESTS", "CITester", "DISTINCT_SHARE"]

DISTINCT_SHARE = 0.5
"""``distinct=None`` counts distinct rows only when at most this share of the rows are distinct."""


TESTS: dict[str, str] = {
    "g2": "discrete",
    "chi2": "discrete",
    "kendall": "discrete",
    "spearman": "discrete",
    "fisherz": "numeric",
}


class CITester:
    """A CI test bound to one dataset: ``tester(x, y, S) -> CIResult``.

    Results are memoised per unordered pair and conditioning *set*, so the
    PC engine may ask the same question from both ends of an edge at no cost;
    ``n_computed`` counts the distinct tests actually computed. Data are
    validated once (discrete tests need integer codes; Fisher-z needs finite
    numbers) and pre-processed once (levels, correlation matrix).

    Parameters
    ----------
    data : array or DataFrame, rows × variables.
    test : one of ``TESTS`` ("g2", "chi2", "kendall", "spearman", "fisherz"),
        or a callable ``f(data, x, y, S) -> CIResult`` for a custom test.
    variant : for "kendall", τ-"a" (default, see ``kendall_tau_test``) or τ-"b".
    levels : public domain sizes of the columns for the discrete tests
        (a sequence, a mapping or a :class:`~dpcd.schema.Schema`); private
        algorithms pass them so that table shapes never depend on the data.
        Default: max code + 1 per column, read from the data (non-private use only).
    degenerate : for "kendall", how strata in which X or Y is constant count, and
        for "fisherz", how a singular covariance sub-matrix of (X, Y, S) counts
        (X or Y a linear function of S, as in a deep variable of a dense linear
        SEM whose variance is dominated by one ancestor):
        "independent" (default) or "keep_edge", the Priv-PC authors' convention
        (a test without an informative stratum returns p = NaN and PC keeps
        the edge); see :data:`dpcd.ci.discrete.DEGENERATE_CONVENTIONS`. The
        private algorithms never pass it: it branches on the data without noise.
    distinct : discrete tests only: count each distinct row once with its
        multiplicity (:func:`~dpcd.ci.discrete.distinct_rows`). The tables —
        hence every statistic and p-value — are the same integers; a test reads
        fewer rows where rows repeat (24 % of alarm's rows are distinct at
        n = 10⁶). ``data`` then holds the distinct rows and ``weights`` their
        counts. None: only when at most :data:`DISTINCT_SHARE` of the rows are
        distinct (a weighted count costs more per row than a plain one).

    Discrete data are held as codes of the smallest unsigned type
    (:func:`~dpcd.validation.as_code_matrix`), Fortran-ordered.
    """

    def __init__(self, data, test: str | Callable = "g2", *, variant: Literal["a", "b"] = "a",
                 levels=None, degenerate: str = "independent", distinct: bool | None = False):
        check_degenerate(degenerate)
        self.weights: np.ndarray | None = None
        if degenerate != "independent" and test not in ("kendall", "fisherz"):
            raise ValueError(f"degenerate={degenerate!r} is defined for test='kendall' and 'fisherz' only, got "
                             f"test={test!r}")
        if callable(test):
            self._kind = "custom"
            self._custom = test
            self.data = data
            self.n_rows = len(data)
            self.n_vars = np.shape(data)[1]
        else:
            if test not in TESTS:
                raise ValueError(f"test must be one of {sorted(TESTS)} or a callable, got {test!r}")
            self._kind = test
            kind = TESTS[test]
            self.data = as_code_matrix(data) if kind == "discrete" else as_data_matrix(data, kind=kind)
            self.n_rows, self.n_vars = self.data.shape
            if kind == "discrete":  # each test reads whole columns: Fortran order (as_code_matrix)
                if levels is None:
                    self.levels = observed_levels(self.data)
                else:
                    self.levels = public_levels(levels, self.n_vars, getattr(data, "columns", None))
                    check_codes(self.data, self.levels)
                if distinct or distinct is None:
                    rows, counts = distinct_rows(self.data, self.levels)
                    if distinct or len(rows) <= DISTINCT_SHARE * self.n_rows:
                        self.data, self.weights = rows, counts.astype(np.float64)  # bincount's weight type
            else:
                self.correlation = np.corrcoef(self.data.T)
        if distinct and TESTS.get(self._kind) != "discrete":
            raise ValueError(f"distinct=True is defined for the discrete tests only, got test={test!r}")
        if variant not in ("a", "b"):
            raise ValueError(f"variant must be 'a' or 'b', got {variant!r}")
        self.test = test
        self.variant = variant
        self.degenerate = degenerate
        self._cache: dict[tuple, CIResult] = {}
        self.n_computed = 0

    def __getstate__(self) -> dict:
        """What a worker process receives (``pc(n_jobs=...)``): the data and settings, an empty memo, no count."""
        state = dict(self.__dict__)
        state["_cache"], state["n_computed"] = {}, 0
        return state

    def __call__(self, x: int, y: int, S: Sequence[int] = ()) -> CIResult:
        key = (min(x, y), max(x, y), tuple(sorted(S)))
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        result = self._compute(x, y, tuple(S))
        self._cache[key] = result
        self.n_computed += 1
        return result

    def _compute(self, x: int, y: int, S: tuple[int, ...]) -> CIResult:
        kind = self._kind
        if kind == "custom":
            return self._custom(self.data, x, y, S)
        if kind == "fisherz":
            try:
                return fisher_z_from_matrix(self.correlation, self.n_rows, x, y, S)
            except SingularCovarianceError:
                # X or Y is a linear function of S: the degenerate case of a partial correlation
                return CIResult(0.0, 1.0) if self.degenerate == "independent" else CIResult(math.nan, math.nan)
        table = contingency_table(self.data, x, y, S, self.levels, self.weights)
        if kind in ("g2", "chi2"):
            stat, dof, p = chi2_type_statistic(table, kind)
            return CIResult(stat, p, dof)
        if kind == "kendall":
            return stratified_kendall(table, self.variant, degenerate=self.degenerate)
        return stratified_spearman(table)

    def table(self, x: int, y: int, S: Sequence[int] = ()) -> np.ndarray:
        """The stratified contingency table of a discrete test (for sensitivity-aware deciders)."""
        if TESTS.get(self._kind) != "discrete":
            raise ValueError(f"test {self.test!r} has no contingency table")
        return contingency_table(self.data, x, y, S, self.levels, self.weights)

"""What the Priv-PC family shares: the thresholded Kendall p-value query, a run's set-up and its privacy totals.

Priv-PC (:mod:`dpcd.discovery.priv_pc`), SVT-PC (:mod:`dpcd.discovery.svt_pc`) and the sub-sampled Gaussian
baseline (:mod:`dpcd.discovery.subsampled_gaussian_pc`) of Wang, Pang & Song (2020) threshold the same query, the
one-sided p-value of the conditional Kendall τ-a test; CURATE (:mod:`dpcd.discovery.curate`) reuses it too. The
pieces live here so that no algorithm module imports a sibling.

>>> reference_max_order(100_000, 8)
6
"""

from __future__ import annotations

import math
from typing import Literal, Mapping, Sequence

import numpy as np

from ..ci import CITester, normal_two_sided_p
from ..privacy.ledger import PrivacyLedger
from ..privacy.relation import REPLACE_ONE
from ..schema import public_levels
from ..validation import as_data_matrix, check_int
from .algorithm import mark_unproven, unproven_options
from .pc import node_names_of

__all__ = ["SensitivityMode", "RELATION", "PUBLIC", "UNPROVEN", "KendallPValueQuery", "reference_max_order",
           "kendall_run_setup", "kendall_ledger", "privacy_totals"]

SensitivityMode = Literal["proven", "reference"]
RELATION = REPLACE_ONE
"""Priv-PC's guarantee is proven under replace one record, with n public."""
PUBLIC = ("n", "domains")
UNPROVEN = {"sensitivity": "the authors' Delta_Z = 6/sqrt(n) ('reference') is proven for unconditional tests only"}
"""The family's published-but-unproven variant (``unproven={"sensitivity": "reference"}``), with why it is not DP."""


def kendall_ledger(unproven: Mapping[str, str] | None, *, algorithm: str) -> tuple[PrivacyLedger, SensitivityMode]:
    """A run's replace-one ledger and its sensitivity mode: ``"proven"``, or ``"reference"`` when the caller
    opted into the authors' calibration with ``unproven``, which the ledger then records as not DP.

    >>> ledger, mode = kendall_ledger({"sensitivity": "reference"}, algorithm="priv_pc")
    >>> mode, ledger.differentially_private
    ('reference', False)
    """
    options = unproven_options(unproven, UNPROVEN, algorithm=algorithm)
    if options.get("sensitivity", "reference") != "reference":
        raise ValueError(f"unproven: sensitivity must be 'reference', got {options['sensitivity']!r}")
    ledger = PrivacyLedger(relation="replace", public=PUBLIC)
    mark_unproven(ledger, options, UNPROVEN, algorithm=algorithm)
    return ledger, options.get("sensitivity", "proven")


def reference_max_order(n: int, p: int) -> int:
    """The authors' maximum order min(⌊log₂ n⌋ − 5, p − 2), at least 0."""
    return max(0, min(int(math.floor(math.log2(n))) - 5, p - 2))


def kendall_run_setup(data, node_names: Sequence[str] | None, max_order: int | None, levels):
    """Checked codes, node names, maximum order (None: no limit, p − 2) and the p-value query of a run.

    The authors' cap min(⌊log₂ n⌋ − 5, p − 2) is :func:`reference_max_order`, for callers reproducing the paper.

    ``levels`` are the public domain sizes (:func:`dpcd.schema.public_levels`);
    the codes must lie in 0..levels − 1.
    """
    codes = as_data_matrix(data, kind="discrete")
    names = node_names_of(data, node_names)
    levels = public_levels(levels, codes.shape[1], names)
    if max_order is None:
        max_order = max(codes.shape[1] - 2, 0)
    max_order = check_int(max_order, "max_order", minimum=0)
    return codes, names, max_order, KendallPValueQuery(codes, levels)


class KendallPValueQuery:
    """The thresholded query of Priv-PC / SVT-PC: one-sided p-value of the conditional Kendall test.

    ``query(x, y, S)`` on the full data, ``on_rows(rows)(x, y, S)`` on a
    sub-sample (a memoised tester per row set; the full tester when the rows
    are all rows). Reusable by any sensitivity-aware decider (e.g. CURATE).
    """

    def __init__(self, codes: np.ndarray, levels):
        self.tester = self.make_tester(codes, levels)
        self.codes = self.tester.data
        self.n = self.tester.n_rows
        self.levels = self.tester.levels
        self._rows: np.ndarray | None = None  # the row set of the memoised tester, kept alive (never its id alone)
        self._rows_tester: CITester | None = None
        self.n_subsample_tests = 0

    @staticmethod
    def make_tester(codes: np.ndarray, levels) -> CITester:
        """The conditional Kendall τ-a tester on ``codes`` with the public ``levels``."""
        return CITester(codes, "kendall", variant="a", levels=levels)

    @staticmethod
    def one_sided(z: float) -> float:
        return float(normal_two_sided_p(z)) / 2.0

    def __call__(self, x: int, y: int, S: tuple[int, ...]) -> float:
        return self.one_sided(self.tester(x, y, S).statistic)

    def on_rows(self, rows: np.ndarray):
        if len(rows) == self.n:
            return self
        if rows is not self._rows:  # identity of a live object: a freed array's address cannot be reused for it
            self._rows = rows
            self._rows_tester = self.make_tester(self.codes[rows], self.levels)
        tester = self._rows_tester

        def query(x: int, y: int, S: tuple[int, ...]) -> float:
            before = tester.n_computed
            value = self.one_sided(tester(x, y, S).statistic)
            self.n_subsample_tests += tester.n_computed - before
            return value

        return query


def privacy_totals(ledger: PrivacyLedger, delta: float) -> dict[str, float]:
    """Basic, advanced (δ' = δ) and tight (at δ) totals of a ledger, as a flat dict.

    The PLD grid is 1e-3 of the largest per-charge ε (at least 1e-4): the
    accountant rounds pessimistically, so a coarser grid is still an upper
    bound, and it keeps large per-test ε cheap. With a charge above ε = 20 the
    PLD library overflows and the tight total is reported as basic composition.
    """
    if ledger.n_charges == 0:
        return {"epsilon_basic": 0.0, "epsilon_advanced": 0.0, "epsilon_tight": 0.0, "delta": 0.0}
    basic = ledger.total("basic")
    advanced = ledger.total("advanced", delta_prime=delta)
    largest = float(ledger.epsilons().max())
    if largest > 20.0:  # PLDs overflow for such charges; composition is then basic anyway
        tight = basic
    else:
        interval = max(1e-4, 1e-3 * largest)
        tight = ledger.total("tight", delta_prime=delta, target_delta=delta, value_discretization_interval=interval)
    return {"epsilon_basic": basic.epsilon, "epsilon_advanced": advanced.epsilon,
            "epsilon_tight": tight.epsilon, "delta": delta}

"""Audit cases for the private independence test dpHSIC (:mod:`dpcd.ci.hsic`), and its deliberately broken variant.

The pair is built for the statistic ``T = ||Ĉ_XY||_HS``: m records close to
the centre of the public box [−1, 1]² (3 % of its half-width), so every
statistic, observed and permuted, is near 0 and the noise decides; the
neighbour replaces one record by the corner (1, 1), which raises the observed
statistic by about half the sensitivity Δ while a permuted one, where the
corner's x and y fall into different pairs, hardly moves (a permutation that
fixes the record, about half of them at m = 60, moves like the observed one). The bandwidth is
small (0.1 on the box) so the corner's features are nearly orthogonal to the
centre's and the move is as large as one record can make it. The output is
the released decision; the claim is the test's ε (module Theorem of
:mod:`dpcd.ci.hsic`), never read from a run.

The broken variant scales the noise to the **observed** spread of the
permuted statistics instead of the worst-case Δ — a local sensitivity, the
PCD mistake: on the centre-clustered data that spread is tiny, so the
decision becomes nearly deterministic and the corner record shows.

>>> [case.name for case in dp_hsic_cases(size="smoke")]
['dpHSIC test', 'BROKEN dpHSIC, noise scaled to the observed permutation spread']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ci.hsic import hsic_norm_sensitivity, hsic_norms, noisy_permutation_decision
from ..validation import RngLike, as_rng, check_epsilon
from .events import equals
from .neighbours import replace_record
from .runner import AuditCase

__all__ = ["dp_hsic_cases", "DPHSICRun", "ObservedSpreadHSIC", "AUDIT_BANDWIDTH", "AUDIT_PERMUTATIONS"]

AUDIT_BANDWIDTH = 0.1
"""Kernel bandwidth of the audit's tests (public): the corner's features are then nearly orthogonal to the centre's."""
AUDIT_PERMUTATIONS = 39
"""B of the audit's tests: the decision at α = 0.05 needs the observed statistic above all but one of 39."""


@dataclass(frozen=True)
class DPHSICRun:
    """``size`` runs of dpHSIC (:func:`dpcd.ci.hsic.dp_hsic_test`'s statistics, then its noisy decision) on an
    (m, 2) array; output: the decisions (bool).

    The permutations come from the public ``permutation_seed``, the same on D and D′: the module Theorem holds for
    every fixed set of permutations (its proof conditions on them), so this audits it permutation set by
    permutation set, and the statistics are computed once per data set instead of once per run.
    """

    epsilon: float
    permutation_seed: int
    alpha: float = 0.05

    def _statistics(self, data: Any) -> tuple[float, np.ndarray]:
        array = np.clip(np.asarray(data, dtype=np.float64), -1.0, 1.0)
        return hsic_norms(array[:, 0], array[:, 1], bandwidth=AUDIT_BANDWIDTH, n_permutations=AUDIT_PERMUTATIONS,
                          method="exact", rng=self.permutation_seed)

    def _scale(self, permuted: np.ndarray, m: int) -> float:
        return 2.0 * hsic_norm_sensitivity(m) / self.epsilon

    def __call__(self, data: Any, rng: Any, size: int) -> np.ndarray:
        t0, permuted = self._statistics(data)
        return noisy_permutation_decision(t0, permuted, scale=self._scale(permuted, len(data)), alpha=self.alpha,
                                          rng=rng, size=size)


@dataclass(frozen=True)
class ObservedSpreadHSIC(DPHSICRun):
    """BROKEN dpHSIC: the same test with Laplace noise of scale ``2·sd(T_1..T_B)/ε`` — the observed spread of the
    permuted statistics standing in for the worst-case sensitivity; the claim stays ε."""

    def _scale(self, permuted: np.ndarray, m: int) -> float:
        return 2.0 * float(np.std(permuted)) / self.epsilon  # the mistake: read from the data


def dp_hsic_cases(*, epsilon: float = 1.0, rng: RngLike = 0, size: str = "quick") -> list[AuditCase]:
    """The dpHSIC case (claim ε, replace-one) and its broken variant, on the corner-record pair of the module."""
    epsilon = check_epsilon(epsilon)
    sizes = {"smoke": 60, "quick": 120, "full": 200}
    if size not in sizes:
        raise ValueError(f"size must be one of {sorted(sizes)}, got {size!r}")
    m = sizes[size]
    generator = as_rng(rng)
    seed = int(generator.integers(2**31))
    data = generator.uniform(-0.03, 0.03, size=(m, 2))
    pair = replace_record(data, 0, np.array([1.0, 1.0]),
                          description=f"D: {m} records in [-0.03, 0.03]^2; D': record 0 replaced by the corner (1, 1)")
    events = (equals(True, name="reject"),)
    note = (f"m = {m}, B = {AUDIT_PERMUTATIONS}, bandwidth {AUDIT_BANDWIDTH} on the public box [-1, 1]^2, "
            f"alpha = 0.05, claim epsilon = {epsilon:g} (replace one record); output: the decision; permutations "
            "from a public seed, the same on D and D'")
    return [
        AuditCase("dpHSIC test", DPHSICRun(epsilon, seed), pair, events, epsilon, 0.0, True, note=note),
        AuditCase("BROKEN dpHSIC, noise scaled to the observed permutation spread",
                  ObservedSpreadHSIC(epsilon, seed), pair, events, epsilon, 0.0, True, note=note,
                  expect_violation=True),
    ]

"""The result type of every conditional-independence test, and the normal tail they share.

Large p-values mean "independent": the PC rule removes an edge when ``p_value > alpha``.

>>> round(float(normal_two_sided_p(1.959964)), 4)
0.05
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

__all__ = ["CIResult", "normal_two_sided_p"]


@dataclass(frozen=True)
class CIResult:
    """Outcome of one conditional-independence test.

    ``statistic`` is the test statistic (G², χ², Fisher's |z|·√(n−|S|−3), or
    the inverse-variance-weighted z of the conditional rank correlations);
    ``p_value`` its p-value; ``dof`` the degrees of freedom of χ²-type tests.
    ``effect`` is the raw association (Kendall's τ or Spearman's ρ pooled over
    strata, partial correlation for Fisher-z) where one exists.
    """

    statistic: float
    p_value: float
    dof: float | None = None
    effect: float | None = None


def normal_two_sided_p(z: float | np.ndarray) -> float | np.ndarray:
    """Two-sided normal p-value 2·(1 − Φ(|z|)), computed without cancellation."""
    return special.erfc(np.abs(z) / np.sqrt(2))

"""The Fisher-z test of partial correlation, from data or from a (possibly noisy) covariance matrix.

>>> import numpy as np
>>> corr = np.array([[1.0, 0.5, 0.5], [0.5, 1.0, 0.25], [0.5, 0.25, 1.0]])
>>> abs(round(partial_correlation(corr, 1, 2, [0]), 6))
0.0
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..validation import as_data_matrix
from .result import CIResult, normal_two_sided_p

__all__ = ["MAX_INFLATION", "SingularCovarianceError", "partial_correlation", "fisher_z_from_matrix", "fisher_z_test"]


MAX_INFLATION = 1e12


class SingularCovarianceError(ValueError):
    """The covariance sub-matrix of (X, Y, S) is singular: the partial correlation is undefined."""


def partial_correlation(matrix: np.ndarray, x: int, y: int, S: Sequence[int] = ()) -> float:
    """Partial correlation of X and Y given S from a covariance or correlation matrix.

    Uses the inverse of the sub-matrix of (X, Y, S): r = −P₀₁ / √(P₀₀ P₁₁).
    A singular sub-matrix — exactly, or to working precision: X or Y explained by the others
    with 1/(1 − R²) > 1e12 — raises :class:`SingularCovarianceError` (a ``ValueError``).
    """
    idx = [x, y, *S]
    sub = np.asarray(matrix, dtype=np.float64)[np.ix_(idx, idx)]
    try:
        precision = np.linalg.inv(sub)
    except np.linalg.LinAlgError as err:
        raise SingularCovarianceError(f"the covariance sub-matrix of variables {idx} is singular") from err
    # 1/(1 − R²) of X (resp. Y) on the other variables: beyond 1e12 the sub-matrix is singular to working precision
    inflation = np.abs(np.diag(precision)[:2] * np.diag(sub)[:2])
    if not (np.all(np.isfinite(precision)) and np.all(inflation <= MAX_INFLATION)):
        raise SingularCovarianceError(f"the covariance sub-matrix of variables {idx} is singular "
                                      "to working precision")
    r = -precision[0, 1] / np.sqrt(abs(precision[0, 0] * precision[1, 1]))
    return float(r)


def fisher_z_from_matrix(matrix: np.ndarray, n: int, x: int, y: int, S: Sequence[int] = ()) -> CIResult:
    """Fisher-z test of X ⫫ Y | S from a covariance/correlation matrix and sample size n.

    z = ½ ln((1 + r)/(1 − r)), statistic = √(n − |S| − 3)·|z|, two-sided
    normal p-value (the same formula as causal-learn's ``fisherz``). The
    matrix may be a noisy private estimate (PrivPC*).
    """
    if n - len(S) - 3 <= 0:
        raise ValueError(f"n={n} is too small for a Fisher-z test with |S|={len(S)} (need n > |S| + 3)")
    r = partial_correlation(matrix, x, y, S)
    if abs(r) >= 1:
        r = (1.0 - np.finfo(float).eps) * np.sign(r)
    z = 0.5 * np.log((1 + r) / (1 - r))
    statistic = float(np.sqrt(n - len(S) - 3) * abs(z))
    p_value = float(normal_two_sided_p(statistic))
    return CIResult(statistic, p_value, None, r)


def fisher_z_test(data, x: int, y: int, S: Sequence[int] = ()) -> CIResult:
    """Fisher-z test of X ⫫ Y | S on numeric data (via the correlation matrix)."""
    array = as_data_matrix(data, kind="numeric")
    corr = np.corrcoef(array[:, [x, y, *S]].T)
    return fisher_z_from_matrix(corr, array.shape[0], 0, 1, list(range(2, 2 + len(S))))

"""PrivPC*: Fisher-z PC on a Laplace-noised covariance matrix (Xu, Yuan & Wu 2017, Sec. V).

Steps: (1) standardise every column; (2) clip each record's Euclidean norm to
√p, the bound the proof of Thm. 2 needs (it assumes Σ_i x_ui² = p); (3) form
Σ = Σ_u x_u x_uᵀ / (n − 1); (4) add i.i.d. Lap(Δ/ε) noise to its upper
triangle (diagonal included) with Δ = p(p + 1) / (2(n − 1)) and mirror it;
(5) repair the noisy matrix if it is not positive definite, turn it into a
correlation matrix, and run PC with the Fisher-z test on it
(:func:`dpcd.citests.fisher_z_from_matrix`).

Privacy: ε-DP under add/remove one record, with n public (the normaliser
n − 1 is a public constant). For a record x with ‖x‖₂² ≤ p the upper triangle
of x xᵀ has L1 norm (‖x‖₂² + ‖x‖₁²)/2 ≤ (p + p²)/2, so Δ above is the L1
sensitivity (Thm. 2; the clipping makes its assumption hold for every
record). The standardisation (column means and standard deviations) is
treated as public pre-processing, as in the paper; a fully rigorous release
needs these from public knowledge (pass ``center`` and ``scale``), since
computed from the data they are not protected.

Repair of a non-positive-definite noisy matrix: symmetric eigen-decomposition,
eigenvalues below ``min_eigenvalue`` × (mean eigenvalue) raised to that floor,
then rescaled to unit diagonal (a correlation matrix). Post-processing, so
free of privacy cost.

The decision rule is the paper's: independent when
√(n − |S| − 3)·|z| ≤ Φ⁻¹(1 − τ/2), i.e. p > τ.

References
----------
Xu, Yuan & Wu (2017), "Differential privacy preserving causal graph
discovery", IEEE PAC, Sec. V, Thm. 2.
Kalisch & Bühlmann (2007), "Estimating high-dimensional directed acyclic
graphs with the PC-algorithm", JMLR 8.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np

from .._validation import RngLike, as_data_matrix, as_rng, check_epsilon, check_positive, check_probability
from ..citests import fisher_z_from_matrix
from ..privacy import PrivacyLedger
from .pc import Decider, PCResult, node_names_of, run_pc

__all__ = ["covariance_sensitivity", "clip_records", "noisy_correlation", "repair_correlation", "privpc_star"]


def covariance_sensitivity(p: int, n: int, clip_norm: float | None = None) -> float:
    """L1 sensitivity of the upper triangle of Σ = Σ_u x_u x_uᵀ/(n − 1) when ‖x_u‖₂ ≤ ``clip_norm``.

    (‖x‖₂² + ‖x‖₁²)/(2(n − 1)) ≤ C²(p + 1)/(2(n − 1)) with C = ``clip_norm``;
    for the default C = √p this is p(p + 1)/(2(n − 1)) of paper 000, Thm. 2.
    """
    if n < 2:
        raise ValueError(f"n must be at least 2, got {n}")
    c2 = float(p) if clip_norm is None else float(clip_norm) ** 2
    return c2 * (p + 1) / (2.0 * (n - 1))


def clip_records(X: np.ndarray, bound: float) -> np.ndarray:
    """Scale every row with ‖x‖₂ > ``bound`` down to norm ``bound`` (others unchanged)."""
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    factor = np.minimum(1.0, bound / np.maximum(norms, 1e-300))
    return X * factor[:, None]


def repair_correlation(matrix: np.ndarray, *, min_eigenvalue: float = 1e-3) -> np.ndarray:
    """Nearest-ish correlation matrix: floor the eigenvalues, then rescale to unit diagonal."""
    M = (np.asarray(matrix, dtype=np.float64) + np.asarray(matrix, dtype=np.float64).T) / 2.0
    values, vectors = np.linalg.eigh(M)
    floor = min_eigenvalue * max(float(np.mean(np.abs(values))), 1e-12)
    if values.min() < floor:
        values = np.maximum(values, floor)
        M = (vectors * values) @ vectors.T
    d = np.sqrt(np.clip(np.diag(M), 1e-300, None))
    C = M / np.outer(d, d)
    np.fill_diagonal(C, 1.0)
    return C


def noisy_correlation(X: np.ndarray, *, epsilon: float, rng: RngLike, center: np.ndarray | None = None,
                      scale: np.ndarray | None = None, min_eigenvalue: float = 1e-3,
                      clip_norm: float | None = None) -> tuple[np.ndarray, dict]:
    """Released correlation matrix of PrivPC* and facts about the release (sensitivity, clipped rows, repair)."""
    n, p = X.shape
    center = X.mean(axis=0) if center is None else np.asarray(center, dtype=np.float64)
    scale = X.std(axis=0, ddof=1) if scale is None else np.asarray(scale, dtype=np.float64)
    if center.shape != (p,) or scale.shape != (p,):
        raise ValueError(f"center and scale must have shape ({p},)")
    if np.any(~np.isfinite(scale)) or np.any(scale <= 0):
        raise ValueError("every column needs a positive finite scale (a constant column cannot be standardised)")
    Z = (X - center) / scale
    bound = np.sqrt(p) if clip_norm is None else float(clip_norm)
    clipped = int(np.count_nonzero(np.einsum("ij,ij->i", Z, Z) > bound**2))
    Z = clip_records(Z, bound)
    sigma = Z.T @ Z / (n - 1)
    sensitivity = covariance_sensitivity(p, n, bound)
    rng = as_rng(rng)
    iu = np.triu_indices(p)
    noise = np.zeros((p, p))
    noise[iu] = rng.laplace(0.0, sensitivity / epsilon, size=len(iu[0]))
    noise = noise + np.triu(noise, 1).T
    noisy = sigma + noise
    diag = np.diag(noisy).copy()
    positive_definite = bool(np.all(np.linalg.eigvalsh((noisy + noisy.T) / 2) > 0))
    # correlation from the noisy covariance: a non-positive variance is floored before dividing
    d = np.sqrt(np.clip(diag, 1e-6, None))
    corr = noisy / np.outer(d, d)
    np.fill_diagonal(corr, 1.0)
    repaired = repair_correlation(corr, min_eigenvalue=min_eigenvalue)
    return repaired, {"sensitivity": sensitivity, "clipped_records": clipped, "noisy_pd": positive_definite,
                      "nonpositive_variances": int(np.count_nonzero(diag <= 0))}


class _MatrixDecider(Decider):
    def __init__(self, corr: np.ndarray, n: int, alpha: float):
        self.corr, self.n, self.alpha = corr, n, alpha
        self._cache: dict = {}

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        key = (min(x, y), max(x, y), tuple(sorted(S)))
        if key not in self._cache:
            self._cache[key] = fisher_z_from_matrix(self.corr, self.n, key[0], key[1], key[2]).p_value
        return self._cache[key] > self.alpha


def privpc_star(data, *, epsilon: float, alpha: float = 0.01, rng: RngLike, max_order: int | None = None,
                node_names: Sequence[str] | None = None, center: np.ndarray | None = None,
                scale: np.ndarray | None = None, min_eigenvalue: float = 1e-3,
                clip_norm: float | None = None) -> PCResult:
    """PrivPC* (paper 000, Sec. V): PC with Fisher-z tests on a Laplace-noised covariance matrix.

    Parameters
    ----------
    data : numeric data (rows × variables), continuous columns.
    epsilon : privacy budget ε > 0, charged once.
    alpha : significance level τ; an edge is removed when p > α.
    rng : numpy Generator or integer seed.
    max_order, node_names : as in :func:`dpcd.discovery.pc.pc`.
    center, scale : public column locations and scales for the standardisation
        (default: the data's means and standard deviations, treated as public).
    min_eigenvalue : relative eigenvalue floor of the positive-definite repair.
    clip_norm : bound C on each standardised record's norm (default √p, the
        paper's assumption); the sensitivity is C²(p + 1)/(2(n − 1)). Clipping
        shrinks long records towards the centre, which changes the
        correlation matrix a little (a radially clipped Gaussian is not
        Gaussian, and zero partial correlations need not stay zero): at √p
        about half the records of Gaussian data are clipped; a larger C clips
        fewer records at the price of more noise.

    Privacy: ε-DP, add/remove one record, public n (and center/scale); one
    Laplace charge with sensitivity p(p + 1)/(2(n − 1)) (Thm. 2, made valid by
    clipping every standardised record to norm √p).

    Integer-coded categorical data are refused: use :func:`dpcd.discovery.em_pc.em_pc`
    or :func:`dpcd.discovery.lapmech.lapmech`.
    """
    epsilon = check_epsilon(epsilon)
    alpha = check_probability(alpha, "alpha")
    min_eigenvalue = check_positive(min_eigenvalue, "min_eigenvalue")
    X = as_data_matrix(data, kind="numeric")
    if np.all(X == np.round(X)) and all(len(np.unique(X[:, j])) <= 10 for j in range(X.shape[1])):
        raise TypeError("data look categorical (small integer codes in every column); PrivPC* needs numeric "
                        "(continuous) data — use em_pc or lapmech for categorical data")
    n, p = X.shape
    names = node_names_of(data, node_names)
    if clip_norm is not None:
        clip_norm = check_positive(clip_norm, "clip_norm")
    corr, facts = noisy_correlation(X, epsilon=epsilon, rng=rng, center=center, scale=scale,
                                    min_eigenvalue=min_eigenvalue, clip_norm=clip_norm)
    ledger = PrivacyLedger("add/remove", public=("n", "standardisation"))
    sensitivity = facts["sensitivity"]
    ledger.charge("PrivPC*: noisy covariance matrix", epsilon=epsilon, kind="laplace", sensitivity=sensitivity,
                  scale=sensitivity / epsilon, note=f"upper triangle of a {p}x{p} matrix, records clipped to norm {clip_norm or np.sqrt(p):.4g}")
    decider = _MatrixDecider(corr, n, alpha)
    result = run_pc(names, decider, max_order=max_order, ledger=ledger)
    return replace(result, info={"algorithm": "privpc_star", "epsilon": epsilon, "alpha": alpha, **facts,
                                 "correlation": corr})

"""PrivPC*: Fisher-z PC on Laplace-noised moments (Xu, Yuan & Wu 2017, Sec. V), with public bounds.

Steps: (1) map every column onto [−1, 1] with its **public** bounds (values
outside are clamped; :meth:`dpcd.schema.Schema.encode` already does this);
(2) optionally clip each record's Euclidean norm to C (default √p, which a
record of [−1, 1]^p never exceeds); (3) release the upper triangle of the
augmented moment matrix M = Σ_u a_u a_uᵀ with a_u = (1, z_u) — the column
sums and the second moments — with i.i.d. Lap(Δ/ε) noise; (4) form the
covariance M₂/n − m mᵀ (m = noisy column means, n public), repair it if it
is not positive definite, turn it into a correlation matrix, and run PC with
the Fisher-z test on it (:func:`dpcd.ci.fisher_z_from_matrix`).

Privacy
-------
ε-DP under **replace one record** with n public (:data:`RELATION`); public:
n and the column bounds. Nothing else is read from the data: the paper
standardises with the data's own means and standard deviations, which are
not protected — one outlier record then rescales a whole column (that variant
survives only as a deliberately broken case in :mod:`dpcd.audit`, which flags
it). Sensitivities, replace one record: the column sums and sums of squares
of the box [−1, 1]^p move by at most 9p/4 (:func:`scale_sensitivity`); the
moments by p(p + 2)²/(2(p + 1)) for records of the box, exactly, or
(p + 1)C² + 2√p·C for records of norm ≤ C after the private standardisation
(:func:`moment_sensitivity`, with the derivations). The entry M₀₀ = n is
public and not noised; everything after the release is post-processing. The
paper's Thm. 2 states p(p + 1)/(2(n − 1)) for standardised data under
add/remove; with n public the normaliser must be a constant, and under
replace-one the change is the difference of two records.

Repair of a non-positive-definite noisy matrix: symmetric eigen-decomposition,
eigenvalues below ``min_eigenvalue`` × (mean eigenvalue) raised to that floor,
then rescaled to unit diagonal (a correlation matrix).

The decision rule is the paper's: independent when
√(n − |S| − 3)·|z| ≤ Φ⁻¹(1 − τ/2), i.e. p > τ.

References
----------
Xu, Yuan & Wu (2017), "Differential privacy preserving causal graph
discovery", IEEE PAC, Sec. V, Thm. 2.
Kalisch & Bühlmann (2007), "Estimating high-dimensional directed acyclic
graphs with the PC-algorithm", JMLR 8.
Dwork & Roth (2014), The Algorithmic Foundations of Differential Privacy, Thm. 3.6.

Examples
--------
>>> PRIVPC_STAR.name, PRIVPC_STAR.relation.name, PRIVPC_STAR.data, PRIVPC_STAR.differentially_private
('privpc_star', 'replace', 'numeric', True)
>>> worst = PRIVPC_STAR.privacy_map(epsilon_total=1.0, p=4)   # Laplace releases: pure ε-DP
>>> worst.epsilon, worst.delta
(1.0, 0.0)
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

import numpy as np

from ..ci import fisher_z_from_matrix
from ..privacy import PrivacyLedger, laplace_noise
from ..privacy.relation import REPLACE_ONE, WorstCase
from ..schema import public_bounds, scale_to_box
from ..validation import (
    RngLike,
    as_data_matrix,
    as_rng,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
)
from .algorithm import PrivateAlgorithm
from .pc import Decider, PCResult, node_names_of, run_pc

__all__ = ["PRIVPC_STAR", "moment_sensitivity", "scale_sensitivity", "MIN_SCALE", "scale_to_box", "clip_records",
           "noisy_correlation", "repair_correlation", "privpc_star", "worst_case", "RELATION", "PUBLIC",
           "CorrelationMatrixDecider"]

RELATION = REPLACE_ONE
"""PrivPC*'s guarantee is proven under replace one record, with n public."""
PUBLIC = ("n", "bounds")


def moment_sensitivity(p: int, clip_norm: float | None = None, *, box: bool = True) -> float:
    """Replace-one L1 sensitivity of the released moments: the upper triangle of Σ a aᵀ, a = (1, z),
    without its public (0, 0) entry, for records z with ‖z‖₂ ≤ C (default C = √p).

    The change when z is replaced by w is L = ‖z − w‖₁ + Σ_{i≤j} |z_i z_j − w_i w_j|.

    * ``box=True`` (every |z_i| ≤ 1): with u = (z + w)/2, v = (z − w)/2 each entry is
      z_i z_j − w_i w_j = 2(u_i v_j + u_j v_i) and |u_i| + |v_i| ≤ 1, so with
      a = |u|, b = |v|, U = Σa, V = Σb: L ≤ 2V + 2UV + 2Σa_i b_i. This grows in
      a and b, so a_i + b_i = 1; with V = t, Σa_i b_i ≤ t − t²/p and
      L ≤ (2p + 4)t − 2(1 + 1/p)t², whose maximum over t is
      **p(p + 2)²/(2(p + 1))** (≈ p²/2 + 3p/2), attained at z = (1, …, 1),
      w = −(1, …, 1)/(p + 1): an exact supremum. When C < √p the ball bound
      below is used if it is smaller.
    * ``box=False`` (only ‖z‖, ‖w‖ ≤ C): the triangle inequality,
      ‖z − w‖₁ ≤ 2√p·C and Σ_{i≤j}|z_i z_j| ≤ (‖z‖₁² + ‖z‖₂²)/2 ≤ (p + 1)C²/2 per
      record, gives **(p + 1)C² + 2√p·C** — valid, and possibly up to about twice
      the true worst case (which is not known in closed form).

    >>> moment_sensitivity(3)
    9.375
    >>> moment_sensitivity(3, box=False)
    18.0
    """
    p = check_int(p, "p", minimum=1)
    c = math.sqrt(p) if clip_norm is None else check_positive(clip_norm, "clip_norm")
    ball = (p + 1) * c * c + 2.0 * math.sqrt(p * c * c)
    if not box:
        return ball
    return min(p * (p + 2) ** 2 / (2.0 * (p + 1)), ball)


def scale_sensitivity(p: int) -> float:
    """Replace-one L1 sensitivity 9p/4 of the column sums Σz_j and Σz_j² for z ∈ [−1, 1]^p.

    Per column |z − w| + |z² − w²| = d(1 + |z + w|) with d = |z − w| and
    |z + w| ≤ 2 − d, so at most d(3 − d) ≤ 9/4 (attained at z = 1, w = −1/2).

    >>> scale_sensitivity(4)
    9.0
    """
    return 2.25 * check_int(p, "p", minimum=1)


MIN_SCALE = 0.05
"""Public floor on a privately estimated standard deviation, as a fraction of the half-range of the bounds."""


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


def _laplace_symmetric(p1: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """Symmetric Laplace(``scale``) noise for the (p + 1) × (p + 1) moment matrix: one draw per upper-triangle cell,
    mirrored, and none on M₀₀ = n (public)."""
    iu = np.triu_indices(p1)
    noise = np.zeros((p1, p1))
    noise[iu] = laplace_noise(scale, len(iu[0]), rng=rng)
    noise[0, 0] = 0.0  # M00 = n is public
    return noise + np.triu(noise, 1).T


def noisy_correlation(X: np.ndarray, *, bounds, epsilon: float, rng: RngLike, standardise: str = "private",
                      scale_fraction: float = 0.1, min_eigenvalue: float = 1e-3,
                      clip_norm: float | None = None) -> tuple[np.ndarray, dict]:
    """The released correlation matrix of PrivPC* and facts about the release.

    ``bounds``: public (lower, upper) per column (see :func:`dpcd.schema.public_bounds`).
    ``standardise="bounds"``: the records of the box [−1, 1]^p are used as they
    are (one Laplace release of ε). ``"private"``: ``scale_fraction``·ε first
    releases every column's sum and sum of squares (L1 sensitivity 9p/4,
    :func:`scale_sensitivity`); the records are centred and scaled by those
    noisy means and standard deviations (floored at :data:`MIN_SCALE`), as the
    paper standardises, clipped to norm C (default √p, the paper's bound), and
    the rest of ε releases their moments. The facts returned are functions of
    public inputs and the noisy releases only.
    """
    n, p = X.shape
    bounds = public_bounds(bounds, p)
    generator = as_rng(rng)
    Z = scale_to_box(np.asarray(X, dtype=np.float64), bounds)
    charges = []
    box = standardise == "bounds"
    eps_moments = epsilon
    if standardise == "private":
        eps_scale = scale_fraction * epsilon
        eps_moments = epsilon - eps_scale
        s_scale = scale_sensitivity(p)
        noisy = np.concatenate([Z.sum(axis=0), np.einsum("ij,ij->j", Z, Z)])
        noisy += laplace_noise(s_scale / eps_scale, 2 * p, rng=generator)
        centre = np.clip(noisy[:p] / n, -1.0, 1.0)
        variance = noisy[p:] / n - centre ** 2
        sd = np.sqrt(np.clip(variance, MIN_SCALE ** 2, 1.0))
        Z = (Z - centre) / sd
        charges.append(("PrivPC*: noisy column means and variances", eps_scale, s_scale))
        clip = math.sqrt(p) if clip_norm is None else clip_norm
        Z = clip_records(Z, clip)
    elif standardise == "bounds":
        if clip_norm is not None:
            Z = clip_records(Z, clip_norm)
    else:
        raise ValueError(f"standardise must be 'private' or 'bounds', got {standardise!r}")
    A = np.empty((n, p + 1))
    A[:, 0] = 1.0
    A[:, 1:] = Z
    sensitivity = moment_sensitivity(p, clip_norm, box=box)
    charges.append(("PrivPC*: noisy moment matrix", eps_moments, sensitivity))
    noisy = (A.T @ A + _laplace_symmetric(p + 1, sensitivity / eps_moments, generator)) / n
    mean = noisy[0, 1:]
    cov = noisy[1:, 1:] - np.outer(mean, mean)
    diag = np.diag(cov).copy()
    positive_definite = bool(np.all(np.linalg.eigvalsh((cov + cov.T) / 2) > 0))
    d = np.sqrt(np.clip(diag, 1e-6, None))  # a non-positive variance is floored
    corr = cov / np.outer(d, d)
    np.fill_diagonal(corr, 1.0)
    repaired = repair_correlation(corr, min_eigenvalue=min_eigenvalue)
    return repaired, {"sensitivity": sensitivity, "noise_scale": sensitivity / eps_moments, "charges": charges,
                      "noisy_pd": positive_definite, "nonpositive_variances": int(np.count_nonzero(diag <= 0))}


class CorrelationMatrixDecider(Decider):
    """Fisher-z decisions from a (released) correlation matrix: independent when p > α; post-processing only.

    >>> import numpy as np
    >>> CorrelationMatrixDecider(np.eye(3), 1000, 0.05).decide(0, 1, ())
    True
    """

    def __init__(self, corr: np.ndarray, n: int, alpha: float):
        self.corr, self.n, self.alpha = corr, n, alpha
        self._cache: dict = {}

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        key = (min(x, y), max(x, y), tuple(sorted(S)))
        if key not in self._cache:
            self._cache[key] = fisher_z_from_matrix(self.corr, self.n, key[0], key[1], key[2]).p_value
        return self._cache[key] > self.alpha


def _charges(p: int, epsilon: float, standardise: str, scale_fraction: float,
             clip_norm: float | None) -> list[tuple[str, float, float]]:
    """(mechanism, ε, sensitivity) of every Laplace release of a run (data-independent)."""
    if standardise == "private":
        eps_scale = scale_fraction * epsilon
        return [("PrivPC*: noisy column means and variances", eps_scale, scale_sensitivity(p)),
                ("PrivPC*: noisy moment matrix", epsilon - eps_scale, moment_sensitivity(p, clip_norm, box=False))]
    return [("PrivPC*: noisy moment matrix", epsilon, moment_sensitivity(p, clip_norm, box=True))]


def _check_options(standardise: str, scale_fraction: float) -> float:
    if standardise not in ("private", "bounds"):
        raise ValueError(f"standardise must be 'private' or 'bounds', got {standardise!r}")
    scale_fraction = float(scale_fraction)
    if not 0.0 < scale_fraction < 1.0:
        raise ValueError(f"scale_fraction must lie in (0, 1), got {scale_fraction}")
    return scale_fraction


def worst_case(*, epsilon_total: float, p: int, standardise: str = "private", scale_fraction: float = 0.1,
               clip_norm: float | None = None) -> WorstCase:
    """The data-independent guarantee of any :func:`privpc_star` run: (ε_total, 0)-DP under replace-one.

    One or two Laplace releases whose budgets sum to ε_total (basic composition).

    >>> worst_case(epsilon_total=1.0, p=4).relation.name
    'replace'
    """
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    scale_fraction = _check_options(standardise, scale_fraction)
    ledger = PrivacyLedger("replace", public=PUBLIC)
    for mechanism, eps, sensitivity in _charges(p, epsilon_total, standardise, scale_fraction, clip_norm):
        ledger.charge(mechanism, epsilon=eps, kind="laplace", sensitivity=sensitivity, scale=sensitivity / eps)
    return WorstCase("privpc_star", RELATION, epsilon_total, 0.0, PUBLIC,
                     "Laplace mechanism (Dwork & Roth 2014, Thm. 3.6) on moments of records in the public box (Xu, "
                     "Yuan & Wu 2017, "
                     "Thm. 2 with a replace-one sensitivity), basic composition of the releases", "basic", ledger,
                     {"epsilon_total": epsilon_total, "standardise": standardise})


def privpc_star(data, *, bounds, epsilon_total: float, alpha: float = 0.01, rng: RngLike,
                max_order: int | None = None, node_names: Sequence[str] | None = None,
                standardise: str = "private", scale_fraction: float = 0.1, min_eigenvalue: float = 1e-3,
                clip_norm: float | None = None,
                max_tests: int | None = None) -> PCResult:
    """PrivPC* (paper 000, Sec. V): PC with Fisher-z tests on Laplace-noised moments.

    Parameters
    ----------
    data : numeric data (rows × variables).
    bounds : public (lower, upper) per column (a sequence of pairs, a mapping
        column → pair, or a :class:`~dpcd.schema.Schema`); values outside are
        clamped. Never read from the data.
    epsilon_total : privacy budget ε > 0 of the run.
    alpha : significance level τ; an edge is removed when p > α.
    rng : numpy Generator or integer seed.
    max_order, node_names : as in :func:`dpcd.discovery.pc.pc`.
    max_tests : cap on the run's CI decisions (None = none): an order starts only if it cannot exceed it
        (:func:`dpcd.discovery.pc.pc_skeleton`); a function of earlier private decisions, so it costs no budget.
    standardise : "private" (default): standardise with privately released
        column means and standard deviations (``scale_fraction`` of ε), as the
        paper standardises, then clip records to norm C; "bounds": use the
        records scaled to the box [−1, 1]^p as they are (no clipping by default;
        more noise relative to the signal when the bounds are wide).
    scale_fraction : share of ε spent on the means and variances ("private").
    min_eigenvalue : relative eigenvalue floor of the positive-definite repair.
    clip_norm : bound C on each record's norm after standardisation (default
        √p, the paper's; with "bounds" a record of the box never exceeds it).
        The sensitivity is :func:`moment_sensitivity`.

    Privacy: ε-DP under replace one record, n and the bounds public; every
    release is charged (:func:`worst_case`, module docstring).

    Examples
    --------
    >>> from dpcd.datasets import random_dag, sample_linear_gaussian
    >>> data = sample_linear_gaussian(random_dag(4, 0.5, 0), 20000, 1)
    >>> result = privpc_star(data.data, bounds=data.schema(), epsilon_total=1.0, rng=2)
    >>> result.ledger.relation, round(result.ledger.total("basic").epsilon, 12)
    ('replace', 1.0)
    """
    epsilon = check_epsilon(epsilon_total, "epsilon_total")
    alpha = check_probability(alpha, "alpha")
    min_eigenvalue = check_positive(min_eigenvalue, "min_eigenvalue")
    scale_fraction = _check_options(standardise, scale_fraction)
    X = as_data_matrix(data, kind="numeric")
    n, p = X.shape
    names = node_names_of(data, node_names)
    bounds = public_bounds(bounds, p, names)
    if clip_norm is not None:
        clip_norm = check_positive(clip_norm, "clip_norm")
    corr, facts = noisy_correlation(X, bounds=bounds, epsilon=epsilon, rng=rng, standardise=standardise,
                                    scale_fraction=scale_fraction, min_eigenvalue=min_eigenvalue,
                                    clip_norm=clip_norm)
    ledger = PrivacyLedger("replace", public=PUBLIC)
    for mechanism, eps, sensitivity in facts.pop("charges"):
        ledger.charge(mechanism, epsilon=eps, kind="laplace", sensitivity=sensitivity, scale=sensitivity / eps)
    decider = CorrelationMatrixDecider(corr, n, alpha)
    result = run_pc(names, decider, max_order=max_order, ledger=ledger, max_tests=max_tests)
    return replace(result, info={"algorithm": "privpc_star", "epsilon_total": epsilon, "alpha": alpha,
                                 "standardise": standardise, **facts, "correlation": corr})


PRIVPC_STAR = PrivateAlgorithm(
    name="privpc_star", label="PrivPC*", data="numeric", relation=RELATION, public=PUBLIC, budget="total",
    budget_arg="epsilon_total", run=privpc_star, privacy_map=worst_case,
    theorem="Xu, Yuan & Wu 2017, Thm. 2 (corrected)")
"""PrivPC* as a :class:`~dpcd.discovery.algorithm.PrivateAlgorithm`."""

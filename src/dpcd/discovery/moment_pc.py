"""Moment-PC: Fisher-z PC on Gaussian-noised moments, with tests calibrated for the noise (numeric data).

Every column is mapped onto [−1, 1] by its **public** bounds (values outside
are clamped by the schema), the column sums and the second moments
Σ_u x_u x_uᵀ (upper triangle with the diagonal) are released **once** by one
Gaussian mechanism, and PC runs on the covariance they give: every CI test is
post-processing, so the number of tests costs nothing. It is PrivPC*'s design
(Xu, Yuan & Wu 2017, Sec. V) with Gaussian instead of Laplace noise — the
L2 sensitivity of the p(p + 3)/2 released numbers grows like p, their L1
sensitivity like p² — and with tests that know the noise: the partial
correlation of X and Y given S on the noisy covariance is compared with its
distribution under X ⫫ Y | S, drawn by a parametric bootstrap (Gaussian
sampling of n records from the null covariance — the noisy one with the
partial covariance of X and Y set to zero — plus the same Gaussian noise on the
moments), instead of the textbook Fisher-z threshold that takes the noisy
matrix for the truth.

Privacy
-------
Relation: replace one record (n public). Public: n, the column bounds, ε, δ
and the test settings.

**Theorem.** Any run of :func:`moment_pc` with ``epsilon_total`` = ε and
``delta`` = δ is (ε, δ)-DP under replace-one.

*Proof.* A record x of the box [−1, 1]^p contributes v(x) = (x_i; x_i x_j,
i < j; x_i²) to the released sums. For two records x, y (‖x‖₂², ‖y‖₂² ≤ p) the
sums move by ‖x − y‖₂² ≤ 4p, and the second moments by the upper triangle, with
the diagonal, of M = xxᵀ − yyᵀ, whose squared length ½(‖M‖_F² + Σ_i M_ii²) is
at most ½(2p² + 2p), as ‖M‖_F² = ‖x‖⁴ + ‖y‖⁴ − 2(x·y)² ≤ 2p² and Σ_i M_ii² ≤
Σ_i x_i⁴ + y_i⁴ ≤ ‖x‖² + ‖y‖² ≤ 2p: the L2 sensitivity of the release under
replace-one is Δ = √(p² + 5p) (:func:`moment_sensitivity`,
:mod:`dpcd.privacy.moments`; the coordinate-wise bound √(2p² + 3p) is larger).
Adding N(0, (Δ/μ)²) to each number is μ-GDP [DRS22, Thm. 2.7], and μ =
``gdp_mu(ε, δ)`` makes it (ε, δ)-DP [DRS22, Cor. 2.13]. The covariance, the
tests and their bootstrap draws, the tree protection and the orientation read
only the release and public values: post-processing. ∎

Only the graph leaves a run; the noisy moments stay inside it (a release of
the moments themselves would want a floating-point-safe sampler).

References
----------
.. [DRS22] J. Dong, A. Roth, W. J. Su. *Gaussian Differential Privacy.* JRSS-B 84(1), 2022.
Xu, Yuan & Wu (2017), "Differential privacy preserving causal graph discovery", IEEE PAC, Sec. V (PrivPC*).
Kalisch & Bühlmann (2007), JMLR 8 (PC with Fisher-z).

Examples
--------
>>> import numpy as np
>>> from dpcd.datasets import random_dag, sample_linear_gaussian
>>> from dpcd.graphs import dag_to_cpdag, skeleton_prf
>>> sample = sample_linear_gaussian(random_dag(6, 0.4, 1), 50_000, 2)
>>> result = moment_pc(sample.data, bounds=sample.schema(), epsilon_total=1.0, rng=0)
>>> skeleton_prf(result.cpdag, dag_to_cpdag(sample.dag))["f1"] > 0.7
True
>>> MOMENT_PC.name, MOMENT_PC.relation.name, MOMENT_PC.data, MOMENT_PC.differentially_private
('moment_pc', 'replace', 'numeric', True)
>>> worst = MOMENT_PC.privacy_map(epsilon_total=1.0, delta=1e-6)
>>> worst.epsilon, worst.delta, worst.accountant
(1.0, 1e-06, 'gdp')
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

import networkx as nx
import numpy as np

from ..ci.fisher import MAX_INFLATION, SingularCovarianceError, partial_correlation
from ..ci.gcm import noisy_covariance_draws
from ..privacy import PrivacyLedger
from ..privacy.gdp import gdp_epsilon, gdp_mu
from ..privacy.moments import moment_release_worst_case, moment_sensitivity, noisy_moments
from ..privacy.relation import REPLACE_ONE, WorstCase
from ..schema import public_bounds, scale_to_box
from ..validation import RngLike, as_data_matrix, as_rng, check_delta, check_epsilon, check_int, check_probability
from .algorithm import PrivateAlgorithm
from .pc import Decider, PCResult, node_names_of, run_pc

__all__ = ["moment_sensitivity", "noisy_moments", "moment_ci_test", "MomentDecider", "moment_pc", "worst_case",
           "MOMENT_PC", "RELATION", "PUBLIC", "DEFAULT_BOOTSTRAP"]

RELATION = REPLACE_ONE
PUBLIC = ("n", "bounds")
DEFAULT_BOOTSTRAP = 300
THEOREM = ("one Gaussian mechanism on the column sums and second moments of records in the public box, L2 "
           "sensitivity sqrt(p^2 + 5p) under replace-one (Dong, Roth & Su 2022, Thm. 2.7, Cor. 2.13); tests, "
           "bootstrap and orientation are post-processing")


def worst_case(*, epsilon_total: float, delta: float, p: int | None = None) -> WorstCase:
    """The data-independent guarantee of any :func:`moment_pc` run: (``epsilon_total``, ``delta``) under replace-one.

    >>> worst_case(epsilon_total=1.0, delta=1e-6).accountant
    'gdp'
    """
    return moment_release_worst_case("moment_pc", "Moment-PC moments", epsilon_total=epsilon_total, delta=delta,
                                     public=PUBLIC, theorem=THEOREM)


def _null_covariance(cov: np.ndarray) -> np.ndarray:
    """The covariance of (X, Y, S) with the partial covariance of X and Y given S set to zero, made positive definite."""
    null = cov.copy()
    if len(cov) > 2:
        rest = cov[2:, 2:]
        null[0, 1] = null[1, 0] = float(cov[0, 2:] @ np.linalg.pinv(rest) @ cov[2:, 1])
    else:
        null[0, 1] = null[1, 0] = 0.0
    values, vectors = np.linalg.eigh(null)
    floor = 1e-6 * max(float(np.mean(np.abs(np.diag(null)))), 1e-12)
    return (vectors * np.maximum(values, floor)) @ vectors.T


def moment_ci_test(covariance: np.ndarray, mean: np.ndarray, n: int, sigma: float, x: int, y: int,
                   S: Sequence[int] = (), *, rng: RngLike, n_boot: int = DEFAULT_BOOTSTRAP) -> float:
    """p-value of X ⫫ Y | S from a covariance built from Gaussian-noised moments (noise σ per released number).

    The observed |partial correlation| is ranked among ``n_boot`` draws under
    the null: the sample covariance of n Gaussian records with the null
    covariance (Wishart), plus the noise the release adds to it — σ/n on each
    second moment, and through the noisy means. Post-processing only.
    """
    index = [x, y, *S]
    block = covariance[np.ix_(index, index)]
    try:
        observed = abs(partial_correlation(block, 0, 1, list(range(2, len(index)))))
    except SingularCovarianceError:  # a singular noisy block carries no evidence: the test cannot reject
        return 1.0
    draws = noisy_covariance_draws(_null_covariance(block), mean[index], n, sigma, n_boot, as_rng(rng))
    values = _abs_partials(draws)  # a singular draw counts as at least as extreme
    return float((1 + np.count_nonzero(values >= observed)) / (1 + n_boot))


def _abs_partials(draws: np.ndarray) -> np.ndarray:
    """|partial correlation of variables 0 and 1 given the others| of each k × k matrix of ``draws``; inf if singular.

    Batched :func:`dpcd.ci.fisher.partial_correlation` (the same LAPACK inverse per matrix, the same singularity
    rule), one call for all draws; a draw whose inverse fails outright is taken one at a time.
    """
    try:
        precision = np.linalg.inv(draws)
    except np.linalg.LinAlgError:
        return np.array([_abs_partial(d) for d in draws])
    head = precision[:, [0, 1], [0, 1]]
    inflation = np.abs(head * draws[:, [0, 1], [0, 1]])
    ok = np.isfinite(precision).all(axis=(1, 2)) & (inflation <= MAX_INFLATION).all(axis=1)
    r = -precision[:, 0, 1] / np.sqrt(np.abs(head[:, 0] * head[:, 1]))
    return np.where(ok, np.abs(r), math.inf)


def _abs_partial(matrix: np.ndarray) -> float:
    try:
        return abs(partial_correlation(matrix, 0, 1, list(range(2, len(matrix)))))
    except SingularCovarianceError:
        return math.inf


class MomentDecider(Decider):
    """PC decisions from one noisy covariance: :func:`moment_ci_test` at ``alpha``, memoised per test."""

    def __init__(self, covariance: np.ndarray, mean: np.ndarray, n: int, sigma: float, *, alpha: float,
                 rng: np.random.Generator, n_boot: int, protect_tree: bool):
        self.covariance, self.mean, self.n, self.sigma = covariance, mean, n, sigma
        self.alpha, self.rng, self.n_boot = alpha, rng, n_boot
        self.p_values: dict[tuple[int, int, tuple[int, ...]], float] = {}
        self.protected: set[tuple[int, int]] = set()
        self.protect_tree = protect_tree

    def start_order(self, order: int, adjacency: np.ndarray) -> bool:
        if order == 1 and self.protect_tree:
            scale = np.sqrt(np.clip(np.diag(self.covariance), 1e-12, None))
            strength = np.abs(self.covariance) / np.outer(scale, scale)
            graph = nx.Graph()
            graph.add_nodes_from(range(len(adjacency)))
            rows, cols = np.nonzero(np.triu(adjacency))
            graph.add_weighted_edges_from((int(i), int(j), float(strength[i, j])) for i, j in zip(rows, cols))
            self.protected = {(min(u, v), max(u, v))
                              for u, v in nx.maximum_spanning_edges(graph, algorithm="kruskal", data=False)}
        return True

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        key = (min(x, y), max(x, y), tuple(sorted(S)))
        if S and key[:2] in self.protected:
            return False
        if key not in self.p_values:
            self.p_values[key] = moment_ci_test(self.covariance, self.mean, self.n, self.sigma, key[0], key[1],
                                                key[2], rng=self.rng, n_boot=self.n_boot)
        return self.p_values[key] > self.alpha


def moment_pc(data, *, bounds, epsilon_total: float, delta: float = 1e-6, alpha: float = 0.05, rng: RngLike,
              max_order: int | None = None, max_tests: int | None = None, n_boot: int = DEFAULT_BOOTSTRAP,
              protect_tree: bool = False, node_names: Sequence[str] | None = None) -> PCResult:
    """Moment-PC on numeric ``data`` with public ``bounds``: a CPDAG whose run is (``epsilon_total``, ``delta``)-DP.

    Parameters
    ----------
    data : numbers (rows × variables); values outside ``bounds`` are clamped.
    bounds : public (lower, upper) per column (sequence, mapping or :class:`~dpcd.schema.Schema`).
    epsilon_total, delta : the run's total budget under replace-one (n public).
    alpha : two-sided level of the CI tests.
    rng : Generator or seed of the noise (secret in a release) and the tests' bootstrap.
    max_order, max_tests : as in :func:`dpcd.discovery.pc.pc` (the tests cost no budget).
    n_boot : bootstrap draws per test.
    protect_tree : keep the maximum spanning tree of the noisy |correlations| out of the tests of orders ≥ 1.
    node_names : as in :func:`dpcd.discovery.pc.pc`.

    Privacy: the module's theorem; the ledger holds the one Gaussian charge.
    """
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    array = as_data_matrix(data, kind="numeric")
    names = node_names_of(data, node_names)
    box = scale_to_box(array, public_bounds(bounds, array.shape[1], names))
    n = array.shape[0]
    mu = gdp_mu(epsilon_total, delta)
    generator = as_rng(rng)
    sums, second, sigma = noisy_moments(box, mu=mu, rng=generator)
    ledger = PrivacyLedger("replace", public=PUBLIC)
    sensitivity = moment_sensitivity(array.shape[1])
    ledger.charge("Moment-PC moments", epsilon=gdp_epsilon(mu, delta, positive=True), delta=delta, kind="gaussian",
                  sensitivity=sensitivity, scale=sigma, note=f"{sums.size + second.size} numbers, {mu:.4g}-GDP")
    mean = sums / n
    covariance = second / n - np.outer(mean, mean)
    decider = MomentDecider(covariance, mean, n, sigma, alpha=alpha, rng=generator, n_boot=n_boot,
                            protect_tree=protect_tree)
    result = run_pc(names, decider, max_order=max_order, ledger=ledger, max_tests=max_tests)
    return replace(result, info={"algorithm": "moment_pc", "epsilon_total": epsilon_total, "delta": delta,
                                 "alpha": alpha, "mu": mu, "sigma": sigma, "n_computed": len(decider.p_values)})


def _privacy_map(*, epsilon_total: float, delta: float, max_order: int | None = None) -> WorstCase:
    return worst_case(epsilon_total=epsilon_total, delta=delta)


MOMENT_PC = PrivateAlgorithm(
    name="moment_pc", label="Moment-PC", data="numeric", relation=RELATION, public=PUBLIC, budget="total",
    budget_arg="epsilon_total", run=moment_pc, privacy_map=_privacy_map, delta_arg="delta", alpha_arg="alpha",
    proof="proven", theorem="this package (moment_pc module theorem; Dong, Roth & Su 2022)")
"""Moment-PC as a :class:`~dpcd.discovery.algorithm.PrivateAlgorithm`."""

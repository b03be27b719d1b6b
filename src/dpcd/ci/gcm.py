"""The generalised covariance measure (GCM) on bounded features, from data or from a noisy moment matrix.

The GCM of Shah & Peters (2020) tests X ⫫ Y | S through the products of the
residuals of two regressions, R_i = (x_i − f̂(s_i))(y_i − ĝ(s_i)): under the
null their mean is zero, and T = √n · mean(R) / sd(R) is asymptotically
N(0, 1) whenever the regressions' errors shrink fast enough. Here X, Y and
every column of S enter through **bounded features**: a column mapped onto
[−1, 1] by its public bounds is expanded into the Chebyshev polynomials
T_1(u), …, T_d(u) (all in [−1, 1]), so a nonlinear dependence shows in the
products of features, and each regression is least squares of one feature on
the features of S (additive in S, a polynomial of degree d in each column).
With d features for X and for Y the statistic is the largest |T_ab| over the
products the test reads (Shah & Peters' Sec. 3.2, their max-type statistic for
several features): all d² of them given at most one column, and given two or
more only those with T_1 of X or of Y (:func:`product_mask`).

Which products keep the level. Under X ⫫ Y | S the mean of a residual product
is zero as soon as **one** of its two regressions is right:
E[(X − E[X|S]) · h(Y, S)] = 0 for every h. An additive regression on S is
right for T_1 of a column whose conditional mean is additive in S
(linear-Gaussian data; with one conditioning column every function of it is
additive, fitted up to the polynomials' degree), but not for T_k,
k ≥ 2, once the column depends on two or more columns of S: E[X² | S] of
X = a·S + e holds the products a_i a_j S_i S_j, which no additive basis fits,
and when X and Y share such parents the misfits of T_2(X) and of T_2(Y) are
correlated, so their product has a non-zero mean under the null and the test
rejects a true conditional independence with a probability that grows to 1
with n (linear data X, Y = ½ ΣZᵢ + noise, five Zᵢ, n = 500: all four products
rejected in 100 of 100 draws at α = 0.05, the three with T_1 in 7). A product
with T_1 of X or of Y has mean zero whenever that column's conditional mean is
additive in S. When it is not (X, Y = sin(ΣZᵢ) + noise, Zhang et al.'s
Fig. 1), no product is safe and the test does not keep its level at large n:
the additive model class is the test's assumption (Shah & Peters 2020, Sec. 2:
no test keeps its level against every null and has power against any
alternative).

:func:`gcm_test`
    The non-private test on data: residual products, their means and standard
    deviations, and the p-value of the maximum by a Gaussian multiplier
    bootstrap (Shah & Peters 2020, Sec. 3.2).
:func:`noisy_gcm_test`
    The same statistic computed from a **covariance of the features** — least
    squares of every feature of X and Y on those of S needs only second
    moments — with |T_ab| the partial correlation of the two features given
    the features of S. When the covariance comes from Gaussian-noised moments
    (:func:`dpcd.discovery.gcm_pc.gcm_pc` releases them once), the null
    distribution is drawn by a parametric bootstrap (each conditional variance
    raised by :data:`NOISE_FLOOR` noise standard deviations, and each feature
    pair's correlation divided by its spread over the null draws before the
    maximum is taken, so features drowned in noise weigh little): the sample
    covariance of n Gaussian records from the null covariance (the features'
    conditional cross-covariance given S set to zero) plus the same Gaussian
    noise on the moments. Post-processing of the released numbers: nothing
    here reads data. The variance of a residual product is taken as the
    product of the residual variances, exact when the residuals are
    independent of S (homoscedastic errors).

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> z = rng.uniform(-1, 1, 4000)
>>> x = np.clip(np.sin(2 * z) * 0.7 + 0.2 * rng.uniform(-1, 1, 4000), -1, 1)
>>> y = np.clip(z ** 2 - 0.3 + 0.2 * rng.uniform(-1, 1, 4000), -1, 1)
>>> box = np.column_stack([x, y, z])
>>> gcm_test(box, 0, 1, (2,), rng=1).p_value > 0.01       # x ⫫ y | z
True
>>> gcm_test(box, 0, 1, (), rng=1).p_value < 0.01         # but x and y depend on each other through z
True
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy import stats

from ..validation import RngLike, as_rng, check_int
from .result import CIResult

__all__ = ["chebyshev_features", "feature_columns", "product_mask", "gcm_test", "noisy_gcm_test",
           "noisy_covariance_draws", "DEFAULT_DEGREE", "DEFAULT_CONDITIONING_DEGREE", "DEFAULT_BOOTSTRAP"]

DEFAULT_DEGREE = 2
"""Chebyshev features of X and of Y whose residual products the statistic reads: T_1 (the column) and T_2."""
DEFAULT_CONDITIONING_DEGREE = 5
"""Chebyshev features T_1..T_5 of every column of S in the regressions: E[T_k(X) | S] of a smooth relation needs a
higher degree than the features of X and Y themselves (with 3, T_2 of x = sin(2z) is not fitted and the test rejects
a true independence at n = 4000), or the residuals keep a share of S; each further feature costs release noise
(:mod:`dpcd.discovery.gcm_pc`)."""
DEFAULT_BOOTSTRAP = 300
"""Null draws per test (multiplier draws for :func:`gcm_test`, parametric draws for :func:`noisy_gcm_test`)."""
_RIDGE = 1e-9
NOISE_FLOOR = 3.0
""":func:`noisy_gcm_test` adds this many noise standard deviations of a released variance (σ/n·(1 + 2|mean|)) to each
conditional variance before it normalises a covariance, in the observed statistic and in every null draw alike."""


def chebyshev_features(box: np.ndarray, degree: int = DEFAULT_DEGREE) -> np.ndarray:
    """Columns in [−1, 1] expanded to T_1..T_degree each (n × p·degree, all in [−1, 1]; column j's at
    :func:`feature_columns`).

    >>> chebyshev_features(np.array([[0.5], [-1.0]]), 3).round(3).tolist()
    [[0.5, -0.5, -1.0], [-1.0, 1.0, -1.0]]
    """
    degree = check_int(degree, "degree", minimum=1)
    u = np.asarray(box, dtype=np.float64)
    if u.ndim != 2:
        raise ValueError(f"box must be a 2-D array, got shape {u.shape}")
    if np.any(np.abs(u) > 1.0):
        raise ValueError("box must lie in [-1, 1] (map the columns by their public bounds first)")
    out = np.empty((u.shape[0], u.shape[1], degree))
    previous, current = np.ones_like(u), u
    out[:, :, 0] = u
    for k in range(1, degree):
        previous, current = current, 2.0 * u * current - previous
        out[:, :, k] = current
    return out.reshape(u.shape[0], u.shape[1] * degree)


def feature_columns(variables: Sequence[int], degree: int, *, layout: int | None = None) -> list[int]:
    """The first ``degree`` feature columns of each of ``variables`` in :func:`chebyshev_features`' layout of
    ``layout`` features per column (default ``degree``).

    >>> feature_columns([0, 2], 2)
    [0, 1, 4, 5]
    >>> feature_columns([1], 2, layout=5)
    [5, 6]
    """
    layout = degree if layout is None else layout
    return [int(v) * layout + k for v in variables for k in range(degree)]


def product_mask(degree: int, conditioning_size: int) -> np.ndarray:
    """Which residual products T_a(X)·T_b(Y) (a, b = 1..``degree``; row a − 1, column b − 1) the statistic reads
    given ``conditioning_size`` = |S| columns: all with |S| ≤ 1, only those with a = 1 or b = 1 with |S| ≥ 2
    (module docstring: an additive regression of T_k, k ≥ 2, on two or more columns is misspecified even for
    linear data, and two such misfits correlate under the null). A function of public sizes.

    >>> product_mask(2, 1).tolist(), product_mask(2, 2).tolist()
    ([[True, True], [True, True]], [[True, True], [True, False]])
    """
    degree = check_int(degree, "degree", minimum=1)
    conditioning_size = check_int(conditioning_size, "conditioning_size", minimum=0)
    mask = np.ones((degree, degree), dtype=bool)
    if conditioning_size >= 2:
        mask[1:, 1:] = False
    return mask


def _conditional_block(matrices: np.ndarray, q: int, floor: np.ndarray | float = 0.0) -> np.ndarray:
    """Covariance of the first q coordinates given the rest, for a stack of (…, k, k) matrices; the regression on
    the rest is ridge-regularised by ``floor`` (per coordinate of the rest) on top of a tiny relative ridge."""
    if matrices.shape[-1] == q:
        return matrices
    a, b, c = matrices[..., :q, :q], matrices[..., :q, q:], matrices[..., q:, q:]
    ridge = _RIDGE * np.maximum(np.trace(c, axis1=-2, axis2=-1), 1e-12)[..., None, None] * np.eye(c.shape[-1])
    ridge = ridge + np.diag(np.broadcast_to(np.asarray(floor, dtype=np.float64), (c.shape[-1],)))
    return a - b @ np.linalg.solve(c + ridge, np.swapaxes(b, -1, -2))


def _cross_correlations(matrices: np.ndarray, dx: int, dy: int, floor: np.ndarray | float = 0.0) -> np.ndarray:
    """corr(feature a of X, feature b of Y | S), shape (…, dx, dy), of (…, k, k) covariances laid out as (X, Y, S).

    ``floor`` (one value, or one per coordinate) is the noise level of each
    released variance: it is added to the conditional variances of X's and Y's
    features (a feature whose variance is of the order of the noise would
    otherwise give a correlation made of noise) and, as a ridge, to the
    regression on S's features (whose noise-dominated directions it shrinks)."""
    floor = np.broadcast_to(np.asarray(floor, dtype=np.float64), (matrices.shape[-1],))
    block = _conditional_block(matrices, dx + dy, floor[dx + dy:])
    diag = np.clip(np.diagonal(block, axis1=-2, axis2=-1), 1e-12, None) + floor[:dx + dy]
    return block[..., :dx, dx:dx + dy] / np.sqrt(diag[..., :dx, None] * diag[..., None, dx:dx + dy])


def _positive_definite(matrices: np.ndarray) -> np.ndarray:
    """Each symmetric (…, k, k) matrix with its eigenvalues raised to at least 10⁻⁶ of its mean |diagonal|."""
    symmetric = 0.5 * (matrices + np.swapaxes(matrices, -1, -2))
    values, vectors = np.linalg.eigh(symmetric)
    scale = np.mean(np.abs(np.diagonal(symmetric, axis1=-2, axis2=-1)), axis=-1)
    floor = 1e-6 * np.maximum(scale, 1e-12)[..., None]
    return (vectors * np.maximum(values, floor)[..., None, :]) @ np.swapaxes(vectors, -1, -2)


def _null_covariance(block: np.ndarray, dx: int, dy: int, floor: np.ndarray | float = 0.0) -> np.ndarray:
    """``block`` (laid out as X, Y, S) with the X–Y cross-covariance given S — by the same ridge regression on S as
    the statistic's (:func:`_conditional_block`) — set to zero, made positive definite."""
    null = block.copy()
    q = dx + dy
    if block.shape[0] > q:
        s = block[q:, q:]
        floor = np.broadcast_to(np.asarray(floor, dtype=np.float64), (block.shape[0],))[q:]
        ridge = _RIDGE * max(float(np.trace(s)), 1e-12) * np.eye(len(s)) + np.diag(floor)
        fitted = block[:dx, q:] @ np.linalg.solve(s + ridge, block[q:, dx:q])
    else:
        fitted = np.zeros((dx, dy))
    null[:dx, dx:q] = fitted
    null[dx:q, :dx] = fitted.T
    return _positive_definite(null)


def noisy_covariance_draws(null: np.ndarray, mean: np.ndarray, n: int, sigma: float, n_boot: int,
                           rng: np.random.Generator, weights: np.ndarray | None = None) -> np.ndarray:
    """``n_boot`` covariances as a release would give them under ``null``: the sample covariance of n Gaussian
    records (Wishart) plus Gaussian noise σ/n on every released second moment and σ/n on every released mean
    (σ/(n w_i w_j) and σ/(n w_i) with the release's public ``weights``, :func:`dpcd.privacy.moments.noisy_moments`)."""
    k = null.shape[0]
    sampled = stats.wishart.rvs(df=n - 1, scale=null / (n - 1), size=n_boot, random_state=rng)
    sampled = np.asarray(sampled).reshape(n_boot, k, k)
    noise = rng.normal(0.0, sigma / n, size=(n_boot, k, k))
    noise = np.triu(noise) + np.transpose(np.triu(noise, 1), (0, 2, 1))
    mean_noise = rng.normal(0.0, sigma / n, size=(n_boot, k))
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        noise, mean_noise = noise / np.outer(w, w), mean_noise / w
    shifted = mean[None, :] + mean_noise
    return sampled + noise + mean[None, :, None] * mean[None, None, :] - shifted[:, :, None] * shifted[:, None, :]


def noisy_gcm_test(covariance: np.ndarray, mean: np.ndarray, n: int, sigma: float, x: int, y: int,
                   S: Sequence[int] = (), *, degree: int = DEFAULT_DEGREE,
                   conditioning_degree: int = DEFAULT_CONDITIONING_DEGREE, weights: np.ndarray | None = None,
                   rng: RngLike, n_boot: int = DEFAULT_BOOTSTRAP) -> float:
    """p-value of X ⫫ Y | S from a covariance of Chebyshev features built from Gaussian-noised moments.

    ``covariance``/``mean`` are over the features of every column (layout of
    :func:`chebyshev_features` with ``conditioning_degree`` ≥ ``degree``; X and
    Y enter with their first ``degree``), ``sigma`` the noise standard
    deviation of each released sum (σ = 0: exact moments). The observed
    max-type GCM statistic over the products of :func:`product_mask` is ranked
    among ``n_boot`` parametric null draws (module docstring); ``weights`` are
    the release's public feature weights (None: all 1). Post-processing only.

    >>> rng = np.random.default_rng(1)
    >>> box = rng.uniform(-1, 1, size=(5000, 3))
    >>> box[:, 1] = np.clip(box[:, 0] ** 2 - 0.4 + 0.3 * box[:, 1], -1, 1)   # y depends on x (not linearly)
    >>> features = chebyshev_features(box, 5)
    >>> noisy_gcm_test(np.cov(features.T), features.mean(axis=0), 5000, 0.0, 0, 2, (1,), rng=0) > 0.05
    True
    >>> noisy_gcm_test(np.cov(features.T), features.mean(axis=0), 5000, 0.0, 0, 1, (), rng=0) < 0.01
    True
    """
    degree = check_int(degree, "degree", minimum=1)
    conditioning_degree = check_int(conditioning_degree, "conditioning_degree", minimum=degree)
    n = check_int(n, "n", minimum=4)
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    index = (feature_columns([x, y], degree, layout=conditioning_degree)
             + feature_columns(S, conditioning_degree))
    block = _positive_definite(np.asarray(covariance, dtype=np.float64)[np.ix_(index, index)])
    centre = np.asarray(mean, dtype=np.float64)[index]
    w = np.ones(len(index)) if weights is None else np.asarray(weights, dtype=np.float64)[index]
    # the noise on a released variance: σ/(n w²) on the second moment and 2|mean|·σ/(n w) through the noisy mean
    floor = NOISE_FLOOR * float(sigma) / n * (1.0 / w ** 2 + 2.0 * np.abs(centre) / w)
    observed = _cross_correlations(block, degree, degree, floor)  # block is already positive definite
    draws = noisy_covariance_draws(_null_covariance(block, degree, degree, floor), centre, n, float(sigma), n_boot,
                                   as_rng(rng), None if weights is None else w)
    null = _cross_correlations(_positive_definite(draws), degree, degree, floor)  # the same map as observed
    # studentised: each correlation over its spread under the null, so the noisiest features weigh least
    spread = np.maximum(null.std(axis=0), 1e-12)
    read = product_mask(degree, len(S))
    statistic = float(np.max((np.abs(observed) / spread)[read]))
    maxima = np.max((np.abs(null) / spread)[:, read], axis=-1)
    return float((1 + np.count_nonzero(~(maxima < statistic))) / (1 + n_boot))


def gcm_test(box: np.ndarray, x: int, y: int, S: Sequence[int] = (), *, degree: int = DEFAULT_DEGREE,
             conditioning_degree: int = DEFAULT_CONDITIONING_DEGREE, rng: RngLike = 0,
             n_boot: int = DEFAULT_BOOTSTRAP) -> CIResult:
    """The (non-private) max-type GCM test of X ⫫ Y | S on columns already in [−1, 1] (Shah & Peters 2020).

    Each of the ``degree`` features of X and of Y is regressed by least squares
    on an intercept and the ``conditioning_degree`` features of each column of
    S; T_ab = √n · mean(R_ab)/sd(R_ab) for the residual products R_ab of :func:`product_mask`, the statistic is
    max |T_ab|, and its p-value comes from ``n_boot`` Gaussian multiplier draws of the normalised products
    (their Sec. 3.2). ``statistic`` of the result is the maximum; ``df`` the number of products read.
    """
    degree = check_int(degree, "degree", minimum=1)
    conditioning_degree = check_int(conditioning_degree, "conditioning_degree", minimum=1)
    data = np.asarray(box, dtype=np.float64)
    n = data.shape[0]
    targets = chebyshev_features(data[:, [x, y]], degree)
    design = np.column_stack([np.ones(n), chebyshev_features(data[:, list(S)], conditioning_degree)])
    coefficients, *_ = np.linalg.lstsq(design, targets, rcond=None)
    residuals = targets - design @ coefficients
    read = product_mask(degree, len(S))
    products = (residuals[:, :degree, None] * residuals[:, None, degree:])[:, read]
    centred = products - products.mean(axis=0)
    scale = np.sqrt(np.mean(centred ** 2, axis=0))
    scale[scale <= 0] = math.inf
    statistic = float(np.max(np.abs(math.sqrt(n) * products.mean(axis=0) / scale)))
    generator = as_rng(rng)
    null = np.empty(n_boot)
    normalised = centred / scale
    for b in range(n_boot):
        null[b] = np.max(np.abs(generator.standard_normal(n) @ normalised)) / math.sqrt(n)
    p_value = float((1 + np.count_nonzero(null >= statistic)) / (1 + n_boot))
    return CIResult(statistic, p_value, float(np.count_nonzero(read)))

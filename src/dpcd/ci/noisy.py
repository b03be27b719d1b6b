"""CI tests on **noisy** contingency tables: counts released with Gaussian noise of a known variance.

A table released by a Gaussian mechanism is a sum of two errors: the sampling
of the n records and the added noise (per cell, variance ``noise_var``, known
because the mechanism chose it). A test that ignores the noise rejects
independence whenever the noise is large against the counts — on alarm's
skewed tables the G²/Pearson test rejects a true independence at α = 0.01 in
about a third of the draws — and a test that divides by a noise-inflated
variance is still wrong where the noise is large against a stratum's own
margins, because its expected counts are then built from noise. So both tests
here are **calibrated by a parametric bootstrap**: the null model (conditional
independence) is fitted to the noisy table's own margins (negative margins
clipped), ``n_boot`` tables are drawn from it — Poisson sampling plus the same
Gaussian noise — and the p-value is the share of simulated statistics at least
as large as the observed one, (1 + #{T* ≥ T}) / (1 + n_boot). Everything here is
post-processing of released tables: nothing reads the data, and the bootstrap
draws only public randomness.

:func:`noisy_table_test`
    X ⫫ Y | S from the noisy (S, X, Y) table. The statistic is the larger of two
    standardised ones: the Pearson statistic with noise-inflated variances,
    Σ_s Σ_xy (T − E)² / (E + v), over strata whose noisy size exceeds
    ``min_stratum`` · √(v·|X||Y|) (smaller strata hold noise only), and the same
    statistic on the residuals pooled over the strata (one (|X|−1)(|Y|−1)-df
    table, Cochran–Mantel–Haenszel in spirit: power where the dependence has one
    direction in every stratum). Each is centred by its degrees of freedom and
    scaled by √(2 df) before the maximum is taken; the bootstrap calibrates the
    maximum.
:func:`pairwise_screen_test`
    X ⫫ Y | Z from the three **pair** tables (X, Y), (X, Z), (Y, Z) alone:
    under X ⫫ Y | Z the (X, Y) table equals Σ_z p(x|z) p(y|z) n(z), which the
    (X, Z) and (Y, Z) tables predict, so a large gap between the two rejects the
    hypothesis. It needs no three-way table — a free first look at an order-1
    test when the pair tables are already released. Its null draws are one
    multinomial sample of n records from the fitted p(z) p(x|z) p(y|z), cut into
    the three pair tables, each with its own noise.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> table = rng.poisson(2_000.0, size=(2, 3, 3)).astype(float)     # independent within each stratum
>>> noisy = table + rng.normal(0.0, 50.0, size=table.shape)
>>> noisy_table_test(noisy, 50.0 ** 2, rng=1) > 0.05
True
>>> dependent = table.copy(); dependent[:, 0, 0] += 3_000.0
>>> noisy_table_test(dependent + rng.normal(0.0, 50.0, size=table.shape), 50.0 ** 2, rng=1) < 0.01
True
"""

from __future__ import annotations

import math

import numpy as np

from ..validation import RngLike, as_rng, check_int, check_positive
from .denoise import ComponentNoise

__all__ = ["noisy_table_test", "pairwise_screen_test", "pair_table_noise", "DEFAULT_BOOTSTRAP", "MIN_STRATUM",
           "NOISE_MODELS"]

DEFAULT_BOOTSTRAP = 300
"""Null tables drawn per test: p-values in steps of 1/301, fine enough at α ≥ 0.01."""
NOISE_MODELS = ("cells", "interaction")
"""How a released table's noise is laid out: i.i.d. per cell, or a pair table rebuilt from its interaction and
margins (:mod:`dpcd.privacy.interactions`)."""
MIN_STRATUM = 2.0
"""A stratum enters the statistic when its noisy size exceeds this many noise standard deviations of its cells."""


def _independence_fit(tables: np.ndarray) -> np.ndarray:
    """Expected counts under X ⫫ Y within each stratum, from the tables' clipped margins (..., strata, |X|, |Y|)."""
    rows = np.clip(tables.sum(axis=-1, keepdims=True), 0.0, None)
    cols = np.clip(tables.sum(axis=-2, keepdims=True), 0.0, None)
    size = np.clip(tables.sum(axis=(-1, -2), keepdims=True), 0.0, None)
    p_rows = rows / np.clip(rows.sum(axis=-2, keepdims=True), 1e-12, None)
    p_cols = cols / np.clip(cols.sum(axis=-1, keepdims=True), 1e-12, None)
    return size * p_rows * p_cols


def _statistics(tables: np.ndarray, noise_var: float, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The stratified and the pooled Pearson statistics of (..., strata, |X|, |Y|) noisy tables, each centred by
    its degrees of freedom and scaled by √(2 df)."""
    expected = _independence_fit(tables)
    residual = tables - expected
    variance = expected + noise_var
    per_stratum = (residual ** 2 / variance).sum(axis=(-1, -2))[..., keep].sum(axis=-1)
    pooled = (residual[..., keep, :, :].sum(axis=-3) ** 2 / variance[..., keep, :, :].sum(axis=-3)).sum(axis=(-1, -2))
    cells = (tables.shape[-1] - 1) * (tables.shape[-2] - 1)
    df_strata = max(int(keep.sum()), 1) * cells
    return (per_stratum - df_strata) / math.sqrt(2.0 * df_strata), (pooled - cells) / math.sqrt(2.0 * cells)


def _statistic(tables: np.ndarray, noise_var: float, keep: np.ndarray) -> np.ndarray:
    """max(standardised stratified Pearson, standardised pooled Pearson) of (..., strata, |X|, |Y|) noisy tables."""
    return np.maximum(*_statistics(tables, noise_var, keep))


def _studentised_p(observed: tuple[float, float], null: tuple[np.ndarray, np.ndarray]) -> float:
    """p-value of max(stratified, pooled), each statistic standardised by its own null draws' mean and standard
    deviation: where the noise is not the same in every direction their degrees of freedom do not describe them."""
    centre = [float(np.mean(t)) for t in null]
    scale = [max(float(np.std(t)), 1e-12) for t in null]
    def joint(values):
        return np.maximum(*((v - c) / s for v, c, s in zip(values, centre, scale)))
    return _p_value(float(joint(observed)), joint(null))


def _p_value(observed: float, null: np.ndarray) -> float:
    return float((1 + np.count_nonzero(null >= observed)) / (1 + null.size))


def pair_table_noise(shape: tuple[int, ...], noise_var: float, rng: np.random.Generator, *,
                     row_noise: np.ndarray | None = None, column_noise: np.ndarray | None = None) -> np.ndarray:
    """Draws of the noise of pair tables rebuilt by :func:`dpcd.privacy.interactions.pair_interaction_mechanism`, of
    shape (..., d_x, d_y): C_x G C_y + e_x 1ᵀ/d_y + 1 e_yᵀ/d_x with G, e_x, e_y i.i.d. N(0, ``noise_var``) (that
    module's docstring). ``row_noise`` (..., d_x) and ``column_noise`` (..., d_y) pass margin noise another table
    shares; drawn here otherwise. The bootstrap's null draws: public randomness, no privacy noise.

    >>> draws = pair_table_noise((20_000, 2, 2), 4.0, np.random.default_rng(0))
    >>> round(float(draws[:, 0, 0].var()), 1)                           # (1 - 1/2)^2 * 4 + 2 * 4 / 4 = 3
    3.0
    """
    sd = math.sqrt(check_positive(noise_var, "noise_var"))
    cells = rng.normal(0.0, sd, size=shape)
    centred = cells - cells.mean(axis=-1, keepdims=True) - cells.mean(axis=-2, keepdims=True) \
        + cells.mean(axis=(-1, -2), keepdims=True)
    rows = rng.normal(0.0, sd, size=shape[:-1]) if row_noise is None else row_noise
    columns = rng.normal(0.0, sd, size=(*shape[:-2], shape[-1])) if column_noise is None else column_noise
    return centred + rows[..., :, None] / shape[-1] + columns[..., None, :] / shape[-2]


def _cell_variance(shape: tuple[int, ...], noise_var: float, noise: str | ComponentNoise) -> float:
    """Per-cell noise variance of a released (..., |X|, |Y|) table under the ``noise`` model (:data:`NOISE_MODELS`, or
    an estimated table's :class:`~dpcd.ci.denoise.ComponentNoise`)."""
    if isinstance(noise, ComponentNoise):
        return noise.cell_variance
    if noise not in NOISE_MODELS:
        raise ValueError(f"noise must be one of {NOISE_MODELS}, got {noise!r}")
    if noise == "cells":
        return noise_var
    a, b = 1.0 / shape[-2], 1.0 / shape[-1]
    return noise_var * ((1.0 - a) * (1.0 - b) + a * a + b * b)


def noisy_table_test(tables: np.ndarray, noise_var: float | None, *, rng: RngLike, n_boot: int = DEFAULT_BOOTSTRAP,
                     min_stratum: float = MIN_STRATUM, noise: str | ComponentNoise = "cells") -> float:
    """p-value of X ⫫ Y | S from a noisy table of shape (strata of S, |X|, |Y|) with per-cell noise variance.

    ``noise``: ``"cells"`` (i.i.d. N(0, ``noise_var``) per cell) or
    ``"interaction"`` (one pair table rebuilt by
    :func:`dpcd.privacy.interactions.pair_interaction_mechanism`, ``noise_var``
    per released coordinate; the bootstrap draws
    :func:`pair_table_noise`), or the :class:`~dpcd.ci.denoise.ComponentNoise`
    of a table estimated from overlapping releases (:mod:`dpcd.ci.denoise`;
    its shape, before the strata are flattened, is the law's; ``noise_var``
    None; the two statistics are then standardised by their bootstrap null
    draws' mean and standard deviation, since the noise differs between
    directions). Returns 1.0 when no
    stratum is large enough to carry evidence (the test cannot reject).
    Calibrated by the parametric bootstrap of the module docstring;
    post-processing only.
    """
    tables = np.asarray(tables, dtype=np.float64)
    if tables.ndim == 2:
        tables = tables[None]
    if tables.ndim != 3 or min(tables.shape) < 1:
        raise ValueError(f"tables must have shape (strata, |X|, |Y|), got {tables.shape}")
    components = isinstance(noise, ComponentNoise)
    if components and noise.sd.size != tables.size:
        raise ValueError(f"noise describes a table of shape {noise.sd.shape}, got tables of shape {tables.shape}")
    noise_var = None if components else check_positive(noise_var, "noise_var")
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    cell_var = _cell_variance(tables.shape, noise_var, noise)
    if noise == "interaction" and tables.shape[0] != 1:
        raise ValueError(f"noise={noise!r} describes one pair table; got {tables.shape[0]} strata")
    if tables.shape[1] < 2 or tables.shape[2] < 2:
        return 1.0
    keep = tables.sum(axis=(1, 2)) > min_stratum * math.sqrt(cell_var * tables.shape[1] * tables.shape[2])
    if not keep.any():
        return 1.0
    generator = as_rng(rng)
    expected = _independence_fit(tables)
    draws = generator.poisson(np.broadcast_to(expected, (n_boot, *expected.shape))).astype(np.float64)
    if components:
        draws += noise.draw(n_boot, generator).reshape(draws.shape)
        return _studentised_p(_statistics(tables, cell_var, keep), _statistics(draws, cell_var, keep))
    observed = float(_statistic(tables, cell_var, keep))
    if noise == "cells":
        draws += generator.normal(0.0, math.sqrt(noise_var), size=draws.shape)
    else:
        draws += pair_table_noise(draws.shape, noise_var, generator)
    return _p_value(observed, _statistic(draws, cell_var, keep))


def _screen_statistic(xy: np.ndarray, xz: np.ndarray, yz: np.ndarray, scale: float) -> np.ndarray:
    """Pearson-type gap between the (X, Y) table and the one X ⫫ Y | Z implies from the (X, Z), (Y, Z) tables."""
    xz = np.clip(xz, 0.0, None)
    yz = np.clip(yz, 0.0, None)
    n_z = 0.5 * (xz.sum(axis=-2) + yz.sum(axis=-2))
    p_x = xz / np.clip(xz.sum(axis=-2, keepdims=True), 1e-12, None)
    p_y = yz / np.clip(yz.sum(axis=-2, keepdims=True), 1e-12, None)
    implied = np.einsum("...ik,...jk,...k->...ij", p_x, p_y, n_z)
    return ((xy - implied) ** 2 / (implied + scale)).sum(axis=(-1, -2))


def pairwise_screen_test(xy: np.ndarray, xz: np.ndarray, yz: np.ndarray, noise_var: float, n: int, *,
                         rng: RngLike, n_boot: int = DEFAULT_BOOTSTRAP, noise: str = "cells") -> float:
    """p-value of X ⫫ Y | Z from the noisy pair tables (|X|, |Y|), (|X|, |Z|), (|Y|, |Z|) alone.

    ``noise_var`` is the per-cell noise variance of each pair table (``noise="cells"``) or, with
    ``noise="interaction"``, the per-coordinate variance of
    :func:`dpcd.privacy.interactions.pair_interaction_mechanism`, whose three
    rebuilt tables share the margins' noise (the bootstrap draws it shared);
    ``n`` the public number of records. A small p-value shows X and Y
    dependent given Z; a large one says only that the pair tables cannot tell
    (a three-way table can).
    """
    xy, xz, yz = (np.asarray(t, dtype=np.float64) for t in (xy, xz, yz))
    if xy.ndim != 2 or xz.shape[0] != xy.shape[0] or yz.shape[0] != xy.shape[1] or xz.shape[1] != yz.shape[1]:
        raise ValueError(f"pair tables of shapes {xy.shape}, {xz.shape}, {yz.shape} do not fit (X, Y), (X, Z), (Y, Z)")
    noise_var = check_positive(noise_var, "noise_var")
    n = check_int(n, "n", minimum=1)
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    scale = 3.0 * _cell_variance(xy.shape, noise_var, noise)
    observed = float(_screen_statistic(xy, xz, yz, scale))
    xz_c, yz_c = np.clip(xz, 0.0, None), np.clip(yz, 0.0, None)
    p_z = 0.5 * (xz_c.sum(axis=0) + yz_c.sum(axis=0))
    p_z = p_z / p_z.sum() if p_z.sum() > 0 else np.full(p_z.shape, 1.0 / p_z.size)
    p_x = xz_c / np.clip(xz_c.sum(axis=0, keepdims=True), 1e-12, None)
    p_y = yz_c / np.clip(yz_c.sum(axis=0, keepdims=True), 1e-12, None)
    joint = np.einsum("k,ik,jk->ijk", p_z, p_x, p_y)
    total = joint.sum()
    joint = joint / total if total > 0 else np.full(joint.shape, 1.0 / joint.size)
    generator = as_rng(rng)
    draws = generator.multinomial(n, joint.ravel(), size=n_boot).reshape((n_boot, *joint.shape)).astype(np.float64)
    sd = math.sqrt(noise_var)
    if noise == "cells":
        noises = [generator.normal(0.0, sd, size=(n_boot, *t.shape)) for t in (xy, xz, yz)]
    else:  # the margins' noise is one draw per column, shared by the tables that hold it
        e_x, e_y, e_z = (generator.normal(0.0, sd, size=(n_boot, d)) for d in joint.shape)
        noises = [pair_table_noise((n_boot, *t.shape), noise_var, generator, row_noise=rows, column_noise=columns)
                  for t, rows, columns in ((xy, e_x, e_y), (xz, e_x, e_z), (yz, e_y, e_z))]
    null = _screen_statistic(draws.sum(axis=-1) + noises[0], draws.sum(axis=-2) + noises[1],
                             draws.sum(axis=-3) + noises[2], scale)
    return _p_value(observed, null)

"""Audit cases for private ANM (Kusner et al. 2016) with test-set (Sec. 4) and training-set (Sec. 5) privacy.

Test-set privacy: the pair replaces the test record that moves the score
margin most (:func:`anm_test_pair`, an exhaustive search over a grid of the
public box); each of the two scores is released with Lap(Δ/(ε/2)), so the
claim is ε by Thm. 1/3 and basic composition — stated here, not read from a
ledger. Training-set privacy (:func:`anm_training_case`): the pair replaces
the **training** record that moves the HSIC margin most once both kernel
regressions are refitted (:func:`anm_training_pair`); each HSIC score is
released with Lap(Δ/(ε/2)), Δ of Thm. 7 with Thm. 5, so the claim is ε.
The IQR score (:func:`anm_iqr_case`, Thm. 4/6): four Dwork–Lei releases of a
log IQR, each (3ε_s, δ_s), on a test half whose quartile sits at a tie, so
that one replaced record moves an IQR from 0 to 1.

Examples
--------
>>> sorted(ANM_SCORES)
['HSIC', 'HSIC norm', 'Kendall', 'Spearman']
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import replace as dc_replace
from typing import Any

import numpy as np

from ..bivariate.anm import (
    check_split,
    fit_anm,
    fit_scores,
    gaussian_kernel_lipschitz,
    hsic_training_sensitivity,
    iqr,
    krr_predict,
    private_anm_test_set,
    private_anm_training_set,
    quartile_indices,
    score_sensitivity,
)
from ..privacy.mechanisms import laplace_noise
from ..validation import RngLike, as_rng, check_epsilon, check_int
from .events import Event, as_batch_array, at_least
from .neighbours import NeighbouringPair, replace_record
from .runner import AuditCase

__all__ = ["ANM_SCORES", "anm_test_pair", "anm_case", "anm_training_pair", "anm_training_case", "anm_iqr_case"]


ANM_SCORES = {"Spearman": "spearman", "Kendall": "kendall", "HSIC": "hsic", "HSIC norm": "hsic_norm"}
_ANM_BOUNDS = (-1.0, 1.0)


@dataclass(frozen=True)
class _ANMTestSetRun:
    """One run of :func:`dpcd.bivariate.anm.private_anm_test_set` on a pair stored as an (n, 2) array in [−1, 1]².

    The split (``train_index``, ``test_index``) and the bounds [−1, 1] of both
    variables are passed as public, so data sets differing in one test row
    are neighbours exactly as the test-set guarantee states. Output: the
    released scores ``(p_{X→Y}, p_{Y→X})`` of ``score``. ``sensitivity_factor``
    < 1 is a BROKEN variant: the noise is calibrated to that fraction of the
    sensitivity (run with ε / factor) while the claim stays the published one.
    """

    score: str
    epsilon: float
    train_index: tuple[int, ...]
    test_index: tuple[int, ...]
    lam: float = 1e-3
    sensitivity_factor: float = 1.0

    def result(self, data: Any, rng: Any) -> Any:
        array = np.asarray(data, dtype=np.float64)
        return private_anm_test_set(
            array[:, 0], array[:, 1], epsilon=self.epsilon / self.sensitivity_factor, scores=(self.score,),
            lam=self.lam, split=(np.asarray(self.train_index), np.asarray(self.test_index)),
            bounds_x=_ANM_BOUNDS, bounds_y=_ANM_BOUNDS, rng=rng)

    def __call__(self, data: Any, rng: Any) -> np.ndarray:
        return np.asarray(self.result(data, rng).scores[self.score], dtype=np.float64)


@dataclass(frozen=True)
class _ScoreMargin:
    """Indicator of ``p_{Y→X} − p_{X→Y} ≥ threshold`` (``> threshold`` when ``strict``) on a batch of score pairs."""

    threshold: float
    strict: bool = False

    def __call__(self, batch: Any) -> np.ndarray:
        values = as_batch_array(batch).astype(np.float64, copy=False).reshape(-1, 2)
        margin = values[:, 1] - values[:, 0]
        return margin > self.threshold if self.strict else margin >= self.threshold


def _abs_tau(a: np.ndarray, b: np.ndarray) -> float:
    m = a.size
    return abs(float(np.sum(np.sign(a[:, None] - a[None, :]) * np.sign(b[:, None] - b[None, :])))) / (m * (m - 1))


def _anm_margins(fit: Any, score: str, x_new: np.ndarray, y_new: np.ndarray, f_new: np.ndarray,
                 g_new: np.ndarray) -> np.ndarray:
    """Non-private margins s_{Y→X} − s_{X→Y} after replacing test row k by (x_new[c], y_new[c]), shape (m, C).

    ``f_new``/``g_new`` are the (fixed, trained) regressions evaluated at the candidates.
    """
    tie_rng = np.random.default_rng(0)  # continuous data: ranks have no ties, the priorities do not matter
    out = np.empty((fit.m, x_new.size))
    for k in range(fit.m):
        for c in range(x_new.size):
            xt, yt = fit.x_test.copy(), fit.y_test.copy()
            ry, rx = fit.residual_y.copy(), fit.residual_x.copy()
            xt[k], yt[k] = x_new[c], y_new[c]
            ry[k], rx[k] = y_new[c] - f_new[c], x_new[c] - g_new[c]
            if score == "kendall":  # |C − D| / (m(m − 1)/2) on untied data, O(m²) without scipy's overhead
                out[k, c] = _abs_tau(yt, rx) - _abs_tau(xt, ry)
                continue
            s_xy, s_yx = fit_scores(dc_replace(fit, x_test=xt, y_test=yt, residual_y=ry, residual_x=rx), score,
                                     tie_rng)
            out[k, c] = s_yx - s_xy
    return out


def _checked_pair_inputs(data: np.ndarray, split: tuple[np.ndarray, np.ndarray], grid_points: int
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(data as an (n, 2) array in [−1, 1]², training rows, test rows, grid points), each checked."""
    array = np.asarray(data, dtype=np.float64)
    if array.ndim != 2 or array.shape[1] != 2:
        raise ValueError(f"data must be an (n, 2) array, got shape {array.shape}")
    if np.any(np.abs(array) > 1.0):
        raise ValueError("data must lie in [-1, 1]^2 (the public bounds)")
    train, test = check_split(split, array.shape[0])
    return array, train, test, check_int(grid_points, "grid_points", minimum=2)


def anm_test_pair(data: np.ndarray, *, split: tuple[np.ndarray, np.ndarray], score: str, lam: float = 1e-3,
                  grid_points: int = 9) -> NeighbouringPair:
    """The test-row replacement that moves the ANM score margin ``s_{Y→X} − s_{X→Y}`` the most.

    ``data`` is an (n, 2) array in [−1, 1]² (the public bounds), ``split`` the
    public train/test split. Candidates: every test row, replaced by every point
    of a ``grid_points`` × ``grid_points`` grid of [−1, 1]² (corners included).
    The training half — hence both kernel regressions and all bandwidths — is
    the same on D and D′, so only the replaced test record's point and its two
    residuals change; the search is exhaustive over this grid. ``meta`` holds
    the margins on D and D′ (recomputed with :func:`dpcd.bivariate.anm.fit_anm`).
    """
    array, train, test, grid_points = _checked_pair_inputs(data, split, grid_points)

    def fit_of(d: np.ndarray):
        return fit_anm(d[:, 0], d[:, 1], lam=lam, rng=0, split=(train, test), bounds_x=_ANM_BOUNDS,
                       bounds_y=_ANM_BOUNDS)

    fit = fit_of(array)
    grid = np.linspace(-1.0, 1.0, grid_points)
    x_new, y_new = (v.ravel() for v in np.meshgrid(grid, grid, indexing="ij"))
    x_tr, y_tr = array[train, 0], array[train, 1]
    f_new, _ = krr_predict(x_tr, y_tr, x_new, lam=lam, bandwidth=fit.bandwidths["x"])
    g_new, _ = krr_predict(y_tr, x_tr, y_new, lam=lam, bandwidth=fit.bandwidths["y"])
    base = fit_scores(fit, score, np.random.default_rng(0))
    base_margin = base[1] - base[0]
    change = np.abs(_anm_margins(fit, score, x_new, y_new, f_new, g_new) - base_margin)
    k, c = np.unravel_index(int(np.argmax(change)), change.shape)
    row = int(test[k])
    record = np.array([x_new[c], y_new[c]])
    after = fit_scores(fit_of(replace_record(array, row, record, check=False).neighbour), score,
                        np.random.default_rng(0))
    meta = {"margin_D": base_margin, "margin_D_prime": after[1] - after[0], "scores_D": base,
            "scores_D_prime": after, "row": row, "record": record.tolist(), "m": fit.m, "n": fit.n}
    description = (f"test row {row} ({array[row, 0]:.2f}, {array[row, 1]:.2f}) replaced by "
                   f"({record[0]:.2f}, {record[1]:.2f}): {score} margin s_YX − s_XY {base_margin:.3g} → "
                   f"{meta['margin_D_prime']:.3g}; training half and split public")
    return replace_record(array, row, record, description=description, meta=meta)


def _anm_setting(epsilon: float, rng: RngLike, size: str, sensitivity_factor: float
                 ) -> tuple[float, int, np.ndarray, np.ndarray, np.ndarray]:
    """(ε, n, data, training rows, test rows) of the ANM cases: x ~ U(−1, 1), y = 0.8 x³ + 0.2 U(−1, 1), first half
    the public training half; arguments checked."""
    if size not in ("smoke", "quick", "full"):
        raise ValueError(f"size must be 'smoke', 'quick' or 'full', got {size!r}")
    epsilon = check_epsilon(epsilon)
    if not 0 < sensitivity_factor <= 1:
        raise ValueError(f"sensitivity_factor must lie in (0, 1], got {sensitivity_factor}")
    generator = as_rng(rng)
    n = {"smoke": 40, "quick": 100, "full": 200}[size]
    x = generator.uniform(-1.0, 1.0, n)
    data = np.column_stack([x, 0.8 * x**3 + 0.2 * generator.uniform(-1.0, 1.0, n)])
    return epsilon, n, data, np.arange(n // 2), np.arange(n // 2, n)


def _margin_events(pair: NeighbouringPair, scale: float) -> list[Event]:
    """The released decision, ``p_YX − p_XY ≥ c`` and ``p_XY ≥ c``, ``p_YX ≥ c`` on grids of c around the pair's
    values, spaced by the noise ``scale``."""
    centre = 0.5 * (pair.meta["margin_D"] + pair.meta["margin_D_prime"])
    events = [Event("released decision x→y", _ScoreMargin(0.0, strict=True))]
    events += [Event(f"p_YX − p_XY ≥ {c:.3g}", _ScoreMargin(float(c)))
               for c in np.linspace(centre - 4 * scale, centre + 4 * scale, 33)]
    for j, label in ((0, "XY"), (1, "YX")):
        middle = 0.5 * (pair.meta["scores_D"][j] + pair.meta["scores_D_prime"][j])
        events += [at_least(c, coordinate=j, name=f"p_{label} ≥ {c:.3g}")
                   for c in np.linspace(middle - 3 * scale, middle + 3 * scale, 17)]
    return events


def anm_case(score: str = "spearman", *, epsilon: float, rng: RngLike, size: str = "quick",
             sensitivity_factor: float = 1.0) -> AuditCase:
    """Audit case for private ANM with test-set privacy (Kusner et al. 2016, Sec. 4) and one score.

    Data: ``n`` pairs with ``x ~ U(−1, 1)``, ``y = 0.8 x³ + 0.2 U(−1, 1)``
    (so in [−1, 1]², the public bounds), the first half the public training
    half, the rest the test half. The pair replaces the test record that moves
    the score margin most (:func:`anm_test_pair`). Each score is released with
    ε/2, so the ledger total (the claim, read from a probe run's ledger) is
    ``epsilon``. Events: the released decision "x→y" (``p_{X→Y} < p_{Y→X}``),
    ``p_{Y→X} − p_{X→Y} ≥ c`` and ``p_{X→Y} ≥ c``, ``p_{Y→X} ≥ c`` on grids
    of c (complements are added by the auditor). The claim is ``epsilon``
    (two Laplace releases of ε/2 each, Thm. 1/3). ``sensitivity_factor=0.5``
    gives the BROKEN variant with the noise of half the sensitivity.
    """
    if score not in ANM_SCORES.values():
        raise ValueError(f"score must be one of {sorted(ANM_SCORES.values())}, got {score!r}")
    epsilon, n, data, train, test = _anm_setting(epsilon, rng, size, sensitivity_factor)
    grid_points = {"smoke": 5, "quick": 9, "full": 13}[size]
    pair = anm_test_pair(data, split=(train, test), score=score, grid_points=grid_points)
    run = _ANMTestSetRun(score, epsilon / 2.0, tuple(int(i) for i in train), tuple(int(i) for i in test),
                         sensitivity_factor=float(sensitivity_factor))
    scale = score_sensitivity(score, pair.meta["m"]) / (epsilon / 2.0) * sensitivity_factor
    events = _margin_events(pair, scale)
    label = {v: k for k, v in ANM_SCORES.items()}[score]
    broken = sensitivity_factor != 1.0
    name = f"{'BROKEN ' if broken else ''}ANM (test-set, {label})"
    note = (f"n = {n} (m = {pair.meta['m']} test records), ε/2 per score, claim ε (replace one test record; "
            "training half, split and bounds public)"
            + (f"; noise for {sensitivity_factor:g} × the sensitivity" if broken else ""))
    return AuditCase(name, run, pair, tuple(events), epsilon, 0.0, False, note=note, expect_violation=broken)


@dataclass(frozen=True)
class _ANMTrainingSetRun:
    """One run of :func:`dpcd.bivariate.anm.private_anm_training_set` (HSIC) on an (n, 2) array in [−1, 1]².

    Split, λ, bandwidth and the bounds [−1, 1] are public. Output: the released
    HSIC scores ``(p_{X→Y}, p_{Y→X})``. ``sensitivity_factor`` < 1 is a BROKEN
    variant: the noise of that fraction of Thm. 7's sensitivity, the claim unchanged.
    """

    epsilon: float
    train_index: tuple[int, ...]
    test_index: tuple[int, ...]
    lam: float
    bandwidth: float
    sensitivity_factor: float = 1.0

    def __call__(self, data: Any, rng: Any) -> np.ndarray:
        array = np.asarray(data, dtype=np.float64)
        result = private_anm_training_set(
            array[:, 0], array[:, 1], epsilon=self.epsilon / self.sensitivity_factor, scores=("hsic",),
            lam=self.lam, bandwidth=self.bandwidth, bounds_x=_ANM_BOUNDS, bounds_y=_ANM_BOUNDS, rng=rng,
            split=(np.asarray(self.train_index), np.asarray(self.test_index)))
        return np.asarray(result.scores["hsic"], dtype=np.float64)


def anm_training_pair(data: np.ndarray, *, split: tuple[np.ndarray, np.ndarray], lam: float, bandwidth: float,
                      grid_points: int = 9) -> NeighbouringPair:
    """The training-row replacement that moves the HSIC margin ``s_{Y→X} − s_{X→Y}`` the most.

    ``data`` is an (n, 2) array in [−1, 1]², ``split`` the public split, λ and
    ``bandwidth`` the public regression and kernel parameters. Candidates: every
    training row replaced by every point of a ``grid_points`` × ``grid_points``
    grid of [−1, 1]²; each candidate refits both kernel regressions
    (:func:`dpcd.bivariate.anm.fit_anm`), so every test residual moves — the
    change Thm. 5 bounds. The search is exhaustive over this grid.
    """
    array, train, test, grid_points = _checked_pair_inputs(data, split, grid_points)

    def scores_of(d: np.ndarray) -> tuple[float, float]:
        fit = fit_anm(d[:, 0], d[:, 1], lam=lam, rng=0, split=(train, test), bandwidth=bandwidth,
                      bounds_x=_ANM_BOUNDS, bounds_y=_ANM_BOUNDS, require_variation=False)
        return fit_scores(fit, "hsic", np.random.default_rng(0))

    base = scores_of(array)
    grid = np.linspace(-1.0, 1.0, grid_points)
    best, record, row, after = -1.0, None, -1, base
    for k in train:
        for gx in grid:
            for gy in grid:
                candidate = array.copy()
                candidate[k] = (gx, gy)
                scores = scores_of(candidate)
                change = abs((scores[1] - scores[0]) - (base[1] - base[0]))
                if change > best:
                    best, record, row, after = change, np.array([gx, gy]), int(k), scores
    meta = {"margin_D": base[1] - base[0], "margin_D_prime": after[1] - after[0], "scores_D": base,
            "scores_D_prime": after, "row": row, "record": record.tolist(), "m": len(test), "n": len(train)}
    description = (f"training row {row} ({array[row, 0]:.2f}, {array[row, 1]:.2f}) replaced by "
                   f"({record[0]:.2f}, {record[1]:.2f}): HSIC margin s_YX − s_XY {meta['margin_D']:.3g} → "
                   f"{meta['margin_D_prime']:.3g}; test half, split, lambda and bandwidth public")
    return replace_record(array, row, record, description=description, meta=meta)


TRAINING_LAMBDA = 1.0
"""λ of the training-set audit case: the largest Thm. 5 allows (λ ≤ 1), where its sensitivity is smallest."""
TRAINING_BANDWIDTH = 0.5
"""Public Gaussian-kernel bandwidth of the training-set audit case."""
TRAINING_BROKEN_FACTOR = 1e-5
"""The BROKEN training-set variant adds the noise of this fraction of Thm. 7's sensitivity."""


def anm_training_case(*, epsilon: float, rng: RngLike, size: str = "quick",
                      sensitivity_factor: float = 1.0) -> AuditCase:
    """Audit case for private ANM with **training-set** privacy (Kusner et al. 2016, Sec. 5, Thm. 5 and 7), HSIC.

    Data as :func:`anm_case` (the first half the public training half); the pair
    replaces the training record that moves the HSIC margin most once both
    regressions are refitted (:func:`anm_training_pair`). Each HSIC score is
    released with Lap(Δ/(ε/2)), Δ = Thm. 7 (paper reading) with Thm. 5, λ =
    :data:`TRAINING_LAMBDA`, so the claim is ε (replace one training record).
    Thm. 7's Δ is far above what one record moves here, so the case has little
    power (``detectable`` says how little); it checks the guarantee is not broken.
    ``sensitivity_factor`` < 1 gives the BROKEN variant (:data:`TRAINING_BROKEN_FACTOR`).
    """
    epsilon, n, data, train, test = _anm_setting(epsilon, rng, size, sensitivity_factor)
    grid_points = {"smoke": 5, "quick": 7, "full": 9}[size]
    pair = anm_training_pair(data, split=(train, test), lam=TRAINING_LAMBDA, bandwidth=TRAINING_BANDWIDTH,
                             grid_points=grid_points)
    run = _ANMTrainingSetRun(epsilon / 2.0, tuple(int(i) for i in train), tuple(int(i) for i in test),
                             TRAINING_LAMBDA, TRAINING_BANDWIDTH, float(sensitivity_factor))
    sensitivity = hsic_training_sensitivity(len(test), len(train), TRAINING_LAMBDA,
                                            lipschitz=gaussian_kernel_lipschitz(TRAINING_BANDWIDTH))
    scale = sensitivity / (epsilon / 2.0) * sensitivity_factor
    events = _margin_events(pair, scale)
    broken = sensitivity_factor != 1.0
    name = f"{'BROKEN ' if broken else ''}ANM (training-set, HSIC)"
    note = (f"n = {n} ({len(train)} training, {len(test)} test records), lambda = {TRAINING_LAMBDA:g}, bandwidth "
            f"{TRAINING_BANDWIDTH:g}, eps/2 per score, claim eps (replace one training record; test half, split, "
            "lambda, bandwidth and bounds public)" + (f"; noise for {sensitivity_factor:g} × Thm. 7's sensitivity"
                                                     if broken else ""))
    return AuditCase(name, run, pair, tuple(events), epsilon, 0.0, False, note=note, expect_violation=broken)


@dataclass(frozen=True)
class _ANMIQRRun:
    """The IQR score of ANM with test-set privacy (four Dwork–Lei log-IQR releases, Thm. 4/6) on an (n, 2) array.

    Output: ``(s_{X→Y}, s_{Y→X})`` with NaN for ⊥. ``broken=True`` is the BROKEN
    variant: each log IQR released with Lap(1/ε_s) **without** the
    propose-test-release step (the claim unchanged), so a log IQR of −∞ (an
    IQR of 0) is released as −∞.
    """

    epsilon_step: float
    delta_step: float
    train_index: tuple[int, ...]
    test_index: tuple[int, ...]
    broken: bool = False

    def __call__(self, data: Any, rng: Any) -> np.ndarray:
        array = np.asarray(data, dtype=np.float64)
        split = (np.asarray(self.train_index), np.asarray(self.test_index))
        if not self.broken:
            released = private_anm_test_set(array[:, 0], array[:, 1], epsilon=self.epsilon_step,
                                            delta=self.delta_step, scores=("iqr",), split=split,
                                            bounds_x=_ANM_BOUNDS, bounds_y=_ANM_BOUNDS, rng=rng).scores["iqr"]
            return np.array([np.nan if v is None else v for v in released], dtype=np.float64)
        fit = fit_anm(array[:, 0], array[:, 1], lam=1e-3, rng=0, split=split, bounds_x=_ANM_BOUNDS,
                      bounds_y=_ANM_BOUNDS, require_variation=False)
        logs = np.array([_log_iqr(a) for a in (fit.x_test, fit.residual_y, fit.y_test, fit.residual_x)])
        logs = logs + laplace_noise(1.0 / self.epsilon_step, 4, rng=as_rng(rng))
        return np.array([logs[0] + logs[1], logs[2] + logs[3]])


def _log_iqr(a: np.ndarray) -> float:
    value = iqr(a)
    return float(np.log(value)) if value > 0 else -np.inf


def anm_iqr_case(*, epsilon: float, delta: float = 1e-6, rng: RngLike, size: str = "quick",
                 broken: bool = False) -> AuditCase:
    """Audit case for the IQR score of ANM with test-set privacy (Kusner et al. 2016, Sec. 4.3, Thm. 4/6).

    Four Dwork–Lei log-IQR releases (x′, r′_Y, y′, r′_X), each (3ε_s, δ_s) with
    ε_s = ε/12 and δ_s = δ/4, so the claim is (ε, δ) by basic composition. The
    test half is built for the statistic: x′ is 0 except ⌊(m − 1)/4⌋ values at −1
    below the lower quartile and as many at 1 above the upper one, so IQR(x′) = 0
    on D; D′ replaces one test record (0, y) by (−1, y), which moves the lower
    quartile to −1 and IQR(x′) to 1 — a log IQR from −∞ to 0. The training half
    (public) is as in :func:`anm_case`. Events: ⊥ and "s ≥ c" for each score, and
    s_{X→Y} = −∞. ``broken=True`` releases the log IQRs without the stability test.
    """
    if size not in ("smoke", "quick", "full"):
        raise ValueError(f"size must be 'smoke', 'quick' or 'full', got {size!r}")
    epsilon = check_epsilon(epsilon)
    generator = as_rng(rng)
    m = {"smoke": 20, "quick": 50, "full": 100}[size]
    x_train = generator.uniform(-1.0, 1.0, m)
    train = np.column_stack([x_train, 0.8 * x_train**3 + 0.2 * generator.uniform(-1.0, 1.0, m)])
    low, high = quartile_indices(m)
    x_test = np.concatenate([np.full(low, -1.0), np.zeros(high - low + 1), np.ones(m - 1 - high)])
    test = np.column_stack([x_test, generator.uniform(-1.0, 1.0, m)])
    data = np.vstack([train, test])
    row = m + low  # the first test record at 0
    record = np.array([-1.0, data[row, 1]])
    pair = replace_record(data, row, record, description=(
        f"test row {row} (0, {data[row, 1]:.2f}) replaced by (-1, {data[row, 1]:.2f}): IQR(x') 0 -> 1 (the lower "
        "quartile sits at a tie); training half, split and bounds public"),
        meta={"row": int(row), "m": m, "n": m})
    run = _ANMIQRRun(epsilon / 12.0, delta / 4.0, tuple(range(m)), tuple(range(m, 2 * m)), broken)
    events = [Event("s_XY is ⊥", lambda b: np.isnan(as_batch_array(b).reshape(-1, 2)[:, 0])),
              Event("s_XY = −∞", lambda b: np.isneginf(as_batch_array(b).reshape(-1, 2)[:, 0]))]
    events += [at_least(float(c), coordinate=j, name=f"s_{label} ≥ {c:.3g}")
               for j, label in ((0, "XY"), (1, "YX")) for c in np.linspace(-40.0, 20.0, 25)]
    name = f"{'BROKEN ' if broken else ''}ANM (test-set, IQR)"
    note = (f"m = {m} test records; four Dwork-Lei log-IQR releases at (3 eps/12, delta/4) each, claim (eps, delta) "
            "by basic composition (replace one test record)" + ("; BROKEN: no stability test" if broken else ""))
    return AuditCase(name, run, pair, tuple(events), epsilon, delta, False, note=note, expect_violation=broken)

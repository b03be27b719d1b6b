"""Private ANM's experiments (Kusner et al. 2016, notebook ``private_anm``): Table 2 and Figs. 1–2 on Tübingen pairs.

The algorithm is :mod:`dpcd.bivariate.anm`; this module picks the pairs, orients
them by a seeded coin, and computes per split the non-private margins and the
probability of a correct private decision (Monte Carlo and the closed forms
of Thm. 2/4), under test-set and training-set privacy.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from dpcd.bivariate.anm import (
    SCORES,
    dwork_lei_draws,
    fit_anm,
    fit_scores,
    gaussian_kernel_lipschitz,
    hsic_training_sensitivity,
    iqr_stability,
    prob_correct_laplace,
    prob_correct_log_iqr,
    score_sensitivity,
    split_indices,
)
from dpcd.validation import RngLike, as_rng, check_epsilon, check_int

from .realdata import tuebingen_pair

__all__ = ["select_largest_pairs", "pair_orientations", "test_set_cell", "training_set_cell"]


def select_largest_pairs(table: pd.DataFrame, k: int = 10) -> list[str]:
    """The ``k`` pairs with the most samples and a known direction (ties: lower pair number first).

    ``table`` is :func:`dpcd_papers.realdata.load_tuebingen_pairs`'s frame.
    """
    k = check_int(k, "k", minimum=1)
    known = table[table["direction"].isin(["x->y", "y->x"])].copy()
    known["_number"] = known["pair_id"].str.extract(r"(\d+)$", expand=False).astype(int)
    known = known.sort_values(["n", "_number"], ascending=[False, True], kind="stable")
    return list(known["pair_id"].head(k))


def pair_orientations(pair_ids: Sequence[str], *, rng: RngLike) -> dict[str, bool]:
    """A fair coin per pair: ``True`` means present the pair as (y, x) so the cause is the second column."""
    generator = as_rng(rng)
    flips = generator.random(len(pair_ids)) < 0.5
    return {pid: bool(flip) for pid, flip in zip(pair_ids, flips)}


def _oriented_pair(pair_id: str, swap: bool, max_samples: Optional[int], rng: np.random.Generator):

    x, y, direction = tuebingen_pair(pair_id)
    if max_samples is not None and x.size > max_samples:
        keep = np.sort(rng.choice(x.size, size=max_samples, replace=False))
        x, y = x[keep], y[keep]
    truth = direction
    if swap:
        x, y = y, x
        truth = {"x->y": "y->x", "y->x": "x->y"}[direction]
    return x, y, truth


def _signed_margin(s_xy: float, s_yx: float, truth: str) -> float:
    """Margin in favour of the true direction (positive = non-private score right)."""
    if not (math.isfinite(s_xy) and math.isfinite(s_yx)):
        if s_xy == s_yx:
            return 0.0
        margin = math.inf if s_xy < s_yx else -math.inf
    else:
        margin = s_yx - s_xy
    return margin if truth == "x->y" else -margin


def test_set_cell(pair_id: str, swap: bool, epsilons: Sequence[float], *, n_draws: int = 2000,
                  lam: float = 1e-3, delta: float = 1e-6, max_samples: Optional[int] = None,
                  rng: RngLike) -> list[dict]:
    """One random 50/50 split of one pair: per score the non-private outcome and, per ε,
    the Monte Carlo probability (``n_draws`` draws of the test-set mechanisms) and the
    closed form (Thm. 2 / Thm. 4) of a correct decision. ⊥ counts as a fair coin flip
    (its rate is reported in ``bottom_rate``); so does a tie.
    """
    generator = as_rng(rng)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    x, y, truth = _oriented_pair(pair_id, swap, max_samples, generator)
    train, test = split_indices(x.size, rng=generator)  # scaled by the training half, as private_anm_test_set
    fit = fit_anm(x, y, lam=lam, rng=generator, split=(train, test), bounds_x=(x[train].min(), x[train].max()),
                  bounds_y=(y[train].min(), y[train].max()))
    rows = []
    for name in SCORES:
        s_xy, s_yx = fit_scores(fit, name, generator)
        margin = _signed_margin(s_xy, s_yx, truth)
        base = {"score": name, "n": fit.n, "m": fit.m, "s_xy": s_xy, "s_yx": s_yx,
                "margin": margin}
        rows.append({**base, "epsilon": math.inf, "p_correct": float(prob_correct_laplace(margin, 0.0)),
                     "closed_form": float(prob_correct_laplace(margin, 0.0)), "bottom_rate": 0.0})
        if name == "iqr":
            samples = (fit.x_test, fit.residual_y, fit.y_test, fit.residual_x)
            stab = [iqr_stability(sample) for sample in samples]
            logs = np.array([math.log(st.iqr) if st.iqr > 0 else -math.inf for st in stab])
            dist = np.array([[st.a1, st.a2] for st in stab], dtype=float)
        for epsilon in epsilons:
            epsilon = check_epsilon(epsilon)
            if name == "iqr":
                values, released = dwork_lei_draws(logs, dist, epsilon=epsilon, delta=delta, rng=generator,
                                                    size=n_draws)
                ok = released.all(axis=1)
                p_xy = values[:, 0] + values[:, 1]
                p_yx = values[:, 2] + values[:, 3]
                sigma = 1.0 / epsilon
                closed = prob_correct_log_iqr(margin, sigma)
            else:
                sigma = score_sensitivity(name, fit.m) / epsilon
                p_xy = s_xy + generator.laplace(0.0, sigma, size=n_draws)
                p_yx = s_yx + generator.laplace(0.0, sigma, size=n_draws)
                ok = np.ones(n_draws, dtype=bool)
                closed = prob_correct_laplace(margin, sigma)
            right = (p_xy < p_yx) if truth == "x->y" else (p_xy > p_yx)
            value = np.where(ok, right.astype(float), 0.5)
            rows.append({**base, "epsilon": epsilon, "p_correct": float(value.mean()),
                         "closed_form": float(closed), "bottom_rate": float(1.0 - ok.mean())})
    return rows


def training_set_cell(pair_id: str, swap: bool, lams: Sequence[float], epsilons: Sequence[float], *,
                      bandwidth: float = 0.5, bounds: Sequence[str] = ("paper", "direct"),
                      max_samples: Optional[int] = None, rng: RngLike) -> list[dict]:
    """One split of one pair under training-set privacy for HSIC: per λ the non-private
    margin and, per ε and Thm. 7 reading, the exact probability of a correct decision
    under the Laplace mechanism (Thm. 2, which the tests check against Monte Carlo).
    """
    generator = as_rng(rng)
    x, y, truth = _oriented_pair(pair_id, swap, max_samples, generator)
    state = generator.bit_generator.state
    rows = []
    for lam in lams:
        generator.bit_generator.state = state  # same split for every λ
        fit = fit_anm(x, y, lam=lam, rng=generator, bandwidth=bandwidth)
        s_xy, s_yx = fit_scores(fit, "hsic", generator)
        margin = _signed_margin(s_xy, s_yx, truth)
        lipschitz = gaussian_kernel_lipschitz(bandwidth)
        for bound in bounds:
            sensitivity = hsic_training_sensitivity(fit.m, fit.n, lam, lipschitz=lipschitz, bound=bound,
                                                    residual_bound="paper" if lam <= 1 else "stability")
            for epsilon in epsilons:
                epsilon = check_epsilon(epsilon)
                rows.append({"lam": lam, "bound": bound, "epsilon": epsilon,
                             "n": fit.n, "m": fit.m, "margin": margin, "sensitivity": sensitivity,
                             "p_correct": float(prob_correct_laplace(margin, sensitivity / epsilon))})
    return rows

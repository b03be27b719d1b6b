"""The private NOTEARS optimiser that NOLEAKS and score-based CURATE share, and its privacy plan.

The linear NOTEARS augmented Lagrangian (:mod:`dpcd.discovery.notears`) solved
with L-BFGS-B on private gradients (per-record clipped, analytic-Gaussian
noise) and a line search on an exact random subset of rows; the privacy
semantics are stated in :mod:`dpcd.discovery.noleaks`. Shared here so that
neither algorithm module imports the other.

>>> round(line_search_charge(10_000, 1_000)[1], 3)
0.1
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from scipy import optimize

from ..privacy import PrivacyLedger, analytic_gaussian_sigma, gaussian_noise
from ..privacy.relation import REPLACE_ONE, WorstCase
from ..schema import public_bounds, scale_to_box
from ..validation import as_data_matrix, as_rng, check_delta, check_int, check_positive
from .notears import acyclicity
from .pc import node_names_of

__all__ = ["RELATION", "PUBLIC", "clipped_gradient", "gradient_sensitivity", "line_search_charge",
           "private_notears", "prepare_run", "score_worst_case", "check_subset_size"]

RELATION = REPLACE_ONE
"""The private NOTEARS algorithms' guarantees are stated under replace one record, with n public."""
PUBLIC = ("n", "d", "encoding")


class _BudgetExhausted(Exception):
    pass


def gradient_sensitivity(n: int, d: int, clip: float) -> float:
    """ℓ₂ sensitivity √(d(d − 1))·2s/n of the per-record-clipped mean gradient (replace one record)."""
    return math.sqrt(d * (d - 1)) * 2.0 * clip / n


def check_subset_size(n: int, m: int) -> tuple[int, int]:
    """(n, m) checked: the line-search subset of m rows must be smaller than the n (public) rows."""
    n = check_int(n, "n", minimum=2)
    m = check_int(m, "line_search_size", minimum=2)
    if m >= n:
        raise ValueError(f"line_search_size must be < n ({n}), got {m}")
    return n, m


def line_search_charge(n: int, m: int) -> tuple[float, float]:
    """(ε, δ) = (ln((n + 1)/(n + 1 − m)), m/n) charged for the m-row line-search subset (NOLEAKS artifact)."""
    return math.log((n + 1) / (n + 1 - m)), m / n


def clipped_gradient(X: np.ndarray, W: np.ndarray, clip: float, counts: np.ndarray | None = None,
                     chunk: int = 8192, method: Literal["auto", "tensor"] = "auto") -> np.ndarray:
    """Mean over rows of clip(−x_{r,i}·(x_r − x_r W)_j, −s, s): the least-squares
    gradient with every record's contribution clipped entrywise (vectorised by chunks).

    ``counts``: multiplicities when ``X`` holds distinct rows (discrete data have
    few), which gives the same value as on the full data at a fraction of the cost.

    ``method="auto"`` looks at each chunk's entries of the residual r = x − xW:
    where max_i |x_i| · |r_j| ≤ s no entry of column j of that row's
    contribution can be clipped (rounding is monotone, so every computed
    |x_i r_j| is ≤ s too). When few entries may be clipped (< 25 %), the others
    contribute −xᵀr through one matrix product and only the rest are clipped,
    one column at a time; otherwise the chunk's n × d × d tensor is formed in
    one reused buffer, clipped in place (clip(−a) = −clip(a) exactly) and
    contracted. ``method="tensor"`` is the original computation (a new tensor
    per chunk). The results agree up to the order of floating-point summation
    (tests/test_noleaks_gradient.py: relative difference ≤ 1e-12; speed-ups in
    tests/benchmarks/test_bench_curate.py).
    """
    if method not in ("auto", "tensor"):
        raise ValueError(f"method must be 'auto' or 'tensor', got {method!r}")
    d = X.shape[1]
    weights = np.ones(X.shape[0]) if counts is None else np.asarray(counts, dtype=float)
    total = np.zeros((d, d))
    buffer = np.empty((min(chunk, X.shape[0]), d, d)) if method == "auto" else None
    for start in range(0, X.shape[0], chunk):
        x = X[start:start + chunk]
        w = weights[start:start + chunk]
        r = x - x @ W
        if method == "tensor":
            contrib = np.clip(-x[:, :, None] * r[:, None, :], -clip, clip)
            total += np.tensordot(w, contrib, axes=1)
            continue
        may_clip = np.abs(r) * np.abs(x).max(axis=1)[:, None] > clip
        if may_clip.mean() < 0.25:
            total -= (x * w[:, None]).T @ np.where(may_clip, 0.0, r)
            for j in np.flatnonzero(may_clip.any(axis=0)):
                rows = may_clip[:, j]
                total[:, j] += w[rows] @ np.clip(-x[rows] * r[rows, j, None], -clip, clip)
        else:
            products = buffer[: x.shape[0]]
            np.multiply(x[:, :, None], r[:, None, :], out=products)
            np.clip(products, -clip, clip, out=products)
            total -= np.tensordot(w, products, axes=1)
    return total / weights.sum()


def private_notears(X: np.ndarray, budgets: np.ndarray, *, delta: float, rng: np.random.Generator,
                    ledger: PrivacyLedger, lambda1: float = 0.1, clip: float = 2.0, max_iter: int = 100,
                    h_tol: float = 1e-8, rho_max: float = 1e16, line_search_rows: np.ndarray,
                    mechanism: str = "gradient") -> tuple[np.ndarray, dict]:
    """NOTEARS augmented Lagrangian with L-BFGS-B on private gradients.

    Gradient evaluation k uses budget ``budgets[k]``; the search stops when the
    budgets are used up (or h ≤ h_tol, or ρ ≥ ρ_max). Returns the unthresholded
    W and info (evaluations, h, budgets spent). Privacy: see the module docstring.
    """
    n, d = X.shape
    Xs = X[line_search_rows]
    m = Xs.shape[0]
    sigma_s = Xs.T @ Xs / m
    eye = np.eye(d)
    sens = gradient_sensitivity(n, d, clip)
    unique, counts = np.unique(X, axis=0, return_counts=True)
    if unique.shape[0] > 0.9 * n:  # continuous data: little gain from compressing
        unique, counts = X, None
    state = {"k": 0, "w": np.zeros(2 * d * d), "sigmas": []}

    def adj(w: np.ndarray) -> np.ndarray:
        return (w[: d * d] - w[d * d:]).reshape(d, d)

    def fun(w: np.ndarray, rho: float, alpha: float) -> tuple[float, np.ndarray]:
        """The augmented-Lagrangian objective at ``w`` — its data term on the exact line-search rows, which the
        plan charges as δ = m/n (module docstring) — and its gradient, whose data term is released with the analytic
        Gaussian mechanism at this step's (ε_k, δ) (clipped per-record sensitivity); raises when the step budgets
        are spent."""
        k = state["k"]
        if k >= len(budgets):
            raise _BudgetExhausted
        W = adj(w)
        A = eye - W
        h, g_h = acyclicity(W)
        obj = 0.5 * float(np.sum(A * (sigma_s @ A))) + 0.5 * rho * h * h + alpha * h + lambda1 * w.sum()
        eps_k = float(budgets[k])
        sigma = analytic_gaussian_sigma(sens, eps_k, delta)
        g_loss = clipped_gradient(unique, W, clip, counts) + gaussian_noise(sigma, (d, d), rng=rng)
        np.fill_diagonal(g_loss, 0.0)
        ledger.charge(mechanism, epsilon=eps_k, delta=delta, kind="gaussian", sensitivity=sens, scale=sigma)
        state["k"] = k + 1
        state["w"] = w
        state["sigmas"].append(sigma)
        with np.errstate(over="ignore", invalid="ignore"):
            g = g_loss + (rho * h + alpha) * g_h
        if not (np.isfinite(obj) and np.all(np.isfinite(g))):
            obj, g = np.inf, np.nan_to_num(g, nan=0.0, posinf=1e300, neginf=-1e300)
        return obj, np.concatenate([(g + lambda1).ravel(), (-g + lambda1).ravel()])

    bounds = [(0, 0) if i == j else (0, None) for _ in range(2) for i in range(d) for j in range(d)]
    w_est, rho, alpha, h = np.zeros(2 * d * d), 1.0, 0.0, np.inf
    exhausted = False
    dual = 0
    for _ in range(max_iter):
        dual += 1
        while rho < rho_max:
            try:
                w_new = optimize.minimize(fun, w_est, args=(rho, alpha), jac=True, method="L-BFGS-B",
                                          bounds=bounds).x
            except _BudgetExhausted:
                w_new, exhausted = state["w"], True
            h_new, _ = acyclicity(adj(w_new))
            if exhausted or h_new <= 0.25 * h:
                break
            rho *= 10
        w_est, h = w_new, h_new
        alpha += rho * h
        if exhausted or h <= h_tol or rho >= rho_max:
            break
    info = {"evaluations": state["k"], "h": h, "dual_steps": dual, "rho": rho, "budget_exhausted": exhausted,
            "epsilon_gradients": float(np.sum(budgets[: state["k"]])), "sensitivity": sens,
            "mean_sigma": float(np.mean(state["sigmas"])) if state["sigmas"] else float("nan")}
    return adj(w_est), info


def prepare_run(X, node_names, delta, lambda1, clip, w_threshold, line_search_size, rng, bounds=None):
    """Checked inputs of a private NOTEARS run, its line-search rows and its ledger (charged for them).

    With public ``bounds`` the columns are mapped onto [−1, 1] (:func:`dpcd.schema.scale_to_box`).
    """
    names = node_names_of(X, node_names)
    X = as_data_matrix(X, "X", kind="numeric", min_rows=2)
    if bounds is not None:
        X = scale_to_box(X, public_bounds(bounds, X.shape[1], names))
    delta = check_delta(delta)
    check_positive(lambda1, "lambda1", allow_zero=True)
    clip = check_positive(clip, "clip")
    check_positive(w_threshold, "w_threshold", allow_zero=True)
    n = X.shape[0]
    m = check_int(line_search_size, "line_search_size", minimum=2)
    if m >= n:
        raise ValueError(f"line_search_size must be < n ({n}), got {m}")
    generator = as_rng(rng)
    rows = np.sort(generator.choice(n, size=m, replace=False))
    ledger = PrivacyLedger("replace", public=PUBLIC)
    eps_ls, delta_ls = line_search_charge(n, m)
    ledger.charge("line_search_subset", epsilon=eps_ls, delta=delta_ls, kind="approx",
                  note="exact objective on a random m-row subset (NOLEAKS artifact's accounting)")
    return names, X, delta, clip, generator, rows, ledger, eps_ls


def score_worst_case(name: str, budgets: np.ndarray, *, delta: float, n: int, line_search_size: int,
                     theorem: str, parameters: dict) -> WorstCase:
    """Plan of a private-NOTEARS run: the line-search subset plus one analytic-Gaussian charge per budget.

    Basic composition, as the papers account: ε = line-search ε + Σ budgets,
    δ = m/n + len(budgets)·δ. The subset's δ = m/n is far above a usual δ, so
    ``discover`` refuses these algorithms at planning time for δ < m/n.
    """
    n, m = check_subset_size(n, line_search_size)
    eps_ls, delta_ls = line_search_charge(n, m)
    ledger = PrivacyLedger("replace", public=PUBLIC)
    ledger.charge("line_search_subset", epsilon=eps_ls, delta=delta_ls, kind="approx")
    for value, count in zip(*np.unique(np.asarray(budgets, dtype=float), return_counts=True)):
        ledger.charge("gradient", epsilon=float(value), delta=delta, count=int(count), kind="gaussian")
    total = ledger.total("basic")
    return WorstCase(name, RELATION, total.epsilon, total.delta, PUBLIC, theorem, "basic", ledger, parameters)

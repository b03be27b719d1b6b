"""Linear NOTEARS: least squares + ℓ₁ under the smooth acyclicity constraint h(W) = 0.

min_W  1/(2n)‖X − XW‖²_F + λ₁‖W‖₁  s.t.  h(W) = tr(e^{W∘W}) − d = 0,

solved by the augmented Lagrangian of Zheng et al. (2018): the inner problem
ℓ(W) + λ₁‖W‖₁ + ρ/2·h² + α·h is smooth in the doubled variables W = W⁺ − W⁻
(W± ≥ 0) and solved with L-BFGS-B; ρ grows ×10 until h falls by 4×, then
α ← α + ρh; stop when h ≤ h_tol or ρ ≥ ρ_max; finally |w| < w_threshold → 0.
The loss and its gradient use the d × d second-moment matrix Σ = XᵀX/n only,
so each evaluation is O(d³), independent of n.

Non-private: the reference for NOLEAKS and score-based CURATE
(:mod:`dpcd.discovery.noleaks`, :mod:`dpcd.discovery.curate_sb`), which share
:class:`ScoreResult` and the helpers here.

References
----------
.. [ZARX18] X. Zheng, B. Aragam, P. Ravikumar, E. P. Xing. DAGs with NO TEARS:
   Continuous Optimization for Structure Learning. NeurIPS 2018.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import networkx as nx
import numpy as np
import scipy.linalg as slin
from scipy import optimize

from ..graphs import dag_to_cpdag
from ..schema import public_levels
from ..validation import as_data_matrix, check_int, check_positive

__all__ = ["ScoreResult", "acyclicity", "notears", "score_result", "encode_ordinal", "w_to_dag"]


@dataclass(frozen=True)
class ScoreResult:
    """Result of a score-based search: weighted adjacency ``W`` (W[i, j] ≠ 0 means
    i → j), the DAG and its CPDAG over ``nodes``, the privacy ledger (None when
    non-private) and ``info`` (iterations, h(W), budgets, ...)."""

    nodes: tuple[str, ...]
    W: np.ndarray
    dag: nx.DiGraph
    cpdag: nx.DiGraph
    ledger: object | None = None
    info: dict = field(default_factory=dict)


def acyclicity(W: np.ndarray) -> tuple[float, np.ndarray]:
    """h(W) = tr(e^{W∘W}) − d and its gradient (e^{W∘W})ᵀ ∘ 2W [ZARX18, Eq. 8]."""
    with np.errstate(over="ignore", invalid="ignore"):
        E = slin.expm(W * W)
        return float(np.trace(E) - W.shape[0]), E.T * W * 2.0


def w_to_dag(W: np.ndarray, nodes: Sequence[str]) -> nx.DiGraph:
    """The directed graph of the non-zero entries of W; if thresholding left a
    cycle (possible only when h(W) > 0), the weakest edges of cycles are dropped."""
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    rows, cols = np.nonzero(W)
    g.add_weighted_edges_from((nodes[i], nodes[j], abs(float(W[i, j]))) for i, j in zip(rows, cols))
    while not nx.is_directed_acyclic_graph(g):
        cycle = nx.find_cycle(g)
        weakest = min(cycle, key=lambda e: g.edges[e[0], e[1]]["weight"])
        g.remove_edge(weakest[0], weakest[1])
    return _strip_weights(g, nodes)


def _strip_weights(g: nx.DiGraph, nodes: Sequence[str]) -> nx.DiGraph:
    out = nx.DiGraph()
    out.add_nodes_from(nodes)
    out.add_edges_from(g.edges())
    return out


def score_result(W: np.ndarray, nodes: Sequence[str], *, ledger=None, info: dict | None = None) -> ScoreResult:
    """Wrap a thresholded W into a :class:`ScoreResult` (DAG and its CPDAG)."""
    nodes = tuple(str(v) for v in nodes)
    dag = w_to_dag(W, nodes)
    return ScoreResult(nodes, W, dag, dag_to_cpdag(dag), ledger, dict(info or {}))


def encode_ordinal(codes, levels) -> np.ndarray:
    """Integer category codes → numbers in [−1, 1] from the public domain only.

    Column j with k_j levels maps code c to (c − (k_j − 1)/2) / ((k_j − 1)/2)
    (a constant column maps to 0). No statistic of the data is used, so the
    encoding costs no privacy. This replaces the NOLEAKS artifact's
    frequency-ordered truncated-normal encoding, whose ordering uses the
    data's category frequencies. ``levels``: the public domain sizes.
    """
    codes = np.asarray(codes)
    levels = public_levels(levels, codes.shape[1])
    half = (np.asarray(levels, dtype=float) - 1.0) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(half > 0, (codes - half) / np.where(half > 0, half, 1.0), 0.0)
    return out.astype(float)


def _check_notears_args(X, lambda1, w_threshold, max_iter, h_tol, rho_max):
    X = as_data_matrix(X, "X", kind="numeric", min_rows=2)
    lambda1 = check_positive(lambda1, "lambda1", allow_zero=True)
    w_threshold = check_positive(w_threshold, "w_threshold", allow_zero=True)
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    h_tol = check_positive(h_tol, "h_tol")
    rho_max = check_positive(rho_max, "rho_max")
    return X, lambda1, w_threshold, max_iter, h_tol, rho_max


def notears(X, *, lambda1: float = 0.1, w_threshold: float = 0.3, max_iter: int = 100, h_tol: float = 1e-8,
            rho_max: float = 1e16, center: bool = True, return_info: bool = False):
    """Linear NOTEARS [ZARX18, Alg. 1] with the least-squares loss and an ℓ₁ penalty.

    Parameters
    ----------
    X : n × d numeric data.
    lambda1 : ℓ₁ weight λ₁.
    w_threshold : entries with |w| < w_threshold are set to 0 at the end.
    max_iter, h_tol, rho_max : augmented-Lagrangian stopping rules.
    center : subtract column means first (the loss has no intercept).
    return_info : also return a dict with h(W) before thresholding and the
        number of dual steps.

    Returns the thresholded d × d weight matrix W (W[i, j] ≠ 0 ⇔ i → j), and the
    info dict when ``return_info``. No privacy.
    """
    X, lambda1, w_threshold, max_iter, h_tol, rho_max = _check_notears_args(
        X, lambda1, w_threshold, max_iter, h_tol, rho_max)
    n, d = X.shape
    if center:
        X = X - X.mean(axis=0, keepdims=True)
    sigma = X.T @ X / n
    eye = np.eye(d)

    def adj(w: np.ndarray) -> np.ndarray:
        return (w[: d * d] - w[d * d:]).reshape(d, d)

    def fun(w: np.ndarray, rho: float, alpha: float) -> tuple[float, np.ndarray]:
        W = adj(w)
        A = eye - W
        loss = 0.5 * float(np.sum(A * (sigma @ A)))
        g_loss = -sigma @ A
        h, g_h = acyclicity(W)
        obj = loss + 0.5 * rho * h * h + alpha * h + lambda1 * w.sum()
        g = g_loss + (rho * h + alpha) * g_h
        return obj, np.concatenate([(g + lambda1).ravel(), (-g + lambda1).ravel()])

    bounds = [(0, 0) if i == j else (0, None) for _ in range(2) for i in range(d) for j in range(d)]
    w_est, rho, alpha, h = np.zeros(2 * d * d), 1.0, 0.0, np.inf
    steps = 0
    for _ in range(max_iter):
        steps += 1
        while rho < rho_max:
            sol = optimize.minimize(fun, w_est, args=(rho, alpha), jac=True, method="L-BFGS-B", bounds=bounds)
            w_new = sol.x
            h_new, _ = acyclicity(adj(w_new))
            if h_new > 0.25 * h:
                rho *= 10
            else:
                break
        w_est, h = w_new, h_new
        alpha += rho * h
        if h <= h_tol or rho >= rho_max:
            break
    W = adj(w_est)
    W[np.abs(W) < w_threshold] = 0.0
    if return_info:
        return W, {"h": h, "dual_steps": steps, "rho": rho}
    return W

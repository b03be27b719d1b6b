"""Paper 002 (Zhang et al. 2023), notebook ``pcd``: Fig. 1 (CI-test error rates), Fig. 2 (networks), Fig. 3 (Sachs).

The algorithm is :mod:`dpcd.discovery.pcd` with the tests of :mod:`dpcd.ci.rcit`.
"""

from __future__ import annotations

import math
from typing import Sequence

import networkx as nx
import numpy as np
import pandas as pd

from dpcd.discovery.pc import run_pc
from dpcd.discovery.pcd import PCDDecider, make_tester, pcd_decision
from dpcd.graphs import cpdag_pair_prf, skeleton_prf
from dpcd.validation import RngLike, as_rng, check_int

PAPER_EPSILONS = (0.1, 0.2, 0.4, 0.8, 1.0, 2.0, 4.0, 8.0, math.inf)
"""The privacy parameters of Figs. 1–3 (∞ = the non-private test)."""

__all__ = ["PAPER_EPSILONS", "sample_ci_case", "CI_CASES", "ci_error_cell", "discovery_cell", "network_cell",
           "sachs_cell"]


# Experiment cells of the notebook (Figs. 1–3)


def sample_ci_case(n: int, rng: RngLike, *, n_z: int = 5) -> np.ndarray:
    """Data of Fig. 1: columns (X, Y, Z₁..Z₅) with X ← Z → Y.

    X = sin(ΣZᵢ) + c₁ε_x, Y = sin(ΣZᵢ) + c₂ε_y; Zᵢ, ε_x, ε_y ~ U(−½, ½);
    c₁, c₂ ~ U(½, 1) (Zhang et al. 2023, Sec. "Simulation on CI test").
    """
    n = check_int(n, "n", minimum=3)
    rng = as_rng(rng)
    Z = rng.uniform(-0.5, 0.5, size=(n, n_z))
    c = rng.uniform(0.5, 1.0, size=2)
    noise = rng.uniform(-0.5, 0.5, size=(n, 2))
    signal = np.sin(Z.sum(axis=1))
    X = signal + c[0] * noise[:, 0]
    Y = signal + c[1] * noise[:, 1]
    return np.column_stack([X, Y, Z])


#: (name, x, y, S, H0 true) of the four tests of Fig. 1 on sample_ci_case columns
CI_CASES = {
    "ci": (("type_I", 0, 1, (2, 3, 4, 5, 6), True), ("type_II", 0, 1, (2, 3, 4, 5), False)),
    "independence": (("type_I", 2, 3, (), True), ("type_II", 0, 1, (), False)),
}


def ci_error_cell(*, n: int, case: str, ci_test: str, rng: RngLike, epsilons: Sequence[float] = PAPER_EPSILONS,
                  alpha: float = 0.05, n_permutations: int = 100) -> list[dict]:
    """One repetition of Fig. 1: error indicators of the private test for every ε.

    ``case`` = "ci" (type I: X ⫫ Y | Z; type II: X ⫫ Y | Z₁..Z₄) or
    "independence" (type I: Z₁ ⫫ Z₂; type II: X ⫫ Y). The test is computed
    once per data set and decided by :func:`pcd_decision` for every ε.
    """
    if case not in CI_CASES:
        raise ValueError(f"case must be one of {sorted(CI_CASES)}, got {case!r}")
    rng = as_rng(rng)
    data_rng, test_rng, noise_rng = rng.spawn(3)
    data = sample_ci_case(n, data_rng)
    tester = make_tester(data, ci_test, rng=test_rng, n_permutations=n_permutations)
    rows = []
    for error, x, y, S, null_true in CI_CASES[case]:
        decider = PCDDecider(tester, epsilon=math.inf, alpha=alpha, rng=noise_rng)
        p_value, sensitivity = decider.p_and_sensitivity(x, y, S)
        for epsilon in epsilons:
            independent, noisy = pcd_decision(p_value, sensitivity, alpha=alpha, epsilon=float(epsilon),
                                              rng=noise_rng)
            wrong = (not independent) if null_true else independent
            rows.append({"error": error, "epsilon": float(epsilon), "wrong": float(wrong), "noisy": noisy,
                         "p_value": p_value, "sensitivity": sensitivity})
    return rows


def _metrics(cpdag: nx.DiGraph, truth: nx.DiGraph, *, directed_truth: bool = True) -> dict:
    skel = skeleton_prf(cpdag, truth)
    out = {"precision": skel["precision"], "recall": skel["recall"], "f1": skel["f1"]}
    if directed_truth:
        pair = cpdag_pair_prf(cpdag, truth)
        out.update({"pair_precision": pair["precision"], "pair_recall": pair["recall"], "pair_f1": pair["f1"]})
    return out


def discovery_cell(*, data, truth: nx.DiGraph, ci_test: str, rng: RngLike,
                   epsilons: Sequence[float] = PAPER_EPSILONS, alpha: float = 0.05, n_permutations: int = 100,
                   max_order: int | None = None, pair_metrics: bool = True) -> list[dict]:
    """PCD on one data set for every ε, sharing the memoised tests: skeleton precision/recall/F1.

    ``data`` is a DataFrame whose columns are the nodes of ``truth``. With
    ``pair_metrics`` the CPDAG edge-pair precision/recall/F1 are added
    (``pair_*``; skip for a cyclic consensus graph such as Sachs').
    """
    rng = as_rng(rng)
    test_rng, noise_rng = rng.spawn(2)
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    names = [str(c) for c in frame.columns]
    tester = make_tester(frame.to_numpy(dtype=np.float64), ci_test, rng=test_rng, n_permutations=n_permutations)
    truth = nx.relabel_nodes(truth, {v: str(v) for v in truth.nodes})
    rows = []
    for epsilon in epsilons:
        decider = PCDDecider(tester, epsilon=float(epsilon), alpha=alpha, rng=noise_rng)
        result = run_pc(names, decider, max_order=max_order)
        row = {"epsilon": float(epsilon), "n_noisy": decider.n_noisy, "n_tests": result.n_tests,
               "epsilon_total": decider.ledger().total().epsilon if decider.n_noisy else 0.0}
        row.update(_metrics(result.cpdag, truth, directed_truth=pair_metrics))
        rows.append(row)
    return rows


def network_cell(*, network: str, n: int, ci_test: str, rng: RngLike, epsilons: Sequence[float] = PAPER_EPSILONS,
                 alpha: float = 0.05, n_permutations: int = 100, max_order: int | None = None) -> list[dict]:
    """One repetition of Fig. 2: nonlinear-SEM data on a bnlearn structure, PCD for every ε.

    Data from :func:`dpcd.datasets.sample_nonlinear` (the paper's generator);
    metrics against the true DAG's skeleton (and CPDAG edge pairs).
    """
    from dpcd.datasets import bnlearn_dag, sample_nonlinear
    from dpcd.graphs import dag_to_cpdag

    rng = as_rng(rng)
    data_rng, run_rng = rng.spawn(2)
    dag = bnlearn_dag(network)
    dataset = sample_nonlinear(dag, n, data_rng)
    return discovery_cell(data=dataset.data, truth=dag_to_cpdag(dag), ci_test=ci_test, rng=run_rng,
                          epsilons=epsilons, alpha=alpha, n_permutations=n_permutations, max_order=max_order)


def sachs_cell(*, n: int | None, ci_test: str, rng: RngLike, epsilons: Sequence[float] = PAPER_EPSILONS,
               alpha: float = 0.05, n_permutations: int = 100, max_order: int | None = None) -> list[dict]:
    """One repetition of Fig. 3 on the Sachs flow-cytometry data (``n`` rows drawn without replacement; None = all).

    The consensus graph has a directed cycle, so only skeleton precision/recall/F1 are reported.
    """
    from .realdata import load_sachs

    rng = as_rng(rng)
    data_rng, run_rng = rng.spawn(2)
    dataset = load_sachs()
    frame = dataset.data
    if n is not None and n < len(frame):
        frame = frame.iloc[np.sort(data_rng.choice(len(frame), size=n, replace=False))].reset_index(drop=True)
    return discovery_cell(data=frame, truth=dataset.dag, ci_test=ci_test, rng=run_rng, epsilons=epsilons,
                          alpha=alpha, n_permutations=n_permutations, max_order=max_order, pair_metrics=False)

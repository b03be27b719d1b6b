"""Paper 002 (Zhang et al. 2023), notebook ``pcd``: this library's GCM-PC beside PCD on the data of Figs. 1–3.

PCD has no DP guarantee (its Δ_P is a local sensitivity; the audit refutes it).
These cells run :mod:`dpcd.discovery.gcm_pc` — one Gaussian release of the
columns' spreads and of feature moments at a **total** ε under replace-one
(δ = :data:`GCM_DELTA`), every test post-processing — on the data PCD's figures
use: :func:`gcm_error_cell` on Fig. 1's model (public bounds
:data:`dpcd_papers.pcd.CI_CASE_BOUNDS`), :func:`gcm_network_cell` on Fig. 2's
networks with nonlinear data (±4 model standard deviations), and
:func:`gcm_sachs_cell` on the Sachs data of Fig. 3.

Sachs' public bounds. PCD's Fig. 3 runs on the raw flow-cytometry
intensities. A private release needs public bounds for every column, which raw
intensities do not carry in the file; they come from the **measurement scale**:
the intensities lie on a four-decade logarithmic scale, from 1 to 10⁴
(:data:`INTENSITY_SCALE`). That is a statement about the instrument's scale,
which a data holder knows before looking at any cell; it is not read from the
values (a value outside would be clamped, and the shipped file has none: its
columns range from 1 to at most 9 058). Two public views of the same columns,
both fixed before the run (``scale``): ``"log10"`` — log₁₀ of every intensity,
bounds [0, 4], the scale on which flow-cytometry data are read, where the
heavy right tail of the raw values is compressed; ``"raw"`` — the intensities
as PCD's Fig. 3 uses them, bounds [1, 10⁴]. A per-record transform with public
constants is part of the mechanism's input map: GCM-PC's theorem holds for
either view with the same total ε (n = 7 466 public). The consensus graph has a
directed cycle, so only skeleton precision / recall / F1 are reported, as for PCD.

Kept apart from :mod:`dpcd_papers.pcd` so that a change to GCM-PC leaves the
code fingerprint of PCD's cells (hours of CPU) unchanged.
"""

from __future__ import annotations

import math
from typing import Sequence

import networkx as nx
import numpy as np
import pandas as pd

from dpcd.ci.gcm import noisy_gcm_test
from dpcd.discovery.gcm_pc import DEFAULT_DEGREE, FeatureRelease, feature_release, release_decider
from dpcd.discovery.pc import run_pc
from dpcd.schema import public_bounds, scale_to_box
from dpcd.validation import RngLike, as_rng

from .pcd import CI_CASE_BOUNDS, CI_CASES, PAPER_EPSILONS, edge_baseline, graph_metrics, sachs_sample, sample_ci_case

__all__ = ["GCM_DELTA", "GCM_DEPENDENCE", "gcm_moments", "gcm_error_cell", "gcm_network_cell", "INTENSITY_SCALE",
           "SCALES", "sachs_view", "gcm_sachs_cell"]

GCM_DELTA = 1e-6
"""δ of the GCM-PC line (replace-one, n public)."""


GCM_DEPENDENCE = "nonlinear"
"""The ``dependence`` statement of every GCM-PC release here: the data of Figs. 1–3 are nonlinear by the paper's
design (its simulations' model, and the Sachs data PCD was built for)."""


def gcm_moments(data: np.ndarray, bounds, epsilon: float, rng: RngLike) -> FeatureRelease:
    """GCM-PC's release at total ``epsilon`` (δ = :data:`GCM_DELTA`): :func:`dpcd.discovery.gcm_pc.feature_release`
    with its defaults under ``dependence`` = :data:`GCM_DEPENDENCE` (the basis for this n, p and ε, the private
    column spreads, then the feature moments), exactly what :func:`~dpcd.discovery.gcm_pc.gcm_pc` releases with
    that statement; ``epsilon = inf`` gives the same steps on exact moments (σ = 0), the same test without noise
    (not private)."""
    array = np.asarray(data, dtype=np.float64)
    box = scale_to_box(array, public_bounds(bounds, array.shape[1], [str(j) for j in range(array.shape[1])]))
    return feature_release(box, epsilon_total=epsilon, delta=GCM_DELTA, rng=as_rng(rng), dependence=GCM_DEPENDENCE)



def gcm_error_cell(*, n: int, case: str, rng: RngLike, epsilons: Sequence[float] = PAPER_EPSILONS,
                   alpha: float = 0.05, n_boot: int = 200) -> list[dict]:
    """One repetition of Fig. 1 for GCM-PC's private test: per ε, one release of the data set's feature moments
    (:func:`gcm_moments`, total ε, public bounds :data:`CI_CASE_BOUNDS`) answers both tests of ``case``.

    Unlike PCD's per-comparison ε, ε here is the total of the release (replace-one, δ = :data:`GCM_DELTA`): the
    two tests of a case are post-processing of it. ε = ∞: the same test on exact moments (not private).
    """
    if case not in CI_CASES:
        raise ValueError(f"case must be one of {sorted(CI_CASES)}, got {case!r}")
    rng = as_rng(rng)
    data_rng, noise_rng = rng.spawn(2)
    data = sample_ci_case(n, data_rng)
    rows = []
    for epsilon in epsilons:
        release = gcm_moments(data, CI_CASE_BOUNDS, float(epsilon), noise_rng)
        for error, x, y, S, null_true in CI_CASES[case]:
            p_value = noisy_gcm_test(release.covariance, release.mean, n, release.sigma, x, y, S,
                                     degree=DEFAULT_DEGREE, conditioning_degree=release.conditioning_degree,
                                     weights=release.weights, rng=noise_rng, n_boot=n_boot)
            independent = p_value > alpha
            rows.append({"error": error, "variant": "gcm_pc", "epsilon": float(epsilon),
                         "wrong": float((not independent) if null_true else independent), "p_value": p_value})
    return rows


def gcm_network_cell(*, network: str, n: int, rng: RngLike, epsilons: Sequence[float] = PAPER_EPSILONS,
                     alpha: float = 0.05, max_order: int | None = None, n_boot: int = 200) -> list[dict]:
    """One repetition of Fig. 2 for GCM-PC: data from the same nonlinear SEM as
    :func:`dpcd_papers.pcd.network_cell` (fresh draws), one release per ε at that total budget (public bounds from
    the generating model, :meth:`dpcd.datasets.Dataset.schema`), PC on its tests; ε = ∞: the same tests on exact
    moments (not private).
    """
    from dpcd.datasets import bnlearn_dag, sample_nonlinear
    from dpcd.graphs import dag_to_cpdag

    rng = as_rng(rng)
    data_rng, run_rng = rng.spawn(2)
    dag = bnlearn_dag(network)
    dataset = sample_nonlinear(dag, n, data_rng)
    truth = nx.relabel_nodes(dag_to_cpdag(dag), {v: str(v) for v in dag.nodes})
    return _gcm_pc_rows(dataset.data, dataset.schema().bounds, truth, epsilons=epsilons, rng=run_rng, alpha=alpha,
                        max_order=max_order, n_boot=n_boot, directed_truth=True)


def _gcm_pc_rows(frame: pd.DataFrame, bounds, truth: nx.DiGraph, *, epsilons: Sequence[float],
                 rng: np.random.Generator, alpha: float, max_order: int | None, n_boot: int,
                 directed_truth: bool) -> list[dict]:
    """GCM-PC's graph for each ε on the columns of ``frame`` (one release per ε, :func:`gcm_moments`), scored
    against ``truth``: the rows of the network and Sachs cells."""
    names = [str(c) for c in frame.columns]
    data = frame.to_numpy(dtype=np.float64)
    rows = []
    for epsilon in epsilons:
        decider = release_decider(gcm_moments(data, bounds, float(epsilon), rng), len(data), alpha=alpha,
                                  rng=rng, n_boot=n_boot)
        result = run_pc(names, decider, max_order=max_order)
        rows.append({"variant": "gcm_pc", "epsilon": float(epsilon), "n_tests": result.n_tests,
                     **edge_baseline(result.cpdag, truth),
                     **graph_metrics(result.cpdag, truth, directed_truth=directed_truth)})
    return rows


INTENSITY_SCALE = (1.0, 1.0e4)
"""Public range of the Sachs intensities: a four-decade logarithmic scale (1 to 10⁴)."""
SCALES = ("log10", "raw")
"""The public views of the intensities GCM-PC runs on (module docstring)."""


def sachs_view(data: np.ndarray, scale: str) -> tuple[np.ndarray, tuple[tuple[float, float], ...]]:
    """The columns of ``data`` in the public view ``scale`` and their public bounds (values clamped to the scale).

    >>> view, bounds = sachs_view(np.array([[1.0, 100.0], [1e4, 10.0]]), "log10")
    >>> view.tolist(), bounds
    ([[0.0, 2.0], [4.0, 1.0]], ((0.0, 4.0), (0.0, 4.0)))
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {list(SCALES)}, got {scale!r}")
    low, high = INTENSITY_SCALE
    array = np.clip(np.asarray(data, dtype=np.float64), low, high)
    if scale == "log10":
        array, low, high = np.log10(array), math.log10(low), math.log10(high)
    return array, ((low, high),) * array.shape[1]


def gcm_sachs_cell(*, n: int | None, scale: str, rng: RngLike, epsilons: Sequence[float] = PAPER_EPSILONS,
                   alpha: float = 0.05, max_order: int | None = None, n_boot: int = 200) -> list[dict]:
    """One repetition of Fig. 3 for GCM-PC: ``n`` rows of the Sachs data (drawn without replacement as
    :func:`dpcd_papers.pcd.sachs_sample`; None = all), one release per ε at that total budget in the
    public view ``scale`` (:func:`sachs_view`), PC on its tests; ε = ∞: the same tests on exact moments (not
    private). Rows: skeleton precision / recall / F1, ``edges``, ``f1_random`` (:func:`dpcd_papers.pcd.edge_baseline`)
    and ``n_tests``.
    """
    data_rng, run_rng = as_rng(rng).spawn(2)
    frame, consensus = sachs_sample(n, data_rng)
    view, bounds = sachs_view(frame.to_numpy(dtype=np.float64), scale)
    truth = nx.relabel_nodes(consensus, {v: str(v) for v in consensus.nodes})
    return _gcm_pc_rows(pd.DataFrame(view, columns=frame.columns), bounds, truth, epsilons=epsilons, rng=run_rng,
                        alpha=alpha, max_order=max_order, n_boot=n_boot, directed_truth=False)

"""Paper 002's Fig. 3 data (Sachs et al. 2005) with this library's GCM-PC: a differentially private line on real data.

PCD's Fig. 3 runs on the raw flow-cytometry intensities. A private release
needs public bounds for every column, which raw intensities do not carry in
the file; they come from the **measurement scale**: the intensities of this
data set lie on a four-decade logarithmic scale, from 1 to 10⁴
(:data:`INTENSITY_SCALE`). That is a statement about the instrument's
scale, which a data holder knows before looking at any cell; it is not read
from the values (a value outside would be clamped, and the shipped file has
none: its columns range from 1 to at most 9 058).

Two public views of the same columns, both fixed before the run (``scale``):

* ``"log10"`` — log₁₀ of every intensity, bounds [0, 4]: the scale on which
  flow-cytometry data are read, where the signalling relations are closer to
  smooth functions and the heavy right tail of the raw values is compressed;
* ``"raw"`` — the intensities as PCD's Fig. 3 uses them, bounds [1, 10⁴].

A per-record transform with public constants is part of the mechanism's
input map, not of the data's privacy loss: GCM-PC's theorem
(:mod:`dpcd.discovery.gcm_pc`) holds for either view with the same total ε
under replace-one (n = 7 466 public). The consensus graph has a directed
cycle, so only skeleton precision / recall / F1 are reported, as for PCD.

Kept apart from :mod:`dpcd_papers.pcd` so that PCD's cells keep their code fingerprint.
"""

from __future__ import annotations

import math
from typing import Sequence

import networkx as nx
import numpy as np

from dpcd.graphs import skeleton_edges, skeleton_prf
from dpcd.validation import RngLike, as_rng

from .pcd import PAPER_EPSILONS, gcm_moments

__all__ = ["INTENSITY_SCALE", "SCALES", "sachs_view", "gcm_sachs_cell"]

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
    :func:`dpcd_papers.pcd.sachs_cell` draws them; None = all), one release per ε at that total budget in the
    public view ``scale`` (:func:`sachs_view`), PC on its tests; ε = ∞: the same tests on exact moments (not
    private). Rows: skeleton precision / recall / F1, ``edges`` (the estimate's skeleton edges, from which the
    notebook draws the random-graph baseline) and ``n_tests``.
    """
    from dpcd.discovery.gcm_pc import DEFAULT_CONDITIONING_DEGREE, DEFAULT_DEGREE, GCMDecider
    from dpcd.discovery.pc import run_pc

    from .realdata import load_sachs

    if scale not in SCALES:
        raise ValueError(f"scale must be one of {list(SCALES)}, got {scale!r}")
    rng = as_rng(rng)
    data_rng, run_rng = rng.spawn(2)
    dataset = load_sachs()
    frame = dataset.data
    if n is not None and n < len(frame):
        frame = frame.iloc[np.sort(data_rng.choice(len(frame), size=n, replace=False))].reset_index(drop=True)
    names = [str(c) for c in frame.columns]
    view, bounds = sachs_view(frame.to_numpy(dtype=np.float64), scale)
    truth = nx.relabel_nodes(dataset.dag, {v: str(v) for v in dataset.dag.nodes})
    rows = []
    for epsilon in epsilons:
        covariance, mean, sigma, weights = gcm_moments(view, bounds, float(epsilon), run_rng)
        decider = GCMDecider(covariance, mean, len(view), sigma, alpha=alpha, degree=DEFAULT_DEGREE,
                             conditioning_degree=DEFAULT_CONDITIONING_DEGREE, rng=run_rng, n_boot=n_boot,
                             weights=weights)
        result = run_pc(names, decider, max_order=max_order)
        skeleton = skeleton_prf(result.cpdag, truth)
        rows.append({"variant": "gcm_pc", "epsilon": float(epsilon), "n_tests": result.n_tests,
                     "edges": len(skeleton_edges(result.cpdag)),
                     **{key: skeleton[key] for key in ("precision", "recall", "f1")}})
    return rows

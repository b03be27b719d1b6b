"""Causal discovery: one PC engine and one module per algorithm, nothing else.

The engine and shared pieces:

* ``pc`` — the PC engine (:func:`pc`, :func:`run_pc`, the :class:`Decider` an algorithm plugs in);
* ``algorithm`` — :class:`~dpcd.discovery.algorithm.PrivateAlgorithm`, the object every algorithm module exports;
* ``kendall_family`` — the Kendall's τ tests Priv-PC, SVT-PC and the sub-sampled Gaussian PC share;
* ``tables`` — PC on a released full contingency table (LapMech, AIM-PC);
* ``counted`` — a table as its distinct rows with their counts (:class:`~dpcd.discovery.counted.CountedRows`), which the
  table-reading algorithms run on as on every row;
* ``private_notears`` — the private NOTEARS pieces NOLEAKS and CURATE-SB share.

Constraint-based algorithms: ``em_pc``, ``lapmech``, ``privpc_star`` (Xu et al. 2017); ``priv_pc``, ``svt_pc``,
``subsampled_gaussian_pc`` (Wang et al. 2020); ``pcd`` (Zhang et al. 2023; no DP guarantee); ``curate``
(Bhattacharjee & Tandon 2024); and this package's ``marginal_pc``, ``mst_pc``, ``aim_pc`` (PC on privately
measured marginals: Gaussian tables, MST, AIM), ``moment_pc`` (PC on private moment sums) and ``gcm_pc``
(generalised covariance measure on private sums). Score-based: ``notears`` (non-private), ``noleaks`` (Ma et al.
2022), ``curate_sb`` (Bhattacharjee & Tandon 2024).

Every private module exports its ``RELATION`` and a data-independent ``worst_case(...)``; experiments live in
``dpcd_papers``.
"""

from .pc import (
           Decider,
           OracleDecider,
           PCResult,
           PValueDecider,
           Skeleton,
           node_names_of,
           orient,
           pc,
           pc_skeleton,
           run_pc,
)

__all__ = ["Decider", "OracleDecider", "PCResult", "PValueDecider", "Skeleton", "node_names_of", "orient", "pc",
           "pc_skeleton", "run_pc"]

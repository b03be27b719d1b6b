"""Causal discovery: one PC engine (:func:`pc`, :func:`run_pc`) and one module per algorithm, nothing else.

Constraint-based: ``em_pc``, ``lapmech``, ``privpc_star`` (Xu et al. 2017), ``priv_pc``, ``svt_pc``,
``subsampled_gaussian_pc`` (Wang et al. 2020), ``pcd`` (Zhang et al. 2023; no DP guarantee), ``curate``.
Score-based: ``notears`` (non-private), ``noleaks``, ``curate_sb`` (Bhattacharjee & Tandon 2024).
Every private module exports its ``RELATION`` and a data-independent ``worst_case(...)``; experiments live in ``dpcd_papers``.
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

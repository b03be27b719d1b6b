"""Causal discovery: one PC engine and the algorithms built on it.

:func:`pc` is non-private PC. Every private constraint-based algorithm runs on
:func:`dpcd.discovery.pc.run_pc` with its own decider and returns a
:class:`PCResult` carrying its privacy ledger:

========================  ====================================================
module                    algorithm (paper)
========================  ====================================================
``em_pc``                 EM-PC / PrivPC, exponential mechanism (Xu et al. 2017)
``lapmech``               LapMech, noisy contingency table (Xu et al. 2017)
``privpc_star``           PrivPC*, noisy covariance + Fisher-z (Xu et al. 2017)
``priv_pc``               Priv-PC, sieve-and-examine (Wang et al. 2020)
``svt_pc``                SVT-PC, sparse vector (Wang et al. 2020)
``pcd``                   PCD with RCIT or Kendall's τ (Zhang et al. 2023)
``curate``                CURATE, adaptive per-order budgets (Bhattacharjee & Tandon 2024)
``notears``               NOTEARS (non-private, score-based reference)
``noleaks``, ``curate_sb`` NOLEAKS-style DP NOTEARS and score-based CURATE
========================  ====================================================

Import an algorithm from its module, e.g. ``from dpcd.discovery.priv_pc import priv_pc``.
"""

from .pc import Decider, OracleDecider, PCResult, PValueDecider, Skeleton, node_names_of, orient, pc, pc_skeleton, run_pc

__all__ = ["Decider", "OracleDecider", "PCResult", "PValueDecider", "Skeleton", "node_names_of", "orient", "pc",
           "pc_skeleton", "run_pc"]

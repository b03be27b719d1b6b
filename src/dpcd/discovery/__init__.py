"""Causal discovery: one PC engine and the algorithms built on it.

``pc`` is non-private PC; the private algorithms live in their own modules
(``em_pc``, ``lapmech``, ``privpc_star``, ``priv_pc``, ``svt_pc``, ``pcd``,
``curate``) and all run on :func:`dpcd.discovery.pc.run_pc` with a decider.
"""

from .pc import Decider, OracleDecider, PCResult, PValueDecider, Skeleton, node_names_of, orient, pc, pc_skeleton, run_pc

__all__ = ["Decider", "OracleDecider", "PCResult", "PValueDecider", "Skeleton", "node_names_of", "orient", "pc",
           "pc_skeleton", "run_pc"]

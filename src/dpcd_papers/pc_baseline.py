"""Non-private PC against causal-learn's PC on bnlearn samples (the ``pc_baseline`` notebook's cell).

Both implementations run the G² test at the same α on the same sample; the
row of each reports skeleton and CPDAG edge-pair precision/recall/F1 against
the true DAG's CPDAG, its run time, and whether the two graphs agree.
causal-learn is an optional test dependency: without it, only our row is
returned.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from dpcd.datasets import load_bnlearn
from dpcd.discovery import pc
from dpcd.graphs import cpdag_pair_prf, dag_to_cpdag, skeleton_edges, skeleton_prf

from .experiments import timed

__all__ = ["causal_learn_cpdag", "causal_learn_pc", "run_network"]


def causal_learn_pc():
    """causal-learn's ``pc`` function, or None when causal-learn is not installed."""
    try:
        from causallearn.search.ConstraintBased.PC import pc as function
    except ImportError:  # causal-learn is a test extra
        return None
    return function


def causal_learn_cpdag(graph: np.ndarray, names: list[str]) -> nx.DiGraph:
    """causal-learn's endpoint matrix as a DiGraph (undirected and bidirected edges stored both ways)."""
    g = nx.DiGraph()
    g.add_nodes_from(names)
    for i, j in zip(*np.nonzero(graph)):
        tail_at_i = graph[i, j] == -1 and graph[j, i] in (-1, 1)  # i -> j or i - j
        bidirected = graph[i, j] == 1 and graph[j, i] == 1
        if tail_at_i or bidirected:
            g.add_edge(names[i], names[j])
    return g


def run_network(network: str, n: int, alpha: float, rng: np.random.Generator) -> list[dict]:
    """Both PCs (G² test at level ``alpha``) on one sample of ``n`` rows of ``network``; one row per implementation.

    >>> rows = run_network("cancer", 2_000, 0.01, np.random.default_rng(0))
    >>> rows[0]["implementation"], 0.0 <= rows[0]["skeleton_f1"] <= 1.0
    ('dpcd', True)
    """
    data, dag = load_bnlearn(network, n, rng)
    truth = dag_to_cpdag(dag)
    ours, seconds = timed(pc, data, ci_test="g2", alpha=alpha)
    graphs = {"dpcd": (ours.cpdag, seconds, ours.n_tests)}
    theirs_pc = causal_learn_pc()
    if theirs_pc is not None:
        theirs, seconds = timed(theirs_pc, data.to_numpy(), alpha, "gsq", stable=True, show_progress=False)
        graphs["causal-learn"] = (causal_learn_cpdag(theirs.G.graph, list(data.columns)), seconds, np.nan)
    same_skeleton = same_cpdag = np.nan
    if "causal-learn" in graphs:
        mine, other = graphs["dpcd"][0], graphs["causal-learn"][0]
        same_skeleton = skeleton_edges(mine) == skeleton_edges(other)
        same_cpdag = set(mine.edges) == set(other.edges)
    rows = []
    for implementation, (graph, seconds, n_tests) in graphs.items():
        skeleton, pairs = skeleton_prf(graph, truth), cpdag_pair_prf(graph, truth)
        rows.append({
            "implementation": implementation,
            "skeleton_f1": skeleton["f1"],
            "skeleton_precision": skeleton["precision"],
            "skeleton_recall": skeleton["recall"],
            "cpdag_f1": pairs["f1"],
            "n_edges": len(skeleton_edges(graph)),
            "seconds": seconds,
            "n_tests": n_tests,
            "same_skeleton": same_skeleton,
            "same_cpdag": same_cpdag,
        })
    return rows

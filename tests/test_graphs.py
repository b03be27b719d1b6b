"""Tests for dpcd.graphs: edge sets, Meek rules, DAG → CPDAG, d-separation, metrics."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from dpcd.datasets import bnlearn_dag, random_dag
from dpcd.graphs import (
    apply_meek_rules,
    cpdag_pair_prf,
    d_separated,
    dag_to_cpdag,
    directed_edges,
    from_adjacency,
    shd,
    skeleton_edges,
    skeleton_prf,
    to_adjacency,
    tpr_fpr_tdr,
    undirected_edges,
    v_structures,
)


def pdag(nodes, directed=(), undirected=()):
    """Build a PDAG in the package convention (undirected edge = both directions)."""
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_edges_from(directed)
    for a, b in undirected:
        g.add_edge(a, b)
        g.add_edge(b, a)
    return g


def fs(*pairs):
    return {frozenset(p) for p in pairs}


# --------------------------------------------------------------------------- edge sets


def test_edge_sets_of_a_pdag():
    g = pdag("abcd", directed=[("a", "b"), ("c", "b")], undirected=[("b", "d")])
    assert skeleton_edges(g) == fs("ab", "cb", "bd")
    assert directed_edges(g) == {("a", "b"), ("c", "b")}
    assert undirected_edges(g) == fs("bd")
    assert v_structures(g) == {("a", "b", "c")}


def test_v_structures_ignore_shielded_and_undirected():
    shielded = pdag("abc", directed=[("a", "c"), ("b", "c"), ("a", "b")])
    assert v_structures(shielded) == set()
    half = pdag("abc", directed=[("a", "c")], undirected=[("b", "c")])
    assert v_structures(half) == set()
    two = pdag("abcd", directed=[("b", "d"), ("a", "d"), ("c", "d")])
    assert v_structures(two) == {("a", "d", "b"), ("a", "d", "c"), ("b", "d", "c")}


def test_adjacency_round_trip():
    g = pdag("abcd", directed=[("a", "b"), ("c", "b")], undirected=[("b", "d")])
    nodes = ["d", "c", "b", "a"]
    A = to_adjacency(g, nodes)
    assert A[2, 0] == 1 and A[0, 2] == 1  # b − d
    assert A[3, 2] == 1 and A[2, 3] == 0  # a → b
    assert A.sum() == 4
    back = from_adjacency(A, nodes)
    assert set(back.edges()) == set(g.edges()) and set(back.nodes) == set(g.nodes)
    assert list(to_adjacency(g).shape) == [4, 4]


def test_adjacency_bad_input():
    g = pdag("ab", directed=[("a", "b")])
    with pytest.raises(ValueError, match="nodes"):
        to_adjacency(g, ["a"])
    with pytest.raises(ValueError, match="nodes"):
        to_adjacency(g, ["a", "a", "b"])
    with pytest.raises(ValueError, match="square"):
        from_adjacency(np.zeros((2, 3)), ["a", "b"])
    with pytest.raises(ValueError, match="diagonal"):
        from_adjacency(np.eye(2), ["a", "b"])
    with pytest.raises(ValueError, match="nodes"):
        from_adjacency(np.zeros((2, 2)), ["a"])
    with pytest.raises(TypeError, match="g must be a networkx.DiGraph"):
        skeleton_edges(nx.Graph())


# --------------------------------------------------------------------------- Meek rules


def test_meek_r1():
    g = pdag("abc", directed=[("a", "b")], undirected=[("b", "c")])
    out = apply_meek_rules(g)
    assert directed_edges(out) == {("a", "b"), ("b", "c")}
    assert undirected_edges(out) == set()


def test_meek_r1_propagates_along_a_chain():
    g = pdag("abcde", directed=[("a", "b")], undirected=[("b", "c"), ("c", "d"), ("d", "e")])
    out = apply_meek_rules(g)
    assert directed_edges(out) == {("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")}


def test_meek_r2():
    g = pdag("abc", directed=[("a", "b"), ("b", "c")], undirected=[("a", "c")])
    out = apply_meek_rules(g)
    assert directed_edges(out) == {("a", "b"), ("b", "c"), ("a", "c")}


def test_meek_r3():
    # a − c → b ← d − a, a − b, c and d non-adjacent  ⇒  a → b
    g = pdag("abcd", directed=[("c", "b"), ("d", "b")], undirected=[("a", "b"), ("a", "c"), ("a", "d")])
    out = apply_meek_rules(g)
    assert ("a", "b") in directed_edges(out)
    assert undirected_edges(out) == fs("ac", "ad")


def test_meek_leaves_undetermined_edges_and_does_not_mutate():
    g = pdag("abc", undirected=[("a", "b"), ("b", "c")])
    before = set(g.edges())
    out = apply_meek_rules(g)
    assert set(out.edges()) == before
    assert out is not g
    g2 = pdag("abc", directed=[("a", "b")], undirected=[("b", "c")])
    before2 = set(g2.edges())
    apply_meek_rules(g2)
    assert set(g2.edges()) == before2


def test_meek_is_idempotent():
    g = pdag("abcd", directed=[("c", "b"), ("d", "b")], undirected=[("a", "b"), ("a", "c"), ("a", "d")])
    once = apply_meek_rules(g)
    assert set(apply_meek_rules(once).edges()) == set(once.edges())


# --------------------------------------------------------------------------- CPDAG


def test_cpdag_of_asia():
    cpdag = dag_to_cpdag(bnlearn_dag("asia"))
    assert directed_edges(cpdag) == {
        ("tub", "either"),
        ("lung", "either"),
        ("either", "xray"),
        ("either", "dysp"),
        ("bronc", "dysp"),
    }
    assert undirected_edges(cpdag) == fs(("asia", "tub"), ("smoke", "lung"), ("smoke", "bronc"))


def test_cpdag_of_cancer_is_fully_directed():
    dag = bnlearn_dag("cancer")
    cpdag = dag_to_cpdag(dag)
    assert undirected_edges(cpdag) == set()
    assert set(cpdag.edges()) == set(dag.edges())


def test_cpdag_of_a_chain_is_undirected():
    dag = nx.DiGraph([("a", "b"), ("b", "c")])
    assert undirected_edges(dag_to_cpdag(dag)) == fs("ab", "bc")


def _brute_force_cpdag(dag: nx.DiGraph) -> set[tuple]:
    """Union of all DAGs with the same skeleton and v-structures (its Markov class)."""
    pairs = [tuple(sorted(e)) for e in skeleton_edges(dag)]
    target = v_structures(dag)
    members = []
    for flips in itertools.product((False, True), repeat=len(pairs)):
        g = nx.DiGraph()
        g.add_nodes_from(dag.nodes)
        g.add_edges_from((b, a) if f else (a, b) for (a, b), f in zip(pairs, flips))
        if nx.is_directed_acyclic_graph(g) and v_structures(g) == target:
            members.append(set(g.edges()))
    assert set(dag.edges()) in members
    return set().union(*members) if members else set()


@pytest.mark.parametrize("seed", range(20))
def test_cpdag_matches_brute_force_enumeration(seed):
    rng = np.random.default_rng(seed)
    p = int(rng.integers(3, 6))
    dag = random_dag(p, 0.6, rng)
    assert set(dag_to_cpdag(dag).edges()) == _brute_force_cpdag(dag)


def test_dag_to_cpdag_refuses_cycles():
    with pytest.raises(ValueError, match="dag must be a directed acyclic graph"):
        dag_to_cpdag(nx.DiGraph([("a", "b"), ("b", "a")]))


# --------------------------------------------------------------------------- d-separation


def test_d_separation_chain_fork_collider():
    chain = nx.DiGraph([("a", "b"), ("b", "c")])
    assert not d_separated(chain, "a", "c", [])
    assert d_separated(chain, "a", "c", ["b"])
    fork = nx.DiGraph([("b", "a"), ("b", "c")])
    assert d_separated(fork, "a", "c", {"b"})
    collider = nx.DiGraph([("a", "b"), ("c", "b"), ("b", "d")])
    assert d_separated(collider, "a", "c", ())
    assert d_separated(collider, "a", "c", None)
    assert not d_separated(collider, "a", "c", ["b"])
    assert not d_separated(collider, "a", "c", ["d"])
    assert d_separated(collider, {"a"}, {"c"}, [])


def test_d_separation_bad_input():
    dag = nx.DiGraph([("a", "b"), ("b", "c")])
    with pytest.raises(ValueError, match="x"):
        d_separated(dag, "z", "c", [])
    with pytest.raises(ValueError, match="S"):
        d_separated(dag, "a", "c", ["q"])
    with pytest.raises(ValueError, match="disjoint"):
        d_separated(dag, "a", "c", ["a"])
    with pytest.raises(ValueError, match="dag"):
        d_separated(nx.DiGraph([("a", "b"), ("b", "a")]), "a", "b", [])


# --------------------------------------------------------------------------- metrics


def test_tpr_fpr_tdr_matches_pcalg_regression_test():
    # the example of pcalg's own regression test for compareGraphs: tpr 0.83333, fpr 0.5, tdr 0.71429
    nodes = ["1", "2", "3", "4", "5"]
    est = nx.DiGraph([("1", "2"), ("1", "4"), ("2", "3"), ("2", "5"), ("3", "4"), ("3", "5"), ("4", "5")])
    true = nx.DiGraph([("1", "2"), ("1", "4"), ("1", "5"), ("2", "5"), ("3", "5"), ("4", "5")])
    est.add_nodes_from(nodes)
    true.add_nodes_from(nodes)
    out = tpr_fpr_tdr(est, true)
    assert out["tpr"] == pytest.approx(5 / 6)
    assert out["fpr"] == pytest.approx(0.5)
    assert out["tdr"] == pytest.approx(5 / 7)


def test_tpr_fpr_tdr_ignores_orientation_and_empty_conventions():
    true = pdag("abc", directed=[("a", "b")])
    est = pdag("abc", directed=[("b", "a")])
    assert tpr_fpr_tdr(est, true) == {"tpr": 1.0, "fpr": 0.0, "tdr": 1.0}
    empty = pdag("abc")
    nan_out = tpr_fpr_tdr(empty, true)
    assert nan_out["tpr"] == 0.0 and nan_out["fpr"] == 0.0 and math.isnan(nan_out["tdr"])
    assert tpr_fpr_tdr(empty, true, convention="pcalg")["tdr"] == 1.0
    complete = pdag("ab", undirected=[("a", "b")])
    assert math.isnan(tpr_fpr_tdr(complete, complete)["fpr"])
    assert tpr_fpr_tdr(complete, complete, convention="pcalg")["fpr"] == 1.0
    no_edges = pdag("ab")
    assert math.isnan(tpr_fpr_tdr(complete, no_edges)["tpr"])
    assert tpr_fpr_tdr(complete, no_edges, convention="pcalg")["tpr"] == 0.0
    with pytest.raises(ValueError, match="convention"):
        tpr_fpr_tdr(est, true, convention="R")


def test_skeleton_prf():
    true = pdag("abcd", directed=[("a", "b"), ("b", "c"), ("c", "d")])
    est = pdag("abcd", directed=[("b", "a")], undirected=[("b", "c")], )
    est.add_edge("a", "d")
    out = skeleton_prf(est, true)
    # est skeleton {ab, bc, ad}; true {ab, bc, cd}: tp 2, fp 1, fn 1
    assert out == {"precision": 2 / 3, "recall": 2 / 3, "f1": 2 / 3, "tp": 2.0, "fp": 1.0, "fn": 1.0}
    empty = pdag("abcd")
    out = skeleton_prf(empty, true)
    assert math.isnan(out["precision"]) and out["recall"] == 0.0 and out["f1"] == 0.0
    assert math.isnan(skeleton_prf(empty, empty)["f1"])


def test_cpdag_pair_prf_counts_undirected_edges_twice():
    true = pdag("abc", directed=[("a", "b")], undirected=[("b", "c")])  # pairs ab, bc, cb
    same = cpdag_pair_prf(true, true)
    assert same["precision"] == same["recall"] == same["f1"] == 1.0 and same["tp"] == 3.0
    est = pdag("abc", undirected=[("a", "b"), ("b", "c")])  # pairs ab, ba, bc, cb
    out = cpdag_pair_prf(est, true)
    assert out["tp"] == 3.0 and out["fp"] == 1.0 and out["fn"] == 0.0
    assert out["precision"] == pytest.approx(3 / 4) and out["recall"] == 1.0
    assert out["f1"] == pytest.approx(2 * 0.75 / 1.75)
    reversed_ = pdag("abc", directed=[("b", "a"), ("b", "c")])  # pairs ba, bc
    out = cpdag_pair_prf(reversed_, true)
    assert (out["tp"], out["fp"], out["fn"]) == (1.0, 1.0, 2.0)
    assert out["precision"] == 0.5 and out["recall"] == pytest.approx(1 / 3)
    assert out["f1"] == pytest.approx(0.4)


def test_shd_cases():
    true = pdag("abcd", directed=[("a", "b"), ("b", "c")], undirected=[("c", "d")])
    assert shd(true, true) == {"shd": 0.0, "missing": 0.0, "extra": 0.0, "misoriented": 0.0}
    missing = pdag("abcd", directed=[("a", "b")], undirected=[("c", "d")])
    assert shd(missing, true)["shd"] == 1.0 and shd(missing, true)["missing"] == 1.0
    extra = true.copy()
    extra.add_edge("a", "d")
    assert shd(extra, true) == {"shd": 1.0, "missing": 0.0, "extra": 1.0, "misoriented": 0.0}
    flipped = pdag("abcd", directed=[("b", "a"), ("b", "c")], undirected=[("c", "d")])
    assert shd(flipped, true)["misoriented"] == 1.0
    undirected = pdag("abcd", directed=[("b", "c")], undirected=[("a", "b"), ("c", "d")])
    assert shd(undirected, true)["shd"] == 1.0
    directed = pdag("abcd", directed=[("a", "b"), ("b", "c"), ("d", "c")])
    assert shd(directed, true)["misoriented"] == 1.0
    # everything at once: drop b−c, add a−c, flip a→b, orient c−d
    mixed = pdag("abcd", directed=[("b", "a"), ("c", "d")], undirected=[("a", "c")])
    assert shd(mixed, true) == {"shd": 4.0, "missing": 1.0, "extra": 1.0, "misoriented": 2.0}
    assert shd(mixed, true)["shd"] == shd(true, mixed)["shd"]


@pytest.mark.parametrize("metric", [tpr_fpr_tdr, skeleton_prf, cpdag_pair_prf, shd])
def test_metrics_refuse_different_node_sets(metric):
    with pytest.raises(ValueError, match="same node set"):
        metric(pdag("abc"), pdag("abd"))
    with pytest.raises(TypeError, match="estimated"):
        metric(nx.Graph(), pdag("abc"))

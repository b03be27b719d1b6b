"""The PC engine against causal-learn (same test, α, stable variant) and a d-separation oracle."""

import numpy as np
import pytest
from causallearn.search.ConstraintBased.PC import pc as cl_pc
from causallearn.utils.cit import CIT

from dpcd.datasets import load_bnlearn, random_dag, sample_linear_gaussian
from dpcd.discovery import Decider, OracleDecider, orient, pc, run_pc
from dpcd.graphs import dag_to_cpdag, skeleton_edges


def _causal_learn(data: np.ndarray, alpha: float, method: str):
    cg = cl_pc(data, alpha, method, stable=True, show_progress=False)
    adj = cg.G.graph != 0
    p = data.shape[1]
    skeleton = {frozenset((i, j)) for i in range(p) for j in range(i + 1, p) if adj[i, j]}
    return cg, skeleton


def _compare_with_causal_learn(data: np.ndarray, alpha: float, method: str, ours_test: str):
    ours = pc(data, ci_test=ours_test, alpha=alpha, node_names=[str(i) for i in range(data.shape[1])])
    cg, cl_skeleton = _causal_learn(data, alpha, method)
    our_skeleton = {frozenset(int(v) for v in e) for e in ours.skeleton}
    assert our_skeleton == cl_skeleton
    # every separating set we store is one causal-learn also found: its test says
    # "independent" and it lies inside causal-learn's record for that pair
    oracle = CIT(data, method)
    for pair, S in ours.sepsets.items():
        x, y = sorted(int(v) for v in pair)
        S = [int(s) for s in S]
        assert oracle(x, y, S) > alpha
        recorded = set().union(*(set(s) for s in cg.sepset[x, y]))
        assert set(S) <= recorded
    return ours


@pytest.mark.parametrize("network", ["asia", "child", "alarm"])
def test_skeleton_and_sepsets_equal_causal_learn_g2(network):
    ds = load_bnlearn(network, 10_000, rng=1)
    ours = _compare_with_causal_learn(ds.data.to_numpy(), 0.01, "gsq", "g2")
    assert ours.n_tests > 0


@pytest.mark.parametrize("seed", [0, 1])
def test_skeleton_and_sepsets_equal_causal_learn_fisher_z(seed):
    dag = random_dag(12, 0.25, rng=seed)
    ds = sample_linear_gaussian(dag, 2000, rng=seed + 100)
    _compare_with_causal_learn(ds.data.to_numpy(), 0.01, "fisherz", "fisherz")


@pytest.mark.parametrize("seed", range(30))
def test_oracle_pc_returns_the_true_cpdag(seed):
    rng = np.random.default_rng(seed)
    p = int(rng.integers(3, 13))
    dag = random_dag(p, float(rng.uniform(0.1, 0.5)), rng=rng)
    nodes = list(dag.nodes)
    result = run_pc(nodes, OracleDecider(dag, nodes))
    truth = dag_to_cpdag(dag)
    assert set(result.cpdag.edges) == set(truth.edges)
    assert result.skeleton == frozenset(skeleton_edges(dag))


def test_skeleton_is_order_independent_under_column_permutation():
    ds = load_bnlearn("alarm", 5000, rng=3)
    data = ds.data
    base = pc(data, ci_test="g2", alpha=0.05)
    permuted = pc(data[list(reversed(data.columns))], ci_test="g2", alpha=0.05)
    assert base.skeleton == permuted.skeleton


def test_conflicting_colliders_leave_the_edge_undirected_in_any_order():
    # a - z - b - c with sepsets asking for a -> z <- b and z -> b <- c: conflict on z - b
    nodes = ["a", "z", "b", "c"]
    adjacency = np.zeros((4, 4), dtype=bool)
    for i, j in [(0, 1), (1, 2), (2, 3)]:
        adjacency[i, j] = adjacency[j, i] = True
    sepsets = {(0, 2): (), (1, 3): (), (0, 3): ()}
    g = orient(nodes, adjacency, sepsets)
    assert g.has_edge("a", "z") and not g.has_edge("z", "a")
    assert g.has_edge("c", "b") and not g.has_edge("b", "c")
    # the conflicted edge z - b is left to Meek's rules, where R1 can fire from either side;
    # the outcome depends on names only, never on the column order
    assert g.has_edge("z", "b") != g.has_edge("b", "z")
    perm = [3, 2, 1, 0]
    g2 = orient([nodes[i] for i in perm], adjacency[np.ix_(perm, perm)],
                {(0, 2): (), (1, 3): (), (0, 3): ()})
    assert set(g2.edges) == set(g.edges)


def test_max_order_limits_conditioning_sets():
    ds = load_bnlearn("child", 3000, rng=4)
    res = pc(ds.data, ci_test="g2", alpha=0.01, max_order=1)
    assert len(res.tests_per_order) <= 2
    assert all(len(S) <= 1 for S in res.sepsets.values())


class _CountingDecider(Decider):
    def __init__(self):
        self.orders = []

    def start_order(self, order, adjacency):
        self.orders.append(order)
        return order < 1  # stop before order 1

    def decide(self, x, y, S):
        return False


def test_start_order_hook_can_stop_the_search():
    decider = _CountingDecider()
    res = run_pc(["a", "b", "c", "d"], decider)
    assert decider.orders == [0, 1]
    assert res.stopped_early
    assert res.tests_per_order == (12,)  # 6 pairs, both directions at order 0, none removed


class _NodeDecider(Decider):
    per_node = True

    def decide_node(self, x, neighbours, order, adjacency):
        # remove every edge to a higher-numbered neighbour at order 0
        return ({int(y): () for y in neighbours if y > x and order == 0}, len(neighbours))


def test_node_decider_removes_edges_and_counts_tests():
    res = run_pc(["a", "b", "c"], _NodeDecider())
    assert res.skeleton == frozenset()
    assert res.n_tests == 6  # each node reports its 2 frozen neighbours at order 0
    assert res.sepsets[frozenset(("a", "b"))] == ()


def test_pc_input_errors():
    with pytest.raises(ValueError, match="alpha"):
        pc(np.zeros((10, 3), dtype=int), alpha=1.5)
    with pytest.raises(ValueError, match="node_names"):
        pc(np.zeros((10, 3), dtype=int), node_names=["a", "b"])
    with pytest.raises(TypeError, match="integer"):
        pc(np.random.default_rng(0).normal(size=(20, 3)), ci_test="g2")


def test_a_test_cap_stops_at_an_order_boundary_and_never_changes_a_finished_search():
    from dpcd.datasets import load_bnlearn
    from dpcd.discovery.pc import order_tests_bound

    data = load_bnlearn("alarm", 5_000, rng=0).data
    free = pc(data, ci_test="g2", alpha=0.01)
    assert free.stopped_by is None
    same = pc(data, ci_test="g2", alpha=0.01, max_tests=10 * free.n_tests)
    assert same.skeleton == free.skeleton and same.sepsets == free.sepsets and same.stopped_by is None
    for cap in (1_500, 4_000):
        capped = pc(data, ci_test="g2", alpha=0.01, max_tests=cap)
        assert capped.n_tests <= cap and capped.stopped_by == "max_tests" and capped.stopped_early
        done = len(capped.tests_per_order)  # the orders it ran are exactly those of the free run
        assert capped.tests_per_order == free.tests_per_order[:done]
        stopped_at = pc(data, ci_test="g2", alpha=0.01, max_order=done - 1)
        assert capped.skeleton == stopped_at.skeleton
    assert order_tests_bound(np.ones((3, 3), dtype=bool) & ~np.eye(3, dtype=bool), 0) == 6

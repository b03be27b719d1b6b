"""PCD's faster paths give the results of the computations they replace.

* The PC engine settles, in bulk, the Kendall tests whose conditioning set
  holds a column declared continuous (public: "dependent" without reading the
  data, no noise); against a decider that asks every test, the graph, the
  test counts, the noise draws and the random stream are the same (and on
  neither path is a declared test computed: ``n_computed``).
* The notebook's cells (:func:`dpcd_papers.pcd.network_cell`) give the same
  rows with the faster RCIT tester as with one whose caches hold nothing and
  whose KRR is the exact Cholesky solve.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcd.ci.rcit import KendallTester, RCITTester
from dpcd.datasets import bnlearn_dag, sample_nonlinear
from dpcd.discovery.pc import run_pc
from dpcd.discovery.pcd import PCDDecider, make_tester
from dpcd_papers import pcd as papers


class AskEveryTest(PCDDecider):
    """The decider before the bulk path: every test asked one by one."""

    def dependent_for_all(self, x, y, candidates, order):
        return False


class AsRunAskEveryTest(papers.AsRunPCDDecider):
    def dependent_for_all(self, x, y, candidates, order):
        return False


def _data(network: str, n: int, seed: int, *, round_columns: tuple[int, ...] = ()) -> np.ndarray:
    data = sample_nonlinear(bnlearn_dag(network), n, np.random.default_rng(seed)).data.to_numpy().copy()
    for j in round_columns:  # ties: these columns stratify the data, and are not declared continuous
        data[:, j] = np.round(data[:, j])
    return data


def _declared(data: np.ndarray, round_columns: tuple[int, ...]) -> list[bool]:
    return [j not in round_columns for j in range(data.shape[1])]


def _run(decider_class, tester, names, epsilon, seed, max_order, continuous):
    rng = np.random.default_rng(seed)
    decider = decider_class(tester, epsilon=epsilon, alpha=0.05, rng=rng, continuous=continuous)
    result = run_pc(names, decider, max_order=max_order)
    return result, decider, rng.bit_generator.state


@pytest.mark.parametrize(("network", "n", "max_order", "round_columns"),
                         [("asia", 400, None, ()), ("child", 150, 1, ()), ("asia", 400, None, (1, 4))])
@pytest.mark.parametrize("epsilon", [math.inf, 1.0, 0.1])
def test_bulk_kendall_decisions_equal_asking_every_test(network, n, max_order, round_columns, epsilon):
    data = _data(network, n, 1, round_columns=round_columns)
    names = [str(i) for i in range(data.shape[1])]
    continuous = _declared(data, round_columns)
    for fast_class, slow_class in ((PCDDecider, AskEveryTest), (papers.AsRunPCDDecider, AsRunAskEveryTest)):
        tester = make_tester(data, "kendall", rng=0)
        assert isinstance(tester, KendallTester)
        fast, fast_decider, fast_state = _run(fast_class, tester, names, epsilon, 7, max_order, continuous)
        slow, slow_decider, slow_state = _run(slow_class, make_tester(data, "kendall", rng=0), names, epsilon, 7,
                                              max_order, continuous)
        assert fast.skeleton == slow.skeleton and set(fast.cpdag.edges) == set(slow.cpdag.edges)
        assert fast.sepsets == slow.sepsets
        assert fast.n_tests == slow.n_tests and fast.tests_per_order == slow.tests_per_order
        assert (fast_decider.n_noisy, fast_decider.n_direct) == (slow_decider.n_noisy, slow_decider.n_direct)
        assert fast_state == slow_state  # the same Laplace draws, in the same order
        assert tester.n_computed == slow_decider.tester.n_computed  # declared tests read no data on either path
        if not round_columns:
            assert tester.n_computed == math.comb(data.shape[1], 2)  # only the marginal tests were computed


def test_bulk_path_only_where_it_is_certain():
    data = _data("asia", 300, 2, round_columns=(3,))
    continuous = _declared(data, (3,))
    tester = make_tester(data, "kendall", rng=0)
    decider = PCDDecider(tester, epsilon=1.0, alpha=0.05, rng=0, continuous=continuous)
    others = np.array([0, 3, 5])
    assert not decider.dependent_for_all(1, 2, others, 0)  # order 0: real tests
    assert decider.dependent_for_all(1, 2, others, 1) is False  # S = (3,) is not declared: must be asked
    assert decider.dependent_for_all(1, 2, others, 2) and decider.n_direct == 3  # every pair holds 0 or 5
    assert tester.n_computed == 0  # nothing read from the data
    undeclared = PCDDecider(tester, epsilon=1.0, alpha=0.05, rng=0, continuous=False)  # tie-free, none declared
    assert not undeclared.dependent_for_all(1, 2, others, 2)
    rcit_decider = PCDDecider(make_tester(data, "rcit", rng=0), epsilon=1.0, alpha=0.05, rng=0, continuous=True)
    assert not rcit_decider.dependent_for_all(1, 2, others, 2)


class ReferenceRCIT(RCITTester):
    """RCIT before the faster routes: exact Cholesky KRR, nothing kept between tests but the results."""

    def __init__(self, data, *, rng, n_permutations=100, lam=1.0):
        super().__init__(data, rng=rng, n_permutations=n_permutations, lam=lam, krr_method="exact",
                         residual_cache_bytes=0, factor_cache_bytes=0)


def test_network_cell_rows_equal_the_reference_tester(monkeypatch):
    kwargs = dict(network="asia", n=150, ci_test="rcit", rng=3, epsilons=(0.4, math.inf), max_order=None,
                  variants=("published", "as_run"), n_permutations=20)
    fast = papers.network_cell(**kwargs)
    monkeypatch.setattr(papers, "make_tester", lambda data, ci_test, **kw: ReferenceRCIT(data, **kw))
    reference = papers.network_cell(**kwargs)
    assert fast == reference or all(
        {k: v for k, v in a.items() if not (isinstance(v, float) and math.isnan(v))}
        == {k: v for k, v in b.items() if not (isinstance(v, float) and math.isnan(v))}
        for a, b in zip(fast, reference, strict=True))

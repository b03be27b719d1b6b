"""The degenerate-strata option of the Kendall test and of non-private PC, and its refusal by the DP algorithms.

Asia's node ``either`` = tub OR lung is deterministic: given {tub, lung} it is constant in every stratum, so
Kendall's τ of ``either`` with any variable is undefined in every stratum. "independent" (default) reads that as
p = 1 and removes the edge; "keep_edge" (the Priv-PC authors' code) returns NaN and keeps it.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from dpcd import registry
from dpcd.ci import CITester, check_degenerate, informative_strata, kendall_tau_test, stratified_kendall
from dpcd.ci.discrete import kendall_weights
from dpcd.datasets import load_bnlearn
from dpcd.discovery.pc import PValueDecider, pc
from dpcd.discovery.priv_pc import KendallPValueQuery, priv_pc, reference_max_order
from dpcd.graphs import cpdag_pair_prf, dag_to_cpdag
from dpcd.privacy.sieve import SieveAndExamine
from dpcd_papers.priv_pc import priv_pc_keep_edge


@pytest.fixture(scope="module")
def asia():
    return load_bnlearn("asia", 50_000, rng=0)


@pytest.fixture(scope="module")
def codes(asia):
    return np.asarray(asia.data)


def _index(asia, *names):
    columns = list(asia.data.columns)
    return [columns.index(name) for name in names]


def test_informative_strata_flags_constant_x_constant_y_and_tiny_strata():
    table = np.array([[[5, 1], [2, 6]],   # informative
                      [[4, 3], [0, 0]],   # X constant
                      [[4, 0], [3, 0]],   # Y constant
                      [[1, 0], [0, 1]]])  # two rows: skipped by the authors' code
    assert informative_strata(table).tolist() == [True, False, False, False]
    with pytest.raises(ValueError, match="table"):
        informative_strata(np.ones((2, 2)))


def test_keep_edge_leaves_degenerate_strata_out_of_the_pooled_statistic():
    informative = np.array([[30, 10], [10, 30]])
    degenerate = np.array([[200, 150], [0, 0]])  # X constant: tau = 0 with a large weight
    table = np.stack([informative, degenerate])
    alone = stratified_kendall(informative[None])
    pooled = stratified_kendall(table)
    kept = stratified_kendall(table, degenerate="keep_edge")
    assert kept.statistic == pytest.approx(alone.statistic) and kept.p_value == pytest.approx(alone.p_value)
    w = kendall_weights(np.array([80.0, 350.0]))
    assert pooled.statistic == pytest.approx(alone.effect * w[0] / math.sqrt(w.sum()))
    assert pooled.p_value > kept.p_value  # the zero stratum dilutes the evidence


def test_a_test_without_an_informative_stratum_is_p_one_or_nan():
    table = np.array([[[40, 30], [0, 0]], [[0, 0], [12, 9]]])
    assert stratified_kendall(table).p_value == 1.0
    result = stratified_kendall(table, degenerate="keep_edge")
    assert math.isnan(result.p_value) and math.isnan(result.statistic)


def test_either_given_tub_and_lung_is_degenerate_on_asia(asia, codes):
    either, xray, tub, lung = _index(asia, "either", "xray", "tub", "lung")
    assert kendall_tau_test(codes, either, xray, (tub, lung)).p_value == 1.0
    assert math.isnan(kendall_tau_test(codes, either, xray, (tub, lung), degenerate="keep_edge").p_value)
    # a test with informative strata is unchanged by the convention
    same = [kendall_tau_test(codes, xray, lung, (), degenerate=d).p_value for d in ("independent", "keep_edge")]
    assert same[0] == same[1]


def test_pc_on_asia_keeps_the_edges_of_either_only_with_keep_edge(asia, codes):
    names = list(asia.data.columns)
    order = reference_max_order(*codes.shape)
    truth = dag_to_cpdag(asia.dag)
    ours = pc(codes, ci_test="kendall", alpha=0.2, max_order=order, node_names=names)
    authors = pc(codes, ci_test="kendall", alpha=0.2, max_order=order, node_names=names, degenerate="keep_edge")
    for edge in ({"either", "xray"}, {"either", "dysp"}):
        assert frozenset(edge) not in ours.skeleton
        assert frozenset(edge) in authors.skeleton
    assert authors.info["degenerate"] == "keep_edge"
    f1_ours = cpdag_pair_prf(ours.cpdag, truth)["f1"]
    f1_authors = cpdag_pair_prf(authors.cpdag, truth)["f1"]
    assert f1_ours < 0.8 < f1_authors  # 0.74 and 0.90 on 100 000 rows


def test_a_nan_p_value_keeps_the_edge():
    decider = PValueDecider(lambda x, y, S: type("R", (), {"p_value": math.nan})(), alpha=0.05)
    assert decider.decide(0, 1, ()) is False
    decider = PValueDecider(lambda x, y, S: type("R", (), {"p_value": 0.5})(), alpha=0.05)
    assert decider.decide(0, 1, ()) is True


def test_bad_conventions_are_refused_with_the_argument_named(codes):
    with pytest.raises(ValueError, match="degenerate"):
        check_degenerate("drop")
    with pytest.raises(ValueError, match="degenerate"):
        stratified_kendall(np.ones((1, 2, 2)), degenerate="nan")
    with pytest.raises(ValueError, match="kendall"):
        CITester(codes, "g2", degenerate="keep_edge")
    with pytest.raises(ValueError, match="kendall"):
        pc(codes, ci_test="g2", degenerate="keep_edge")


@pytest.mark.parametrize("name", sorted(registry.ALGORITHMS))
def test_no_private_algorithm_takes_the_option(name):
    spec = registry.ALGORITHMS[name]
    assert "degenerate" not in inspect.signature(spec.run).parameters
    assert "degenerate" not in spec.extra


def test_private_building_blocks_refuse_it(asia, codes):
    with pytest.raises(TypeError, match="degenerate"):
        priv_pc(codes, levels=asia.levels, epsilon_per_test=1.0, rng=0, degenerate="keep_edge")
    assert KendallPValueQuery(codes, asia.levels).tester.degenerate == "independent"
    sieve = SieveAndExamine(n=1000, threshold=0.1, threshold_tweak=0.02, epsilon=1.0, sensitivity=0.01,
                            subsample_sensitivity=0.05, subsample_size=100, rng=0)
    with pytest.raises(ValueError, match="finite"):
        sieve.sieve(math.nan)  # a NaN answer is a data-dependent branch the mechanism does not charge


def test_the_not_dp_diagnostic_equals_authors_pc_at_huge_epsilon(asia, codes):
    names = list(asia.data.columns)
    order = 3
    authors = pc(codes, ci_test="kendall", alpha=0.2, max_order=order, node_names=names, degenerate="keep_edge")
    ours = pc(codes, ci_test="kendall", alpha=0.2, max_order=order, node_names=names)
    diagnostic = priv_pc_keep_edge(codes, levels=asia.levels, epsilon_per_test=1e6, rng=1, max_order=order,
                                   node_names=names)
    assert set(diagnostic.cpdag.edges) == set(authors.cpdag.edges) != set(ours.cpdag.edges)
    assert "not DP" in diagnostic.info["algorithm"]


def test_fisher_z_singular_sub_matrix_follows_the_degenerate_convention():
    """X an exact linear function of S: the partial correlation is undefined; p = 1 (remove) or NaN (keep)."""
    import math

    import numpy as np

    from dpcd.ci import CITester
    from dpcd.ci.fisher import SingularCovarianceError, fisher_z_from_matrix
    from dpcd.discovery import pc

    rng = np.random.default_rng(0)
    z = rng.normal(size=(500, 2))
    data = np.column_stack([z[:, 0] + 2 * z[:, 1], rng.normal(size=500) + z[:, 0], z])  # x0 = z0 + 2 z1
    with pytest.raises(SingularCovarianceError, match="singular"):
        fisher_z_from_matrix(np.corrcoef(data.T), 500, 0, 1, [2, 3])
    assert CITester(data, "fisherz")(0, 1, [2, 3]).p_value == 1.0
    assert math.isnan(CITester(data, "fisherz", degenerate="keep_edge")(0, 1, [2, 3]).p_value)
    assert fisher_z_from_matrix(np.corrcoef(data.T), 500, 0, 1, [3]).p_value < 1e-6  # regular when defined
    for convention in ("independent", "keep_edge"):  # PC runs through the singular tests under either convention
        assert pc(data, ci_test="fisherz", alpha=0.01, degenerate=convention).n_tests >= 1

"""Noise-aware collider decisions: Marginal-PC orients x → z ← y only when its released tables show x, y dependent
given z (post-processing of released tables; the engine's hook and the rule itself)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from dpcd.datasets import load_bnlearn, sample_categorical
from dpcd.discovery import marginal_pc as mp
from dpcd.discovery.pc import orient
from dpcd.graphs import dag_to_cpdag, directed_edges
from dpcd.privacy import PrivacyLedger


def _decider(data, levels, *, evidence: bool, epsilon: float = 5.0) -> mp.MarginalTablesDecider:
    mus = mp._order_mus(epsilon, 1e-6, 1)
    decider = mp.MarginalTablesDecider(np.asarray(data), np.asarray(levels), mus, alpha=0.05, candidates=(3,),
                                       screen_alpha=0.0, n_boot=200, rng=np.random.default_rng(0),
                                       ledger=PrivacyLedger("replace", public=mp.PUBLIC), delta=1e-6,
                                       collider_evidence=evidence)
    p = len(levels)
    decider.start_order(0, ~np.eye(p, dtype=bool))  # releases every pair table, as a run's order 0 does
    return decider


@pytest.mark.parametrize("structure, is_collider", [([("x", "z"), ("z", "y")], False),   # chain
                                                    ([("z", "x"), ("z", "y")], False),   # fork
                                                    ([("x", "z"), ("y", "z")], True)])   # collider
def test_the_released_pair_tables_tell_a_collider_from_a_chain_or_fork(structure, is_collider):
    said = []
    for seed in range(6):  # six random 3-state CPT draws; the test has level 0.05 and little noise here
        sample = sample_categorical(nx.DiGraph(structure), 50_000, seed, cards=[3, 3, 3], concentration=1.0)
        order = list(sample.data.columns)
        x, y, z = order.index("x"), order.index("y"), order.index("z")
        said.append(_decider(sample.data.to_numpy(), sample.levels, evidence=True).collider(min(x, y), z, max(x, y)))
        assert _decider(sample.data.to_numpy(), sample.levels, evidence=False).collider(min(x, y), z, max(x, y))
    assert sum(said) >= 5 if is_collider else sum(said) <= 1


def test_the_engine_asks_the_hook_and_a_veto_leaves_the_triple_unoriented():
    adjacency = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=bool)  # x - z - y, x and y separated by {}
    asked = []

    def veto(x, z, y):
        asked.append((x, z, y))
        return False

    assert directed_edges(orient(["x", "z", "y"], adjacency, {(0, 2): ()})) == {("x", "z"), ("y", "z")}
    assert directed_edges(orient(["x", "z", "y"], adjacency, {(0, 2): ()}, veto)) == set()
    assert asked == [(0, 1, 2)]


@pytest.mark.parametrize("option", ["collider_evidence", "max_p_colliders"])
def test_an_orientation_rule_changes_only_the_marks_never_the_skeleton_or_the_spending(option):
    sample = load_bnlearn("child", 20_000, rng=0)
    runs = {flag: mp.marginal_pc(sample.data, levels=sample.levels, epsilon_total=1.0, rng=4, **{option: flag})
            for flag in (False, True)}
    assert runs[False].skeleton == runs[True].skeleton
    assert runs[False].sepsets == runs[True].sepsets
    assert runs[False].ledger.epsilons().tolist() == runs[True].ledger.epsilons().tolist()
    assert runs[True].info[option] is True and runs[False].cpdag.number_of_edges() > 0
    assert mp.DEFAULT_COLLIDER_EVIDENCE is True and mp.DEFAULT_MAX_P_COLLIDERS is True  # chosen on development data


def test_on_a_development_network_the_evidence_rule_orients_no_worse():
    from dpcd.graphs import cpdag_pair_prf

    sample = load_bnlearn("child", 100_000, rng=0)
    truth = dag_to_cpdag(sample.dag)
    f1 = {flag: cpdag_pair_prf(mp.marginal_pc(sample.data, levels=sample.levels, epsilon_total=1.0, rng=1,
                                              collider_evidence=flag).cpdag, truth)["f1"] for flag in (False, True)}
    assert f1[True] >= f1[False]


@pytest.mark.parametrize("structure, is_collider", [([("x", "z"), ("z", "y")], False),   # chain
                                                    ([("z", "x"), ("z", "y")], False),   # fork
                                                    ([("x", "z"), ("y", "z")], True)])   # collider
def test_the_max_p_rule_tells_a_collider_from_a_chain_or_fork_on_released_tables(structure, is_collider):
    said = []
    for seed in range(6):
        sample = sample_categorical(nx.DiGraph(structure), 50_000, seed, cards=[3, 3, 3], concentration=1.0)
        order = list(sample.data.columns)
        x, y, z = order.index("x"), order.index("y"), order.index("z")
        decider = _decider(sample.data.to_numpy(), sample.levels, evidence=False)
        said.append(decider.max_p_collider(min(x, y), z, max(x, y)))
    assert sum(said) >= 5 if is_collider else sum(said) <= 1


def test_the_max_p_rule_reads_released_tables_only_and_compares_sets_with_and_without_the_middle():
    sample = sample_categorical(nx.DiGraph([("x", "z"), ("y", "z")]), 50_000, 0, cards=[3, 3, 3], concentration=1.0)
    decider = _decider(sample.data.to_numpy(), sample.levels, evidence=False)
    order = list(sample.data.columns)
    x, y, z = sorted((order.index("x"), order.index("y"))) + [order.index("z")]
    del decider.codes  # the data: a rule that read them would fail here
    said = decider.max_p_collider(x, z, y)
    # with no three-way table released, the set holding z is the screen on pair tables; without z, the pair table
    assert (decider._table_p((x, y, ())) > decider._given_z_p(x, z, y)) is said


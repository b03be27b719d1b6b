"""EM-PC (paper 000, PrivPC) and its distance score."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcd.ci.distance import (
    count_quality,
    distance_score,
    flip_distance,
    full_table,
    g2_public_dof,
    g2_statistic,
    g2_threshold,
    step_bounds,
)
from dpcd.discovery import em_pc as em_pc_module
from dpcd.discovery.em_pc import EMPCDecider, em_pc
from dpcd.discovery.pc import pc
from dpcd.graphs import v_structures
from dpcd.privacy import PrivacyLedger, exponential_mechanism_probabilities

# --------------------------------------------------------------------------- brute force


def _g2_reference(table: np.ndarray) -> float:
    """G² = 2 Σ O ln(O/E) written out cell by cell (independent of dpcd's formula)."""
    total = 0.0
    for stratum in table:
        n = stratum.sum()
        if n == 0:
            continue
        rows, cols = stratum.sum(axis=1), stratum.sum(axis=0)
        for a in range(stratum.shape[0]):
            for b in range(stratum.shape[1]):
                o = stratum[a, b]
                if o > 0:
                    total += 2 * o * np.log(o * n / (rows[a] * cols[b]))
    return total


def _brute_force_distance(table: np.ndarray, threshold: float, depth: int) -> int:
    """Smallest number of ±1 cell changes that moves G² across ``threshold`` (BFS over all tables)."""
    start_independent = _g2_reference(table) < threshold
    frontier = {tuple(table.ravel())}
    seen = set(frontier)
    for k in range(1, depth + 1):
        nxt = set()
        for state in frontier:
            for i in range(len(state)):
                for sign in (1, -1):
                    if state[i] + sign < 0:
                        continue
                    child = list(state)
                    child[i] += sign
                    child = tuple(child)
                    if child in seen:
                        continue
                    seen.add(child)
                    independent = _g2_reference(np.array(child, dtype=float).reshape(table.shape)) < threshold
                    if independent != start_independent:
                        return k
                    nxt.add(child)
        frontier = nxt
    return depth + 1


def test_g2_statistic_matches_reference():
    rng = np.random.default_rng(0)
    for _ in range(20):
        table = rng.integers(0, 20, size=(3, 2, 3)).astype(float)
        assert g2_statistic(table) == pytest.approx(_g2_reference(table), rel=1e-10, abs=1e-10)


def test_flip_distance_equals_brute_force_on_small_tables():
    rng = np.random.default_rng(1)
    threshold = g2_threshold(1, 0.05)
    checked = 0
    for _ in range(60):
        table = rng.integers(0, 8, size=(1, 2, 2)).astype(float)
        table[0, 0, 0] += rng.integers(0, 10)
        result = flip_distance(table, threshold=threshold, exact_states=50_000, method="search")
        if not result.exact or result.k > 5:
            continue
        assert result.k == _brute_force_distance(table, threshold, result.k), table
        checked += 1
    assert checked >= 30


def test_greedy_is_an_upper_bound_of_the_exact_distance():
    rng = np.random.default_rng(2)
    threshold = g2_threshold(2, 0.05)
    for _ in range(25):
        table = rng.integers(0, 10, size=(2, 2, 2)).astype(float)
        exact = flip_distance(table, threshold=threshold, exact_states=100_000, method="search")
        greedy = flip_distance(table, threshold=threshold, exact_states=0, method="search")
        if exact.exact:
            assert greedy.k >= exact.k


def test_distance_score_sign_and_shift():
    threshold = g2_threshold(1, 0.01)
    independent = np.array([[[50.0, 50.0], [50.0, 50.0]]])
    dependent = np.array([[[90.0, 10.0], [10.0, 90.0]]])
    assert distance_score(independent, threshold=threshold) >= 0
    assert distance_score(dependent, threshold=threshold) <= -1


def _neighbour(codes: np.ndarray, levels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if rng.random() < 0.5:
        return np.delete(codes, rng.integers(len(codes)), axis=0)
    record = np.array([rng.integers(k) for k in levels])
    return np.vstack([codes, record])


def test_distance_score_sensitivity_at_most_one_on_random_neighbours():
    """Exact scores of D and a random add/remove neighbour D' differ by at most 1."""
    rng = np.random.default_rng(3)
    levels = np.array([2, 2, 2])
    threshold = g2_threshold(g2_public_dof(2, 2, [2]), 0.05)
    compared = 0
    for _ in range(100):
        n = int(rng.integers(10, 30))
        a = rng.integers(0, 2, n)
        b = np.where(rng.random(n) < rng.uniform(0.5, 0.9), a, rng.integers(0, 2, n))
        s = rng.integers(0, 2, n)
        codes = np.column_stack([a, b, s])
        other = _neighbour(codes, levels, rng)
        first = flip_distance(full_table(codes, 0, 1, (2,), levels), threshold=threshold, exact_states=3_000,
                              method="search")
        second = flip_distance(full_table(other, 0, 1, (2,), levels), threshold=threshold, exact_states=3_000,
                               method="search")
        if first.exact and second.exact:
            compared += 1
            assert abs(first.score - second.score) <= 1
    assert compared >= 50


def test_step_bounds_cover_every_step_of_random_paths():
    """B_i of dpcd.ci.distance bounds |ΔG²| of any single add/remove at a table i steps away."""
    rng = np.random.default_rng(11)
    ratios = []
    for _ in range(60):
        shape = (int(rng.integers(1, 4)), int(rng.integers(2, 4)), int(rng.integers(2, 4)))
        start = rng.integers(0, rng.choice([3, 30, 300]), size=shape).astype(float)
        radius = int(rng.integers(0, 6))
        bound = step_bounds(start, np.array([radius]))[0]
        table = start.copy()
        for _ in range(radius):  # a random path of `radius` steps
            idx = tuple(rng.integers(0, k) for k in shape)
            if table[idx] > 0 and rng.random() < 0.5:
                table[idx] -= 1
            else:
                table[idx] += 1
        base = g2_statistic(table)
        for idx in np.ndindex(shape):
            for sign in (+1, -1):
                if sign < 0 and table[idx] == 0:
                    continue
                other = table.copy()
                other[idx] += sign
                change = abs(g2_statistic(other) - base)
                assert change <= bound + 1e-9
                ratios.append(change / bound if bound > 0 else 0.0)
    assert max(ratios) > 0.5  # the bound is not vacuous on these tables


def test_step_bounds_grow_with_the_radius():
    table = np.array([[[500.0, 520.0], [480.0, 500.0]]])
    bounds = step_bounds(table, np.arange(0, 50))
    assert np.all(np.diff(bounds) >= -1e-12)
    assert bounds[0] < 0.2  # near independence with large counts one record moves G² very little


def test_box_distance_is_the_same_in_smaller_chunks(monkeypatch):
    """The memory cap on the radii evaluated at once changes how the search is cut, never its answer."""
    from dpcd.ci import distance

    rng = np.random.default_rng(3)
    tables = [rng.integers(200, 400, size=(40, 3, 4)).astype(float) for _ in range(3)]
    tables.append(np.array([[[5000.0, 5400.0], [5100.0, 4800.0]]]))  # far from the threshold: a long search
    threshold = g2_threshold(2 * 3 * 40, 0.05)
    free = [flip_distance(t, threshold=threshold).k for t in tables]
    monkeypatch.setattr(distance, "BOX_CHUNK_ELEMENTS", 480)  # one or a few radii per call
    assert [flip_distance(t, threshold=threshold).k for t in tables] == free
    assert max(free) > 16  # the searches ran past the first chunk


def test_lipschitz_score_is_a_lower_bound_of_the_exact_distance():
    rng = np.random.default_rng(12)
    threshold = g2_threshold(1, 0.05)
    checked = 0
    for _ in range(60):
        table = rng.integers(0, 8, size=(1, 2, 2)).astype(float)
        table[0, 0, 0] += rng.integers(0, 10)
        exact = flip_distance(table, threshold=threshold, exact_states=50_000, method="search")
        if not exact.exact:
            continue
        bound = flip_distance(table, threshold=threshold, max_distance=1_000)
        assert bound.provable and 1 <= bound.k <= exact.k
        if exact.k <= 2:
            assert bound.k == exact.k  # exact near the decision boundary
        checked += 1
    assert checked >= 30


def test_the_near_search_equals_the_layered_search_and_the_brute_force():
    # _near (one neighbouring table in memory) returns what _exact (a whole layer in memory) returns, on tables
    # near and far from the threshold, with one and several strata, at depth 1 and 2
    from dpcd.ci.distance import _exact, _near

    rng = np.random.default_rng(21)
    seen = set()
    for trial in range(120):
        shape = (1, 2, 2) if trial % 2 else (int(rng.integers(1, 4)), 2, 3)
        table = rng.integers(0, 9, size=shape).astype(float)
        table[0, 0, 0] += rng.integers(0, 8)
        threshold = g2_statistic(table) + float(rng.normal(0.0, 2.0))  # near its own statistic: k is small
        increase = g2_statistic(table) < threshold
        for depth in (1, 2):
            near = _near(table.copy(), threshold, increase, depth)
            assert near == _exact(table, threshold, increase, depth, 1 << 62), (table, threshold, depth)
            if shape == (1, 2, 2) and depth == 2:
                assert min(near, 3) == _brute_force_distance(table, threshold, 2)
            seen.add(near)
    assert seen == {1, 2, 3}  # every outcome occurred
    with pytest.raises(ValueError, match="depth"):
        _near(np.ones((1, 2, 2)), 1.0, True, 3)


@pytest.mark.parametrize("n_range", [(10, 40), (2_000, 4_000)])
def test_lipschitz_score_sensitivity_is_one_on_random_neighbours(n_range):
    """Provable scores of D and an add/remove neighbour differ by at most 1, also where the search is not exact."""
    rng = np.random.default_rng(13)
    levels = np.array([3, 3, 2])
    threshold = g2_threshold(g2_public_dof(3, 3, [2]), 0.05)
    differences = []
    for _ in range(150):
        n = int(rng.integers(*n_range))
        a = rng.integers(0, 3, n)
        b = np.where(rng.random(n) < rng.uniform(0.0, 0.3), a, rng.integers(0, 3, n))
        s = rng.integers(0, 2, n)
        codes = np.column_stack([a, b, s])
        other = _neighbour(codes, levels, rng)
        first = flip_distance(full_table(codes, 0, 1, (2,), levels), threshold=threshold, max_distance=500)
        second = flip_distance(full_table(other, 0, 1, (2,), levels), threshold=threshold, max_distance=500)
        differences.append(abs(first.score - second.score))
    assert max(differences) <= 1
    assert len(set(differences)) > 1  # the scores do move: the check is not vacuous


def test_em_pc_default_scores_are_all_provable():
    rng = np.random.default_rng(14)
    data = rng.integers(0, 3, size=(3000, 5))
    data[:, 1] = (data[:, 0] + (rng.random(3000) < 0.2)) % 3
    result = em_pc(data, levels=(3,) * 5, epsilon_total=5.0, rng=1)
    assert result.info["distance"] == "lipschitz" and result.info["unproven_scores"] == 0
    assert result.ledger.total().epsilon <= 5.0 + 1e-9
    with pytest.raises(ValueError, match="distance"):
        em_pc(data, levels=(3,) * 5, epsilon_total=5.0, rng=1, unproven={"distance": "exact"})
    searched = em_pc(data, levels=(3,) * 5, epsilon_total=5.0, rng=1, unproven={"distance": "search"})
    assert searched.info["distance"] == "search"
    assert "not" in searched.ledger.summary()["totals"]["basic"]["not_dp"] or searched.ledger.not_dp


def test_count_quality_is_the_papers_eq_6_to_8():
    # scores u: independent (u >= 0) first; the right count (2) gets the only non-negative quality
    u = np.array([5.0, 0.0, -3.0, -7.0])
    q = count_quality(u)
    assert q.tolist() == [-6.0, -1.0, 0.0, -3.0, -7.0]
    assert np.argmax(q) == 2


# --------------------------------------------------------------------------- the exponential mechanisms


class _FixedScores(EMPCDecider):
    def __init__(self, scores: dict[int, int], **kw):
        super().__init__(np.zeros((3, 2), dtype=np.int64), np.array([2, 2]), alpha=0.01, **kw)
        self.fixed = scores

    def score(self, x, y, S):
        return self.fixed[y]


def test_selection_frequencies_match_q2_and_q1_probabilities():
    scores = {1: 3, 2: 1, 3: -1, 4: -2}
    e1, e2 = 0.8, 0.6
    rng = np.random.default_rng(4)
    decider = _FixedScores(scores, epsilon=1e9, epsilon_1=e1, epsilon_2=e2, rng=rng,
                           ledger=PrivacyLedger(), max_distance=100, exact_states=0)
    neighbours = np.array([1, 2, 3, 4])
    adjacency = np.ones((5, 5), dtype=bool)
    draws = 5_000
    counts = np.zeros(5)
    single = np.zeros(4)
    for _ in range(draws):
        removed, _ = decider.decide_node(0, neighbours, 0, adjacency)
        counts[len(removed)] += 1
        if len(removed) == 1:
            single[list(removed)[0] - 1] += 1
    q2 = count_quality(np.array(list(scores.values()), dtype=float))
    expected = exponential_mechanism_probabilities(q2, epsilon=e2, sensitivity=1.0) * draws
    keep = expected >= 5
    chi2 = stats.chisquare(counts[keep], expected[keep] * counts[keep].sum() / expected[keep].sum())
    assert chi2.pvalue > 0.001
    q1 = np.array(list(scores.values()), dtype=float)
    expected1 = exponential_mechanism_probabilities(q1, epsilon=e1, sensitivity=1.0) * single.sum()
    keep1 = expected1 >= 5
    chi2 = stats.chisquare(single[keep1], expected1[keep1] * single[keep1].sum() / expected1[keep1].sum())
    assert chi2.pvalue > 0.001


# --------------------------------------------------------------------------- the algorithm


COLLIDER_LEVELS = {"A": 2, "B": 3, "C": 3, "D": 2, "E": 2}
"""Public domain sizes of ``_collider_data`` (fixed by how the columns are generated)."""


def _collider_data(n: int, seed: int) -> pd.DataFrame:
    """A → C ← B, C → D, E independent: strong (faithful) binary/ternary dependencies."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = rng.integers(0, 3, n)
    c = np.where(rng.random(n) < 0.85, np.minimum(a + b, 2), rng.integers(0, 3, n))
    d = np.where(rng.random(n) < 0.85, (c > 0).astype(int), rng.integers(0, 2, n))
    e = rng.integers(0, 2, n)
    return pd.DataFrame({"A": a, "B": b, "C": c, "D": d, "E": e})


def test_large_epsilon_cpdag_equals_non_private_pc():
    data = _collider_data(20_000, 5)
    reference = pc(data, ci_test="g2", alpha=0.01)
    result = em_pc(data, levels=COLLIDER_LEVELS, epsilon_total=1e7, rng=0, epsilon_split=(1e5, 1e5))
    assert result.skeleton == reference.skeleton
    assert set(result.cpdag.edges) == set(reference.cpdag.edges)
    assert ("A", "C", "B") in v_structures(result.cpdag) or ("B", "C", "A") in v_structures(result.cpdag)
    # separating sets are stored under the pair they separate
    for pair, S in result.sepsets.items():
        assert not set(S) & set(pair)
    assert "C" in result.sepsets[frozenset(("A", "D"))]


def test_ledger_never_exceeds_epsilon():
    data = _collider_data(2_000, 6)
    for epsilon, split in ((1.0, None), (0.5, (0.1, 0.07)), (3.0, (1.0, 1.0))):
        result = em_pc(data, levels=COLLIDER_LEVELS, epsilon_total=epsilon, rng=1, epsilon_split=split)
        assert result.ledger.total("basic").epsilon <= epsilon * (1 + 1e-9)
        assert result.info["spent"] == pytest.approx(result.ledger.total("basic").epsilon)
        assert result.ledger.relation == "add/remove"


def test_same_seed_same_result():
    data = _collider_data(3_000, 7)
    first = em_pc(data, levels=COLLIDER_LEVELS, epsilon_total=2.0, rng=11)
    second = em_pc(data, levels=COLLIDER_LEVELS, epsilon_total=2.0, rng=11)
    assert set(first.cpdag.edges) == set(second.cpdag.edges)


def test_bad_input():
    data = _collider_data(500, 8)
    levels = COLLIDER_LEVELS
    with pytest.raises(ValueError, match="epsilon"):
        em_pc(data, levels=levels, epsilon_total=0.0, rng=0)
    with pytest.raises(ValueError, match="epsilon"):
        em_pc(data, levels=levels, epsilon_total=-1.0, rng=0)
    continuous = np.random.default_rng(0).normal(size=(200, 3))
    with pytest.raises(TypeError, match="integer"):
        em_pc(continuous, levels=(2, 2, 2), epsilon_total=1.0, rng=0)
    with pytest.raises(ValueError, match="epsilon_split"):
        em_pc(data, levels=levels, epsilon_total=1.0, rng=0, epsilon_split=(0.8, 0.8))
    with pytest.raises(TypeError, match="rng"):
        em_pc(data, levels=levels, epsilon_total=1.0, rng="seed")
    with pytest.raises(ValueError, match="alpha"):
        em_pc(data, levels=levels, epsilon_total=1.0, rng=0, alpha=1.5)
    with pytest.raises(ValueError, match="sepset"):
        em_pc(data, levels=levels, epsilon_total=1.0, rng=0, unproven={"sepset": "best"})
    with pytest.raises(TypeError, match="sepset"):
        em_pc(data, levels=levels, epsilon_total=1.0, rng=0, sepset="argmax")  # not among the ordinary parameters
    with pytest.raises(TypeError, match="epsilon"):
        em_pc(data, levels=levels, epsilon=1.0, rng=0)  # the budget is named epsilon_total


# --------------------------------------------------------------------------- separating sets (sepset="joint")


class _FixedPairScores(EMPCDecider):
    """A decider whose distance score depends on the pair (y, S): one set can dominate another."""

    def __init__(self, scores: dict[tuple[int, tuple[int, ...]], int], **kw):
        super().__init__(np.zeros((3, 2), dtype=np.int64), np.array([2, 2]), alpha=0.01, **kw)
        self.fixed = scores

    def score(self, x, y, S):
        return self.fixed[(y, tuple(sorted(S)))]


# order 1 around x = 0 with neighbours 1, 2, 3: neighbour 1 is the only independent one, and its set (2,)
# scores far above (3,)
_PAIR_SCORES = {(1, (2,)): 4, (1, (3,)): 1, (2, (1,)): -1, (2, (3,)): -4, (3, (1,)): -3, (3, (2,)): -2}


@pytest.mark.parametrize("sepset", ["joint", "argmax"])
def test_huge_epsilon_stores_the_best_scoring_set_under_both_rules(sepset):
    for seed in range(20):
        decider = _FixedPairScores(_PAIR_SCORES, epsilon=1e9, epsilon_1=1e4, epsilon_2=1e4, rng=seed,
                                   ledger=PrivacyLedger(), max_distance=100, exact_states=0, sepset=sepset)
        removed, n_tests = decider.decide_node(0, np.array([1, 2, 3]), 1, np.ones((4, 4), dtype=bool))
        assert removed == {1: (2,)}
        assert n_tests == 6


def test_joint_draw_frequencies_match_the_exponential_mechanism_over_pairs():
    """With beta = 1 the stored (neighbour, set) follows exp(eps_1 q / 2) over all pairs of the node;
    the pre-fix rule would always store (1, (2,))."""
    e1 = 0.8
    rng = np.random.default_rng(21)
    decider = _FixedPairScores(_PAIR_SCORES, epsilon=1e12, epsilon_1=e1, epsilon_2=1e4, rng=rng,
                               ledger=PrivacyLedger(), max_distance=100, exact_states=0, sepset="joint")
    pairs = list(_PAIR_SCORES)
    counts = np.zeros(len(pairs))
    draws = 4_000
    for _ in range(draws):
        removed, _ = decider.decide_node(0, np.array([1, 2, 3]), 1, np.ones((4, 4), dtype=bool))
        assert len(removed) == 1  # q2 at eps_2 = 1e4: exactly one independent neighbour
        (y, S), = removed.items()
        counts[pairs.index((y, S))] += 1
    q = np.array([_PAIR_SCORES[k] for k in pairs], dtype=float)
    expected = exponential_mechanism_probabilities(q, epsilon=e1, sensitivity=1.0) * draws
    keep = expected >= 5
    assert keep.sum() >= 3
    chi2 = stats.chisquare(counts[keep], expected[keep] * counts[keep].sum() / expected[keep].sum())
    assert chi2.pvalue > 0.001
    assert counts[pairs.index((1, (3,)))] > 0  # a dominated set of the chosen neighbour is drawn too


def _chain_with_copy(n: int, seed: int) -> pd.DataFrame:
    """A → B → C and A → D (binary): A ⫫ C | B while A and C stay dependent given D."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = np.where(rng.random(n) < 0.8, a, 1 - a)
    c = np.where(rng.random(n) < 0.8, b, 1 - b)
    d = np.where(rng.random(n) < 0.8, a, 1 - a)
    return pd.DataFrame({"A": a, "B": b, "C": c, "D": d})


def _record_rounds(monkeypatch) -> list[dict]:
    """Wrap EMPCDecider.decide_node: record every round's frozen neighbourhood, removals and scores."""
    rounds: list[dict] = []
    original = EMPCDecider.decide_node

    def recording(self, x, neighbours, order, adjacency):
        removed, n_tests = original(self, x, neighbours, order, adjacency)
        frozen = [int(v) for v in neighbours]
        best = {}
        for y, S in removed.items():
            options = [T for T in combinations([v for v in frozen if v != y], order)]
            best[y] = (self.score(x, y, S), max(self.score(x, y, T) for T in options))
        rounds.append({"x": x, "frozen": frozen, "order": order, "removed": dict(removed), "best": best,
                       "sepset": self.sepset})
        return removed, n_tests

    monkeypatch.setattr(EMPCDecider, "decide_node", recording)
    return rounds


@pytest.mark.parametrize("epsilon_total, seed", [(0.5, 0), (3.0, 1), (30.0, 2)])
def test_joint_sepsets_come_from_the_frozen_neighbourhood(monkeypatch, epsilon_total, seed):
    data = _collider_data(2_000, 30 + seed)
    rounds = _record_rounds(monkeypatch)
    result = em_pc(data, levels=COLLIDER_LEVELS, epsilon_total=epsilon_total, rng=seed)
    names = result.nodes
    stored = {}
    for r in rounds:
        assert r["sepset"] == "joint"
        for y, S in r["removed"].items():
            assert y in r["frozen"] and y != r["x"]
            assert len(S) == r["order"]
            assert set(S) <= set(r["frozen"]) - {y}, (r, y, S)
            stored[frozenset((names[r["x"]], names[y]))] = tuple(names[s] for s in S)
    assert sum(len(r["removed"]) for r in rounds) > 0  # the check is not vacuous
    # every separating set of the result is the one drawn in the round that removed the pair
    assert result.sepsets == stored
    assert all(frozenset(pair) not in result.skeleton for pair in result.sepsets)


def test_joint_draw_picks_the_best_set_at_huge_epsilon_like_argmax(monkeypatch):
    data = _chain_with_copy(5_000, 1)
    rounds = _record_rounds(monkeypatch)
    runs = {}
    for rule in ("joint", "argmax"):
        # max_distance large enough that the independent scores are not all capped at the same value
        runs[rule] = em_pc(data, levels=(2, 2, 2, 2), epsilon_total=1e7, epsilon_split=(1e5, 1e5), rng=0,
                           unproven={"sepset": "argmax"} if rule == "argmax" else None, max_distance=500)
    assert runs["joint"].ledger.differentially_private and not runs["argmax"].ledger.differentially_private
    for r in rounds:
        for y, (score, best) in r["best"].items():
            assert score == best, r  # the stored set has the best score of the removed neighbour's sets
    joint, argmax = runs["joint"], runs["argmax"]
    assert joint.skeleton == argmax.skeleton
    assert joint.sepsets[frozenset(("A", "C"))] == argmax.sepsets[frozenset(("A", "C"))] == ("B",)
    assert joint.sepsets == argmax.sepsets
    assert set(joint.cpdag.edges) == set(argmax.cpdag.edges)
    assert joint.info["sepset"] == "joint" and argmax.info["sepset"] == "argmax"


def test_joint_run_is_reproducible_by_seed():
    data = _collider_data(3_000, 12)
    first = em_pc(data, levels=COLLIDER_LEVELS, epsilon_total=3.0, rng=5)
    second = em_pc(data, levels=COLLIDER_LEVELS, epsilon_total=3.0, rng=np.random.default_rng(5))
    assert first.skeleton == second.skeleton
    assert first.sepsets == second.sepsets
    assert set(first.cpdag.edges) == set(second.cpdag.edges)
    assert [(e.mechanism, e.epsilon, e.count) for e in first.ledger.entries] == \
        [(e.mechanism, e.epsilon, e.count) for e in second.ledger.entries]
    assert first.info["rounds"] == second.info["rounds"] and first.info["spent"] == second.info["spent"]


# --------------------------------------------------------------------------- plan and public domains


@pytest.mark.parametrize("epsilon_total, split", [(0.3, None), (1.0, None), (3.0, (0.4, 0.3)), (5.0, (1.0, 1.0)),
                                                 (1.0, (0.3, 0.25))])
def test_plan_is_within_budget_and_dominates_the_run(epsilon_total, split):
    plan = em_pc_module.worst_case(epsilon_total=epsilon_total, epsilon_split=split)
    assert plan.epsilon <= epsilon_total * (1 + 1e-12)
    assert plan.delta == 0.0
    assert plan.relation.name == em_pc_module.RELATION.name == "add/remove"
    assert plan.charges.total("basic").epsilon <= epsilon_total * (1 + 1e-12)
    result = em_pc(_collider_data(2_000, 13), levels=COLLIDER_LEVELS, epsilon_total=epsilon_total,
                   epsilon_split=split, rng=4)
    assert result.ledger.relation == plan.relation.name
    assert result.ledger.total("basic").epsilon <= plan.epsilon * (1 + 1e-9)
    assert result.info["spent"] <= plan.epsilon * (1 + 1e-9)
    assert result.info["epsilon_total"] == epsilon_total and "epsilon" not in result.info
    e1, e2 = plan.parameters["epsilon_1"], plan.parameters["epsilon_2"]
    assert (e1, e2) == (result.info["epsilon_1"], result.info["epsilon_2"])
    # a round costs e2 (no neighbour drawn) or e1 + e2; the filter never starts one it cannot pay in full
    assert result.info["rounds"] * e2 <= result.info["spent"] * (1 + 1e-9)
    assert result.info["spent"] <= result.info["rounds"] * (e1 + e2) * (1 + 1e-9)


def test_plan_covers_rounds_that_save_epsilon_1():
    """A round with no independent neighbour pays only eps_2, so a run can pay more than
    floor(eps / (eps_1 + eps_2)) rounds; the plan's guarantee is the filter's budget, which covers them."""
    data = _collider_data(2_000, 13)
    plan = em_pc_module.worst_case(epsilon_total=1.0, epsilon_split=(0.3, 0.25))
    assert plan.epsilon == pytest.approx(1.0)
    spent = []
    for seed in range(40):
        result = em_pc(data, levels=COLLIDER_LEVELS, epsilon_total=1.0, epsilon_split=(0.3, 0.25), rng=seed)
        assert result.ledger.total("basic").epsilon <= plan.epsilon * (1 + 1e-9)
        spent.append((result.info["rounds"], result.ledger.total("basic").epsilon))
    # some run pays two rounds (0.25 + 0.55 = 0.8), more than one full round of 0.55
    assert max(rounds for rounds, _ in spent) >= 2
    assert max(total for _, total in spent) > 0.55 + 1e-9
    assert em_pc_module.worst_case(epsilon_total=3.0).epsilon == pytest.approx(3.0)
    with pytest.raises(ValueError, match="epsilon_split"):
        em_pc_module.worst_case(epsilon_total=1.0, epsilon_split=(0.8, 0.8))


def test_levels_are_public_and_required():
    data = _collider_data(500, 14)
    with pytest.raises(TypeError, match="levels"):
        em_pc(data, levels=None, epsilon_total=1.0, rng=0)
    with pytest.raises(TypeError):
        em_pc(data, epsilon_total=1.0, rng=0)  # no default
    too_small = dict(COLLIDER_LEVELS, B=2)  # B has codes 0..2
    with pytest.raises(ValueError, match="data preparation"):
        em_pc(data, levels=too_small, epsilon_total=1.0, rng=0)
    with pytest.raises(ValueError, match="data preparation"):
        em_pc(data.to_numpy(), levels=[2, 3, 3, 1, 2], epsilon_total=1.0, rng=0)
    with pytest.raises(ValueError, match="levels"):
        em_pc(data, levels=[2, 3, 3, 2], epsilon_total=1.0, rng=0)
    # a sequence, a mapping and a Schema of the same domains give the same run
    from dpcd.schema import Schema

    schema = Schema.categorical(list(COLLIDER_LEVELS.values()), list(COLLIDER_LEVELS), ordinal=False)
    runs = [em_pc(data, levels=lv, epsilon_total=2.0, rng=3)
            for lv in (COLLIDER_LEVELS, list(COLLIDER_LEVELS.values()), schema)]
    assert all(r.sepsets == runs[0].sepsets and r.skeleton == runs[0].skeleton for r in runs)

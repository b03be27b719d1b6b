"""EM-PC (paper 000, PrivPC) and its distance score."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcd.discovery.em_pc import EMPCDecider, em_pc
from dpcd.discovery.pc import pc
from dpcd.distance_score import (
    count_quality,
    distance_score,
    flip_distance,
    full_table,
    g2_public_dof,
    g2_statistic,
    step_bounds,
    g2_threshold,
)
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
    """B_i of dpcd.distance_score bounds |ΔG²| of any single add/remove at a table i steps away."""
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
    result = em_pc(data, epsilon=5.0, rng=1)
    assert result.info["distance"] == "lipschitz" and result.info["unproven_scores"] == 0
    assert result.ledger.total().epsilon <= 5.0 + 1e-9
    with pytest.raises(ValueError, match="distance"):
        em_pc(data, epsilon=5.0, rng=1, distance="exact")


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
    result = em_pc(data, epsilon=1e7, rng=0, epsilon_split=(1e5, 1e5))
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
        result = em_pc(data, epsilon=epsilon, rng=1, epsilon_split=split)
        assert result.ledger.total("basic").epsilon <= epsilon * (1 + 1e-9)
        assert result.info["spent"] == pytest.approx(result.ledger.total("basic").epsilon)
        assert result.ledger.neighbouring == "add/remove"


def test_same_seed_same_result():
    data = _collider_data(3_000, 7)
    first = em_pc(data, epsilon=2.0, rng=11)
    second = em_pc(data, epsilon=2.0, rng=11)
    assert set(first.cpdag.edges) == set(second.cpdag.edges)


def test_bad_input():
    data = _collider_data(500, 8)
    with pytest.raises(ValueError, match="epsilon"):
        em_pc(data, epsilon=0.0, rng=0)
    with pytest.raises(ValueError, match="epsilon"):
        em_pc(data, epsilon=-1.0, rng=0)
    continuous = np.random.default_rng(0).normal(size=(200, 3))
    with pytest.raises(TypeError, match="integer"):
        em_pc(continuous, epsilon=1.0, rng=0)
    with pytest.raises(ValueError, match="epsilon_split"):
        em_pc(data, epsilon=1.0, rng=0, epsilon_split=(0.8, 0.8))
    with pytest.raises(TypeError, match="rng"):
        em_pc(data, epsilon=1.0, rng="seed")
    with pytest.raises(ValueError, match="alpha"):
        em_pc(data, epsilon=1.0, rng=0, alpha=1.5)

"""Brute-force checks of dpcd.privacy.sensitivity.

Hypothesis generates small datasets and a random neighbour (one row added,
removed or replaced); the statistic may not move by more than the bound.
Datasets are drawn with strong structure (copies, reversals, few levels) as
well as at random, because the worst cases are monotone configurations.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from dpcd.ci import contingency_table, kendall_tau, stratified_kendall
from dpcd.privacy.sensitivity import (
    conditional_kendall_pvalue_sensitivity,
    conditional_kendall_sensitivity,
    conditional_spearman_sensitivity,
    kendall_tau_sensitivity,
    pvalue_sensitivity,
    reference_pvalue_sensitivity,
    spearman_sensitivity,
)

SLACK = 1e-9  # floating-point slack only


def _neighbour(data: np.ndarray, row: np.ndarray, index: int, how: str) -> np.ndarray:
    if how == "add":
        return np.vstack([data, row])
    if how == "remove":
        return np.delete(data, index, axis=0)
    out = data.copy()
    out[index] = row
    return out


@st.composite
def discrete_case(draw, n_min=4, n_max=30, max_strata=3):
    n = draw(st.integers(n_min, n_max))
    kx = draw(st.integers(2, 4))
    ky = draw(st.integers(2, 4))
    ks = draw(st.integers(1, max_strata))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    x = rng.integers(0, kx, n)
    shape = draw(st.sampled_from(["random", "copy", "reverse"]))
    if shape == "copy":
        y = np.minimum(x, ky - 1)
    elif shape == "reverse":
        y = np.minimum(kx - 1 - x, ky - 1)
    else:
        y = rng.integers(0, ky, n)
    s = rng.integers(0, ks, n)
    data = np.column_stack([x, y, s]).astype(np.int64)
    row = np.array([rng.integers(0, kx), rng.integers(0, ky), rng.integers(0, ks)])
    index = int(rng.integers(0, n))
    how = draw(st.sampled_from(["add", "remove", "replace"]))
    return data, _neighbour(data, row, index, how), how, np.array([kx, ky, ks])


@given(discrete_case())
@settings(max_examples=300, deadline=None)
def test_kendall_tau_a_bound_brute_force(case):
    data, other, how, _ = case
    n = len(data)
    relation = "replace" if how == "replace" else "add/remove"
    bound = kendall_tau_sensitivity(n, relation=relation)
    change = abs(kendall_tau(data[:, 0], data[:, 1], "a") - kendall_tau(other[:, 0], other[:, 1], "a"))
    assert change <= bound + SLACK


@pytest.mark.parametrize("n", [4, 10, 50])
def test_kendall_bound_is_attained_and_paper_bound_fails(n):
    """n points on a decreasing line plus one concordant with all: Δτ = 4/(n+1) > 2/(n−1)."""
    a = np.arange(n)
    b = -np.arange(n)
    tau = kendall_tau(a, b, "a")
    tau_added = kendall_tau(np.r_[a, n], np.r_[b, 1], "a")
    assert tau == -1.0
    change = abs(tau_added - tau)
    assert math.isclose(change, 4 / (n + 1))
    assert change > 2 / (n - 1)  # Thm 6 of the paper is too small
    assert change <= kendall_tau_sensitivity(n + 1) + SLACK  # the larger neighbour has n + 1 rows: 4/(n+1)


def _z(data: np.ndarray, levels: np.ndarray) -> float:
    return stratified_kendall(contingency_table(data, 0, 1, [2], levels), "a").statistic


@given(discrete_case(n_min=6, n_max=40))
@settings(max_examples=300, deadline=None)
def test_conditional_kendall_bound_brute_force(case):
    data, other, how, levels = case
    n, k = len(data), int(levels[2])
    if n - 1 <= k:
        return
    relation = "replace" if how == "replace" else "add/remove"
    bound = conditional_kendall_sensitivity(n, k, relation=relation)
    assert abs(_z(data, levels) - _z(other, levels)) <= bound + SLACK


def test_conditional_kendall_worst_monotone_cases():
    """Perfectly concordant strata and one discordant row: the change stays below the bound."""
    worst = 0.0
    for n in (8, 20, 60, 200):
        for k in (1, 2, 4):
            x = np.tile(np.arange(n // k), k)
            s = np.repeat(np.arange(k), n // k)
            data = np.column_stack([x, x, s])
            levels = np.array([n, n, k])
            m = len(data)
            for row in ([n - 1, 0, 0], [0, n - 1, 0], [n - 1, n - 1, 0]):
                other = np.vstack([data, row])
                change = abs(_z(data, levels) - _z(other, levels))
                bound = conditional_kendall_sensitivity(m + 1, k)  # the added pair: (m, m+1) rows
                worst = max(worst, change / bound)
                assert change <= bound + SLACK
    assert worst > 0.3  # the bound is of the right order, not vacuous


def test_conditional_kendall_constants():
    # c_tau = (63/8)/sqrt(c2); c1 = 1 -> c2 = 9/14; c1 -> inf -> c2 = 9/4
    assert math.isclose(conditional_kendall_sensitivity(1001, 1), (63 / 8) / math.sqrt(9 / 14 * 999))
    large = conditional_kendall_sensitivity(10**6 + 1, 1, min_stratum_size=10**9)
    assert math.isclose(large * math.sqrt(10**6 - 1), 5.25, rel_tol=1e-6)
    assert conditional_kendall_sensitivity(101, 4, relation="replace") == pytest.approx(
        2 * conditional_kendall_sensitivity(101, 4))


@st.composite
def untied_case(draw, n_min=4, n_max=25):
    n = draw(st.integers(n_min, n_max))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n)
    shape = draw(st.sampled_from(["random", "copy", "reverse"]))
    b = {"random": rng.standard_normal(n), "copy": a + 0.0, "reverse": -a}[shape]
    data = np.column_stack([a, b])
    row = rng.standard_normal(2) * 3
    index = int(rng.integers(0, n))
    how = draw(st.sampled_from(["add", "remove", "replace"]))
    return data, _neighbour(data, row, index, how), how


@given(untied_case())
@settings(max_examples=300, deadline=None)
def test_spearman_bound_brute_force(case):
    data, other, how = case
    if len(other) < 3:
        return
    relation = "replace" if how == "replace" else "add/remove"
    bound = spearman_sensitivity(len(data), relation=relation)
    change = abs(stats.spearmanr(data[:, 0], data[:, 1]).statistic
                 - stats.spearmanr(other[:, 0], other[:, 1]).statistic)
    assert change <= bound + SLACK


def _conditional_spearman(data: np.ndarray) -> float:
    num, den = 0.0, 0.0
    for s in np.unique(data[:, 2]):
        block = data[data[:, 2] == s]
        if len(block) >= 3:
            w = len(block) - 1
            num += w * stats.spearmanr(block[:, 0], block[:, 1]).statistic
            den += w
    return num / math.sqrt(den) if den else 0.0


@given(st.integers(10, 40), st.integers(1, 3), st.integers(0, 2**32 - 1),
       st.sampled_from(["add", "remove", "replace"]))
@settings(max_examples=200, deadline=None)
def test_conditional_spearman_bound_brute_force(n, k, seed, how):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n)
    data = np.column_stack([a, a + 0.1 * rng.standard_normal(n), rng.integers(0, k, n)])
    row = np.array([rng.standard_normal() * 3, rng.standard_normal() * 3, rng.integers(0, k)])
    other = _neighbour(data, row, int(rng.integers(0, n)), how)
    if n - 1 <= 2 * k:
        return
    relation = "replace" if how == "replace" else "add/remove"
    bound = conditional_spearman_sensitivity(n, k, relation=relation)
    assert abs(_conditional_spearman(data) - _conditional_spearman(other)) <= bound + SLACK


def test_spearman_has_no_small_bound_on_tied_data():
    """Mid-rank ρ on tied data: a constant column turning non-constant moves ρ by 1."""
    n = 50
    x = np.zeros(n)
    y = np.zeros(n)
    before = 0.0  # constant columns: rho undefined, taken as 0 (as dpcd.ci does)
    after = stats.spearmanr(np.r_[x, 1], np.r_[y, 1]).statistic
    assert abs(after - before) == pytest.approx(1.0)
    assert abs(after - before) > spearman_sensitivity(n)


def test_pvalue_sensitivity_matches_brute_force():
    z = np.linspace(-8, 8, 160_001)
    for delta in (0.01, 0.1, 0.5, 2.0):
        brute = np.max(np.abs(special.ndtr(np.abs(z + delta)) - special.ndtr(np.abs(z))))
        assert brute <= pvalue_sensitivity(delta) + 1e-12
        assert brute == pytest.approx(pvalue_sensitivity(delta), abs=1e-4)
    assert reference_pvalue_sensitivity(10_000) == pytest.approx(special.ndtr(0.06) - 0.5)


@pytest.mark.parametrize("call, match", [
    (lambda: kendall_tau_sensitivity(1), "n"),
    (lambda: kendall_tau_sensitivity(10, relation="swap"), "relation"),
    (lambda: conditional_kendall_sensitivity(5, 4), "n must exceed"),
    (lambda: conditional_spearman_sensitivity(5, 2), "n must exceed"),
    (lambda: pvalue_sensitivity(0.0), "z_sensitivity"),
    (lambda: conditional_kendall_sensitivity(100, 2, min_stratum_size=0), "min_stratum_size"),
])
def test_bad_input(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_conditional_kendall_pvalue_sensitivity_one_and_two_sided():
    z = conditional_kendall_sensitivity(5000, 8, relation="replace")
    one = conditional_kendall_pvalue_sensitivity(5000, 8, relation="replace")
    assert one == pytest.approx(pvalue_sensitivity(z))
    assert conditional_kendall_pvalue_sensitivity(5000, 8, relation="replace", two_sided=True) == \
        pytest.approx(min(1.0, 2 * one))
    # with at least as many strata as rows only the range of the p-value bounds it
    assert conditional_kendall_pvalue_sensitivity(100, 99) == 0.5
    assert conditional_kendall_pvalue_sensitivity(100, 500, two_sided=True) == 1.0
    with pytest.raises(ValueError, match="relation"):
        conditional_kendall_pvalue_sensitivity(100, 2, relation="swap")

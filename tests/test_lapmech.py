"""LapMech (paper 000, Sec. IV-D): PC on one Laplace-noised full contingency table; and, for LapMech and AIM-PC
alike, the refusal of a full table over ``max_cells`` before the data are read."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcd.ci import contingency_table
from dpcd.discovery import lapmech as lapmech_module
from dpcd.discovery.aim_pc import aim_pc
from dpcd.discovery.lapmech import lapmech, noisy_joint_table
from dpcd.discovery.pc import pc
from dpcd.discovery.tables import NoisyTableDecider

LEVELS = (2, 2, 3, 2)
"""The public domain sizes of ``_chain_data`` (fixed by how the columns are generated)."""


def _chain_data(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = np.where(rng.random(n) < 0.8, a, 1 - a)
    c = np.where(rng.random(n) < 0.8, b + rng.integers(0, 2, n), rng.integers(0, 3, n))
    d = rng.integers(0, 2, n)
    return pd.DataFrame({"A": a, "B": b, "C": c, "D": d})


def test_marginals_of_the_noiseless_table_are_contingency_tables():
    data = _chain_data(3_000, 0)
    codes = data.to_numpy()
    levels = np.array(LEVELS)
    table = noisy_joint_table(codes, levels, epsilon=1e9, rng=0)  # noise ~ 1e-9
    decider = NoisyTableDecider(table, 0.01)
    for x, y, S in ((0, 1, ()), (0, 2, (1,)), (1, 3, (0, 2)), (2, 0, (3,))):
        marginal = decider.marginal(x, y, S)
        reference = contingency_table(codes, x, y, S, levels)
        assert marginal.shape == (int(np.prod([levels[s] for s in S])), levels[x], levels[y])
        np.testing.assert_allclose(marginal[marginal.sum(axis=(1, 2)) > 0.5], reference, atol=1e-3)


def test_noise_scale_is_one_over_epsilon():
    codes = np.zeros((10, 2), dtype=int)
    codes[:, 1] = 1
    table = noisy_joint_table(np.vstack([codes] * 1), [40, 50], epsilon=2.0, rng=1)
    noise = table.ravel().astype(float)
    noise[1] -= 10  # the one occupied cell (0, 1)
    # Var(Lap(b)) = 2 b^2 = 0.5; 2000 cells: the sample variance is within ~5 standard errors
    assert noise.var() == pytest.approx(0.5, abs=5 * 0.5 * np.sqrt(5 / 2000))
    assert abs(noise.mean()) < 5 * np.sqrt(0.5 / 2000)


def test_counts_beyond_float32_integers_keep_sensitivity_one():
    # float32 holds integers exactly only up to 2**24: a cell of 2**24 + 1 records must be released as
    # float32(count + noise), not float32(float32(count) + noise), or one record moves the table by 0 or 2
    from dpcd.privacy import laplace_noise

    count = 2 ** 24 + 1
    codes = np.zeros((count, 1), dtype=np.int8)
    for seed in range(4):
        noise = laplace_noise(1e-3, 1, rng=np.random.default_rng(seed))
        released = noisy_joint_table(codes, [1], epsilon=1e3, rng=np.random.default_rng(seed))
        assert released.dtype == np.float32
        assert released.tolist() == np.float32(count + noise).tolist()


def test_large_epsilon_equals_non_private_pc():
    data = _chain_data(20_000, 2)
    reference = pc(data, ci_test="g2", alpha=0.01)
    result = lapmech(data, levels=LEVELS, epsilon_total=1e8, rng=3)
    assert result.skeleton == reference.skeleton
    assert set(result.cpdag.edges) == set(reference.cpdag.edges)


def test_charges_exactly_once():
    result = lapmech(_chain_data(1_000, 4), levels=LEVELS, epsilon_total=0.7, rng=5)
    assert result.ledger.n_charges == 1
    assert result.ledger.total("basic").epsilon == pytest.approx(0.7)
    assert result.ledger.entries[0].sensitivity == 1.0


def test_refuses_a_table_over_the_memory_bound():
    data = _chain_data(500, 6)
    with pytest.raises(ValueError, match="max_cells"):
        lapmech(data, levels=LEVELS, epsilon_total=1.0, rng=0, max_cells=10)


@pytest.mark.parametrize("run", [lapmech, aim_pc], ids=["lapmech", "aim_pc"])
def test_a_table_over_the_memory_bound_is_refused_before_the_data_are_read(run):
    """Both full-table algorithms refuse by the public domain sizes (tables.check_table_cells) before any code is
    checked, so the refusal cannot depend on the data."""
    bad = pd.DataFrame(np.full((10, 3), 99), columns=["a", "b", "c"])  # codes outside the domain: never read
    with pytest.raises(ValueError, match="max_cells"):
        run(bad, levels=(4, 4, 4), epsilon_total=1.0, rng=0, max_cells=63)
    with pytest.raises(ValueError, match="outside"):
        run(bad, levels=(4, 4, 4), epsilon_total=1.0, rng=0)


def test_bad_input():
    data = _chain_data(500, 7)
    with pytest.raises(ValueError, match="epsilon"):
        lapmech(data, levels=LEVELS, epsilon_total=0.0, rng=0)
    with pytest.raises(TypeError, match="integer"):
        lapmech(np.random.default_rng(0).normal(size=(100, 3)), levels=(2, 2, 2), epsilon_total=1.0, rng=0)
    with pytest.raises(ValueError, match="levels"):
        lapmech(data, levels=(2, 2, 3), epsilon_total=1.0, rng=0)


# --------------------------------------------------------------------------- public domains and the plan


def test_levels_are_required_and_never_read_from_the_codes():
    data = _chain_data(500, 8)
    with pytest.raises(TypeError, match="levels"):
        lapmech(data, levels=None, epsilon_total=1.0, rng=0)
    # a code outside its public domain is a data-preparation error, not a larger table
    with pytest.raises(ValueError, match="data preparation"):
        lapmech(data, levels=(2, 2, 2, 2), epsilon_total=1.0, rng=0)
    bad = data.copy()
    bad.loc[0, "A"] = -1
    with pytest.raises(ValueError, match="codes"):
        lapmech(bad, levels=LEVELS, epsilon_total=1.0, rng=0)
    # the table's shape is the public domain, also where a category never occurs in the data
    wider = lapmech(data, levels=(3, 2, 4, 2), epsilon_total=1.0, rng=0)
    assert wider.info["n_cells"] == 3 * 2 * 4 * 2
    # a mapping column -> size is the same domain as the sequence
    by_name = lapmech(data, levels=dict(zip("ABCD", LEVELS)), epsilon_total=1.0, rng=0)
    by_position = lapmech(data, levels=LEVELS, epsilon_total=1.0, rng=0)
    assert by_name.info["n_cells"] == by_position.info["n_cells"] == 24
    assert set(by_name.cpdag.edges) == set(by_position.cpdag.edges)


@pytest.mark.parametrize("epsilon_total", [0.1, 0.7, 5.0])
def test_run_never_spends_more_than_its_plan(epsilon_total):
    plan = lapmech_module.worst_case(epsilon_total=epsilon_total)
    assert plan.relation.name == lapmech_module.RELATION.name == "add/remove"
    assert plan.epsilon == pytest.approx(epsilon_total) and plan.delta == 0.0
    result = lapmech(_chain_data(1_000, 9), levels=LEVELS, epsilon_total=epsilon_total, rng=1)
    assert result.ledger.relation == plan.relation.name
    assert result.ledger.total("basic").epsilon <= plan.epsilon * (1 + 1e-12)
    assert result.ledger.n_charges <= plan.charges.n_charges
    assert result.info["epsilon_total"] == epsilon_total


def test_a_capped_run_sums_every_marginal_it_needs_in_one_sweep_with_the_same_decisions():
    from dpcd.datasets import load_bnlearn
    from dpcd.discovery.pc import run_pc

    sample = load_bnlearn("asia", 3000, rng=0)
    codes = sample.data.to_numpy()
    names = list(sample.data.columns)
    table = noisy_joint_table(codes, sample.levels, epsilon=0.05, rng=3)  # noise keeps edges: order 3 runs
    direct = NoisyTableDecider(table, 0.01, batch_size=4)
    swept = NoisyTableDecider(table, 0.01, batch_size=5)
    a = run_pc(names, direct, max_order=3)
    b = run_pc(names, swept, max_order=3)
    assert a.skeleton == b.skeleton and direct.n_computed == swept.n_computed
    assert 5 in swept._batched  # the 5-column marginals of order-3 tests came from one sweep
    released = lapmech(sample.data, levels=sample.levels, epsilon_total=0.05, rng=3, max_order=3)
    assert released.skeleton == b.skeleton

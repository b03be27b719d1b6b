"""Private spread bounds (dpcd.privacy.spread) and GCM-PC's two-stage release."""

import math

import numpy as np
import pytest

from dpcd import audit
from dpcd.discovery.gcm_pc import DEFAULT_SPREAD_SHARE, SPREAD_CHARGE, feature_release, gcm_pc, worst_case
from dpcd.privacy.gdp import gdp_mu
from dpcd.privacy.spread import private_spread_box, split_mu, spread_sensitivity


def test_the_sensitivity_is_the_largest_change_over_a_grid_of_record_pairs_and_is_attained():
    grid = np.linspace(-1.0, 1.0, 81)
    x, other = np.meshgrid(grid, grid)
    per_column = (x - other) ** 2 + (x ** 2 - other ** 2) ** 2  # one column's (sum, sum of squares) change
    assert per_column.max() == pytest.approx(4.0)                 # attained at x = 1, x' = -1
    for p in (1, 3, 10):
        assert math.sqrt(p * per_column.max()) == pytest.approx(spread_sensitivity(p))
        rng = np.random.default_rng(p)
        a, b = rng.uniform(-1, 1, (5000, p)), rng.uniform(-1, 1, (5000, p))
        change = np.sqrt(np.sum((a - b) ** 2 + (a ** 2 - b ** 2) ** 2, axis=1))
        assert change.max() <= spread_sensitivity(p) + 1e-12


def test_the_narrowed_box_follows_the_data_when_the_noise_is_small_and_stays_in_the_public_box():
    rng = np.random.default_rng(0)
    box = np.column_stack([rng.normal(0.2, 0.05, 50_000), rng.uniform(-1, 1, 50_000)]).clip(-1, 1)
    mapped, edges = private_spread_box(box, mu=50.0, k=2.0, rng=1)
    assert edges[0] == pytest.approx([0.1, 0.3], abs=0.01)       # mean ± 2 sd of the first column
    assert edges[1] == pytest.approx([-1.0, 1.0], abs=1e-9)      # a column that fills the box keeps it
    assert mapped.min() >= -1.0 and mapped.max() <= 1.0
    tiny = np.zeros((100, 2))                                      # no spread at all: a minimum width is kept
    _, narrow = private_spread_box(tiny, mu=1e6, k=1.5, rng=0)
    assert np.all(narrow[:, 1] - narrow[:, 0] >= 0.1 - 1e-12)


def test_split_mu_composes_back_to_mu():
    first, second = split_mu(0.8, 0.1)
    assert math.hypot(first, second) == pytest.approx(0.8)
    with pytest.raises(ValueError, match="share"):
        split_mu(0.8, 1.0)


def test_gcm_pc_charges_the_spreads_and_the_moments_which_compose_to_the_total():
    rng = np.random.default_rng(3)
    x = rng.normal(0, 0.05, 3000)
    data = np.column_stack([x, 0.8 * x + rng.normal(0, 0.03, 3000), rng.normal(0, 0.05, 3000)])
    result = gcm_pc(data, bounds=[(-1, 1)] * 3, epsilon_total=1.0, rng=0, max_order=1)
    names = [charge.mechanism for charge in result.ledger.entries]
    assert names == [SPREAD_CHARGE, "GCM-PC feature moments"]
    assert result.ledger.total("tight", target_delta=1e-6).epsilon <= 1.0 + 1e-9
    assert result.info["spread_share"] == DEFAULT_SPREAD_SHARE and "spread_box" not in result.info  # noisy
    plan = worst_case(epsilon_total=1.0, delta=1e-6)
    assert [c.mechanism for c in plan.charges.entries] == names
    multipliers = [charge.scale / charge.sensitivity for charge in result.ledger.entries]   # 1 / mu_i each
    assert math.hypot(*(1 / m for m in multipliers)) == pytest.approx(gdp_mu(1.0, 1e-6))
    without = gcm_pc(data, bounds=[(-1, 1)] * 3, epsilon_total=1.0, rng=0, max_order=1, spread_share=0.0)
    assert [c.mechanism for c in without.ledger.entries] == ["GCM-PC feature moments"]
    with pytest.raises(ValueError, match="ledger"):  # the no-noise diagnostic never fills a ledger
        feature_release(np.zeros((10, 2)), epsilon_total=math.inf, delta=1e-6, rng=np.random.default_rng(0),
                        ledger=result.ledger)


def test_in_loose_bounds_the_spread_stage_finds_an_edge_the_public_box_drowns():
    rng = np.random.default_rng(5)
    found = {0.0: 0, DEFAULT_SPREAD_SHARE: 0}
    for seed in range(4):
        x = rng.normal(0, 1, 4000)
        data = np.column_stack([x, 0.7 * x + 0.7 * rng.normal(0, 1, 4000)]) * 0.02   # bounds 50 sd wide
        for share in found:
            result = gcm_pc(data, bounds=[(-1, 1)] * 2, epsilon_total=1.0, rng=seed, spread_share=share)
            found[share] += result.cpdag.number_of_edges() > 0
    assert found[DEFAULT_SPREAD_SHARE] == 4 and found[0.0] <= 1


def test_the_smooth_map_is_one_to_one_and_the_clamp_is_not():
    from dpcd.privacy.spread import spread_map

    column = np.linspace(-1, 1, 2001)[:, None]
    edges = np.array([[-0.2, 0.2]])
    smooth, clamped = spread_map(column, edges), spread_map(column, edges, how="clamp")
    assert np.all(np.diff(smooth[:, 0]) > 0) and np.all(np.abs(smooth) < 1)      # strictly increasing, inside
    assert np.count_nonzero(np.diff(clamped[:, 0]) == 0) > 1000                    # the tails collapse
    assert spread_map(np.zeros((1, 1)), edges)[0, 0] == 0.0 and smooth[1200, 0] == pytest.approx(np.tanh(1.0))
    with pytest.raises(ValueError, match="how"):
        spread_map(column, edges, how="erf")
    for bad in (np.array([[0.2, -0.2]]), np.array([[0.1, 0.1]]), np.array([[-0.2, 0.2], [-0.2, 0.2]])):
        with pytest.raises(ValueError, match="edges"):   # reversed, empty, or one pair too many
            spread_map(column, bad)
    from dpcd.privacy import PrivacyLedger
    from dpcd.privacy.spread import narrow_and_charge

    with pytest.raises(ValueError, match="how"):        # named even when the stage is off
        narrow_and_charge(column, PrivacyLedger("replace"), mu=1.0, share=0.0, k=1.0, delta=1e-6,
                          rng=np.random.default_rng(0), charge="spreads", how="erf")


def test_the_smooth_map_keeps_a_conditional_independence_that_clamping_breaks():
    """X = Z + e, Y = Z + e', X ⫫ Y | Z: in a narrow box the clamped Z hides its tails, and X's and Y's residuals
    share them; the strictly increasing map keeps the null (exact moments, no noise: the maps alone)."""
    from dpcd.ci.gcm import noisy_gcm_test

    rng = np.random.default_rng(11)
    z = rng.normal(0, 1, 40_000)
    data = np.column_stack([z + 0.3 * rng.normal(0, 1, z.size), z + 0.3 * rng.normal(0, 1, z.size), z]) / 6
    p_values = {}
    for how in ("tanh", "clamp"):
        release = feature_release(data, epsilon_total=math.inf, delta=1e-6, rng=np.random.default_rng(0),
                                  spread_map=how, conditioning_degree=5)
        p_values[how] = noisy_gcm_test(release.covariance, release.mean, data.shape[0], 0.0, 0, 1, (2,),
                                       degree=2, conditioning_degree=5, weights=release.weights,
                                       rng=np.random.default_rng(1), n_boot=200)
    assert p_values["clamp"] < 0.01 < p_values["tanh"]


@pytest.mark.parametrize("arguments, name", [({"spread_share": 1.0}, "spread_share"),
                                             ({"spread_share": -0.1}, "spread_share"),
                                             ({"spread_k": 0.0}, "spread_k"),
                                             ({"spread_map": "erf"}, "spread_map"),
                                             ({"spread_map": "erf", "spread_share": 0.0}, "spread_map")])
def test_bad_spread_arguments_are_named(arguments, name):
    with pytest.raises(ValueError, match=name):
        gcm_pc(np.zeros((20, 2)), bounds=[(-1, 1)] * 2, epsilon_total=1.0, rng=0, **arguments)


def test_the_audit_flags_an_uncharged_exact_spread_box_and_not_the_private_one():
    broken = audit.gcm_spread_case(1.0, np.random.default_rng(0), "smoke", broken=True)
    correct = audit.gcm_spread_case(1.0, np.random.default_rng(0), "smoke")
    assert broken.expect_violation and not correct.expect_violation
    assert audit.run_case(broken, n_runs=150, rng=1).violation
    assert not audit.run_case(correct, n_runs=150, rng=1).violation


def test_the_audit_flags_the_spread_box_with_noise_for_half_its_sensitivity_and_not_the_box_itself():
    correct, broken = audit.spread_cases(epsilon=1.0, delta=1e-5, rng=0)
    assert broken.expect_violation and not correct.expect_violation
    assert audit.run_case(broken, n_runs=40_000, rng=1).violation
    assert not audit.run_case(correct, n_runs=40_000, rng=1).violation

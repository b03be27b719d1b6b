"""Tests of dpcd.bivariate.anm: scores, every stated sensitivity by brute force, closed forms, PTR, input checks."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpcd.bivariate import anm
from dpcd.bivariate.anm import dwork_lei_draws, krr_predict
from dpcd_papers import private_anm

unit = st.floats(-1.0, 1.0, allow_nan=False, width=64)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def pairs_with_neighbour(draw, min_m=3, max_m=25):
    """A test set (a, b), a record index k and its replacement (a_k', b_k')."""
    m = draw(st.integers(min_m, max_m))
    a = np.array(draw(st.lists(unit, min_size=m, max_size=m)))
    b = np.array(draw(st.lists(unit, min_size=m, max_size=m)))
    k = draw(st.integers(0, m - 1))
    a2, b2 = a.copy(), b.copy()
    a2[k], b2[k] = draw(unit), draw(unit)
    return a, b, a2, b2


# --------------------------------------------------------------------------- scores


def test_rank_scores_match_scipy_on_untied_data():
    from scipy import stats

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=200), rng.normal(size=200) + 0.3 * np.arange(200) / 200
    assert anm.spearman_score(a, b, rng=1) == pytest.approx(abs(stats.spearmanr(a, b).statistic), abs=1e-12)
    assert anm.kendall_score(a, b, rng=1) == pytest.approx(abs(stats.kendalltau(a, b).statistic), abs=1e-12)


def test_iqr_uses_order_statistics():
    a = np.arange(9.0)  # i1 = 2, i3 = 6
    assert anm.iqr(a) == 4.0
    assert anm.iqr_score(a, 2 * a) == pytest.approx(math.log(4.0) + math.log(8.0))
    assert anm.iqr_score(np.zeros(8), a[:8]) == -math.inf


def test_krr_matches_scikit_learn():
    from sklearn.kernel_ridge import KernelRidge

    rng = np.random.default_rng(1)
    x, y, xt = rng.uniform(-1, 1, 40), rng.uniform(-1, 1, 40), rng.uniform(-1, 1, 7)
    lam, sigma = 0.05, 0.4
    pred, _ = krr_predict(x, y, xt, lam=lam, bandwidth=sigma)
    ref = KernelRidge(alpha=x.size * lam / 2, kernel="rbf", gamma=1 / (2 * sigma**2)).fit(x[:, None], y)
    np.testing.assert_allclose(pred, ref.predict(xt[:, None]), atol=1e-10)


# --------------------------------------------------------------------------- test-set sensitivities


@SETTINGS
@given(pairs_with_neighbour(), st.integers(0, 2**32 - 1))
def test_spearman_sensitivity_holds(data, seed):
    a, b, a2, b2 = data
    change = abs(anm.spearman_score(a, b, rng=seed) - anm.spearman_score(a2, b2, rng=seed))
    assert change <= anm.spearman_sensitivity(a.size) + 1e-12


@SETTINGS
@given(pairs_with_neighbour(), st.integers(0, 2**32 - 1))
def test_kendall_sensitivity_holds(data, seed):
    a, b, a2, b2 = data
    change = abs(anm.kendall_score(a, b, rng=seed) - anm.kendall_score(a2, b2, rng=seed))
    assert change <= anm.kendall_sensitivity(a.size) + 1e-12


@pytest.mark.parametrize("score", ["hsic", "hsic_norm"])
@SETTINGS
@given(data=pairs_with_neighbour(), bw_a=st.floats(0.02, 5.0), bw_b=st.floats(0.02, 5.0))
def test_kernel_score_sensitivities_hold(score, data, bw_a, bw_b):
    """Thm. 3 for HSIC, the dpHSIC Lemma (4(m − 1)/m²) for its norm."""
    a, b, a2, b2 = data
    change = abs(anm.dependence_score(score, a, b, bandwidth_a=bw_a, bandwidth_b=bw_b)
                 - anm.dependence_score(score, a2, b2, bandwidth_a=bw_a, bandwidth_b=bw_b))
    assert change <= anm.score_sensitivity(score, a.size) + 1e-12
    assert anm.score_sensitivity("hsic", a.size) == anm.hsic_test_sensitivity(a.size)
    assert anm.score_sensitivity("hsic_norm", a.size) == pytest.approx(4 * (a.size - 1) / a.size ** 2)


def test_hsic_norm_is_released_by_the_test_set_mechanism_and_helps_the_decision():
    """The extension score: one Laplace release per direction at 4(m − 1)/m², and on an additive-noise pair its
    closed-form probability of the right decision at ε = 1 is far above the paper's HSIC score's."""
    x, y = _anm_data(3, n=1000)
    res = anm.private_anm_test_set(x, y, epsilon=1.0, scores=("hsic_norm",), rng=0)
    [entry] = res.ledger.entries
    assert entry.sensitivity == pytest.approx(anm.score_sensitivity("hsic_norm", res.m))
    assert "hsic" not in anm.SCORES[3:] and "hsic_norm" in anm.EXTENSION_SCORES
    fit = anm.fit_anm(x, y, rng=0, bounds_x=(-1.5, 1.5), bounds_y=(-1.5, 1.5))
    chance = {}
    for score in ("hsic", "hsic_norm"):
        s_xy, s_yx = anm.fit_scores(fit, score, np.random.default_rng(0))
        chance[score] = float(anm.prob_correct_laplace(s_yx - s_xy, anm.score_sensitivity(score, fit.m)))
    assert chance["hsic_norm"] > 0.9 and chance["hsic_norm"] > chance["hsic"] + 0.2
    with pytest.raises(ValueError, match="scores"):  # only test-set privacy is proven for it
        anm.private_anm_training_set(x, y, epsilon=1.0, scores=("hsic_norm",), lam=1.0, bandwidth=0.5,
                                     bounds_x=(-1.5, 1.5), bounds_y=(-1.5, 1.5), rng=0)
    rows = private_anm.test_set_cell("pair1", False, [1.0], n_draws=10, max_samples=200, scores=("hsic_norm",),
                                     rng=0)
    assert {row["score"] for row in rows} == {"hsic_norm"}


def test_kendall_bound_is_attained():
    # Kendall: points on a decreasing line, one point moved to be concordant with all.
    m = 12
    a, b = np.arange(m, dtype=float), -np.arange(m, dtype=float)
    a2, b2 = a.copy(), b.copy()
    a2[0], b2[0] = -1.0, -1e3
    change = abs(anm.kendall_score(a, b, rng=0) - anm.kendall_score(a2, b2, rng=0))
    assert change == pytest.approx(2 * (m - 1) / (m * (m - 1) / 2))


# --------------------------------------------------------------------------- training-set sensitivities


@st.composite
def training_set_and_neighbour(draw):
    n = draw(st.integers(2, 15))
    x = np.array(draw(st.lists(unit, min_size=n, max_size=n)))
    y = np.array(draw(st.lists(unit, min_size=n, max_size=n)))
    k = draw(st.integers(0, n - 1))
    x2, y2 = x.copy(), y.copy()
    x2[k], y2[k] = draw(unit), draw(unit)
    xt = np.array(draw(st.lists(unit, min_size=6, max_size=6)))
    return x, y, x2, y2, xt


@SETTINGS
@given(training_set_and_neighbour(), st.floats(0.01, 1.0), st.floats(0.05, 3.0))
def test_krr_residual_bound_holds(data, lam, bandwidth):
    x, y, x2, y2, xt = data
    pred, _ = krr_predict(x, y, xt, lam=lam, bandwidth=bandwidth)
    pred2, _ = krr_predict(x2, y2, xt, lam=lam, bandwidth=bandwidth)
    change = np.max(np.abs(pred - pred2))  # r' = y' - f(x'): y' is the same test data
    assert change <= anm.krr_residual_sensitivity(x.size, lam) + 1e-10
    assert change <= anm.krr_residual_sensitivity(x.size, lam, bound="stability") + 1e-10


def test_krr_residual_bound_adversarial_search():
    """Worst single replacement over a grid of extreme records: still within Thm. 5."""
    rng = np.random.default_rng(3)
    worst = 0.0
    for lam in (0.01, 0.1, 1.0):
        bound = anm.krr_residual_sensitivity(8, lam)
        for _ in range(10):
            x, y = rng.uniform(-1, 1, 8), rng.choice([-1.0, 1.0], 8)
            xt = np.linspace(-1, 1, 21)
            pred, _ = krr_predict(x, y, xt, lam=lam, bandwidth=0.3)
            for nx in (-1.0, 0.0, 1.0):
                for ny in (-1.0, 1.0):
                    x2, y2 = x.copy(), y.copy()
                    x2[0], y2[0] = nx, ny
                    pred2, _ = krr_predict(x2, y2, xt, lam=lam, bandwidth=0.3)
                    worst = max(worst, np.max(np.abs(pred - pred2)) / bound)
    assert 0 < worst <= 1


@SETTINGS
@given(training_set_and_neighbour(), st.floats(0.01, 1.0), st.floats(0.1, 2.0))
def test_hsic_training_sensitivity_holds(data, lam, bandwidth):
    x, y, x2, y2, xt = data
    yt = np.linspace(-1, 1, xt.size)
    scores = []
    for xs, ys in ((x, y), (x2, y2)):
        pred, _ = krr_predict(xs, ys, xt, lam=lam, bandwidth=bandwidth)
        scores.append(anm.hsic_score(xt, yt - pred, bandwidth_a=bandwidth, bandwidth_b=bandwidth))
    change = abs(scores[0] - scores[1])
    lip = anm.gaussian_kernel_lipschitz(bandwidth)
    for bound in ("paper", "direct"):
        assert change <= anm.hsic_training_sensitivity(xt.size, x.size, lam, lipschitz=lip, bound=bound) + 1e-12


@SETTINGS
@given(training_set_and_neighbour(), st.floats(0.05, 1.0))
def test_rank_distance_to_instability_has_sensitivity_one_and_protects_ranks(data, lam):
    x, y, x2, y2, xt = data
    yt = np.linspace(-1, 1, xt.size)
    n = 2000  # the bound's n is public; larger n gives non-zero distances on these small sets
    res1 = yt - krr_predict(x, y, xt, lam=lam, bandwidth=0.5)[0]
    res2 = yt - krr_predict(x2, y2, xt, lam=lam, bandwidth=0.5)[0]
    # a change of one of n records moves residuals by <= 8/(n lam^1.5): emulate it by scaling the move
    scale = anm.krr_residual_sensitivity(n, lam) / max(np.max(np.abs(res1 - res2)), 1e-300)
    res2 = res1 + min(scale, 1.0) * (res2 - res1)
    d1 = anm.rank_distance_to_instability(res1, n=n, lam=lam)
    d2 = anm.rank_distance_to_instability(res2, n=n, lam=lam)
    assert abs(d1 - d2) <= 1
    if d1 >= 1:
        assert np.array_equal(np.argsort(res1), np.argsort(res2))


def test_training_bounds_validate_lambda():
    with pytest.raises(ValueError, match="lam"):
        anm.krr_residual_sensitivity(10, 2.0)
    assert anm.krr_residual_sensitivity(10, 2.0, bound="stability") > 0
    with pytest.raises(ValueError, match="bound"):
        anm.hsic_training_sensitivity(10, 10, 0.5, lipschitz=1.0, bound="nope")


# --------------------------------------------------------------------------- Dwork-Lei IQR


@SETTINGS
@given(st.integers(4, 40).flatmap(lambda m: st.tuples(
    st.lists(st.floats(-3, 3, allow_nan=False), min_size=m, max_size=m),
    st.integers(0, m - 1), st.floats(-50, 50, allow_nan=False))))
def test_iqr_stability_sensitivity_and_bins(data):
    values, k, new = data
    a = np.array(values)
    a2 = a.copy()
    a2[k] = new
    s1, s2 = anm.iqr_stability(a), anm.iqr_stability(a2)
    assert abs(s1.a1 - s2.a1) <= 1 and abs(s1.a2 - s2.a2) <= 1
    for distance, (low, high) in ((s1.a1, s1.bins[0]), (s1.a2, s1.bins[1])):
        if distance >= 2:  # every neighbour keeps its IQR inside the bin
            assert low <= s2.iqr < high


def test_dwork_lei_bottom_rate_on_unstable_data():
    epsilon, delta, draws = 0.5, 0.5, 40_000
    a = np.r_[np.zeros(30), 1.0, 2.0]  # IQR = 0: not in any bin, A_1 = A_2 = 0
    stab = anm.iqr_stability(a)
    assert (stab.iqr, stab.a1, stab.a2) == (0.0, 0, 0)
    # an IQR of 0 is never released; check the test itself on A = 0 with a finite log-IQR
    _, released = dwork_lei_draws(np.array([0.0]), np.array([[0.0, 0.0]]), epsilon=epsilon, delta=delta,
                                   rng=np.random.default_rng(0), size=draws)
    p_pass = 0.5 * delta * math.exp(-epsilon)  # P(Lap(1/eps) > 1 + ln(1/delta)/eps)
    expected_bottom = (1 - p_pass) ** 2
    rate = 1 - released.mean()
    assert abs(rate - expected_bottom) <= 4 * math.sqrt(expected_bottom * (1 - expected_bottom) / draws)
    assert all(anm.dwork_lei_log_iqr(a, epsilon=epsilon, delta=delta, rng=s) is None for s in range(50))


def test_dwork_lei_releases_on_stable_data():
    rng = np.random.default_rng(5)
    a = rng.uniform(0, 1, 4000)
    stab = anm.iqr_stability(a)
    assert min(stab.a1, stab.a2) > 100
    out = [anm.dwork_lei_log_iqr(a, epsilon=1.0, delta=1e-6, rng=s) for s in range(200)]
    assert all(v is not None for v in out)
    # released values are log IQR + Lap(1): mean within 4 standard errors (sd of Lap(1) = sqrt 2)
    assert abs(np.mean(out) - math.log(stab.iqr)) <= 4 * math.sqrt(2 / 200)


def test_ptr_release_bottom_rate():
    epsilon, delta, draws = 1.0, 0.5, 20_000
    rng = np.random.default_rng(2)
    out = np.array([anm.ptr_release(1.0, distance=0, epsilon=epsilon, delta=delta, rng=rng) is None
                    for _ in range(draws)])
    expected = 1 - 0.5 * delta  # P(Lap(1/eps) <= ln(1/delta)/eps) = 1 - delta/2
    assert abs(out.mean() - expected) <= 4 * math.sqrt(expected * (1 - expected) / draws)
    assert all(anm.ptr_release(0.3, distance=60, epsilon=1.0, delta=1e-6, rng=s) == 0.3 for s in range(100))


def test_training_set_rank_ptr_bottom_on_tied_residuals():
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, 200)
    y = np.round(x, 1)  # many tied test residuals: gamma = 0, distance 0
    res = anm.private_anm_training_set(x, y, epsilon=1.0, delta=1e-6, scores=("spearman",), lam=0.5,
                                       bandwidth=0.5, bounds_x=(-1.0, 1.0), bounds_y=(-1.0, 1.0), rng=0)
    assert res.scores["spearman"] == (None, None)
    assert res.decisions["spearman"] == "bottom"


# --------------------------------------------------------------------------- closed forms


@pytest.mark.parametrize("gamma,sigma", [(0.0, 1.0), (0.5, 1.0), (2.0, 0.7), (-0.3, 0.2)])
def test_theorem2_matches_monte_carlo(gamma, sigma):
    rng = np.random.default_rng(7)
    draws = 400_000
    p_xy = rng.laplace(0, sigma, draws)
    p_yx = gamma + rng.laplace(0, sigma, draws)
    estimate = np.mean(p_xy < p_yx)
    p = anm.prob_correct_laplace(gamma, sigma)
    assert abs(estimate - p) <= 4 * math.sqrt(p * (1 - p) / draws)


@pytest.mark.parametrize("gamma,sigma", [(0.0, 1.0), (1.0, 1.0), (3.0, 0.5), (-1.0, 2.0)])
def test_theorem4_matches_monte_carlo(gamma, sigma):
    rng = np.random.default_rng(8)
    draws = 400_000
    noise = rng.laplace(0, sigma, (draws, 4))
    estimate = np.mean(noise[:, 0] + noise[:, 1] < gamma + noise[:, 2] + noise[:, 3])
    p = anm.prob_correct_log_iqr(gamma, sigma)
    assert abs(estimate - p) <= 4 * math.sqrt(p * (1 - p) / draws)


def test_closed_forms_limits_and_vectorisation():
    assert anm.prob_correct_laplace(0.1, 0.0) == 1.0
    assert anm.prob_correct_laplace(0.0, 0.0) == 0.5
    assert anm.prob_correct_log_iqr(-math.inf, 1.0) == 0.0
    out = anm.prob_correct_laplace(np.array([0.0, 1.0, 100.0]), 1.0)
    assert out.shape == (3,) and out[0] == 0.5 and np.all(np.diff(out) > 0) and out[2] == pytest.approx(1.0)


# --------------------------------------------------------------------------- the ANM end to end


def _anm_data(seed, n=400):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    return x, x**3 + 0.2 * rng.uniform(-1, 1, n)


def test_anm_finds_the_direction_of_an_additive_noise_model():
    right = sum(anm.anm(*_anm_data(seed), scores="hsic", rng=seed).decisions["hsic"] == "x->y"
                for seed in range(6))
    assert right >= 5


def test_same_seed_same_result_and_huge_epsilon_recovers_non_private():
    x, y = _anm_data(11)
    first = anm.private_anm_test_set(x, y, epsilon=1.0, rng=3)
    again = anm.private_anm_test_set(x, y, epsilon=1.0, rng=3)
    assert first.scores == again.scores
    plain = anm.anm(x, y, rng=3)
    huge = anm.private_anm_test_set(x, y, epsilon=1e12, delta=1e-6, rng=3)
    for name in ("spearman", "kendall", "hsic"):
        assert huge.decisions[name] == plain.decisions[name]
        assert huge.scores[name] == pytest.approx(plain.scores[name], abs=1e-9)


def test_ledgers_compose_as_stated():
    x, y = _anm_data(12, n=200)
    res = anm.private_anm_test_set(x, y, epsilon=0.5, delta=1e-6, rng=0)
    total = res.ledger.total("basic")
    assert res.ledger.relation == "replace"
    assert total.epsilon == pytest.approx(3 * 2 * 0.5 + 4 * 3 * 0.5)
    assert total.delta == pytest.approx(4e-6)
    train = anm.private_anm_training_set(x, y, epsilon=0.5, lam=0.5, bandwidth=0.5, bounds_x=(-1.0, 1.0),
                                         bounds_y=(-1.5, 1.5), rng=0)
    assert train.ledger.total("basic").epsilon == pytest.approx(1.0)
    assert train.privacy == "training" and train.n == 100 and train.m == 100


def test_iqr_epsilon_for_target():
    eps = anm.iqr_epsilon_for_target(0.9, 1e-6)
    assert 3 * eps == pytest.approx(0.9 / (2 * math.sqrt(6 * math.log(1e6))))


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("x,y,match", [
    (np.arange(10.0), np.arange(9.0), "same length"),
    (np.ones(10), np.arange(10.0), "x is constant"),
    (np.arange(10.0), np.r_[np.arange(9.0), np.nan], "NaN"),
    (np.arange(3.0), np.arange(3.0), "at least 4"),
    (np.arange(12.0).reshape(3, 4), np.arange(12.0).reshape(3, 4), "1-D"),
])
def test_bad_pairs_are_rejected(x, y, match):
    with pytest.raises(ValueError, match=match):
        anm.anm(x, y, rng=0)


def test_bad_parameters_are_rejected():
    x, y = _anm_data(1, n=50)
    with pytest.raises(ValueError, match="epsilon"):
        anm.private_anm_test_set(x, y, epsilon=0, rng=0)
    with pytest.raises(ValueError, match="delta"):
        anm.private_anm_test_set(x, y, epsilon=1, delta=1.5, rng=0)
    with pytest.raises(ValueError, match="scores"):
        anm.anm(x, y, scores=("pearson",), rng=0)
    with pytest.raises(ValueError, match="scores"):
        anm.private_anm_training_set(x, y, epsilon=1, scores="iqr", lam=0.5, bandwidth=0.5, bounds_x=(-1, 1),
                                     bounds_y=(-1.5, 1.5), rng=0)
    with pytest.raises(ValueError, match="train_fraction"):
        anm.anm(x, y, train_fraction=0.01, rng=0)
    with pytest.raises(TypeError, match="rng"):
        anm.anm(x, y, rng=None)
    with pytest.raises(ValueError, match="lam"):
        anm.anm(x, y, lam=-1, rng=0)


def test_pair_selection_rule():
    import pandas as pd

    table = pd.DataFrame({"pair_id": ["pair3", "pair1", "pair2", "pair4"], "n": [10, 50, 50, 20],
                          "direction": ["x->y", "x->y", "x->y", "unknown"]})
    assert private_anm.select_largest_pairs(table, 3) == ["pair1", "pair2", "pair3"]
    flips = private_anm.pair_orientations(["a", "b", "c"], rng=0)
    assert flips == private_anm.pair_orientations(["a", "b", "c"], rng=0)


# --------------------------------------------------------------------------- a fixed, public split


def test_default_split_is_unchanged():
    """Without ``split`` the split and the noise come from ``rng`` exactly as before the argument existed:
    with the scaling of that version (the range of all rows, passed here as bounds) the scores are the
    values recorded from it; and the default equals an explicit split drawn from the same stream."""
    x, y = _anm_data(12, n=200)
    old_scaling = anm.private_anm_test_set(x, y, epsilon=0.5, rng=5, bounds_x=(x.min(), x.max()),
                                           bounds_y=(y.min(), y.max()))
    recorded = {"spearman": (0.13702704098881538, 0.09761635629945997),
                "kendall": (-0.06283369084219156, 0.406068463572407),
                "hsic": (0.20888519880835354, 0.7839412168132524)}
    for name, values in recorded.items():
        assert old_scaling.scores[name] == pytest.approx(values, abs=1e-12)
    assert old_scaling.scores["iqr"] == (None, None)
    res = anm.private_anm_test_set(x, y, epsilon=0.5, rng=5)
    generator = np.random.default_rng(5)
    split = anm.split_indices(x.size, rng=generator)
    explicit = anm.private_anm_test_set(x, y, epsilon=0.5, rng=generator, split=split)
    assert explicit.scores == res.scores
    # without public bounds the scale is the training half's range (public in test-set privacy), not all rows'
    train = split[0]
    by_training = anm.private_anm_test_set(x, y, epsilon=0.5, rng=5, bounds_x=(x[train].min(), x[train].max()),
                                           bounds_y=(y[train].min(), y[train].max()))
    assert by_training.scores == res.scores
    assert y.min() < y[train].min()  # a test value lies outside the training range on this data ...
    assert res.scores["spearman"] != pytest.approx(old_scaling.scores["spearman"], abs=1e-6)  # ... so they differ


def test_test_set_values_outside_the_training_range_are_clipped():
    """Test-set privacy: a test record beyond the training half's range is clipped to it, so moving it further
    out changes nothing; the scale never depends on the (private) test half."""
    x, y = _anm_data(12, n=200)
    train, test = anm.split_indices(x.size, rng=np.random.default_rng(5))
    k = test[np.argmin(y[test])]
    assert y[k] < y[train].min()
    far = y.copy()
    far[k] = -50.0
    first = anm.private_anm_test_set(x, y, epsilon=0.5, rng=5)
    second = anm.private_anm_test_set(x, far, epsilon=0.5, rng=5)
    assert first.scores == second.scores
    # a constant test half never stops the run: only public quantities decide whether it can run
    flat = x.copy()
    flat[test] = 0.25
    anm.private_anm_test_set(flat, y, epsilon=0.5, rng=5)


def test_given_split_fixes_the_training_half():
    x, y = _anm_data(13, n=60)
    train, test = np.arange(0, 60, 3), np.setdiff1d(np.arange(60), np.arange(0, 60, 3))
    fit = anm.fit_anm(x, y, rng=0, split=(train, test))
    np.testing.assert_array_equal(fit.train_index, train)
    np.testing.assert_array_equal(fit.test_index, test)
    assert (fit.n, fit.m) == (20, 40)
    xs, ys = anm.scale_to_unit(x), anm.scale_to_unit(y)
    np.testing.assert_array_equal(fit.x_test, xs[test])
    np.testing.assert_array_equal(fit.y_test, ys[test])
    # the split does not depend on rng, and changing a test row leaves everything learnt on the
    # training half (bandwidths, and thus the regressions) unchanged
    assert anm.fit_anm(x, y, rng=1, split=(train, test)).bandwidths == fit.bandwidths
    x2 = x.copy()
    x2[test[0]] = 0.1234
    other = anm.fit_anm(x2, y, rng=0, split=(train, test), bounds_x=(x.min(), x.max()))
    assert other.bandwidths == fit.bandwidths
    res = anm.private_anm_test_set(x, y, epsilon=1.0, rng=0, split=(list(train), list(test)),
                                   scores=("spearman",))
    assert (res.n, res.m) == (20, 40)
    plain = anm.anm(x, y, scores="hsic", rng=0, split=(train, test))
    np.testing.assert_array_equal(plain.fit.train_index, train)


@pytest.mark.parametrize("split,error,match", [
    ((np.arange(5),), TypeError, "pair"),
    ((np.arange(5), np.arange(5, 10.0)), TypeError, "integer"),
    ((np.arange(1), np.arange(5, 10)), ValueError, "at least 2"),
    ((np.arange(5), np.arange(5, 11)), ValueError, r"\[0, 10\)"),
    ((np.array([0, 0, 1]), np.arange(5, 10)), ValueError, "repeated"),
    ((np.arange(6), np.arange(5, 10)), ValueError, "disjoint"),
])
def test_bad_split_is_rejected(split, error, match):
    x, y = _anm_data(1, n=10)
    with pytest.raises(error, match=match):
        anm.private_anm_test_set(x, y, epsilon=1.0, rng=0, split=split)


# --------------------------------------------------------------------------- public bounds in training-set privacy


def _training_row(size: int, seed: int) -> int:
    """A training row of the split ``private_anm_training_set`` draws first from ``rng=seed``."""
    train, _ = anm.split_indices(size, rng=np.random.default_rng(seed))
    return int(train[3])


def test_training_set_needs_public_bounds():
    x, y = _anm_data(2, n=60)
    with pytest.raises(TypeError, match="bounds_x"):
        anm.private_anm_training_set(x, y, epsilon=1.0, lam=0.5, bandwidth=0.5, bounds_x=None, bounds_y=(-2, 2),
                                     rng=0)
    with pytest.raises(TypeError, match="bounds_y"):
        anm.private_anm_training_set(x, y, epsilon=1.0, lam=0.5, bandwidth=0.5, bounds_x=(-1, 1), bounds_y=None,
                                     rng=0)
    with pytest.raises(TypeError):
        anm.private_anm_training_set(x, y, epsilon=1.0, lam=0.5, bandwidth=0.5, rng=0)  # no default
    with pytest.raises(ValueError, match="bounds"):
        anm.private_anm_training_set(x, y, epsilon=1.0, lam=0.5, bandwidth=0.5, bounds_x=(1, 1), bounds_y=(-2, 2),
                                     rng=0)


@pytest.mark.parametrize("scores, seed, delta", [(("hsic",), 7, 1e-6),
                                                 # a large delta so that propose-test-release does release here
                                                 (("spearman", "kendall"), 10, 0.9)])
def test_training_set_scaling_does_not_depend_on_the_data(scores, seed, delta):
    """With public bounds, two data sets that differ in one training record beyond the bounds (clamped to the
    same value) give the identical release for the same rng; a change inside the bounds does not."""
    x, y = _anm_data(3, n=300)
    bounds = dict(bounds_x=(-1.0, 1.0), bounds_y=(-1.5, 1.5))
    k = _training_row(x.size, seed)
    releases = []
    for value in (1e3, 1e6, 1.0):  # two values far outside the bounds, and the bound itself
        moved = x.copy()
        moved[k] = value
        releases.append(anm.private_anm_training_set(moved, y, epsilon=1.0, delta=delta, scores=scores, lam=0.5,
                                                     bandwidth=0.5, rng=seed, **bounds))
    assert any(v is not None for pair in releases[0].scores.values() for v in pair)  # something is released
    assert releases[0].scores == releases[1].scores == releases[2].scores
    assert releases[0].decisions == releases[1].decisions
    assert releases[0].ledger.total("basic") == releases[1].ledger.total("basic")
    if scores == ("hsic",):
        inside = x.copy()
        inside[k] = -0.3
        other = anm.private_anm_training_set(inside, y, epsilon=1.0, delta=delta, scores=scores, lam=0.5,
                                             bandwidth=0.5, rng=seed, **bounds)
        assert other.scores != releases[0].scores  # the record is read, through its clamped value


def test_fit_with_public_bounds_and_split_scales_the_test_half_independently_of_training_values():
    x, y = _anm_data(4, n=80)
    train, test = np.arange(0, 80, 2), np.arange(1, 80, 2)
    bounds = dict(bounds_x=(-1.0, 1.0), bounds_y=(-1.5, 1.5))
    fits = []
    for value in (None, 1e6, -1e6, 0.7):
        moved_x, moved_y = x.copy(), y.copy()
        if value is not None:
            moved_x[train[5]], moved_y[train[9]] = value, -value
        fits.append(anm.fit_anm(moved_x, moved_y, lam=0.5, bandwidth=0.5, rng=0, split=(train, test),
                                require_variation=False, **bounds))
    for fit in fits[1:]:
        np.testing.assert_array_equal(fit.x_test, fits[0].x_test)
        np.testing.assert_array_equal(fit.y_test, fits[0].y_test)
    np.testing.assert_array_equal(fits[0].x_test, np.clip(x[test], -1, 1))
    np.testing.assert_allclose(fits[0].y_test, np.clip(y[test] / 1.5, -1, 1))
    # a training record beyond the bounds is clamped: the whole fit equals the fit with the bound itself
    at_bound_x, at_bound_y = x.copy(), y.copy()
    at_bound_x[train[5]], at_bound_y[train[9]] = 1.0, -1.5
    clamped = anm.fit_anm(at_bound_x, at_bound_y, lam=0.5, bandwidth=0.5, rng=0, split=(train, test), **bounds)
    np.testing.assert_array_equal(clamped.residual_y, fits[1].residual_y)
    np.testing.assert_array_equal(clamped.residual_x, fits[1].residual_x)


def test_constant_columns_stop_only_the_non_private_paths():
    x, y = np.ones(40), np.linspace(-1, 1, 40)
    with pytest.raises(ValueError, match="constant"):
        anm.as_pair(x, y)
    with pytest.raises(ValueError, match="constant"):
        anm.fit_anm(x, y, rng=0, bounds_x=(0, 2))
    a, b = anm.as_pair(x, y, require_variation=False)
    assert a.shape == b.shape == (40,)
    fit = anm.fit_anm(x, y, rng=0, bounds_x=(0, 2), bounds_y=(-1, 1), require_variation=False, lam=0.5,
                      bandwidth=0.5)
    np.testing.assert_array_equal(fit.x_test, 0.0)
    train = anm.private_anm_training_set(x, y, epsilon=1.0, lam=0.5, bandwidth=0.5, bounds_x=(0, 2),
                                         bounds_y=(-1, 1), rng=0)
    assert train.privacy == "training" and train.ledger.n_charges == 2
    test = anm.private_anm_test_set(x, y, epsilon=1.0, rng=0, bounds_x=(0, 2), bounds_y=(-1, 1))
    assert test.privacy == "test"

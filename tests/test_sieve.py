"""Tests of dpcd.privacy.sieve (sieve-and-examine, Wang et al. 2020 Alg. 1).

Monte Carlo checks use fixed seeds and allow 5 binomial standard errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcd.privacy import PrivacyLedger, subsampled_epsilon
from dpcd.privacy.sieve import (
    SieveAndExamine,
    optimal_subsample_size,
    sieve_epsilon,
    type_one_bound,
    type_two_bound,
)

KW = dict(n=100, threshold=0.5, threshold_tweak=0.02, epsilon=1.0, sensitivity=0.05,
          subsample_sensitivity=0.1, subsample_size=50)


@pytest.mark.parametrize("epsilon, n, m", [(0.1, 1000, 50), (1.0, 100_000, 5000), (4.0, 10, 3), (30.0, 100, 99)])
def test_sieve_epsilon_closed_form_and_amplification(epsilon, n, m):
    closed = math.log((n / m) * (math.exp(epsilon / 2) - 1) + 1)
    assert sieve_epsilon(epsilon, n, m) == pytest.approx(closed, rel=1e-12)
    # amplification by sub-sampling m of n brings it back to epsilon / 2
    assert subsampled_epsilon(closed, m / n) == pytest.approx(epsilon / 2, rel=1e-10)
    assert sieve_epsilon(epsilon, n, n) == pytest.approx(epsilon / 2)


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 3.0, 10.0, 50.0])
def test_optimal_subsample_size_minimises_the_noise_level(epsilon):
    n = 100_000
    m = optimal_subsample_size(n, epsilon)
    grid = np.arange(n // 20, n + 1, 10)

    def noise(size):
        return np.sqrt(n / size) / np.log1p((n / size) * math.expm1(epsilon / 2))

    assert n // 20 <= m <= n
    assert noise(m) <= noise(grid).min() * (1 + 1e-4)


def test_optimal_subsample_size_limits():
    assert optimal_subsample_size(100_000, 100.0) == 100_000  # large epsilon: no sub-sampling
    assert optimal_subsample_size(100_000, 0.01) == 5000  # small epsilon: clipped at n/20


def test_ledger_charges_one_examine_per_examined_query():
    rng = np.random.default_rng(3)
    ledger = PrivacyLedger(relation="replace", public=("n",))
    mech = SieveAndExamine(rng=rng, ledger=ledger, **KW)
    values = rng.uniform(0.0, 1.0, 150)
    for v in values:
        mech.query(lambda rows: v, lambda: v)
    examined = sum(e.count for e in ledger.entries if e.mechanism == "examine")
    sieves = sum(e.count for e in ledger.entries if e.mechanism == "sieve")
    assert examined == sieves == mech.n_examined > 0
    assert mech.n_sieved == 150
    opened = mech._open_queries > 0
    mech.finish()
    mech.finish()  # idempotent
    assert ledger.n_charges == 2 * mech.n_examined + int(opened)
    assert ledger.total("basic").epsilon == pytest.approx(mech.n_examined * 1.0 + 0.5 * opened)
    for method in ("advanced", "tight"):
        total = ledger.total(method, delta_prime=1e-3, target_delta=1e-3)
        assert total.epsilon <= ledger.total("basic").epsilon + 1e-12
        assert total.delta <= 1e-3 + 1e-15


def test_every_threshold_redraw_is_laplace():
    """Queries far above the threshold pass at once; each round's noisy threshold is T - t + Lap(2Δ'/ε')."""
    mech = SieveAndExamine(rng=7, **KW)
    draws = []
    for _ in range(3000):
        draws.append(mech._svt._noisy_threshold)
        mech.query(lambda rows: 1e6, lambda: 1e6)
    draws = np.asarray(draws)
    scale = 2 * KW["subsample_sensitivity"] / mech.sieve_epsilon
    assert mech.sieve_threshold_scale == pytest.approx(scale)
    assert mech.sieve_query_scale == pytest.approx(2 * scale)
    ks = stats.kstest(draws, stats.laplace(loc=KW["threshold"] - KW["threshold_tweak"], scale=scale).cdf)
    assert ks.pvalue > 1e-3
    ks_gauss = stats.kstest(draws, stats.norm(loc=draws.mean(), scale=draws.std()).cdf)
    assert ks_gauss.pvalue < 1e-3  # distinguishable from a Gaussian redraw


def _one_off(value, trials, seed):
    rng = np.random.default_rng(seed)
    sieve_miss = output = 0
    for _ in range(trials):
        mech = SieveAndExamine(rng=rng, **KW)
        if mech.sieve(value):
            output += mech.examine(value)
        else:
            sieve_miss += 1
    return sieve_miss / trials, output / trials


def _se(p, trials):
    return math.sqrt(max(p * (1 - p), 1e-4) / trials)


@pytest.mark.parametrize("gap", [0.05, 0.15])
def test_type_one_error_under_theorem_2(gap):
    trials = 4000
    miss, output = _one_off(KW["threshold"] + gap, trials, seed=11)
    eps_sieve = sieve_epsilon(KW["epsilon"], KW["n"], KW["subsample_size"])
    bound = type_one_bound(gap, threshold_tweak=KW["threshold_tweak"], sieve_epsilon=eps_sieve,
                           subsample_sensitivity=KW["subsample_sensitivity"])
    assert miss <= bound + 5 * _se(bound, trials)  # Thm 4: the sieve step
    examine_miss = 0.5 * math.exp(-gap * KW["epsilon"] / (2 * KW["sensitivity"]))
    assert 1 - output <= bound + examine_miss + 5 * _se(bound, trials)


@pytest.mark.parametrize("gap", [0.05, 0.15])
def test_type_two_error_under_corrected_theorem_2(gap):
    trials = 4000
    _, output = _one_off(KW["threshold"] - gap, trials, seed=12)
    eps_sieve = sieve_epsilon(KW["epsilon"], KW["n"], KW["subsample_size"])
    bound = type_two_bound(gap, threshold_tweak=KW["threshold_tweak"], epsilon=KW["epsilon"],
                           sieve_epsilon=eps_sieve, sensitivity=KW["sensitivity"],
                           subsample_sensitivity=KW["subsample_sensitivity"])
    assert output <= bound + 5 * _se(bound, trials)


def test_paper_type_two_bound_is_too_small():
    """Thm 5's examine factor exp(-2εa/Δ) is below the Laplace(2Δ/ε) tail it stands for."""
    trials, gap = 4000, 0.05
    _, output = _one_off(KW["threshold"] - gap, trials, seed=13)
    eps_sieve = sieve_epsilon(KW["epsilon"], KW["n"], KW["subsample_size"])
    x = eps_sieve * (gap - KW["threshold_tweak"]) / KW["subsample_sensitivity"]
    paper = (math.exp(-x / 6) - 0.25 * math.exp(-x / 3)) * math.exp(-2 * KW["epsilon"] * gap / KW["sensitivity"])
    assert output > paper + 5 * _se(output, trials)


def test_protocol_and_bad_input():
    mech = SieveAndExamine(rng=0, **KW)
    with pytest.raises(RuntimeError, match="examine"):
        mech.examine(0.0)
    assert mech.sieve(1e6)
    with pytest.raises(RuntimeError, match="examine"):
        mech.sieve(0.0)
    with pytest.raises(ValueError, match="subsample_size"):
        SieveAndExamine(rng=0, **{**KW, "subsample_size": 101})
    with pytest.raises(ValueError, match="epsilon"):
        SieveAndExamine(rng=0, **{**KW, "epsilon": 0.0})
    with pytest.raises(ValueError, match="replace"):
        SieveAndExamine(rng=0, ledger=PrivacyLedger(), **KW)
    with pytest.raises(ValueError, match="gap"):
        type_two_bound(0.01, threshold_tweak=0.02, epsilon=1, sieve_epsilon=1, sensitivity=1,
                       subsample_sensitivity=1)

"""CURATE, NOLEAKS and score-based CURATE: run times on 100 000 rows (no peer implementation to compare with)."""

import pytest

from dpcd.datasets import load_bnlearn
from dpcd.discovery import pc
from dpcd.discovery.curate import curate, optimise_budgets
from dpcd.discovery.curate_sb import curate_sb
from dpcd.discovery.noleaks import noleaks
from dpcd.discovery.notears import encode_ordinal


@pytest.mark.benchmark
def test_curate_against_nonprivate_pc(report, best_of):
    for name in ("asia", "sachs"):
        ds = load_bnlearn(name, 100_000, rng=0)
        data, levels = ds.data, ds.levels
        ref, t_pc = best_of(lambda: pc(data, ci_test="kendall", alpha=0.05), repeat=3)
        res, t_cur = best_of(lambda: curate(data, levels=levels, epsilon_total=1.0, rng=0), repeat=3)
        report(f"CURATE {name} n=100k eps_total=1", curate_s=t_cur, pc_kendall_s=t_pc, ratio=t_cur / t_pc,
               curate_tests=res.n_tests, pc_tests=ref.n_tests)


@pytest.mark.benchmark
def test_opt_solve_time(report, best_of):
    for d in (5, 11, 20):
        res, t = best_of(lambda: optimise_budgets(1.0, d * (d - 1) // 2, d, 0, sensitivity=0.02), repeat=5)
        report(f"OPT d={d} ({d - 1} variables)", seconds=t, method=res.method)


@pytest.mark.benchmark
def test_score_based_runs(report, best_of):
    ds = load_bnlearn("asia", 100_000, rng=0)
    X, names = encode_ordinal(ds.data.to_numpy(), ds.levels), list(ds.data.columns)
    r1, t_nl = best_of(lambda: noleaks(X, epsilon_total=1.0, delta=1e-6, rng=0, node_names=names), repeat=1)
    r2, t_sb = best_of(lambda: curate_sb(X, epsilon_total=1.0, delta=1e-6, rng=0, node_names=names), repeat=1)
    report("NOLEAKS vs score-based CURATE asia n=100k eps_total=1", noleaks_s=t_nl, curate_sb_s=t_sb,
           noleaks_evals=r1.info["evaluations"], curate_sb_evals=r2.info["evaluations"],
           ms_per_eval_noleaks=1e3 * t_nl / max(r1.info["evaluations"], 1),
           ms_per_eval_curate_sb=1e3 * t_sb / max(r2.info["evaluations"], 1))


@pytest.mark.benchmark
def test_clipped_gradient_fast_path(report, best_of, monkeypatch):
    """The hot spot of the full curate profile: NOLEAKS/CURATE-SB gradients on child at n = 100 000 (d = 20).

    Before: ``method="tensor"`` on all 100 000 rows (the original code, which compressed to distinct rows only
    when they were fewer than n/2; child has 59 607). After: the default on the distinct rows with their counts.
    W from small (no entry clipped) to large (most entries clipped); then whole CURATE-SB runs with the
    gradient computed each way.
    """
    import functools

    import numpy as np

    from dpcd.discovery import noleaks as noleaks_module
    from dpcd.discovery.noleaks import clipped_gradient

    ds = load_bnlearn("child", 100_000, rng=0)
    X = encode_ordinal(ds.data.to_numpy(), ds.levels)  # the [-1, 1] coding CURATE-SB and NOLEAKS run on
    unique, counts = np.unique(X, axis=0, return_counts=True)
    for scale in (0.05, 0.3, 1.5):
        W = np.random.default_rng(1).normal(0.0, scale, size=(X.shape[1],) * 2)
        np.fill_diagonal(W, 0.0)
        fast, t_fast = best_of(lambda: clipped_gradient(unique, W, 2.0, counts), repeat=3)
        slow, t_slow = best_of(lambda: clipped_gradient(X, W, 2.0, method="tensor"), repeat=3)
        assert np.allclose(fast, slow, rtol=1e-12, atol=1e-15)
        report(f"clipped gradient child n=100k, W sd {scale}", before_s=t_slow, after_s=t_fast,
               speedup=t_slow / t_fast)
    names = list(ds.data.columns)
    run = functools.partial(curate_sb, X, epsilon_total=0.5, delta=1e-6, rng=0, node_names=names)
    new, t_new = best_of(run, repeat=1)
    monkeypatch.setattr(noleaks_module, "clipped_gradient",
                        functools.partial(noleaks_module.clipped_gradient, method="tensor"))
    old, t_old = best_of(run, repeat=1)
    report("CURATE-SB child n=100k eps_total=0.5 (distinct rows in both)", tensor_s=t_old, default_s=t_new,
           speedup=t_old / t_new, evaluations=new.info["evaluations"],
           same_graph=set(new.cpdag.edges) == set(old.cpdag.edges))

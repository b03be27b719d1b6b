"""Paper 003 (Wang, Pang & Song 2020), notebook ``priv_pc``: Fig. 1 (F1 against privacy cost) and Table 2.

The algorithms are :mod:`dpcd.discovery.priv_pc`, :mod:`dpcd.discovery.svt_pc`,
:mod:`dpcd.discovery.subsampled_gaussian_pc` and :mod:`dpcd.discovery.em_pc`.
"""

from __future__ import annotations

import numpy as np

from dpcd.discovery.priv_pc import (
    SensitivityMode,
    priv_pc,
    privacy_totals,
    reference_max_order,
)
from dpcd.validation import RngLike, as_rng

__all__ = ["EXPERIMENT_LINES", "run_cell"]


EXPERIMENT_LINES = ("priv_pc", "priv_pc_nosub", "svt_pc", "em_pc", "subsampled_gaussian")
"""The lines of the priv_pc notebook (registry algorithms plus Priv-PC without sub-sampling)."""


def run_cell(*, network: str, n: int, algorithm: str, epsilon: float, rng: RngLike, alpha: float = 0.10,
             threshold_tweak: float = 0.02, delta: float = 1e-3,
             sensitivity: SensitivityMode = "reference", sampling_rate: float = 0.1) -> dict:
    """One run of the Fig. 1 / Table 2 experiment (notebooks/priv_pc.ipynb).

    Samples ``n`` rows of the bnlearn ``network`` with ``rng``, runs
    ``algorithm`` ("priv_pc", "priv_pc_nosub" = Priv-PC with m = n, "svt_pc",
    "em_pc" from :mod:`dpcd.discovery.em_pc`, whose ``epsilon`` is its total
    budget, or "subsampled_gaussian" from :mod:`dpcd.discovery.subsampled_gaussian_pc`
    with Poisson rate ``sampling_rate`` and noise multiplier
    σ = ``analytic_gaussian_sigma(2, epsilon, delta)``, the σ with which one
    test *without* sub-sampling would be (ε, δ)-DP under the accountant's
    replace-one pair (shift 2Δ); sub-sampling then lowers the per-test cost, and
    its accumulated cost is ``epsilon_tight``, the PLD total) at per-test ``epsilon``, and scores the CPDAG by CPDAG-pair F1
    against the true CPDAG (``f1_true``) and against non-private Kendall PC on
    the same rows at the same threshold (``f1_pc``, the paper's convention).
    Returns one flat dict: scores, privacy totals, CI-test counts, seconds.
    """
    from dpcd.datasets import load_bnlearn
    from dpcd.discovery.pc import pc
    from dpcd.graphs import cpdag_pair_prf, dag_to_cpdag

    from .experiments import timed

    if algorithm not in EXPERIMENT_LINES:
        raise ValueError(f"algorithm must be one of {EXPERIMENT_LINES}, got {algorithm!r}")
    generator = as_rng(rng)
    sample = load_bnlearn(network, n, generator)
    data, dag, levels = sample.data, sample.dag, sample.levels  # the network's domains: public
    codes = np.asarray(data)
    names = list(data.columns)
    truth = dag_to_cpdag(dag)
    max_order = reference_max_order(len(codes), codes.shape[1])
    reference = pc(codes, ci_test="kendall", alpha=min(2 * alpha, 0.999), max_order=max_order, node_names=names)
    if algorithm == "em_pc":
        from dpcd.discovery.em_pc import em_pc

        result, seconds = timed(em_pc, codes, levels=levels, epsilon_total=epsilon, alpha=alpha, rng=generator,
                                node_names=names)
        n_full = result.n_tests
    elif algorithm == "subsampled_gaussian":
        from dpcd.discovery.subsampled_gaussian_pc import subsampled_gaussian_pc
        from dpcd.privacy.mechanisms import analytic_gaussian_sigma

        sigma = analytic_gaussian_sigma(2.0, epsilon, delta)
        result, seconds = timed(subsampled_gaussian_pc, codes, levels=levels, sigma=sigma,
                                sampling_rate=sampling_rate, delta=delta, alpha=alpha, rng=generator, max_order=max_order, node_names=names,
                                sensitivity=sensitivity)
        n_full = result.info["n_full_tests"]
    elif algorithm == "svt_pc":
        from dpcd.discovery.svt_pc import svt_pc

        result, seconds = timed(svt_pc, codes, levels=levels, epsilon_per_edge=epsilon, delta=delta, alpha=alpha,
                                rng=generator,
                                max_order=max_order, node_names=names, sensitivity=sensitivity)
        n_full = result.info["n_full_tests"]
    else:
        size = len(codes) if algorithm == "priv_pc_nosub" else None
        result, seconds = timed(priv_pc, codes, levels=levels, epsilon_per_test=epsilon, delta=delta, alpha=alpha,
                                threshold_tweak=threshold_tweak, subsample_size=size, rng=generator,
                                max_order=max_order, node_names=names, sensitivity=sensitivity)
        n_full = result.info["n_full_tests"]
    # accounting is done outside the timed run: the tight total is the accountant's cost, not the algorithm's
    totals = privacy_totals(result.ledger, delta)
    return {
        "f1_true": cpdag_pair_prf(result.cpdag, truth)["f1"],
        "f1_pc": cpdag_pair_prf(result.cpdag, reference.cpdag)["f1"],
        "f1_pc_vs_true": cpdag_pair_prf(reference.cpdag, truth)["f1"],
        "seconds": seconds, "n_tests": result.n_tests, "n_full_tests": n_full,
        "n_examined": result.info.get("n_examined", result.info.get("n_hits", np.nan)),
        **totals,
    }

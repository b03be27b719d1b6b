"""Paper 001 (Bhattacharjee & Tandon 2024), notebook ``curate``: Figs. 3–7 and Tables 4–7 on six bnlearn networks.

The algorithms are :mod:`dpcd.discovery.curate`, :mod:`dpcd.discovery.curate_sb`,
:mod:`dpcd.discovery.noleaks` and the comparison lines of :data:`dpcd.registry.ALGORITHMS`.
"""

from __future__ import annotations

import numpy as np

from dpcd.discovery.curate import curate
from dpcd.validation import RngLike, as_rng

__all__ = ["EXPERIMENT_ALGORITHMS", "available_algorithms", "run_cell"]


#: the lines of Fig. 4 / Tables 4, 5, 7: non-private PC and algorithms of :data:`dpcd.registry.ALGORITHMS`
EXPERIMENT_ALGORITHMS: tuple[str, ...] = ("pc", "curate", "curate_sb", "noleaks", "priv_pc", "svt_pc", "em_pc")


def available_algorithms() -> dict[str, bool]:
    """Which comparison lines can run here (registry availability; PC always)."""
    from dpcd.registry import ALGORITHMS

    return {name: name == "pc" or ALGORITHMS[name].available for name in EXPERIMENT_ALGORITHMS}


def run_cell(*, network: str, n: int, algorithm: str, epsilon: float, rng: RngLike,
             delta_prime: float = 1e-12, threshold: float = 0.05, score_delta: float = 1e-6,
             score_epsilon0_fraction: float = 0.01, max_evaluations: int = 100) -> dict:
    """One run of the curate notebook's grid: sample ``network`` (n rows), run ``algorithm``, score it.

    ``epsilon`` is ε_Total for "curate", "curate_sb" and "noleaks" (uniform
    split over ``max_evaluations``) and the per-test ε of "priv_pc", "svt_pc"
    and "em_pc" (their total is whatever their ledger accumulates). Every
    private run's total is reported by the same accountants: ``eps_basic`` and
    ``eps_advanced`` (ledger at δ' = ``delta_prime``) and ``eps_tight`` (PLD at
    Σδ + δ'), plus CURATE's own per-order accounting ``eps_paper``. F1 is on
    CPDAG edge pairs against the true CPDAG (``f1_true``) and against
    non-private PC with Kendall's τ at T = ``threshold`` on the same rows
    (``f1_vs_pc``). Score-based algorithms use the ordinal encoding
    (:func:`dpcd.discovery.notears.encode_ordinal`).
    """
    import time

    from dpcd.datasets import load_bnlearn
    from dpcd.discovery.pc import pc
    from dpcd.graphs import cpdag_pair_prf, dag_to_cpdag

    generator = as_rng(rng)
    sample = load_bnlearn(network, n, generator)
    data, dag, levels = sample.data, sample.dag, sample.levels  # the network's domains: public
    truth = dag_to_cpdag(dag)
    names = list(data.columns)
    reference = pc(data, ci_test="kendall", alpha=threshold)
    start = time.perf_counter()
    eps_paper = np.nan
    if algorithm == "pc":
        result, ledger = reference, None
    elif algorithm == "curate":
        result = curate(data, levels=levels, epsilon_total=epsilon, rng=generator, delta_prime=delta_prime,
                        threshold=threshold)
        ledger, eps_paper = result.ledger, result.info["epsilon_curate"]
    elif algorithm in ("curate_sb", "noleaks"):
        from dpcd.discovery.notears import encode_ordinal

        X = encode_ordinal(data.to_numpy(), levels)
        if algorithm == "curate_sb":
            from dpcd.discovery.curate_sb import curate_sb
            from dpcd.discovery.noleaks import line_search_charge

            budget = epsilon - line_search_charge(n, min(1000, n // 2))[0]
            result = curate_sb(X, epsilon_total=epsilon, delta=score_delta, rng=generator, node_names=names,
                               epsilon0=max(budget, 1e-9) * score_epsilon0_fraction,
                               line_search_size=min(1000, n // 2))
        else:
            from dpcd.discovery.noleaks import noleaks

            result = noleaks(X, epsilon_total=epsilon, delta=score_delta, rng=generator, node_names=names,
                             max_evaluations=max_evaluations, line_search_size=min(1000, n // 2))
        ledger = result.ledger
        eps_paper = ledger.total("basic").epsilon
    elif algorithm in ("priv_pc", "svt_pc", "em_pc"):
        from dpcd.registry import ALGORITHMS

        spec = ALGORITHMS[algorithm]
        try:
            result = spec.load()(data, levels=levels, alpha=threshold, rng=generator, **{spec.budget_arg: epsilon})
        except ValueError as err:  # a comparison line that cannot run on this cell: report, do not abort the grid
            return {"f1_true": np.nan, "f1_vs_pc": np.nan, "seconds": np.nan, "n_tests": np.nan,
                    "pc_tests": float(reference.n_tests), "eps_paper": np.nan, "eps_basic": np.nan,
                    "eps_advanced": np.nan, "eps_tight": np.nan, "delta_total": np.nan, "error": str(err)}
        ledger = result.ledger
    else:
        raise ValueError(f"algorithm must be one of {sorted(EXPERIMENT_ALGORITHMS)}, got {algorithm!r}")
    seconds = time.perf_counter() - start
    row = {
        "f1_true": cpdag_pair_prf(result.cpdag, truth)["f1"],
        "f1_vs_pc": cpdag_pair_prf(result.cpdag, reference.cpdag)["f1"],
        "seconds": seconds,
        "n_tests": float(getattr(result, "n_tests", np.nan)),
        "pc_tests": float(reference.n_tests),
        "eps_paper": float(eps_paper),
        "eps_basic": np.nan, "eps_advanced": np.nan, "eps_tight": np.nan, "delta_total": np.nan,
        "error": "",
    }
    if ledger is not None and ledger.n_charges:
        row["eps_basic"] = ledger.total("basic").epsilon
        row["eps_advanced"] = ledger.total("advanced", delta_prime=delta_prime).epsilon
        tight = ledger.total("tight", delta_prime=delta_prime)
        row["eps_tight"], row["delta_total"] = tight.epsilon, float(np.sum(ledger.deltas()) + delta_prime)
    if ledger is not None and not ledger.n_charges:
        row.update(eps_basic=0.0, eps_advanced=0.0, eps_tight=0.0, delta_total=0.0)
    return row

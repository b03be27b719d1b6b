"""Paper 000 (Xu, Yuan & Wu 2017), notebook ``em_pc``: Tables III–VI and VIII–XI, run times, the Adult case study.

The algorithms are :mod:`dpcd.discovery.em_pc`, :mod:`dpcd.discovery.lapmech` and
:mod:`dpcd.discovery.privpc_star`; this module holds the paper's grids and one cell per setting.
"""

from __future__ import annotations

import time
from typing import Literal, Sequence

import numpy as np

from dpcd.discovery.em_pc import em_pc
from dpcd.discovery.pc import PCResult
from dpcd.validation import RngLike, as_rng, check_int

__all__ = ["run_cell", "run_numerical_cell", "PAPER_TABLES", "paper_grid", "paper_rows", "adult_case_study"]


def _rates(result: PCResult, dag) -> dict:
    from dpcd.graphs import tpr_fpr_tdr
    return tpr_fpr_tdr(result.cpdag, dag)


def run_cell(*, p: int, sparseness: float, n: int, epsilons: Sequence[float], rng: RngLike, alpha: float = 0.01,
             algorithms: Sequence[str] = ("pc", "lapmech", "em_pc", "em_pc_search"), max_cells: int | None = None,
             max_order: int | None = None) -> list[dict]:
    """One categorical setting of paper 000 (Tables III–VI): one random DAG and dataset, every algorithm.

    Draws a random DAG (p nodes, sparseness s) and n records with 2–5 levels per
    node, runs non-private PC (G², α) once and LapMech / EM-PC at every ε in
    ``epsilons`` on the same data ("em_pc": provable distance scores;
    "em_pc_search": the greedy/exact search scores, closer to the paper's
    utility but without a proven guarantee); returns one row per (algorithm, ε) with
    TPR/FPR/TDR (skeleton, as pcalg's ``compareGraphs``), seconds and the
    privacy spent. A LapMech run whose table exceeds ``max_cells`` gives a row
    with NaN rates and ``note="infeasible"``.
    """
    from dpcd.datasets import random_dag, sample_categorical
    from dpcd.discovery.lapmech import DEFAULT_MAX_CELLS, lapmech
    from dpcd.discovery.pc import pc

    generator = as_rng(rng)
    dag = random_dag(p, sparseness, generator)
    sample = sample_categorical(dag, n, generator)
    data, levels = sample.data, sample.levels  # domain sizes of the generating model: public
    base: dict = {}  # run_grid adds the cell parameters (p, sparseness, n, ...) itself
    rows = []
    if "pc" in algorithms:
        t0 = time.perf_counter()
        result = pc(data, ci_test="g2", alpha=alpha, max_order=max_order)
        seconds = time.perf_counter() - t0
        for epsilon in epsilons:
            rows.append({**base, "epsilon": epsilon, "algorithm": "pc", **_rates(result, dag), "seconds": seconds,
                         "spent": 0.0, "note": ""})
    for epsilon in epsilons:
        if "lapmech" in algorithms:
            t0 = time.perf_counter()
            try:
                result = lapmech(data, levels=levels, epsilon_total=epsilon, alpha=alpha, rng=generator,
                                 max_cells=max_cells or DEFAULT_MAX_CELLS, max_order=max_order)
                rates, note, spent = _rates(result, dag), "", result.ledger.total().epsilon
            except ValueError as err:
                if "infeasible" not in str(err):
                    raise
                rates, note, spent = {"tpr": np.nan, "fpr": np.nan, "tdr": np.nan}, "infeasible", np.nan
            rows.append({**base, "epsilon": epsilon, "algorithm": "lapmech", **rates,
                         "seconds": time.perf_counter() - t0, "spent": spent, "note": note})
        for algorithm, distance in (("em_pc", "lipschitz"), ("em_pc_search", "search")):
            if algorithm not in algorithms:
                continue
            t0 = time.perf_counter()
            result = em_pc(data, levels=levels, epsilon_total=epsilon, alpha=alpha, rng=generator,
                           max_order=max_order, distance=distance)
            rows.append({**base, "epsilon": epsilon, "algorithm": algorithm, **_rates(result, dag),
                         "seconds": time.perf_counter() - t0, "spent": result.ledger.total().epsilon,
                         "note": f"exact scores {result.info['exact_fraction']:.2f}, "
                                 f"unproven {result.info['unproven_scores']}"})
    return rows


def run_numerical_cell(*, p: int, sparseness: float, n: int, epsilons: Sequence[float], rng: RngLike,
                       alpha: float = 0.01, max_order: int | None = None) -> list[dict]:
    """One numerical setting of paper 000 (Tables VIII–XI): linear-Gaussian data, PC (Fisher-z) vs PrivPC*."""
    from dpcd.datasets import random_dag, sample_linear_gaussian
    from dpcd.discovery.pc import pc
    from dpcd.discovery.privpc_star import privpc_star

    generator = as_rng(rng)
    dag = random_dag(p, sparseness, generator)
    sample = sample_linear_gaussian(dag, n, generator)
    data, bounds = sample.data, sample.schema()  # bounds: ±4 model standard deviations (public)
    base: dict = {}  # run_grid adds the cell parameters (p, sparseness, n, ...) itself
    rows = []
    t0 = time.perf_counter()
    result = pc(data, ci_test="fisherz", alpha=alpha, max_order=max_order)
    seconds = time.perf_counter() - t0
    for epsilon in epsilons:
        rows.append({**base, "epsilon": epsilon, "algorithm": "pc", **_rates(result, dag), "seconds": seconds,
                     "spent": 0.0})
    for epsilon in epsilons:
        t0 = time.perf_counter()
        result = privpc_star(data, bounds=bounds, epsilon_total=epsilon, alpha=alpha, rng=generator,
                             max_order=max_order)
        rows.append({**base, "epsilon": epsilon, "algorithm": "privpc_star", **_rates(result, dag),
                     "seconds": time.perf_counter() - t0, "spent": result.ledger.total().epsilon})
    return rows


# --------------------------------------------------------------------------- the paper's grids

#: Tables III–VI (categorical) and VIII–XI (numerical): varied parameter, its values, fixed values.
PAPER_TABLES: dict[str, tuple[str, str, tuple, dict]] = {
    "III": ("categorical", "epsilon", (10, 5, 3, 1), {"n": 10_000, "p": 10, "sparseness": 0.2}),
    "IV": ("categorical", "p", (5, 10, 15), {"epsilon": 5, "n": 5_000, "sparseness": 0.2}),
    "V": ("categorical", "n", (10_000, 5_000, 3_000, 1_000), {"epsilon": 5, "p": 10, "sparseness": 0.2}),
    "VI": ("categorical", "sparseness", (0.2, 0.4, 0.6), {"epsilon": 5, "n": 5_000, "p": 10}),
    "VIII": ("numerical", "epsilon", (10, 1, 0.1, 0.01), {"n": 10_000, "p": 10, "sparseness": 0.4}),
    "IX": ("numerical", "n", (10_000, 1_000, 100), {"epsilon": 1, "p": 10, "sparseness": 0.4}),
    "X": ("numerical", "p", (10, 20, 50, 100), {"epsilon": 1, "n": 10_000, "sparseness": 0.4}),
    "XI": ("numerical", "sparseness", (0.1, 0.4, 0.7), {"epsilon": 1, "n": 10_000, "p": 20}),
}


def paper_grid(kind: str, *, tables: Sequence[str] | None = None, max_p: int | None = None) -> list[dict]:
    """Cells (p, sparseness, n, epsilons) covering the paper's tables of ``kind`` ("categorical"/"numerical").

    Settings shared by several tables are run once; all ε of one (p, s, n) run on the same data.
    ``max_p`` drops settings with more nodes (used by the reduced profiles).
    """
    if kind not in ("categorical", "numerical"):
        raise ValueError(f"kind must be 'categorical' or 'numerical', got {kind!r}")
    cells: dict[tuple, set] = {}
    for name, (table_kind, varied, values, fixed) in PAPER_TABLES.items():
        if table_kind != kind or (tables is not None and name not in tables):
            continue
        for value in values:
            setting = {**fixed, varied: value}
            if max_p is not None and setting["p"] > max_p:
                continue
            key = (setting["p"], setting["sparseness"], setting["n"])
            cells.setdefault(key, set()).add(setting["epsilon"])
    return [{"p": p, "sparseness": s, "n": n, "epsilons": sorted(eps, reverse=True)}
            for (p, s, n), eps in sorted(cells.items())]


def paper_rows(results) -> "object":
    """Mean and sd of TPR/FPR/TDR per paper table row, with the ``item`` names of data/paper_values/em_pc.csv."""
    import pandas as pd

    records = []
    for name, (_, varied, values, fixed) in PAPER_TABLES.items():
        for value in values:
            setting = {**fixed, varied: value}
            part = results
            for column, wanted in setting.items():
                part = part[np.isclose(part[column].astype(float), float(wanted))]
            for algorithm, rows in part.groupby("algorithm", sort=False):
                for metric in ("tpr", "fpr", "tdr"):
                    records.append({"table": name, "item": f"Table {name}: {varied}={value:g}, {algorithm}",
                                    "metric": metric, "value": rows[metric].mean(), "sd": rows[metric].std(ddof=1),
                                    "runs": int(rows[metric].notna().sum())})
    return pd.DataFrame.from_records(records, columns=["table", "item", "metric", "value", "sd", "runs"])


def adult_case_study(*, epsilon: float = 10.0, rng: RngLike, alpha: float = 0.01, max_rows: int | None = None,
                     max_order: int | None = None, distance: Literal["lipschitz", "search"] = "lipschitz") -> dict:
    """Fig. 1 of paper 000: non-private PC on UCI Adult as the reference CPDAG, EM-PC at ``epsilon`` against it.

    Returns ``{"reference", "private" (PCResult), "rates" (TPR/FPR/TDR of the private CPDAG's skeleton
    against the reference), "n", "edges_reference", "edges_private"}``. ``max_rows`` keeps the first rows
    only (for quick checks; the paper uses all 48 842). ``distance`` is EM-PC's distance-score method.
    """
    from dpcd.discovery.pc import pc
    from dpcd.graphs import tpr_fpr_tdr

    from .realdata import load_adult

    adult = load_adult()
    data, levels = adult.data, adult.levels  # the discretisation's categories are public
    if max_rows is not None:
        data = data.iloc[:check_int(max_rows, "max_rows", minimum=10)]
    reference = pc(data, ci_test="g2", alpha=alpha, max_order=max_order)
    private = em_pc(data, levels=levels, epsilon_total=epsilon, alpha=alpha, rng=rng, max_order=max_order,
                    distance=distance)
    return {"reference": reference, "private": private, "rates": tpr_fpr_tdr(private.cpdag, reference.cpdag),
            "n": len(data), "edges_reference": len(reference.skeleton), "edges_private": len(private.skeleton)}

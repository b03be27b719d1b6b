"""LapMech: PC on a Laplace-noised full contingency table (the baseline of Xu, Yuan & Wu 2017).

The joint contingency table of all p variables (∏ |V_i| cells) is released
once with Laplace noise Lap(1/ε) per cell; every CI test of PC is then a G²
test on a marginal of that one noisy table, so the data are touched once.

Privacy: ε-DP under add/remove-one-record neighbours (:data:`RELATION`). Adding
or removing a record changes exactly one cell of the full table by 1, so the
table's L1 sensitivity is 1 and Lap(1/ε) noise per cell is ε-DP (Dwork et al.
2006; paper 000, Sec. IV-D). The domain sizes (hence the table's shape) are
public and passed as ``levels``; n is not used (the tests read the noisy
table's own total).
Everything after the release (marginals, clipping, tests, orientation) is
post-processing.

Noisy counts: marginals are summed from the *unclipped* noisy table (the noise
is zero-mean, so marginals stay unbiased; clipping every cell first would add
about 1/(2ε) phantom records per cell, i.e. thousands for a table with 10⁵
cells); each marginal table is then clipped at 0 cell by cell before its G²
test. The test uses the public degrees of freedom (|X|−1)(|Y|−1)∏|S| of the
paper (Sec. III-A) and the standard PC rule (independent when p > α; the
paper's text says "less than τ", see ``papers/INDEX.md``).

References
----------
Xu, Yuan & Wu (2017), "Differential privacy preserving causal graph
discovery", IEEE PAC, Sec. IV-D.
Dwork, McSherry, Nissim & Smith (2006), "Calibrating noise to sensitivity in
private data analysis", TCC.

Examples
--------
>>> LAPMECH.name, LAPMECH.relation.name, LAPMECH.budget_arg, LAPMECH.data, LAPMECH.differentially_private
('lapmech', 'add/remove', 'epsilon_total', 'categorical', True)
>>> worst = LAPMECH.privacy_map(epsilon_total=1.0)   # one Laplace release: pure ε-DP
>>> worst.epsilon, worst.delta
(1.0, 0.0)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np

from ..privacy import PrivacyLedger, laplace_noise
from ..privacy.relation import ADD_REMOVE, WorstCase
from ..schema import check_codes, public_levels
from ..validation import (
    RngLike,
    as_data_matrix,
    as_rng,
    check_epsilon,
    check_int,
    check_probability,
)
from .algorithm import PrivateAlgorithm
from .pc import PCResult, node_names_of, run_pc
from .tables import NoisyTableDecider, check_table_cells

__all__ = ["LAPMECH", "DEFAULT_MAX_CELLS", "noisy_joint_table", "lapmech", "worst_case", "RELATION", "PUBLIC"]

RELATION = ADD_REMOVE
"""LapMech's guarantee is proven under add/remove one record."""
PUBLIC = ("domains",)

#: Default bound on the number of cells of the full table (float32: 4 bytes per cell, 128 MiB).
DEFAULT_MAX_CELLS = 1 << 25


def _check_categorical(data, name: str = "data") -> np.ndarray:
    codes = as_data_matrix(data, name, kind="discrete", min_rows=0)  # n is protected under add/remove: any n runs
    return codes


def noisy_joint_table(codes: np.ndarray, levels: Sequence[int], *, epsilon: float, rng: RngLike,
                      max_cells: int = DEFAULT_MAX_CELLS) -> np.ndarray:
    """Full contingency table of all columns plus i.i.d. Lap(1/ε) noise per cell (float32).

    The counts stay exact integers until the noise is added in double
    precision; only the noisy sum is rounded to float32, which is
    post-processing. (Rounding the counts first would break the proof: float32
    holds integers exactly only up to 2²⁴, so above it one record could move a
    cell by 0 or 2.) Refuses with ``MemoryError``-free ``ValueError`` when ∏
    levels exceeds ``max_cells`` (the table would not fit; nothing is
    allocated). The noise is drawn in chunks, so the peak is the integer counts
    and the float32 table (12 bytes per cell).

    >>> noisy_joint_table(np.zeros((2 ** 24 + 1, 1), dtype=np.int8), [1], epsilon=1e3,
    ...                   rng=np.random.default_rng(0)).tolist()   # 2²⁴ + 1 + noise: not 2²⁴, as float32(count) is
    [16777218.0]
    """
    epsilon = check_epsilon(epsilon)
    max_cells = check_int(max_cells, "max_cells", minimum=1)
    rng = as_rng(rng)
    levels = [int(k) for k in levels]
    cells = check_table_cells(levels, max_cells, "LapMech")
    flat = np.ravel_multi_index(tuple(codes[:, j] for j in range(codes.shape[1])), levels)
    counts = np.bincount(flat, minlength=cells)
    del flat
    table = np.empty(cells, dtype=np.float32)
    chunk = 1 << 22
    scale = 1.0 / epsilon
    for start in range(0, cells, chunk):
        stop = min(cells, start + chunk)
        table[start:stop] = counts[start:stop] + laplace_noise(scale, stop - start, rng=rng)
    return table.reshape(levels)


def worst_case(*, epsilon_total: float) -> WorstCase:
    """The data-independent guarantee of any :func:`lapmech` run: one Laplace release, (ε_total, 0)-DP.

    >>> worst_case(epsilon_total=1.0).epsilon
    1.0
    """
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    ledger = PrivacyLedger("add/remove", public=PUBLIC)
    ledger.charge("LapMech: noisy full contingency table", epsilon=epsilon_total, kind="laplace", sensitivity=1.0,
                  scale=1.0 / epsilon_total)
    return WorstCase("lapmech", RELATION, epsilon_total, 0.0, PUBLIC,
                     "Xu, Yuan & Wu 2017, Sec. IV-D: Laplace mechanism on a table of L1 sensitivity 1 (Dwork & Roth "
                     "2014, Thm. 3.6)",
                     "basic", ledger, {"epsilon_total": epsilon_total})


def lapmech(data, *, levels, epsilon_total: float, alpha: float = 0.01, rng: RngLike,
            max_cells: int = DEFAULT_MAX_CELLS, max_order: int | None = None,
            node_names: Sequence[str] | None = None,
            max_tests: int | None = None) -> PCResult:
    """LapMech (paper 000, Sec. IV-D): PC with G² tests on one Laplace-noised full contingency table.

    Parameters
    ----------
    data : integer category codes (rows × variables), e.g. from
        :meth:`dpcd.schema.Schema.encode` or :func:`dpcd.datasets.sample_categorical`.
    levels : the public domain sizes (sequence, mapping or :class:`~dpcd.schema.Schema`).
    epsilon_total : privacy budget ε > 0 (charged once).
    alpha : significance level τ; an edge is removed when p > α.
    rng : numpy Generator or integer seed.
    max_cells : refuse (``ValueError``) when ∏ |V_i| exceeds this (default 2²⁵ cells,
        128 MiB of float32); decided by the public domain sizes only.
    max_order, node_names : as in :func:`dpcd.discovery.pc.pc`.
    max_tests : cap on the run's CI decisions (None = none): an order starts only if it cannot exceed it
        (:func:`dpcd.discovery.pc.pc_skeleton`); a function of earlier private decisions, so it costs no budget.

    Privacy: ε-DP, add/remove one record; public: domain sizes (:func:`worst_case`).
    The ledger holds one Laplace charge (sensitivity 1, scale 1/ε).

    Returns a :class:`PCResult` with the ledger; ``info`` holds
    ``n_cells`` and ``n_computed`` (distinct marginal tests).

    Examples
    --------
    >>> from dpcd.datasets import load_bnlearn
    >>> data = load_bnlearn("cancer", 5000, rng=0)
    >>> result = lapmech(data.data, levels=data.levels, epsilon_total=1.0, rng=0)
    >>> result.ledger.total("basic").epsilon
    1.0
    """
    epsilon = check_epsilon(epsilon_total, "epsilon_total")
    alpha = check_probability(alpha, "alpha")
    codes = _check_categorical(data)
    names = node_names_of(data, node_names)
    levels = public_levels(levels, codes.shape[1], names)
    check_table_cells(levels, check_int(max_cells, "max_cells", minimum=1), "LapMech")  # before the data are read
    check_codes(codes, levels)
    table = noisy_joint_table(codes, levels, epsilon=epsilon, rng=rng, max_cells=max_cells)
    ledger = PrivacyLedger("add/remove", public=PUBLIC)
    ledger.charge("LapMech: noisy full contingency table", epsilon=epsilon, kind="laplace", sensitivity=1.0,
                  scale=1.0 / epsilon, note=f"{table.size} cells, Lap(1/epsilon) each")
    # every marginal a capped run can ask (|S| + 2 columns) is summed in one sweep of the table
    decider = NoisyTableDecider(table, alpha, batch_size=4 if max_order is None else max(4, max_order + 2))
    result = run_pc(names, decider, max_order=max_order, ledger=ledger, max_tests=max_tests)
    return replace(result, info={"algorithm": "lapmech", "epsilon_total": epsilon, "alpha": alpha,
                                 "n_cells": int(table.size), "n_computed": decider.n_computed})


LAPMECH = PrivateAlgorithm(
    name="lapmech", label="LapMech", data="categorical", relation=RELATION, public=PUBLIC, budget="total",
    budget_arg="epsilon_total", run=lapmech, privacy_map=worst_case, theorem="Xu, Yuan & Wu 2017, Sec. IV-D")
"""LapMech as a :class:`~dpcd.discovery.algorithm.PrivateAlgorithm`."""

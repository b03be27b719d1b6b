"""Audit of EM-PC's separating set on the tie pair of :mod:`dpcd.audit.sepset`.

With ``sepset="argmax"`` (the pre-fix rule) the stored set is the first
maximum of the un-noised scores, so the output graph differs deterministically
between D and D′ and the auditor refutes the claim; with ``sepset="joint"``
(the default) the set is part of the private draw and the bound stays below it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dpcd.audit import audit, graph_key, observed_outputs
from dpcd.audit.sepset import sepset_tie_pair
from dpcd.discovery.em_pc import em_pc

N_RUNS = 400  # per data set (plus 100 selection runs each); about 6 ms per run


@dataclass(frozen=True)
class _EMPCRun:
    """One EM-PC run with the pair's audit parameters; output: the CPDAG as a graph key (picklable)."""

    sepset: str
    levels: tuple
    epsilon_total: float
    epsilon_split: tuple
    max_order: int
    alpha: float

    def __call__(self, data, rng):
        result = em_pc(data, levels=dict(self.levels), epsilon_total=self.epsilon_total,
                       epsilon_split=self.epsilon_split, max_order=self.max_order, alpha=self.alpha, rng=rng,
                       unproven={"sepset": "argmax"} if self.sepset == "argmax" else None)
        return graph_key(result)


@pytest.fixture(scope="module")
def pair():
    return sepset_tie_pair(n=6000, rng=0)


def _mechanism(pair, sepset: str) -> _EMPCRun:
    meta = pair.meta
    return _EMPCRun(sepset, tuple(sorted(meta["levels"].items())), meta["epsilon_total"],
                    tuple(meta["epsilon_split"]), meta["max_order"], meta["alpha"])


def test_argmax_sepset_violates_claim(pair):
    meta = pair.meta
    assert pair.relation == "add/remove"
    assert meta["tie_D"][0] == meta["tie_D"][1] >= 0          # exact tie on D: the first set wins
    assert meta["tie_D_prime"][1] > meta["tie_D_prime"][0]    # one record breaks it
    assert meta["sepset_D"] != meta["sepset_D_prime"] and meta["graph_D"] != meta["graph_D_prime"]
    claim = meta["epsilon_total"]
    result = audit(_mechanism(pair, "argmax"), pair, epsilon=claim, n_runs=N_RUNS, rng=20240611,
                   propose=observed_outputs, name="EM-PC (sepset=argmax)")
    assert result.violation, result.to_row()
    assert result.epsilon_lower > claim


def test_joint_sepset_within_claim(pair):
    claim = pair.meta["epsilon_total"]
    result = audit(_mechanism(pair, "joint"), pair, epsilon=claim, n_runs=N_RUNS, rng=20240611,
                   propose=observed_outputs, name="EM-PC (sepset=joint)")
    assert not result.violation, result.to_row()
    assert result.epsilon_lower <= claim

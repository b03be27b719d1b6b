"""Priv-PC on asia with 100 000 rows at per-test epsilon = 1: seconds per run and CI-test counts.

Goal: under 0.5 s per run (the paper reports 16 s on a 32-core server). Reported for the
reference calibration (the paper's setting) and the proven one, and without sub-sampling.
"""

import numpy as np
import pytest

from dpcd.datasets import load_bnlearn
from dpcd.discovery.priv_pc import priv_pc, privacy_totals


@pytest.mark.benchmark
@pytest.mark.parametrize("sensitivity, subsample", [("reference", None), ("proven", None), ("reference", "n")])
def test_priv_pc_asia_100k(report, best_of, sensitivity, subsample):
    ds = load_bnlearn("asia", 100_000, rng=0)
    data, levels = np.asarray(ds.data), ds.levels
    size = len(data) if subsample == "n" else None
    seeds = iter(range(100))
    result, seconds = best_of(lambda: priv_pc(data, levels=levels, epsilon_per_test=1.0, rng=next(seeds),
                                              sensitivity=sensitivity, subsample_size=size), repeat=5)
    info = result.info
    report(f"Priv-PC asia n=100k eps=1 {sensitivity} m={info['subsample_size']}", seconds=seconds,
           ci_tests=result.n_tests, examined=info["n_examined"], full_data_tests=info["n_full_tests"],
           subsample_tests=info["n_subsample_tests"],
           epsilon_advanced=privacy_totals(result.ledger, 1e-3)["epsilon_advanced"])
    assert result.n_tests > 0

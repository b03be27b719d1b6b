"""discover on asia with 100 000 rows: end-to-end (CSV, validation, calibration, run, writers) vs the bare algorithm call."""

import importlib

import numpy as np
import pytest

from dpcd.datasets import load_bnlearn

disc = importlib.import_module("dpcd.release")


@pytest.mark.benchmark
def test_discover_overhead_asia_100k(report, best_of, tmp_path):
    spec = disc.choose_algorithm("categorical")
    data = load_bnlearn("asia", 100_000, rng=0).data
    csv = tmp_path / "asia.csv"
    data.to_csv(csv, index=False)
    codes, _, _ = disc.prepare_data(csv)
    counter = iter(range(100))

    def end_to_end():
        return disc.discover(csv, algorithm=spec.name, epsilon=1.0, delta=1e-6, rng=0, progress=False,
                             out=tmp_path / f"out{next(counter)}")

    found, t_total = best_of(end_to_end, repeat=3)
    _, t_prepare = best_of(lambda: disc.prepare_data(csv), repeat=3)
    _, t_algorithm = best_of(lambda: disc.run_algorithm(spec, codes, epsilon=1.0, delta=1e-6, rng=0), repeat=3)
    _, t_calibrate = best_of(lambda: disc.calibrate(disc.ALGORITHMS["priv_pc"], p=8, epsilon=1.0, delta=1e-6,
                                                    max_order=2, rtol=0.0049), repeat=1)
    report(f"discover asia n=100k ({spec.label})", total_s=t_total, csv_and_validation_s=t_prepare,
           algorithm_s=t_algorithm, writers_and_rest_s=t_total - t_prepare - t_algorithm,
           priv_pc_worst_case_calibration_s=t_calibrate)
    assert found.privacy["within_budget"] and np.isfinite(t_total)

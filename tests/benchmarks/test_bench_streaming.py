"""Reading large tables: `discover --algorithm marginal_pc --epsilon 1` on alarm samples written as Parquet parts and
as CSV (`python -m dpcd_papers sample`), in a fresh process each, and the same Parquet read on a local two-worker
Dask cluster. Prints wall seconds and peak resident memory per row count, the CSV/Parquet time ratio, the
cluster/one-machine ratio and the memory slope per million rows (issue goals: 10⁸ Parquet rows within 10 minutes
and 2 GB; CSV within 3× Parquet; the cluster within 1.5× one machine at 10⁷). Row counts: ``DPCD_BENCH_ROWS``
(comma-separated, default 100000,1000000). Nothing here runs in `make test`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from dpcd_papers.large_sample import write_sample

ROWS = tuple(int(r) for r in os.environ.get("DPCD_BENCH_ROWS", "100000,1000000").split(","))

_CHILD = textwrap.dedent("""
    import json, sys, tempfile, time
    import dpcd
    from dpcd.release import ClusterTable

    def peak_mb():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024

    data, schema, cluster = sys.argv[1], sys.argv[2], sys.argv[3] == "cluster"
    before = peak_mb()
    start = time.perf_counter()
    local = None
    if cluster:
        from distributed import LocalCluster
        local = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        data = ClusterTable(data, scheduler=local.scheduler_address)
        start = time.perf_counter()  # the cluster's start-up is not the read
    out = tempfile.mkdtemp() + "/release"
    dpcd.discover(data, schema=schema, epsilon=1.0, delta=1e-10, algorithm="marginal_pc", rng=1, progress=False, out=out,
                  options=dpcd.ReleaseOptions(forecast_repetitions=0))
    seconds = time.perf_counter() - start
    if local is not None:
        local.close()
    print(json.dumps({"seconds": seconds, "peak_mb": peak_mb(), "before_mb": before,
                      "graph": open(out + "/graph.json").read()}))
""")


def _measure(data, schema, how: str = "local") -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD, str(data), str(schema), how], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.benchmark
def test_reading_large_alarm_samples_from_parquet_csv_and_a_cluster(tmp_path, report):
    results = {}
    for rows in ROWS:
        parquet = write_sample("alarm", rows, tmp_path / f"alarm-{rows}", seed=0)
        csv = write_sample("alarm", rows, tmp_path / f"alarm-{rows}-csv", seed=0, format="csv")
        schema = tmp_path / f"alarm-{rows}.schema.json"
        runs = {"parquet": _measure(parquet, schema), "csv": _measure(csv, schema)}
        if rows == max(ROWS):
            runs["cluster"] = _measure(parquet, schema, "cluster")
        assert len({run["graph"] for run in runs.values()}) == 1, "every path must give the same graph.json"
        results[rows] = runs
        report(f"alarm, {rows:,} rows", **{f"{path}_s": run["seconds"] for path, run in runs.items()},
               **{f"{path}_peak_mb": run["peak_mb"] for path, run in runs.items()},
               csv_over_parquet=runs["csv"]["seconds"] / runs["parquet"]["seconds"],
               **({"cluster_over_one_machine": runs["cluster"]["seconds"] / runs["parquet"]["seconds"]}
                  if "cluster" in runs else {}))
    if len(ROWS) > 1:
        low, high = min(ROWS), max(ROWS)
        slope = (results[high]["parquet"]["peak_mb"] - results[low]["parquet"]["peak_mb"]) / ((high - low) / 1e6)
        seconds = (results[high]["parquet"]["seconds"] - results[low]["parquet"]["seconds"]) / ((high - low) / 1e6)
        report("alarm Parquet scaling", mb_per_million_rows=slope, seconds_per_million_rows=seconds,
               projected_1e8_minutes=seconds * 100 / 60, projected_1e8_gb=slope * 100 / 1024,
               projected_1e9_minutes=seconds * 1000 / 60)

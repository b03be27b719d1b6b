"""Scale: non-private PC and ``discover`` time and peak memory at n = 10⁴ … 10⁶ rows and p = 11, 37, 76 columns.

The rows are sampled once per (network, n) and saved; each measurement runs in a fresh process that loads them
(an int64 table, as a user's codes usually are) and reports its wall time and peak resident memory, the table
included (``data_mb``; ``before_mb`` is the process after its imports and the table). PC runs with its defaults on one core; ``discover`` with its defaults (``auto`` by
forecast, the report's forecast, every file written). Prints the rows README's scale table quotes
(`make bench`); where both are cheap, checks that the plain code path gives the same skeleton.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

NETWORKS = {"sachs": 11, "alarm": 37, "win95pts": 76}
ROWS = (10_000, 100_000, 1_000_000)

_CHILD = textwrap.dedent("""
    import json, sys, tempfile, time
    import numpy as np, pandas as pd
    from dpcd.schema import Schema

    def peak_mb():  # this process's high-water mark (VmHWM; ru_maxrss would carry the forking parent's over exec)
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024

    n, what, path, schema_path = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    schema = Schema.load(schema_path)
    data = pd.DataFrame(np.load(path), columns=list(schema.names))
    out = {"data_mb": data.memory_usage().sum() / 2**20,
           "before_mb": peak_mb()}
    start = time.perf_counter()
    if what == "pc":
        from dpcd.discovery.pc import pc
        result = pc(data, ci_test="g2", alpha=0.01)
        out["seconds"] = time.perf_counter() - start
        out["tests"] = result.n_tests
        if n <= 100_000:
            out["same_as_plain"] = pc(data, ci_test="g2", alpha=0.01, distinct=False).sepsets == result.sepsets
    else:
        from dpcd import discover
        release = discover(data, schema=schema, epsilon=1.0, delta=min(1e-6, 0.1 / n), rng=1, progress=False,
                           out=tempfile.mkdtemp() + "/release")
        out["seconds"] = time.perf_counter() - start
        out["algorithm"] = release.algorithm
    out["peak_mb"] = peak_mb()
    print(json.dumps(out))
""")


def measure(n: int, what: str, path: str, schema_path: str) -> dict:
    """One configuration in a fresh Python process: seconds, peak MB (data included) and what it ran."""
    done = subprocess.run([sys.executable, "-c", _CHILD, str(n), what, path, schema_path], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.benchmark
def test_scale_table(report, tmp_path):
    from dpcd.datasets import load_bnlearn

    for network, p in NETWORKS.items():
        for n in ROWS:
            path, schema_path = tmp_path / f"{network}-{n}.npy", tmp_path / f"{network}.json"
            sample = load_bnlearn(network, n, rng=0)
            np.save(path, sample.data.to_numpy(dtype=np.int64))
            sample.schema().save(schema_path)
            del sample
            for what in ("pc", "discover"):
                row = measure(n, what, str(path), str(schema_path))
                report(f"{what} {network} p={p} n={n}", **row)
                assert row.get("same_as_plain", True)
            path.unlink()

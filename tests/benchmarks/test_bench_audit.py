"""Auditor throughput: 10^6 runs of a vectorised mechanism, 10^4 runs of a per-run one."""

import pytest

from dpcd import audit


@pytest.mark.benchmark
def test_bench_audit_throughput(report, best_of):
    cases = {c.name: c for c in audit.mechanism_cases(epsilon=1.0, rng=0)}
    laplace = cases["Laplace"]
    _, seconds = best_of(lambda: audit.count_events(laplace.mechanism, laplace.pair.data, list(laplace.events),
                                                    n_runs=1_000_000, rng=0, vectorised=True))
    result, audit_seconds = best_of(lambda: audit.run_case(laplace, n_runs=1_000_000, rng=0), repeat=1)
    report("audit Laplace, 10^6 runs x 41 events", count_seconds=seconds, runs_per_second=1e6 / seconds,
           full_audit_seconds=audit_seconds, epsilon_lower=result.epsilon_lower)
    em = cases["Exponential mechanism"]
    _, em_seconds = best_of(lambda: audit.count_events(em.mechanism, em.pair.data, list(em.events),
                                                       n_runs=10_000, rng=0), repeat=1)
    report("audit exponential mechanism (library call per run), 10^4 runs", seconds=em_seconds,
           runs_per_second=1e4 / em_seconds)

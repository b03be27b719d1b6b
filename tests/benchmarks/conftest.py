"""Benchmarks: run with `make bench`; each prints one table of seconds and ratios."""

import time

import pytest


def best_of(fn, repeat: int = 3):
    """(result, best wall-clock seconds) over ``repeat`` runs of ``fn()``."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return result, best


@pytest.fixture
def report(capsys):
    """Print a benchmark line outside pytest's capture."""

    def _report(name: str, **values):
        parts = [f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in values.items()]
        with capsys.disabled():
            print(f"\n[bench] {name}: " + ", ".join(parts))

    return _report


@pytest.fixture(name="best_of")
def best_of_fixture():
    """The ``best_of`` timer as a fixture (benchmark modules are not a package)."""
    return best_of

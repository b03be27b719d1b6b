"""An algorithm that reads contingency tables only (``reads="counts"``) runs the same from a table's distinct rows
with their counts as from every row, so a release holds those — bounded by the public domain, not by n."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcd.datasets import load_bnlearn
from dpcd.discovery.counted import CountedRows, marginal_table
from dpcd.registry import ALGORITHMS, reads_counts
from dpcd.release.tables import encode_chunks, read_chunks
from dpcd.schema import Schema

COUNTED = sorted(name for name, spec in ALGORITHMS.items() if reads_counts(spec))


def test_the_table_algorithms_read_counts_and_a_variant_with_another_run_reads_rows():
    from dataclasses import replace

    assert {"marginal_pc", "mst_pc", "aim_pc"} <= set(COUNTED)
    assert not reads_counts(replace(ALGORITHMS["marginal_pc"], run=lambda data, **kw: None))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_distinct_rows_do_not_depend_on_the_order_or_the_cut_of_the_records(seed):
    rng = np.random.default_rng(seed)
    levels = [3, 2, 4]
    codes = np.column_stack([rng.integers(0, k, size=500) for k in levels])
    whole = CountedRows.from_codes(codes, ["a", "b", "c"])
    shuffled = CountedRows.from_codes(codes[rng.permutation(500)], ["a", "b", "c"])
    cuts = np.sort(rng.choice(np.arange(1, 500), size=4, replace=False))
    pieces = CountedRows.combine([CountedRows.from_codes(part, ["a", "b", "c"]) for part in np.split(codes, cuts)])
    for other in (shuffled, pieces):
        assert np.array_equal(other.rows, whole.rows) and np.array_equal(other.counts, whole.counts)
    assert whole.shape == (500, 3) and len(whole.rows) <= np.prod(levels)
    for columns in ((0,), (2, 1), (0, 1, 2)):
        assert np.array_equal(marginal_table(whole, levels, columns), marginal_table(codes, levels, columns))


@pytest.mark.parametrize("name", COUNTED)
@pytest.mark.parametrize("seed", [3, 4])
def test_a_counts_algorithm_gives_the_same_run_from_counted_rows(name, seed):
    spec = ALGORITHMS[name]
    sample = load_bnlearn("asia", 3_000, rng=seed)
    counted = CountedRows.from_codes(sample.data.to_numpy(), list(sample.data.columns))
    keywords = {spec.budget_arg: 1.0, "levels": sample.levels, "rng": seed}
    first, second = spec.run(sample.data, **keywords), spec.run(counted, **keywords)
    assert sorted(first.cpdag.edges()) == sorted(second.cpdag.edges())
    assert first.skeleton == second.skeleton


def test_what_a_counted_read_holds_is_bounded_by_the_domain_not_by_n():
    schema = Schema.categorical([2, 3], names=["a", "b"])
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(0, 2, 50_000).astype(str), "b": rng.integers(0, 3, 50_000).astype(str)})
    held, _ = encode_chunks(read_chunks(frame, rows=1_000), schema, schema, counted=True)
    assert isinstance(held, CountedRows) and held.shape == (50_000, 2) and len(held.rows) <= 6
    whole, _ = encode_chunks(read_chunks(frame), schema, schema)
    assert np.array_equal(marginal_table(held, [2, 3], (0, 1)), marginal_table(whole.to_numpy(), [2, 3], (0, 1)))

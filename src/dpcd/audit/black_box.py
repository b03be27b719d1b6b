"""Black-box audits of :func:`dpcd.discover`: a CSV in, the released files out.

Each run writes the data set to a CSV file, calls ``discover`` on it with a
public schema (graph files and ``privacy.json`` into a fresh folder, no
drawing) and reads back what a data holder would publish: the edges of
``graph.json`` plus, as marker triples, the algorithm and the schema hash
recorded in ``privacy.json``. The claim is the requested (ε, δ) under the
requested relation — the promise ``discover`` makes — never what the run
reports.

Cases (:func:`discover_cases`):

* **numeric table, far outlier**: four numeric columns with public bounds;
  D′ replaces one record's first value by 10⁶. The schema clamps it, so the
  release must stay within e^ε.
* **categorical table, tie-breaking record**: the separating-set pair of
  :func:`dpcd.audit.neighbours.sepset_tie_pair` under add/remove.

Each run gets its own generator from the audit, as a release gets fresh
operating-system entropy by default (``rng=None``).

The deliberately broken variants (:func:`broken_discover_cases`) are the
leaks fixed in ``discover``:

* the schema drafted from each data set's values (the pre-fix type and level
  detection): one record with a value no other record has changes the drafted
  schema, hence the recorded schema hash and the coding, with probability one
  — no finite ε covers it;
* the noise drawn from a public seed (the pre-fix default ``rng=0``): the
  release is then a fixed function of the data, and the pair is found by
  replacing records of D one at a time by those of an independent table
  (bisection on the number replaced) until the release at that seed changes —
  probability one on D, zero on D′.

Examples
--------
>>> run = DiscoverRun(schema=None, epsilon=1.0)
>>> run.detect_schema
True
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..schema import Schema, draft_schema
from ..validation import RngLike, as_rng, check_epsilon
from .events import graph_events, observed_outputs_and_markers
from .neighbours import NeighbouringPair, replace_record
from .runner import AuditCase

__all__ = ["DiscoverRun", "MARKER", "discover_cases", "broken_discover_cases"]

MARKER = "#released"
"""First entry of the marker triples (MARKER, field, value) that stand for privacy.json's algorithm and schema."""


@dataclass(frozen=True)
class DiscoverRun:
    """One black-box run of ``dpcd.discover`` (picklable): DataFrame → CSV → discover → released files.

    ``schema``: the public schema as JSON text; None drafts it from each data
    set (BROKEN: the pre-fix detection). ``seed``: None gives each run the
    audit's generator (fresh noise, as a release's default); an integer fixes
    the noise (BROKEN: the pre-fix default seed). Output: a frozenset of the released
    directed edges (an undirected edge both ways) and marker triples for the
    algorithm and the schema hash in ``privacy.json``.
    """

    schema: str | None
    epsilon: float
    delta: float = 1e-6
    relation: str = "replace"
    algorithm: str = "auto"
    alpha: float = 0.05
    seed: int | None = None
    """BROKEN when set: every run releases with this public seed instead of the audit's generator."""

    @property
    def detect_schema(self) -> bool:
        return self.schema is None

    def _schema(self, frame: pd.DataFrame) -> Schema:
        if self.schema is not None:
            return Schema.from_json(self.schema)
        text = frame.astype(str)  # what a CSV holds
        draft = draft_schema(text)
        return Schema(draft.columns, bins=draft.bins)  # the draft accepted unchecked

    def __call__(self, data: pd.DataFrame, rng: Any) -> frozenset:
        from ..release.api import Output, ReleaseOptions, discover

        generator = as_rng(rng) if self.seed is None else self.seed
        with tempfile.TemporaryDirectory(prefix="dpcd-audit-") as folder:
            csv = Path(folder) / "data.csv"
            data.to_csv(csv, index=False)
            out = Path(folder) / "release"
            discover(csv, schema=self._schema(pd.read_csv(csv, dtype=str, keep_default_na=False)),
                     epsilon=self.epsilon, delta=self.delta, relation=self.relation, algorithm=self.algorithm,
                     rng=generator, out=Output(out, draw=False), progress=False,
                     options=ReleaseOptions(alpha=self.alpha, forecast_repetitions=0,
                                            force=True))  # the audit measures the mechanism, whatever its forecast
            graph = json.loads((out / "graph.json").read_text(encoding="utf-8"))
            privacy = json.loads((out / "privacy.json").read_text(encoding="utf-8"))
        edges = [tuple(e) for e in graph["directed_edges"]]
        edges += [tuple(e) for e in graph["undirected_edges"]] + [tuple(e[::-1]) for e in graph["undirected_edges"]]
        markers = [(MARKER, "algorithm", privacy["algorithm"]),
                   (MARKER, "schema", privacy["assumed_public"]["schema"]["sha256"])]
        return frozenset(edges + markers)


def _numeric_pair(rng: np.random.Generator, n: int) -> tuple[NeighbouringPair, Schema]:
    z = rng.normal(size=(n, 4))
    z[:, 1] = 0.9 * z[:, 0] + 0.45 * z[:, 1]
    frame = pd.DataFrame(np.round(z, 4), columns=["a", "b", "c", "d"])
    record = frame.iloc[0].copy()
    record["a"] = 1e6
    pair = replace_record(frame, 0, record.to_numpy(), description="one record's a replaced by 10^6")
    schema = Schema.numeric([(-4.0, 4.0)] * 4, names=["a", "b", "c", "d"])
    return pair, schema


def discover_cases(*, epsilon: float = 1.0, rng: RngLike = 0, size: str = "quick") -> list[AuditCase]:
    """The black-box cases of ``discover`` with a public schema (no violation expected)."""
    from .sepset import sepset_tie_pair

    epsilon = check_epsilon(epsilon)
    generator = as_rng(rng)
    n = {"smoke": 300, "quick": 500, "full": 1000}[size]
    pair, schema = _numeric_pair(generator, n)
    numeric = AuditCase("discover (numeric CSV, far outlier)", DiscoverRun(schema.dumps(), epsilon), pair,
                        graph_events(list(pair.data.columns)), epsilon, 1e-6, False, observed_outputs_and_markers,
                        note=f"auto -> PrivPC*, bounds [-4, 4] public, requested epsilon = {epsilon:g} (replace); "
                             f"{pair.description}")
    tie = sepset_tie_pair(n={"smoke": 2000, "quick": 4000, "full": 6000}[size], rng=generator)
    frame = tie.data if isinstance(tie.data, pd.DataFrame) else pd.DataFrame(tie.data)
    frame_prime = tie.neighbour if isinstance(tie.neighbour, pd.DataFrame) else pd.DataFrame(tie.neighbour)
    frame.columns = frame_prime.columns = [str(c) for c in frame.columns]
    tie_schema = Schema.categorical(tie.meta["levels"], names=list(frame.columns), ordinal=False)
    tie_pair = NeighbouringPair(frame, frame_prime, tie.relation, tie.description, tie.meta)
    categorical = AuditCase("discover (categorical CSV, tie-breaking record)",
                            DiscoverRun(tie_schema.dumps(), epsilon, relation="add/remove", algorithm="em_pc"),
                            tie_pair, graph_events(list(frame.columns)), epsilon, 0.0, False, observed_outputs_and_markers,
                            note=f"EM-PC, requested epsilon = {epsilon:g} (add/remove); {tie.description}")
    return [numeric, categorical]


def broken_discover_cases(*, epsilon: float = 1.0, rng: RngLike = 0, size: str = "quick") -> list[AuditCase]:
    """``discover`` with the schema detected from each data set (the pre-fix behaviour): must be flagged."""
    epsilon = check_epsilon(epsilon)
    generator = as_rng(rng)
    n = {"smoke": 300, "quick": 500, "full": 1000}[size]
    codes = generator.integers(0, 3, size=(n, 4))
    codes[:, 1] = (codes[:, 0] + (generator.random(n) < 0.2)) % 3
    frame = pd.DataFrame(codes, columns=["a", "b", "c", "d"])
    record = frame.iloc[0].to_numpy().astype(object)
    record[0] = 3  # a fourth level of a, seen in no other record
    pair = replace_record(frame.astype(object), 0, record,
                          description="one record with a level of a that no other record has")
    case = AuditCase("BROKEN discover with a schema detected from the data", DiscoverRun(None, epsilon), pair,
                     graph_events(list(frame.columns)), epsilon, 1e-6, False, observed_outputs_and_markers,
                     note=f"requested epsilon = {epsilon:g} (replace); the drafted levels depend on the record",
                     expect_violation=True)
    seeded = DiscoverRun(Schema.categorical([2, 2, 2], names=["a", "b", "c"]).dumps(), epsilon, algorithm="lapmech",
                         seed=0)
    fixed = AuditCase("BROKEN discover with a public default seed", seeded,
                      _fixed_seed_pair(seeded, generator, {"smoke": 200, "quick": 300, "full": 400}[size]),
                      graph_events(["a", "b", "c"]), epsilon, 1e-6, False, observed_outputs_and_markers,
                      note=f"LapMech, requested epsilon = {epsilon:g} (replace); every run uses seed 0, so the "
                           "release is a fixed function of the data", expect_violation=True)
    return [case, fixed]


def _fixed_seed_pair(run: DiscoverRun, rng: np.random.Generator, n: int) -> NeighbouringPair:
    """Neighbours on which ``run`` (a fixed seed) releases different graphs.

    D₀: binary a, b = a flipped with probability 0.1, c independent; D_n: b
    independent and c = a flipped with probability 0.1. Replacing the first k
    records of D₀ by those of D_n, the release at the fixed seed is a function
    of k; where it differs at k = 0 and k = n (new tables are drawn until it
    does), bisection finds k with release(k) ≠ release(k + 1): two tables that
    differ in record k.
    """
    for _ in range(20):
        a = rng.integers(0, 2, n)
        start = pd.DataFrame({"a": a, "b": a ^ (rng.random(n) < 0.1), "c": rng.integers(0, 2, n)}).astype(int)
        end = start.assign(b=rng.integers(0, 2, n), c=a ^ (rng.random(n) < 0.1)).astype(int)
        released = run(start, None)
        if run(end, None) != released:
            break
    else:
        raise RuntimeError("the fixed-seed release did not change between two end tables in 20 draws")
    lo, hi = 0, n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if run(_first_rows_from(end, start, mid), None) == released:
            lo = mid
        else:
            hi = mid
    return replace_record(_first_rows_from(end, start, lo), lo, end.iloc[lo].to_numpy(),
                          description=f"record {lo} replaced: the release at seed {run.seed} changes")


def _first_rows_from(end: pd.DataFrame, start: pd.DataFrame, k: int) -> pd.DataFrame:
    """``start`` with its first ``k`` records replaced by those of ``end``."""
    return pd.concat([end.iloc[:k], start.iloc[k:]], ignore_index=True)

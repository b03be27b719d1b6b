"""A large sample of a bnlearn network written to disk in chunks, for the release path's scale benchmark.

``python -m dpcd_papers sample alarm --rows 100000000 --out alarm-1e8`` writes a folder of Parquet parts (or, with
``--format csv``, one CSV) of forward samples of the network (:func:`dpcd.datasets.load_bnlearn`), ``rows_per_part``
records at a time, so that memory stays that of one part whatever ``rows``; ``<out>.schema.json`` beside the data is
the network's public schema (its states, never the sample). Part k is drawn from the k-th child of ``seed``'s
generator, so the same arguments give the same files.

>>> import tempfile
>>> from dpcd.release.tables import table_shape
>>> with tempfile.TemporaryDirectory() as folder:
...     data = write_sample("asia", 2_500, Path(folder) / "asia", rows_per_part=1_000, seed=1)
...     table_shape(data)[1], sorted(p.name for p in Path(folder).glob("asia*/*")), Path(folder, "asia.schema.json").is_file()
(2500, ['part-00000.parquet', 'part-00001.parquet', 'part-00002.parquet'], True)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from dpcd.datasets import load_bnlearn
from dpcd.validation import check_int

__all__ = ["write_sample", "FORMATS"]

FORMATS = ("parquet", "csv")


def write_sample(network: str, rows: int, out: str | os.PathLike[str], *, rows_per_part: int = 1_000_000,
                 seed: int = 0, format: str = "parquet") -> Path:
    """Write ``rows`` forward samples of ``network`` to ``out`` in parts of ``rows_per_part``; return the data's path.

    ``format="parquet"``: ``out`` becomes a folder of ``part-NNNNN.parquet`` files (int8 or int16 codes), which
    :func:`dpcd.discover` reads as one table; ``"csv"``: ``out.csv``, written part by part. Either way the schema
    goes to ``out.schema.json``, beside the data (never among the parts, which hold nothing else).
    """
    rows = check_int(rows, "rows", minimum=1)
    rows_per_part = check_int(rows_per_part, "rows_per_part", minimum=1)
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
    out = Path(out)
    first = load_bnlearn(network, 1, rng=0)
    data = out if format == "parquet" else out.with_suffix(".csv")
    if data.exists():
        raise FileExistsError(f"out: {os.fspath(data)!r} exists; choose a new name")
    out.parent.mkdir(parents=True, exist_ok=True)
    if format == "parquet":
        out.mkdir()
    schema_path = out.with_suffix(".schema.json")
    schema_path.write_text(json.dumps(first.schema().to_json(), indent=1) + "\n", encoding="utf-8")
    dtype = np.int8 if max(first.levels) <= 127 else np.int16
    parts = -(-rows // rows_per_part)
    children = np.random.default_rng(seed).spawn(parts)
    for k, rng in enumerate(children):
        size = min(rows_per_part, rows - k * rows_per_part)
        frame = load_bnlearn(network, size, rng=rng).data.astype(dtype)
        if format == "parquet":
            frame.to_parquet(out / f"part-{k:05d}.parquet", index=False, row_group_size=min(size, 250_000))
        else:
            frame.to_csv(data, mode="a", header=k == 0, index=False)
    return data

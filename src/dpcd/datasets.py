"""Datasets: bnlearn networks sampled with a seed, synthetic generators, real data.

Every loader returns a :class:`Dataset`: the data plus the true DAG where one exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Literal

import networkx as nx
import pandas as pd


@dataclass(frozen=True)
class Dataset:
    """Data plus the true causal DAG (``None`` where the truth is unknown).

    ``data`` columns are the DAG's node names. Discrete data are integer codes
    0..k-1; ``categories`` maps each column to its original state labels.
    Unpacks as ``data, dag = dataset``.
    """

    data: pd.DataFrame
    dag: nx.DiGraph | None
    name: str = ""
    kind: Literal["discrete", "continuous"] = "discrete"
    categories: dict[str, list[str]] | None = None
    meta: dict = field(default_factory=dict)

    def __iter__(self) -> Iterator:
        yield self.data
        yield self.dag

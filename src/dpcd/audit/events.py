"""Output events of an audit: thresholds, equalities and graph properties, each a picklable indicator.

An :class:`Event` maps a batch of outputs to one boolean per output; the
auditor counts them on both data sets. Graph outputs are compared as
:func:`graph_key` sets of directed edges (an undirected PDAG edge is stored
both ways).

Examples
--------
>>> import numpy as np
>>> at_least(1.0)(np.array([0.5, 1.0, 2.0])).tolist()
[False, True, True]
>>> edge_present("a", "b")([frozenset({("a", "b")}), frozenset()]).tolist()
[True, False]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from ..validation import check_int

__all__ = ["Event", "as_batch_array", "at_least", "threshold_events", "equals", "graph_key", "edge_present",
           "graph_equals", "observed_outputs", "graph_events", "check_events"]


@dataclass(frozen=True)
class Event:
    """An output event: ``indicator(batch)`` returns one bool per output of the batch."""

    name: str
    indicator: Callable[[Any], np.ndarray] = field(repr=False, compare=False)

    def __call__(self, batch: Any) -> np.ndarray:
        values = np.asarray(self.indicator(batch), dtype=bool)
        return values


def as_batch_array(batch: Any) -> np.ndarray:
    """A batch of outputs as one array (a list or tuple of outputs stacked; an array as it is).

    >>> as_batch_array([1.0, 2.0]).shape
    (2,)
    """
    if isinstance(batch, np.ndarray):
        return batch
    return np.asarray(list(batch) if not isinstance(batch, (list, tuple)) else batch)


def at_least(threshold: float, *, coordinate: int | None = None, name: str | None = None) -> Event:
    """Event "output ≥ threshold" (of coordinate ``coordinate`` of a vector output)."""
    threshold = float(threshold)
    label = name or (f"M ≥ {threshold:.4g}" if coordinate is None else f"M[{coordinate}] ≥ {threshold:.4g}")

    def indicator(batch: Any) -> np.ndarray:
        values = as_batch_array(batch).astype(np.float64, copy=False)
        if coordinate is not None:
            values = values.reshape(values.shape[0], -1)[:, coordinate]
        return values >= threshold

    return Event(label, indicator)


def threshold_events(thresholds: Iterable[float], *, coordinate: int | None = None) -> list[Event]:
    """One :func:`at_least` event per threshold (the complements are added by :func:`audit`)."""
    return [at_least(t, coordinate=coordinate) for t in thresholds]


def equals(value: Any, *, name: str | None = None) -> Event:
    """Event "output equals ``value``" (elementwise ``==`` on arrays, else per output)."""
    label = name or f"M = {value!r}"

    def indicator(batch: Any) -> np.ndarray:
        if isinstance(batch, np.ndarray) and batch.ndim == 1 and np.isscalar(value):
            return batch == value
        if isinstance(batch, np.ndarray) and batch.ndim > 1:
            target = np.asarray(value)
            return np.all(batch.reshape(batch.shape[0], -1) == target.reshape(1, -1), axis=1)
        return np.fromiter((output == value for output in batch), dtype=bool, count=len(batch))

    return Event(label, indicator)


def graph_key(graph: Any) -> frozenset[tuple[Hashable, Hashable]]:
    """A hashable form of a graph output: the frozenset of its directed edges.

    Accepts a ``networkx`` graph (an undirected PDAG edge is stored both ways,
    as in :mod:`dpcd.graphs`) or any object with a ``cpdag`` attribute (a
    ``PCResult``).
    """
    if hasattr(graph, "cpdag"):
        graph = graph.cpdag
    if isinstance(graph, nx.Graph):
        if graph.is_directed():
            return frozenset((u, v) for u, v in graph.edges)
        return frozenset([(u, v) for u, v in graph.edges] + [(v, u) for u, v in graph.edges])
    if isinstance(graph, frozenset):
        return graph
    raise TypeError(f"graph must be a networkx graph or a result with a cpdag, got {type(graph).__name__}")


def edge_present(u: Hashable, v: Hashable, *, oriented: bool = False) -> Event:
    """Event "the output graph has an edge between u and v" (``oriented``: the edge u → v only).

    Outputs must be :func:`graph_key` sets.
    """
    if oriented:
        def indicator(batch: Any) -> np.ndarray:
            return np.fromiter(((u, v) in g and (v, u) not in g for g in batch), dtype=bool, count=len(batch))

        return Event(f"{u} → {v}", indicator)

    def indicator(batch: Any) -> np.ndarray:
        return np.fromiter(((u, v) in g or (v, u) in g for g in batch), dtype=bool, count=len(batch))

    return Event(f"{u} − {v} adjacent", indicator)


def graph_equals(graph: Any, *, name: str | None = None) -> Event:
    """Event "the output graph equals ``graph``" (compared as :func:`graph_key` sets)."""
    key = graph_key(graph)
    label = name or "G = {" + ", ".join("→".join(map(str, edge)) for edge in sorted(key, key=str)) + "}"

    def indicator(batch: Any) -> np.ndarray:
        return np.fromiter((g == key for g in batch), dtype=bool, count=len(batch))

    return Event(label, indicator)


def observed_outputs(*outputs: Sequence[Any], max_events: int = 20) -> list[Event]:
    """One "output equals v" event for each of the ``max_events`` most frequent outputs.

    Takes one or several samples of outputs (e.g. the selection samples on D
    and D′) and pools them. Meant as ``propose`` for :func:`audit` with discrete
    outputs (indices, answer patterns, graph keys): the candidates come from
    the selection sample, never from the runs that are bounded.
    """
    max_events = check_int(max_events, "max_events", minimum=1)
    keys: list = []
    for sample in outputs:
        if isinstance(sample, np.ndarray) and sample.ndim > 1:
            keys.extend(tuple(row) for row in sample.reshape(sample.shape[0], -1).tolist())
        else:
            keys.extend(sample.tolist() if isinstance(sample, np.ndarray) else sample)
    events = []
    for value, _ in Counter(keys).most_common(max_events):
        if isinstance(value, frozenset):
            events.append(graph_equals(value))
        else:
            events.append(equals(value, name=f"M = {value!r}"))
    return events


def contains(item: Hashable, *, name: str | None = None) -> Event:
    """Event "the output set holds ``item``" (e.g. a marker of what ``privacy.json`` says)."""
    def indicator(batch: Any) -> np.ndarray:
        return np.fromiter((item in output for output in batch), dtype=bool, count=len(batch))

    return Event(name or f"holds {item!r}", indicator)


def observed_outputs_and_markers(*outputs: Sequence[Any], max_events: int = 20) -> list[Event]:
    """:func:`observed_outputs`, plus one :func:`contains` event per marker seen in a released set.

    A black-box release's output set holds its edges and marker triples
    ``("#released", field, value)`` (the algorithm, the schema's hash): a
    marker that differs between neighbours is an event of probability 1 on one
    and 0 on the other, whatever the graphs do.
    """
    markers = sorted({item for sample in outputs for output in sample if isinstance(output, frozenset)
                      for item in output if isinstance(item, tuple) and len(item) == 3 and item[0] == "#released"},
                     key=str)
    return observed_outputs(*outputs, max_events=max_events) + [contains(m, name=f"{m[1]} = {m[2]}")
                                                                for m in markers]


def graph_events(nodes: Sequence[Hashable]) -> tuple[Event, ...]:
    """For every pair of nodes: "adjacent", "a → b" and "b → a" (the events of a graph audit)."""
    events = []
    for i, a in enumerate(nodes):
        for b in nodes[i + 1:]:
            events += [edge_present(a, b), edge_present(a, b, oriented=True), edge_present(b, a, oriented=True)]
    return tuple(events)


def check_events(events: Any) -> list[Event]:
    """``events`` as a list of :class:`Event` (one Event is accepted)."""
    if isinstance(events, Event):
        return [events]
    if isinstance(events, (str, bytes)) or not isinstance(events, Iterable):
        raise TypeError("events must be an Event or a list of Events")
    events = list(events)
    for event in events:
        if not isinstance(event, Event):
            raise TypeError(f"events must hold Event objects (see dpcd.audit.at_least), got {type(event).__name__}")
    return events

"""Empirical privacy auditing: a high-confidence lower bound on ε from output frequencies.

A mechanism ``M`` is (ε, δ)-differentially private when, for every pair of
neighbouring data sets D, D′ and every output event E,

    P[M(D) ∈ E] ≤ e^ε · P[M(D′) ∈ E] + δ        (and with D, D′ swapped).

So if M is run many times on D and on D′ and the event frequencies give a
lower confidence bound p̲₀ on P[M(D) ∈ E] and an upper bound p̄₁ on
P[M(D′) ∈ E], then

    ε ≥ ln((p̲₀ − δ) / p̄₁)

holds with the stated confidence for *every* ε for which M is (ε, δ)-DP. The
auditor reports that lower bound (Clopper–Pearson intervals, each one-sided at
half the error rate) for the best event of a family, and flags a *violation*
when it exceeds the claimed ε: the claim is then refuted at that confidence.
A bound below the claim proves nothing about correctness; it only says this
pair and these events did not expose a problem (the statistical method of
Ding et al. 2018 and the auditing of Jagielski et al. 2020, Nasr et al. 2021).

Choosing the best event on the same runs that bound it would overstate the
bound, so :func:`audit` either selects the event, its complement and the
direction on a separate *selection* sample and bounds it on fresh runs
(``selection="holdout"``, the default), or bounds every candidate at once with
a Bonferroni correction (``selection="bonferroni"``). Either way the returned
bound holds at the stated confidence.

Running many copies
-------------------
A mechanism is a function ``mechanism(data, rng)`` returning one output; a
*vectorised* mechanism (``vectorised=True``) is ``mechanism(data, rng, size)``
returning a batch of ``size`` independent outputs (an array whose first axis
is the run, or a list). Runs are split in chunks, each with its own child seed
of a :class:`numpy.random.SeedSequence` (same ``rng`` ⇒ same result whatever
``n_jobs``), and chunks run in parallel with joblib. Events are evaluated in
the workers, so only counts travel back: 10⁶ runs of a vectorised Laplace
mechanism take well under a second.

Events
------
An :class:`Event` maps a batch of outputs to a boolean array. Constructors:
:func:`at_least` ("statistic ≥ c", optionally of one coordinate),
:func:`threshold_events` (a family of thresholds), :func:`equals` ("output
equals v"), :func:`edge_present` and :func:`graph_equals` for graph outputs
(encoded as frozensets of directed edges by :func:`graph_key`), and
:func:`observed_outputs` (one "output equals v" event per frequent output of
the selection sample, for discrete outputs).

Test cases
----------
:class:`AuditCase` bundles a mechanism, a :class:`~dpcd.neighbours.NeighbouringPair`,
events and the claim. :func:`mechanism_cases` gives the cases of the library's
mechanisms (Laplace, Gaussian, analytic Gaussian, exponential mechanism, sparse
vector) on adversarial pairs; :func:`broken_cases` gives deliberately broken
variants (noise scale halved, sensitivity under-stated by a factor of 2, a
sparse vector that re-uses one noise draw for every query) that the auditor
must flag. :data:`ALGORITHMS` registers the private discovery algorithms
(callable, neighbouring relation, adversarial pair, events); see
:func:`available_algorithms` and :func:`algorithm_case`.

References
----------
.. [CP34] C. J. Clopper, E. S. Pearson. The use of confidence or fiducial limits
   illustrated in the case of the binomial. Biometrika 26(4), 1934.
.. [DWWZK18] Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer. Detecting Violations
   of Differential Privacy. CCS 2018.
.. [JUO20] M. Jagielski, J. Ullman, A. Oprea. Auditing Differentially Private
   Machine Learning: How Private is Private SGD? NeurIPS 2020.
.. [NSTPC21] M. Nasr, S. Song, A. Thakurta, N. Papernot, N. Carlini. Adversary
   Instantiation: Lower Bounds for Differentially Private Machine Learning. IEEE S&P 2021.
.. [LSL17] M. Lyu, D. Su, N. Li. Understanding the Sparse Vector Technique for
   Differential Privacy. PVLDB 10(6), 2017.
.. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. 2014.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import networkx as nx
import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy import stats

from ._validation import RngLike, as_rng, check_delta, check_epsilon, check_int, check_probability
from .neighbours import NeighbouringPair, add_record, replace_record
from .privacy import (
    SparseVector,
    analytic_gaussian_sigma,
    exponential_mechanism,
    gaussian_mechanism,
    gaussian_sigma,
    laplace_mechanism,
)

__all__ = [
    "Event",
    "AuditResult",
    "AuditCase",
    "AlgorithmSpec",
    "ALGORITHMS",
    "clopper_pearson",
    "epsilon_lower_bound",
    "at_least",
    "threshold_events",
    "equals",
    "edge_present",
    "graph_equals",
    "graph_key",
    "observed_outputs",
    "sample_outputs",
    "count_events",
    "audit",
    "run_case",
    "mechanism_cases",
    "broken_cases",
    "available_algorithms",
    "algorithm_case",
    "runs_for_budget",
    "sieve_case",
    "ANM_SCORES",
    "anm_test_pair",
    "anm_case",
]

Selection = Literal["holdout", "bonferroni"]


# --------------------------------------------------------------------------- statistics


def clopper_pearson(
    k: Any, n: Any, *, confidence: float = 0.95, side: Literal["two-sided", "lower", "upper"] = "two-sided"
) -> tuple[np.ndarray | float, np.ndarray | float]:
    """Clopper–Pearson (exact binomial) confidence interval for ``k`` successes in ``n`` trials.

    ``side="lower"`` gives a one-sided interval [low, 1] at ``confidence``,
    ``"upper"`` gives [0, high], ``"two-sided"`` puts (1 − confidence)/2 in each
    tail [CP34]. Vectorised over ``k`` and ``n``; returns ``(low, high)``
    (floats for scalar input).
    """
    confidence = check_probability(confidence, "confidence")
    if side not in ("two-sided", "lower", "upper"):
        raise ValueError(f"side must be 'two-sided', 'lower' or 'upper', got {side!r}")
    k_arr = np.asarray(k, dtype=np.float64)
    n_arr = np.asarray(n, dtype=np.float64)
    if np.any(n_arr < 1) or np.any(n_arr != np.round(n_arr)):
        raise ValueError("n must hold positive integers")
    if np.any(k_arr < 0) or np.any(k_arr > n_arr) or np.any(k_arr != np.round(k_arr)):
        raise ValueError("k must hold integers between 0 and n")
    tail = 1.0 - confidence if side != "two-sided" else (1.0 - confidence) / 2.0
    with np.errstate(invalid="ignore"):
        low = np.where(k_arr > 0, stats.beta.ppf(tail, k_arr, n_arr - k_arr + 1), 0.0)
        high = np.where(k_arr < n_arr, stats.beta.ppf(1.0 - tail, k_arr + 1, n_arr - k_arr), 1.0)
    if side == "lower":
        high = np.ones_like(high)
    elif side == "upper":
        low = np.zeros_like(low)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def epsilon_lower_bound(
    k0: Any, n0: Any, k1: Any, n1: Any, *, delta: float = 0.0, confidence: float = 0.95
) -> np.ndarray | float:
    """Lower confidence bound on ε from event counts ``k0/n0`` on D and ``k1/n1`` on D′.

    ε̲ = ln((p̲₀ − δ) / p̄₁) with p̲₀ the one-sided Clopper–Pearson lower bound of
    P[M(D) ∈ E] and p̄₁ the upper bound of P[M(D′) ∈ E], each at error
    (1 − confidence)/2, so that with probability ≥ ``confidence`` every ε for
    which the mechanism is (ε, δ)-DP is ≥ ε̲ (union bound). Clipped at 0
    (no information). Vectorised.
    """
    confidence = check_probability(confidence, "confidence")
    delta = check_delta(delta, allow_zero=True)
    per_side = 1.0 - (1.0 - confidence) / 2.0
    low0, _ = clopper_pearson(k0, n0, confidence=per_side, side="lower")
    _, high1 = clopper_pearson(k1, n1, confidence=per_side, side="upper")
    numerator = np.asarray(low0, dtype=np.float64) - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(numerator > 0, np.log(np.maximum(numerator, 1e-300) / np.asarray(high1)), 0.0)
    bound = np.maximum(bound, 0.0)
    return float(bound) if bound.ndim == 0 else bound


# --------------------------------------------------------------------------- events


@dataclass(frozen=True)
class Event:
    """An output event: ``indicator(batch)`` returns one bool per output of the batch."""

    name: str
    indicator: Callable[[Any], np.ndarray] = field(repr=False, compare=False)

    def __call__(self, batch: Any) -> np.ndarray:
        values = np.asarray(self.indicator(batch), dtype=bool)
        return values


def _as_batch_array(batch: Any) -> np.ndarray:
    if isinstance(batch, np.ndarray):
        return batch
    return np.asarray(list(batch) if not isinstance(batch, (list, tuple)) else batch)


def at_least(threshold: float, *, coordinate: int | None = None, name: str | None = None) -> Event:
    """Event "output ≥ threshold" (of coordinate ``coordinate`` of a vector output)."""
    threshold = float(threshold)
    label = name or (f"M ≥ {threshold:.4g}" if coordinate is None else f"M[{coordinate}] ≥ {threshold:.4g}")

    def indicator(batch: Any) -> np.ndarray:
        values = _as_batch_array(batch).astype(np.float64, copy=False)
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
    label = name or "G = {" + ", ".join(f"{a}→{b}" for a, b in sorted(key, key=str)) + "}"

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


# --------------------------------------------------------------------------- running


def _chunks(n_runs: int, chunk_size: int) -> list[int]:
    sizes = [chunk_size] * (n_runs // chunk_size)
    if n_runs % chunk_size:
        sizes.append(n_runs % chunk_size)
    return sizes


def _run_chunk(mechanism: Callable, data: Any, size: int, seed: np.random.SeedSequence, vectorised: bool) -> Any:
    generator = np.random.default_rng(seed)
    if vectorised:
        batch = mechanism(data, generator, size)
        if len(batch) != size:
            raise ValueError(f"a vectorised mechanism must return {size} outputs, got {len(batch)}")
        return batch
    return [mechanism(data, generator) for _ in range(size)]


def _count_chunk(mechanism, data, size, seed, vectorised, events) -> np.ndarray:
    batch = _run_chunk(mechanism, data, size, seed, vectorised)
    return np.array([int(np.count_nonzero(event(batch))) for event in events], dtype=np.int64)


def _seeds(rng: RngLike, count: int) -> list[np.random.SeedSequence]:
    generator = as_rng(rng)
    entropy = generator.integers(0, 2**63 - 1, size=4, dtype=np.int64)
    return np.random.SeedSequence([int(e) for e in entropy]).spawn(count)


def _default_chunk(n_runs: int, vectorised: bool, n_jobs: int) -> int:
    if vectorised:
        return max(1, min(n_runs, 100_000))
    workers = max(1, n_jobs if n_jobs > 0 else 2)
    return max(1, min(2_000, math.ceil(n_runs / (4 * workers))))


def _check_mechanism_args(mechanism, n_runs, n_jobs, chunk_size, vectorised):
    if not callable(mechanism):
        raise TypeError(f"mechanism must be callable as mechanism(data, rng), got {type(mechanism).__name__}")
    n_runs = check_int(n_runs, "n_runs", minimum=1)
    n_jobs = check_int(n_jobs, "n_jobs")
    if n_jobs == 0:
        raise ValueError("n_jobs must be a positive number of processes or negative (joblib convention), not 0")
    if not isinstance(vectorised, (bool, np.bool_)):
        raise TypeError(f"vectorised must be True or False, got {type(vectorised).__name__}")
    chunk_size = _default_chunk(n_runs, vectorised, n_jobs) if chunk_size is None else check_int(
        chunk_size, "chunk_size", minimum=1)
    return n_runs, n_jobs, chunk_size


def sample_outputs(
    mechanism: Callable, data: Any, *, n_runs: int, rng: RngLike, vectorised: bool = False,
    n_jobs: int = 1, chunk_size: int | None = None,
) -> np.ndarray | list:
    """``n_runs`` independent outputs of ``mechanism`` on ``data`` (array or list, in run order).

    Reproducible: the same ``rng`` gives the same outputs for every ``n_jobs``.
    """
    n_runs, n_jobs, chunk_size = _check_mechanism_args(mechanism, n_runs, n_jobs, chunk_size, vectorised)
    sizes = _chunks(n_runs, chunk_size)
    seeds = _seeds(rng, len(sizes))
    jobs = (delayed(_run_chunk)(mechanism, data, s, seed, bool(vectorised)) for s, seed in zip(sizes, seeds))
    if n_jobs == 1 or len(sizes) == 1:
        parts = [_run_chunk(mechanism, data, s, seed, bool(vectorised)) for s, seed in zip(sizes, seeds)]
    else:
        parts = Parallel(n_jobs=n_jobs)(jobs)
    if all(isinstance(p, np.ndarray) for p in parts):
        return np.concatenate(parts, axis=0)
    out: list = []
    for part in parts:
        out.extend(list(part))
    return out


def count_events(
    mechanism: Callable, data: Any, events: Sequence[Event], *, n_runs: int, rng: RngLike,
    vectorised: bool = False, n_jobs: int = 1, chunk_size: int | None = None,
) -> np.ndarray:
    """How often each event occurs in ``n_runs`` runs of ``mechanism`` on ``data`` (int array).

    Events are evaluated where the runs happen (in the joblib workers), so
    memory stays bounded by one chunk of outputs.
    """
    n_runs, n_jobs, chunk_size = _check_mechanism_args(mechanism, n_runs, n_jobs, chunk_size, vectorised)
    events = _check_events(events)
    sizes = _chunks(n_runs, chunk_size)
    seeds = _seeds(rng, len(sizes))
    if n_jobs == 1 or len(sizes) == 1:
        parts = [_count_chunk(mechanism, data, s, seed, bool(vectorised), events) for s, seed in zip(sizes, seeds)]
    else:
        parts = Parallel(n_jobs=n_jobs)(
            delayed(_count_chunk)(mechanism, data, s, seed, bool(vectorised), events) for s, seed in zip(sizes, seeds)
        )
    return np.sum(parts, axis=0).astype(np.int64)


def _check_events(events: Any) -> list[Event]:
    if isinstance(events, Event):
        return [events]
    if isinstance(events, (str, bytes)) or not isinstance(events, Iterable):
        raise TypeError("events must be an Event or a list of Events")
    events = list(events)
    for event in events:
        if not isinstance(event, Event):
            raise TypeError(f"events must hold Event objects (see dpcd.audit.at_least), got {type(event).__name__}")
    return events


# --------------------------------------------------------------------------- the audit


@dataclass(frozen=True)
class AuditResult:
    """Outcome of one audit.

    ``epsilon_lower`` is a lower bound on every ε for which the mechanism is
    (ε, ``delta``)-DP, valid with probability ≥ ``confidence``; ``violation``
    is True when it exceeds ``claimed_epsilon`` (the claim is refuted).
    ``event`` is the selected event (possibly "not …", the complement),
    ``direction`` says which data set is in the numerator ("D vs D′" means
    P[M(D) ∈ E] ≤ e^ε P[M(D′) ∈ E] + δ was tested). ``k0/n0`` and ``k1/n1``
    are its counts on the numerator and denominator data sets.
    ``candidates`` holds the per-candidate estimates on the selection
    sample (holdout) or all bounds (Bonferroni).
    """

    name: str
    claimed_epsilon: float
    delta: float
    epsilon_lower: float
    confidence: float
    event: str
    direction: str
    k0: int
    n0: int
    k1: int
    n1: int
    relation: str
    pair: str
    selection: str
    n_candidates: int
    candidates: pd.DataFrame = field(repr=False, compare=False)

    @property
    def violation(self) -> bool:
        return self.epsilon_lower > self.claimed_epsilon

    @property
    def p0(self) -> float:
        return self.k0 / self.n0

    @property
    def p1(self) -> float:
        return self.k1 / self.n1

    def to_row(self) -> dict[str, Any]:
        """A flat dict for a summary table."""
        return {
            "name": self.name,
            "relation": self.relation,
            "pair": self.pair,
            "claimed_epsilon": self.claimed_epsilon,
            "delta": self.delta,
            "epsilon_lower": self.epsilon_lower,
            "ratio": self.epsilon_lower / self.claimed_epsilon,
            "violation": self.violation,
            "event": self.event,
            "direction": self.direction,
            "p0": self.p0,
            "p1": self.p1,
            "runs_per_dataset": self.n0,
            "confidence": self.confidence,
            "selection": self.selection,
        }


def _both_sided_counts(counts0: np.ndarray, counts1: np.ndarray, n0: int, n1: int, names: list[str]):
    """Candidates: (event | complement) × (D vs D′ | D′ vs D) as arrays of k_num, n_num, k_den, n_den."""
    rows = []
    for i, name in enumerate(names):
        for complement in (False, True):
            a = n0 - counts0[i] if complement else counts0[i]
            b = n1 - counts1[i] if complement else counts1[i]
            label = f"not ({name})" if complement else name
            rows.append((i, complement, "D vs D′", label, a, n0, b, n1))
            rows.append((i, complement, "D′ vs D", label, b, n1, a, n0))
    frame = pd.DataFrame(rows, columns=["index", "complement", "direction", "event", "k0", "n0", "k1", "n1"])
    return frame


def audit(
    mechanism: Callable,
    pair: NeighbouringPair,
    events: Sequence[Event] | Event | None = None,
    *,
    epsilon: float,
    delta: float = 0.0,
    n_runs: int = 100_000,
    n_select: int | None = None,
    selection: Selection = "holdout",
    propose: Callable[[Any, Any], Sequence[Event]] | None = None,
    confidence: float = 0.95,
    rng: RngLike,
    vectorised: bool = False,
    n_jobs: int = 1,
    chunk_size: int | None = None,
    name: str = "",
) -> AuditResult:
    """Audit a claim "``mechanism`` is (``epsilon``, ``delta``)-DP" on one neighbouring pair.

    Parameters
    ----------
    mechanism
        ``mechanism(data, rng)`` → one output, or ``mechanism(data, rng, size)``
        → ``size`` outputs with ``vectorised=True``.
    pair
        The neighbouring data sets D (``pair.data``) and D′ (``pair.neighbour``)
        under the relation the mechanism's claim is made for.
    events
        Candidate events; each is also tried as its complement and in both
        directions (4 candidates per event).
    epsilon, delta
        The claim being audited; the bound is on ε at this δ.
    n_runs
        Runs on each data set used for the final bound.
    n_select, selection
        ``"holdout"``: ``n_select`` further runs per data set (default
        ``max(n_runs // 4, 1)``) choose the candidate with the largest bound,
        which is then bounded on the ``n_runs`` fresh runs at ``confidence``.
        ``"bonferroni"``: every candidate is bounded on the ``n_runs`` runs at
        confidence 1 − (1 − confidence)/m for m candidates and the largest is
        reported (``n_select`` must then be unset or 0).
    propose
        Optional ``propose(outputs_D, outputs_D′)`` → more candidate events,
        computed from the selection sample (holdout only), e.g.
        :func:`observed_outputs` for graph outputs.
    confidence
        Probability that the reported bound is ≤ the true ε (for every ε the
        mechanism satisfies at ``delta``).
    rng
        Generator or seed; D and D′ get independent streams.

    Returns
    -------
    AuditResult
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=True)
    confidence = check_probability(confidence, "confidence")
    if not isinstance(pair, NeighbouringPair):
        raise TypeError(f"pair must be a dpcd.neighbours.NeighbouringPair, got {type(pair).__name__}")
    if selection not in ("holdout", "bonferroni"):
        raise ValueError(f"selection must be 'holdout' or 'bonferroni', got {selection!r}")
    events = [] if events is None else _check_events(events)
    n_runs, n_jobs, chunk_size = _check_mechanism_args(mechanism, n_runs, n_jobs, chunk_size, vectorised)
    if propose is not None and selection != "holdout":
        raise ValueError("propose needs selection='holdout' (events chosen on the runs they are bounded on "
                         "would invalidate the confidence level)")
    if propose is not None and not callable(propose):
        raise TypeError("propose must be callable as propose(outputs_D, outputs_D_prime)")
    generator = as_rng(rng)
    streams = generator.spawn(4)
    kwargs = dict(vectorised=vectorised, n_jobs=n_jobs, chunk_size=chunk_size)

    if selection == "bonferroni":
        if n_select:
            raise ValueError("n_select must be unset or 0 with selection='bonferroni'")
        if not events:
            raise ValueError("events must not be empty with selection='bonferroni'")
        counts0 = count_events(mechanism, pair.data, events, n_runs=n_runs, rng=streams[0], **kwargs)
        counts1 = count_events(mechanism, pair.neighbour, events, n_runs=n_runs, rng=streams[1], **kwargs)
        table = _both_sided_counts(counts0, counts1, n_runs, n_runs, [e.name for e in events])
        per_bound = 1.0 - (1.0 - confidence) / len(table)
        table["epsilon_lower"] = epsilon_lower_bound(
            table["k0"].to_numpy(), table["n0"].to_numpy(), table["k1"].to_numpy(), table["n1"].to_numpy(),
            delta=delta, confidence=per_bound)
        best = table.iloc[int(np.argmax(table["epsilon_lower"].to_numpy()))]
        return AuditResult(
            name=name, claimed_epsilon=epsilon, delta=delta, epsilon_lower=float(best["epsilon_lower"]),
            confidence=confidence, event=str(best["event"]), direction=str(best["direction"]),
            k0=int(best["k0"]), n0=int(best["n0"]), k1=int(best["k1"]), n1=int(best["n1"]),
            relation=pair.relation, pair=pair.description, selection="bonferroni", n_candidates=len(table),
            candidates=table,
        )

    n_select = max(n_runs // 4, 1) if n_select is None else check_int(n_select, "n_select", minimum=1)
    if propose is not None:
        sel0 = sample_outputs(mechanism, pair.data, n_runs=n_select, rng=streams[0], **kwargs)
        sel1 = sample_outputs(mechanism, pair.neighbour, n_runs=n_select, rng=streams[1], **kwargs)
        candidates = events + _check_events(propose(sel0, sel1))
        if not candidates:
            raise ValueError("no candidate events: pass events or a propose function that returns some")
        counts0 = np.array([np.count_nonzero(e(sel0)) for e in candidates], dtype=np.int64)
        counts1 = np.array([np.count_nonzero(e(sel1)) for e in candidates], dtype=np.int64)
    else:
        if not events:
            raise ValueError("events must not be empty (or pass propose)")
        candidates = events
        counts0 = count_events(mechanism, pair.data, candidates, n_runs=n_select, rng=streams[0], **kwargs)
        counts1 = count_events(mechanism, pair.neighbour, candidates, n_runs=n_select, rng=streams[1], **kwargs)
    table = _both_sided_counts(counts0, counts1, n_select, n_select, [e.name for e in candidates])
    table["epsilon_lower"] = epsilon_lower_bound(
        table["k0"].to_numpy(), table["n0"].to_numpy(), table["k1"].to_numpy(), table["n1"].to_numpy(),
        delta=delta, confidence=confidence)
    # Rank by the selection-sample bound; ties (e.g. all 0) by the empirical ratio.
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (table["k0"] / table["n0"] - delta) / np.maximum(table["k1"] / table["n1"], 0.5 / n_select)
    order = np.lexsort((-ratio.to_numpy(), -table["epsilon_lower"].to_numpy()))
    best = table.iloc[int(order[0])]
    chosen = candidates[int(best["index"])]
    complement = bool(best["complement"])
    final = count_events(mechanism, pair.data, [chosen], n_runs=n_runs, rng=streams[2], **kwargs)[0]
    final_prime = count_events(mechanism, pair.neighbour, [chosen], n_runs=n_runs, rng=streams[3], **kwargs)[0]
    if complement:
        final, final_prime = n_runs - final, n_runs - final_prime
    if best["direction"] == "D vs D′":
        k0, k1 = int(final), int(final_prime)
    else:
        k0, k1 = int(final_prime), int(final)
    bound = epsilon_lower_bound(k0, n_runs, k1, n_runs, delta=delta, confidence=confidence)
    return AuditResult(
        name=name, claimed_epsilon=epsilon, delta=delta, epsilon_lower=float(bound), confidence=confidence,
        event=str(best["event"]), direction=str(best["direction"]), k0=k0, n0=n_runs, k1=k1, n1=n_runs,
        relation=pair.relation, pair=pair.description, selection="holdout", n_candidates=len(table),
        candidates=table,
    )


# --------------------------------------------------------------------------- audit cases


@dataclass(frozen=True)
class AuditCase:
    """A mechanism, the neighbouring pair and events to audit it on, and its claim.

    ``propose`` (optional) proposes data-dependent events from the selection
    sample; ``note`` says what the case checks, in words.
    """

    name: str
    mechanism: Callable = field(repr=False)
    pair: NeighbouringPair = field(repr=False)
    events: tuple[Event, ...] = field(repr=False)
    epsilon: float
    delta: float = 0.0
    vectorised: bool = False
    propose: Callable | None = field(default=None, repr=False)
    note: str = ""
    expect_violation: bool = False


def run_case(
    case: AuditCase, *, n_runs: int, rng: RngLike, confidence: float = 0.95, n_select: int | None = None,
    n_jobs: int = 1,
) -> AuditResult:
    """:func:`audit` one :class:`AuditCase` (holdout selection)."""
    if not isinstance(case, AuditCase):
        raise TypeError(f"case must be an AuditCase, got {type(case).__name__}")
    return audit(
        case.mechanism, case.pair, list(case.events), epsilon=case.epsilon, delta=case.delta, n_runs=n_runs,
        n_select=n_select, propose=case.propose, confidence=confidence, rng=rng, vectorised=case.vectorised,
        n_jobs=n_jobs, name=case.name,
    )


# Mechanism wrappers are module-level classes (picklable for joblib workers).


@dataclass(frozen=True)
class _SumQuery:
    """Sum of records clipped to [0, bound]: L1/L2 sensitivity ``bound`` under add/remove."""

    bound: float

    def __call__(self, data: np.ndarray) -> float:
        return float(np.clip(np.asarray(data, dtype=np.float64), 0.0, self.bound).sum())


@dataclass(frozen=True)
class _LaplaceSum:
    epsilon: float
    sensitivity: float
    query: _SumQuery

    def __call__(self, data, rng, size):
        return laplace_mechanism(np.full(size, self.query(data)), sensitivity=self.sensitivity,
                                 epsilon=self.epsilon, rng=rng)


@dataclass(frozen=True)
class _GaussianSum:
    epsilon: float
    delta: float
    sensitivity: float
    query: _SumQuery
    analytic: bool

    def __call__(self, data, rng, size):
        return gaussian_mechanism(np.full(size, self.query(data)), sensitivity=self.sensitivity,
                                  epsilon=self.epsilon, delta=self.delta, rng=rng, analytic=self.analytic)


@dataclass(frozen=True)
class _HalfScaleLaplace:
    """BROKEN on purpose: Laplace noise of half the calibrated scale (true ε is 2ε)."""

    epsilon: float
    sensitivity: float
    query: _SumQuery

    def __call__(self, data, rng, size):
        return self.query(data) + rng.laplace(0.0, 0.5 * self.sensitivity / self.epsilon, size=size)


@dataclass(frozen=True)
class _CountScoresEM:
    """Exponential mechanism on category counts (sensitivity 1: one record moves each count by ≤ 1)."""

    epsilon: float
    n_categories: int

    def __call__(self, data, rng):
        counts = np.bincount(np.asarray(data, dtype=np.int64), minlength=self.n_categories).astype(np.float64)
        return exponential_mechanism(counts, epsilon=self.epsilon, sensitivity=1.0, rng=rng)


@dataclass(frozen=True)
class _SparseVectorQueries:
    """Above-threshold (one hit) on the queries q_j(D) = offset_j + sign_j · #{records equal to 0}.

    Each query has sensitivity 1 under add/remove (sign_j ∈ {−1, 0, 1}, offsets
    public), and queries may move in opposite directions. Output: the answer
    pattern as a tuple (1 = above, 0 = below, −1 = not asked after the hit).
    """

    epsilon: float
    threshold: float
    offsets: tuple[float, ...]
    signs: tuple[int, ...]
    broken: bool = False

    def __call__(self, data, rng):
        count = float(np.count_nonzero(np.asarray(data) == 0))
        values = np.asarray(self.offsets, dtype=np.float64) + np.asarray(self.signs, dtype=np.float64) * count
        answers = [-1] * len(values)
        sv = SparseVector(self.threshold, epsilon=self.epsilon, sensitivity=1.0, rng=rng)
        if self.broken:
            # BROKEN on purpose: one Laplace draw is re-used as the noise of every query
            # (the threshold noise is drawn as usual), so comparisons between queries are exact.
            nu = float(rng.laplace(0.0, sv.query_scale))
            noisy_threshold = sv.threshold + float(rng.laplace(0.0, sv.threshold_scale))
            for j, value in enumerate(values):
                answers[j] = int(value + nu >= noisy_threshold)
                if answers[j]:
                    break
            return tuple(answers)
        for j, value in enumerate(values):
            answers[j] = int(sv.query(float(value)))
            if answers[j]:
                break
        return tuple(answers)


def _pattern_events(n_queries: int) -> list[Event]:
    """"first hit at query j" for each j, and "no hit"."""
    events = []
    for j in range(n_queries):
        pattern = tuple([0] * j + [1] + [-1] * (n_queries - j - 1))
        events.append(equals(pattern, name=f"first hit at query {j}"))
    events.append(equals(tuple([0] * n_queries), name="no hit"))
    return events


def _threshold_grid(centre: float, spread: float, count: int = 41) -> tuple[Event, ...]:
    return tuple(threshold_events(np.linspace(centre - spread, centre + spread, count)))


def mechanism_cases(
    *, epsilon: float = 1.0, delta: float = 1e-5, n_records: int = 50, rng: RngLike = 0
) -> list[AuditCase]:
    """Audit cases for the library's mechanisms, each on an adversarial pair.

    * Laplace / Gaussian / analytic Gaussian on the clipped sum of records in
      [0, 1] (sensitivity 1 under add/remove), D′ = D plus one record **at the
      clipping bound** (:func:`dpcd.neighbours.add_record`), events "M ≥ c"
      on a grid of c around the two sums (the tails carry the largest ratio).
    * Exponential mechanism on category counts with D′ = D with one record of
      the leading category replaced by the trailing one (both scores move by
      1, in opposite directions), events "category j selected".
    * Sparse vector (one hit) on 8 sensitivity-1 queries: seven just below the
      threshold that fall by 1 and a last one that rises by 1 when D′ adds a
      record, events "first hit at query j" (Lyu et al.'s worst case).

    The classical Gaussian case uses ε = min(epsilon, 0.5) because its
    calibration needs ε < 1.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    n_records = check_int(n_records, "n_records", minimum=2)
    generator = as_rng(rng)
    records = generator.uniform(0.0, 1.0, size=n_records)
    query = _SumQuery(1.0)
    sum_pair = add_record(records, 1.0, description="D′ = D + one record at the clipping bound 1")
    total = query(records)
    cases = [
        AuditCase("Laplace", _LaplaceSum(epsilon, 1.0, query), sum_pair,
                  _threshold_grid(total + 0.5, 6.0 / epsilon), epsilon, 0.0, True,
                  note="sum of records in [0, 1], Lap(1/ε)"),
    ]
    eps_classic = min(epsilon, 0.5)
    sigma_c = gaussian_sigma(1.0, eps_classic, delta)
    cases.append(AuditCase(
        "Gaussian (classical)", _GaussianSum(eps_classic, delta, 1.0, query, False), sum_pair,
        _threshold_grid(total + 0.5, 5.0 * sigma_c), eps_classic, delta, True,
        note="σ = √(2 ln(1.25/δ))/ε (Dwork & Roth Thm 3.22)"))
    sigma_a = analytic_gaussian_sigma(1.0, epsilon, delta)
    cases.append(AuditCase(
        "Gaussian (analytic)", _GaussianSum(epsilon, delta, 1.0, query, True), sum_pair,
        _threshold_grid(total + 0.5, 5.0 * sigma_a), epsilon, delta, True,
        note="σ from Balle & Wang (2018), Thm 8"))
    # exponential mechanism: 3 categories with counts (k+6, k, k) style gap; replace one record of 0 by 1
    gap = max(2, int(round(4.0 / epsilon)))
    categories = np.concatenate([np.zeros(gap + 5, dtype=np.int64), np.ones(5, dtype=np.int64),
                                 np.full(5, 2, dtype=np.int64)])
    em_pair = replace_record(categories, 0, 1, description="one record of the leading category replaced by "
                                                          "one of a trailing category")
    cases.append(AuditCase(
        "Exponential mechanism", _CountScoresEM(epsilon, 3), em_pair,
        tuple(equals(j, name=f"category {j} selected") for j in range(3)), epsilon, 0.0, False,
        note="scores = category counts, Δ = 1"))
    cases.append(_sparse_vector_case(epsilon))
    return cases


def _sparse_vector_case(epsilon: float) -> AuditCase:
    """Seven queries just below T that fall by one on D′ and a last one, at T, that rises by one.

    D holds 10 records equal to 0 and 5 equal to 1; D′ adds a record 0. The
    first m − 1 queries are T − 1 on D and T − 2 on D′, the last is T on D
    and T + 1 on D′: the pattern "below, …, below, above" is the one whose
    probability ratio approaches e^ε (every below answer and the final above
    answer become more likely together).
    """
    m, threshold, count = 8, 20.0, 10
    offsets = tuple([threshold - 1 + count] * (m - 1) + [threshold - count])
    signs = tuple([-1] * (m - 1) + [1])
    data = np.array([0] * count + [1] * 5, dtype=np.int64)
    pair = add_record(data, 0, description="7 queries at T−1 fall by 1, the last (at T) rises by 1: "
                                           "D′ = D + one record")
    return AuditCase("Sparse vector", _SparseVectorQueries(epsilon, threshold, offsets, signs), pair,
                     tuple(_pattern_events(m)), epsilon, 0.0, False,
                     note="above-threshold (c = 1), Dwork & Roth calibration")


def broken_cases(*, epsilon: float = 1.0, n_records: int = 50, rng: RngLike = 0) -> list[AuditCase]:
    """Deliberately broken mechanisms the auditor must flag (``expect_violation=True``).

    * **Laplace, noise scale halved**: Lap(Δ/(2ε)) — truly 2ε-DP.
    * **Laplace, sensitivity off by 2**: records are clipped to [0, 2] but the
      noise is calibrated to Δ = 1; the adversarial neighbour adds a record at
      the (true) bound 2 — truly 2ε-DP.
    * **Sparse vector re-using one noise draw for every query** (the fresh
      per-query noise of [DR14, Alg. 1] replaced by a single draw, a flaw of
      several published variants discussed in [LSL17]): comparisons between
      queries become exact, so on the pair q(D) = (T−1, T), q(D′) = (T, T)
      the pattern "first hit at query 1" has positive probability on D and
      probability 0 on D′: the true privacy loss is unbounded.
    """
    epsilon = check_epsilon(epsilon)
    n_records = check_int(n_records, "n_records", minimum=2)
    generator = as_rng(rng)
    records = generator.uniform(0.0, 1.0, size=n_records)
    query1 = _SumQuery(1.0)
    pair1 = add_record(records, 1.0, description="D′ = D + one record at the clipping bound 1")
    total = query1(records)
    half = AuditCase("BROKEN Laplace, noise scale halved", _HalfScaleLaplace(epsilon, 1.0, query1), pair1,
                     _threshold_grid(total + 0.5, 4.0 / epsilon), epsilon, 0.0, True,
                     note="Lap(Δ/(2ε)): truly 2ε-DP", expect_violation=True)
    query2 = _SumQuery(2.0)
    pair2 = add_record(records, 2.0, description="D′ = D + one record at the true clipping bound 2")
    off = AuditCase("BROKEN Laplace, sensitivity off by 2", _LaplaceSum(epsilon, 1.0, query2), pair2,
                    _threshold_grid(total + 1.0, 7.0 / epsilon), epsilon, 0.0, True,
                    note="records clipped to [0, 2], noise for Δ = 1: truly 2ε-DP", expect_violation=True)
    # q(D) = (T−1, T) and D′ = D + a record 0, so q(D′) = (T, T): with one shared noise draw
    # the pattern "below at 0, above at 1" needs q₀ < τ ≤ q₁, impossible on D′.
    threshold, count = 10.0, 9
    data = np.array([0] * count + [1] * 5, dtype=np.int64)
    pair3 = add_record(data, 0, description="q(D) = (T−1, T); D′ = D + one record that raises query 0 to T")
    sv = AuditCase("BROKEN sparse vector, one noise draw for all queries",
                   _SparseVectorQueries(epsilon, threshold, (threshold - 1 - count, threshold), (1, 0), broken=True),
                   pair3, tuple(_pattern_events(2)), epsilon, 0.0, False,
                   note="query noise drawn once and re-used", expect_violation=True)
    return [half, off, sv]


# --------------------------------------------------------------------------- algorithm registry


@dataclass(frozen=True)
class AlgorithmSpec:
    """How to audit one private discovery algorithm.

    ``module``/``attribute`` locate the callable; ``relation`` is the
    neighbouring relation its guarantee is stated for; ``build`` is
    ``build(epsilon, rng, size)`` → :class:`AuditCase` (the adversarial pair,
    the graph events and the claim), ``size`` ∈ {"smoke", "quick", "full"}.
    """

    name: str
    module: str
    attribute: str
    relation: str
    build: Callable[..., AuditCase] = field(repr=False)
    note: str = ""


ALGORITHMS: dict[str, AlgorithmSpec] = {}


def _register(spec: AlgorithmSpec) -> AlgorithmSpec:
    ALGORITHMS[spec.name] = spec
    return spec


def available_algorithms() -> dict[str, bool]:
    """For every registered algorithm: is its module importable and does it define the callable?"""
    out = {}
    for name, spec in ALGORITHMS.items():
        try:
            found = importlib.util.find_spec(spec.module) is not None
        except ModuleNotFoundError:
            found = False
        if found:
            try:
                found = hasattr(importlib.import_module(spec.module), spec.attribute)
            except Exception:  # a module that fails to import is not available
                found = False
        out[name] = found
    return out


def algorithm_case(name: str, *, epsilon: float, rng: RngLike, size: str = "quick") -> AuditCase:
    """The :class:`AuditCase` of registered algorithm ``name`` (see :data:`ALGORITHMS`)."""
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; registered: {sorted(ALGORITHMS)}")
    if size not in ("smoke", "quick", "full"):
        raise ValueError(f"size must be 'smoke', 'quick' or 'full', got {size!r}")
    if not available_algorithms()[name]:
        spec = ALGORITHMS[name]
        raise ValueError(f"algorithm {name!r} is not available: {spec.module}.{spec.attribute} cannot be imported")
    return ALGORITHMS[name].build(epsilon=check_epsilon(epsilon), rng=as_rng(rng), size=size)


@dataclass(frozen=True)
class _AlgorithmRun:
    """Run a registered algorithm once and return its graph as a :func:`graph_key` (picklable)."""

    module: str
    attribute: str
    kwargs: tuple[tuple[str, Any], ...] = ()

    def result(self, data: Any, rng: Any) -> Any:
        function = getattr(importlib.import_module(self.module), self.attribute)
        return function(data, rng=rng, **dict(self.kwargs))

    def __call__(self, data: Any, rng: Any) -> frozenset:
        return graph_key(self.result(data, rng))


def _ledger_claim(run: _AlgorithmRun, pair: NeighbouringPair, rng: np.random.Generator, probes: int,
                  fallback: float) -> tuple[float, float, str, tuple[str, ...]]:
    """The largest basic-composition total (ε, δ) over ``probes`` runs on D and on D′, and the ledger's relation.

    Ledgers of adaptive algorithms charge what a run used; the claim audited is
    the largest total seen (``fallback`` when every probe charged nothing,
    e.g. PCD runs that only took noiseless branches).
    """
    epsilons, deltas, relation, public = [], [], "", ()
    for data in (pair.data, pair.neighbour):
        for _ in range(probes):
            ledger = run.result(data, rng).ledger
            total = ledger.total("basic")
            epsilons.append(total.epsilon)
            deltas.append(total.delta)
            relation, public = ledger.neighbouring, tuple(ledger.public)
    epsilon = max(epsilons) if max(epsilons) > 0 else fallback
    return float(epsilon), float(max(deltas)), relation, public


_SIZES = {"smoke": 60, "quick": 200, "full": 500}


def _graph_events(nodes: Sequence[str]) -> tuple[Event, ...]:
    return tuple(edge_present(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1:])


def _nodes_of(run: _AlgorithmRun, data: Any, rng: np.random.Generator) -> tuple[str, ...]:
    return tuple(run.result(data, rng).nodes)


def _discrete_case(name: str, module: str, attribute: str, kwargs: dict, *, epsilon: float,
                   epsilon_argument: str, rng: np.random.Generator, size: str, alpha: float) -> AuditCase:
    """Three binary variables; the G² test of X0 ⫫ X1 is borderline and one record flips it."""
    from .neighbours import borderline_ci_pair

    run = _AlgorithmRun(module, attribute, tuple(sorted({**kwargs, epsilon_argument: epsilon}.items())))
    n = _SIZES[size]
    probe = borderline_ci_pair(n=n, alpha=alpha, n_variables=3, rng=rng)
    relation = run.result(probe.data, rng).ledger.neighbouring
    pair = probe if relation == "add/remove" else borderline_ci_pair(n=n, alpha=alpha, n_variables=3, rng=rng,
                                                                     relation=relation)
    claim, delta, relation, public = _ledger_claim(run, pair, rng, probes=1 if size == "smoke" else 3,
                                                   fallback=epsilon)
    nodes = _nodes_of(run, pair.data, rng)
    return AuditCase(name, run, pair, _graph_events(nodes), claim, delta, False, observed_outputs,
                     note=f"{epsilon_argument}={epsilon:g}; ledger: {relation}, public {', '.join(public)}")


def _privpc_star_case(*, epsilon: float, rng: np.random.Generator, size: str) -> AuditCase:
    """Linear-Gaussian data standardised with public centre 0 and scale 1; a record at the clipping norm √p."""
    from .neighbours import outlier_pair

    n = _SIZES[size]
    z = rng.normal(size=(n, 3))
    data = np.column_stack([z[:, 0], 0.3 * z[:, 0] + z[:, 1], z[:, 2]])
    data = (data - data.mean(axis=0)) / data.std(axis=0)
    pair = outlier_pair(data, bound=1.0, x=0, y=2)  # corners of [−1, 1]^3 have norm √3 = √p: at the bound
    kwargs = {"epsilon": epsilon, "center": (0.0, 0.0, 0.0), "scale": (1.0, 1.0, 1.0)}
    run = _AlgorithmRun("dpcd.discovery.privpc_star", "privpc_star",
                        tuple(sorted((k, np.asarray(v) if isinstance(v, tuple) else v) for k, v in kwargs.items())))
    claim, delta, relation, public = _ledger_claim(run, pair, rng, probes=1 if size == "smoke" else 2,
                                                   fallback=epsilon)
    return AuditCase("PrivPC*", run, pair, _graph_events(_nodes_of(run, pair.data, rng)), claim, delta, False,
                     observed_outputs, note=f"public centre/scale; ledger: {relation}, public {', '.join(public)}")


@dataclass(frozen=True)
class _KendallP:
    def __call__(self, data: np.ndarray) -> float:
        from .rcit import kendall_ci_test

        return float(kendall_ci_test(data, 0, 1).p_value)


@dataclass(frozen=True)
class _LinearPair:
    base: np.ndarray = field(repr=False)

    def __call__(self, strength: float) -> np.ndarray:
        return np.column_stack([self.base[:, 0], strength * self.base[:, 0] + self.base[:, 1]])


def _pcd_case(*, epsilon: float, rng: np.random.Generator, size: str) -> AuditCase:
    """PCD with the Kendall test on two variables: D in the noiseless branch p − Δ_P > α, D′ just outside.

    On D the edge is removed with probability 1; on D′ the noisy comparison
    keeps it with positive probability, so "edge present" has probability 0
    on D and > 0 on D′: no finite ε covers that (the paper's Thm. 5 accounting
    claims ε per noisy comparison).
    """
    from .neighbours import crossing_pair
    from .rcit import kendall_pvalue_sensitivity

    n = {"smoke": 300, "quick": 400, "full": 400}[size]
    alpha = 0.05
    sensitivity = kendall_pvalue_sensitivity(n)
    base = rng.normal(size=(n, 2))
    base[:, 0] -= base[:, 0].mean()
    # orthogonalise so that strength 0 gives τ ≈ 0 (p ≈ 1)
    candidates = np.array([[a, b] for a in (-3.0, 3.0) for b in (-3.0, 3.0)])
    make = _LinearPair(base)
    statistic = _KendallP()
    low = 0.0
    if statistic(make(low)) < alpha + sensitivity:
        # start from a sample without association: shuffle the second column until p is large
        for _ in range(50):
            base[:, 1] = rng.permutation(base[:, 1])
            if statistic(make(0.0)) >= alpha + sensitivity + 0.1:
                break
    pair = crossing_pair(make, statistic, target=alpha + sensitivity, candidates=candidates, relation="replace",
                         low=0.0, high=1.0)
    run = _AlgorithmRun("dpcd.discovery.pcd", "pcd",
                        (("alpha", alpha), ("ci_test", "kendall"), ("epsilon", epsilon)))
    claim, delta, relation, public = _ledger_claim(run, pair, rng, probes=2, fallback=epsilon)
    return AuditCase("PCD", run, pair, _graph_events(_nodes_of(run, pair.data, rng)), claim, delta, False,
                     observed_outputs,
                     note=(f"Kendall test, Δ_P = {sensitivity:.3g}: p(D) = {pair.meta['statistic_D'] + 0:.4g} "
                           f"≥ α + Δ_P (noiseless removal), p(D′) = {pair.meta['statistic_D_prime']:.4g}; "
                           f"ledger: {relation}"))


def _noleaks_case(*, epsilon: float, rng: np.random.Generator, size: str) -> AuditCase:
    """NOLEAKS on three standardised linear-Gaussian variables; one record at the clipping box corner."""
    from .neighbours import outlier_pair

    n = _SIZES[size] + 100
    z = rng.normal(size=(n, 3))
    data = np.column_stack([z[:, 0], 0.8 * z[:, 0] + 0.6 * z[:, 1], z[:, 2]])
    data = (data - data.mean(axis=0)) / data.std(axis=0)
    pair = outlier_pair(data, bound=2.0, x=0, y=1, relation="replace")
    run = _AlgorithmRun("dpcd.discovery.noleaks", "noleaks",
                        (("delta", 1e-5), ("epsilon_total", epsilon), ("line_search_size", 50),
                         ("max_evaluations", 10), ("max_iter", 10)))
    claim, delta, relation, public = _ledger_claim(run, pair, rng, probes=1, fallback=epsilon)
    return AuditCase("NOLEAKS", run, pair, _graph_events(_nodes_of(run, pair.data, rng)), claim, delta, False,
                     observed_outputs, note=f"10 objective evaluations, 10 iterations; ledger: {relation}")


def _register_defaults() -> None:
    discrete = [
        ("EM-PC", "dpcd.discovery.em_pc", "em_pc", {"alpha": 0.05}, "epsilon"),
        ("LapMech", "dpcd.discovery.lapmech", "lapmech", {"alpha": 0.05}, "epsilon"),
        ("Priv-PC", "dpcd.discovery.priv_pc", "priv_pc", {"alpha": 0.05}, "epsilon"),
        ("SVT-PC", "dpcd.discovery.svt_pc", "svt_pc", {"alpha": 0.05}, "epsilon"),
        ("CURATE", "dpcd.discovery.curate", "curate", {"threshold": 0.05}, "epsilon_total"),
    ]
    for name, module, attribute, kwargs, argument in discrete:
        def build(*, epsilon, rng, size, _n=name, _m=module, _a=attribute, _k=kwargs, _e=argument):
            return _discrete_case(_n, _m, _a, _k, epsilon=epsilon, epsilon_argument=_e, rng=rng, size=size,
                                  alpha=0.05)

        _register(AlgorithmSpec(name, module, attribute, "declared by the ledger", build,
                                note="borderline G² pair on 3 binary variables"))
    _register(AlgorithmSpec("PrivPC*", "dpcd.discovery.privpc_star", "privpc_star", "add/remove",
                            _privpc_star_case, note="record at the clipping norm"))
    _register(AlgorithmSpec("PCD", "dpcd.discovery.pcd", "pcd", "replace", _pcd_case,
                            note="noiseless-branch crossing pair (local sensitivity)"))
    _register(AlgorithmSpec("NOLEAKS", "dpcd.discovery.noleaks", "noleaks", "replace", _noleaks_case,
                            note="record at a corner of the clipping box"))
    for label, score in ANM_SCORES.items():
        def build_anm(*, epsilon, rng, size, _s=score):
            return anm_case(_s, epsilon=epsilon, rng=rng, size=size)

        _register(AlgorithmSpec(f"ANM (test-set, {label})", "dpcd.anm", "private_anm_test_set", "replace",
                                build_anm, note="test row replaced by the grid point that moves the score margin most"))


# --------------------------------------------------------------------------- private ANM (test-set privacy)


ANM_SCORES = {"Spearman": "spearman", "Kendall": "kendall", "HSIC": "hsic"}
_ANM_BOUNDS = (-1.0, 1.0)


@dataclass(frozen=True)
class _ANMTestSetRun:
    """One run of :func:`dpcd.anm.private_anm_test_set` on a pair stored as an (n, 2) array in [−1, 1]².

    The split (``train_index``, ``test_index``) and the bounds [−1, 1] of both
    variables are passed as public, so data sets differing in one test row
    are neighbours exactly as the test-set guarantee states. Output: the
    released scores ``(p_{X→Y}, p_{Y→X})`` of ``score``. ``sensitivity_factor``
    < 1 is a BROKEN variant: the noise is calibrated to that fraction of the
    sensitivity (run with ε / factor) while the claim stays the published one.
    """

    score: str
    epsilon: float
    train_index: tuple[int, ...]
    test_index: tuple[int, ...]
    lam: float = 1e-3
    sensitivity_factor: float = 1.0

    def result(self, data: Any, rng: Any) -> Any:
        from .anm import private_anm_test_set

        array = np.asarray(data, dtype=np.float64)
        return private_anm_test_set(
            array[:, 0], array[:, 1], epsilon=self.epsilon / self.sensitivity_factor, scores=(self.score,),
            lam=self.lam, split=(np.asarray(self.train_index), np.asarray(self.test_index)),
            bounds_x=_ANM_BOUNDS, bounds_y=_ANM_BOUNDS, rng=rng)

    def __call__(self, data: Any, rng: Any) -> np.ndarray:
        return np.asarray(self.result(data, rng).scores[self.score], dtype=np.float64)


@dataclass(frozen=True)
class _ScoreMargin:
    """Indicator of ``p_{Y→X} − p_{X→Y} ≥ threshold`` (``> threshold`` when ``strict``) on a batch of score pairs."""

    threshold: float
    strict: bool = False

    def __call__(self, batch: Any) -> np.ndarray:
        values = _as_batch_array(batch).astype(np.float64, copy=False).reshape(-1, 2)
        margin = values[:, 1] - values[:, 0]
        return margin > self.threshold if self.strict else margin >= self.threshold


def _abs_tau(a: np.ndarray, b: np.ndarray) -> float:
    m = a.size
    return abs(float(np.sum(np.sign(a[:, None] - a[None, :]) * np.sign(b[:, None] - b[None, :])))) / (m * (m - 1))


def _anm_margins(fit: Any, score: str, x_new: np.ndarray, y_new: np.ndarray, f_new: np.ndarray,
                 g_new: np.ndarray) -> np.ndarray:
    """Non-private margins s_{Y→X} − s_{X→Y} after replacing test row k by (x_new[c], y_new[c]), shape (m, C).

    ``f_new``/``g_new`` are the (fixed, trained) regressions evaluated at the candidates.
    """
    from dataclasses import replace as dc_replace

    from .anm import _fit_scores

    tie_rng = np.random.default_rng(0)  # continuous data: ranks have no ties, the priorities do not matter
    out = np.empty((fit.m, x_new.size))
    for k in range(fit.m):
        for c in range(x_new.size):
            xt, yt = fit.x_test.copy(), fit.y_test.copy()
            ry, rx = fit.residual_y.copy(), fit.residual_x.copy()
            xt[k], yt[k] = x_new[c], y_new[c]
            ry[k], rx[k] = y_new[c] - f_new[c], x_new[c] - g_new[c]
            if score == "kendall":  # |C − D| / (m(m − 1)/2) on untied data, O(m²) without scipy's overhead
                out[k, c] = _abs_tau(yt, rx) - _abs_tau(xt, ry)
                continue
            s_xy, s_yx = _fit_scores(dc_replace(fit, x_test=xt, y_test=yt, residual_y=ry, residual_x=rx), score,
                                     tie_rng)
            out[k, c] = s_yx - s_xy
    return out


def anm_test_pair(data: np.ndarray, *, split: tuple[np.ndarray, np.ndarray], score: str, lam: float = 1e-3,
                  grid_points: int = 9) -> NeighbouringPair:
    """The test-row replacement that moves the ANM score margin ``s_{Y→X} − s_{X→Y}`` the most.

    ``data`` is an (n, 2) array in [−1, 1]² (the public bounds), ``split`` the
    public train/test split. Candidates: every test row, replaced by every point
    of a ``grid_points`` × ``grid_points`` grid of [−1, 1]² (corners included).
    The training half — hence both kernel regressions and all bandwidths — is
    the same on D and D′, so only the replaced test record's point and its two
    residuals change; the search is exhaustive over this grid. ``meta`` holds
    the margins on D and D′ (recomputed with :func:`dpcd.anm.fit_anm`).
    """
    from .anm import _fit_scores, _krr_predict, check_split, fit_anm

    array = np.asarray(data, dtype=np.float64)
    if array.ndim != 2 or array.shape[1] != 2:
        raise ValueError(f"data must be an (n, 2) array, got shape {array.shape}")
    if np.any(np.abs(array) > 1.0):
        raise ValueError("data must lie in [-1, 1]^2 (the public bounds)")
    train, test = check_split(split, array.shape[0])
    grid_points = check_int(grid_points, "grid_points", minimum=2)

    def fit_of(d: np.ndarray):
        return fit_anm(d[:, 0], d[:, 1], lam=lam, rng=0, split=(train, test), bounds_x=_ANM_BOUNDS,
                       bounds_y=_ANM_BOUNDS)

    fit = fit_of(array)
    grid = np.linspace(-1.0, 1.0, grid_points)
    x_new, y_new = (v.ravel() for v in np.meshgrid(grid, grid, indexing="ij"))
    x_tr, y_tr = array[train, 0], array[train, 1]
    f_new, _ = _krr_predict(x_tr, y_tr, x_new, lam=lam, bandwidth=fit.bandwidths["x"])
    g_new, _ = _krr_predict(y_tr, x_tr, y_new, lam=lam, bandwidth=fit.bandwidths["y"])
    base = _fit_scores(fit, score, np.random.default_rng(0))
    base_margin = base[1] - base[0]
    change = np.abs(_anm_margins(fit, score, x_new, y_new, f_new, g_new) - base_margin)
    k, c = np.unravel_index(int(np.argmax(change)), change.shape)
    row = int(test[k])
    record = np.array([x_new[c], y_new[c]])
    after = _fit_scores(fit_of(replace_record(array, row, record, check=False).neighbour), score,
                        np.random.default_rng(0))
    meta = {"margin_D": base_margin, "margin_D_prime": after[1] - after[0], "scores_D": base,
            "scores_D_prime": after, "row": row, "record": record.tolist(), "m": fit.m, "n": fit.n}
    description = (f"test row {row} ({array[row, 0]:.2f}, {array[row, 1]:.2f}) replaced by "
                   f"({record[0]:.2f}, {record[1]:.2f}): {score} margin s_YX − s_XY {base_margin:.3g} → "
                   f"{meta['margin_D_prime']:.3g}; training half and split public")
    return replace_record(array, row, record, description=description, meta=meta)


def anm_case(score: str = "spearman", *, epsilon: float, rng: RngLike, size: str = "quick",
             sensitivity_factor: float = 1.0) -> AuditCase:
    """Audit case for private ANM with test-set privacy (Kusner et al. 2016, Sec. 4) and one score.

    Data: ``n`` pairs with ``x ~ U(−1, 1)``, ``y = 0.8 x³ + 0.2 U(−1, 1)``
    (so in [−1, 1]², the public bounds), the first half the public training
    half, the rest the test half. The pair replaces the test record that moves
    the score margin most (:func:`anm_test_pair`). Each score is released with
    ε/2, so the ledger total (the claim, read from a probe run's ledger) is
    ``epsilon``. Events: the released decision "x→y" (``p_{X→Y} < p_{Y→X}``),
    ``p_{Y→X} − p_{X→Y} ≥ c`` and ``p_{X→Y} ≥ c``, ``p_{Y→X} ≥ c`` on grids
    of c (complements are added by :func:`audit`). ``sensitivity_factor=0.5``
    gives the BROKEN variant with the noise of half the sensitivity.
    """
    from .anm import _laplace_sensitivity

    if score not in ANM_SCORES.values():
        raise ValueError(f"score must be one of {sorted(ANM_SCORES.values())}, got {score!r}")
    if size not in ("smoke", "quick", "full"):
        raise ValueError(f"size must be 'smoke', 'quick' or 'full', got {size!r}")
    epsilon = check_epsilon(epsilon)
    if not 0 < sensitivity_factor <= 1:
        raise ValueError(f"sensitivity_factor must lie in (0, 1], got {sensitivity_factor}")
    generator = as_rng(rng)
    n = {"smoke": 40, "quick": 100, "full": 200}[size]
    grid_points = {"smoke": 5, "quick": 9, "full": 13}[size]
    x = generator.uniform(-1.0, 1.0, n)
    data = np.column_stack([x, 0.8 * x**3 + 0.2 * generator.uniform(-1.0, 1.0, n)])
    train, test = np.arange(n // 2), np.arange(n // 2, n)
    pair = anm_test_pair(data, split=(train, test), score=score, grid_points=grid_points)
    run = _ANMTestSetRun(score, epsilon / 2.0, tuple(int(i) for i in train), tuple(int(i) for i in test),
                         sensitivity_factor=float(sensitivity_factor))
    honest = _ANMTestSetRun(score, epsilon / 2.0, run.train_index, run.test_index)
    claim, delta, relation, public = _ledger_claim(honest, pair, generator, probes=1, fallback=epsilon)
    scale = _laplace_sensitivity(score, pair.meta["m"]) / (epsilon / 2.0) * sensitivity_factor
    centre = 0.5 * (pair.meta["margin_D"] + pair.meta["margin_D_prime"])
    events = [Event("released decision x→y", _ScoreMargin(0.0, strict=True))]
    events += [Event(f"p_YX − p_XY ≥ {c:.3g}", _ScoreMargin(float(c)))
               for c in np.linspace(centre - 4 * scale, centre + 4 * scale, 33)]
    for j, label in ((0, "XY"), (1, "YX")):
        values = (pair.meta["scores_D"][j], pair.meta["scores_D_prime"][j])
        middle = 0.5 * sum(values)
        events += [at_least(c, coordinate=j, name=f"p_{label} ≥ {c:.3g}")
                   for c in np.linspace(middle - 3 * scale, middle + 3 * scale, 17)]
    label = {v: k for k, v in ANM_SCORES.items()}[score]
    broken = sensitivity_factor != 1.0
    name = f"{'BROKEN ' if broken else ''}ANM (test-set, {label})"
    note = (f"n = {n} (m = {pair.meta['m']} test records), ε/2 per score; ledger: {relation}, public "
            f"{', '.join(public)}" + (f"; noise for {sensitivity_factor:g} × the sensitivity" if broken else ""))
    return AuditCase(name, run, pair, tuple(events), claim, delta, False, note=note, expect_violation=broken)


_register_defaults()


def runs_for_budget(case: AuditCase, *, seconds: float, rng: RngLike, minimum: int = 20,
                    maximum: int = 100_000, probes: int = 3) -> int:
    """Runs per data set that fit an audit of ``case`` into about ``seconds`` of one core.

    Times ``probes`` runs on D (one batch of 1000 for a vectorised mechanism)
    and accounts for the selection sample (n_runs/4) and both data sets.
    """
    if not isinstance(case, AuditCase):
        raise TypeError(f"case must be an AuditCase, got {type(case).__name__}")
    if not seconds > 0:
        raise ValueError(f"seconds must be > 0, got {seconds}")
    minimum = check_int(minimum, "minimum", minimum=1)
    maximum = check_int(maximum, "maximum", minimum=minimum)
    import time

    generator = as_rng(rng)
    start = time.perf_counter()
    if case.vectorised:
        case.mechanism(case.pair.data, generator, 1000)
        per_run = (time.perf_counter() - start) / 1000
    else:
        for _ in range(probes):
            case.mechanism(case.pair.data, generator)
        per_run = (time.perf_counter() - start) / probes
    runs = int(seconds / (2.5 * max(per_run, 1e-9)))
    return int(min(max(runs, minimum), maximum))


@dataclass(frozen=True)
class _SieveStream:
    """One round of sieve-and-examine over queries q_j(rows) = offset_j + mean of the records in ``rows``.

    Output: a tuple per query: −1 not asked, 0 below in the sieve, 1 passed and
    examined above, 2 passed and examined below. The mean of m records has
    replace-one sensitivity 1/m (values in [0, 1]).
    """

    epsilon: float
    threshold: float
    threshold_tweak: float
    offsets: tuple[float, ...]
    subsample_size: int

    def __call__(self, data, rng):
        from .privacy.sieve import SieveAndExamine

        values = np.asarray(data, dtype=np.float64)
        n = values.shape[0]
        sieve = SieveAndExamine(n=n, threshold=self.threshold, threshold_tweak=self.threshold_tweak,
                                epsilon=self.epsilon, sensitivity=1.0 / n,
                                subsample_sensitivity=1.0 / self.subsample_size,
                                subsample_size=self.subsample_size, rng=rng)
        answers = [-1] * len(self.offsets)
        for j, offset in enumerate(self.offsets):
            if sieve.sieve(offset + float(values[sieve.subsample].mean())):
                answers[j] = 1 if sieve.examine(offset + float(values.mean())) else 2
                break
            answers[j] = 0
        return tuple(answers)


def sieve_case(*, epsilon: float = 1.0, n: int = 40, subsample_size: int = 10) -> AuditCase:
    """Sieve-and-examine (Priv-PC's mechanism, ``dpcd.privacy.sieve``) on mean queries, replace one record.

    D holds ``n`` records, half 0 and half 1; D′ replaces a 0 by a 1. Queries
    sit just below the threshold, so the sieve passes some of them and the
    examine step decides. The claim is ε per examined query (sieve ε/2 by
    sub-sampling amplification + examine ε/2, [WPS20, Thm 1]).
    """
    epsilon = check_epsilon(epsilon)
    n = check_int(n, "n", minimum=4)
    subsample_size = check_int(subsample_size, "subsample_size", minimum=1)
    data = np.array([0.0] * (n // 2) + [1.0] * (n - n // 2))
    pair = replace_record(data, 0, 1.0, description="one record 0 replaced by 1 (mean queries in [0, 1])")
    offsets = (0.0, 0.0, 0.0, 0.0)
    threshold = 0.5 + 1.0 / n
    mechanism = _SieveStream(epsilon, threshold, 0.0, offsets, subsample_size)
    events = [equals(tuple([0] * j + [k] + [-1] * (len(offsets) - j - 1)), name=f"query {j}: "
                     + ("examined above" if k == 1 else "examined below")) for j in range(len(offsets))
              for k in (1, 2)]
    events.append(equals(tuple([0] * len(offsets)), name="no query passed the sieve"))
    return AuditCase("Sieve-and-examine", mechanism, pair, tuple(events), epsilon, 0.0, False,
                     note=f"n = {n}, m = {subsample_size}, ε per examined query")

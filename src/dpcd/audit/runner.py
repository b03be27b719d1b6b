"""Running an audit: many runs of a mechanism on D and D′, event counts, the bound and its verdict.

A mechanism is a function ``mechanism(data, rng)`` returning one output; a
*vectorised* mechanism (``vectorised=True``) is ``mechanism(data, rng, size)``
returning a batch of ``size`` independent outputs. Runs are split in chunks,
each with its own child seed of a :class:`numpy.random.SeedSequence` (same
``rng`` ⇒ same result whatever ``n_jobs``), and chunks run in parallel with
joblib; events are evaluated in the workers, so only counts travel back.

Choosing the best event on the same runs that bound it would overstate the
bound, so :func:`audit` either selects the event, its complement and the
direction on a separate *selection* sample and bounds it on fresh runs
(``selection="holdout"``, the default), or bounds every candidate at once with
a Bonferroni correction (``selection="bonferroni"``). Either way the returned
bound holds at the stated confidence. A bound below the claim proves nothing
about correctness; a bound above it refutes the claim at that confidence.

Examples
--------
>>> import numpy as np
>>> from dpcd.audit.events import threshold_events
>>> from dpcd.audit.neighbours import add_record
>>> pair = add_record(np.zeros(10), 1.0)
>>> def laplace_sum(data, rng, size):
...     return np.sum(data) + rng.laplace(0.0, 0.5, size)    # noise for epsilon = 2, sensitivity 1
>>> result = audit(laplace_sum, pair, threshold_events(np.linspace(-1, 2, 13)), epsilon=1.0,
...                n_runs=20_000, rng=0, vectorised=True)
>>> result.violation      # the claim epsilon = 1 is refuted: the mechanism is only 2-DP
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from ..validation import (
    RngLike,
    as_rng,
    check_delta,
    check_epsilon,
    check_int,
    check_probability,
)
from .events import Event, check_events
from .neighbours import NeighbouringPair
from .stats import epsilon_lower_bound

__all__ = ["sample_outputs", "count_events", "AuditResult", "audit", "AuditCase", "run_case", "runs_for_budget"]

Selection = Literal["holdout", "bonferroni"]


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
    events = check_events(events)
    sizes = _chunks(n_runs, chunk_size)
    seeds = _seeds(rng, len(sizes))
    if n_jobs == 1 or len(sizes) == 1:
        parts = [_count_chunk(mechanism, data, s, seed, bool(vectorised), events) for s, seed in zip(sizes, seeds)]
    else:
        parts = Parallel(n_jobs=n_jobs)(
            delayed(_count_chunk)(mechanism, data, s, seed, bool(vectorised), events) for s, seed in zip(sizes, seeds)
        )
    return np.sum(parts, axis=0).astype(np.int64)


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
    def detectable(self) -> float:
        """The power of this audit: the largest lower bound its run counts could show at all (an event of
        probability 1 on one data set and 0 on the other). An audit without a violation does not refute the
        claim; it says nothing about an ε above this."""
        return float(epsilon_lower_bound(self.n0, self.n0, 0, self.n1, delta=self.delta,
                                         confidence=self.confidence))

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
            "detectable": self.detectable,
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

    Examples
    --------
    >>> import numpy as np
    >>> from dpcd.audit.events import threshold_events
    >>> from dpcd.audit.neighbours import add_record
    >>> def laplace_count(data, rng, size):   # a correct 1-DP count
    ...     return len(data) + rng.laplace(0.0, 1.0, size)
    >>> result = audit(laplace_count, add_record(np.zeros(5), 0.0), threshold_events(np.linspace(3, 8, 11)),
    ...                epsilon=1.0, n_runs=20_000, rng=0, vectorised=True)
    >>> result.violation, result.epsilon_lower <= 1.0
    (False, True)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=True)
    confidence = check_probability(confidence, "confidence")
    if not isinstance(pair, NeighbouringPair):
        raise TypeError(f"pair must be a dpcd.audit.neighbours.NeighbouringPair, got {type(pair).__name__}")
    if selection not in ("holdout", "bonferroni"):
        raise ValueError(f"selection must be 'holdout' or 'bonferroni', got {selection!r}")
    events = [] if events is None else check_events(events)
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
        candidates = events + check_events(propose(sel0, sel1))
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

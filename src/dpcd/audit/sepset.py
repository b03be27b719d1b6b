"""An adversarial neighbouring pair for EM-PC's separating sets (:func:`sepset_tie_pair`).

PC orients an unshielded triple x − z − y as a collider x → z ← y exactly when
z is not in the stored separating set of {x, y}, so the separating set is part
of what a private PC releases. EM-PC's pre-fix rule (``sepset="argmax"`` of
:func:`dpcd.discovery.em_pc.em_pc`) draws the removed neighbour privately but
stores the best-scoring conditioning set of the *un-noised* distance scores.
The pair built here puts two conditioning sets in an exact tie on D and lets one
added record break the tie, so that the stored set, and with it the collider,
changes deterministically between D and D′. Used by the audit cases of EM-PC (:mod:`dpcd.audit.algorithms`, :mod:`dpcd.audit.black_box`).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from ..ci.distance import count_quality, full_table, g2_statistic
from ..discovery.em_pc import PUBLIC, EMPCDecider, default_max_distance
from ..discovery.pc import orient
from ..privacy import PrivacyLedger, exponential_mechanism_probabilities
from ..validation import RngLike, as_rng, check_int
from .neighbours import NeighbouringPair, add_record

__all__ = ["sepset_tie_pair"]

COLUMNS = ("X0", "X1", "C1", "C2")
LEVELS = {"X0": 2, "X1": 2, "C1": 4, "C2": 4}
# audit parameters: 4 order-0 rounds (β̂ = 0, ε₂ each) + node X0's order-1 round (ε₁ + ε₂) = ε_total
EPSILON_TOTAL = 2.0
EPSILON_SPLIT = (0.5, 0.3)
MAX_ORDER = 1
ALPHA = 0.01
# generating model (see the docstring of sepset_tie_pair)
_FLIP_MEDIATOR = 0.3   # P(M ≠ X0)
_FLIP_OUTCOME = 0.3    # P(X1 ≠ M)
_FLIP_PRIVATE = 0.15   # P(A ≠ X0) = P(B ≠ X0)
_MIN_PLANNED = 0.9     # required probability that a run reaches the tie and removes X0 − X1 there
_TRIES = 25

_X0, _X1, _C1, _C2 = range(4)
_TIE = ((_X0, _X1, (_C1,)), (_X0, _X1, (_C2,)))


def _label(x: int, y: int, S: tuple[int, ...]) -> str:
    given = f" | {','.join(COLUMNS[s] for s in S)}" if S else ""
    return f"{COLUMNS[x]} _||_ {COLUMNS[y]}{given}"


def _sample(generator: np.random.Generator, half: int) -> np.ndarray:
    """``half`` records of the model, followed by their mirror images (C1 and C2 swapped)."""
    def flip(v: np.ndarray, p: float) -> np.ndarray:
        return np.where(generator.random(half) < p, 1 - v, v)

    x0 = generator.integers(0, 2, half)
    m = flip(x0, _FLIP_MEDIATOR)
    x1 = flip(m, _FLIP_OUTCOME)
    a = flip(x0, _FLIP_PRIVATE)
    b = flip(x0, _FLIP_PRIVATE)
    records = np.column_stack([x0, x1, 2 * m + a, 2 * m + b]).astype(np.int64)
    return np.vstack([records, records[:, [_X0, _X1, _C2, _C1]]])


class _Scores:
    """The distance scores EM-PC computes on ``codes``, with EM-PC's own decider and audit parameters."""

    def __init__(self, codes: np.ndarray):
        e1, e2 = EPSILON_SPLIT
        levels = np.array([LEVELS[c] for c in COLUMNS], dtype=np.int64)
        self.levels = levels
        self.codes = np.asfortranarray(codes)
        self.decider = EMPCDecider(
            self.codes, levels, alpha=ALPHA, epsilon=EPSILON_TOTAL, epsilon_1=e1, epsilon_2=e2,
            rng=np.random.default_rng(0), ledger=PrivacyLedger("add/remove", public=PUBLIC),
            max_distance=default_max_distance(e1, e2, len(COLUMNS) - 1), exact_states=500,
            distance="lipschitz", sepset="argmax")

    def __call__(self, x: int, y: int, S: tuple[int, ...] = ()) -> int:
        return int(self.decider.score(x, y, S))

    def g2(self, x: int, y: int, S: tuple[int, ...] = ()) -> float:
        return g2_statistic(full_table(self.codes, x, y, S, self.levels))

    def table(self) -> dict[str, int]:
        """Every score the planned run uses: all order-0 pairs and node X0's order-1 tests."""
        keys = [(x, y, ()) for x, y in itertools.combinations(range(4), 2)]
        keys += [(_X0, y, (s,)) for y in (_X1, _C1, _C2) for s in (_X1, _C1, _C2) if s != y]
        return {_label(*k): self(*k) for k in keys}

    def planned(self) -> float:
        """Probability (either sepset rule) that every order-0 round draws β̂ = 0 and node X0's
        order-1 round draws β̂ = 1 and removes X0 − X1: the run then ends at the tie."""
        e1, e2 = EPSILON_SPLIT
        probability = 1.0
        for x in range(4):
            scores = np.array([self(x, y) for y in range(4) if y != x], dtype=float)
            probability *= exponential_mechanism_probabilities(count_quality(scores), epsilon=e2,
                                                               sensitivity=1.0)[0]
        best = np.array([max(self(_X0, y, (s,)) for s in (_X1, _C1, _C2) if s != y)
                         for y in (_X1, _C1, _C2)], dtype=float)
        probability *= exponential_mechanism_probabilities(count_quality(best), epsilon=e2, sensitivity=1.0)[1]
        probability *= exponential_mechanism_probabilities(best, epsilon=e1, sensitivity=1.0)[0]
        return float(probability)


def _planned_graph(sepset: tuple[int, ...]) -> frozenset:
    """CPDAG (as :func:`dpcd.audit.graph_key` edges) when only X0 − X1 is removed, with ``sepset``."""
    adjacency = ~np.eye(4, dtype=bool)
    adjacency[_X0, _X1] = adjacency[_X1, _X0] = False
    graph = orient(COLUMNS, adjacency, {(_X0, _X1): sepset})
    return frozenset(graph.edges)


def sepset_tie_pair(*, n: int = 6000, rng: RngLike = 0) -> NeighbouringPair:
    """Neighbouring data sets on which EM-PC's arg-max separating set flips (add/remove one record).

    **D.** Four categorical variables X0, X1 (2 levels) and C1, C2 (4 levels)
    from the model X0 → M → X1 with a latent binary mediator M
    (P(M ≠ X0) = P(X1 ≠ M) = 0.3) and two proxies of M, C1 = 2M + A and
    C2 = 2M + B, whose low bits A, B are independent noisy copies of X0
    (P(A ≠ X0) = P(B ≠ X0) = 0.15). Each proxy determines M, so
    X0 ⫫ X1 | C1 and X0 ⫫ X1 | C2 hold in the model, while X0 stays strongly
    dependent on C1 given C2 (through A) and vice versa, and every pair is
    strongly dependent marginally. ``n / 2`` records are drawn from the model
    and followed by their mirror images (C1 and C2 swapped), so the G² tables
    of X0 ⫫ X1 | C1 and X0 ⫫ X1 | C2 are identical and their distance scores
    tie exactly.

    **EM-PC on D** (parameters in ``meta``: ε_total = 2 split as ε₁ = 0.5,
    ε₂ = 0.3, max_order = 1, α = 0.01): the four order-0 rounds draw β̂ = 0
    (ε₂ each), then node X0's order-1 round (ε₁ + ε₂, the last round the budget
    pays) draws β̂ = 1 and removes X1 with high probability (``meta["p_planned_D"]``,
    computed from the scores). With ``sepset="argmax"`` the stored set is the
    first maximum of the un-noised scores of {C1}, {C2}: {C1}. Orientation
    then makes C2 the collider: X0 → C2 ← X1, C1 → C2, X0 − C1 − X1
    (``meta["graph_D"]``).

    **D′ = D + one record** whose C1 and C2 codes differ (it matches one proxy's
    stratum but not the other's), so it moves the two G² tables differently
    and breaks the tie by one unit in favour of {C2}: it either raises the
    score of X0 ⫫ X1 | C2 or lowers that of X0 ⫫ X1 | C1 (the record is the
    first, those with equal mediator bits M first, of all records with
    C1 ≠ C2 that does so on EM-PC's own scores). The arg-max set becomes
    {C2} and C1 the collider: X0 → C1 ← X1, C2 → C1, X0 − C2 − X1
    (``meta["graph_D_prime"]``).

    **Separating event:** "the output equals ``meta["graph_D"]``" has probability
    ≈ ``p_planned_D`` on D and 0 on D′ with ``sepset="argmax"`` (no finite ε
    covers it); with ``sepset="joint"`` the set is drawn with the neighbour,
    both sets are stored with probability ≈ 1/2 on D and the tie-break moves
    them by a factor of at most e^{ε₁/2} on D′.

    ``n`` (even, ≥ 200) is the size of D. ``rng`` seeds the sample; up to 25
    samples are drawn until one has a tie-breaking record and
    ``p_planned_D``, ``p_planned_D_prime`` ≥ 0.9, else ``ValueError``. ``meta`` holds the
    audit parameters (``levels``, ``epsilon_total``, ``epsilon_split``,
    ``max_order``, ``alpha``), the ``record``, ``scores_D`` / ``scores_D_prime``
    (every distance score the planned run uses), the tied scores
    ``tie_D`` / ``tie_D_prime`` and G² values ``g2_D`` / ``g2_D_prime`` of
    (X0 ⫫ X1 | C1, X0 ⫫ X1 | C2), ``p_planned_D`` / ``p_planned_D_prime``,
    ``sepset_D`` / ``sepset_D_prime`` (arg-max rule) and ``graph_D`` /
    ``graph_D_prime`` (frozensets of directed edges, as
    :func:`dpcd.audit.graph_key`; an undirected edge appears both ways).
    """
    n = check_int(n, "n", minimum=200)
    if n % 2:
        raise ValueError(f"n must be even (half the records are mirror images), got {n}")
    generator = as_rng(rng)
    domain = itertools.product(range(LEVELS["X0"]), range(LEVELS["X1"]), range(LEVELS["C1"]), range(LEVELS["C2"]))
    candidates = sorted((r for r in domain if r[2] != r[3]), key=lambda r: r[2] // 2 != r[3] // 2)
    for _ in range(_TRIES):
        codes = _sample(generator, n // 2)
        on_d = _Scores(codes)
        tie = tuple(on_d(*k) for k in _TIE)
        if tie[0] != tie[1] or tie[0] < 0 or on_d.planned() < _MIN_PLANNED:
            continue
        for record in candidates:
            on_prime = _Scores(np.vstack([codes, np.asarray(record, dtype=np.int64)[None, :]]))
            tie_prime = tuple(on_prime(*k) for k in _TIE)
            if tie_prime[1] > tie_prime[0] >= 0 and on_prime.planned() >= _MIN_PLANNED:
                break
        else:
            continue
        break
    else:
        raise ValueError(f"no sample of {_TRIES} (n = {n}) gave an exact tie that one record breaks with the "
                         f"run reaching it with probability >= {_MIN_PLANNED}; try a larger n or another rng")

    # the arg-max rule of EM-PC: the first maximum among the sets (C1,), (C2,) in that order
    sets = [(_C1,), (_C2,)]
    sepset_d, sepset_prime = sets[int(np.argmax(tie))], sets[int(np.argmax(tie_prime))]
    if sepset_d == sepset_prime:  # cannot happen after the checks above
        raise ValueError("the added record does not change the arg-max separating set")
    graph_d, graph_prime = _planned_graph(sepset_d), _planned_graph(sepset_prime)
    data = pd.DataFrame(codes, columns=list(COLUMNS))
    meta = {
        "levels": dict(LEVELS), "epsilon_total": EPSILON_TOTAL, "epsilon_split": EPSILON_SPLIT,
        "max_order": MAX_ORDER, "alpha": ALPHA,
        "record": dict(zip(COLUMNS, (int(v) for v in record))),
        "tie_D": tie, "tie_D_prime": tie_prime,
        "g2_D": tuple(on_d.g2(*k) for k in _TIE), "g2_D_prime": tuple(on_prime.g2(*k) for k in _TIE),
        "scores_D": on_d.table(), "scores_D_prime": on_prime.table(),
        "p_planned_D": on_d.planned(), "p_planned_D_prime": on_prime.planned(),
        "sepset_D": tuple(COLUMNS[s] for s in sepset_d), "sepset_D_prime": tuple(COLUMNS[s] for s in sepset_prime),
        "graph_D": graph_d, "graph_D_prime": graph_prime, "n": n,
    }
    description = (f"EM-PC sepset tie: D = {n} records (half mirrored, C1 <-> C2), D' = D + record "
                   f"{meta['record']}; score of X0 _||_ X1 given C1 / C2: {tie} on D, {tie_prime} on D' "
                   f"(arg-max set {meta['sepset_D']} -> {meta['sepset_D_prime']})")
    return add_record(data, list(record), description=description, meta=meta)

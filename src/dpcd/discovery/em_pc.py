"""EM-PC: exponential-mechanism PC for categorical data (Xu, Yuan & Wu 2017, Alg. 2–3).

The paper calls it PrivPC; later papers call it EM-PC. For every node x and
order ℓ (one *round*), ``findPrivInd`` chooses at once which neighbours of x
are conditionally independent of it:

1. for every neighbour y still adjacent to x, score every conditioning set
   S ⊆ adj(x) \\ {y} with |S| = ℓ by the signed distance score of the G² test
   of X ⫫ Y | S (:mod:`dpcd.ci.distance`, Eq. 5) and keep the best
   (most independent) S and its score u_y;
2. draw the number β̂ of independent neighbours with the exponential
   mechanism on q₂ (Eq. 6–8) with budget ε₂ (sensitivity 1);
3. draw β̂ neighbours without replacement with the exponential mechanism
   (budget ε₁/β̂ each, sensitivity 1) and remove their edges. Each draw is
   over the (neighbour, conditioning set) **pairs** with quality the pair's
   distance score, so the separating set stored for orientation is chosen by
   the same private draw (see "Separating sets" below).

Rounds run node by node and order by order on the shared PC engine
(:func:`dpcd.discovery.pc.run_pc`, per-node decider); the skeleton search
stops when no node has enough neighbours or when the remaining budget cannot
pay another round (ε₁ + ε₂); edges are then oriented as in PC. With
ε₁ = ε₂ = ε/30 (the paper's setting, Sec. VI-A, and the default) at least 15
rounds are paid, and up to 29 when rounds draw β̂ = 0 (they cost only ε₂).

Privacy: ε-DP under add/remove one record (:data:`RELATION`); public: the
domain sizes, passed as ``levels`` (they fix the G² degrees of freedom and the
table shapes), never read from the codes; n is not needed. :func:`worst_case` gives
the data-independent guarantee. Each
round is (ε₁ + ε₂)-DP by Cor. 1–2 (exponential mechanism, DR14 Thm. 3.10, on
quality functions of sensitivity 1, and basic composition of the β̂ draws);
the rounds compose adaptively and the run stops before the sum could exceed ε
(a pure-DP privacy filter: the budget of a round depends only on earlier
private outputs). Two points where this implementation differs from the text,
both to make the sensitivity claims true:

* the score of a neighbour is the **maximum** distance score over its
  conditioning sets, not the score of the set with the largest p-value (the
  arg-max of p-values is not a 1-Lipschitz choice; a maximum of 1-Lipschitz
  scores is);
* the signed score is k − 1 (independent) / −k (dependent) instead of ±k,
  which has sensitivity 2 at the decision boundary; Eq. 6–8 already contain
  this shift (see :func:`dpcd.ci.distance.count_quality`).

Separating sets
---------------
Orientation reads the separating set of every removed pair, so that set must
be a private output too. Alg. 3 stores the best-scoring set, chosen from the
*un-noised* scores: one record can break a tie between two sets and turn a
collider into a non-collider, a release the ε of the run does not cover: on
the four-variable pair of :func:`dpcd.audit.sepset.sepset_tie_pair` the
output graph has probability ≈ 0.98 on one data set and 0 on its neighbour,
so no finite ε covers it (the audit's 95 % bound is 4.7 for a claimed 2 at
400 runs per data set, and grows with the runs). ``sepset="joint"``
(default) draws each removed neighbour y together with its set S from one
exponential mechanism over all pairs (y, S) of the node, quality = the
distance score of X ⫫ Y | S (sensitivity 1): still ε₁/β̂-DP per draw
[DR14, Thm 3.10] — the number of candidates does not enter the guarantee —
and every neighbour's pairs have the same count C(|adj(x)| − 1, ℓ), so no
neighbour is favoured for having more sets. After a draw, every pair of the
drawn neighbour is excluded (a data-independent rule given the draw).
``sepset="argmax"`` keeps the pre-fix behaviour (draw y on its best score,
store its arg-max set); it is **not** differentially private and exists only
so that the audit can show the leak.

By default (``distance="lipschitz"``) every score is a provable
sensitivity-1 lower bound of the flip distance (exact near the decision
boundary, a bound on how far each record can move G² around the data
elsewhere; :mod:`dpcd.ci.distance`), so
the ε-DP guarantee holds with only the domain sizes public.
``distance="search"`` uses a greedy upper bound refined by an exact search,
which is closer to the paper's exact distance and gives better utility, but is
a theorem only where the search was exact; ``info["unproven_scores"]`` counts
the scores without proof. The test rule is the standard one (independent when p > τ; the
paper's text has it reversed, see ``papers/INDEX.md``).

If β̂ = 0 no neighbour is drawn and only ε₂ is charged for that round (the
β̂ draws are not made), so later rounds may use the saved ε₁.

References
----------
Xu, Yuan & Wu (2017), "Differential privacy preserving causal graph
discovery", IEEE PAC, Alg. 2–3, Eq. 5–8, Cor. 1–2, Thm. 1.
McSherry & Talwar (2007), "Mechanism design via differential privacy", FOCS.
Rogers, Roth, Ullman & Vadhan (2016), "Privacy odometers and filters", NeurIPS.

Examples
--------
>>> EM_PC.name, EM_PC.relation.name, EM_PC.budget_arg, EM_PC.delta_arg, EM_PC.differentially_private
('em_pc', 'add/remove', 'epsilon_total', None, True)
>>> worst = EM_PC.privacy_map(epsilon_total=1.0)   # pure ε-DP, enforced by the privacy filter
>>> worst.epsilon, worst.delta, worst.accountant
(1.0, 0.0, 'filter')
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from itertools import combinations
from typing import Literal, Mapping, Sequence

import numpy as np

from ..ci.distance import (
    count_quality,
    flip_distance,
    full_table,
    g2_public_dof,
    g2_threshold,
)
from ..privacy import PrivacyLedger, exponential_mechanism
from ..privacy.relation import ADD_REMOVE, WorstCase
from ..schema import check_codes, public_levels
from ..validation import (
    RngLike,
    as_data_matrix,
    as_rng,
    check_epsilon,
    check_int,
    check_probability,
)
from .algorithm import PrivateAlgorithm, mark_unproven, unproven_options
from .pc import Decider, PCResult, node_names_of, run_pc

__all__ = ["EM_PC", "EMPCDecider", "em_pc", "worst_case", "RELATION", "PUBLIC", "UNPROVEN", "default_max_distance",
           "round_split"]

RELATION = ADD_REMOVE
"""EM-PC's guarantee is proven under add/remove one record."""
PUBLIC = ("domains",)
"""What EM-PC's guarantee assumes public."""
SepsetRule = Literal["joint", "argmax"]
UNPROVEN = {
    "distance": "the greedy/exact flip-distance search has no sensitivity bound where it is not exact",
    "sepset": "the arg-max separating set of un-noised scores is an uncharged data-dependent choice",
}
"""EM-PC's published-but-unproven variants (``em_pc(unproven=...)``), each with why it is not DP."""
UNPROVEN_VALUES = {"distance": "search", "sepset": "argmax"}


def default_max_distance(epsilon_1: float, epsilon_2: float, max_candidates: int) -> int:
    """Data-independent cap M on |score|: beyond it a candidate's selection weight relative to a
    candidate with score ≥ 0 is below 10⁻⁶ even at the smallest per-draw budget ε₁/(p − 1)."""
    smallest = min(epsilon_1 / max(max_candidates, 1), epsilon_2)
    return int(math.ceil(2.0 * math.log(1e6) / smallest))


class EMPCDecider(Decider):
    """Per-node decider of EM-PC (``findPrivInd``); one instance per run."""

    per_node = True

    def __init__(self, codes: np.ndarray, levels: np.ndarray, *, alpha: float, epsilon: float,
                 epsilon_1: float, epsilon_2: float, rng: np.random.Generator, ledger: PrivacyLedger,
                 max_distance: int, exact_states: int, distance: str = "lipschitz", sepset: str = "joint"):
        if distance not in ("lipschitz", "search"):
            raise ValueError(f"distance must be 'lipschitz' or 'search', got {distance!r}")
        if sepset not in ("joint", "argmax"):
            raise ValueError(f"sepset must be 'joint' or 'argmax', got {sepset!r}")
        mark_unproven(ledger, {k: v for k, v in (("distance", distance), ("sepset", sepset))
                               if v == UNPROVEN_VALUES[k]}, UNPROVEN, algorithm="EM-PC")
        self.codes = codes
        self.sepset = sepset
        self.levels = levels
        self.alpha = alpha
        self.epsilon = epsilon
        self.epsilon_1 = epsilon_1
        self.epsilon_2 = epsilon_2
        self.rng = rng
        self.ledger = ledger
        self.max_distance = max_distance
        self.exact_states = exact_states
        self.distance = distance
        self.n_unproven = 0
        self.spent = 0.0
        self.rounds = 0
        self.skipped_rounds = 0
        self.n_scores = 0
        self.n_exact = 0
        self._scores: dict[tuple[int, int, tuple[int, ...]], int] = {}
        self._thresholds: dict[int, float] = {}

    # ---------------------------------------------------------------- budget
    def _can_pay(self) -> bool:
        return self.spent + self.epsilon_1 + self.epsilon_2 <= self.epsilon * (1 + 1e-12)

    def start_order(self, order: int, adjacency: np.ndarray) -> bool:
        return self._can_pay()

    # ---------------------------------------------------------------- scores
    def score(self, x: int, y: int, S: tuple[int, ...]) -> int:
        """Signed distance score of X ⫫ Y | S (cached per unordered pair and set)."""
        key = (min(x, y), max(x, y), tuple(sorted(S)))
        if key not in self._scores:
            a, b, cond = key
            dof = g2_public_dof(self.levels[a], self.levels[b], [self.levels[s] for s in cond])
            if dof not in self._thresholds:
                self._thresholds[dof] = g2_threshold(dof, self.alpha)
            table = full_table(self.codes, a, b, cond, self.levels)
            result = flip_distance(table, threshold=self._thresholds[dof], max_distance=self.max_distance,
                                   exact_states=self.exact_states, method=self.distance)
            self.n_scores += 1
            self.n_exact += int(result.exact)
            self.n_unproven += int(not result.provable)
            self._scores[key] = result.score
        return self._scores[key]

    # ---------------------------------------------------------------- one round
    def decide_node(self, x: int, neighbours: np.ndarray, order: int,
                    adjacency: np.ndarray) -> tuple[Mapping[int, tuple[int, ...]], int]:
        """One EM-PC round at node ``x``: the exponential mechanism (ε₂, quality q₂) draws how many neighbours to
        remove, then β draws (ε₁/β each) pick them with their separating sets; both are charged to the ledger.
        Returns the removed neighbours with their sets and the number of scores computed. A round the budget cannot
        pay for removes nothing (counted in ``skipped_rounds``)."""
        candidates = [int(y) for y in neighbours if adjacency[x, y]]
        if not candidates:
            return {}, 0
        if not self._can_pay():
            self.skipped_rounds += 1
            return {}, 0
        frozen = [int(v) for v in neighbours]
        scores = np.empty(len(candidates))
        set_scores: list[np.ndarray] = []
        sets: list[list[tuple[int, ...]]] = []
        n_tests = 0
        for i, y in enumerate(candidates):
            others = [v for v in frozen if v != y]
            options = list(combinations(others, order))
            values = np.array([self.score(x, y, S) for S in options], dtype=float)
            n_tests += len(options)
            scores[i] = values.max()
            set_scores.append(values)
            sets.append(options)
        # number of independent neighbours: exponential mechanism on q2 (Eq. 6-8), budget epsilon_2
        beta = exponential_mechanism(count_quality(scores), epsilon=self.epsilon_2, sensitivity=1.0, rng=self.rng)
        self.ledger.charge("EM-PC: number of independent neighbours (q2)", epsilon=self.epsilon_2,
                           kind="exponential", note=f"node {x}, order {order}")
        self.spent += self.epsilon_2
        self.rounds += 1
        removed: dict[int, tuple[int, ...]] = {}
        if beta > 0:
            step = self.epsilon_1 / beta
            if self.sepset == "joint":
                # one exponential mechanism over (neighbour, conditioning set) pairs: the separating set
                # stored for orientation is part of the private draw
                flat = np.concatenate(set_scores)
                owner = np.repeat(np.arange(len(candidates)), [len(v) for v in set_scores])
                flat_sets = [S for options in sets for S in options]
                for _ in range(beta):
                    pick = exponential_mechanism(flat, epsilon=step, sensitivity=1.0, rng=self.rng)
                    removed[candidates[owner[pick]]] = flat_sets[pick]
                    flat[owner == owner[pick]] = -np.inf
            else:  # "argmax": the pre-fix reading of Alg. 3 - the stored set is chosen without noise (not DP)
                remaining = scores.copy()
                for _ in range(beta):
                    pick = exponential_mechanism(remaining, epsilon=step, sensitivity=1.0, rng=self.rng)
                    remaining[pick] = -np.inf
                    removed[candidates[pick]] = sets[pick][int(np.argmax(set_scores[pick]))]
            self.ledger.charge("EM-PC: independent neighbours (q1)", epsilon=step, count=beta, kind="exponential",
                               note=f"node {x}, order {order}")
            self.spent += self.epsilon_1
        return removed, n_tests


def round_split(epsilon: float, epsilon_split) -> tuple[float, float]:
    """(ε₁, ε₂) of one round: the paper's ε/30 each, or the given pair (their sum at most ε).

    >>> round_split(3.0, None)
    (0.1, 0.1)
    """
    if epsilon_split is None:
        return epsilon / 30.0, epsilon / 30.0
    try:
        e1, e2 = epsilon_split
    except (TypeError, ValueError):
        raise TypeError("epsilon_split must be a pair (epsilon_1, epsilon_2) or None") from None
    e1 = check_epsilon(e1, "epsilon_split[0]")
    e2 = check_epsilon(e2, "epsilon_split[1]")
    if e1 + e2 > epsilon * (1 + 1e-12):
        raise ValueError(f"epsilon_split={epsilon_split!r}: one round (epsilon_1 + epsilon_2 = {e1 + e2}) "
                         f"exceeds epsilon_total={epsilon}")
    return e1, e2


def worst_case(*, epsilon_total: float, epsilon_split=None) -> WorstCase:
    """The data-independent guarantee of any :func:`em_pc` run: (ε_total, 0)-DP under add/remove.

    Every round is at most (ε₁ + ε₂)-DP (Cor. 1–2) and the run pays a round
    only while the charges so far plus ε₁ + ε₂ stay within ε_total (a pure-DP
    privacy filter [RRUV16]), so every run's charges sum to at most ε_total,
    whatever the data; only the domain sizes are public. (The filter compares
    floating-point sums with a relative slack of 10⁻¹², so that k rounds of
    ε_total/k are not refused for a rounding of their sum: the rounds' real
    sum can exceed ε_total by that much — far less than the floating-point
    error of the noise draws themselves.)

    >>> worst_case(epsilon_total=3.0).epsilon
    3.0
    """
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    e1, e2 = round_split(epsilon_total, epsilon_split)
    ledger = PrivacyLedger("add/remove", public=PUBLIC)
    ledger.charge("EM-PC rounds (q2 count + q1 draws) under the budget filter", epsilon=epsilon_total,
                  kind="pure", note="the filter stops before the rounds' charges exceed epsilon_total")
    return WorstCase("em_pc", RELATION, epsilon_total, 0.0, PUBLIC,
                     "Xu, Yuan & Wu 2017, Thm. 1 (exponential mechanism per round, Cor. 1-2; Dwork & Roth 2014, Thm. "
                     "3.10) and a "
                     "pure-DP budget filter over rounds (Rogers, Roth, Ullman & Vadhan 2016)", "filter", ledger,
                     {"epsilon_total": epsilon_total, "epsilon_1": e1, "epsilon_2": e2})


def em_pc(data, *, levels, epsilon_total: float, alpha: float = 0.01, rng: RngLike, epsilon_split=None,
          max_order: int | None = None, node_names: Sequence[str] | None = None,
          max_distance: int | None = None, exact_states: int = 500, max_tests: int | None = None,
          unproven: Mapping[str, str] | None = None) -> PCResult:
    """EM-PC (PrivPC of paper 000): ε-DP PC for categorical data via the exponential mechanism.

    Parameters
    ----------
    data : integer category codes 0..k−1 (rows × variables), e.g. from
        :meth:`dpcd.schema.Schema.encode`.
    levels : the public domain sizes (a sequence, a mapping column → size, or a
        :class:`~dpcd.schema.Schema`); codes must lie in 0..levels − 1.
    epsilon_total : total privacy budget ε > 0 of the run.
    alpha : significance level τ of the G² tests (independent when p > τ).
    rng : numpy Generator or integer seed.
    epsilon_split : (ε₁, ε₂) per round (node selection, count); default
        ε₁ = ε₂ = ε/30, the paper's setting (Sec. VI-A).
    max_order : largest conditioning-set size (None = no limit).
    max_tests : cap on the run's CI decisions (None = none): an order starts only if it cannot exceed it
        (:func:`dpcd.discovery.pc.pc_skeleton`); a function of earlier private decisions, so it costs no budget.
    node_names : variable names (default: DataFrame columns or X1..Xp).
    max_distance : data-independent cap on |distance score| (default
        :func:`default_max_distance` from ε₁, ε₂ and p).
    exact_states : budget of the exact distance search of the unproven ``distance="search"``.
    unproven : the published-but-unproven variants, for reproducing the paper only (:data:`UNPROVEN`):
        ``{"distance": "search"}`` scores by the greedy/exact search (closer to the paper's exact distance,
        no proven sensitivity where a score is not exact); ``{"sepset": "argmax"}`` stores the arg-max
        separating set of un-noised scores (the pre-fix rule, see the module docstring). A run with either
        is **not DP**: its ledger says so (:meth:`~dpcd.privacy.PrivacyLedger.mark_not_dp`).

    Privacy: ε-DP under add/remove one record with the domain sizes public
    (paper 000, Thm. 1; :func:`worst_case`; see the module docstring for the
    corrections) for the run without ``unproven``. The ledger never totals
    more than ``epsilon_total``.

    Returns a :class:`PCResult`; ``info`` holds ``rounds``, ``spent``,
    ``n_scores`` (distinct distance scores), ``exact_fraction`` and ``seconds``.
    ``rounds`` and ``spent`` are functions of the private draws; the score
    diagnostics (``exact_fraction``, ``unproven_scores``) and ``seconds`` are
    computed from the data **without noise**: they are for the data holder and
    for experiments, not for release (``discover`` writes none of them).

    Examples
    --------
    >>> from dpcd.datasets import load_bnlearn
    >>> data = load_bnlearn("cancer", 2000, rng=0)
    >>> result = em_pc(data.data, levels=data.levels, epsilon_total=5.0, rng=1)
    >>> result.ledger.total("basic").epsilon <= 5.0
    True
    """
    started = time.perf_counter()
    epsilon = check_epsilon(epsilon_total, "epsilon_total")
    alpha = check_probability(alpha, "alpha")
    e1, e2 = round_split(epsilon, epsilon_split)
    exact_states = check_int(exact_states, "exact_states", minimum=0)
    options = unproven_options(unproven, UNPROVEN, algorithm="em_pc")
    for option, value in options.items():
        if value != UNPROVEN_VALUES[option]:
            raise ValueError(f"unproven: {option} must be {UNPROVEN_VALUES[option]!r}, got {value!r}")
    distance, sepset = options.get("distance", "lipschitz"), options.get("sepset", "joint")
    codes = as_data_matrix(data, kind="discrete", min_rows=0)  # n is protected under add/remove: any n runs
    codes = np.asfortranarray(codes)
    names = node_names_of(data, node_names)
    p = codes.shape[1]
    levels = public_levels(levels, p, names)
    check_codes(codes, levels)
    if max_distance is None:
        max_distance = default_max_distance(e1, e2, p - 1)
    max_distance = check_int(max_distance, "max_distance", minimum=1)
    generator = as_rng(rng)
    ledger = PrivacyLedger("add/remove", public=PUBLIC)
    decider = EMPCDecider(codes, levels, alpha=alpha, epsilon=epsilon, epsilon_1=e1, epsilon_2=e2, rng=generator,
                          ledger=ledger, max_distance=max_distance, exact_states=exact_states,
                          distance=distance, sepset=sepset)
    result = run_pc(names, decider, max_order=max_order, ledger=ledger, max_tests=max_tests)
    stopped = result.stopped_early or decider.skipped_rounds > 0
    return replace(result, stopped_early=stopped, info={
        "algorithm": "em_pc", "epsilon_total": epsilon, "epsilon_1": e1, "epsilon_2": e2, "alpha": alpha,
        "rounds": decider.rounds, "skipped_rounds": decider.skipped_rounds, "spent": decider.spent,
        "n_scores": decider.n_scores, "exact_fraction": decider.n_exact / max(decider.n_scores, 1),
        "distance": distance, "sepset": sepset, "unproven_scores": decider.n_unproven,
        "max_distance": max_distance, "seconds": time.perf_counter() - started,
    })


EM_PC = PrivateAlgorithm(
    name="em_pc", label="EM-PC", data="categorical", relation=RELATION, public=PUBLIC, budget="total",
    budget_arg="epsilon_total", run=em_pc, privacy_map=worst_case, theorem="Xu, Yuan & Wu 2017, Thm. 1")
"""EM-PC as a :class:`~dpcd.discovery.algorithm.PrivateAlgorithm`."""

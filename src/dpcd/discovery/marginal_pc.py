"""Marginal-PC: PC on privately measured marginal tables, with noise-aware CI tests (categorical data).

Every private PC before this one pays for each CI *decision*: thousands of
noisy decisions on alarm, so an honest total budget leaves each almost no
signal. Marginal-PC pays for **data** instead — the contingency tables the
tests read — and makes every decision from them as post-processing:

1. **Order 0.** The two-way table of every pair of columns is released with
   Gaussian noise (one Gaussian mechanism on all p(p − 1)/2 tables) — as its
   **interaction and margins** (``interaction_pairs``,
   :mod:`dpcd.privacy.interactions`): each pair's double-centred table in
   an orthonormal basis and each column's one-way margin, from which every
   pair table is rebuilt. A replaced record moves this release by
   Δ₀ = :func:`~dpcd.privacy.interactions.interaction_sensitivity` (on p
   binary columns Δ₀² = ⌊(p + 2)²/4⌋ against the full tables' 2M₀ = p(p − 1)),
   so the same μ₀ buys from about a quarter of the noise variance (binary
   columns, large p; alarm 0.43) up to just under the full tables' (few
   columns, many categories); the tests' bootstrap draws the rebuilt tables' own
   noise (``noise="interaction"`` in :mod:`dpcd.ci.noisy`). Where Δ₀² is not
   below 2M₀ (few columns, or many categories: the margins cost 2 per
   changed column) the full tables are released: a comparison of public
   sizes.
2. **Order k ≥ 1.** From the graph left by the earlier orders (a function of
   released tables only), each remaining edge x − y is tested against
   conditioning sets S of size k drawn from its ``candidates`` strongest
   neighbours (ranked by the mutual information of the released order-0 pair
   tables: min(I(x; z), I(y; z)); three at order 1, two at order 2); the (k + 2)-way table of every needed
   variable set {x, y} ∪ S is released with Gaussian noise, in one mechanism
   per order. At order 1 a test the pair tables already decide — the (x, y)
   table far from the one x ⫫ y | z implies from the (x, z) and (y, z) tables
   (:func:`dpcd.ci.noisy.pairwise_screen_test`, level ``screen_alpha``) — keeps
   its edge without a three-way table, so the budget goes to the tests that
   need one. **More sets while the budget affords them**: the order then adds
   the tables of further conditioning sets drawn from ``more_candidates``
   strongest neighbours (five) — every edge's best remaining set first, then
   every edge's second, … — each one bought if the order's per-cell noise
   σ_k = √(2 M_k)/μ_k would stay within ``noise_ratio`` (0.2) of n/cells, the
   mean count per cell of its largest table (a set that does not fit is
   skipped and the next tried). At a small budget this adds nothing; at a
   large one the search approaches PC's, so the released graph keeps improving
   where the strongest few neighbours miss a separating set. A test whose
   table was not bought keeps its edge, and no table is bought for an edge the
   tree below protects. **At orders k ≥ 2 the always-measured sets widen with
   the budget** (``budget_candidates``): they are drawn from the largest c
   neighbours, from ``candidates`` up to ``more_candidates``, whose M(c) tables
   keep σ_k = √(2 M(c))/μ_k within ``noise_ratio`` of n / (median cells of
   those tables) — at a large budget every edge is tested against more sets
   before the further-table rule starts, which the largest table alone could
   block.
3. **A tree is kept.** The maximum spanning tree of the graph left by order 0,
   weighted by the released pair tables' mutual information (the Chow–Liu
   tree), is kept out of the later tests (``protect_tree``): in a distribution
   faithful to a DAG its edges are almost always true adjacencies (along a
   chain x → z → y, I(x; y) ≤ min(I(x; z), I(z; y))), and a true edge is
   otherwise lost as soon as one of its noisy tests misses — the commonest
   error at a small budget. Only tree edges whose order-0 test is beyond every
   null draw are kept (``protect_alpha``): a tree must reach every node, and
   where a node's true edges were lost it does so through a false one.
   Post-processing of released tables.
4. **Tests** are :func:`dpcd.ci.noisy.noisy_table_test` at level ``alpha``
   (two-sided, calibrated for the known noise by a parametric bootstrap); the
   PC engine removes an edge when a test finds no evidence against
   independence and stores the set. **At order 1 a test reads both releases
   of the question** (``combine_screen``): the three-way table's p-value and
   the screen's on the pair tables (whose noise is independent of it) are
   joined by Fisher's method (:func:`fisher_combined_p`), so an edge is
   removed only when the two together find no evidence against x ⫫ y | z.
   A true edge weak beside the three-way table's noise was otherwise lost to
   that one noisy test. Post-processing.
5. **Colliders need evidence** (``collider_evidence``). PC orients every
   unshielded x − z − y with z outside sepset(x, y) as x → z ← y; a noisy
   search removes x − y for lack of power, or without z among the sets it
   measured, and that rule then invents colliders. Here the triple is a
   collider only when the released tables reject x ⫫ y | z at level ``alpha``
   — the three-way table of {x, y, z} if order 1 bought it, otherwise the
   three pair tables (:func:`dpcd.ci.noisy.pairwise_screen_test`) — and is
   left unoriented otherwise; Meek's rules follow. Post-processing.
   **Which sets separate is asked of the tables, not of the search**
   (``max_p_colliders``): every released table holding x and y gives a set S
   and a p-value of x ⫫ y | S; the triple is a collider only when the best of
   the sets without z beats the best of those with z (the max-p rule of
   Ramsey's PC-Max, on the sets the release measured), besides the evidence
   above. The search stops at the first set that looks separating, which with
   noisy tests is often the wrong one for orientation. Post-processing.
6. **Tables read as one consistent estimate** (``denoise``). A three-
   or four-way table is noisy in every cell, but its margins were measured too
   — by the pair tables of order 0 and the tables of lower orders — with much
   less noise per count. From order ``denoise`` on a test reads its table
   as estimated from every released table that overlaps it
   (:class:`dpcd.ci.denoise.TableEstimator`: inverse-variance means of each
   ANOVA component, the closed-form least-squares fit of overlapping
   marginals), and its bootstrap draws that estimate's noise. The default
   (2) leaves order 1 to step 4; with ``denoise=1`` an order-1 test holds what
   the pair tables say already and reads the estimate alone, without the
   Fisher combination. Post-processing.

Budget. The total (ε, δ) is turned into one Gaussian-DP level μ
(:func:`dpcd.privacy.gdp.gdp_mu`), split over the orders 0..K (K =
``max_order``) by public weights — half of μ² at order 0 and the rest evenly
over orders 1..K (:func:`order_weights`) — so order k releases its M_k tables
with per-cell noise σ_k = √(2 M_k) / μ_k, μ_k = μ √w_k (at order 0 with
``interaction_pairs``, σ₀ = Δ₀/μ₀ per released coordinate).

Privacy
-------
Relation: replace one record (n public). Public: n, the domain sizes
(``levels``), and the parameters (ε, δ, α, ``max_order``, ``candidates``,
``more_candidates``, ``noise_ratio``, ``budget_candidates``, ``screen_alpha``,
``n_boot``, the order weights, ``max_tests``, ``collider_evidence``,
``max_p_colliders``, ``protect_tree``, ``protect_alpha``, ``combine_screen``,
``interaction_pairs``, ``denoise``).

**Theorem.** Any run of :func:`marginal_pc` with ``epsilon_total`` = ε and
``delta`` = δ is (ε, δ)-DP under replace-one.

*Proof.* Fix the outputs of orders 0..k − 1 and the tests' bootstrap draws
(secret, like the noise, but independent of the data). They determine the
graph, the candidate ranking, the protected tree and the screen's decisions;
with the public n, domains, μ_k, ``noise_ratio`` and ``more_candidates`` they
determine the always-measured candidates at order k, then which further sets
are bought — hence the collection 𝒰_k of variable sets whose tables order k
releases and their number M_k. Replacing
one record moves one count in each table from one cell to another: the
concatenated tables change by at most √(2 M_k) in L2 norm, so adding
N(0, σ_k²) per cell with σ_k = √(2 M_k)/μ_k is μ_k-GDP for every value of the
earlier outputs [DRS22, Thm. 2.7] (M_k = 0 releases nothing). With
``interaction_pairs`` order 0 releases instead every pair's interaction
coordinates and every margin, whose L2 sensitivity under replace-one is
Δ₀ (:mod:`dpcd.privacy.interactions`, theorem proved there and attained), with
N(0, (Δ₀/μ₀)²) per coordinate: μ₀-GDP likewise; the rebuilt pair tables are
post-processing. The μ_k = μ√w_k
are fixed before the run, so the adaptive composition of the orders is
√(Σ_k μ_k²) ≤ μ-GDP [DRS22, Cor. 3.3] — whether the run stops early (no edge
left to test, the test cap ``max_tests``) or not. Everything else — the tests
and their bootstrap draws, the screen, the ranking, the choice of tables, the
cap, the tables' joint estimates (step 6: released tables and their noise variances σ_k², functions of public
sizes and of M_k), the orientation and its collider tests — read only released tables and public values:
post-processing. μ-GDP is
(ε, δ(ε))-DP with δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) [DRS22, Cor. 2.13],
and μ = ``gdp_mu(ε, δ)`` makes δ(ε) ≤ δ. ∎

The worst case is therefore the plan itself (:func:`worst_case`): the guarantee
does not depend on how many tests or tables a run needs. The noisy tables stay
inside the run (only the graph leaves it, a coarse function of them), so the
floating-point noise is not published as numbers.

References
----------
.. [DRS22] J. Dong, A. Roth, W. J. Su. *Gaussian Differential Privacy.* JRSS-B 84(1), 2022.
Spirtes, Glymour & Scheines (2000), *Causation, Prediction, and Search* (PC);
Colombo & Maathuis (2014), JMLR 15 (the order-independent PC the engine runs);
Ramsey (2016), "Improving accuracy and scalability of the PC algorithm by maximizing P-value", arXiv:1610.00378
(PC-Max);
McKenna, Miklau & Sheldon (2021), "Winning the NIST contest: a scalable and
general approach to differentially private synthetic data" (measure marginals
once with Gaussian noise, answer queries by post-processing).

Examples
--------
>>> from dpcd.datasets import load_bnlearn
>>> from dpcd.graphs import dag_to_cpdag, skeleton_prf
>>> sample = load_bnlearn("cancer", 20_000, rng=0)
>>> result = marginal_pc(sample.data, levels=sample.levels, epsilon_total=1.0, delta=1e-6, rng=1)
>>> round(result.ledger.total("tight", target_delta=1e-6).epsilon, 6) <= 1.0
True
>>> skeleton_prf(result.cpdag, dag_to_cpdag(sample.dag))["f1"] > 0.5
True
>>> MARGINAL_PC.name, MARGINAL_PC.relation.name, MARGINAL_PC.budget_arg, MARGINAL_PC.differentially_private
('marginal_pc', 'replace', 'epsilon_total', True)
>>> worst = MARGINAL_PC.privacy_map(epsilon_total=1.0, delta=1e-6)   # the plan is the guarantee
>>> worst.epsilon, worst.delta, worst.accountant
(1.0, 1e-06, 'gdp')
"""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import combinations
from typing import Sequence

import networkx as nx
import numpy as np

from ..ci.denoise import Measurement, TableEstimator
from ..ci.noisy import DEFAULT_BOOTSTRAP, noisy_table_test, pairwise_screen_test
from ..privacy import PrivacyLedger
from ..privacy.gdp import gdp_epsilon, gdp_mu
from ..privacy.interactions import interaction_sensitivity, pair_interaction_mechanism
from ..privacy.mechanisms import gdp_gaussian_mechanism
from ..privacy.relation import REPLACE_ONE, WorstCase
from ..schema import check_codes, public_levels
from ..validation import (
    RngLike,
    as_rng,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
)
from .algorithm import PrivateAlgorithm
from .counted import as_codes, code_rows, marginal_table
from .pc import Decider, PCResult, node_names_of, orient, run_pc

__all__ = ["marginal_pc", "worst_case", "order_weights", "MarginalTablesDecider", "MARGINAL_PC", "RELATION", "PUBLIC",
           "ORDER0_SHARE", "DEFAULT_COLLIDER_EVIDENCE", "DEFAULT_MAX_ORDER", "DEFAULT_CANDIDATES", "DEFAULT_MORE_CANDIDATES", "DEFAULT_NOISE_RATIO",
           "DEFAULT_BUDGET_CANDIDATES", "DEFAULT_MAX_P_COLLIDERS", "DEFAULT_PROTECT_ALPHA", "DEFAULT_COMBINE_SCREEN",
           "DEFAULT_INTERACTION_PAIRS",
           "DEFAULT_DENOISE", "fisher_combined_p"]

RELATION = REPLACE_ONE
PUBLIC = ("n", "domains")
ORDER0_SHARE = 0.5
"""Share of μ² spent on the pair tables of order 0; the rest is split evenly over orders 1..K. Chosen among 0.3, 0.5
and 0.7 by the mean skeleton and CPDAG F1 on development data only (alarm, child, sachs, asia and four random
networks of seeds 2000–2011, n = 100 000, ε = 0.3 and 1): 0.3 gave 0.78 / 0.87 skeleton F1 at ε = 0.3 / 1, 0.5
0.79 / 0.89 with 0.61 / 0.75 CPDAG F1 (with :data:`DEFAULT_COLLIDER_EVIDENCE`)."""
DEFAULT_MAX_ORDER = 2
DEFAULT_COLLIDER_EVIDENCE = True
"""Orient an unshielded triple as a collider only with evidence in the released tables
(:meth:`MarginalTablesDecider.collider`). Chosen on the development data of :data:`ORDER0_SHARE`: mean CPDAG F1 0.54 /
0.64 without it at ε = 0.3 / 1, 0.59 / 0.69 with it (order-0 share 0.3), the skeleton unchanged."""
DEFAULT_CANDIDATES = (3, 2)
"""Neighbours per edge end whose subsets are always measured at orders 1 and 2: every pair of 3 at order 1 would
triple the order-2 tables and so their noise at a small budget; at order 1 the screen on pair tables keeps the table
count down."""
DEFAULT_MORE_CANDIDATES = (5, 5)
"""Neighbours per edge end whose further subsets an order measures while its budget affords them
(:data:`DEFAULT_NOISE_RATIO`): at a large budget the search approaches PC's, whose separating sets need not be among
the strongest two or three neighbours."""
DEFAULT_NOISE_RATIO = 0.2
"""A further table is bought only if the order's per-cell noise σ_k = √(2 M_k)/μ_k stays within this share of
n/cells, the mean count per cell of the largest table bought. Chosen, with :data:`DEFAULT_MORE_CANDIDATES`, from
trial runs on other samples of sachs, asia, child and alarm before the benchmark run (so those four networks are
not an independent test of it)."""
DEFAULT_PROTECT_ALPHA = None
"""Order-0 p-value at or below which a spanning-tree edge is protected from later tests (1: every tree edge); None:
1/(``n_boot`` + 1), the smallest p-value the bootstrap gives, so only tree edges beyond every null draw are
protected. Why: on development data at ε = 1 every extra edge whose true separating set is empty was a protected tree
edge (a tree must reach every node, through a false edge where a node's true ones were lost). Adopted by a rule
fixed before the run — the highest mean skeleton F1 over ε = 0.3, 1 and 3, unless the mean CPDAG F1 falls more than
0.01 below the default's at some ε — with 300 draws (a level of 0.004) on asia, sachs, child, alarm and random
networks of seeds 9701–9704 per degree profile (n = 100 000, one release each): skeleton F1 0.789 / 0.868 / 0.881
against 0.756 / 0.839 / 0.857, CPDAG F1 0.611 / 0.732 / 0.766 against 0.572 / 0.701 / 0.752 with every tree edge
protected; a level of 0.01 gave 0.786 / 0.864 / 0.874."""
DEFAULT_MAX_P_COLLIDERS = True
"""Decide unshielded triples by the max-p rule on the released tables (:meth:`MarginalTablesDecider.max_p_collider`)
rather than the search's separating set, with :data:`DEFAULT_COLLIDER_EVIDENCE`. Adopted by a rule fixed before the
run — the highest mean CPDAG F1 over ε = 0.3, 1 and 3, unless it falls more than 0.01 below the default's at some ε
(the skeleton is the same by construction) — on development data only (asia, sachs, child, alarm and random networks
of seeds 9401–9404 per degree profile, n = 100 000, one release each): mean CPDAG F1 0.594 / 0.729 / 0.775 against
0.557 / 0.681 / 0.726 with the search's separating sets; the max-p rule without the evidence clause gave
0.499 / 0.629 / 0.704."""
DEFAULT_COMBINE_SCREEN = True
"""Decide an order-1 test by Fisher's combination of the three-way table's p-value and the pair-table screen's
(:func:`fisher_combined_p`) instead of the three-way table alone. Why: on development data at ε = 1 (asia, sachs,
child, alarm, random networks of seeds 9801–9804 per profile), 29 true edges were removed at order 1, 15 of them by
the one three-way table the edge had (per-cell noise σ ≈ 290–450, p 0.05–0.91), and the pair-table screen had put
p ≤ 0.05 on 12 of the 29 — evidence the removal ignored. Adopted by a rule fixed before the run — the
highest mean skeleton F1 over ε = 0.3, 1 and 3, unless the mean CPDAG F1 falls more than 0.01 below the default's at
some ε — on development data only (asia, sachs, child, alarm and random networks of seeds 9901–9904 per degree
profile, n = 100 000, one release each, both arms on the same data and noise): skeleton F1 0.783 / 0.888 / 0.894
against 0.775 / 0.886 / 0.893, CPDAG F1 0.659 / 0.762 / 0.810 against 0.652 / 0.741 / 0.785."""
DEFAULT_BUDGET_CANDIDATES = True
"""Widen the always-measured candidates of orders ≥ 2 while the budget affords them
(:meth:`MarginalTablesDecider.order_candidates`). Adopted by a rule fixed before the run — the highest mean skeleton
F1 over ε = 0.3, 1 and 3, unless the mean CPDAG F1 falls more than 0.01 below the default's at some ε — on
development data only (asia, sachs, child, alarm and random networks of seeds 9201–9204 per degree profile,
n = 100 000, one release each): skeleton F1 0.791 / 0.879 / 0.884 against 0.792 / 0.891 / 0.867, CPDAG F1
0.576 / 0.671 / 0.743 against 0.580 / 0.678 / 0.730, skeleton F1 falling from ε = 1 to 3 on 2 of 12 data sets
against 5. It costs at ε = 1 (alarm 0.74 against 0.83 in that draw). The same rule applied at order 1 as well
failed (CPDAG F1 at ε = 1 0.652 against 0.669, seeds 9101–9104)."""
DEFAULT_DENOISE = 2
"""The smallest order whose tests read their tables as estimated from every released table that overlaps them
(:class:`dpcd.ci.denoise.TableEstimator`; None: each test reads its own table). Why: on the held-out benchmark most
lost true edges were removed at orders 1–2 by one noisy test, whose table's margins the pair tables and the lower
orders had measured far more precisely. Adopted by a rule fixed before the run — the highest mean skeleton F1 over
ε = 0.3, 1 and 3, unless the mean CPDAG F1 falls more than 0.01 below today's at some ε — on development data only
(asia, sachs, child, alarm and random networks of 30 and 60 nodes, seeds 9661–9664 per degree profile, n = 100 000,
one release each, every arm on the same data and noise seed): from order 2, skeleton F1 0.885 / 0.897 / 0.918
against 0.867 / 0.896 / 0.903 without, CPDAG F1 0.715 / 0.787 / 0.827 against 0.721 / 0.779 / 0.801; from order 1
(order 1 then reads the estimate alone, without the Fisher combination) 0.887 / 0.884 / 0.917 and
0.743 / 0.764 / 0.825, its skeleton F1 falling from ε = 0.3 to 1 on 7 of the 12 data sets. An earlier run of the
same trial was void: a unit test then showed the tests on estimated tables standardising their statistics by
degrees of freedom that the estimate's uneven noise no longer has (:func:`dpcd.ci.noisy.noisy_table_test` now
standardises them by their null draws)."""
DEFAULT_INTERACTION_PAIRS = True
"""Release order 0's pair tables as every pair's interaction and every column's margin
(:func:`dpcd.privacy.interactions.pair_interaction_mechanism`) instead of the full tables: the same μ₀ at the smaller
sensitivity Δ₀ (alarm: σ₀ 143 against 218 at ε = 1, n = 100 000). Adopted by a rule fixed before the run — the
highest mean skeleton F1 over ε = 0.3, 1 and 3, unless the mean CPDAG F1 falls more than 0.01 below the default's at
some ε — on development data only (asia, sachs, child, alarm and random networks of 30 nodes, seeds 9501–9504 per
degree profile, n = 100 000, one release each, both arms on the same data and noise seed): skeleton F1
0.906 / 0.911 / 0.942 against 0.893 / 0.903 / 0.938, CPDAG F1 0.792 / 0.818 / 0.887 against 0.705 / 0.806 / 0.881."""
THEOREM = ("Gaussian mechanism on the marginal tables of each order, L2 sensitivity sqrt(2 M_k) under replace-one "
           "(order 0: every pair's interaction and every margin, the sensitivity of dpcd.privacy.interactions) "
           "(Dong, Roth & Su 2022, Thm. 2.7), adaptive composition of Gaussian DP over the orders (Cor. 3.3) and "
           "its exact (epsilon, delta) curve (Cor. 2.13); tests, screen and orientation are post-processing")


def order_weights(max_order: int) -> np.ndarray:
    """Public shares w_k of μ² per order 0..K: :data:`ORDER0_SHARE` at order 0, the rest evenly over 1..K.

    >>> order_weights(2).tolist()
    [0.5, 0.25, 0.25]
    >>> order_weights(0).tolist()
    [1.0]
    """
    max_order = check_int(max_order, "max_order", minimum=0)
    if max_order == 0:
        return np.array([1.0])
    return np.array([ORDER0_SHARE] + [(1.0 - ORDER0_SHARE) / max_order] * max_order)


def _caps(value: int | Sequence[int], name: str) -> tuple[int, ...]:
    caps = tuple(check_int(c, name, minimum=1) for c in
                 ((value,) if isinstance(value, (int, np.integer)) else value))
    if not caps:
        raise ValueError(f"{name} must be a positive integer or a non-empty sequence of them (one per order)")
    return caps


def _per_order(caps: tuple[int, ...], orders: int) -> tuple[int, ...]:
    """``caps`` for orders 1..``orders`` (the last repeats)."""
    return tuple(caps[min(k, len(caps)) - 1] for k in range(1, max(orders, 1) + 1))


def _order_mus(epsilon_total: float, delta: float, max_order: int) -> np.ndarray:
    return gdp_mu(epsilon_total, delta) * np.sqrt(order_weights(max_order))


def _charge(ledger: PrivacyLedger, order: int, mu: float, delta: float, tables: int, sigma: float,
            sensitivity: float, interactions: bool = False) -> None:
    what = f"{tables} pair tables as interactions and margins, N(0, {sigma:.4g}^2) per coordinate" if interactions \
        else f"{tables} tables of {order + 2} columns, N(0, {sigma:.4g}^2) per cell"
    ledger.charge(f"order-{order} marginal tables", epsilon=gdp_epsilon(mu, delta, positive=True), delta=delta,
                  kind="gaussian", sensitivity=sensitivity, scale=sigma, note=f"{what} ({mu:.4g}-GDP)")


def worst_case(*, epsilon_total: float, delta: float, max_order: int | None = DEFAULT_MAX_ORDER) -> WorstCase:
    """The data-independent guarantee of any :func:`marginal_pc` run: (``epsilon_total``, ``delta``) under replace-one.

    The ledger holds one Gaussian charge per order at its μ_k (sensitivity 1,
    σ = 1/μ_k: the level the run's charges have whatever M_k), composed exactly.

    >>> worst = worst_case(epsilon_total=1.0, delta=1e-6)
    >>> worst.epsilon, worst.delta, round(worst.charges.total("tight", target_delta=1e-6).epsilon, 9)
    (1.0, 1e-06, 1.0)
    """
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    delta = check_delta(delta)
    order = DEFAULT_MAX_ORDER if max_order is None else check_int(max_order, "max_order", minimum=0)
    mus = _order_mus(epsilon_total, delta, order)
    ledger = PrivacyLedger("replace", public=PUBLIC)
    for k, mu in enumerate(mus):
        _charge(ledger, k, float(mu), delta / len(mus), 0, 1.0 / float(mu), 1.0)
    return WorstCase("marginal_pc", RELATION, epsilon_total, delta, PUBLIC, THEOREM, "gdp", ledger,
                     {"epsilon_total": epsilon_total, "delta": delta, "max_order": order,
                      "mu": float(np.sqrt(np.sum(mus ** 2))), "order_weights": order_weights(order).tolist()})


def _mutual_information(table: np.ndarray) -> float:
    """Plug-in mutual information (nats) of a released pair table, negative cells clipped."""
    joint = np.clip(table, 0.0, None)
    total = joint.sum()
    if total <= 0:
        return 0.0
    joint = joint / total
    outer = joint.sum(axis=1, keepdims=True) * joint.sum(axis=0, keepdims=True)
    mask = joint > 0
    return float(np.sum(joint[mask] * np.log(joint[mask] / outer[mask])))


def fisher_combined_p(*p_values: float) -> float:
    """Fisher's combination of independent p-values: P(χ²_{2m} ≥ −2 Σ log p_i) for m of them (closed form,
    e^{−h} Σ_{i<m} h^i / i! with h = −Σ log p_i). Under a null that makes each p uniform and the p's independent,
    the combination is uniform too, so its level is the tests'. In :class:`MarginalTablesDecider` the two tests of
    x ⫫ y | z read tables with independent noise; they share the sample's own error, small beside the noise where
    the screen decides (so the independence is approximate).

    >>> round(fisher_combined_p(0.5), 6), round(fisher_combined_p(0.1, 0.1), 4)
    (0.5, 0.0561)
    """
    values = np.clip(np.asarray(p_values, dtype=np.float64), 1e-300, 1.0)
    half = -float(np.sum(np.log(values)))
    return float(min(1.0, math.exp(-half) * sum(half ** i / math.factorial(i) for i in range(len(values)))))


def _spanning_tree(adjacency: np.ndarray, strength: np.ndarray) -> set[tuple[int, int]]:
    """The maximum spanning forest of the current graph weighted by released pair-table strengths (Chow & Liu 1968)."""
    graph = nx.Graph()
    graph.add_nodes_from(range(adjacency.shape[0]))
    rows, cols = np.nonzero(np.triu(adjacency))
    graph.add_weighted_edges_from((int(i), int(j), float(strength[i, j])) for i, j in zip(rows, cols))
    return {(min(u, v), max(u, v)) for u, v in nx.maximum_spanning_edges(graph, algorithm="kruskal", data=False)}


class MarginalTablesDecider(Decider):
    """PC decisions from Gaussian-noised marginal tables, one release per order (see the module docstring).

    ``mus`` are the per-order GDP levels; the decider releases the tables of an
    order in :meth:`start_order`, charges the ledger, and answers every test of
    that order from them.
    """

    def __init__(self, codes: np.ndarray, levels: np.ndarray, mus: np.ndarray, *, alpha: float,
                 candidates: tuple[int, ...],
                 screen_alpha: float, n_boot: int, rng: np.random.Generator, ledger: PrivacyLedger, delta: float,
                 protect_tree: bool = True, more_candidates: tuple[int, ...] = (), noise_ratio: float = 0.0,
                 collider_evidence: bool = False, budget_candidates: bool = False, max_p_colliders: bool = False,
                 protect_alpha: float = 1.0, combine_screen: bool = False, interaction_pairs: bool = False,
                 denoise: int | None = None):
        self.codes, self.levels, self.mus = codes, levels, mus
        self.denoise = denoise
        self.estimator = TableEstimator(levels, codes.shape[0]) if denoise is not None else None
        pairs = len(levels) * (len(levels) - 1) // 2  # order 0 releases every pair: the smaller sensitivity (public)
        self.interaction_pairs = bool(interaction_pairs and pairs
                                      and interaction_sensitivity(levels) ** 2 < 2.0 * pairs)
        self.pair_noise = "interaction" if self.interaction_pairs else "cells"
        self.combine_screen = combine_screen and screen_alpha > 0 and (denoise is None or denoise > 1)
        self.screen_p: dict[tuple[int, int, tuple[int, ...]], float] = {}
        self.collider_evidence = collider_evidence
        self.max_p_colliders = max_p_colliders
        self._pair_sets: dict[tuple[int, int], list[tuple[int, ...]]] | None = None
        self.collider_p: dict[tuple[int, int, tuple[int, ...]], float] = {}
        self.noise_ratio = noise_ratio
        self.wide = tuple(max(a, b) for a, b in zip(_per_order(more_candidates, len(mus)),
                                                    _per_order(candidates, len(mus)))) \
            if more_candidates and noise_ratio > 0 else None
        self.budget_candidates = budget_candidates and self.wide is not None
        self.alpha, self.n_candidates, self.screen_alpha, self.n_boot = alpha, candidates, screen_alpha, n_boot
        self.rng, self.ledger, self.delta = rng, ledger, delta
        self.n = codes.shape[0]
        self.tables: dict[tuple[int, ...], np.ndarray] = {}
        self.noise_var: dict[int, float] = {}
        self.strength: np.ndarray | None = None
        self.screened: set[tuple[int, int, tuple[int, ...]]] = set()
        self.protect_tree = protect_tree
        self.protect_alpha = protect_alpha
        self.protected: set[tuple[int, int]] = set()
        self.p_values: dict[tuple[int, int, tuple[int, ...]], float] = {}
        self.orders: list[dict] = []

    # -- which tests an order can ask, from the current graph (post-processing)
    def candidates(self, x: int, y: int, others: np.ndarray, order: int) -> np.ndarray:
        return self._ranked(x, y, others, order, self.wide or self.n_candidates)

    def _ranked(self, x: int, y: int, others: np.ndarray, order: int, caps: tuple[int, ...]) -> np.ndarray:
        keep = caps[min(order, len(caps)) - 1]
        if self.strength is None or len(others) <= keep:
            return others
        score = np.minimum(self.strength[x, others], self.strength[y, others])
        best = np.argsort(-score, kind="stable")[:keep]
        return np.sort(others[best])

    def _tests(self, order: int, adjacency: np.ndarray, caps: tuple[int, ...] | None = None
               ) -> list[tuple[int, int, tuple[int, ...]]]:
        keys = {}
        for x in range(adjacency.shape[0]):
            neighbours = np.flatnonzero(adjacency[x])
            for y in neighbours:
                others = neighbours[neighbours != y]
                if order:
                    others = self._ranked(x, int(y), others, order, caps or self.n_candidates)
                for S in combinations(others.tolist(), order):
                    keys[(min(x, int(y)), max(x, int(y)), tuple(sorted(S)))] = None
        return list(keys)

    def _priority(self, tests: list[tuple[int, int, tuple[int, ...]]]) -> list[tuple[int, int, tuple[int, ...]]]:
        """Tests in the order their tables are bought: every edge's best set first, then every edge's second, ..."""
        score = {key: sum(min(self.strength[key[0], z], self.strength[key[1], z]) for z in key[2]) for key in tests}
        by_edge: dict[tuple[int, int], list] = {}
        for key in sorted(tests, key=lambda k: (-score[k], k)):
            by_edge.setdefault(key[:2], []).append(key)
        ranked = [(rank, -score[key], key) for keys in by_edge.values() for rank, key in enumerate(keys)]
        return [key for _, _, key in sorted(ranked)]

    def _affordable(self, order: int, base: list[tuple[int, ...]], tests: list[tuple[int, int, tuple[int, ...]]]
                    ) -> list[tuple[int, ...]]:
        """The tables order ``order`` buys: ``base``, then, in priority order, each further one with which
        σ_k = √(2 M)/μ_k stays within ``noise_ratio`` times the mean count n / cells of the largest table bought (a
        table that does not fit is skipped and the next tried; public n, domains and μ_k; released ranking)."""
        chosen: dict[tuple[int, ...], None] = dict.fromkeys(base)
        largest = max((int(np.prod(self.levels[list(c)])) for c in base), default=0)
        for key in self._priority(tests):
            columns = tuple(sorted((key[0], key[1], *key[2])))
            if columns in chosen:
                continue
            cells = max(largest, int(np.prod(self.levels[list(columns)])))
            sigma = math.sqrt(2.0 * (len(chosen) + 1)) / float(self.mus[order])
            if sigma <= self.noise_ratio * self.n / cells:
                chosen[columns] = None
                largest = cells
        return list(chosen)

    def _tables_for(self, tests: list[tuple[int, int, tuple[int, ...]]]) -> list[tuple[int, ...]]:
        """The distinct variable sets (sorted) whose tables ``tests`` read: screened tests and protected edges
        read none. Post-processing of the released graph and tables."""
        return sorted({tuple(sorted((x, y, *S))) for x, y, S in tests
                       if (x, y, S) not in self.screened and (x, y) not in self.protected})

    def order_candidates(self, order: int, adjacency: np.ndarray) -> tuple[int, ...]:
        """The always-measured candidates per order 1..``order`` for this order's tables (post-processing).

        ``candidates`` at order 1 and wherever ``budget_candidates`` is off; at
        an order k ≥ 2 the largest c from ``candidates[k]`` up to
        ``more_candidates[k]`` whose distinct tables (M(c) of them, for the
        edges the tree does not protect) keep σ_k = √(2 M(c))/μ_k within
        ``noise_ratio`` · n / (their median number of cells). Reads the
        released graph and pair tables and public n, domains and μ_k only.
        """
        caps = _per_order(self.n_candidates, order)
        if order < 2 or not self.budget_candidates:
            return caps
        low, high = caps[-1], max(caps[-1], _per_order(self.wide, order)[-1])
        for c in range(high, low, -1):
            wider = caps[:-1] + (c,)
            sets = self._tables_for(self._tests(order, adjacency, wider))
            if not sets:
                continue
            cells = float(np.median([np.prod(self.levels[list(columns)]) for columns in sets]))
            if math.sqrt(2.0 * len(sets)) / float(self.mus[order]) <= self.noise_ratio * self.n / cells:
                return wider
        return caps

    def start_order(self, order: int, adjacency: np.ndarray) -> bool:
        """Release this order's marginal tables: choose, from the released graph and tables and public sizes only,
        the variable sets its tests need (screened and protected edges need none; further sets while the noise rule
        affords them), add N(0, σ_k²) per cell with σ_k = √(2 M_k)/μ_k in one Gaussian mechanism and charge it.
        False when the order is beyond ``max_order`` (the search stops)."""
        if order >= len(self.mus):
            return False
        if order == 1:
            self.strength = np.zeros((len(self.levels), len(self.levels)))
            for (a, b), table in ((k, t) for k, t in self.tables.items() if len(k) == 2):
                self.strength[a, b] = self.strength[b, a] = _mutual_information(table)
            if self.protect_tree:
                self.protected = _spanning_tree(adjacency, self.strength)
                if self.protect_alpha < 1.0:  # a weak tree edge is tested like any other (order-0 p-values, released)
                    self.protected = {e for e in self.protected
                                      if self.p_values.get((e[0], e[1], ()), 1.0) <= self.protect_alpha}
        caps = self.order_candidates(order, adjacency) if order else self.n_candidates
        tests = self._tests(order, adjacency, caps)
        wide = self._tests(order, adjacency, self.wide) if order and self.wide else tests
        if order == 1 and self.screen_alpha > 0:
            for key in wide:
                x, y, (z,) = key
                self.screen_p[key] = pairwise_screen_test(self._pair(x, y), self._pair(x, z), self._pair(y, z),
                                                          self.noise_var[0], self.n, rng=self.rng, n_boot=self.n_boot,
                                                          noise=self.pair_noise)
                if self.screen_p[key] < self.screen_alpha:
                    self.screened.add(key)
        needed = [key for key in wide if key not in self.screened and key[:2] not in self.protected]
        sets = self._tables_for(tests)
        always = len(sets)
        if order and self.wide:
            sets = sorted(self._affordable(order, sets, needed))
        mu = float(self.mus[order])
        record = {"order": order, "edges": int(adjacency.sum() // 2), "tests": len(wide),
                  "candidates": int(caps[-1]) if order else None,
                  "screened": len(self.screened) if order == 1 else 0,
                  "tables": len(sets), "more_tables": len(sets) - always,
                  "largest_cells": max((int(np.prod(self.levels[list(c)])) for c in sets), default=0),
                  "mu": mu, "sigma": None, "sensitivity": None}
        if sets and order == 0 and self.interaction_pairs:  # every pair: interactions and margins (module step 1)
            exact_pairs = {columns: marginal_table(self.codes, self.levels, columns) for columns in sets}
            released, sigma, sensitivity = pair_interaction_mechanism(exact_pairs, self.levels, n=self.n, mu=mu,
                                                                      rng=self.rng)
            self.tables.update(released)
        elif sets:
            sensitivity = math.sqrt(2.0 * len(sets))
            exact = [marginal_table(self.codes, self.levels, columns) for columns in sets]
            sizes = np.cumsum([0] + [t.size for t in exact])
            noisy = gdp_gaussian_mechanism(np.concatenate([t.ravel() for t in exact]), sensitivity=sensitivity,
                                           mu=mu, rng=self.rng)
            for i, columns in enumerate(sets):
                self.tables[columns] = noisy[sizes[i]:sizes[i + 1]].reshape(exact[i].shape)
            sigma = sensitivity / mu
        if sets and self.estimator is not None:
            self.estimator.add(Measurement(columns, self.tables[columns], sigma ** 2,
                                           shared_margins=order == 0 and self.interaction_pairs) for columns in sets)
        if sets:
            self.noise_var[order] = sigma ** 2
            record["sigma"], record["sensitivity"] = sigma, sensitivity
            _charge(self.ledger, order, mu, self.delta / len(self.mus), len(sets), sigma, sensitivity,
                    interactions=order == 0 and self.interaction_pairs)
        self.orders.append(record)
        return True

    def _pair(self, a: int, b: int) -> np.ndarray:
        table = self.tables[(min(a, b), max(a, b))]
        return table if a < b else table.T

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        key = (min(x, y), max(x, y), tuple(sorted(S)))
        if key in self.screened or (S and key[:2] in self.protected):
            return False
        if tuple(sorted((x, y, *S))) not in self.tables:
            return False
        if self.combine_screen and key in self.screen_p:
            return fisher_combined_p(self._table_p(key), self.screen_p[key]) > self.alpha
        return self._table_p(key) > self.alpha

    def _estimated(self, key: tuple[int, int, tuple[int, ...]]) -> bool:
        """Whether the test of ``key`` reads its table as estimated from every overlapping release (``denoise``)."""
        return self.estimator is not None and len(key[2]) >= max(self.denoise, 1)

    def _table_p(self, key: tuple[int, int, tuple[int, ...]]) -> float:
        """p-value of x ⫫ y | S from the released table of {x, y} ∪ S — or, from order ``denoise`` on, its estimate
        from every released table that overlaps it (:class:`dpcd.ci.denoise.TableEstimator`) — memoised."""
        if key not in self.p_values:
            columns = tuple(sorted((key[0], key[1], *key[2])))
            keep = [*key[2], key[0], key[1]]
            shape = (-1, int(self.levels[key[0]]), int(self.levels[key[1]]))
            if self._estimated(key):
                table, noise = self.estimator.table(keep)
                self.p_values[key] = noisy_table_test(table.reshape(shape), None, rng=self.rng, n_boot=self.n_boot,
                                                      noise=noise)
            else:
                table = np.transpose(self.tables[columns], [columns.index(c) for c in keep]).reshape(shape)
                self.p_values[key] = noisy_table_test(table, self.noise_var[len(key[2])], rng=self.rng,
                                                      n_boot=self.n_boot,
                                                      noise=self.pair_noise if not key[2] else "cells")
        return self.p_values[key]

    def collider(self, x: int, z: int, y: int) -> bool:
        """x → z ← y only with evidence in the released tables that x and y are dependent given z.

        A collider makes x and y dependent given z; a chain or fork through z
        makes them independent given z. A noisy search removes x − y for lack
        of power or without z among the sets it measured, and PC's rule would
        then orient every such triple as a collider. Here the triple is one
        only when the released table of {x, y, z} (order 1), or failing it the
        three released pair tables (:func:`dpcd.ci.noisy.pairwise_screen_test`),
        reject x ⫫ y | z at level ``alpha``; otherwise it is left unoriented.
        Post-processing of released tables (no budget).
        """
        if not self.collider_evidence:
            return True
        return self._given_z_p(x, z, y) < self.alpha

    def _given_z_p(self, x: int, z: int, y: int) -> float:
        """p-value of x ⫫ y | z from the released three-way table, or failing it from the three pair tables."""
        key = (x, y, (z,))
        if tuple(sorted((x, y, z))) in self.tables:
            return self._table_p(key)
        if key not in self.collider_p:
            self.collider_p[key] = pairwise_screen_test(self._pair(x, y), self._pair(x, z), self._pair(y, z),
                                                        self.noise_var[0], self.n, rng=self.rng, n_boot=self.n_boot,
                                                        noise=self.pair_noise)
        return self.collider_p[key]

    def max_p_collider(self, x: int, z: int, y: int) -> bool:
        """x → z ← y when the released sets that best separate x and y leave z out (max-p rule; post-processing).

        Every released table that holds x and y gives one conditioning set S
        (its other columns) and the p-value of x ⫫ y | S; the sets without z
        (the pair table among them) and those with z (the screen on pair tables
        standing in for {z} when no released table holds x, y and z) each keep
        their largest p-value. The triple is a collider when the largest without
        z is strictly above the largest with z — the set that best explains the
        pair's independence does not hold z (Ramsey 2016's PC-Max, on the sets
        the release measured) — and, with ``collider_evidence``, when the largest
        with z is also below ``alpha``. Asked of every unshielded triple,
        whatever the search's separating set; reads released tables only.
        """
        if self._pair_sets is None:
            self._pair_sets = {}
            for columns in self.tables:
                for a, b in combinations(columns, 2):
                    self._pair_sets.setdefault((a, b), []).append(tuple(c for c in columns if c not in (a, b)))
        a, b = min(x, y), max(x, y)
        with_z, without_z = [], []
        for S in self._pair_sets.get((a, b), ()):
            (with_z if z in S else without_z).append(self._table_p((a, b, S)))
        if not with_z:
            with_z.append(self._given_z_p(x, z, y))
        best_with = max(with_z)
        if self.collider_evidence and best_with >= self.alpha:
            return False
        return max(without_z, default=0.0) > best_with


def marginal_pc(data, *, levels, epsilon_total: float, delta: float = 1e-6, alpha: float = 0.05, rng: RngLike,
                max_order: int | None = DEFAULT_MAX_ORDER, max_tests: int | None = None,
                candidates: int | Sequence[int] = DEFAULT_CANDIDATES,
                screen_alpha: float = 0.01, n_boot: int = DEFAULT_BOOTSTRAP, protect_tree: bool = True,
                protect_alpha: float | None = DEFAULT_PROTECT_ALPHA,
                more_candidates: int | Sequence[int] = DEFAULT_MORE_CANDIDATES, noise_ratio: float = DEFAULT_NOISE_RATIO,
                collider_evidence: bool = DEFAULT_COLLIDER_EVIDENCE,
                budget_candidates: bool = DEFAULT_BUDGET_CANDIDATES, max_p_colliders: bool = DEFAULT_MAX_P_COLLIDERS,
                combine_screen: bool = DEFAULT_COMBINE_SCREEN, interaction_pairs: bool = DEFAULT_INTERACTION_PAIRS,
                denoise: int | None = DEFAULT_DENOISE, node_names: Sequence[str] | None = None) -> PCResult:
    """Marginal-PC on integer-coded categorical ``data``: a CPDAG whose run is (``epsilon_total``, ``delta``)-DP.

    Parameters
    ----------
    data : integer category codes (rows × variables), e.g. from :meth:`dpcd.schema.Schema.encode`.
    levels : the public domain sizes (sequence, mapping or :class:`~dpcd.schema.Schema`).
    epsilon_total, delta : the run's total budget under replace-one (n public).
    alpha : two-sided level of the CI tests (an edge is removed when p > α).
    rng : Generator or seed of the noise (secret in a release) and the tests' bootstrap.
    max_order : largest conditioning-set size K; the budget is split over
        orders 0..K (:func:`order_weights`), so a larger K gives each order less.
        None: :data:`DEFAULT_MAX_ORDER`.
    max_tests : cap on the CI decisions (:func:`dpcd.discovery.pc.pc_skeleton`).
    candidates : conditioning sets always measured are drawn from this many
        neighbours per edge end, the strongest by the released pair tables; one
        number, or one per order 1, 2, … (the last repeats). Default
        :data:`DEFAULT_CANDIDATES`.
    more_candidates, noise_ratio : further sets are drawn from this many
        neighbours per edge end and measured, best first, each one if the
        order's per-cell noise would stay within ``noise_ratio`` · n / cells of
        its largest table (module docstring). ``noise_ratio=0``: none. Defaults
        :data:`DEFAULT_MORE_CANDIDATES`, :data:`DEFAULT_NOISE_RATIO`.
    budget_candidates : at orders ≥ 2, draw the always-measured sets from
        more neighbours (up to ``more_candidates``) while the budget affords
        their tables (:meth:`MarginalTablesDecider.order_candidates`); default
        :data:`DEFAULT_BUDGET_CANDIDATES`. Post-processing of released tables.
    screen_alpha : level of the order-1 screen on pair tables (0: no screen).
    n_boot : bootstrap draws per test.
    protect_tree : keep the edges of the maximum spanning tree of the released
        pair tables' mutual information (Chow & Liu 1968) out of the tests of
        orders ≥ 1 (see the module docstring).
    protect_alpha : protect only the tree edges whose order-0 test has a
        p-value at most this (1: every tree edge); None (the default,
        :data:`DEFAULT_PROTECT_ALPHA`): 1/(``n_boot`` + 1), only edges beyond
        every null draw. Post-processing of released tables.
    collider_evidence : orient a collider only when the released tables show
        its ends dependent given its middle (module docstring, step 5); default
        :data:`DEFAULT_COLLIDER_EVIDENCE`. Post-processing: the skeleton,
        the separating sets and the spending are the same either way.
    max_p_colliders : decide every unshielded triple by the max-p rule on the
        released tables (:meth:`MarginalTablesDecider.max_p_collider`) instead
        of the search's separating set; default :data:`DEFAULT_MAX_P_COLLIDERS`.
        Post-processing, like ``collider_evidence`` (which it then combines with).
    interaction_pairs : release order 0's pair tables as interactions and
        margins where their sensitivity is the smaller (module docstring,
        step 1; ``info["interaction_pairs"]`` says whether it was); default
        :data:`DEFAULT_INTERACTION_PAIRS`. False: the full tables.
    combine_screen : decide an order-1 test by Fisher's combination of its
        three-way table's p-value and the pair-table screen's (module
        docstring, step 4; needs ``screen_alpha`` > 0 and order 1's tables read
        alone, ``denoise`` None or above 1); default
        :data:`DEFAULT_COMBINE_SCREEN`. Post-processing of released tables.
    denoise : the smallest order whose tests read their table as estimated
        from every released table that overlaps it (module docstring, step 6);
        None: each test reads its own table. Default :data:`DEFAULT_DENOISE`.
        Post-processing of released tables.
    node_names : as in :func:`dpcd.discovery.pc.pc`.

    Privacy: (ε, δ)-DP under replace-one with n and the domains public (the
    module's theorem); the ledger holds one Gaussian charge per order that
    released tables, and its tight total never exceeds :func:`worst_case`.

    Returns a :class:`~dpcd.discovery.pc.PCResult`; ``info["orders"]`` lists,
    per order, the edges at its start (``edges``), the always-measured candidates per edge end
    (``candidates``), the tests it may ask
    (``tests``, from the wider candidates when further tables are allowed), the
    screened ones, the tables released (``tables``, of which ``more_tables``
    beyond the always-measured sets; ``largest_cells`` cells in the largest)
    and their noise (``mu``, ``sigma``) — diagnostics for the holder, derived
    from released and public values.
    """
    epsilon_total = check_epsilon(epsilon_total, "epsilon_total")
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    screen_alpha = check_probability(screen_alpha, "screen_alpha", open_low=False)
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    protect_alpha = 1.0 / (n_boot + 1) if protect_alpha is None else \
        check_probability(protect_alpha, "protect_alpha", open_low=False, open_high=False)
    candidates = _caps(candidates, "candidates")
    denoise = None if denoise is None else check_int(denoise, "denoise", minimum=1)
    more_candidates = _caps(more_candidates, "more_candidates")
    noise_ratio = check_positive(noise_ratio, "noise_ratio", allow_zero=True)
    codes = as_codes(data)
    names = node_names_of(data, node_names)
    levels = public_levels(levels, codes.shape[1], names)
    check_codes(code_rows(codes), levels)
    order = DEFAULT_MAX_ORDER if max_order is None else check_int(max_order, "max_order", minimum=0)
    order = min(order, codes.shape[1] - 2)
    mus = _order_mus(epsilon_total, delta, order)
    ledger = PrivacyLedger("replace", public=PUBLIC)
    decider = MarginalTablesDecider(codes, levels, mus, alpha=alpha, candidates=candidates,
                                    screen_alpha=screen_alpha, n_boot=n_boot, rng=as_rng(rng), ledger=ledger,
                                    delta=delta, protect_tree=protect_tree, protect_alpha=protect_alpha,
                                    more_candidates=more_candidates,
                                    noise_ratio=noise_ratio,
                                    collider_evidence=bool(collider_evidence),
                                    budget_candidates=bool(budget_candidates),
                                    max_p_colliders=bool(max_p_colliders),
                                    combine_screen=bool(combine_screen),
                                    interaction_pairs=bool(interaction_pairs), denoise=denoise)
    result = run_pc(names, decider, max_order=order, ledger=ledger, max_tests=max_tests)
    if decider.max_p_colliders:  # every unshielded triple asked of the released tables, whatever its sepset
        index = {name: i for i, name in enumerate(result.nodes)}
        adjacency = np.zeros((len(index), len(index)), dtype=bool)
        for edge in result.skeleton:
            i, j = (index[v] for v in edge)
            adjacency[i, j] = adjacency[j, i] = True
        result = replace(result, cpdag=orient(result.nodes, adjacency, {}, decider.max_p_collider))
    return replace(result, info={"algorithm": "marginal_pc", "epsilon_total": epsilon_total, "delta": delta,
                                 "alpha": alpha, "max_order": order, "candidates": candidates,
                                 "screen_alpha": screen_alpha, "protect_tree": protect_tree,
                                 "protect_alpha": protect_alpha,
                                 "more_candidates": more_candidates, "noise_ratio": noise_ratio,
                                 "collider_evidence": decider.collider_evidence,
                                 "max_p_colliders": decider.max_p_colliders,
                                 "combine_screen": decider.combine_screen,
                                 "interaction_pairs": decider.interaction_pairs,
                                 "budget_candidates": decider.budget_candidates, "denoise": denoise,
                                 "mu": float(np.sqrt(np.sum(mus ** 2))),
                                 "orders": decider.orders, "n_computed": len(decider.p_values)})


MARGINAL_PC = PrivateAlgorithm(
    name="marginal_pc", label="Marginal-PC", data="categorical", relation=RELATION, public=PUBLIC, budget="total",
    budget_arg="epsilon_total", run=marginal_pc, privacy_map=worst_case, delta_arg="delta", alpha_arg="alpha",
    proof="proven", theorem="this package (marginal_pc module theorem; Dong, Roth & Su 2022)",
    default_max_order=DEFAULT_MAX_ORDER)
"""Marginal-PC as a :class:`~dpcd.discovery.algorithm.PrivateAlgorithm` (what the registry holds)."""

"""SVT-PC (Wang, Pang & Song 2020, Sec. 4.2): the PC engine with plain sparse vector decisions.

Every CI test's one-sided Kendall p-value (the query of
:mod:`dpcd.discovery.priv_pc`) goes through AboveThreshold on the full data:
noisy threshold α + Lap(2Δ/ε), query noise Lap(4Δ/ε); a query that reaches the
noisy threshold removes its edge, is charged ε, and a new AboveThreshold starts
with a fresh **Laplace** threshold (the authors' code redraws it with Gaussian
noise, which voids the guarantee; :class:`dpcd.privacy.SparseVector` only
draws Laplace). There is no sub-sampling and no examine step, which is what
Priv-PC adds.

Privacy guarantee: each AboveThreshold run is ε-DP [DR14, Thm 3.23] under
replace-one neighbours (n and domains public; the sensitivity is the
replace-one p-value sensitivity of ``priv_pc``). The ledger charges ε per hit
and ε for a last run that answered queries without a hit; every hit removes an
edge, so a run charges at most p(p − 1)/2 + 1 runs whatever the data
(:func:`worst_case`, composed by the tight accountant).

References
----------
.. [WPS20] L. Wang, Q. Pang, D. Song. Towards practical differentially private
   causal graph discovery. NeurIPS 2020.
.. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. 2014, Alg. 1.

Examples
--------
>>> SVT_PC.name, SVT_PC.relation.name, SVT_PC.budget_arg, SVT_PC.differentially_private
('svt_pc', 'replace', 'epsilon_per_edge', True)

On p = 4 variables at most 6 hits and one open run: below the basic total 7ε = 0.7.

>>> SVT_PC.privacy_map(epsilon_per_edge=0.1, delta=1e-6, p=4).epsilon < 0.7
True
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Sequence

from ..privacy.ledger import PrivacyLedger
from ..privacy.mechanisms import SparseVector
from ..privacy.relation import WorstCase
from ..privacy.sensitivity import one_sided_kendall_pvalue_sensitivity
from ..validation import (
    RngLike,
    as_rng,
    check_delta,
    check_epsilon,
    check_int,
    check_probability,
)
from .algorithm import PrivateAlgorithm
from .kendall_family import (
    PUBLIC,
    RELATION,
    kendall_ledger,
    kendall_run_setup,
    privacy_totals,
)
from .pc import Decider, PCResult, run_pc

__all__ = ["SVT_PC", "svt_pc", "SparseVectorDecider", "worst_case", "RELATION", "PUBLIC"]


class SparseVectorDecider(Decider):
    """Per-test decider: AboveThreshold on the full-data query; each hit restarts it (ε per run)."""

    def __init__(self, query, *, threshold: float, epsilon: float, sensitivity: float, rng, ledger: PrivacyLedger):
        self.query = query
        self.threshold = threshold
        self.epsilon = epsilon
        self.sensitivity = sensitivity
        self.rng = as_rng(rng)
        self.ledger = ledger
        self.n_hits = 0
        self.n_queries = 0
        self._open = 0
        self._svt = self._start()

    def _start(self) -> SparseVector:
        """A fresh AboveThreshold run (one hit at most) at the per-edge ε; charged when it answers a hit
        (:meth:`decide`) or, left open, at the end (:meth:`finish`)."""
        return SparseVector(self.threshold, epsilon=self.epsilon, sensitivity=self.sensitivity, rng=self.rng,
                            max_hits=1)

    def decide(self, x: int, y: int, S: tuple[int, ...]) -> bool:
        self.n_queries += 1
        self._open += 1
        if not self._svt.query(self.query(x, y, S)):
            return False
        self.ledger.charge("above_threshold", epsilon=self.epsilon, kind="pure",
                           note=f"AboveThreshold run of {self._open} queries ending in a hit")
        self.n_hits += 1
        self._open = 0
        self._svt = self._start()
        return True

    def finish(self) -> None:
        """Charge the last AboveThreshold run if it answered queries without a hit."""
        if self._open:
            self.ledger.charge("above_threshold (open)", epsilon=self.epsilon, kind="pure",
                               note=f"{self._open} below-threshold answers")
            self._open = 0


def worst_case(*, epsilon_per_edge: float, delta: float, p: int) -> WorstCase:
    """The data-independent guarantee of any :func:`svt_pc` run on ``p`` variables.

    At most p(p − 1)/2 AboveThreshold runs end in a hit (each removes an edge)
    plus one open run, each ε-DP [DR14, Thm 3.23]; composed by the tight
    accountant at δ.

    >>> worst_case(epsilon_per_edge=0.1, delta=1e-6, p=3).charges.n_charges
    4
    """
    epsilon_per_edge = check_epsilon(epsilon_per_edge, "epsilon_per_edge")
    delta = check_delta(delta)
    p = check_int(p, "p", minimum=2)
    rounds = p * (p - 1) // 2 + 1
    ledger = PrivacyLedger("replace", public=PUBLIC)
    ledger.charge("above_threshold", epsilon=epsilon_per_edge, count=rounds, kind="pure")
    totals = privacy_totals(ledger, delta)
    return WorstCase("svt_pc", RELATION, totals["epsilon_tight"], delta, PUBLIC,
                     "AboveThreshold per removed edge (Dwork & Roth 2014, Thm 3.23), at most p(p-1)/2 + 1 runs, PLD "
                     "accountant",
                     "tight", ledger, {"epsilon_per_edge": epsilon_per_edge, "rounds": rounds})


def svt_pc(data, *, levels, epsilon_per_edge: float, delta: float = 1e-6, alpha: float = 0.20, rng: RngLike,
           max_order: int | None = None, node_names: Sequence[str] | None = None,
           max_tests: int | None = None, unproven: Mapping[str, str] | None = None) -> PCResult:
    """SVT-PC: PC with one AboveThreshold run per removed edge, ε each.

    Parameters as in :func:`dpcd.discovery.priv_pc.priv_pc` (``max_tests`` included), except
    ``epsilon_per_edge``: the privacy parameter of one AboveThreshold run,
    charged once per removed edge and once for the last open run. Returns a
    :class:`PCResult` with a replace-one ledger (totals:
    ``privacy_totals(result.ledger, delta)``; worst case: :func:`worst_case`).

    Examples
    --------
    >>> from dpcd.datasets import load_bnlearn
    >>> data = load_bnlearn("cancer", 5000, rng=0)
    >>> result = svt_pc(data.data, levels=data.levels, epsilon_per_edge=1.0, rng=1)
    >>> result.ledger.n_charges <= 5 * 4 // 2 + 1
    True
    """
    epsilon = check_epsilon(epsilon_per_edge, "epsilon_per_edge")
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    codes, names, max_order, query = kendall_run_setup(data, node_names, max_order, levels)
    ledger, sensitivity = kendall_ledger(unproven, algorithm="svt_pc")
    n, p = codes.shape
    sens = one_sided_kendall_pvalue_sensitivity(n, query.levels, min(max_order, p - 2), mode=sensitivity)
    decider = SparseVectorDecider(query, threshold=alpha / 2.0, epsilon=epsilon, sensitivity=sens, rng=rng, ledger=ledger)
    result = run_pc(names, decider, max_order=max_order, ledger=ledger, max_tests=max_tests)
    decider.finish()
    info = {
        "algorithm": "svt_pc", "epsilon_per_edge": epsilon, "delta": delta, "alpha": alpha, "n": n,
        "max_order": max_order, "sensitivity_mode": sensitivity, "sensitivity": sens,
        "n_queries": decider.n_queries, "n_hits": decider.n_hits, "n_full_tests": query.tester.n_computed,
    }
    return replace(result, info=info)


SVT_PC = PrivateAlgorithm(
    name="svt_pc", label="SVT-PC", data="categorical", relation=RELATION, public=PUBLIC, budget="per_edge",
    budget_arg="epsilon_per_edge", run=svt_pc, privacy_map=worst_case, delta_arg="delta",
    theorem="Wang, Pang & Song 2020, Sec. 4.2; Dwork & Roth 2014, Thm. 3.23")
"""SVT-PC as a :class:`~dpcd.discovery.algorithm.PrivateAlgorithm`."""

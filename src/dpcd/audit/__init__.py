"""Empirical privacy auditing: a high-confidence lower bound on ε from output frequencies.

``stats``       Clopper–Pearson intervals and the lower bound ε̲ = ln((p̲₀ − δ)/p̄₁)
``events``      output events (thresholds, equalities, graph edges); ``neighbours``: adversarial pairs
``runner``      :func:`audit` (hold-out or Bonferroni event selection), :class:`AuditCase`, :func:`run_case`
``mechanisms``, ``ci``, ``algorithms``, ``anm``, ``black_box``: the cases — every mechanism, the private
independence test dpHSIC, every registry algorithm, private ANM and ``discover`` itself — with deliberately broken variants that must be flagged.

A mechanism M is (ε, δ)-DP when P[M(D) ∈ E] ≤ e^ε P[M(D′) ∈ E] + δ for all
neighbours D, D′ and events E; counting E on many runs of D and D′ gives a
lower bound on every such ε at the stated confidence (Ding et al. 2018;
Jagielski et al. 2020; Nasr et al. 2021). A bound above the claim refutes it;
a bound below proves nothing. Claims are always stated from the theorem and
the parameters passed, never read back from the audited code's ledger.
"""

from .algorithms import (
                     CASES,
                     AlgorithmRun,
                     PCDKendallDecision,
                     algorithm_case,
                     as_published,
                     broken_algorithm_cases,
                     gcm_spread_case,
                     pcd_decision_case,
)
from .anm import ANM_SCORES, anm_case, anm_iqr_case, anm_test_pair, anm_training_case, anm_training_pair
from .black_box import DiscoverRun, broken_discover_cases, discover_cases
from .ci import dp_hsic_cases
from .events import (
                     Event,
                     at_least,
                     contains,
                     edge_present,
                     equals,
                     graph_equals,
                     graph_key,
                     observed_outputs,
                     observed_outputs_and_markers,
                     threshold_events,
)
from .mechanisms import broken_cases, interaction_cases, mechanism_cases, norm_clip_cases, sieve_case, spread_cases
from .neighbours import NeighbouringPair
from .runner import (
                     AuditCase,
                     AuditResult,
                     audit,
                     count_events,
                     run_case,
                     runs_for_budget,
                     sample_outputs,
)
from .stats import clopper_pearson, epsilon_lower_bound

__all__ = ["ANM_SCORES", "AlgorithmRun", "AuditCase", "AuditResult", "CASES", "DiscoverRun", "Event",
           "NeighbouringPair", "PCDKendallDecision", "algorithm_case", "anm_case", "anm_iqr_case", "anm_training_case", "anm_training_pair", "as_published", "anm_test_pair",
           "at_least", "audit", "broken_algorithm_cases", "broken_cases", "broken_discover_cases", "clopper_pearson",
           "count_events", "contains", "discover_cases", "dp_hsic_cases", "edge_present", "epsilon_lower_bound", "equals",
           "gcm_spread_case", "graph_equals", "graph_key", "mechanism_cases", "observed_outputs", "observed_outputs_and_markers",
           "pcd_decision_case", "run_case", "runs_for_budget", "sample_outputs", "sieve_case", "spread_cases", "norm_clip_cases", "interaction_cases",
           "threshold_events"]

"""A private discovery algorithm as one object that carries its own privacy map.

In the spirit of OpenDP's measurements (a function together with the map
from an input distance to a privacy loss), :class:`PrivateAlgorithm` holds
everything a caller needs to run an algorithm *and* to know what it costs,
in one place:

* what it is — ``name``, ``label``, the kind of ``data`` it reads;
* its privacy semantics — the neighbouring ``relation`` its proof uses, what
  it takes as ``public``, its ``budget`` parameter (``budget_arg``) and what
  that parameter means, its δ keyword, its significance level ``alpha``
  (always two-sided), its ``proof`` status and ``theorem``;
* ``run(data, ...)`` — the algorithm;
* ``privacy_map(**parameters)`` — its data-independent worst case, a
  :class:`~dpcd.privacy.relation.PrivacyPlan`, which :func:`dpcd.registry.calibrate`
  inverts to meet a requested total (ε, δ) and which every run's ledger is
  tested against (a run never spends more than its map).

Examples
--------
>>> from dpcd.discovery.marginal_pc import MARGINAL_PC
>>> MARGINAL_PC.name, MARGINAL_PC.relation.name, MARGINAL_PC.differentially_private
('marginal_pc', 'replace', True)
>>> MARGINAL_PC.privacy_map(epsilon_total=1.0, delta=1e-6).epsilon
1.0
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..privacy.relation import PrivacyPlan, Relation

__all__ = ["PrivateAlgorithm", "DataKind", "Budget", "Proof"]

DataKind = Literal["categorical", "numeric"]
Budget = Literal["total", "per_test", "per_edge", "noise"]
Proof = Literal["proven", "not DP"]


@dataclass(frozen=True)
class PrivateAlgorithm:
    """One private discovery algorithm: how to run it and what any run of it can cost.

    Attributes
    ----------
    name, label : registry key and the name used in figures.
    data : ``"categorical"`` (integer codes, public ``levels``) or ``"numeric"`` (public ``bounds``).
    relation : the neighbouring relation of the proof.
    public : what the guarantee assumes public, e.g. ``("n", "domains")``.
    budget, budget_arg : how the privacy parameter is spent (``"total"``: it is
        the run's total) and its keyword, e.g. ``"epsilon_total"``.
    run : ``run(data, *, levels|bounds, <budget_arg>, [delta_arg], [alpha], rng, max_order, max_tests)``.
    privacy_map : ``privacy_map(**parameters) -> PrivacyPlan``, the worst case over all data.
    delta_arg : keyword of δ (None for a pure ε-DP algorithm).
    alpha_arg : keyword of the two-sided significance level of its CI tests (None when it has none).
    proof : ``"proven"`` or ``"not DP"``; theorem : where the guarantee comes from.
    takes_max_order : whether it runs the PC engine (and so takes ``max_order`` and ``max_tests``).
    default_max_order : a cap on the conditioning order the algorithm prefers
        when none is given (its budget is split over the orders), or None.
    extra : further fixed keyword arguments of ``run``.
    """

    name: str
    label: str
    data: DataKind
    relation: Relation
    public: tuple[str, ...]
    budget: Budget
    budget_arg: str
    run: Callable[..., Any]
    privacy_map: Callable[..., PrivacyPlan]
    delta_arg: str | None = None
    alpha_arg: str | None = "alpha"
    proof: Proof = "proven"
    theorem: str = ""
    takes_max_order: bool = True
    default_max_order: int | None = None
    exact_subset: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def differentially_private(self) -> bool:
        return self.proof == "proven"

    @property
    def paper(self) -> str:
        return self.theorem

    @property
    def available(self) -> bool:
        return True

    @property
    def domain_arg(self) -> str:
        return "levels" if self.data == "categorical" else "bounds"

    def load(self) -> Callable[..., Any]:
        """The run function (the registry's uniform way to reach an algorithm)."""
        return self.run

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
  :class:`~dpcd.privacy.relation.WorstCase`, which :func:`dpcd.registry.calibrate`
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
from typing import Any, Literal, Protocol, runtime_checkable

from ..privacy.relation import Relation, WorstCase

__all__ = ["PrivateAlgorithm", "AlgorithmResult", "DataKind", "Budget", "Proof", "unproven_options", "mark_unproven"]

DataKind = Literal["categorical", "numeric"]
Budget = Literal["total", "per_test", "per_edge", "noise"]
Proof = Literal["proven", "not DP"]


def unproven_options(unproven: Mapping[str, Any] | None, allowed: Mapping[str, str], *,
                     algorithm: str) -> dict[str, Any]:
    """The published-but-unproven options a caller opted into with ``unproven=`` (``{}``: the proven algorithm).

    An algorithm whose paper or code uses a step without a privacy proof (an
    unproven sensitivity, a composition as printed, a choice made on
    un-noised scores) offers it only through one keyword, ``unproven``, a
    mapping option → value, so that no such switch sits among the ordinary
    parameters; ``allowed`` maps each option to why it is unproven. The
    algorithm marks its ledger not DP (:meth:`~dpcd.privacy.PrivacyLedger.mark_not_dp`)
    for every option used, so every total of such a run says it is not a
    guarantee; ``discover`` never passes it, and refuses a ledger so marked.

    >>> unproven_options({"sensitivity": "reference"}, {"sensitivity": "6/sqrt(n) is not proven"}, algorithm="x")
    {'sensitivity': 'reference'}
    >>> unproven_options(None, {"sensitivity": "..."}, algorithm="x")
    {}
    """
    if unproven is None:
        return {}
    if not isinstance(unproven, Mapping):
        raise TypeError(f"unproven must be a mapping of option to value, got {type(unproven).__name__}")
    unknown = sorted(set(unproven) - set(allowed))
    if unknown:
        raise ValueError(f"unproven: {algorithm} has no unproven option {', '.join(map(repr, unknown))}; "
                         f"it offers {sorted(allowed) or 'none'}")
    return dict(unproven)


def mark_unproven(ledger: Any, options: Mapping[str, Any], allowed: Mapping[str, str], *, algorithm: str) -> None:
    """Mark ``ledger`` not DP once per option of :func:`unproven_options` the run used, with the reason."""
    for option, value in options.items():
        ledger.mark_not_dp(f"{algorithm} with unproven {option}={value!r}: {allowed[option]}")


@runtime_checkable
class AlgorithmResult(Protocol):
    """What every ``PrivateAlgorithm.run`` returns (:class:`~dpcd.discovery.pc.PCResult`, :class:`~dpcd.discovery.notears.ScoreResult`).

    ``nodes`` : the variable names, in the data's column order.
    ``cpdag`` : the released graph, a ``networkx.DiGraph`` over ``nodes`` (an undirected edge stored both ways);
        a score-based algorithm's DAG is released as its CPDAG (its Markov equivalence class), as PC's is.
    ``ledger`` : the :class:`~dpcd.privacy.PrivacyLedger` of every charge the run made (None only when non-private).
    ``info`` : the run's parameters and diagnostics, for the data holder; never released. Keys every private
        run sets: the budget parameter it ran with (e.g. ``"epsilon_total"``); the others are documented by
        each algorithm.
    """

    nodes: tuple[str, ...]
    cpdag: Any
    ledger: Any
    info: dict


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
    privacy_map : ``privacy_map(**parameters) -> WorstCase``, the worst case over all data.
    delta_arg : keyword of δ (None for a pure ε-DP algorithm).
    alpha_arg : keyword of the two-sided significance level of its CI tests (None when it has none).
    proof : ``"proven"`` or ``"not DP"``; theorem : where the guarantee comes from.
    takes_max_order : whether it runs the PC engine (and so takes ``max_order`` and ``max_tests``).
    default_max_order : a cap on the conditioning order the algorithm prefers
        when none is given (its budget is split over the orders), or None.
    extra : further fixed keyword arguments of ``run``.
    calibrations : the per-round parameters :func:`dpcd.registry.calibrate` found for this object (public inputs →
        parameter), kept on the object itself so that a variant sharing a name, or an algorithm outside the
        registry's table, is never answered from another's map (a copy made with ``dataclasses.replace`` starts
        with none); not part of equality.
    """

    name: str
    label: str
    data: DataKind
    relation: Relation
    public: tuple[str, ...]
    budget: Budget
    budget_arg: str
    run: Callable[..., Any]
    privacy_map: Callable[..., WorstCase]
    delta_arg: str | None = None
    alpha_arg: str | None = "alpha"
    proof: Proof = "proven"
    theorem: str = ""
    takes_max_order: bool = True
    default_max_order: int | None = None
    exact_subset: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)
    calibrations: dict[tuple, float] = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def differentially_private(self) -> bool:
        return self.proof == "proven"

    @property
    def domain_arg(self) -> str:
        return "levels" if self.data == "categorical" else "bounds"

"""Neighbouring relations, conversions between them, and data-independent worst cases.

A differential-privacy guarantee means nothing until it says which pairs of
data sets must be indistinguishable (OpenDP calls this the input metric). Two
relations occur in this package:

``"add/remove"``  D′ is D with one record added or removed. The number of
                  records n is itself protected, so no mechanism may be
                  calibrated with n and no release may publish it.
``"replace"``     D′ is D with one record replaced by any other record of the
                  (public) domain. Neighbours have the same n, so n is public:
                  it may be published and used to calibrate noise.

Every algorithm of :mod:`dpcd.discovery` proves its guarantee under one of
them (its ``RELATION``), and exports a :class:`WorstCase` — the worst-case
charges of any run for given public quantities (schema, n where the relation
makes it public, parameters), built without reading the data. ``discover``
calibrates on the plan, and ``privacy.json`` reports the plan's guarantee,
converted to the relation of the release.

Conversion
----------
Replacing a record is removing it and adding another, so an (ε, δ)-DP
guarantee under add/remove gives, by group privacy for a group of two
[DR14, Thm 2.2 and its (ε, δ) form], an (2ε, (1 + e^ε)δ)-DP guarantee under
replace-one: P[M(D) ∈ E] ≤ e^ε(e^ε P[M(D′) ∈ E] + δ) + δ.
:func:`convert` does exactly that; the converse does not hold (a replace-one
guarantee may reveal n, so it gives no add/remove guarantee) and is refused.

Both directions are computed without overflow for every finite ε: the δ of
:func:`convert` as min(1, exp(ln δ + ε + ln(1 + e^{−ε}))) in logs once e^ε
would overflow, the δ of :func:`needed` as δ·e^{−ε/2}/(1 + e^{−ε/2}), which
only ever underflows towards 0 (a smaller δ is always a safe target).

Examples
--------
>>> convert(1.0, 0.0, source="add/remove", target="replace")
(2.0, 0.0)
>>> needed(2.0, 0.0, source="add/remove", target="replace")
(1.0, 0.0)
>>> REPLACE_ONE.n_public, ADD_REMOVE.n_public
(True, False)
>>> convert(1e6, 1e-6, source="add/remove", target="replace")   # e^ε overflows: the δ is 1 (vacuous)
(2000000.0, 1.0)
>>> needed(1e6, 1e-6, source="add/remove", target="replace")    # δ e^{-ε/2} underflows: pure DP is needed
(500000.0, 0.0)

References
----------
.. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. 2014.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from ..validation import check_delta, check_epsilon

__all__ = [
    "Relation",
    "ADD_REMOVE",
    "REPLACE_ONE",
    "RELATIONS",
    "RELATION_NAMES",
    "RelationName",
    "relation",
    "convert",
    "needed",
    "WorstCase",
]

RelationName = Literal["add/remove", "replace"]


@dataclass(frozen=True)
class Relation:
    """A neighbouring relation on data sets of records.

    ``name`` is ``"add/remove"`` or ``"replace"``; ``n_public`` says whether the
    number of records is public under it; ``words`` states it for a data holder.
    """

    name: RelationName
    n_public: bool
    words: str

    def __str__(self) -> str:
        return self.name


ADD_REMOVE = Relation(
    "add/remove", False,
    "adding or removing any one person's record changes the probability of every released result by at most "
    "a factor e^epsilon (plus delta); the number of records is protected too and is not published",
)
REPLACE_ONE = Relation(
    "replace", True,
    "replacing any one person's record by any other record allowed by the schema changes the probability of "
    "every released result by at most a factor e^epsilon (plus delta); the number of records n is public",
)
RELATIONS: dict[str, Relation] = {r.name: r for r in (ADD_REMOVE, REPLACE_ONE)}
"""The package's one table of neighbouring relations, by name."""
RELATION_NAMES: tuple[str, ...] = tuple(RELATIONS)
"""Their names, ``("add/remove", "replace")``: what every ``relation=`` keyword accepts."""


def relation(value: str | Relation) -> Relation:
    """The :class:`Relation` named ``value`` ("add/remove" or "replace"; "replace-one" is accepted)."""
    if isinstance(value, Relation):
        return value
    if not isinstance(value, str):
        raise TypeError(f"relation must be 'add/remove' or 'replace', got {type(value).__name__}")
    key = value.strip().lower().replace("_", "-")
    key = {"replace-one": "replace", "add-remove": "add/remove", "add/remove-one": "add/remove"}.get(key, key)
    if key not in RELATIONS:
        raise ValueError(f"relation must be 'add/remove' or 'replace', got {value!r}")
    return RELATIONS[key]


def _checked(epsilon, delta, source, target, *, vacuous: bool = False) -> tuple[Relation, Relation, float, float]:
    """The relations and the validated (ε, δ); ``vacuous`` also admits δ = 1 (a guarantee that says nothing)."""
    if vacuous and not isinstance(delta, bool) and isinstance(delta, (int, float)) and delta == 1:
        return relation(source), relation(target), check_epsilon(epsilon), 1.0
    return relation(source), relation(target), check_epsilon(epsilon), check_delta(delta, allow_zero=True)


_LOG_MARGIN = 1e-12
"""Relative amount by which a δ computed through logarithms is rounded up (it covers their rounding, ~1e-13)."""


def _group_delta(epsilon: float, delta: float) -> float:
    """min(1, (1 + e^ε)·δ) for every finite ε ≥ 0 and δ ∈ [0, 1], never below the exact value.

    While e^ε is finite (ε < 700) the product is formed directly, as before. Beyond, in logs:
    ln((1 + e^ε)δ) = ln δ + ε + ln(1 + e^{−ε}), which is ≥ 0 (δ = 1) unless δ < e^{−ε}; the exponential
    of a negative log is rounded up by :data:`_LOG_MARGIN` so that the result stays an upper bound.
    """
    if delta == 0.0:
        return 0.0
    if epsilon < 700.0:
        return min(1.0, (1.0 + math.exp(epsilon)) * delta)
    log_value = math.log(delta) + epsilon + math.log1p(math.exp(-epsilon))
    if log_value >= 0.0:
        return 1.0
    return min(1.0, math.exp(log_value) * (1.0 + _LOG_MARGIN))


def convert(epsilon: float, delta: float, *, source: str | Relation, target: str | Relation) -> tuple[float, float]:
    """The (ε, δ) under ``target`` implied by an (ε, δ)-DP guarantee proven under ``source``.

    Same relation: unchanged. add/remove → replace: (2ε, min(1, (1 + e^ε)δ))
    (group privacy for two records), computed without overflow for every
    finite ε (:func:`_group_delta`: in logs once e^ε would overflow; δ = 1,
    the vacuous guarantee, as soon as (1 + e^ε)δ ≥ 1). ``delta`` may be 1 (a
    vacuous guarantee converts to a vacuous one). replace → add/remove: refused
    (``ValueError``), since a replace-one guarantee says nothing about data
    sets of different size.

    >>> convert(800.0, 1e-300, source="add/remove", target="replace")   # (1 + e^800)·1e-300 > 1
    (1600.0, 1.0)
    """
    src, dst, epsilon, delta = _checked(epsilon, delta, source, target, vacuous=True)
    if src == dst:
        return epsilon, delta
    if src is ADD_REMOVE and dst is REPLACE_ONE:
        return 2.0 * epsilon, _group_delta(epsilon, delta)
    raise ValueError(
        "a guarantee proven under replace-one (n public) gives no add/remove guarantee; "
        "choose relation='replace' or an algorithm proven under add/remove"
    )


def needed(epsilon: float, delta: float, *, source: str | Relation, target: str | Relation) -> tuple[float, float]:
    """The largest (ε, δ) under ``source`` whose :func:`convert` to ``target`` is within (epsilon, delta).

    The inverse of :func:`convert`, used to calibrate an algorithm proven under
    ``source`` for a release stated under ``target``. add/remove → replace:
    (ε/2, δ/(1 + e^{ε/2})), computed as δ·e^{−ε/2}/(1 + e^{−ε/2}), which does
    not overflow for any finite ε (it underflows to 0 once e^{−ε/2}·δ is below
    the smallest double: the source must then be pure ε/2-DP). The δ is
    lowered by an ulp where rounding would make its :func:`convert` exceed
    ``delta``, so the round trip never exceeds the request.

    >>> needed(2000.0, 0.1, source="add/remove", target="replace")
    (1000.0, 0.0)
    """
    src, dst, epsilon, delta = _checked(epsilon, delta, source, target)
    if src == dst:
        return epsilon, delta
    if src is ADD_REMOVE and dst is REPLACE_ONE:
        half = epsilon / 2.0
        shrink = math.exp(-half)
        native = delta * shrink / (1.0 + shrink)
        if native > 0.0 and _group_delta(half, native) > delta:
            native *= 1.0 - 4.0 * _LOG_MARGIN  # covers the logs' round-up; then ulps
        while native > 0.0 and _group_delta(half, native) > delta:
            native = math.nextafter(native, 0.0)
        return half, native
    convert(1.0, 0.0, source=src, target=dst)  # raises the explanatory error
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class WorstCase:
    """The data-independent privacy of a run: what any run with these public inputs can spend.

    Attributes
    ----------
    algorithm : registry name of the algorithm.
    relation : the relation the algorithm's proof uses.
    epsilon, delta : the worst-case guarantee under ``relation``.
    public : exactly what the guarantee assumes public (e.g. ``("n", "domains")``).
    theorem : where the guarantee comes from (paper theorem and composition).
    accountant : how ``epsilon`` was obtained: "basic", "tight" (PLD at ``delta``)
        or "filter" (the algorithm stops before its own budget is exceeded).
    charges : the worst-case ledger (a :class:`~dpcd.privacy.PrivacyLedger`),
        or None when the guarantee is the algorithm's own budget filter.
    parameters : the algorithm's privacy parameters the plan was built for.
    """

    algorithm: str
    relation: Relation
    epsilon: float
    delta: float
    public: tuple[str, ...]
    theorem: str
    accountant: str
    charges: Any = None
    parameters: dict[str, Any] = field(default_factory=dict)

    def under(self, target: str | Relation) -> tuple[float, float]:
        """The guarantee converted to ``target`` (see :func:`convert`)."""
        return convert(self.epsilon, self.delta, source=self.relation, target=target)

    def as_dict(self, target: str | Relation | None = None) -> dict[str, Any]:
        """JSON-ready description; with ``target``, the guarantee under that relation."""
        dst = self.relation if target is None else relation(target)
        eps, dlt = self.under(dst)
        out = {"epsilon": eps, "delta": dlt, "relation": dst.name, "proven_under": self.relation.name,
               "theorem": self.theorem, "accountant": self.accountant}
        if dst != self.relation:
            out["conversion"] = (f"proven ({self.epsilon:.6g}, {self.delta:.3g})-DP under {self.relation.name}; "
                                 "group privacy for two records gives (2 eps, (1 + e^eps) delta) under replace-one")
        return out

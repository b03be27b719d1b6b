"""The one table of private discovery algorithms, and their calibration to a total budget.

:data:`ALGORITHMS` names every private algorithm of the package with the
module implementing it, the kind of data it reads, how its privacy parameter
is spent, and where its guarantee comes from. ``discover``, the benchmark and
the audit all read it; each algorithm module exports its ``RELATION`` and a
data-independent ``plan(...)`` (:class:`~dpcd.privacy.relation.PrivacyPlan`).

Calibration to a total budget
-----------------------------
:func:`calibrate` finds the algorithm's own parameters for a requested total
(ε, δ) under a requested relation, from public quantities only (the number of
variables p, n where the relation makes it public, ``max_order``):

* the request is first converted to the relation the algorithm's proof uses
  (:func:`dpcd.privacy.relation.needed`: an add/remove proof serves a
  replace-one release at half the ε; a replace-one proof cannot serve an
  add/remove release and is refused);
* ``budget="total"``: the parameter is the run's total (ε, δ), passed as is;
* ``budget="per_test"`` / ``"per_edge"`` / ``"noise"``: the parameter is spent
  per round (CI test, removed edge) or is a noise multiplier; the number of
  rounds depends on the data, so the parameter is found by a root search on
  the algorithm's **worst-case plan** (every round it could make, composed by
  the tight PLD accountant), never on a run. A real run is dominated by its plan.

Whatever the data, the plan's guarantee converted to the requested relation
is at most the request; a plan that cannot meet it (NOLEAKS' δ = m/n) is
refused before any data is read.

Examples
--------
>>> spec = resolve_algorithm("priv_pc")
>>> cal = calibrate(spec, p=5, n=10_000, epsilon=1.0, delta=1e-6)
>>> cal.guarantee["epsilon"] <= 1.0, cal.kwargs["max_order"]
(True, 2)
>>> calibrate(resolve_algorithm("em_pc"), p=5, n=None, epsilon=1.0, delta=0.0, relation="add/remove").kwargs
{'epsilon_total': 1.0}
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .discovery.algorithm import PrivateAlgorithm
from .discovery.marginal_pc import MARGINAL_PC
from .discovery.moment_pc import MOMENT_PC
from .discovery.mst_pc import MST_PC
from .privacy.relation import PrivacyPlan, Relation, needed
from .privacy.relation import relation as as_relation
from .validation import check_delta, check_epsilon, check_int

__all__ = [
    "AlgorithmSpec",
    "AlgorithmUnavailable",
    "ALGORITHMS",
    "AUTO_PREFERENCE",
    "AUTO_CANDIDATES",
    "Calibration",
    "PlanRefused",
    "DEFAULT_PLAN_MAX_ORDER",
    "available_algorithms",
    "resolve_algorithm",
    "choose_algorithm",
    "release_refusal",
    "make_plan",
    "calibrate",
]

DataKind = Literal["categorical", "numeric"]
Budget = Literal["total", "per_test", "per_edge", "noise"]
DEFAULT_PLAN_MAX_ORDER = 2
"""``max_order`` used for per-round algorithms when none is given: the worst-case
test count, hence the noise, grows as C(p − 2, max_order)."""


class AlgorithmUnavailable(ValueError):
    """The algorithm's module is not part of this version of dpcd."""


class PlanRefused(ValueError):
    """No parameter of the algorithm meets the requested (ε, δ) under the requested relation."""


@dataclass(frozen=True)
class AlgorithmSpec:
    """How to call one private algorithm and how its privacy parameter is spent.

    Attributes
    ----------
    name : registry key (the module's name), e.g. ``"priv_pc"``.
    label : the name used in figures, e.g. ``"Priv-PC"``.
    module, function : where the algorithm lives (imported lazily).
    data : ``"categorical"`` (integer codes, public ``levels``) or ``"numeric"`` (public ``bounds``).
    budget : ``"total"``, ``"per_test"``, ``"per_edge"`` or ``"noise"`` (see the module docstring).
    budget_arg : keyword of the privacy parameter (``epsilon_total``, ``epsilon_per_test``,
        ``epsilon_per_edge``, ``sigma``).
    delta_arg : keyword of δ (None for a pure ε-DP algorithm).
    alpha_arg : keyword of the significance level (None when it has none).
    takes_max_order : whether the algorithm takes ``max_order``.
    differentially_private : False for PCD (local sensitivity); ``discover`` refuses it.
    exact_subset : True when the plan charges δ = m/n for statistics computed
        exactly on a random m-row subset (NOLEAKS' line search): that δ is never
        below 1/n, the most a release may spend, so ``discover`` refuses it.
    paper : the paper and theorem the guarantee rests on.
    extra : further fixed keyword arguments.
    """

    name: str
    label: str
    module: str
    function: str
    data: DataKind
    budget: Budget
    budget_arg: str
    delta_arg: str | None = None
    alpha_arg: str | None = "alpha"
    takes_max_order: bool = True
    differentially_private: bool = True
    exact_subset: bool = False
    paper: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def _module(self):
        try:
            return importlib.import_module(self.module)
        except ModuleNotFoundError as error:
            if error.name is not None and (error.name == self.module or self.module.startswith(error.name + ".")):
                raise AlgorithmUnavailable(f"algorithm {self.name!r} ({self.label}) is not available in this "
                                           f"version of dpcd (module {self.module} is missing)") from None
            raise

    def load(self) -> Callable[..., Any]:
        """Import and return the algorithm's function (``AlgorithmUnavailable`` when missing)."""
        function = getattr(self._module(), self.function, None)
        if not callable(function):
            raise AlgorithmUnavailable(f"algorithm {self.name!r} ({self.label}) is not available in this version "
                                       f"of dpcd ({self.module} has no function {self.function!r})")
        return function

    @property
    def available(self) -> bool:
        try:
            self.load()
        except AlgorithmUnavailable:
            return False
        return True

    @property
    def relation(self) -> Relation:
        """The neighbouring relation the algorithm's guarantee is proven under."""
        return as_relation(self._module().RELATION)

    @property
    def domain_arg(self) -> str:
        return "levels" if self.data == "categorical" else "bounds"


def _registry(*specs: AlgorithmSpec | PrivateAlgorithm) -> dict[str, AlgorithmSpec | PrivateAlgorithm]:
    return {s.name: s for s in specs}


ALGORITHMS: dict[str, AlgorithmSpec | PrivateAlgorithm] = _registry(
    MARGINAL_PC,
    MST_PC,
    MOMENT_PC,
    AlgorithmSpec("em_pc", "EM-PC", "dpcd.discovery.em_pc", "em_pc", "categorical", "total", "epsilon_total",
                  paper="Xu, Yuan & Wu 2017, Thm. 1"),
    AlgorithmSpec("lapmech", "LapMech", "dpcd.discovery.lapmech", "lapmech", "categorical", "total",
                  "epsilon_total", paper="Xu, Yuan & Wu 2017, Sec. IV-D"),
    AlgorithmSpec("priv_pc", "Priv-PC", "dpcd.discovery.priv_pc", "priv_pc", "categorical", "per_test",
                  "epsilon_per_test", delta_arg="delta", paper="Wang, Pang & Song 2020, Thm. 1"),
    AlgorithmSpec("svt_pc", "SVT-PC", "dpcd.discovery.svt_pc", "svt_pc", "categorical", "per_edge",
                  "epsilon_per_edge", delta_arg="delta", paper="Wang, Pang & Song 2020, Sec. 4.2; DR14 Thm. 3.23"),
    AlgorithmSpec("subsampled_gaussian", "Sub-sampled Gaussian PC", "dpcd.discovery.subsampled_gaussian_pc",
                  "subsampled_gaussian_pc", "categorical", "noise", "sigma", delta_arg="delta",
                  paper="Wang, Pang & Song 2020, Sec. 4.2 (baseline)", extra={"sampling_rate": 0.1}),
    AlgorithmSpec("curate", "CURATE", "dpcd.discovery.curate", "curate", "categorical", "total", "epsilon_total",
                  delta_arg="delta_total", alpha_arg="threshold", paper="Bhattacharjee & Tandon 2024, Alg. 1"),
    AlgorithmSpec("privpc_star", "PrivPC*", "dpcd.discovery.privpc_star", "privpc_star", "numeric", "total",
                  "epsilon_total", paper="Xu, Yuan & Wu 2017, Thm. 2 (corrected)"),
    AlgorithmSpec("pcd", "PCD", "dpcd.discovery.pcd", "pcd", "numeric", "per_test", "epsilon_per_test",
                  differentially_private=False, paper="Zhang et al. 2023 (local sensitivity: no DP guarantee)",
                  extra={"ci_test": "kendall", "continuous": True}),
    AlgorithmSpec("noleaks", "NOLEAKS", "dpcd.discovery.noleaks", "noleaks", "numeric", "total", "epsilon_total",
                  delta_arg="delta", alpha_arg=None, takes_max_order=False, exact_subset=True,
                  paper="Ma et al. 2022"),
    AlgorithmSpec("curate_sb", "CURATE-SB", "dpcd.discovery.curate_sb", "curate_sb", "numeric", "total",
                  "epsilon_total", delta_arg="delta", alpha_arg=None, takes_max_order=False, exact_subset=True,
                  paper="Bhattacharjee & Tandon 2024, Alg. 2"),
)
"""Every private discovery algorithm of the package, by module name."""

AUTO_PREFERENCE: dict[str, tuple[str, ...]] = {
    "categorical": ("marginal_pc", "mst_pc", "em_pc", "priv_pc", "curate", "svt_pc", "lapmech"),
    "numeric": ("moment_pc", "privpc_star"),
}
"""``algorithm="auto"`` without a forecast (n protected): the first available algorithm for the schema's kind
that meets the relation."""
AUTO_CANDIDATES: dict[str, tuple[str, ...]] = {
    "categorical": ("marginal_pc", "mst_pc", "em_pc", "lapmech"),
    "numeric": ("moment_pc", "privpc_star", "marginal_pc", "mst_pc"),
}
"""``algorithm="auto"`` with a forecast (n public): the algorithms it compares on synthetic data of the schema's
shape (:func:`dpcd.plan.choose_by_forecast`); categorical ones read numeric columns as the schema's bins. The others
of the registry are left out because every benchmark so far ranks them below these at the same budget."""


def available_algorithms(registry: Mapping[str, AlgorithmSpec] | None = None) -> dict[str, bool]:
    """``{name: importable}`` for every registry entry."""
    registry = ALGORITHMS if registry is None else registry
    return {name: spec.available for name, spec in registry.items()}


def resolve_algorithm(name: str, registry: Mapping[str, AlgorithmSpec] | None = None) -> AlgorithmSpec:
    """The registry entry ``name`` (case-insensitive, ``-`` = ``_``, labels accepted), checked importable."""
    registry = ALGORITHMS if registry is None else registry
    if not isinstance(name, str):
        raise TypeError(f"algorithm must be a string, got {type(name).__name__}")
    key = name.strip().lower().replace("-", "_")
    by_label = {spec.label.lower().replace("-", "_"): k for k, spec in registry.items()}
    key = by_label.get(key, key)
    if key not in registry:
        raise ValueError(f"algorithm must be 'auto' or one of {sorted(registry)}, got {name!r}")
    spec = registry[key]
    spec.load()
    return spec


def release_refusal(spec: AlgorithmSpec) -> str | None:
    """Why ``discover`` cannot release with ``spec`` whatever the data and budget, or None.

    Decided from the registry entry alone, so a release is refused before any
    data are read: an algorithm without a DP guarantee, or one whose δ is at
    least 1/n by construction.

    >>> release_refusal(ALGORITHMS["pcd"]).startswith("algorithm 'pcd' (PCD) calibrates")
    True
    >>> release_refusal(ALGORITHMS["em_pc"]) is None
    True
    """
    if not spec.differentially_private:
        return (f"algorithm {spec.name!r} ({spec.label}) calibrates its noise to a local sensitivity and has no "
                "data-independent privacy plan; it gives no DP guarantee, so it cannot make a release")
    if spec.exact_subset:
        return (f"algorithm {spec.name!r} ({spec.label}) computes statistics exactly on a random subset of m rows "
                "and charges delta = m/n for it, never below 1/n; a release needs delta < 1/n, so it cannot make one")
    return None


def choose_algorithm(kind: DataKind, relation: str | Relation = "replace",
                     registry: Mapping[str, AlgorithmSpec] | None = None) -> AlgorithmSpec:
    """``algorithm="auto"``: the first available DP algorithm for ``kind`` whose proof serves ``relation``.

    Decided by the schema's kind and the relation only (public), never by the data.
    """
    registry = ALGORITHMS if registry is None else registry
    target = as_relation(relation)
    for name in AUTO_PREFERENCE.get(kind, ()):
        spec = registry.get(name)
        if spec is None or spec.data != kind or not spec.differentially_private or not spec.available:
            continue
        try:
            needed(1.0, 0.0, source=spec.relation, target=target)
        except ValueError:
            continue
        return spec
    raise AlgorithmUnavailable(f"algorithm auto: no differentially private algorithm for {kind} data gives a "
                               f"{target.name} guarantee in this version of dpcd")


def _accepted(function: Callable[..., Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    parameters = inspect.signature(function).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return dict(kwargs)
    return {k: v for k, v in kwargs.items() if k in parameters}


def make_plan(spec: AlgorithmSpec, *, p: int, n: int | None, **parameters: Any) -> PrivacyPlan:
    """The algorithm's data-independent :class:`PrivacyPlan` for ``p`` variables, public ``n`` and parameters.

    Calls the module's ``plan`` with the keywords it takes (``p``, ``n``, and
    the algorithm's own privacy parameters); needs n only if the plan does.
    """
    if not spec.differentially_private:
        raise PlanRefused(release_refusal(spec))
    function = spec.privacy_map if isinstance(spec, PrivateAlgorithm) else spec._module().plan
    kwargs = _accepted(function, {"p": p, "n": n, **dict(spec.extra), **parameters})
    if "n" in inspect.signature(function).parameters and kwargs.get("n") is None:
        raise PlanRefused(f"algorithm {spec.name!r} ({spec.label}) is calibrated with the number of records n, "
                          "which is public only under the replace-one relation")
    return function(**kwargs)


@dataclass(frozen=True)
class Calibration:
    """The algorithm's parameters for a requested total (ε, δ) under a relation, and the resulting plan.

    ``kwargs`` are passed to the algorithm; ``plan`` is its worst-case
    :class:`PrivacyPlan`; ``guarantee`` the plan's (ε, δ) under ``relation``
    (:meth:`PrivacyPlan.as_dict`); ``how`` describes the search.
    """

    kwargs: dict[str, Any]
    epsilon: float
    delta: float
    relation: str
    plan: PrivacyPlan
    guarantee: dict[str, Any]
    how: str


def _fits(value: tuple[float, float], epsilon: float, delta: float) -> bool:
    return value[0] <= epsilon * (1 + 1e-9) and value[1] <= delta * (1 + 1e-9) + 1e-300


@functools.lru_cache(maxsize=512)
def _search(name: str, p: int, n: int | None, max_order: int | None, epsilon: float, delta: float,
            rtol: float) -> float:
    """Largest per-round parameter x whose plan's tight ε (native relation, at ``delta``) is ≤ ``epsilon``.

    Bracketing by doubling/halving, then regula falsi (Illinois) on log ε(log x),
    which is smooth and increasing; the returned point is always feasible.
    """
    spec = ALGORITHMS[name]

    def total(x: float) -> float:
        value = 1.0 / x if spec.budget == "noise" else x
        params = {spec.budget_arg: value, "max_order": max_order}
        if spec.delta_arg is not None:
            params[spec.delta_arg] = delta
        plan = make_plan(spec, p=p, n=n, **params)
        return plan.epsilon if plan.delta <= delta * (1 + 1e-9) else math.inf

    lo = epsilon
    f_lo = total(lo)
    while f_lo > epsilon:
        lo /= 4.0
        f_lo = total(lo)
        if lo < 1e-12:
            raise PlanRefused(f"algorithm {name!r}: no parameter meets epsilon={epsilon}, delta={delta}")
    hi = lo * 4.0
    f_hi = total(hi)
    while f_hi <= epsilon:
        lo, f_lo = hi, f_hi
        hi *= 4.0
        f_hi = total(hi)
        if hi > 1e6:
            return lo
    if not math.isfinite(f_hi):
        for _ in range(60):  # bisection while the upper end is infeasible outright
            mid = math.sqrt(lo * hi)
            f_mid = total(mid)
            if f_mid <= epsilon:
                lo, f_lo = mid, f_mid
            else:
                hi, f_hi = mid, f_mid
            if math.isfinite(f_hi) or hi / lo < 1 + rtol:
                break
        if not math.isfinite(f_hi):
            return lo
    g_lo, g_hi = math.log(max(f_lo, 1e-300) / epsilon), math.log(f_hi / epsilon)
    side = 0
    for _ in range(60):
        if g_lo > math.log1p(-rtol):
            break
        x_lo, x_hi = math.log(lo), math.log(hi)
        x = x_lo - g_lo * (x_hi - x_lo) / (g_hi - g_lo)
        x = min(max(x, x_lo + 1e-9), x_hi - 1e-9)
        value = total(math.exp(x))
        g = math.log(max(value, 1e-300) / epsilon) if math.isfinite(value) else math.inf
        if g <= 0:
            lo, g_lo = math.exp(x), g
            if side == -1:
                g_hi /= 2
            side = -1
        else:
            hi, g_hi = math.exp(x), (g if math.isfinite(g) else 2 * abs(g_lo) + 1)
            if side == 1:
                g_lo /= 2
            side = 1
    return lo


def calibrate(spec: AlgorithmSpec, *, p: int, n: int | None, epsilon: float, delta: float,
              relation: str | Relation = "replace", max_order: int | None = None,
              rtol: float = 0.005) -> Calibration:
    """The parameters of ``spec`` whose worst-case guarantee under ``relation`` is within (epsilon, delta).

    Depends only on public quantities (p, n when the relation makes it public,
    ``max_order``, ε, δ). Raises :class:`PlanRefused` when no parameter meets the
    request (an algorithm not proven under ``relation``, a plan whose δ alone
    exceeds ``delta``, or a non-DP algorithm).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=True)
    p = check_int(p, "p", minimum=2)
    target = as_relation(relation)
    if target.n_public:
        if n is None:
            raise ValueError("n is required under the replace-one relation (it is public there)")
        n = check_int(n, "n", minimum=2)
    else:
        n = None
    if max_order is not None:
        max_order = check_int(max_order, "max_order", minimum=0)
    if not spec.differentially_private:
        make_plan(spec, p=p, n=n)  # raises PlanRefused with the reason
    try:
        eps_native, delta_native = needed(epsilon, delta, source=spec.relation, target=target)
    except ValueError as error:
        raise PlanRefused(f"algorithm {spec.name!r} ({spec.label}) is proven under {spec.relation.name}: {error}"
                          + ("; under add/remove, em_pc or lapmech run on numeric columns binned by the schema"
                             if spec.data == "numeric" and not target.n_public else "")) from None
    kwargs: dict[str, Any] = {}
    if spec.takes_max_order and spec.budget != "total" and max_order is None:
        max_order = min(DEFAULT_PLAN_MAX_ORDER, p - 2)
    if spec.takes_max_order and max_order is not None:
        kwargs["max_order"] = max_order
    if spec.delta_arg is not None:
        if delta_native <= 0:
            raise PlanRefused(f"algorithm {spec.name!r} ({spec.label}) needs delta > 0")
        kwargs[spec.delta_arg] = delta_native
    if spec.budget == "total":
        kwargs[spec.budget_arg] = eps_native
        how = f"{spec.budget_arg}={eps_native:.6g}: the algorithm's own total budget"
    else:
        x = _search(spec.name, p, n, max_order, eps_native, delta_native, float(rtol))
        kwargs[spec.budget_arg] = 1.0 / x if spec.budget == "noise" else x
        unit = {"per_test": "per CI test", "per_edge": "per removed edge", "noise": "noise multiplier"}[spec.budget]
        how = (f"{spec.budget_arg}={kwargs[spec.budget_arg]:.6g} {unit}: the largest whose worst case (every round "
               f"the run could make, p={p}, max_order={max_order}) composes within the budget by the tight "
               "accountant")
    plan = make_plan(spec, p=p, n=n, **kwargs)
    guarantee = plan.as_dict(target)
    if not _fits((guarantee["epsilon"], guarantee["delta"]), epsilon, delta):
        raise PlanRefused(
            f"algorithm {spec.name!r} ({spec.label}) cannot meet epsilon={epsilon:g}, delta={delta:g} under "
            f"{target.name}: its worst case is epsilon={guarantee['epsilon']:.4g}, delta={guarantee['delta']:.3g} "
            f"({plan.theorem}); choose another algorithm"
        )
    return Calibration(kwargs, epsilon, delta, target.name, plan, guarantee, how)

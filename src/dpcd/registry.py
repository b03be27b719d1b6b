"""The one table of private discovery algorithms, and their calibration to a total budget.

:data:`ALGORITHMS` holds every private algorithm of the package as a
:class:`~dpcd.discovery.algorithm.PrivateAlgorithm`: the object each algorithm
module exports, carrying the kind of data it reads, how its privacy parameter
is spent, where its guarantee comes from, ``run`` and its data-independent
privacy map. ``discover``, the forecast, the benchmark and the audit all read
it. Adding an algorithm is one module (its object) and one line here.

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
  the algorithm's **worst case** (every round it could make, composed by
  the tight accountant; :func:`dpcd.privacy.calibration.largest_parameter`),
  never on a run. A real run is dominated by its worst case.

Whatever the data, the worst case's guarantee converted to the requested relation
is at most the request; a worst case that cannot meet it (NOLEAKS' δ = m/n) is
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
import inspect
import math
import sys
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .discovery.aim_pc import AIM_PC
from .discovery.algorithm import DataKind, PrivateAlgorithm
from .discovery.curate import CURATE
from .discovery.curate_sb import CURATE_SB
from .discovery.em_pc import EM_PC
from .discovery.gcm_pc import GCM_PC
from .discovery.lapmech import LAPMECH
from .discovery.marginal_pc import MARGINAL_PC
from .discovery.moment_pc import MOMENT_PC
from .discovery.mst_pc import MST_PC
from .discovery.noleaks import NOLEAKS
from .discovery.pcd import PCD
from .discovery.priv_pc import PRIV_PC
from .discovery.privpc_star import PRIVPC_STAR
from .discovery.subsampled_gaussian_pc import SUBSAMPLED_GAUSSIAN
from .discovery.svt_pc import SVT_PC
from .privacy.calibration import CalibrationError, largest_parameter, stored_parameter
from .privacy.relation import Relation, WorstCase, needed
from .privacy.relation import relation as as_relation
from .validation import check_delta, check_epsilon, check_int

__all__ = [
    "COUNTED_RUNS",
    "reads_counts",
    "PrivateAlgorithm",
    "AlgorithmUnavailable",
    "ALGORITHMS",
    "AUTO_PREFERENCE",
    "AUTO_CANDIDATES",
    "Calibration",
    "CalibrationRefused",
    "DEFAULT_MAX_ORDER",
    "resolve_algorithm",
    "choose_algorithm",
    "release_refusal",
    "worst_case_of",
    "worst_case_code",
    "calibrate",
]

DEFAULT_MAX_ORDER = 2
"""``max_order`` used for per-round algorithms when none is given: the worst-case
test count, hence the noise, grows as C(p − 2, max_order)."""


class AlgorithmUnavailable(ValueError):
    """No algorithm of the registry fits the request (``algorithm="auto"``)."""


class CalibrationRefused(ValueError):
    """No parameter of the algorithm meets the requested (ε, δ) under the requested relation."""


ALGORITHMS: dict[str, PrivateAlgorithm] = {algorithm.name: algorithm for algorithm in (
    MARGINAL_PC, MST_PC, AIM_PC, MOMENT_PC, GCM_PC, EM_PC, LAPMECH, PRIV_PC, SVT_PC, SUBSAMPLED_GAUSSIAN, CURATE, PRIVPC_STAR,
    PCD, NOLEAKS, CURATE_SB)}
"""Every private discovery algorithm of the package, by name: each module exports one
:class:`~dpcd.discovery.algorithm.PrivateAlgorithm`, imported here plainly."""

COUNTED_RUNS = (MARGINAL_PC.run, MST_PC.run, AIM_PC.run)
"""The ``run`` functions that read their data only through contingency tables
(:func:`dpcd.discovery.counted.marginal_table`), so that a table's distinct rows with their counts give the same run
as its rows (tested)."""


def reads_counts(spec: PrivateAlgorithm) -> bool:
    """Whether ``spec`` runs the same from a table's :class:`~dpcd.discovery.counted.CountedRows` as from its rows:
    its ``run`` is one of :data:`COUNTED_RUNS`, by identity (a variant with another run — a deliberately broken one,
    say — reads rows). A release then holds only the distinct encoded rows, bounded by the public domain.

    >>> reads_counts(ALGORITHMS["marginal_pc"]), reads_counts(ALGORITHMS["em_pc"])
    (True, False)
    """
    return any(spec.run is run for run in COUNTED_RUNS)


AUTO_PREFERENCE: dict[str, tuple[str, ...]] = {
    "categorical": ("marginal_pc", "mst_pc", "em_pc", "priv_pc", "curate", "svt_pc", "lapmech"),
    "numeric": ("moment_pc", "gcm_pc", "privpc_star"),
}
"""``algorithm="auto"`` without a forecast (n protected): the first available algorithm for the schema's kind
that meets the relation."""
AUTO_CANDIDATES: dict[str, tuple[str, ...]] = {
    "categorical": ("marginal_pc", "mst_pc", "em_pc", "lapmech"),
    "numeric": ("moment_pc", "privpc_star", "marginal_pc", "mst_pc", "gcm_pc"),
}
"""``algorithm="auto"`` with a forecast (n public): the algorithms it compares on synthetic data of the schema's
shape (:func:`dpcd.forecast.choose_by_forecast`); categorical ones read numeric columns as the schema's bins. The others
of the registry are left out because every benchmark so far ranks them below these at the same budget, except
AIM-PC: left out for its run time (a forecast runs every candidate ten times; AIM-PC takes tens of seconds on sachs)
and because it refuses every domain larger than its full-table limit."""


def resolve_algorithm(name: str, registry: Mapping[str, PrivateAlgorithm] | None = None) -> PrivateAlgorithm:
    """The registry entry ``name`` (case-insensitive, ``-`` = ``_``, labels accepted)."""
    registry = ALGORITHMS if registry is None else registry
    if not isinstance(name, str):
        raise TypeError(f"algorithm must be a string, got {type(name).__name__}")
    key = name.strip().lower().replace("-", "_")
    by_label = {spec.label.lower().replace("-", "_"): k for k, spec in registry.items()}
    key = by_label.get(key, key)
    if key not in registry:
        raise ValueError(f"algorithm must be 'auto' or one of {sorted(registry)}, got {name!r}")
    return registry[key]


def release_refusal(spec: PrivateAlgorithm) -> str | None:
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
                "data-independent privacy map; it gives no DP guarantee, so it cannot make a release")
    if spec.exact_subset:
        return (f"algorithm {spec.name!r} ({spec.label}) computes statistics exactly on a random subset of m rows "
                "and charges delta = m/n for it, never below 1/n; a release needs delta < 1/n, so it cannot make one")
    return None


def choose_algorithm(kind: DataKind, relation: str | Relation = "replace",
                     registry: Mapping[str, PrivateAlgorithm] | None = None) -> PrivateAlgorithm:
    """``algorithm="auto"`` without a forecast: the first DP algorithm for ``kind`` whose proof serves ``relation``.

    Decided by the schema's kind and the relation only (public), never by the data.
    """
    registry = ALGORITHMS if registry is None else registry
    target = as_relation(relation)
    for name in AUTO_PREFERENCE.get(kind, ()):
        spec = registry.get(name)
        if spec is None or spec.data != kind or not spec.differentially_private:
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


def worst_case_of(spec: PrivateAlgorithm, *, p: int, n: int | None, **parameters: Any) -> WorstCase:
    """The algorithm's data-independent :class:`WorstCase` for ``p`` variables, public ``n`` and parameters.

    Calls the algorithm's privacy map with the keywords it takes (``p``, ``n``,
    and the algorithm's own privacy parameters); needs n only if the map does.
    """
    if not spec.differentially_private:
        raise CalibrationRefused(release_refusal(spec))
    function = spec.privacy_map
    kwargs = _accepted(function, {"p": p, "n": n, **dict(spec.extra), **parameters})
    if "n" in inspect.signature(function).parameters and kwargs.get("n") is None:
        raise CalibrationRefused(f"algorithm {spec.name!r} ({spec.label}) is calibrated with the number of records n, "
                          "which is public only under the replace-one relation")
    return function(**kwargs)


@dataclass(frozen=True)
class Calibration:
    """The algorithm's parameters for a requested total (ε, δ) under a relation, and the resulting worst case.

    ``kwargs`` are passed to the algorithm; ``worst_case`` is its
    :class:`WorstCase`; ``guarantee`` the worst case's (ε, δ) under ``relation``
    (:meth:`WorstCase.as_dict`); ``how`` describes the search.
    """

    kwargs: dict[str, Any]
    epsilon: float
    delta: float
    relation: str
    worst_case: WorstCase
    guarantee: dict[str, Any]
    how: str


def _fits(value: tuple[float, float], epsilon: float, delta: float) -> bool:
    """Whether a guarantee (ε, δ) is within the request; False for ∞ or NaN."""
    eps, dlt = value
    return (math.isfinite(eps) and math.isfinite(dlt) and eps <= epsilon * (1 + 1e-9)
            and dlt <= delta * (1 + 1e-9) + 1e-300)


def _search(spec: PrivateAlgorithm, p: int, n: int | None, max_order: int | None, epsilon: float, delta: float,
            rtol: float) -> float:
    """Largest per-round parameter x whose worst-case ε (native relation, at ``delta``) is ≤ ``epsilon``
    (:func:`dpcd.privacy.calibration.largest_parameter` on ``spec``'s own worst case). Public inputs only, so it is
    memoised on the object (``spec``'s calibrations, never a name: a variant that shares a name, or an algorithm
    outside :data:`ALGORITHMS`, is searched on its own map) and stored on disk across processes
    (:func:`dpcd.privacy.calibration.stored_parameter`, keyed by the inputs, the object's budget fields and a
    fingerprint of the code its worst case depends on, :func:`worst_case_code`)."""
    memo = spec.calibrations
    inputs = (p, n, max_order, epsilon, delta, rtol)
    if inputs in memo:
        return memo[inputs]
    reasons: list[str] = []  # why the worst case refused a parameter (its ValueError), for the refusal's message

    def total(x: float) -> float:
        value = 1.0 / x if spec.budget == "noise" else x
        params = {spec.budget_arg: value, "max_order": max_order}
        if spec.delta_arg is not None:
            params[spec.delta_arg] = delta
        try:
            worst = worst_case_of(spec, p=p, n=n, **params)
        except CalibrationRefused:
            raise
        except ValueError as error:  # this parameter has no worst case (e.g. δ left for the accountant ≤ 0)
            reasons.append(str(error))
            return math.inf
        if not (math.isfinite(worst.epsilon) and worst.delta <= delta * (1 + 1e-9)):
            return math.inf  # ∞ or NaN: no guarantee within the request at this parameter
        return worst.epsilon

    def search() -> float:
        try:
            return largest_parameter(total, epsilon=epsilon, rtol=rtol)
        except CalibrationError:
            why = f": {reasons[-1]}" if reasons else ""
            raise CalibrationRefused(f"algorithm {spec.name!r}: no {spec.budget_arg} meets epsilon={epsilon:g}, "
                                     f"delta={delta:g}{why}; choose a larger epsilon or delta or another "
                                     "algorithm") from None

    if not _storable(spec):  # a map the key cannot name exactly: searched here, remembered on the object only
        memo[inputs] = value = search()
        return value
    key = {"algorithm": spec.name, "budget": spec.budget, "budget_arg": spec.budget_arg, "delta_arg": spec.delta_arg,
           "extra": sorted((str(k), v) for k, v in dict(spec.extra).items()),
           "map": f"{spec.privacy_map.__module__}.{spec.privacy_map.__qualname__}",
           "p": p, "n": n, "max_order": max_order, "epsilon": epsilon, "delta": delta, "rtol": rtol,
           "code": worst_case_code(spec.privacy_map)}
    memo[inputs] = value = stored_parameter(key, search)
    return value


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str)) or (
        isinstance(value, tuple) and all(_plain(v) for v in value))


def _storable(spec: PrivateAlgorithm) -> bool:
    """Whether a calibration of ``spec`` may go to the disk store: its map is a plain function defined at the top
    level of a module file (so its module and name identify it and :func:`worst_case_code` hashes its source) and its
    fixed arguments are plain values. A ``functools.partial``, a closure, a lambda or a function typed into a
    notebook could share a name with another map, so their calibrations stay on the object."""
    function = spec.privacy_map
    module = sys.modules.get(getattr(function, "__module__", None) or "")
    return (isinstance(function, types.FunctionType) and function.__closure__ is None
            and "<" not in function.__qualname__ and module is not None
            and str(getattr(module, "__file__", "") or "").endswith(".py")
            and getattr(module, function.__qualname__, None) is function
            and all(_plain(v) for v in dict(spec.extra).values()))


def _dpcd_module(obj: Any) -> str | None:
    """The ``dpcd`` module ``obj`` is (a module) or was defined in (a function, class or object), else None."""
    name = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
    return name if isinstance(name, str) and (name == "dpcd" or name.startswith("dpcd.")) else None


@functools.lru_cache(maxsize=256)
def worst_case_code(privacy_map: Callable[..., Any]) -> str:
    """Fingerprint of the code a worst case depends on: the module defining ``privacy_map`` (wherever it lives, a
    test file included) and, transitively, every ``dpcd`` module whose names it holds, the whole privacy package
    (the accountants), and the versions of the accountant's libraries. Remembered per map within a process: every
    calibration not yet stored would otherwise re-read and hash the same files.

    >>> from dpcd.discovery.priv_pc import worst_case
    >>> len(worst_case_code(worst_case)), worst_case_code(worst_case) == worst_case_code(ALGORITHMS["svt_pc"].privacy_map)
    (16, False)
    """
    import hashlib
    from importlib import metadata
    from pathlib import Path

    inner = privacy_map
    while isinstance(inner, functools.partial):
        inner = inner.func
    here = Path(__file__).resolve().parent
    seen: set[str] = set()
    todo = [getattr(inner, "__module__", "")]
    while todo:
        name = todo.pop()
        if name in seen or name not in sys.modules:
            continue
        seen.add(name)
        for value in list(vars(sys.modules[name]).values()):
            found = _dpcd_module(value)
            if found is not None and found not in seen:
                todo.append(found)
    files = {Path(path).resolve() for path in (getattr(sys.modules[name], "__file__", None) for name in seen)
             if path and path.endswith(".py")}
    files.update((here / "privacy").glob("*.py"))
    digest = hashlib.sha256()
    for file in sorted(files):
        digest.update(file.name.encode() + b"\0" + file.read_bytes() + b"\0")
    for package in ("dp-accounting", "numpy", "scipy"):
        digest.update(f"{package}={metadata.version(package)}".encode())
    return digest.hexdigest()[:16]


def calibrate(spec: PrivateAlgorithm, *, p: int, n: int | None, epsilon: float, delta: float,
              relation: str | Relation = "replace", max_order: int | None = None,
              rtol: float = 0.005) -> Calibration:
    """The parameters of ``spec`` whose worst-case guarantee under ``relation`` is within (epsilon, delta).

    Depends only on public quantities (p, n when the relation makes it public,
    ``max_order``, ε, δ). Raises :class:`CalibrationRefused` when no parameter meets the
    request (an algorithm not proven under ``relation``, a worst case whose δ alone
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
        worst_case_of(spec, p=p, n=n)  # raises CalibrationRefused with the reason
    try:
        eps_native, delta_native = needed(epsilon, delta, source=spec.relation, target=target)
    except ValueError as error:
        raise CalibrationRefused(f"algorithm {spec.name!r} ({spec.label}) is proven under {spec.relation.name}: {error}"
                          + ("; under add/remove, em_pc or lapmech run on numeric columns binned by the schema"
                             if spec.data == "numeric" and not target.n_public else "")) from None
    kwargs: dict[str, Any] = {}
    if spec.takes_max_order and spec.budget != "total" and max_order is None:
        max_order = min(DEFAULT_MAX_ORDER, p - 2)
    if spec.takes_max_order and max_order is not None:
        kwargs["max_order"] = max_order
    if spec.delta_arg is not None:
        if delta_native <= 0:
            why = ("" if delta <= 0 else f" (delta={delta:g} converted to {spec.relation.name} at epsilon={epsilon:g} "
                   "is below the smallest double)")
            raise CalibrationRefused(f"algorithm {spec.name!r} ({spec.label}) needs delta > 0{why}; pass a larger "
                                     "delta or choose a pure-DP algorithm")
        kwargs[spec.delta_arg] = delta_native
    if spec.budget == "total":
        kwargs[spec.budget_arg] = eps_native
        how = f"{spec.budget_arg}={eps_native:.6g}: the algorithm's own total budget"
    else:
        x = _search(spec, p, n, max_order, eps_native, delta_native, float(rtol))
        kwargs[spec.budget_arg] = 1.0 / x if spec.budget == "noise" else x
        unit = {"per_test": "per CI test", "per_edge": "per removed edge", "noise": "noise multiplier"}[spec.budget]
        how = (f"{spec.budget_arg}={kwargs[spec.budget_arg]:.6g} {unit}: the largest whose worst case (every round "
               f"the run could make, p={p}, max_order={max_order}) composes within the budget by the tight "
               "accountant")
    try:
        worst = worst_case_of(spec, p=p, n=n, **kwargs)
        guarantee = worst.as_dict(target)
    except CalibrationRefused:
        raise
    except ValueError as error:  # the algorithm's own refusal of these parameters, as a calibration refusal
        raise CalibrationRefused(f"algorithm {spec.name!r} ({spec.label}) cannot be calibrated to epsilon={epsilon:g}, "
                                 f"delta={delta:g} under {target.name}: {error}") from None
    # load-bearing: whatever the search or a store returned, the parameter is checked on this object's own map
    if not _fits((guarantee["epsilon"], guarantee["delta"]), epsilon, delta):
        raise CalibrationRefused(
            f"algorithm {spec.name!r} ({spec.label}) cannot meet epsilon={epsilon:g}, delta={delta:g} under "
            f"{target.name}: its worst case is epsilon={guarantee['epsilon']:.4g}, delta={guarantee['delta']:.3g} "
            f"({worst.theorem}); choose another algorithm"
        )
    return Calibration(kwargs, epsilon, delta, target.name, worst, guarantee, how)

"""Private causal discovery on a user's own CSV: ``dpcd.discover`` (defined here) and ``python -m dpcd discover``.

One call loads a CSV, detects (or takes) each column's type, validates the
data and the privacy budget, picks the private algorithm, calibrates it to the
requested **total** (ε, δ), runs it, and writes the released graph and a
privacy report into an output folder:

``graph.json``      nodes, directed and undirected edges (schema in :func:`graph_to_json`)
``graph.graphml``   the same graph for Gephi/yEd/networkx (edge attribute ``type``)
``graph.dot``       Graphviz (undirected edges drawn with ``dir=none``)
``graph.png``/``.svg`` a drawing
``privacy.json``    algorithm, neighbouring relation, public assumptions,
                    per-mechanism charges and the total (ε, δ) by every accountant

The folder is built in a hidden temporary sibling and moved into place in one
``os.replace``/``rename``, so a failure at any point leaves nothing behind.

Algorithm registry
------------------
:data:`ALGORITHMS` names every private algorithm of the package with the
module and function implementing it. Entries are resolved lazily with
:mod:`importlib`; an algorithm whose module is not part of this version is
reported as "not available in this version" (see :func:`available_algorithms`).

Calibration to a total budget
-----------------------------
Each algorithm's privacy parameter means something different (a total budget
for CURATE, LapMech, PrivPC*; a per-test ε for Priv-PC, SVT-PC, EM-PC). To put
every algorithm at the same total (ε, δ) measured by the same accountant —
the ledger's ``tight`` PLD accountant [MM18; DGKKM22] at δ = ``delta`` — an
entry says how its parameter maps to a total:

* ``budget="total"``: the parameter is the run's total budget; it is passed as
  is, and the run's ledger must come out at or below the request;
* ``budget="per_test"`` / ``"per_edge"``: the parameter is spent per CI test
  (Priv-PC, PCD) or per removed edge (SVT-PC). The number of rounds of a run
  depends on the data, so choosing the parameter from an actual run's count
  would leak information about the data. Instead the parameter is found by a
  root search on a **data-independent plan**: a ledger holding the worst-case
  number of rounds — every test of the PC skeleton search on p variables up to
  ``max_order`` (:func:`worst_case_tests`; ``max_order`` defaults to
  :data:`DEFAULT_PLAN_MAX_ORDER`), or every one of the p(p − 1)/2 edges — each
  charged like the algorithm charges one round, plus its one-off charges.
  Because the algorithm cannot make more rounds than that, its real ledger is
  dominated by the plan, and the plan's tight total is ≤ the request. The
  guarantee is then the request, whatever the data.

Privacy: the released graph is as private as the algorithm's run (its
docstring states the neighbouring relation and theorem); everything written
besides the graph — column names, n, the column types, and the calibrated
parameter, which depends only on (n, p, max_order, ε, δ) — is treated as public
and listed under ``assumed_public`` in ``privacy.json``. The data-dependent
checks (missing values, constant columns, number of levels) decide only
whether to run at all, and print no statistic beyond the failing column's name;
a data holder who considers that sensitive should check the data beforehand.

References
----------
.. [MM18] S. Meiser, E. Mohammadi. Tight on Budget? Tight Bounds for r-Fold
   Approximate Differential Privacy. CCS 2018.
.. [DGKKM22] V. Doroshenko et al. Connect the Dots: Tighter Discrete
   Approximations of Privacy Loss Distributions. PETS 2022.
.. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. 2014.
"""

from __future__ import annotations

import csv
import functools
import importlib
import inspect
import json
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import networkx as nx
import numpy as np
import pandas as pd

from . import __version__
from ._validation import RngLike, as_rng, check_delta, check_epsilon, check_int, check_probability
from .graphs import directed_edges, undirected_edges

__all__ = [
    "ALGORITHMS",
    "AlgorithmSpec",
    "AlgorithmUnavailable",
    "DiscoveryResult",
    "Calibration",
    "available_algorithms",
    "resolve_algorithm",
    "choose_algorithm",
    "load_table",
    "detect_types",
    "validate_table",
    "prepare_data",
    "worst_case_tests",
    "planned_rounds",
    "plan_ledger",
    "calibrate",
    "run_algorithm",
    "graph_to_json",
    "graph_to_dot",
    "write_outputs",
    "discover",
    "MIN_ROWS",
    "MAX_LEVELS",
]

DataKind = Literal["categorical", "numeric"]
MIN_ROWS = 100
"""Fewest rows ``discover`` accepts: below that no private CI test has power."""
MAX_LEVELS = 20
"""Most levels a categorical column may have (contingency tables grow as the product of levels)."""
DETECT_MAX_LEVELS = 10
"""An integer column with at most this many distinct values is detected as categorical."""
OUTPUT_FILES = ("graph.json", "graph.graphml", "graph.dot", "graph.png", "graph.svg", "privacy.json")


class AlgorithmUnavailable(ValueError):
    """The algorithm's module is not part of this version of dpcd."""


# =========================================================================== registry


@dataclass(frozen=True)
class AlgorithmSpec:
    """How to call one private algorithm of the package.

    Attributes
    ----------
    name : registry key (the module's name), e.g. ``"priv_pc"``.
    label : the name used in figures, e.g. ``"Priv-PC"``.
    module, function : where the algorithm lives (imported lazily); ``function``
        may also be the callable itself (e.g. a user's own algorithm).
    data : ``"categorical"`` (integer codes) or ``"numeric"`` (floats).
    budget : how the ε parameter is spent:
        ``"total"`` — it is the run's total;
        ``"per_test"`` — spent per CI test (at most :func:`worst_case_tests` rounds);
        ``"per_edge"`` — spent per removed edge (at most p(p − 1)/2 rounds).
    round_charges : how one round is charged, as (fraction of ε, ledger kind)
        pairs (e.g. Priv-PC's sieve ε/2 "pure" + examine ε/2 "laplace").
    open_charges : charges made once at the end of a run (e.g. an open sieve).
    epsilon_arg, delta_arg : keyword names of the ε and δ parameters (``delta_arg``
        None for a pure ε-DP algorithm).
    uses_alpha : whether the algorithm takes ``alpha``.
    takes_max_order : whether the algorithm takes ``max_order``.
    differentially_private : False for an algorithm calibrated to a *local*
        sensitivity (PCD), which gives no DP guarantee; ``discover`` refuses it.
    extra : further fixed keyword arguments.
    """

    name: str
    label: str
    module: str
    function: str | Callable[..., Any]
    data: DataKind
    budget: Literal["total", "per_test", "per_edge"] = "total"
    round_charges: tuple[tuple[float, str], ...] = ((1.0, "laplace"),)
    open_charges: tuple[tuple[float, str], ...] = ()
    epsilon_arg: str = "epsilon"
    delta_arg: str | None = None
    uses_alpha: bool = True
    takes_max_order: bool = True
    differentially_private: bool = True
    extra: Mapping[str, Any] = field(default_factory=dict)

    def load(self) -> Callable[..., Any]:
        """Import and return the algorithm's function (``AlgorithmUnavailable`` when missing)."""
        if callable(self.function):
            return self.function
        try:
            module = importlib.import_module(self.module)
        except ModuleNotFoundError as error:
            if error.name is not None and (error.name == self.module or self.module.startswith(error.name + ".")):
                raise AlgorithmUnavailable(
                    f"algorithm {self.name!r} ({self.label}) is not available in this version of dpcd "
                    f"(module {self.module} is missing)"
                ) from None
            raise
        function = getattr(module, self.function, None)
        if not callable(function):
            raise AlgorithmUnavailable(
                f"algorithm {self.name!r} ({self.label}) is not available in this version of dpcd "
                f"({self.module} has no function {self.function!r})"
            )
        return function

    @property
    def available(self) -> bool:
        try:
            self.load()
        except AlgorithmUnavailable:
            return False
        return True


def _registry(*specs: AlgorithmSpec) -> dict[str, AlgorithmSpec]:
    return {s.name: s for s in specs}


ALGORITHMS: dict[str, AlgorithmSpec] = _registry(
    AlgorithmSpec("em_pc", "EM-PC", "dpcd.discovery.em_pc", "em_pc", "categorical", "total"),
    AlgorithmSpec("lapmech", "LapMech", "dpcd.discovery.lapmech", "lapmech", "categorical", "total"),
    AlgorithmSpec("priv_pc", "Priv-PC", "dpcd.discovery.priv_pc", "priv_pc", "categorical", "per_test",
                  round_charges=((0.5, "pure"), (0.5, "laplace")), open_charges=((0.5, "pure"),), delta_arg="delta"),
    AlgorithmSpec("svt_pc", "SVT-PC", "dpcd.discovery.svt_pc", "svt_pc", "categorical", "per_edge",
                  round_charges=((1.0, "pure"),), open_charges=((1.0, "pure"),), delta_arg="delta"),
    AlgorithmSpec("curate", "CURATE", "dpcd.discovery.curate", "curate", "categorical", "total",
                  epsilon_arg="epsilon_total", delta_arg="delta_total", uses_alpha=False),
    AlgorithmSpec("privpc_star", "PrivPC*", "dpcd.discovery.privpc_star", "privpc_star", "numeric", "total"),
    AlgorithmSpec("pcd", "PCD", "dpcd.discovery.pcd", "pcd", "numeric", "per_test", round_charges=((1.0, "pure"),),
                  differentially_private=False, extra={"ci_test": "kendall"}),
    AlgorithmSpec("noleaks", "NOLEAKS", "dpcd.discovery.noleaks", "noleaks", "numeric", "total",
                  epsilon_arg="epsilon_total", delta_arg="delta", uses_alpha=False, takes_max_order=False),
    AlgorithmSpec("curate_sb", "CURATE-SB", "dpcd.discovery.curate_sb", "curate_sb", "numeric", "total",
                  epsilon_arg="epsilon_total", delta_arg="delta", uses_alpha=False, takes_max_order=False),
)
"""Every private discovery algorithm of the package, by module name."""

AUTO_PREFERENCE: dict[str, tuple[str, ...]] = {
    "categorical": ("em_pc", "priv_pc", "curate", "svt_pc", "lapmech"),
    "numeric": ("privpc_star", "noleaks", "curate_sb"),
}
"""``--algorithm auto``: the first available algorithm for the data type."""


def available_algorithms(registry: Mapping[str, AlgorithmSpec] | None = None) -> dict[str, bool]:
    """``{name: importable}`` for every registry entry."""
    registry = ALGORITHMS if registry is None else registry
    return {name: spec.available for name, spec in registry.items()}


def resolve_algorithm(name: str, registry: Mapping[str, AlgorithmSpec] | None = None) -> AlgorithmSpec:
    """The registry entry ``name`` (case-insensitive, ``-`` = ``_``), checked to be importable."""
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


def choose_algorithm(kind: DataKind, registry: Mapping[str, AlgorithmSpec] | None = None) -> AlgorithmSpec:
    """``--algorithm auto``: the first available DP algorithm for data of ``kind``."""
    registry = ALGORITHMS if registry is None else registry
    preference = [n for n in AUTO_PREFERENCE.get(kind, ()) if n in registry]
    preference += [n for n, s in registry.items() if s.data == kind and n not in preference]
    for name in preference:
        spec = registry[name]
        if spec.data == kind and spec.differentially_private and spec.available:
            return spec
    raise AlgorithmUnavailable(
        f"algorithm auto: no differentially private algorithm for {kind} data is available in this version of dpcd"
    )


# =========================================================================== data


def load_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a CSV with a header row (column names must be unique and non-empty)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"data must be a path to a CSV file or a DataFrame, got {type(path).__name__}")
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"data file {os.fspath(path)!r} does not exist")
    try:
        frame = pd.read_csv(file, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise ValueError(f"data file {os.fspath(path)!r} is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as error:
        raise ValueError(f"data file {os.fspath(path)!r} is not a readable CSV: {' '.join(str(error).split())}") from None
    with open(file, newline="", encoding="utf-8", errors="replace") as handle:
        header = [h.strip() for h in next(csv.reader(handle), [])]
    if any(not h for h in header):
        raise ValueError(f"data file {os.fspath(path)!r} has a column without a name in its header row")
    duplicated = sorted({h for h in header if header.count(h) > 1})
    if duplicated:
        raise ValueError(f"column name(s) {duplicated[:3]} appear more than once in the header row")
    frame.columns = header if len(header) == frame.shape[1] else frame.columns
    return frame


def _parse_types(types: str | Mapping[str, str] | None, columns: Sequence[str]) -> dict[str, str]:
    """``types`` as ``{column: kind}``: "categorical"/"numeric" for all, "a=numeric,b=categorical", or a dict."""
    if types is None:
        return {}
    allowed = ("categorical", "numeric")
    if isinstance(types, str):
        text = types.strip()
        if text.lower() in allowed:
            return {c: text.lower() for c in columns}
        mapping = {}
        for part in text.split(","):
            if "=" not in part:
                raise ValueError(
                    f"types must be 'categorical', 'numeric' or COLUMN=KIND pairs separated by commas, got {types!r}"
                )
            column, kind = (s.strip() for s in part.split("=", 1))
            mapping[column] = kind
        types = mapping
    if not isinstance(types, Mapping):
        raise TypeError(f"types must be a string or a dict column -> kind, got {type(types).__name__}")
    parsed = {}
    for column, kind in types.items():
        if str(column) not in columns:
            raise ValueError(f"types names column {column!r}, which is not in the data (columns: {list(columns)[:8]})")
        kind = str(kind).strip().lower()
        if kind not in allowed:
            raise ValueError(f"types: column {column!r} must be 'categorical' or 'numeric', got {kind!r}")
        parsed[str(column)] = kind
    return parsed


def detect_types(frame: pd.DataFrame, types: str | Mapping[str, str] | None = None) -> dict[str, DataKind]:
    """Each column's kind: declared in ``types`` or detected.

    Detection: a non-numeric column (strings, booleans) is categorical; an
    integer-valued numeric column with at most :data:`DETECT_MAX_LEVELS`
    distinct values is categorical; every other numeric column is numeric.
    """
    columns = [str(c) for c in frame.columns]
    declared = _parse_types(types, columns)
    kinds: dict[str, DataKind] = {}
    for column in columns:
        if column in declared:
            kinds[column] = declared[column]  # type: ignore[assignment]
            continue
        values = frame[column].dropna()
        if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
            kinds[column] = "categorical"
        elif np.all(np.mod(values.to_numpy(dtype=float), 1.0) == 0) and values.nunique() <= DETECT_MAX_LEVELS:
            kinds[column] = "categorical"
        else:
            kinds[column] = "numeric"
    return kinds


def validate_table(frame: pd.DataFrame, kinds: Mapping[str, str], *, min_rows: int = MIN_ROWS,
                   max_levels: int = MAX_LEVELS) -> None:
    """Refuse data no algorithm can use, with a one-line message naming the column.

    Checks, in order: at least two columns, at least ``min_rows`` rows, no
    missing value, no constant column, numeric columns hold numbers, categorical
    columns have at most ``max_levels`` levels, and all columns are of one kind.
    """
    if frame.shape[1] < 2:
        raise ValueError(f"data has {frame.shape[1]} column(s); causal discovery needs at least 2")
    if frame.shape[0] < min_rows:
        raise ValueError(f"data has {frame.shape[0]} rows; at least {min_rows} are needed")
    for column in frame.columns:
        values = frame[column]
        n_missing = int(values.isna().sum())
        if n_missing:
            raise ValueError(f"column {str(column)!r} has {n_missing} missing value(s); drop or impute them first")
    for column in frame.columns:
        if frame[column].nunique() < 2:
            raise ValueError(f"column {str(column)!r} is constant; remove it (it cannot depend on anything)")
    for column in frame.columns:
        name = str(column)
        values = frame[column]
        if kinds[name] == "numeric":
            if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
                raise ValueError(f"column {name!r} is declared numeric but holds non-numeric values")
            if not np.all(np.isfinite(values.to_numpy(dtype=float))):
                raise ValueError(f"column {name!r} has infinite values")
        else:
            levels = values.nunique()
            if levels > max_levels:
                raise ValueError(
                    f"column {name!r} has {levels} levels, more than {max_levels} for a categorical test; "
                    f"merge levels or declare it numeric (--types {name}=numeric)"
                )
    categorical = [c for c, k in kinds.items() if k == "categorical"]
    numeric = [c for c, k in kinds.items() if k == "numeric"]
    if categorical and numeric:
        raise ValueError(
            f"data mixes categorical column(s) {categorical[:3]} and numeric column(s) {numeric[:3]}; "
            "declare one kind for all with --types categorical or --types numeric"
        )


def prepare_data(
    data: str | os.PathLike[str] | pd.DataFrame,
    *,
    types: str | Mapping[str, str] | None = None,
    min_rows: int = MIN_ROWS,
    max_levels: int = MAX_LEVELS,
) -> tuple[pd.DataFrame, DataKind, dict[str, Any]]:
    """Load (if a path), type, validate and encode the data.

    Returns ``(frame, kind, info)``: integer codes 0..k-1 per column for
    categorical data, float64 for numeric data; ``info`` holds n, the columns,
    their kinds and, for categorical data, each column's level labels.
    """
    frame = load_table(data) if not isinstance(data, pd.DataFrame) else data.copy()
    frame.columns = [str(c) for c in frame.columns]
    if len(set(frame.columns)) != frame.shape[1]:
        raise ValueError("column names must be unique")
    kinds = detect_types(frame, types)
    validate_table(frame, kinds, min_rows=min_rows, max_levels=max_levels)
    kind: DataKind = "categorical" if all(k == "categorical" for k in kinds.values()) else "numeric"
    info: dict[str, Any] = {"n": int(frame.shape[0]), "p": int(frame.shape[1]), "columns": list(frame.columns),
                            "types": dict(kinds), "kind": kind}
    if kind == "categorical":
        from .datasets import encode_categorical

        encoded, labels = encode_categorical(frame)
        info["levels"] = {c: [str(v) for v in labels[c]] for c in frame.columns}
        return encoded, kind, info
    return frame.astype(np.float64), kind, info


# =========================================================================== calibration


def worst_case_tests(p: int, max_order: int | None = None) -> int:
    """Most CI tests the PC skeleton search can make on ``p`` variables up to ``max_order``.

    At order k each ordered pair (x, y) is tested against at most C(p − 2, k)
    conditioning sets, so the search makes at most p(p − 1) Σ_{k ≤ m} C(p − 2, k)
    tests, m = min(max_order, p − 2). Data-independent, hence public.
    """
    p = check_int(p, "p", minimum=2)
    last = p - 2 if max_order is None else min(check_int(max_order, "max_order", minimum=0), p - 2)
    return p * (p - 1) * sum(math.comb(p - 2, k) for k in range(last + 1))


@dataclass(frozen=True)
class Calibration:
    """The algorithm's own parameters for a requested total (ε, δ).

    ``kwargs`` are passed to the algorithm; ``planned_epsilon`` is the tight
    total of the data-independent plan (per-test algorithms) or the request
    (total-budget algorithms); ``plan`` describes how it was found.
    """

    kwargs: dict[str, Any]
    epsilon: float
    delta: float
    planned_epsilon: float
    plan: str


DEFAULT_PLAN_MAX_ORDER = 2
"""``max_order`` used for per-test algorithms when none is given: the worst-case
test count, hence the noise, grows as C(p − 2, max_order)."""


def planned_rounds(spec: AlgorithmSpec, p: int, max_order: int | None) -> int:
    """Most rounds (charged tests or removed edges) a run of ``spec`` can make; data-independent."""
    if spec.budget == "per_edge":
        return check_int(p, "p", minimum=2) * (p - 1) // 2
    if spec.budget == "per_test":
        return worst_case_tests(p, max_order)
    raise ValueError(f"algorithm {spec.name!r} has a total budget; it has no planned rounds")


def plan_ledger(spec: AlgorithmSpec, per_round: float, rounds: int) -> Any:
    """The ledger of a worst-case run: ``rounds`` rounds of ``spec.round_charges`` plus its open charges."""
    return _plan(spec.round_charges, spec.open_charges, per_round, rounds)


def _plan(round_charges, open_charges, per_round: float, rounds: int) -> Any:
    from .privacy import PrivacyLedger

    ledger = PrivacyLedger()
    for fraction, kind in round_charges:
        ledger.charge("planned round", epsilon=fraction * per_round, count=rounds, kind=kind)
    for fraction, kind in open_charges:
        ledger.charge("planned open round", epsilon=fraction * per_round, kind=kind)
    return ledger


@functools.lru_cache(maxsize=256)
def _largest_per_round(round_charges: tuple, open_charges: tuple, rounds: int, epsilon: float, delta: float,
                       rtol: float) -> tuple[float, float]:
    """Largest per-round ε whose plan's tight total is ≤ epsilon (within ``rtol``), and that total.

    Regula falsi (Illinois variant) on log ε_total(log ε_round), which is smooth
    and increasing; the returned point is always feasible.
    """

    def total(x: float) -> float:
        return _plan(round_charges, open_charges, x, rounds).total("tight", target_delta=delta).epsilon

    from .privacy import advanced_composition

    fractions = np.concatenate([np.repeat([f for f, _ in round_charges], rounds), [f for f, _ in open_charges]])
    units = float(fractions.sum())
    ceiling = epsilon / float(fractions.max())  # one charge alone would spend the whole budget
    lo, f_lo = epsilon / units, None  # basic composition: always feasible
    # advanced composition [DR14, Thm 3.20] is a cheap, slightly loose bracket for the tight total
    a, b = lo, ceiling
    for _ in range(50):
        mid = math.sqrt(a * b)
        eps_adv, _ = advanced_composition(mid * fractions, np.zeros_like(fractions), delta)
        a, b = (mid, b) if eps_adv <= epsilon else (a, mid)
    if a > lo:
        f_a = total(a)
        if f_a <= epsilon:
            lo, f_lo = a, f_a
    if f_lo is None:
        f_lo = total(lo)
    hi = min(ceiling, 2.0 * lo)
    f_hi = total(hi)
    while f_hi <= epsilon and hi < ceiling:
        lo, f_lo = hi, f_hi
        hi = min(ceiling, 2.0 * hi)
        f_hi = total(hi)
    if f_hi <= epsilon:
        return hi, f_hi
    g_lo, g_hi = math.log(f_lo / epsilon), math.log(f_hi / epsilon)
    side = 0
    for _ in range(60):
        if g_lo > math.log1p(-rtol):
            break
        x_lo, x_hi = math.log(lo), math.log(hi)
        x = x_lo - g_lo * (x_hi - x_lo) / (g_hi - g_lo)
        x = min(max(x, x_lo + 1e-9), x_hi - 1e-9)
        value = total(math.exp(x))
        g = math.log(value / epsilon)
        if g <= 0:
            lo, f_lo, g_lo = math.exp(x), value, g
            if side == -1:
                g_hi /= 2
            side = -1
        else:
            hi, g_hi = math.exp(x), g
            if side == 1:
                g_lo /= 2
            side = 1
    return lo, f_lo


def calibrate(spec: AlgorithmSpec, *, p: int, epsilon: float, delta: float, max_order: int | None = None,
              rtol: float = 0.005) -> Calibration:
    """The parameters of ``spec`` giving a total of at most (epsilon, delta) by the tight accountant.

    ``budget="total"`` entries get (epsilon, delta) as their total budget;
    per-test and per-edge entries get the largest per-round ε (to within
    ``rtol`` of the budget) whose worst-case plan (:func:`plan_ledger` with
    :func:`planned_rounds` rounds) composes to at most ``epsilon`` at
    δ = ``delta``; ``max_order`` defaults to :data:`DEFAULT_PLAN_MAX_ORDER` for
    per-test entries and is passed to the algorithm. Depends only on public
    quantities (p, max_order, ε, δ).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    kwargs: dict[str, Any] = {}
    if spec.delta_arg is not None:
        kwargs[spec.delta_arg] = delta
    if spec.budget == "total":
        kwargs[spec.epsilon_arg] = epsilon
        return Calibration(kwargs, epsilon, delta, epsilon, "the algorithm's own total budget")
    if spec.budget == "per_test" and max_order is None:
        max_order = min(DEFAULT_PLAN_MAX_ORDER, p - 2)
    rounds = planned_rounds(spec, p, max_order)
    per_round, planned = _largest_per_round(tuple(spec.round_charges), tuple(spec.open_charges), rounds, epsilon,
                                            delta, float(rtol))
    kwargs[spec.epsilon_arg] = per_round
    if spec.takes_max_order and max_order is not None:
        kwargs["max_order"] = max_order
    what = "CI tests" if spec.budget == "per_test" else "removed edges"
    return Calibration(kwargs, epsilon, delta, planned,
                       f"{spec.epsilon_arg}={per_round:.6g} per round for at most {rounds} {what} "
                       f"(p={p}, max_order={max_order}), worst case composed by the tight accountant")


# =========================================================================== running


def _accepts(function: Callable[..., Any], name: str) -> bool:
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return True
    return name in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def run_algorithm(spec: AlgorithmSpec, data: pd.DataFrame, *, epsilon: float, delta: float, alpha: float = 0.05,
                  max_order: int | None = None, rng: RngLike, calibration: Calibration | None = None) -> Any:
    """Run ``spec`` on prepared ``data`` at total (epsilon, delta); returns the algorithm's result.

    The result has ``.cpdag`` (or ``.dag``) and ``.ledger``. Raises
    ``RuntimeError`` if its ledger's tight total exceeds the request (a bug in
    the algorithm or its registry entry, never expected).
    """
    function = spec.load()
    if calibration is None:
        calibration = calibrate(spec, p=data.shape[1], epsilon=epsilon, delta=delta, max_order=max_order)
    kwargs = dict(spec.extra)
    kwargs.update(calibration.kwargs)
    if spec.uses_alpha and _accepts(function, "alpha"):
        kwargs["alpha"] = alpha
    if max_order is not None and spec.takes_max_order and "max_order" not in kwargs and _accepts(function, "max_order"):
        kwargs["max_order"] = max_order
    return function(data, rng=as_rng(rng), **kwargs)


def _graph_of(result: Any) -> tuple[nx.DiGraph, str]:
    graph = getattr(result, "cpdag", None)
    if isinstance(graph, nx.DiGraph):
        return graph, "CPDAG"
    graph = getattr(result, "dag", None)
    if isinstance(graph, nx.DiGraph):
        return graph, "DAG"
    raise TypeError(f"the algorithm returned {type(result).__name__} without a cpdag or dag graph")


def privacy_report(spec: AlgorithmSpec, ledger: Any, *, epsilon: float, delta: float,
                   calibration: Calibration, data_info: Mapping[str, Any]) -> dict[str, Any]:
    """The content of ``privacy.json`` (see :func:`discover`)."""
    if ledger is None:
        raise RuntimeError(f"algorithm {spec.name!r} returned no privacy ledger")
    summary = ledger.summary(target_delta=delta)
    totals = summary["totals"]
    tight = totals["tight"]
    within = tight["epsilon"] <= epsilon * (1 + 1e-9) and tight["delta"] <= delta * (1 + 1e-9)
    return {
        "algorithm": spec.name,
        "label": spec.label,
        "differentially_private": spec.differentially_private,
        "neighbouring": summary["neighbouring"],
        "requested": {"epsilon": epsilon, "delta": delta},
        "achieved": {"epsilon": tight["epsilon"], "delta": tight["delta"], "accountant": "tight"},
        "within_budget": bool(within),
        "calibration": {"parameters": _jsonable(calibration.kwargs), "plan": calibration.plan,
                        "planned_epsilon": calibration.planned_epsilon, "budget": spec.budget},
        "mechanisms": summary["mechanisms"],
        "n_charges": summary["n_charges"],
        "totals": totals,
        "assumed_public": sorted(set(summary["public"]) | {"column names", "column types", "n"}
                                 | ({"column levels"} if data_info.get("kind") == "categorical" else set())),
        "dpcd_version": __version__,
    }


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


# =========================================================================== writers


def graph_to_json(graph: nx.DiGraph, *, graph_type: str = "CPDAG", algorithm: str = "") -> dict[str, Any]:
    """``{"nodes": [...], "directed_edges": [[u, v], ...], "undirected_edges": [[u, v], ...], ...}``.

    An undirected edge (stored both ways in the package's PDAG convention) is
    listed once, its endpoints sorted; directed edges go ``[tail, head]``.
    """
    nodes = [str(v) for v in graph.nodes]
    directed = sorted([str(u), str(v)] for u, v in directed_edges(graph))
    undirected = sorted(sorted([str(u), str(v)]) for u, v in (tuple(e) for e in undirected_edges(graph)))
    return {"graph_type": graph_type, "algorithm": algorithm, "nodes": nodes,
            "directed_edges": directed, "undirected_edges": undirected}


def _dot_id(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def graph_to_dot(graph_json: Mapping[str, Any]) -> str:
    """Graphviz DOT text of a graph in :func:`graph_to_json` form."""
    lines = ["digraph G {"]
    lines += [f"  {_dot_id(v)};" for v in graph_json["nodes"]]
    lines += [f"  {_dot_id(u)} -> {_dot_id(v)};" for u, v in graph_json["directed_edges"]]
    lines += [f"  {_dot_id(u)} -> {_dot_id(v)} [dir=none];" for u, v in graph_json["undirected_edges"]]
    return "\n".join(lines) + "\n}\n"


def _graphml_graph(graph_json: Mapping[str, Any]) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(graph_json["nodes"])
    for u, v in graph_json["directed_edges"]:
        g.add_edge(u, v, type="directed")
    for u, v in graph_json["undirected_edges"]:
        g.add_edge(u, v, type="undirected")
        g.add_edge(v, u, type="undirected")
    g.graph["graph_type"] = graph_json["graph_type"]
    return g


def write_outputs(out: str | os.PathLike[str], graph: nx.DiGraph, privacy: Mapping[str, Any], *,
                  graph_type: str = "CPDAG", algorithm: str = "", title: str | None = None,
                  overwrite: bool = False) -> dict[str, Path]:
    """Write every output file into ``out``, atomically (all or nothing).

    The files are written into a hidden temporary folder next to ``out`` and
    moved into place with one rename; ``out`` must not exist or be empty
    unless ``overwrite``. Returns ``{file name: final path}``.
    """
    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out must be a folder path, got {type(out).__name__}")
    target = Path(out)
    if target.exists() and not target.is_dir():
        raise ValueError(f"out {os.fspath(out)!r} exists and is not a folder")
    if target.is_dir() and any(target.iterdir()) and not overwrite:
        raise ValueError(f"out {os.fspath(out)!r} is not empty; choose a new folder or pass overwrite")
    parent = target.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent))
    try:
        payload = graph_to_json(graph, graph_type=graph_type, algorithm=algorithm)
        (staging / "graph.json").write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        nx.write_graphml(_graphml_graph(payload), staging / "graph.graphml")
        (staging / "graph.dot").write_text(graph_to_dot(payload), encoding="utf-8")
        (staging / "privacy.json").write_text(json.dumps(_jsonable(privacy), indent=2) + "\n", encoding="utf-8")
        _draw(graph, staging, title)
        if target.exists():
            backup = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=parent))
            backup.rmdir()
            os.replace(target, backup)
            os.replace(staging, target)
            shutil.rmtree(backup, ignore_errors=True)
        else:
            os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {name: target / name for name in OUTPUT_FILES}


def _draw(graph: nx.DiGraph, folder: Path, title: str | None) -> None:
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plotting import draw_graph, savefig

    size = max(4.0, min(14.0, 1.0 + 0.45 * graph.number_of_nodes()))
    fig, ax = plt.subplots(figsize=(size, size * 0.8))
    try:
        draw_graph(graph, ax, title=title, node_size=700 if graph.number_of_nodes() < 25 else 350,
                   font_size=9 if graph.number_of_nodes() < 25 else 6)
        savefig(fig, folder, "graph")
    finally:
        plt.close(fig)


# =========================================================================== entry point


@dataclass(frozen=True)
class DiscoveryResult:
    """What :func:`discover` released: the graph, the algorithm's result and its privacy report.

    ``graph`` is the CPDAG (or DAG for score-based algorithms) over the data's
    columns; ``result`` the algorithm's own result (with ``.ledger``);
    ``privacy`` the content of ``privacy.json``; ``files`` the written paths
    (empty when ``out`` was None).
    """

    algorithm: str
    label: str
    graph: nx.DiGraph
    graph_type: str
    result: Any
    privacy: dict[str, Any]
    data_info: dict[str, Any]
    auto_selected: bool = False
    files: dict[str, Path] = field(default_factory=dict)

    @property
    def ledger(self) -> Any:
        return getattr(self.result, "ledger", None)


def _progress(enabled: bool | None, total: int):
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    disable = (not sys.stderr.isatty()) if enabled is None else not enabled
    return tqdm(total=total, desc="dpcd discover", unit="step", disable=disable, leave=False)


def discover(
    data: str | os.PathLike[str] | pd.DataFrame,
    *,
    algorithm: str = "auto",
    epsilon: float,
    delta: float = 1e-6,
    alpha: float = 0.05,
    rng: RngLike = 0,
    out: str | os.PathLike[str] | None = None,
    types: str | Mapping[str, str] | None = None,
    max_order: int | None = None,
    overwrite: bool = False,
    progress: bool | None = None,
    registry: Mapping[str, AlgorithmSpec] | None = None,
    min_rows: int = MIN_ROWS,
    max_levels: int = MAX_LEVELS,
) -> DiscoveryResult:
    """Release a causal graph of a user's data under a total (ε, δ).

    Parameters
    ----------
    data : path of a CSV with a header row, or a DataFrame (one column per variable).
    algorithm : a name of :data:`ALGORITHMS` or ``"auto"`` (first available of
        :data:`AUTO_PREFERENCE` for the data type; ``result.auto_selected`` says so).
    epsilon, delta : the total budget, measured by the tight PLD accountant at
        δ = ``delta``. ``delta`` must be below 1/n (a larger δ allows releasing
        a record outright); pure ε-DP algorithms spend no δ.
    alpha : significance level of the algorithm's CI tests.
    rng : Generator or integer seed (the algorithm's noise).
    out : folder for the outputs (see the module docstring); None writes nothing.
    types : "categorical", "numeric", or "COLUMN=KIND,..." (default: detected,
        see :func:`detect_types`).
    max_order : largest conditioning-set size (bounds the test count of
        per-test algorithms, hence their noise).
    overwrite : replace a non-empty ``out``.
    progress : show a progress bar (default: when stderr is a terminal).
    registry : algorithm registry (default :data:`ALGORITHMS`).

    Privacy
    -------
    The graph is (ε, δ)-DP with respect to the algorithm's neighbouring relation
    (``privacy["neighbouring"]``), with the quantities in
    ``privacy["assumed_public"]`` public, as given by the algorithm's own theorem
    and composed by the tight accountant (``privacy["achieved"]``). Nothing is
    written, and ``ValueError``/``TypeError`` is raised, on bad input.
    """
    registry = ALGORITHMS if registry is None else registry
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    alpha = check_probability(alpha, "alpha")
    if max_order is not None:
        max_order = check_int(max_order, "max_order", minimum=0)
    generator = as_rng(rng)
    if out is not None:
        if not isinstance(out, (str, os.PathLike)):
            raise TypeError(f"out must be a folder path, got {type(out).__name__}")
        target = Path(out)
        if target.exists() and (not target.is_dir() or (any(target.iterdir()) and not overwrite)):
            raise ValueError(f"out {os.fspath(out)!r} exists and is not an empty folder; choose a new folder")
    auto = isinstance(algorithm, str) and algorithm.strip().lower() == "auto"
    spec = None if auto else resolve_algorithm(algorithm, registry)
    frame, kind, info = prepare_data(data, types=types, min_rows=min_rows, max_levels=max_levels)
    if delta >= 1.0 / info["n"]:
        raise ValueError(f"delta must be below 1/n = {1.0 / info['n']:.3g} for n = {info['n']} rows, got {delta}")
    if spec is None:
        spec = choose_algorithm(kind, registry)
    if spec.data != kind:
        raise ValueError(f"algorithm {spec.name!r} ({spec.label}) needs {spec.data} data, but the data is {kind}; "
                         "choose another algorithm or --algorithm auto")
    if not spec.differentially_private:
        raise ValueError(f"algorithm {spec.name!r} ({spec.label}) calibrates its noise to a local sensitivity and "
                         "gives no differential-privacy guarantee; discover releases only DP graphs")
    bar = _progress(progress, 3 if out is not None else 2)
    try:
        calibration = calibrate(spec, p=info["p"], epsilon=epsilon, delta=delta, max_order=max_order)
        _step(bar, f"{spec.label}: calibrated")
        result = run_algorithm(spec, frame, epsilon=epsilon, delta=delta, alpha=alpha, max_order=max_order,
                               rng=generator, calibration=calibration)
        _step(bar, f"{spec.label}: graph found")
        graph, graph_type = _graph_of(result)
        privacy = privacy_report(spec, getattr(result, "ledger", None), epsilon=epsilon, delta=delta,
                                 calibration=calibration, data_info=info)
        if not privacy["within_budget"]:
            raise RuntimeError(
                f"algorithm {spec.name!r} spent epsilon={privacy['achieved']['epsilon']:.6g}, "
                f"delta={privacy['achieved']['delta']:.3g}, above the requested ({epsilon}, {delta}); nothing written"
            )
        privacy["auto_selected"] = auto
        privacy["alpha"] = alpha if spec.uses_alpha else None
        privacy["max_order"] = calibration.kwargs.get("max_order", max_order)
        privacy["data"] = {k: v for k, v in info.items() if k != "levels"}
        files: dict[str, Path] = {}
        if out is not None:
            title = f"{spec.label}, ε = {epsilon:g}" + (f", δ = {delta:g}" if spec.delta_arg else "")
            files = write_outputs(out, graph, privacy, graph_type=graph_type, algorithm=spec.name, title=title,
                                  overwrite=overwrite)
            _step(bar, "written")
    finally:
        if bar is not None:
            bar.close()
    return DiscoveryResult(spec.name, spec.label, graph, graph_type, result, privacy, info, auto, files)


def _step(bar: Any, text: str) -> None:
    if bar is not None:
        bar.set_postfix_str(text)
        bar.update(1)

"""Calibration: from a privacy map and a target ε to the largest parameter that meets it (one generic search).

A per-round algorithm's parameter x (ε per test, ε per removed edge, or the
inverse of a noise multiplier) maps to the ε of its worst case by an
increasing function ``total(x)`` — its privacy map on a fixed number of
rounds, composed by an accountant (``math.inf`` where x breaks the target δ).
:func:`largest_parameter` finds the largest x with ``total(x) ≤ epsilon`` up to
a relative tolerance, in the spirit of ``dp_accounting``'s
``calibrate_dp_mechanism``: bracketing by factors of 4, bisection while the
upper end is infeasible outright, then regula falsi (Illinois) on
log total(exp(·)), which is smooth and increasing (bisection while total(lo) is
exactly 0, where the secant has no slope to follow; and the search stops once
the bracket is narrower than 1e-3·rtol, at a jump of total). The returned x is always
feasible. :func:`dpcd.registry.calibrate` and the audit's claims use it.

>>> round(largest_parameter(lambda x: 10 * x, epsilon=1.0), 4)   # ten rounds of x compose to 10x
0.1
>>> largest_parameter(lambda x: 10 * x, epsilon=1.0, rtol=1e-9) <= 0.1
True
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..validation import check_epsilon, check_positive

__all__ = ["CalibrationError", "largest_parameter", "stored_parameter", "cache_folder"]

CACHE_ENV = "DPCD_CACHE_DIR"
"""Environment variable naming the folder of the calibration store; set it empty to keep nothing on disk."""


class CalibrationError(ValueError):
    """No parameter meets the target (even a vanishing one composes above it).

    >>> try:
    ...     largest_parameter(lambda x: 2.0, epsilon=1.0)   # a fixed cost above the target
    ... except CalibrationError as error:
    ...     print(error, isinstance(error, ValueError))
    no parameter above 1e-12 composes within epsilon=1.0 True
    """


def largest_parameter(total: Callable[[float], float], *, epsilon: float, rtol: float = 0.005,
                      start: float | None = None, smallest: float = 1e-12, largest: float = 1e6) -> float:
    """The largest x in [``smallest``, ``largest``] with ``total(x) ≤ epsilon`` (to ``rtol`` in ε).

    ``total`` must increase with x (``math.inf`` for an infeasible x). The
    search starts at ``start`` (default ``epsilon``); the result is one of
    the points where ``total`` was evaluated and found within the target.
    Raises :class:`CalibrationError` when even ``smallest`` exceeds it. A NaN
    from ``total`` counts as infeasible, and log(total/ε) is formed as a
    difference of logs, so no target ε (up to the largest double) overflows.

    >>> x = largest_parameter(lambda x: 10 * x, epsilon=1.0)   # ten rounds of x compose to 10x
    >>> round(x, 4), 10 * x <= 1.0
    (0.1, True)
    >>> round(largest_parameter(lambda x: 10 * x if x < 0.05 else math.inf, epsilon=1.0), 3)   # δ broken above 0.05
    0.05
    >>> largest_parameter(lambda x: 2.0, epsilon=1.0)
    Traceback (most recent call last):
    ...
    dpcd.privacy.calibration.CalibrationError: no parameter above 1e-12 composes within epsilon=1.0
    """
    epsilon = check_epsilon(epsilon)
    rtol = check_positive(rtol, "rtol")
    given = total

    def total(x: float) -> float:  # NaN (a broken evaluation) counts as infeasible, never as within the target
        value = given(x)
        return math.inf if math.isnan(value) else value

    log_target = math.log(epsilon)

    def gap(value: float) -> float:  # log(value / ε) as a difference of logs (no overflow), floored at -690
        if not math.isfinite(value):
            return math.inf
        return max(math.log(value) - log_target, -690.0) if value > 0 else -690.0

    lo = epsilon if start is None else check_positive(start, "start")
    f_lo = total(lo)
    while f_lo > epsilon:
        lo /= 4.0
        f_lo = total(lo)
        if lo < smallest:
            raise CalibrationError(f"no parameter above {smallest:g} composes within epsilon={epsilon}")
    hi = lo * 4.0
    f_hi = total(hi)
    while f_hi <= epsilon:
        lo, f_lo = hi, f_hi
        hi *= 4.0
        f_hi = total(hi)
        if hi > largest:
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
    g_lo, g_hi = gap(f_lo), gap(f_hi)
    side = 0
    for _ in range(60):
        if g_lo > math.log1p(-rtol):
            break
        x_lo, x_hi = math.log(lo), math.log(hi)
        if x_hi - x_lo < 1e-3 * rtol:  # the bracket is a jump of total (e.g. an accountant switching): stop
            break
        if g_lo <= -690.0:  # total(lo) = 0 (e.g. a (0, δ) worst case): no slope to follow, bisect
            x = 0.5 * (x_lo + x_hi)
        else:
            x = x_lo - g_lo * (x_hi - x_lo) / (g_hi - g_lo)
        x = min(max(x, x_lo + 1e-9), x_hi - 1e-9)
        value = total(math.exp(x))
        g = gap(value)
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


def cache_folder() -> Path | None:
    """Where :func:`stored_parameter` keeps calibrations: ``$DPCD_CACHE_DIR``, else ``$XDG_CACHE_HOME/dpcd``
    (default ``~/.cache/dpcd``); None when ``DPCD_CACHE_DIR`` is set empty."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None:
        return Path(chosen) / "calibration" if chosen.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dpcd" / "calibration"


def stored_parameter(key: Mapping[str, Any], compute: Callable[[], float]) -> float:
    """``compute()``, remembered on disk under ``key`` (public inputs and the code's version) across processes.

    A calibration is a function of public inputs only (the algorithm, p, n
    where public, the order cap, ε, δ, the tolerance) and of the code that
    defines its worst case, so it may be stored and shared: the file holds
    no data of anyone. ``key`` must contain everything the result depends on,
    including a fingerprint of that code; an unreadable or missing entry is
    recomputed, and a store that cannot be written is skipped.

    >>> import tempfile
    >>> os.environ[CACHE_ENV] = tempfile.mkdtemp()
    >>> stored_parameter({"what": "example"}, lambda: 0.25), stored_parameter({"what": "example"}, lambda: 1.0)
    (0.25, 0.25)
    >>> del os.environ[CACHE_ENV]
    """
    folder = cache_folder()
    if folder is None:
        return compute()
    digest = hashlib.sha256(json.dumps(dict(key), sort_keys=True, default=str).encode()).hexdigest()
    path = folder / f"{digest}.json"
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored.get("key") == json.loads(json.dumps(dict(key), sort_keys=True, default=str)):
            return float(stored["value"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    value = compute()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps({"key": dict(key), "value": value}, sort_keys=True, default=str),
                           encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        pass
    return value

"""Deprecated alias of :mod:`dpcd.forecast`, removed in the next release.

``dpcd.plan.plan(...)`` is :func:`dpcd.forecast.forecast` under its former
name ("plan" also named each algorithm's worst case and the calibration's
result, so the forecast took its own name).
"""

from __future__ import annotations

import warnings
from typing import Any

from .forecast import Forecast, forecast

__all__ = ["plan"]


def plan(*args: Any, **kwargs: Any) -> Forecast:
    """Deprecated: call :func:`dpcd.forecast.forecast` (same arguments)."""
    warnings.warn("dpcd.plan.plan is deprecated and will be removed in the next release; use dpcd.forecast.forecast",
                  DeprecationWarning, stacklevel=2)
    return forecast(*args, **kwargs)

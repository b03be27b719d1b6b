"""Public statements a data holder makes about the data, never read from it.

:data:`DEPENDENCE`
    How the numeric columns depend on each other (``dependence=`` of
    :func:`dpcd.discover`, :func:`dpcd.forecast.forecast` and
    :func:`dpcd.discovery.gcm_pc.gcm_pc`): the model of the forecasts' numeric
    synthetic data, and where GCM-PC's ``"auto"`` basis switches
    (:data:`dpcd.discovery.gcm_pc.NOISE_SWITCHES`). Not the neighbouring
    relation. Like every public input it must not be chosen by looking at the
    data (or that look must be charged), and ``privacy.json`` lists it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEPENDENCE", "check_dependence"]

DEPENDENCE: dict[str, str] = {
    "linear": "linear-Gaussian",
    "nonlinear": "PCD's nonlinear additive-noise model (sin, cos, tanh, square, exp)",
}
"""The statements of how the numeric columns depend on each other, each with the model of synthetic data a forecast
draws for it."""


def check_dependence(dependence: Any) -> str:
    """``dependence`` checked against :data:`DEPENDENCE` (a clear error naming the argument).

    >>> check_dependence("nonlinear")
    'nonlinear'
    """
    if dependence not in DEPENDENCE:
        raise ValueError(f"dependence must be one of {sorted(DEPENDENCE)}, got {dependence!r}")
    return dependence

"""Fixtures shared by the test modules (keep this file small)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def project_root() -> Path:
    """The repository's root folder."""
    return PROJECT_ROOT


@pytest.fixture
def notebooks_dir() -> Path:
    """The repository's ``notebooks/`` folder."""
    return PROJECT_ROOT / "notebooks"


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh generator with a fixed seed."""
    return np.random.default_rng(20240607)


@pytest.fixture(autouse=True, scope="session")
def calibration_store(tmp_path_factory) -> Path:
    """The calibration store of the test session: a fresh folder, never the user's ``~/.cache/dpcd``."""
    import os

    folder = tmp_path_factory.mktemp("dpcd-cache")
    previous = os.environ.get("DPCD_CACHE_DIR")
    os.environ["DPCD_CACHE_DIR"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("DPCD_CACHE_DIR", None)
    else:
        os.environ["DPCD_CACHE_DIR"] = previous

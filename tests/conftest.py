"""Shared fixtures: the packaged calibration and the reference data beside the checkout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """``../shared`` beside the checkout (override with AI_ECONOMIST_SHARED_DIR)."""
    return Path(os.environ.get("AI_ECONOMIST_SHARED_DIR", REPO_ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    path = shared_dir() / "data" / "covid19"
    if not (path / "fitted_params.json").is_file():
        pytest.skip(f"reference data not found at {path} (set AI_ECONOMIST_SHARED_DIR)")
    return path


@pytest.fixture(scope="session")
def golden_path() -> Path:
    path = shared_dir() / "golden" / "covid19_tutorial_real_world_policies.npz"
    if not path.is_file():
        pytest.skip(f"golden trajectory not found at {path} (set AI_ECONOMIST_SHARED_DIR)")
    return path

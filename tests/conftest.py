"""Shared fixtures: the golden trajectory (a fixture in this repository), the optional
source data of the calibration beside the checkout, and nvcc for the compile tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED_DIR_ENV = "AI_ECONOMIST_SHARED_DIR"


def shared_dir() -> Path:
    """``../shared`` beside the checkout (override with AI_ECONOMIST_SHARED_DIR).

    Only the tests that rebuild the calibration from its source data use it; they skip
    with the reason when the data is absent, so the suite runs from a bare clone.
    """
    return Path(os.environ.get(SHARED_DIR_ENV, REPO_ROOT.parent / "shared"))


def source_data_dir() -> Path | None:
    """The calibration's source data (original layout), or None when it is absent."""
    path = shared_dir() / "data" / "covid19"
    return path if (path / "fitted_params.json").is_file() else None


@pytest.fixture
def shared_data_dir() -> Path:
    path = source_data_dir()
    if path is None:
        pytest.skip(
            f"the calibration's source data is not at {shared_dir() / 'data' / 'covid19'} "
            f"(set {SHARED_DIR_ENV} to a folder holding data/covid19/); only the rebuild "
            "checks need it"
        )
    return path


@pytest.fixture(scope="session")
def golden_path() -> Path:
    """The original release's tutorial trajectory (see tests/fixtures/golden/README.md)."""
    return FIXTURES / "golden" / "covid19_tutorial_real_world_policies.npz"


@pytest.fixture(scope="session")
def nvcc() -> Path:
    """The nvcc executable (``find_nvcc``); skips the test, with the reason, without one."""
    from ai_economist.warp_drive.errors import find_nvcc

    try:
        return find_nvcc()
    except RuntimeError as exc:
        pytest.skip(str(exc))


@pytest.fixture
def full_float32_matmuls():
    """Float32 matmuls without TF32 for one test: a Trainer built earlier in the process
    (another test on the same xdist worker) turns TF32 on for the process (``trainer.tf32``),
    and TF32 products differ from float32 ones by more than a 1e-4 comparison allows."""
    import torch

    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved

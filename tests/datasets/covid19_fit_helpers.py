"""Shared helpers of the re-calibration tests: the synthetic fixture and its fit settings."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "covid19_fit"
# the fixture's windows: 140 training days, 30 validation days, the alpha run from day 60
FIXTURE_DATES = {"last_train_date": "2020-05-19", "last_val_date": "2020-06-18"}
FIXTURE_START = "2020-03-01"


def fixture_module():
    """``tests/fixtures/covid19_fit/make_fixture.py`` as a module."""
    spec = importlib.util.spec_from_file_location("make_fixture", FIXTURE / "make_fixture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fixture_settings(**overrides):
    """Fit settings for the fixture (a short filter, few unemployment steps)."""
    from ai_economist.datasets.covid19.fit import FitSettings

    values = dict(FIXTURE_DATES, filter_len=120, unemployment_steps=60, unemployment_lr=0.05)
    values.update(overrides)
    settings = FitSettings(**values)
    settings.env["start_date"] = FIXTURE_START
    return settings


def copy_fixture(target: Path) -> Path:
    """A writable copy of the fixture's two data files."""
    target.mkdir(parents=True, exist_ok=True)
    for name in ("real_world_data.npz", "model_constants.json"):
        shutil.copyfile(FIXTURE / name, target / name)
    return target


def run_slow(request) -> None:
    """Skip a ``slow`` test unless it was selected with ``-m slow``."""
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("full-fidelity fit (minutes on 2 cores): run with `pytest -m slow`")

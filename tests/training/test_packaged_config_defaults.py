"""Every packaged run config writes under ./runs/ unless told otherwise (issue 25)."""

from pathlib import Path

import pytest
import yaml

from ai_economist.training.config import load_run_config
from ai_economist.warp_drive.training.schema import SCHEMA

PACKAGE = Path(__file__).resolve().parents[2] / "ai_economist"
RUN_CONFIGS = sorted(
    p for p in PACKAGE.rglob("*.yaml") if "saving" in (yaml.safe_load(p.read_text()) or {})
)


def test_run_configs_are_found():
    names = {p.stem for p in RUN_CONFIGS}
    assert {"covid_and_economy_environment", "tag_gridworld", "tag_continuous", "toy"} <= names


@pytest.mark.parametrize("path", RUN_CONFIGS, ids=lambda p: p.stem)
def test_packaged_run_config_writes_under_runs(path):
    basedir = Path(load_run_config(path)["saving"]["basedir"])
    assert not basedir.is_absolute() and basedir.parts[0] == "runs", basedir


def test_the_schema_default_is_runs_too():
    assert Path(SCHEMA["saving"]["basedir"].default) == Path("runs")

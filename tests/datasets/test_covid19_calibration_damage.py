"""Damaged calibration files and physically impossible values: every failure is a
``CalibrationError`` naming the file (or date), the key and what was expected."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.datasets.covid19 import (
    CalibrationError,
    default_calibration_path,
    load_calibration,
)
from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG, env_config

REPO_ROOT = Path(__file__).resolve().parents[2]


def packaged_copy(tmp_path, change=None):
    """A copy of the packaged calibration; ``change(arrays, meta)`` edits it first."""
    with np.load(default_calibration_path()) as npz:
        arrays = {k: npz[k] for k in npz.files}
    meta = json.loads(str(arrays.pop("__metadata__")))
    if change is not None:
        change(arrays, meta)
    path = tmp_path / "covid19_calibration.npz"
    metadata = arrays.pop("__metadata__", json.dumps(meta))
    np.savez_compressed(path, __metadata__=np.array(metadata), **arrays)
    return path


def test_an_unchanged_copy_loads(tmp_path):
    cal = load_calibration(packaged_copy(tmp_path))
    assert cal.fitted_params["BETA_DELAY"] == 29


@pytest.mark.parametrize(
    "damage, match",
    [
        (lambda data: data[: len(data) // 2], "not a readable .npz archive"),
        (lambda data: data[:100], "not a readable .npz archive"),
        (lambda data: b"", r"empty \(0 bytes\)"),
        (
            lambda data: data[:4000] + bytes(range(200)) + data[4200:],
            "not a readable .npz archive",
        ),
        (lambda data: b"PK\x03\x04" + b"\x00" * 64, "not a readable .npz archive"),
    ],
    ids=["truncated-half", "truncated-header", "empty", "200-bytes-overwritten", "zip-garbage"],
)
def test_a_damaged_file_names_the_file(tmp_path, damage, match):
    path = packaged_copy(tmp_path)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(CalibrationError, match=match) as info:
        load_calibration(path)
    assert str(path) in str(info.value)


def _bad_json(arrays, meta):
    arrays["__metadata__"] = '{"model_constants": {'


def _json_list(arrays, meta):
    arrays["__metadata__"] = "[1, 2]"


@pytest.mark.parametrize(
    "change, match",
    [
        (_bad_json, "key '__metadata__' is not valid JSON"),
        (_json_list, "key '__metadata__' must be a JSON object, got list"),
        (lambda a, m: m.pop("fitted_params"), "key '__metadata__' has no entry 'fitted_params'"),
        (lambda a, m: m["model_constants"].pop("SIR_GAMMA"), "missing key 'SIR_GAMMA'"),
        (lambda a, m: a.pop("model_constants/US_STATE_POPULATION"), "'US_STATE_POPULATION'"),
        (lambda a, m: a.pop("real_world_data/infected"), "missing array 'infected'"),
    ],
)
def test_bad_metadata_names_the_file_and_key(tmp_path, change, match):
    path = packaged_copy(tmp_path, change)
    with pytest.raises(CalibrationError, match=match) as info:
        load_calibration(path)
    assert str(path) in str(info.value)


def _set(part, key, value, index=None):
    def change(arrays, meta):
        if f"{part}/{key}" in arrays:
            arr = arrays[f"{part}/{key}"].astype(np.float64)
            arr[index if index is not None else ...] = value
            arrays[f"{part}/{key}"] = arr
        else:
            meta[part][key] = value

    return change


@pytest.mark.parametrize(
    "change, match",
    [
        (
            _set("model_constants", "US_STATE_POPULATION", 0, 3),
            r"'US_STATE_POPULATION' must be in \(0, inf\) \(a number of people, > 0\), got 0 "
            r"at index 3 \(Arkansas\)",
        ),
        (_set("model_constants", "US_POPULATION", -5), r"'US_POPULATION' must be in \(0, inf\)"),
        (
            _set("model_constants", "SIR_MORTALITY", 1.5),
            r"'SIR_MORTALITY' must be in \[0, 1\] \(a probability\), got 1.5",
        ),
        (_set("model_constants", "SIR_GAMMA", -0.1), r"'SIR_GAMMA' must be in \(0, 1\]"),
        (
            _set("fitted_params", "BETA_INTERCEPTS", -0.2, 0),
            r"'BETA_INTERCEPTS' must be in \[0, inf\) \(an infection rate\), got -0.2 at index 0 "
            r"\(Alabama\)",
        ),
        (
            _set("fitted_params", "INFERRED_WEIGHTAGE_ON_PLANNER_HEALTH_INDEX", 1.2),
            r"'INFERRED_WEIGHTAGE_ON_PLANNER_HEALTH_INDEX' must be in \[0, 1\]",
        ),
        (_set("fitted_params", "CONV_LAMBDAS", 0.0, 2), r"'CONV_LAMBDAS' must be in \(0, inf\)"),
        (
            _set("real_world_data", "vaccinated", -1.0, (300, 4)),
            r"array 'vaccinated' must be in \[0, inf\) \(people\), got -1 on day 300 \(column 4\)",
        ),
    ],
)
def test_physically_impossible_values_name_field_and_range(tmp_path, change, match):
    path = packaged_copy(tmp_path, change)
    with pytest.raises(CalibrationError, match=match) as info:
        load_calibration(path)
    assert str(path) in str(info.value)


def make_env(**overrides):
    return foundation.make_env_instance(
        "CovidAndEconomySimulation",
        **env_config(TRAINING_ENV_CONFIG, episode_length=5, **overrides),
    )


def test_a_start_date_without_data_names_the_field_and_the_complete_days():
    with pytest.raises(
        CalibrationError,
        match=r"real-world 'susceptible' on start_date 2020-02-01 must be in \(-inf, inf\) "
        r".*got nan .*\(51 of 51 states\); the data is complete on 435 days between "
        r"2020-02-21 and 2021-04-30",
    ):
        make_env(start_date="2020-02-01")


def test_nan_infected_on_the_start_date_is_rejected(tmp_path):
    row = 81  # 2020-03-22, the default start date
    path = packaged_copy(tmp_path, _set("real_world_data", "infected", np.nan, (row, 8)))
    load_calibration(path)  # gaps are allowed in the data, only not where the episode starts
    with pytest.raises(
        CalibrationError,
        match=r"'infected' on start_date 2020-03-22 .*got nan for state index 8 "
        r"\(District of Columbia\) \(1 of 51 states\)",
    ):
        make_env(path_to_data_and_fitted_params=str(path))
    make_env(path_to_data_and_fitted_params=str(path), start_date="2020-03-23")


@pytest.mark.parametrize("content", [b"\xff\xfe\x00binary", b"{'single': 'quotes'}", b"[1, 2]"])
def test_a_broken_json_file_names_the_file(tmp_path, content):
    directory = tmp_path / "layout"
    directory.mkdir()
    cal = load_calibration("")
    (directory / "model_constants.json").write_text(
        json.dumps(cal.model_constants, default=lambda v: v.tolist())
    )
    (directory / "fitted_params.json").write_bytes(content)
    np.savez(directory / "real_world_data.npz", **cal.real_world_data)
    with pytest.raises(CalibrationError, match="fitted_params.json"):
        load_calibration(directory)


def test_rebuild_checks_skip_with_a_reason_without_the_source_data(tmp_path):
    """From a clone without ../shared the tests that rebuild the calibration skip, saying why."""
    env = dict(os.environ, AI_ECONOMIST_SHARED_DIR=str(tmp_path / "nothing-here"))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
         "tests/datasets/test_covid19_calibration.py",
         "-k", "original_layout_equals_packaged or build_is_deterministic"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 skipped" in result.stdout
    assert "calibration's source data is not at" in result.stdout
    assert "nothing-here" in result.stdout

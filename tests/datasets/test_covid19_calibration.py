"""Calibration loading: both layouts, validation errors naming file and key, build determinism."""

import json

import numpy as np
import pytest

from ai_economist.datasets.covid19 import (
    CalibrationError,
    default_calibration_path,
    load_calibration,
)
from ai_economist.datasets.covid19.build import build


def test_packaged_calibration_loads_with_provenance():
    cal = load_calibration("")
    assert cal.fitted_params["BETA_DELAY"] == 29
    assert cal.real_world_data["policy"].shape == (518, 51)
    assert cal.state_names[0] == "Alabama" and cal.state_names[8] == "District of Columbia"
    assert {s["licence"] for s in cal.provenance["sources"]} >= {"CC BY 4.0"}


def test_original_layout_equals_packaged(shared_data_dir):
    original, packaged = (
        load_calibration(shared_data_dir),
        load_calibration(default_calibration_path()),
    )
    for key in ("BETA_SLOPES", "UNEMPLOYMENT_BIAS", "GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS"):
        np.testing.assert_array_equal(original.fitted_params[key], packaged.fitted_params[key])
    for key in ("policy", "susceptible", "unemployed"):
        np.testing.assert_array_equal(original.real_world_data[key], packaged.real_world_data[key])


def test_build_is_deterministic_and_matches_shipped(shared_data_dir, tmp_path):
    out = build(shared_data_dir, tmp_path / "cal.npz")
    assert out.read_bytes() == default_calibration_path().read_bytes()


def _jsonable(value):
    return value.tolist() if hasattr(value, "tolist") else value


@pytest.fixture
def copy_dir(tmp_path):
    """The packaged calibration written out in the original three-file layout (no data from
    outside the repository needed)."""
    cal = load_calibration("")
    target = tmp_path / "data"
    target.mkdir()
    for name, values in (
        ("model_constants.json", cal.model_constants),
        ("fitted_params.json", cal.fitted_params),
    ):
        (target / name).write_text(json.dumps(values, default=_jsonable))
    np.savez(target / "real_world_data.npz", **cal.real_world_data)
    assert load_calibration(target).fitted_params["BETA_DELAY"] == 29
    return target


def test_missing_file_is_named(copy_dir):
    (copy_dir / "fitted_params.json").unlink()
    with pytest.raises(CalibrationError, match="fitted_params.json"):
        load_calibration(copy_dir)


def test_missing_key_is_named(copy_dir):
    path = copy_dir / "fitted_params.json"
    data = json.loads(path.read_text())
    del data["BETA_SLOPES"]
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match=r"fitted_params.json: missing key 'BETA_SLOPES'"):
        load_calibration(copy_dir)


def test_wrong_shape_and_nan_are_named(copy_dir):
    path = copy_dir / "fitted_params.json"
    data = json.loads(path.read_text())
    data["UNEMPLOYMENT_BIAS"] = data["UNEMPLOYMENT_BIAS"][:50]
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match=r"'UNEMPLOYMENT_BIAS' must have shape \(51,\)"):
        load_calibration(copy_dir)
    data["UNEMPLOYMENT_BIAS"] = [float("nan")] * 51
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match="'UNEMPLOYMENT_BIAS' contains NaN"):
        load_calibration(copy_dir)


def test_bad_real_world_array_is_named(copy_dir):
    path = copy_dir / "real_world_data.npz"
    with np.load(path) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["policy"] = arrays["policy"][:, :50]
    np.savez(path, **arrays)
    with pytest.raises(
        CalibrationError, match=r"real_world_data.npz: array 'policy' must have shape"
    ):
        load_calibration(copy_dir)


def test_not_a_calibration_path(tmp_path):
    with pytest.raises(CalibrationError, match="missing calibration file"):
        load_calibration(tmp_path)
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(CalibrationError, match="neither a directory"):
        load_calibration(tmp_path / "x.txt")

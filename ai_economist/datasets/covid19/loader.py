"""Load and validate the COVID-19 calibration (real-world data plus fitted model parameters).

Two layouts are accepted:

* the original AI Economist layout: a directory holding ``model_constants.json``,
  ``fitted_params.json`` and ``real_world_data.npz`` (env argument
  ``path_to_data_and_fitted_params``);
* the packaged single-file calibration ``covid19_calibration.npz`` that
  ``python -m ai_economist.datasets.covid19.build`` produces (shipped in
  ``ai_economist/datasets/covid19/data/``), or a directory containing it.

Every problem is reported as a :class:`CalibrationError` naming the file and the key.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.datasets.covid19.physical import check_physical_ranges

NUM_US_STATES = 51
PACKAGED_FILE_NAME = "covid19_calibration.npz"
ORIGINAL_FILES = ("model_constants.json", "fitted_params.json", "real_world_data.npz")

# key -> (kind, shape or None). kind: "int", "float", "str", "array", "dict".
MODEL_CONSTANT_KEYS: dict[str, tuple[str, tuple | None]] = {
    "DATE_FORMAT": ("str", None),
    "NUM_STRINGENCY_LEVELS": ("int", None),
    "SIR_MORTALITY": ("float", None),
    "SIR_GAMMA": ("float", None),
    "US_STATE_IDX_TO_STATE_NAME": ("dict", (NUM_US_STATES,)),
    "US_STATE_POPULATION": ("array", (NUM_US_STATES,)),
    "US_POPULATION": ("int", None),
    "GDP_PER_CAPITA": ("float", None),
}
FITTED_PARAM_KEYS: dict[str, tuple[str, tuple | None]] = {
    "POLICY_START_DATE": ("str", None),
    "BETA_DELAY": ("int", None),
    "BETA_SLOPES": ("array", (NUM_US_STATES,)),
    "BETA_INTERCEPTS": ("array", (NUM_US_STATES,)),
    "FILTER_LEN": ("int", None),
    "CONV_LAMBDAS": ("array", (None,)),
    "UNEMPLOYMENT_BIAS": ("array", (NUM_US_STATES,)),
    "GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS": ("array", (None,)),
    "VALUE_OF_LIFE": ("float", None),
    "INFERRED_WEIGHTAGE_ON_AGENT_HEALTH_INDEX": ("array", (NUM_US_STATES,)),
    "INFERRED_WEIGHTAGE_ON_PLANNER_HEALTH_INDEX": ("float", None),
    "MAX_MARGINAL_AGENT_ECONOMIC_INDEX": ("array", (NUM_US_STATES,)),
    "MIN_MARGINAL_AGENT_ECONOMIC_INDEX": ("array", (NUM_US_STATES,)),
    "MAX_MARGINAL_AGENT_HEALTH_INDEX": ("array", (NUM_US_STATES,)),
    "MIN_MARGINAL_AGENT_HEALTH_INDEX": ("array", (NUM_US_STATES,)),
    "MAX_MARGINAL_PLANNER_ECONOMIC_INDEX": ("float", None),
    "MIN_MARGINAL_PLANNER_ECONOMIC_INDEX": ("float", None),
    "MAX_MARGINAL_PLANNER_HEALTH_INDEX": ("float", None),
    "MIN_MARGINAL_PLANNER_HEALTH_INDEX": ("float", None),
}
# Real-world arrays the simulator reads; ``None`` in a shape means "any length".
REAL_WORLD_KEYS: dict[str, tuple] = {
    "policy": (None, NUM_US_STATES),
    "subsidy": (None, 1),
    "susceptible": (None, NUM_US_STATES),
    "infected": (None, NUM_US_STATES),
    "recovered": (None, NUM_US_STATES),
    "deaths": (None, NUM_US_STATES),
    "vaccinated": (None, NUM_US_STATES),
    "unemployed": (None, NUM_US_STATES),
}
# Arrays that must be finite everywhere (NaN rows are allowed elsewhere: the data have gaps).
MUST_BE_FINITE = ("policy", "subsidy", "vaccinated")


class CalibrationError(ValueError):
    """A calibration file is missing, malformed, or holds a value the simulator cannot use."""


@dataclass
class CovidCalibration:
    """Everything the COVID-19 scenario reads from disk.

    Attributes:
        model_constants: ``model_constants.json`` content (validated keys).
        fitted_params: ``fitted_params.json`` content (validated keys).
        real_world_data: the daily real-world arrays (rows = days from ``POLICY_START_DATE``).
        source: where it was loaded from (for error messages and reports).
        provenance: build metadata of a packaged calibration (sources, licences, checksums).
    """

    model_constants: dict[str, Any]
    fitted_params: dict[str, Any]
    real_world_data: dict[str, np.ndarray]
    source: str = ""
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def state_names(self) -> list[str]:
        names = self.model_constants["US_STATE_IDX_TO_STATE_NAME"]
        return [names[str(i)] for i in range(len(names))]


def default_calibration_path() -> Path:
    """The calibration shipped inside the package."""
    return Path(__file__).resolve().parent / "data" / PACKAGED_FILE_NAME


def _check_value(where: str, key: str, value: Any, kind: str, shape: tuple | None) -> Any:
    if kind == "str":
        if not isinstance(value, str):
            raise CalibrationError(f"{where}: key '{key}' must be a string, got {value!r}")
        return value
    if kind == "dict":
        if not isinstance(value, dict) or (shape and len(value) != shape[0]):
            raise CalibrationError(
                f"{where}: key '{key}' must be a mapping with {shape[0]} entries, got {type(value).__name__}"
                f" of length {len(value) if hasattr(value, '__len__') else 'n/a'}"
            )
        return {str(k): v for k, v in value.items()}
    if kind in ("int", "float"):
        arr = np.asarray(value)
        if arr.ndim != 0 or not np.issubdtype(arr.dtype, np.number) or not np.isfinite(arr):
            raise CalibrationError(f"{where}: key '{key}' must be a finite number, got {value!r}")
        return int(arr) if kind == "int" else float(arr)
    arr = (
        np.asarray(value, dtype=np.float64).reshape(-1)
        if shape == (None,)
        else np.asarray(value, dtype=np.float64)
    )
    if shape and shape != (None,) and arr.shape != shape:
        raise CalibrationError(f"{where}: key '{key}' must have shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise CalibrationError(f"{where}: key '{key}' contains NaN or infinite values")
    return arr


def _validate_dict(where: str, raw: dict, schema: dict) -> dict:
    if not isinstance(raw, dict):
        raise CalibrationError(f"{where}: expected a JSON object at the top level")
    out = dict(raw)
    for key, (kind, shape) in schema.items():
        if key not in raw:
            raise CalibrationError(f"{where}: missing key '{key}'")
        out[key] = _check_value(where, key, raw[key], kind, shape)
    return out


def _validate_real_world(where: str, data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    out = {}
    for key, shape in REAL_WORLD_KEYS.items():
        if key not in data:
            raise CalibrationError(f"{where}: missing array '{key}'")
        arr = np.asarray(data[key])
        if arr.ndim != 2 or arr.shape[1] != shape[1]:
            raise CalibrationError(
                f"{where}: array '{key}' must have shape (num_days, {shape[1]}), got {arr.shape}"
            )
        if key in MUST_BE_FINITE and not np.all(np.isfinite(arr)):
            raise CalibrationError(f"{where}: array '{key}' contains NaN or infinite values")
        out[key] = arr
    days = {k: v.shape[0] for k, v in out.items()}
    if len(set(days.values())) != 1:
        raise CalibrationError(f"{where}: arrays have different numbers of days: {days}")
    for key in data:
        out.setdefault(key, np.asarray(data[key]))
    return out


def _check_consistency(cal: CovidCalibration) -> None:
    fp, where = cal.fitted_params, cal.source
    n_filters = len(fp["CONV_LAMBDAS"])
    if fp["GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS"].size != NUM_US_STATES * n_filters:
        raise CalibrationError(
            f"{where}: key 'GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS' must hold {NUM_US_STATES}x{n_filters} values "
            f"(states x CONV_LAMBDAS), got {fp['GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS'].size}"
        )
    if fp["BETA_DELAY"] < 1:
        raise CalibrationError(f"{where}: key 'BETA_DELAY' must be >= 1, got {fp['BETA_DELAY']}")
    policy = cal.real_world_data["policy"]
    n_levels = cal.model_constants["NUM_STRINGENCY_LEVELS"]
    if policy.min() < 1 or policy.max() > n_levels:
        raise CalibrationError(
            f"{where}: array 'policy' must hold stringency levels in 1..{n_levels}, "
            f"got {policy.min()}..{policy.max()}"
        )


# What a damaged .npz raises somewhere inside numpy/zipfile/zlib (truncated, emptied or
# overwritten bytes): each becomes a CalibrationError naming the file.
_NPZ_READ_ERRORS = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error)


def _load_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CalibrationError(f"calibration file not found: {path}") from None
    except json.JSONDecodeError as err:
        raise CalibrationError(f"{path}: not valid JSON ({err})") from None
    except UnicodeDecodeError as err:
        raise CalibrationError(f"{path}: not a UTF-8 text (JSON) file ({err})") from None
    except OSError as err:
        raise CalibrationError(f"{path}: cannot be read ({err})") from None


def _load_npz(path: Path) -> dict[str, np.ndarray]:
    if not path.is_file():
        raise CalibrationError(f"calibration file not found: {path}")
    if path.stat().st_size == 0:
        raise CalibrationError(f"{path}: the file is empty (0 bytes); expected a .npz archive")
    try:
        with np.load(path, allow_pickle=False) as npz:
            if not hasattr(npz, "files"):
                raise CalibrationError(f"{path}: a single .npy array, expected a .npz archive")
            return {k: npz[k] for k in npz.files}
    except _NPZ_READ_ERRORS as err:
        raise CalibrationError(
            f"{path}: not a readable .npz archive, truncated or corrupted? "
            f"({type(err).__name__}: {err})"
        ) from None


def _load_original_layout(directory: Path) -> CovidCalibration:
    missing = [name for name in ORIGINAL_FILES if not (directory / name).is_file()]
    if missing:
        raise CalibrationError(
            f"{directory}: missing calibration file(s) {missing}; expected {list(ORIGINAL_FILES)} "
            f"or {PACKAGED_FILE_NAME}"
        )
    mc_path, fp_path, rw_path = (directory / name for name in ORIGINAL_FILES)
    cal = CovidCalibration(
        model_constants=_validate_dict(str(mc_path), _load_json(mc_path), MODEL_CONSTANT_KEYS),
        fitted_params=_validate_dict(str(fp_path), _load_json(fp_path), FITTED_PARAM_KEYS),
        real_world_data=_validate_real_world(str(rw_path), _load_npz(rw_path)),
        source=str(directory),
    )
    _check_ranges(cal, str(mc_path), str(fp_path), str(rw_path))
    return cal


def _metadata(path: Path, arrays: dict[str, np.ndarray]) -> dict:
    """The JSON metadata record of a packaged calibration, with its two required keys."""
    if "__metadata__" not in arrays:
        raise CalibrationError(f"{path}: missing key '__metadata__' (not a packaged calibration)")
    try:
        meta = json.loads(str(arrays.pop("__metadata__")))
    except json.JSONDecodeError as err:
        raise CalibrationError(f"{path}: key '__metadata__' is not valid JSON ({err})") from None
    if not isinstance(meta, dict):
        raise CalibrationError(
            f"{path}: key '__metadata__' must be a JSON object, got {type(meta).__name__}"
        )
    for key in ("model_constants", "fitted_params"):
        if key not in meta:
            raise CalibrationError(f"{path}: key '__metadata__' has no entry '{key}'")
        if not isinstance(meta[key], dict):
            raise CalibrationError(
                f"{path}: key '__metadata__/{key}' must be a JSON object, "
                f"got {type(meta[key]).__name__}"
            )
    return meta


def _load_packaged(path: Path) -> CovidCalibration:
    arrays = _load_npz(path)
    meta = _metadata(path, arrays)
    mc = dict(meta["model_constants"])
    fp = dict(meta["fitted_params"])
    for key in list(arrays):
        if key.startswith("model_constants/"):
            mc[key.split("/", 1)[1]] = arrays.pop(key)
        elif key.startswith("fitted_params/"):
            fp[key.split("/", 1)[1]] = arrays.pop(key)
    real = {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith("real_world_data/")}
    cal = CovidCalibration(
        model_constants=_validate_dict(str(path), mc, MODEL_CONSTANT_KEYS),
        fitted_params=_validate_dict(str(path), fp, FITTED_PARAM_KEYS),
        real_world_data=_validate_real_world(str(path), real),
        source=str(path),
        provenance=meta.get("provenance", {}),
    )
    _check_ranges(cal, str(path), str(path), str(path))
    return cal


def _check_ranges(cal: CovidCalibration, mc_where: str, fp_where: str, rw_where: str) -> None:
    names = cal.model_constants["US_STATE_IDX_TO_STATE_NAME"]
    check_physical_ranges(
        CalibrationError,
        {"model_constants": mc_where, "fitted_params": fp_where, "real_world_data": rw_where},
        cal.model_constants,
        cal.fitted_params,
        cal.real_world_data,
        [str(names.get(str(i), "")) for i in range(len(names))],
    )


def load_calibration(path: str | Path | None = None) -> CovidCalibration:
    """Load and validate a calibration.

    Args:
        path: ``""``/``None`` for the packaged default; a directory in the original layout;
            a directory holding ``covid19_calibration.npz``; or that file itself.

    Raises:
        CalibrationError: naming the file and key when something is missing or malformed.
    """
    path = Path(path) if path not in (None, "") else default_calibration_path()
    if path.is_dir():
        packaged = path / PACKAGED_FILE_NAME
        cal = _load_packaged(packaged) if packaged.is_file() else _load_original_layout(path)
    elif path.suffix == ".npz":
        if not path.is_file() and path == default_calibration_path():
            raise CalibrationError(
                f"the packaged calibration {path} is missing; rebuild it with "
                "`python -m ai_economist.datasets.covid19.build --source <data dir>`"
            )
        cal = _load_packaged(path)
    else:
        raise CalibrationError(
            f"calibration path {path} is neither a directory nor a {PACKAGED_FILE_NAME} file"
        )
    _check_consistency(cal)
    return cal

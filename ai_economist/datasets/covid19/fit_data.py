"""The inputs of a re-calibration: the processed daily series in the original layout.

``load_fit_inputs(DIR)`` reads ``DIR/real_world_data.npz`` and ``DIR/model_constants.json``
(the files the original ``gather_real_world_data.ipynb`` writes, and that
``ai_economist.datasets.covid19.gather`` writes from local CSV files) and checks what the fits
need. ``FitWindow`` turns the ``--last_train_date`` / ``--last_val_date`` dates into row
ranges. Every problem is a :class:`FitError` naming the file, the series or the state, and
what was expected.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from ai_economist.datasets.covid19.loader import CalibrationError

DATA_FILE = "real_world_data.npz"
CONSTANTS_FILE = "model_constants.json"
# series a fit reads -> what it holds (for the error messages)
FIT_SERIES = {
    "policy": "stringency levels 1..NUM_STRINGENCY_LEVELS, every day",
    "beta": "the SIR transmission rate inferred from deaths (NaN where unknown)",
    "unemployment": "the unemployment rate in % (NaN where unknown)",
}
# series the simulator needs for the alpha calibration (see loader.REAL_WORLD_KEYS)
SIMULATOR_SERIES = (
    "subsidy",
    "susceptible",
    "infected",
    "recovered",
    "deaths",
    "vaccinated",
    "unemployed",
)
CONSTANT_KEYS = (
    "DATE_FORMAT",
    "NUM_STRINGENCY_LEVELS",
    "SIR_MORTALITY",
    "SIR_GAMMA",
    "US_STATE_IDX_TO_STATE_NAME",
    "US_STATE_POPULATION",
    "US_POPULATION",
    "GDP_PER_CAPITA",
)
DEFAULT_POLICY_START_DATE = "2020-01-01"


class FitError(CalibrationError):
    """The inputs of a fit are unusable, or a fit did not converge."""


@dataclass
class FitInputs:
    """The series and constants a re-calibration reads (rows = days from ``policy_start``)."""

    source: Path
    series: dict[str, np.ndarray]
    model_constants: dict
    policy_start: datetime
    input_sha256: dict[str, str]

    @property
    def state_names(self) -> list[str]:
        names = self.model_constants["US_STATE_IDX_TO_STATE_NAME"]
        return [names[str(i)] for i in range(len(names))]

    @property
    def num_days(self) -> int:
        return int(self.series["policy"].shape[0])

    @property
    def date_format(self) -> str:
        return self.model_constants["DATE_FORMAT"]

    def date(self, row: int) -> str:
        return (self.policy_start + timedelta(days=int(row))).strftime(self.date_format)

    def row(self, date: str, name: str) -> int:
        """Row index of ``date`` (``name`` is the option that gave it, for the message)."""
        try:
            day = datetime.strptime(date, self.date_format)
        except (TypeError, ValueError):
            raise FitError(
                f"{name}={date!r} is not a date in the format {self.date_format!r}"
            ) from None
        row = (day - self.policy_start).days
        if not 0 <= row < self.num_days:
            raise FitError(
                f"{name}={date} is outside the data in {self.source / DATA_FILE}: it covers "
                f"{self.date(0)} .. {self.date(self.num_days - 1)} ({self.num_days} days)"
            )
        return row


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_json(path: Path) -> dict:
    """A JSON object from ``path`` (FitError naming the file if it is not one)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise FitError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(value, dict):
        raise FitError(f"{path}: expected a JSON object, got {type(value).__name__}")
    return value


def _read_constants(path: Path) -> dict:
    if not path.is_file():
        raise FitError(f"{path}: file not found; expected the model constants ({CONSTANT_KEYS})")
    constants = read_json(path)
    missing = [key for key in CONSTANT_KEYS if key not in constants]
    if missing:
        raise FitError(f"{path}: missing key(s) {missing}; expected all of {list(CONSTANT_KEYS)}")
    names = constants["US_STATE_IDX_TO_STATE_NAME"]
    if len(constants["US_STATE_POPULATION"]) != len(names):
        raise FitError(
            f"{path}: 'US_STATE_POPULATION' has {len(constants['US_STATE_POPULATION'])} entries "
            f"but 'US_STATE_IDX_TO_STATE_NAME' names {len(names)} states"
        )
    return constants


def _read_series(path: Path, num_states: int, names: list[str]) -> dict[str, np.ndarray]:
    if not path.is_file():
        raise FitError(f"{path}: file not found; expected the daily series {list(FIT_SERIES)}")
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: np.asarray(npz[k], dtype=np.float64) for k in npz.files}
    except (OSError, ValueError, KeyError) as err:
        raise FitError(f"{path}: not a readable .npz archive ({err})") from None
    needed = list(FIT_SERIES) + list(SIMULATOR_SERIES)
    for key in needed:
        if key not in arrays:
            close = [k for k in arrays if k.lower() == key.lower() or key in k or k in key]
            hint = f" (found {close}: renamed?)" if close else ""
            raise FitError(
                f"{path}: missing series '{key}'{hint}; expected "
                f"{FIT_SERIES.get(key, 'a simulator input')}, shape (num_days, {num_states})"
            )
    num_days = arrays["policy"].shape[0]
    for key in needed:
        width = 1 if key == "subsidy" else num_states
        if arrays[key].ndim != 2 or arrays[key].shape[1] != width:
            raise FitError(
                f"{path}: series '{key}' has shape {arrays[key].shape}; expected "
                f"(num_days, {width}) with the states in the order of {CONSTANTS_FILE}"
            )
        if arrays[key].shape[0] != num_days:
            raise FitError(
                f"{path}: the dates do not line up: series '{key}' has "
                f"{arrays[key].shape[0]} days but 'policy' has {num_days}; every series must "
                "start on the policy start date and have one row per day"
            )
    policy = arrays["policy"]
    if not np.all(np.isfinite(policy)):
        state = names[int(np.flatnonzero(~np.isfinite(policy).all(axis=0))[0])]
        raise FitError(f"{path}: series 'policy' has NaN days for {state}; expected every day")
    return arrays


def load_fit_inputs(source: str | Path, policy_start_date: str | None = None) -> FitInputs:
    """Read and check the series in ``source`` (the original gather notebook's layout).

    Args:
        source: a directory holding ``real_world_data.npz`` and ``model_constants.json``.
        policy_start_date: the date of row 0; by default ``POLICY_START_DATE`` of a
            ``fitted_params.json`` beside the data, else of ``model_constants.json`` (written
            by ``gather_build``), else 2020-01-01 (the original's).
    """
    source = Path(source)
    if not source.is_dir():
        raise FitError(f"--source {source} is not a directory (expected {DATA_FILE} and "
                       f"{CONSTANTS_FILE} in it)")  # fmt: skip
    constants = _read_constants(source / CONSTANTS_FILE)
    names = constants["US_STATE_IDX_TO_STATE_NAME"]
    names = [names[str(i)] for i in range(len(names))]
    series = _read_series(source / DATA_FILE, len(names), names)
    if policy_start_date is None:  # a previous fit beside the data, else gather_build's key
        previous = source / "fitted_params.json"
        policy_start_date = constants.get("POLICY_START_DATE", DEFAULT_POLICY_START_DATE)
        if previous.is_file():
            policy_start_date = read_json(previous).get("POLICY_START_DATE", policy_start_date)
    try:
        start = datetime.strptime(policy_start_date, constants["DATE_FORMAT"])
    except (TypeError, ValueError):
        raise FitError(f"policy start date {policy_start_date!r} is not a date in the format "
                       f"{constants['DATE_FORMAT']!r}") from None  # fmt: skip
    hashes = {name: _sha256(source / name) for name in (DATA_FILE, CONSTANTS_FILE)}
    return FitInputs(source, series, constants, start, hashes)


@dataclass(frozen=True)
class FitWindow:
    """Rows ``0..train_end`` are the training days, ``train_end+1..val_end`` the validation days."""

    train_end: int
    val_end: int

    @classmethod
    def from_dates(cls, inputs: FitInputs, last_train_date: str, last_val_date: str) -> FitWindow:
        train_end = inputs.row(last_train_date, "--last_train_date")
        val_end = inputs.row(last_val_date, "--last_val_date")
        if val_end <= train_end:
            raise FitError(
                f"--last_val_date={last_val_date} must be after --last_train_date="
                f"{last_train_date} (the validation days follow the training days)"
            )
        return cls(train_end, val_end)


def check_series_window(inputs: FitInputs, key: str, rows: slice, what: str) -> np.ndarray:
    """The ``rows`` of series ``key``; a state with no value there, or no value at all, is an error."""
    values = inputs.series[key][rows]
    has_data = np.isfinite(values).any(axis=0)
    first, last = rows.start or 0, (rows.stop or inputs.num_days) - 1
    span = f"{inputs.date(first)} .. {inputs.date(last)}"
    if not has_data.any():
        raise FitError(
            f"{inputs.source / DATA_FILE}: series '{key}' is NaN on every day of {span} for "
            f"every state; the {what} needs values in that window"
        )
    if not has_data.all():
        missing = [inputs.state_names[i] for i in np.flatnonzero(~has_data)]
        raise FitError(
            f"{inputs.source / DATA_FILE}: series '{key}' has no data for state(s) {missing} "
            f"in {span}; the {what} needs at least one value per state"
        )
    return values

"""Physical ranges of the calibration values: a population is positive, a rate is not
negative, a probability is at most 1.  ``loader.load_calibration`` applies
:func:`check_physical_ranges`; the scenario applies :func:`check_start_state` once it knows
its ``start_date``.  Every error is a ``CalibrationError`` naming the file or date, the key,
the offending value (and state) and the valid range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Range:
    """``low <= x <= high`` (``<`` where the bound is open); ``None`` = unbounded."""

    low: float | None
    high: float | None = None
    low_open: bool = False
    meaning: str = ""

    def holds(self, values: np.ndarray) -> np.ndarray:
        ok = np.isfinite(values)
        if self.low is not None:
            ok &= values > self.low if self.low_open else values >= self.low
        if self.high is not None:
            ok &= values <= self.high
        return ok

    def __str__(self) -> str:
        low = "-inf" if self.low is None else f"{self.low:g}"
        high = "inf" if self.high is None else f"{self.high:g}"
        text = f"{'(' if self.low_open or self.low is None else '['}{low}, {high}{']' if self.high is not None else ')'}"
        return f"{text} ({self.meaning})" if self.meaning else text


POSITIVE_COUNT = Range(0, low_open=True, meaning="a number of people, > 0")
PROBABILITY = Range(0, 1, meaning="a probability")
# key of model_constants.json / fitted_params.json -> valid range of every entry
MODEL_CONSTANT_RANGES = {
    "US_STATE_POPULATION": POSITIVE_COUNT,
    "US_POPULATION": POSITIVE_COUNT,
    "SIR_GAMMA": Range(0, 1, low_open=True, meaning="a daily recovery rate"),
    "SIR_MORTALITY": PROBABILITY,
    "GDP_PER_CAPITA": Range(0, low_open=True, meaning="dollars per person and year"),
    "NUM_STRINGENCY_LEVELS": Range(1, meaning="a number of levels"),
}
FITTED_PARAM_RANGES = {
    "BETA_INTERCEPTS": Range(0, meaning="an infection rate"),
    "CONV_LAMBDAS": Range(0, low_open=True, meaning="filter time constants in days"),
    "FILTER_LEN": Range(1, meaning="days"),
    "VALUE_OF_LIFE": Range(0, meaning="dollars"),
    "INFERRED_WEIGHTAGE_ON_AGENT_HEALTH_INDEX": Range(0, 1, meaning="a weight"),
    "INFERRED_WEIGHTAGE_ON_PLANNER_HEALTH_INDEX": Range(0, 1, meaning="a weight"),
}
# real-world arrays: every finite entry (NaN marks a gap in the data)
REAL_WORLD_RANGES = {
    "vaccinated": Range(0, meaning="people"),
    "subsidy": Range(0, meaning="dollars"),
}
# real-world arrays the simulation starts from: complete (no NaN) on the start date.  Not
# required to be >= 0: the source data holds a few negative susceptible/infected counts
# (e.g. District of Columbia on 2021-01-12), which the original simulated as they are.
START_STATE_KEYS = ("susceptible", "infected", "recovered", "vaccinated", "unemployed")
START_STATE_RANGE = Range(None, meaning="a finite number of people; NaN marks a gap in the data")


def _first_violation(
    where: str, key: str, values: Any, valid: Range, state_names: list[str] | None
) -> str | None:
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    bad = np.flatnonzero(~valid.holds(arr))
    if not bad.size:
        return None
    i = int(bad[0])
    entry = ""
    if arr.size > 1:
        name = state_names[i] if state_names and i < len(state_names) else None
        entry = f" at index {i}" + (f" ({name})" if name else "")
    return f"{where}: key '{key}' must be in {valid}, got {arr[i]:g}{entry}"


def check_physical_ranges(
    error: type[Exception],
    where: dict[str, str],
    model_constants: dict,
    fitted_params: dict,
    real_world_data: dict,
    state_names: list[str] | None = None,
) -> None:
    """Raise ``error`` for the first value outside its physical range.

    Args:
        error: the exception class (``CalibrationError``).
        where: file names for ``"model_constants"``, ``"fitted_params"``, ``"real_world_data"``.
    """
    tables = (
        ("model_constants", model_constants, MODEL_CONSTANT_RANGES),
        ("fitted_params", fitted_params, FITTED_PARAM_RANGES),
    )
    for part, values, ranges in tables:
        for key, valid in ranges.items():
            message = _first_violation(where[part], key, values[key], valid, state_names)
            if message:
                raise error(message)
    for key, valid in REAL_WORLD_RANGES.items():
        arr = np.asarray(real_world_data[key], dtype=np.float64)
        bad = np.argwhere(np.isfinite(arr) & ~valid.holds(arr))
        if bad.size:
            day, col = (int(x) for x in bad[0])
            raise error(
                f"{where['real_world_data']}: array '{key}' must be in {valid}, got "
                f"{arr[day, col]:g} on day {day} (column {col})"
            )


def check_start_state(
    error: type[Exception],
    source: str,
    real_world_data: dict,
    start_index: int,
    start_date: str,
    day_to_date,
    state_names: list[str] | None = None,
) -> None:
    """The real-world state the simulation starts from must be complete (finite).

    Args:
        day_to_date: callable turning a row index into a date string (for the message).
    """
    rows = np.stack([np.asarray(real_world_data[k], dtype=np.float64) for k in START_STATE_KEYS])
    valid_days = START_STATE_RANGE.holds(rows).all(axis=(0, 2))
    for k, key in enumerate(START_STATE_KEYS):
        values = rows[k, start_index]
        bad = np.flatnonzero(~START_STATE_RANGE.holds(values))
        if not bad.size:
            continue
        i = int(bad[0])
        name = f" ({state_names[i]})" if state_names and i < len(state_names) else ""
        days = np.flatnonzero(valid_days)
        hint = (
            f"; the data is complete on {days.size} days between {day_to_date(int(days[0]))} "
            f"and {day_to_date(int(days[-1]))}"
            if days.size
            else "; no day of the data is complete"
        )
        raise error(
            f"{source}: real-world '{key}' on start_date {start_date} must be in "
            f"{START_STATE_RANGE}, got {values[i]:g} for state index {i}{name} "
            f"({bad.size} of {values.size} states){hint}"
        )

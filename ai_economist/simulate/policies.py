"""The policies a sweep runs: named fixed policies, real-world policies, CSV schedules and
trained checkpoints.

Policy names:

* ``open``: every state at stringency level 1 all episode, no subsidy;
* ``closed``: every state at level 10 all episode, full subsidy (level 20);
* ``closed-180-then-open``: level 10 for 180 days, then level 1, no subsidy;
* ``real-world``: the real stringency levels and subsidies of 2020-2021 (episodes of at most
  437 days from the start date, e.g. the tutorial's 405);
* ``fixed:CLOSE,DAYS,OPEN,SUBSIDY``: level CLOSE for DAYS days, then OPEN; subsidy level SUBSIDY;
* ``schedule:PATH.csv``: a schedule per day from a CSV file (:func:`read_schedule_csv`);
* ``checkpoint:PATH``: the policies of a checkpoint of our trainer (a file or a run folder).

A schedule CSV has a header and one row per day, the days numbered 1, 2, ..., days in order
(the first row is day 1, the episode's first step): ``day,subsidy_level,stringency_level``
(one level for every state) or ``day,subsidy_level,<one column per state>`` (51 columns named as
the states).  Cells are integers >= 0; ``3.0`` is read as ``3`` (as the dict API accepts float
actions that hold integers), ``3.5`` is an error.  Stringency levels are 1 (open) to 10 (closed), 0 keeps the current level; subsidy
levels 0 to 20 are the planner's action, read on the first day of each 90-day interval only.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ai_economist.extras import require_modules
from ai_economist.simulate.errors import ScheduleError, UnknownPolicyError
from ai_economist.warp_drive.data_manager import close_matches_message

FIXED: dict[str, tuple[int, int | None, int, int]] = {
    "open": (1, 0, 1, 0),
    "closed": (10, None, 10, 20),  # None: the whole episode
    "closed-180-then-open": (10, 180, 1, 0),
}
"""Named fixed policies as ``(close, days, open, subsidy)``."""

PREFIXES = ("fixed:", "schedule:", "checkpoint:")
NAMES = (*FIXED, "real-world")


@dataclass(frozen=True)
class Policy:
    """A resolved policy.  ``kind`` is ``schedule`` (``stringency`` (days, states) and
    ``subsidy`` (days,) actions per day), ``real-world`` or ``checkpoint`` (``path``)."""

    name: str
    kind: str
    stringency: np.ndarray | None = None
    subsidy: np.ndarray | None = None
    path: str | None = None


def check_policy_name(name: str) -> str:
    """``name`` when it is a known policy name or prefix, else :class:`UnknownPolicyError`."""
    if not isinstance(name, str):
        raise UnknownPolicyError(f"policy {name!r} is not a string")
    if name in NAMES or name.startswith(PREFIXES):
        return name
    known = [*NAMES, *(p + "..." for p in PREFIXES)]
    raise UnknownPolicyError(close_matches_message(name, known, "policy"))


def fixed_schedule(
    close: int, days: int, open_: int, subsidy: int, episode_length: int, num_agents: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(stringency (T, A), subsidy (T,))`` of a ``(close, days, open, subsidy)`` policy."""
    day = np.arange(1, episode_length + 1)
    level = np.where(day <= days, close, open_).astype(np.int64)
    return np.repeat(level[:, None], num_agents, axis=1), np.full(episode_length, subsidy)


def parse_fixed_schedule(
    text: str, context: str, form: str = "CLOSE,DAYS,OPEN,SUBSIDY"
) -> tuple[int, int, int, int]:
    """``"CLOSE,DAYS,OPEN,SUBSIDY"`` -> four ints: stringency level ``CLOSE`` (0 = keep, up to
    10) for the first ``DAYS`` days, then ``OPEN``; one subsidy level (0 to 20) throughout.
    Bad input is an :class:`UnknownPolicyError` that starts with ``context`` and names the
    expected ``form``."""
    parts = text.split(",")
    if len(parts) != 4 or not all(p.strip().isdigit() for p in parts):
        raise UnknownPolicyError(f"{context}: expected {form} (four integers >= 0), got {text!r}")
    close, days, open_, subsidy = (int(p) for p in parts)
    if close > 10 or open_ > 10 or subsidy > 20:
        raise UnknownPolicyError(
            f"{context}: stringency levels are 0 (keep) to 10, subsidy levels 0 to 20, got {text!r}"
        )
    return close, days, open_, subsidy


def resolve_policy(name: str, episode_length: int, state_names: list[str]) -> Policy:
    """The :class:`Policy` of ``name`` for an episode of ``episode_length`` days."""
    check_policy_name(name)
    num_agents = len(state_names)
    if name == "real-world":
        return Policy(name, "real-world")
    if name.startswith("checkpoint:"):
        path = name[len("checkpoint:") :]
        require_modules(["torch"], f"policy {name!r}")
        if not Path(path).exists():
            raise UnknownPolicyError(
                f"policy {name!r}: checkpoint or run directory {path!r} does not exist"
            )
        return Policy(name, "checkpoint", path=path)
    if name.startswith("schedule:"):
        stringency, subsidy = read_schedule_csv(
            name[len("schedule:") :], episode_length, state_names
        )
        return Policy(name, "schedule", stringency, subsidy)
    close, days, open_, subsidy = (
        FIXED[name]
        if name in FIXED
        else parse_fixed_schedule(
            name[len("fixed:") :], f"policy {name!r}", "fixed:CLOSE,DAYS,OPEN,SUBSIDY"
        )
    )
    days = episode_length if days is None else days
    stringency, subsidies = fixed_schedule(close, days, open_, subsidy, episode_length, num_agents)
    return Policy(name, "schedule", stringency, subsidies)


def read_schedule_csv(
    path: str | Path, episode_length: int, state_names: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """``(stringency (T, A), subsidy (T,))`` from a schedule CSV (see the module docstring)."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = [row for row in csv.reader(handle) if row]
    except (OSError, UnicodeDecodeError) as exc:
        raise ScheduleError(f"schedule {str(path)!r} cannot be read: {exc}") from None
    if not rows:
        raise ScheduleError(
            f"schedule {str(path)!r} is empty (expected a header and one row per day)"
        )
    header = [h.strip() for h in rows[0]]
    one_level = ["day", "subsidy_level", "stringency_level"]
    per_state = ["day", "subsidy_level", *state_names]
    if header not in (one_level, per_state):
        raise ScheduleError(
            f"schedule {str(path)!r}: {len(header)} columns {header[:4]}...; expected "
            f"{len(one_level)} columns {one_level} or {len(per_state)} columns "
            "day,subsidy_level and one per state"
        )
    body = rows[1:]
    if len(body) != episode_length:
        raise ScheduleError(
            f"schedule {str(path)!r} has {len(body)} days; the episode has {episode_length} "
            f"(expected one row per day 1..{episode_length})"
        )
    values = np.zeros((episode_length, len(header)), dtype=np.int64)
    for i, row in enumerate(body):
        if len(row) != len(header):
            raise ScheduleError(
                f"schedule {str(path)!r} row {i + 2}: {len(row)} columns, expected {len(header)}"
            )
        for j, cell in enumerate(row):
            number = _whole_number(cell)
            if number is None:
                raise ScheduleError(
                    f"schedule {str(path)!r} row {i + 2}, column {header[j]!r}: {cell!r} is not "
                    "an integer >= 0 (3 and 3.0 are accepted, 3.5 is not)"
                )
            values[i, j] = number
    _check_schedule(path, values, header)
    stringency = values[:, 2:]
    if stringency.shape[1] == 1:
        stringency = np.repeat(stringency, len(state_names), axis=1)
    return stringency, values[:, 1].copy()


def _whole_number(cell: str) -> int | None:
    """``int`` of a cell that holds an integer >= 0 (``3`` or ``3.0``, as the dict API takes
    float actions that hold integers), else None."""
    text = cell.strip()
    if text.isdigit():
        return int(text)
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() and value >= 0 else None


def _check_schedule(path: Path, values: np.ndarray, header: list[str]) -> None:
    days = values[:, 0]
    expected = np.arange(1, len(values) + 1)
    if not np.array_equal(days, expected):
        row = int(np.argmax(days != expected))
        raise ScheduleError(
            f"schedule {str(path)!r} row {row + 2}: day {days[row]}, expected day {row + 1} "
            "(days 1, 2, ... in order)"
        )
    for column, high in ((1, 20), *((j, 10) for j in range(2, len(header)))):
        bad = np.flatnonzero(values[:, column] > high)
        if bad.size:
            raise ScheduleError(
                f"schedule {str(path)!r} row {bad[0] + 2}, column {header[column]!r}: "
                f"{values[bad[0], column]} is above {high}"
            )


def write_schedule_csv(
    path: str | Path, stringency: np.ndarray, subsidy: np.ndarray, state_names: list[str]
) -> Path:
    """Write a schedule as :func:`read_schedule_csv` reads it (one column per state)."""
    path = Path(path)
    stringency = np.asarray(stringency, dtype=np.int64)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["day", "subsidy_level", *state_names])
        for day, (level, row) in enumerate(zip(subsidy, stringency), start=1):
            writer.writerow([day, int(level), *(int(v) for v in row)])
    return path

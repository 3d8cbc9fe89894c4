"""Constructor-argument checks shared by the gather-trade-build components and scenarios.

Each check raises ``TypeError``/``ValueError`` naming the owner, the argument, the bad value
and what was expected (1.7.1 used bare ``assert`` statements).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

import numpy as np


def check_number(
    owner: str, name: str, value: Any, low: float | None = None, high: float | None = None
) -> float:
    """``value`` as a float in ``[low, high]`` (either bound may be None)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"{owner}: {name} must be a number, got {value!r}")
    value = float(value)
    if (
        not np.isfinite(value)
        or (low is not None and value < low)
        or (high is not None and value > high)
    ):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ValueError(f"{owner}: {name} must be a finite number in [{lo}, {hi}], got {value}")
    return value


def check_integer(
    owner: str, name: str, value: Any, low: int | None = None, high: int | None = None
) -> int:
    """``value`` as an int in ``[low, high]``; floats holding integers are accepted."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{owner}: {name} must be an int, got {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ValueError(f"{owner}: {name} must be an int in [{lo}, {hi}], got {value}")
    return value


def check_choice(owner: str, name: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` lower-cased, one of ``choices`` (the error suggests close matches)."""
    if not isinstance(value, str):
        raise TypeError(f"{owner}: {name} must be one of {list(choices)}, got {value!r}")
    lowered = value.lower()
    if lowered not in choices:
        close = difflib.get_close_matches(lowered, list(choices), n=2)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(f"{owner}: {name} must be one of {list(choices)}, got {value!r}{hint}")
    return lowered

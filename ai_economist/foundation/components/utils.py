"""Helpers for components: the tax annealing schedule.

Tax annealing lets a planner's highest allowed tax rate grow from 0 to the full range over
training: after ``warmup_period`` completed episodes the visible share of the range grows
by ``slope`` per episode.
"""

from __future__ import annotations

import numpy as np


def annealed_tax_limit(
    completions: int | np.ndarray,
    warmup_period: float,
    slope: float,
    final_max_tax_value: float = 1.0,
) -> np.ndarray | float:
    """Highest allowed tax: ``clip(slope * (completions - warmup_period), 0, 1) * final_max``."""
    visible = np.clip(slope * (np.asarray(completions, dtype=np.float64) - warmup_period), 0, 1)
    limit = visible * final_max_tax_value
    return limit[()] if np.ndim(limit) == 0 else limit


def annealed_tax_mask(
    completions: int | np.ndarray,
    warmup_period: float,
    slope: float,
    tax_values: np.ndarray | list[float],
) -> np.ndarray:
    """float32 0/1 mask over ``tax_values``: ``|rate| <= annealed_tax_limit(..., max |rate|)``.

    A batch of ``completions`` (shape ``B``) gives masks of shape ``B + tax_values.shape``.
    """
    abs_tax = np.abs(np.asarray(tax_values, dtype=np.float64))
    limit = annealed_tax_limit(completions, warmup_period, slope, float(abs_tax.max()))
    limit = np.asarray(limit)[(...,) + (None,) * abs_tax.ndim]
    return (abs_tax <= limit).astype(np.float32)


HELD_LIMIT_SCALE = 2.0**40
"""The warm-up of :func:`held_tax_limit_schedule`, in episodes (a power of two: exact)."""


def held_tax_limit_schedule(limit: float) -> list[float]:
    """``[warmup_period, slope]`` of an annealing held at ``limit`` (a share of the rate range,
    strictly between 0 and 1): ``annealed_tax_limit`` gives exactly ``limit`` in a fresh env
    (scaling by a power of two is exact) and ``limit * (1 + n / 2**40)`` after ``n`` finished
    episodes. Evaluations use it to keep the limit a run was trained under."""
    limit = float(limit)
    if not 0.0 < limit < 1.0:
        raise ValueError(f"a held tax limit must lie strictly between 0 and 1, got {limit!r}")
    return [-HELD_LIMIT_SCALE, limit / HELD_LIMIT_SCALE]

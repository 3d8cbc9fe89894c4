"""Hyper-parameters given as a number or as a piecewise-linear schedule.

A schedule is a list of ``[step, value]`` points with increasing steps, e.g. the published
planner entropy ``[[0, 0.5], [50000000, 0.05]]``.  Between two points the value is linearly
interpolated; before the first point it is the first value, after the last one the last value.
``step`` counts environment steps taken so far by this training process
(``iteration * train_batch_size``), so a schedule is a pure function of the step counter and
needs no state of its own in a checkpoint.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

ScheduleSpec = float | int | Sequence[Sequence[float]]


class Schedule:
    """A constant or a piecewise-linear function of the environment-step counter."""

    def __init__(self, spec: ScheduleSpec, name: str = "value") -> None:
        self.name = name
        if isinstance(spec, bool):
            raise ValueError(f"{name}: expected a number or [[step, value], ...], got {spec!r}")
        if isinstance(spec, int | float):
            self.steps: list[float] = [0.0]
            self.values: list[float] = [float(spec)]
            return
        points = [tuple(p) for p in spec]
        if not points or any(len(p) != 2 for p in points):
            raise ValueError(f"{name}: a schedule is a non-empty list of [step, value] pairs")
        steps = [float(p[0]) for p in points]
        if any(b <= a for a, b in zip(steps, steps[1:], strict=False)) or steps[0] < 0:
            raise ValueError(f"{name}: schedule steps must be >= 0 and strictly increasing")
        self.steps = steps
        self.values = [float(p[1]) for p in points]

    @property
    def is_constant(self) -> bool:
        return len(self.values) == 1

    def __call__(self, step: int | float) -> float:
        """The value at ``step`` environment steps."""
        i = bisect_right(self.steps, step)
        if i == 0:
            return self.values[0]
        if i == len(self.steps):
            return self.values[-1]
        s0, s1 = self.steps[i - 1], self.steps[i]
        v0, v1 = self.values[i - 1], self.values[i]
        return v0 + (v1 - v0) * (step - s0) / (s1 - s0)

    def __repr__(self) -> str:
        if self.is_constant:
            return f"Schedule({self.name}={self.values[0]})"
        pts = [[s, v] for s, v in zip(self.steps, self.values, strict=True)]
        return f"Schedule({self.name}={pts})"

"""Optional matplotlib (the one place that imports it for the package's plots) and what
scenarios hand to the generic plots."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend, or None (one warning, attributed to the
    caller of the plotting function) without the ``plot`` extra."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        warnings.warn(
            "matplotlib is not installed: no plots; install the 'plot' extra: "
            'pip install "ai-economist[plot]"',
            stacklevel=3,
        )
        return None
    return plt


@dataclass(frozen=True)
class LevelPlot:
    """What the plot of one policy shows instead of its action indices: the level in effect
    each day (``values``, days x agents), what it is, and its range."""

    values: Any
    label: str
    low: int
    high: int
    agent_names: list[str] | None = None
    title: str = ""

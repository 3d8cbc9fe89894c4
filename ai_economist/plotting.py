"""Optional matplotlib: the one place that imports it for the package's plots."""

from __future__ import annotations

import warnings
from typing import Any


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend, or None (one warning, attributed to the
    caller of the plotting function) without the ``plot`` extra."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        warnings.warn("matplotlib is not installed (the 'plot' extra): no plots", stacklevel=3)
        return None
    return plt

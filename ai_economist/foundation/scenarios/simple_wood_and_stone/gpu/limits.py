"""The limits shared by gather-trade-build's device state declarations (the world's
:mod:`.state`, the market's :mod:`.market_state`, the tax's :mod:`.tax_state`), in a module
of their own so that each declaration can import them without importing the others."""

from __future__ import annotations

MAX_AGENTS = 29  # the exact Gini of coin_eq_times_productivity (n < 30), as the array model


class UnsupportedGpuConfig(ValueError):
    """A config the gather-trade-build kernels do not cover (the message names it)."""

"""Component registry. Importing this package registers every available component."""

from __future__ import annotations

import importlib.util

from ai_economist.foundation.base.base_component import BaseComponent, component_registry

__all__ = ["BaseComponent", "component_registry"]


def _module_exists(module_name: str) -> bool:
    try:
        return importlib.util.find_spec(module_name) is not None
    except ModuleNotFoundError:
        return False


if _module_exists("ai_economist.foundation.components.covid19_components"):
    # Scenario-specific components register themselves on import.
    from ai_economist.foundation.components import covid19_components  # noqa: E402,F401

# Economic components (tax, redistribution, labour) and the gather-trade-build ones
# (build, trade, gather); importing registers them.
from ai_economist.foundation.components import build as _build  # noqa: E402,F401
from ai_economist.foundation.components import continuous_double_auction as _cda  # noqa: E402,F401
from ai_economist.foundation.components import move as _move  # noqa: E402,F401
from ai_economist.foundation.components import redistribution, simple_labor  # noqa: E402,F401

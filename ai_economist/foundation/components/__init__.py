"""Component registry. Scenario-specific components live beside their scenario and register
themselves when it is imported (``foundation/__init__`` imports the scenarios), so this
package never imports a scenario."""

from __future__ import annotations

from ai_economist.foundation.base.base_component import BaseComponent, component_registry

__all__ = ["BaseComponent", "component_registry"]

# Generic economic components (tax, redistribution, labour) and the gather-trade-build ones
# (build, trade, gather): importing registers them.
from ai_economist.foundation.components import build as _build  # noqa: E402,F401
from ai_economist.foundation.components import continuous_double_auction as _cda  # noqa: E402,F401
from ai_economist.foundation.components import move as _move  # noqa: E402,F401
from ai_economist.foundation.components import redistribution, simple_labor  # noqa: E402,F401

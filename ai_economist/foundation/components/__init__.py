"""Component registry. Scenario-specific components live beside their scenario and register
themselves when it is imported (``foundation/__init__`` imports the scenarios), so this
package never imports a scenario."""

from __future__ import annotations

from ai_economist.foundation.base.base_component import BaseComponent, component_registry

__all__ = ["BaseComponent", "component_registry"]

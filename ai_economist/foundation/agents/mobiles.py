"""Mobile agents."""

from __future__ import annotations

from ai_economist.foundation.base.base_agent import BaseAgent, agent_registry


@agent_registry.add
class BasicMobileAgent(BaseAgent):
    """A mobile agent with a location on the map (idx 0..n_agents-1)."""

    name = "BasicMobileAgent"

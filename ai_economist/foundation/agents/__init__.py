"""Agent classes; importing this package registers them in ``agent_registry``."""

from ai_economist.foundation.agents.mobiles import BasicMobileAgent
from ai_economist.foundation.agents.planners import BasicPlanner
from ai_economist.foundation.base.base_agent import BaseAgent, agent_registry

__all__ = ["BaseAgent", "BasicMobileAgent", "BasicPlanner", "agent_registry"]

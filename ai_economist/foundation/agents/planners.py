"""Planner agents."""

from __future__ import annotations

from ai_economist.foundation.base.base_agent import BaseAgent, agent_registry


@agent_registry.add
class BasicPlanner(BaseAgent):
    """The social planner: always has idx ``"p"``, holds no location and no endogenous state."""

    name = "BasicPlanner"

    def __init__(self, idx: int | str | None = None, multi_action_mode: bool = False) -> None:
        super().__init__(idx, multi_action_mode)
        del self.state["loc"]
        self._idx = "p"

    @property
    def loc(self) -> list[int]:
        """Planners do not occupy a location: always raises AttributeError."""
        raise AttributeError("BasicPlanner agents do not occupy a location.")

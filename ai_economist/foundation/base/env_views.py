"""Read-only views and look-ups of :class:`~ai_economist.foundation.base.base_env.BaseEnvironment`.

Entities, components, agents, metrics and the episode logs, by property; components and agents
by name or index.  A mixin over the attributes that ``BaseEnvironment.__init__`` sets.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.base.base_agent import BaseAgent
from ai_economist.foundation.base.base_component import BaseComponent


class EnvironmentViews:
    """Mixin: properties and look-ups of a Foundation environment."""

    # --------------------------------------------------------------- properties
    @property
    def inv_scale(self) -> float:
        """0.01 when observation scaling is allowed, else 1."""
        return 0.01 if self._allow_observation_scaling else 1.0

    @property
    def rng(self) -> np.random.Generator:
        """The environment's random generator (same object as ``world.rng``)."""
        return self.world.rng

    @property
    def resources(self) -> list[str]:
        """Registered resources, sorted."""
        return sorted(self._entities["resources"])

    @property
    def landmarks(self) -> list[str]:
        """Registered landmarks, sorted."""
        return sorted(self._entities["landmarks"])

    @property
    def endogenous(self) -> list[str]:
        """Registered endogenous quantities, sorted."""
        return sorted(self._entities["endogenous"])

    @property
    def components(self) -> list[BaseComponent]:
        """The components, in order."""
        return self._components

    @property
    def all_agents(self) -> list[BaseAgent]:
        """Mobile agents followed by the planner."""
        return self.world.agents + [self.world.planner]

    @property
    def metrics(self) -> dict[str, Any]:
        """Scenario metrics plus ``"<shorthand>/<key>"`` component metrics."""
        metrics = dict(self.scenario_metrics() or {})
        for component in self._components:
            for key, value in (component.get_metrics() or {}).items():
                metrics[f"{component.shorthand}/{key}"] = value
        return metrics

    @property
    def previous_episode_metrics(self) -> dict[str, Any] | None:
        """Metrics at the end of the last completed episode."""
        return self._logger.previous_metrics

    @property
    def dense_log(self) -> dict[str, Any]:
        """The current episode's dense log."""
        return self._logger.dense_log

    @property
    def previous_episode_dense_log(self) -> dict[str, Any]:
        """The last completed episode's dense log (JSON-able)."""
        return self._logger.previous_dense_log

    @property
    def replay_log(self) -> dict[str, Any]:
        """The current episode's replay log."""
        return self._logger.replay_log

    @property
    def previous_episode_replay_log(self) -> dict[str, Any] | None:
        """The last completed episode's replay log (JSON-able)."""
        return self._logger.previous_replay_log

    # ----------------------------------------------------------------- look-ups
    def get_component(self, component_name: str) -> BaseComponent:
        """A component by name or shorthand."""
        if component_name in self._components_dict:
            return self._components_dict[component_name]
        if component_name in self._shorthand_lookup:
            return self._shorthand_lookup[component_name]
        raise KeyError(
            f"No component named {component_name!r}. Known components: "
            f"{sorted(self._components_dict)} (shorthands {sorted(self._shorthand_lookup)})"
        )

    def get_agent(self, agent_idx: int | str) -> BaseAgent:
        """An agent by index (int or str; ``"p"`` for the planner)."""
        agent = self._agent_lookup.get(str(agent_idx))
        if agent is None:
            raise KeyError(
                f"No agent with idx {agent_idx!r}; expected 0..{self.n_agents - 1} or 'p'"
            )
        return agent

    def set_agent_component_action(
        self, agent_idx: int | str, component_name: str, action: Any
    ) -> None:
        """Set one agent's action for a component sub-space."""
        self.get_agent(agent_idx).set_component_action(component_name, action)

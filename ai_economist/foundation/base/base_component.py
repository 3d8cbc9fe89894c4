"""Components: the modular mechanics (actions, state updates, observations) of a scenario.

A component subclass sets the class attributes ``name``, ``component_type`` (optional
shorthand), ``agent_subclasses`` (agent class names it acts on) and ``required_entities``,
registers itself with ``@component_registry.add`` and implements:

* ``get_n_actions(agent_cls_name)``: ``None``/0, an int, or a list of ``(sub_name, n)``;
* ``get_additional_state_fields(agent_cls_name)``: extra agent-state fields and their reset values;
* ``component_step()``: apply the agents' current actions;
* ``generate_observations()``: ``{agent_idx: {key: value}}``;
* ``generate_masks(completions=0)``: ``{agent_idx: array(n)}`` or ``{agent_idx: {sub: array(n)}}``
  (1 = allowed, NO-OP excluded). The default enables every action.

Fast collated path: when the environment runs with ``collate_agent_step_and_reset_data=True``,
``generate_observations`` and ``generate_masks`` may return ``{"a": ..., "p": ...}`` where
every ``"a"`` value is an array whose **last** axis is the mobile agents (masks:
``(n, n_agents)``); the environment then uses them without per-agent stacking.
``get_agent_actions()`` reads the mobile agents' current actions as one int array.

Subclass constructors take ``(*base_component_args, <own params>, **base_component_kwargs)``
and call ``super().__init__(*base_component_args, **base_component_kwargs)``.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ai_economist.foundation.base.base_agent import agent_registry
from ai_economist.foundation.base.registrar import Registry
from ai_economist.foundation.base.world import World
from ai_economist.foundation.entities.landmarks import landmark_registry
from ai_economist.foundation.entities.resources import resource_registry

_IMMUTABLE = (int, float, str, bool, bytes, complex, type(None), np.generic)


def fresh_copy(value: Any) -> Any:
    """Return ``value`` itself if immutable, else a deep copy (used for state reset values)."""
    return value if isinstance(value, _IMMUTABLE) else copy.deepcopy(value)


class BaseComponent(ABC):
    """Base class for components.

    Args:
        world: the environment's World.
        episode_length: steps per episode.
        inventory_scale: scale applied to inventory-like observations.
    """

    name: str = ""
    component_type: str | None = None
    agent_subclasses: list[str] = []
    required_entities: list[str] = []

    def __init__(self, world: World, episode_length: int, inventory_scale: float = 1) -> None:
        cls_name = type(self).__name__
        if not self.name:
            raise ValueError(f"Component class {cls_name} must define a name")
        if not isinstance(self.agent_subclasses, (list, tuple)) or not self.agent_subclasses:
            raise TypeError(f"{cls_name}.agent_subclasses must be a non-empty list of agent names")
        for agent_name in self.agent_subclasses:
            agent_registry.get(agent_name)
        if not isinstance(self.required_entities, (list, tuple)):
            raise TypeError(f"{cls_name}.required_entities must be a list")
        self._world = world
        self._episode_length = int(episode_length)
        self._inventory_scale = float(inventory_scale)
        self.n_agents = world.n_agents
        self.resources = world.resources
        self.landmarks = world.landmarks
        self.timescale = 1
        self.check_world(world)

    def check_world(self, world: World) -> None:
        """Raise ValueError if a required resource or landmark is missing from ``world``."""
        for entity in self.required_entities:
            if resource_registry.has(entity) and entity not in world.resources:
                raise ValueError(
                    f"{self.name} requires resource {entity!r}, missing from the world"
                )
            if landmark_registry.has(entity) and entity not in world.landmarks:
                raise ValueError(
                    f"{self.name} requires landmark {entity!r}, missing from the world"
                )

    # ----------------------------------------------------------------- properties
    @property
    def world(self) -> World:
        """The World this component acts on."""
        return self._world

    @property
    def episode_length(self) -> int:
        """Steps per episode."""
        return self._episode_length

    @property
    def inv_scale(self) -> float:
        """Scale for inventory-like observations."""
        return self._inventory_scale

    @property
    def shorthand(self) -> str:
        """``component_type`` if set, else ``name`` (used for metrics and logs)."""
        return self.component_type or self.name

    # ------------------------------------------------------------------ lifecycle
    def reset(self) -> None:
        """Re-apply the state-field reset values to every agent, then ``additional_reset_steps``."""
        for agent in self._world.agents + [self._world.planner]:
            fields = self.get_additional_state_fields(agent.name)
            for key, value in fields.items():
                agent.state[key] = fresh_copy(value)
        self.additional_reset_steps()

    def obs(self) -> dict[str, Any]:
        """``generate_observations()`` with the agent keys cast to str."""
        return {str(k): v for k, v in self.generate_observations().items()}

    def get_agent_actions(self, sub_action_name: str | None = None) -> np.ndarray:
        """Every mobile agent's current action for this component (0 = NO-OP).

        Returns an int64 array of shape (n_agents,), or (n_sub_spaces, n_agents) when the
        component has several sub-spaces and ``sub_action_name`` is not given.  Inside
        ``env.step`` with a collated ``"a"`` action the values come from that array (the
        agents' dicts hold the same values) instead of the 51 dicts.
        """
        if sub_action_name is None:  # this step's collated actions, when env.step has them
            parsed = getattr(self._world, "step_collated_actions", None)
            if parsed is not None:
                values = parsed.get(self.name)
                if values is not None:
                    return values.copy()
        agents = self._world.agents
        key = self.name if sub_action_name is None else f"{self.name}.{sub_action_name}"
        if key in agents[0].action:
            return np.array([a.action.get(key, 0) for a in agents], dtype=np.int64)
        values = [a.get_component_action(self.name, sub_action_name) for a in agents]
        arr = np.array([0 if v is None else v for v in values], dtype=np.int64)
        return arr.T if arr.ndim == 2 else arr

    # ------------------------------------------------------------------- abstract
    @abstractmethod
    def get_n_actions(self, agent_cls_name: str) -> int | list[tuple[str, int]] | None:
        """Action space contributed to agents of class ``agent_cls_name``."""

    @abstractmethod
    def get_additional_state_fields(self, agent_cls_name: str) -> dict[str, Any]:
        """Extra state fields (and their reset values) for agents of ``agent_cls_name``."""

    @abstractmethod
    def component_step(self) -> None:
        """Apply the agents' actions for this step."""

    @abstractmethod
    def generate_observations(self) -> dict[Any, dict[str, Any]]:
        """Observations keyed by agent idx (or collated ``"a"``/``"p"``)."""

    # ------------------------------------------------------------------- optional
    def generate_masks(self, completions: int = 0) -> dict[Any, Any]:
        """Action masks; the default allows every action of every agent.

        The default's mask arrays are shared by the agents of one class: copy before editing.
        """
        masks: dict[Any, Any] = {}
        per_class: dict[str, Any] = {}
        for agent in self._world.agents + [self._world.planner]:
            if agent.name not in per_class:
                per_class[agent.name] = self._all_ones_mask(agent.name)
            mask = per_class[agent.name]
            if mask is not None:
                masks[agent.idx] = mask
        return masks

    def _all_ones_mask(self, agent_cls_name: str) -> Any:
        n = self.get_n_actions(agent_cls_name)
        if not n:
            return None
        if isinstance(n, (int, np.integer)):
            return np.ones(int(n), dtype=np.float32)
        return {sub: np.ones(int(k), dtype=np.float32) for sub, k in n if k}

    def additional_reset_steps(self) -> None:
        """Extra reset logic (called by ``reset``)."""
        return None

    def get_metrics(self) -> dict[str, Any] | None:
        """Episode metrics (merged into ``env.metrics`` as ``<shorthand>/<key>``)."""
        return None

    def get_dense_log(self) -> dict[str, Any] | list[Any] | tuple[Any, ...] | None:
        """Per-episode log (merged into the env's dense log at episode end)."""
        return None


component_registry = Registry(BaseComponent)

"""The spatial world: entity maps, accessibility, occupancy, agents and the random generator.

Differences from Foundation 1.7.1 (see docs/differences.md, "Foundation core"):

* ``Maps.set_point`` on a blocking landmark updates only the accessibility of that cell
  (1.7.1 broadcast the cell's scalar over the whole accessibility layer).
* ``World.loc_map`` skips agents without a valid location (1.7.1 wrote agents at
  ``[-1, -1]`` into the bottom-right cell).
* The world owns the environment's ``numpy.random.Generator`` (``world.rng``);
  ``get_random_order_agents`` draws from it instead of the global ``np.random``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import ai_economist.foundation.agents  # noqa: F401  (registers the agent classes)
from ai_economist.foundation.base.base_agent import BaseAgent, agent_registry
from ai_economist.foundation.base.maps import Maps


class World:
    """Holds the maps, the agents, the timestep and the environment's random generator.

    Args:
        world_size: ``[H, W]``.
        n_agents: number of mobile agents.
        world_resources: resource names (collectible ones get maps).
        world_landmarks: landmark names.
        multi_action_mode_agents: multi-action mode of the mobile agents.
        multi_action_mode_planner: multi-action mode of the planner.
        rng: the generator to use (a fresh unseeded one if omitted).
        mobile_agent_class / planner_class: registered agent class names.
    """

    def __init__(
        self,
        world_size: Sequence[int],
        n_agents: int,
        world_resources: Sequence[str],
        world_landmarks: Sequence[str],
        multi_action_mode_agents: bool = False,
        multi_action_mode_planner: bool = True,
        rng: np.random.Generator | None = None,
        mobile_agent_class: str = "BasicMobileAgent",
        planner_class: str = "BasicPlanner",
    ) -> None:
        self.world_size = [int(world_size[0]), int(world_size[1])]
        self.n_agents = int(n_agents)
        self.resources = list(world_resources)
        self.landmarks = list(world_landmarks)
        self.multi_action_mode_agents = bool(multi_action_mode_agents)
        self.multi_action_mode_planner = bool(multi_action_mode_planner)
        self.maps = Maps(self.world_size, self.n_agents, self.resources, self.landmarks)
        mobile_cls = agent_registry.get(mobile_agent_class)
        self._agents: list[BaseAgent] = [
            mobile_cls(i, multi_action_mode=self.multi_action_mode_agents)
            for i in range(self.n_agents)
        ]
        self._planner: BaseAgent = agent_registry.get(planner_class)(
            multi_action_mode=self.multi_action_mode_planner
        )
        self.timestep = 0
        self._rng = rng if rng is not None else np.random.default_rng()
        self.rng = self._rng
        # Set by BaseEnvironment.step for its components: {sub_space: int64 (n_agents,)}
        # actions parsed from a collated "a" entry, or None (read the agents' dicts).
        self.step_collated_actions: dict[str, np.ndarray] | None = None
        # Set by the GPU wrapper.
        self.use_cuda = False
        self.cuda_function_manager: Any = None
        self.cuda_data_manager: Any = None

    @property
    def rng(self) -> np.random.Generator:
        """The environment's random generator. Read it on use; do not cache it."""
        return self._rng

    @rng.setter
    def rng(self, generator: np.random.Generator) -> None:
        if not isinstance(generator, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(generator).__name__}")
        self._rng = generator
        for agent in self._agents + [self._planner]:
            agent.rng = generator

    @property
    def agents(self) -> list[BaseAgent]:
        """The mobile agents, by index."""
        return self._agents

    @property
    def planner(self) -> BaseAgent:
        """The planner agent."""
        return self._planner

    @property
    def loc_map(self) -> np.ndarray:
        """int16 (H, W): index of the agent at each cell, -1 if none."""
        idx_map = -np.ones(self.world_size, dtype=np.int16)
        for agent in self._agents:
            r, c = agent.loc
            if self.is_valid(r, c):
                idx_map[r, c] = agent.idx
        return idx_map

    def get_random_order_agents(self) -> list[BaseAgent]:
        """The mobile agents in a random order drawn from ``self.rng``: the order of
        ``rng.permutation(n_agents)``, with the same draws (``Generator.shuffle`` of a list
        swaps as ``permutation`` shuffles its ``arange``, without the array)."""
        order = list(range(self.n_agents))
        self._rng.shuffle(order)
        return list(map(self._agents.__getitem__, order))

    def is_valid(self, r: int, c: int) -> bool:
        """Whether ``(r, c)`` lies on the map."""
        return 0 <= r < self.world_size[0] and 0 <= c < self.world_size[1]

    def is_location_accessible(self, r: int, c: int, agent: BaseAgent) -> bool:
        """Whether ``(r, c)`` is on the map and accessible to ``agent``."""
        return self.is_valid(r, c) and self.maps.is_accessible(r, c, agent.idx)

    def can_agent_occupy(self, r: int, c: int, agent: BaseAgent) -> bool:
        """Whether ``(r, c)`` is accessible to ``agent`` and unoccupied."""
        return self.is_location_accessible(r, c, agent) and bool(self.maps.unoccupied[r, c])

    def clear_agent_locs(self) -> None:
        """Remove every agent from the map (their loc becomes ``[-1, -1]``)."""
        for agent in self._agents:
            agent.state["loc"] = [-1, -1]
        self.maps.clear_agent_loc()

    def agent_locs_are_valid(self) -> bool:
        """Whether every agent stands on a cell it may access."""
        return all(self.is_location_accessible(*agent.loc, agent) for agent in self._agents)

    def set_agent_loc(self, agent: BaseAgent, r: int, c: int) -> list[int]:
        """Move ``agent`` to ``(r, c)`` if it may occupy it; return its (new) location."""
        maps, (h, w) = self.maps, self.world_size
        # can_agent_occupy(r, c, agent), inlined: on the map, accessible, unoccupied
        if 0 <= r < h and 0 <= c < w and maps.accessibility[agent.idx, r, c]:
            if maps.unoccupied[r, c]:
                maps.set_agent_loc(agent, r, c)
                agent.state["loc"] = [int(r), int(c)]
        loc = agent.state["loc"]
        return [loc[0], loc[1]]

    def location_resources(self, r: int, c: int) -> dict[str, float]:
        """Collectible resources at ``(r, c)`` (empty if off the map)."""
        h, w = self.world_size  # is_valid(r, c), inlined
        return self.maps.location_resources(r, c) if 0 <= r < h and 0 <= c < w else {}

    def location_landmarks(self, r: int, c: int) -> dict[str, float]:
        """Landmarks at ``(r, c)`` (empty if off the map)."""
        return self.maps.location_landmarks(r, c) if self.is_valid(r, c) else {}

    def location_is_clear(self, r: int, c: int) -> bool:
        """Whether ``(r, c)`` holds no collectible resource and no landmark (True off the
        map, where both are empty)."""
        h, w = self.world_size  # is_valid(r, c), inlined
        return self.maps.is_clear(r, c) if 0 <= r < h and 0 <= c < w else True

    def create_landmark(
        self, landmark_name: str, r: int, c: int, agent_idx: int | None = None
    ) -> None:
        """Place a landmark of health 1 at ``(r, c)`` (owned by ``agent_idx`` if private)."""
        self.maps.set_point(landmark_name, r, c, 1, owner=agent_idx)

    def consume_resource(self, resource_name: str, r: int, c: int) -> None:
        """Remove one unit of ``resource_name`` at ``(r, c)``."""
        self.maps.set_point_add(resource_name, r, c, -1)

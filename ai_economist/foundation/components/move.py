"""Component ``Gather``: mobile agents walk on the grid and collect the resources they step on.

Actions (one sub-space of 4): 1 = left (column - 1), 2 = right (column + 1), 3 = up
(row - 1), 4 = down (row + 1). A move into a cell that is off the map, inaccessible
(water, another agent's house) or occupied does nothing and costs no labour. Landing on (or
staying on) a cell holding a resource collects 1 unit plus one bonus unit with probability
``bonus_gather_prob`` and costs ``collect_labor``.

Difference from Foundation 1.7.1: 1.7.1 ``return``-ed from inside the agent loop when an
agent had no Gather action, skipping the step's gather log; here such agents are skipped.
Random draws come from the environment's generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ai_economist.foundation.base.base_component import BaseComponent, component_registry
from ai_economist.foundation.components.param_checks import check_choice, check_number

SKILL_DISTS = ("none", "pareto", "lognormal")
# Row and column offsets of the actions 1..4 (left, right, up, down).
ROW_OFFSETS = np.array([0, 0, -1, 1])
COL_OFFSETS = np.array([-1, 1, 0, 0])
MOVES = tuple(zip(ROW_OFFSETS.tolist(), COL_OFFSETS.tolist()))  # left, right, up, down


def _allowed_from(
    free: bytes, access: bytes, i: int, r: int, c: int, h: int, w: int
) -> list[float]:
    """Agent i's 4 move-mask entries at ``(r, c)`` from the flat bytes of the occupancy and
    accessibility maps (any location, on the map or off it)."""
    row = []
    for dr, dc in MOVES:
        rr, cc = r + dr, c + dc
        ok = 0 <= rr < h and 0 <= cc < w and free[rr * w + cc] and access[(i * h + rr) * w + cc]
        row.append(1.0 if ok else 0.0)
    return row


def draw_gather_bonus(rng: np.random.Generator, skill_dist: str) -> float:
    """One agent's ``bonus_gather_prob``: ``min(2, X) / 2`` for X ~ Pareto(3) (``"pareto"``)
    or LogNormal(-2.022, 0.938) (``"lognormal"``); 0 for ``"none"``."""
    if skill_dist == "pareto":
        return float(min(2.0, rng.pareto(3)) / 2)
    if skill_dist == "lognormal":
        return float(min(2.0, rng.lognormal(-2.022, 0.938)) / 2)
    return 0.0


@component_registry.add
class Gather(BaseComponent):
    """Move around the world and collect resources (no ``component_type``: shorthand ``Gather``).

    Args:
        move_labor: labour added by a move that happens (>= 0).
        collect_labor: labour added by each collection (>= 0).
        skill_dist: ``"none"`` (no bonus), ``"pareto"`` (min(2, Pareto(3)) / 2) or
            ``"lognormal"`` (min(2, LogNormal(-2.022, 0.938)) / 2): the bonus probability,
            re-sampled at every reset.
    """

    name = "Gather"
    required_entities = ["Coin", "House", "Labor"]
    agent_subclasses = ["BasicMobileAgent"]

    def __init__(
        self,
        *base_component_args: Any,
        move_labor: float = 1.0,
        collect_labor: float = 1.0,
        skill_dist: str = "none",
        **base_component_kwargs: Any,
    ) -> None:
        super().__init__(*base_component_args, **base_component_kwargs)
        self.move_labor = check_number(self.name, "move_labor", move_labor, 0.0)
        self.collect_labor = check_number(self.name, "collect_labor", collect_labor, 0.0)
        self.skill_dist = check_choice(self.name, "skill_dist", skill_dist, SKILL_DISTS)
        self.gathers: list[list[dict[str, Any]]] = []

    # ----------------------------------------------------------------- contract
    def get_n_actions(self, agent_cls_name: str) -> int | None:
        """4 moves (left, right, up, down) for mobile agents."""
        return 4 if agent_cls_name == "BasicMobileAgent" else None

    def get_additional_state_fields(self, agent_cls_name: str) -> dict[str, Any]:
        """Mobile agents get ``bonus_gather_prob`` (0.0 until reset samples it)."""
        return {"bonus_gather_prob": 0.0} if agent_cls_name == "BasicMobileAgent" else {}

    def component_step(self) -> None:
        """Move the agents (in random order), then collect what lies under each one."""
        world = self._world
        rng, maps, (h, w) = world.rng, world.maps, world.world_size
        gathers: list[dict[str, Any]] = []
        for agent in world.get_random_order_agents():
            action = agent.action.get(self.name)
            if action is None:
                continue
            r, c = agent.state["loc"]
            if action:
                if not 1 <= action <= 4:
                    raise ValueError(
                        f"Gather: action {action} of agent {agent.idx} is out of range 0..4"
                    )
                dr, dc = MOVES[action - 1]
                new_r, new_c = world.set_agent_loc(agent, r + dr, c + dc)
                if new_r != r or new_c != c:
                    agent.state["endogenous"]["Labor"] += self.move_labor
                r, c = new_r, new_c
            # world.location_resources(r, c), one call level less
            here = maps.location_resources(r, c) if 0 <= r < h and 0 <= c < w else {}
            for resource, health in here.items():
                if health >= 1:
                    n_gathered = 1 + int(rng.random() < agent.state["bonus_gather_prob"])
                    agent.state["inventory"][resource] += n_gathered
                    world.consume_resource(resource, r, c)
                    agent.state["endogenous"]["Labor"] += self.collect_labor
                    gathers.append(
                        {"agent": agent.idx, "resource": resource, "n": n_gathered, "loc": [r, c]}
                    )
        self.gathers.append(gathers)

    def generate_observations(self) -> dict[str, dict[str, Any]]:
        """Each mobile agent observes its ``bonus_gather_prob``; the planner nothing."""
        return {
            str(agent.idx): {"bonus_gather_prob": agent.state["bonus_gather_prob"]}
            for agent in self.world.agents
        }

    def observation_writer(self, slots: Any) -> Any:
        """Direct-path writer of :meth:`generate_observations` (``base/direct_obs.py``)."""
        agents = self.world.agents
        slots.scalars([(str(a.idx), "bonus_gather_prob") for a in agents])

        def write(buf: np.ndarray, scalars: list, outs: dict) -> None:
            scalars.extend([a.state["bonus_gather_prob"] for a in agents])

        return write

    def generate_masks(self, completions: int = 0) -> dict[int, np.ndarray]:
        """A move is allowed when its target cell is on the map, accessible and unoccupied."""
        allowed = self._allowed_moves()
        return {agent.idx: allowed[i] for i, agent in enumerate(self.world.agents)}

    def _allowed_moves(self) -> np.ndarray:
        """float32 (n_agents, 4): 1 where the move's target cell is on the map, accessible
        to the agent and unoccupied."""
        flat = [0.0] * (4 * self.n_agents)
        self._mark_allowed_moves(flat, range(0, len(flat), 4))
        return np.array(flat, dtype=np.float32).reshape(self.n_agents, 4)

    def _mark_allowed_moves(self, out: Any, starts: Sequence[int]) -> None:
        """Set ``out[starts[i] + j] = 1.0`` for each allowed move j (0..3: left, right, up,
        down) of agent i (``out``, a list or float32 array, holds 0 there), read from the
        bytes of the occupancy and accessibility maps (without numpy's scalar indexing)."""
        world = self._world
        h, w = world.world_size
        maps = world.maps
        free = maps.unoccupied.tobytes()
        access = self._access_bytes(maps.accessibility)
        for i, (agent, s) in enumerate(zip(world.agents, starts)):
            r, c = agent.state["loc"]
            if not (0 <= r < h and 0 <= c < w):
                for j, allowed in enumerate(_allowed_from(free, access, i, r, c, h, w)):
                    if allowed:
                        out[s + j] = 1.0
                continue
            # MOVES unrolled (left, right, up, down); k: the agent's cell, flat; a: the same
            # cell in its access map
            k = r * w + c
            a = i * h * w + k
            if c > 0 and free[k - 1] and access[a - 1]:
                out[s] = 1.0
            if c + 1 < w and free[k + 1] and access[a + 1]:
                out[s + 1] = 1.0
            if r > 0 and free[k - w] and access[a - w]:
                out[s + 2] = 1.0
            if r + 1 < h and free[k + w] and access[a + w]:
                out[s + 3] = 1.0

    def _access_bytes(self, access: np.ndarray) -> bytes:
        """``access.tobytes()`` (C order), kept while ``Maps.accessibility`` returns the same
        (read-only, cached) array."""
        cached = self.__dict__.get("_access_cache")
        if cached is None or cached[0] is not access:
            cached = self._access_cache = (access, access.tobytes())
        return cached[1]

    def mask_writer(self, slots: Any) -> Any:
        """Direct-path writer of :meth:`generate_masks` (``base/direct_masks.py``)."""
        where = [slots.positions(str(a.idx)) for a in self.world.agents]
        if any(len(p) != 4 or (p[1:] - p[:-1] != 1).any() for p in where):
            return None
        starts = [int(p[0]) for p in where]  # each agent's 4 entries, back to back

        def write(buf: np.ndarray, completions: int) -> None:
            # the buffer starts at zeros here: only the allowed moves are written
            self._mark_allowed_moves(buf, starts)

        return write

    # ----------------------------------------------------------------- optional
    def additional_reset_steps(self) -> None:
        """Re-sample the agents' bonus probabilities and clear the gather log."""
        rng = self.world.rng
        for agent in self.world.agents:
            agent.state["bonus_gather_prob"] = draw_gather_bonus(rng, self.skill_dist)
        self.gathers = []

    def get_dense_log(self) -> list[list[dict[str, Any]]]:
        """Per step, the gathers ``{agent, resource, n, loc}``."""
        return self.gathers

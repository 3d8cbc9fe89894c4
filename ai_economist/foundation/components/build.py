"""Component ``Build``: turn 1 Wood + 1 Stone into a house on the agent's cell, for coin.

A build needs the resources and a cell without any resource or landmark (source blocks
included). The agent receives ``state["build_payment"]`` coin and ``build_labor`` labour;
the house belongs to it (other agents cannot enter the cell). Agents act in random order.

Skills are re-sampled at every reset: ``"pareto"`` draws Pareto(4), ``"lognormal"``
LogNormal(-1, 0.5); the pay rate is min(PMSM, (PMSM - 1) * skill + 1) with PMSM =
``payment_max_skill_multiplier``, and ``build_payment = pay_rate * payment``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.base.base_component import BaseComponent, component_registry
from ai_economist.foundation.components.move import SKILL_DISTS
from ai_economist.foundation.components.param_checks import (
    check_choice,
    check_integer,
    check_number,
)


def draw_build_skill(
    rng: np.random.Generator, skill_dist: str, payment_max_skill_multiplier: float
) -> tuple[float, float]:
    """One agent's build ``(skill, pay rate)``: skill ~ Pareto(4) (``"pareto"``) or
    LogNormal(-1, 0.5) (``"lognormal"``), pay rate ``min(m, (m - 1) * skill + 1)`` for
    ``m = payment_max_skill_multiplier``; ``(1, 1)`` for ``"none"``."""
    if skill_dist == "none":
        return 1.0, 1.0
    pmsm = payment_max_skill_multiplier
    skill = float(rng.pareto(4) if skill_dist == "pareto" else rng.lognormal(-1, 0.5))
    return skill, min(pmsm, (pmsm - 1) * skill + 1)


@component_registry.add
class Build(BaseComponent):
    """Build houses for income (``component_type="Build"``).

    Args:
        payment: coin earned per house at skill multiplier 1 (int >= 0).
        payment_max_skill_multiplier: the largest pay multiplier a skill can give (int >= 1).
        skill_dist: ``"none"``, ``"pareto"`` or ``"lognormal"``.
        build_labor: labour added per house (>= 0).
    """

    name = "Build"
    component_type = "Build"
    required_entities = ["Wood", "Stone", "Coin", "House", "Labor"]
    agent_subclasses = ["BasicMobileAgent"]

    def __init__(
        self,
        *base_component_args: Any,
        payment: int = 10,
        payment_max_skill_multiplier: int = 1,
        skill_dist: str = "none",
        build_labor: float = 10.0,
        **base_component_kwargs: Any,
    ) -> None:
        super().__init__(*base_component_args, **base_component_kwargs)
        self.payment = check_integer(self.name, "payment", payment, 0)
        self.payment_max_skill_multiplier = check_integer(
            self.name, "payment_max_skill_multiplier", payment_max_skill_multiplier, 1
        )
        self.skill_dist = check_choice(self.name, "skill_dist", skill_dist, SKILL_DISTS)
        self.build_labor = check_number(self.name, "build_labor", build_labor, 0.0)
        self.resource_cost = {"Wood": 1, "Stone": 1}
        self.sampled_skills: dict[int, float] = {}
        self.builds: list[list[dict[str, Any]]] = []

    def agent_can_build(self, agent: Any) -> bool:
        """Whether ``agent`` holds the resources and stands on a cell free of resources and landmarks."""
        inventory = agent.state["inventory"]
        for resource, cost in self.resource_cost.items():
            if inventory[resource] < cost:
                return False
        r, c = agent.state["loc"]
        return self.world.location_is_clear(r, c)

    # ----------------------------------------------------------------- contract
    def get_n_actions(self, agent_cls_name: str) -> int | None:
        """One action (build) for mobile agents."""
        return 1 if agent_cls_name == "BasicMobileAgent" else None

    def get_additional_state_fields(self, agent_cls_name: str) -> dict[str, Any]:
        """Mobile agents get ``build_payment`` and ``build_skill``."""
        if agent_cls_name != "BasicMobileAgent":
            return {}
        return {"build_payment": float(self.payment), "build_skill": 1}

    def component_step(self) -> None:
        """Build for every agent that chose to and can (random order)."""
        world = self._world
        builds: list[dict[str, Any]] = []
        name = self.name
        for agent in world.agents:
            if agent.action.get(name):
                break
        else:
            self.builds.append(builds)  # nobody builds: no random order needed
            return
        for agent in world.get_random_order_agents():
            action = agent.action.get(self.name)
            if not action:
                continue
            if action != 1:
                raise ValueError(
                    f"Build: action {action} of agent {agent.idx} is out of range 0..1"
                )
            if not self.agent_can_build(agent):
                continue
            for resource, cost in self.resource_cost.items():
                agent.state["inventory"][resource] -= cost
            r, c = agent.state["loc"]
            world.create_landmark("House", r, c, agent.idx)
            agent.state["inventory"]["Coin"] += agent.state["build_payment"]
            agent.state["endogenous"]["Labor"] += self.build_labor
            builds.append(
                {
                    "builder": agent.idx,
                    "loc": np.array([r, c]),
                    "income": float(agent.state["build_payment"]),
                }
            )
        self.builds.append(builds)

    def generate_observations(self) -> dict[int, dict[str, Any]]:
        """Agents observe ``build_payment / payment`` and their sampled skill."""
        scale = self.payment if self.payment > 0 else 1
        return {
            agent.idx: {
                "build_payment": agent.state["build_payment"] / scale,
                "build_skill": self.sampled_skills[agent.idx],
            }
            for agent in self.world.agents
        }

    def observation_writer(self, slots: Any) -> Any:
        """Direct-path writer of :meth:`generate_observations` (``base/direct_obs.py``)."""
        agents = self.world.agents
        slots.scalars([(str(a.idx), f) for a in agents for f in ("build_payment", "build_skill")])
        idxs = [a.idx for a in agents]

        def write(buf: np.ndarray, scalars: list, outs: dict) -> None:
            scale = self.payment if self.payment > 0 else 1
            skills = self.sampled_skills
            for agent, idx in zip(agents, idxs):
                scalars.append(agent.state["build_payment"] / scale)
                scalars.append(skills[idx])

        return write

    def generate_masks(self, completions: int = 0) -> dict[int, np.ndarray]:
        """Build is allowed exactly when :meth:`agent_can_build`."""
        return {
            agent.idx: np.array([self.agent_can_build(agent)], dtype=np.float32)
            for agent in self.world.agents
        }

    def mask_writer(self, slots: Any) -> Any:
        """Direct-path writer of :meth:`generate_masks` (``base/direct_masks.py``)."""
        agents = self.world.agents
        where = np.concatenate([slots.positions(str(a.idx)) for a in agents]).tolist()
        if len(where) != len(agents):
            return None

        def write_own_rule(buf: np.ndarray, completions: int) -> None:
            for position, agent in zip(where, agents):
                if self.agent_can_build(agent):
                    buf[position] = 1.0

        if type(self).agent_can_build is not Build.agent_can_build:
            return write_own_rule  # a subclass's own build rule: asked per agent

        def write(buf: np.ndarray, completions: int) -> None:
            # the buffer starts at zeros here: store only the allowed builds
            if "agent_can_build" in self.__dict__:  # replaced on the instance
                write_own_rule(buf, completions)
                return
            # agent_can_build, inlined: the resources first (most agents lack them)
            costs, world = self.resource_cost.items(), self.world
            for position, agent in zip(where, agents):
                inventory = agent.state["inventory"]
                for resource, cost in costs:
                    if inventory[resource] < cost:
                        break
                else:
                    r, c = agent.state["loc"]
                    if world.location_is_clear(r, c):
                        buf[position] = 1.0

        return write

    # ----------------------------------------------------------------- optional
    def get_metrics(self) -> dict[str, Any]:
        """``<idx>/n_builds`` per agent and ``total_builds`` (house cells on the map)."""
        counts = {agent.idx: 0 for agent in self.world.agents}
        for builds in self.builds:
            for build in builds:
                counts[build["builder"]] += 1
        metrics: dict[str, Any] = {f"{idx}/n_builds": n for idx, n in counts.items()}
        metrics["total_builds"] = int(np.sum(self.world.maps.get("House") > 0))
        return metrics

    def additional_reset_steps(self) -> None:
        """Re-sample skills and build payments; clear the build log."""
        rng = self.world.rng
        pmsm = self.payment_max_skill_multiplier
        self.sampled_skills = {}
        for agent in self.world.agents:
            skill, pay_rate = draw_build_skill(rng, self.skill_dist, pmsm)
            agent.state["build_payment"] = float(pay_rate * self.payment)
            agent.state["build_skill"] = float(skill)
            self.sampled_skills[agent.idx] = skill
        self.builds = []

    def get_dense_log(self) -> list[list[dict[str, Any]]]:
        """Per step, the builds ``{builder, loc, income}``."""
        return self.builds

"""``SimpleLabor``: agents choose hours of work (1..100) and earn ``hours * skill`` coin."""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.base.base_component import BaseComponent, component_registry

NUM_LABOR_HOURS = 100
SKILL_SAMPLES = 1000


def pareto_skills(
    n_agents: int,
    payment_max_skill_multiplier: float,
    pareto_param: float,
    rng: np.random.Generator,
    n_samples: int = SKILL_SAMPLES,
) -> np.ndarray:
    """Skills in ascending order: the mean of the i-th smallest of ``n_agents`` clipped draws.

    Each draw is ``min(pmsm, (pmsm - 1) * x + 1)`` with ``x`` from numpy's ``pareto``
    (Lomax) of shape ``pareto_param``; ``n_samples`` rows of ``n_agents`` draws.
    """
    samples = rng.pareto(pareto_param, size=(n_samples, n_agents))
    pmsm = payment_max_skill_multiplier
    clipped = np.minimum(pmsm, (pmsm - 1) * samples + 1)
    return np.sort(clipped, axis=1).mean(axis=0)


def labor_step(
    actions: Any, skills: Any, coin: Any, labor: Any, production: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Apply labour actions (0 = NO-OP, h = work h hours) to ``(coin, labor, production)``.

    An agent that works sets its ``Labor`` to ``h`` (set, not added) and earns ``h * skill``
    coin, also added to its ``production``. Agents on the last axis; new arrays returned.
    """
    actions = np.asarray(actions)
    works = actions > 0
    pay = np.where(works, actions * np.asarray(skills, dtype=np.float64), 0.0)
    new_labor = np.where(works, actions.astype(np.float64), labor)
    return (
        np.asarray(coin, dtype=np.float64) + pay,
        new_labor,
        np.asarray(production, dtype=np.float64) + pay,
    )


@component_registry.add
class SimpleLabor(BaseComponent):
    """Mobile agents choose how many hours to work; income = hours x skill.

    Args:
        mask_first_step: mask every labour action on an episode's first step (the one-step
            economy uses that step for the planner's taxes).
        payment_max_skill_multiplier: the highest skill (skills are clipped to it).
        pareto_param: shape of the Pareto skill distribution (1.7.1 ignored it and used 4).
    """

    name = "SimpleLabor"
    required_entities = ["Coin"]
    agent_subclasses = ["BasicMobileAgent"]

    def __init__(
        self,
        *base_component_args: Any,
        mask_first_step: bool = True,
        payment_max_skill_multiplier: float = 3,
        pareto_param: float = 4.0,
        **base_component_kwargs: Any,
    ) -> None:
        super().__init__(*base_component_args, **base_component_kwargs)
        if not isinstance(mask_first_step, (bool, np.bool_)):
            raise TypeError(f"mask_first_step must be a bool, got {mask_first_step!r}")
        self.mask_first_step = bool(mask_first_step)
        self.num_labor_hours = NUM_LABOR_HOURS
        self.payment_max_skill_multiplier = float(payment_max_skill_multiplier)
        if not self.payment_max_skill_multiplier > 1:
            raise ValueError(
                f"payment_max_skill_multiplier must be > 1, got {payment_max_skill_multiplier!r}"
            )
        self.pareto_param = float(pareto_param)
        if not self.pareto_param > 0:
            raise ValueError(f"pareto_param must be > 0, got {pareto_param!r}")
        self.skills = pareto_skills(
            self.n_agents, self.payment_max_skill_multiplier, self.pareto_param, self.world.rng
        )
        self._mask_on = np.ones(NUM_LABOR_HOURS, dtype=np.float32)
        self._mask_off = np.zeros(NUM_LABOR_HOURS, dtype=np.float32)

    def get_n_actions(self, agent_cls_name: str) -> int | None:
        """100 actions (hours) for mobile agents."""
        return NUM_LABOR_HOURS if agent_cls_name == "BasicMobileAgent" else None

    def get_additional_state_fields(self, agent_cls_name: str) -> dict[str, Any]:
        """``skill`` and ``production`` (pre-tax income) for mobile agents."""
        return {"skill": 0, "production": 0} if agent_cls_name == "BasicMobileAgent" else {}

    def additional_reset_steps(self) -> None:
        """Give every agent its fixed skill (agent ``i`` has the ``i``-th lowest)."""
        for agent in self.world.agents:
            agent.state["skill"] = float(self.skills[agent.idx])

    def component_step(self) -> None:
        """Pay each working agent ``hours * skill`` and record its labour."""
        agents = self.world.agents
        actions = self.get_agent_actions()
        if np.any((actions < 0) | (actions > NUM_LABOR_HOURS)):
            raise ValueError(
                f"SimpleLabor actions must be in 0..{NUM_LABOR_HOURS}, got {actions.tolist()}"
            )
        coin, labor, production = labor_step(
            actions,
            [a.state["skill"] for a in agents],
            [a.state["inventory"]["Coin"] for a in agents],
            [a.state["endogenous"]["Labor"] for a in agents],
            [a.state["production"] for a in agents],
        )
        for i in np.flatnonzero(actions):
            agent = agents[i]
            agent.state["inventory"]["Coin"] = float(coin[i])
            agent.state["endogenous"]["Labor"] = float(labor[i])
            agent.state["production"] = float(production[i])

    def generate_observations(self) -> dict[str, dict[str, float]]:
        """Each agent sees its skill divided by the maximum skill."""
        pmsm = self.payment_max_skill_multiplier
        return {str(a.idx): {"skill": a.state["skill"] / pmsm} for a in self.world.agents}

    def generate_masks(self, completions: int = 0) -> dict[int, np.ndarray]:
        """All hours allowed, except on the first step when ``mask_first_step``."""
        mask = (
            self._mask_off if self.mask_first_step and self.world.timestep == 0 else self._mask_on
        )
        return {a.idx: mask for a in self.world.agents}

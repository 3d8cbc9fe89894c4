"""A small uncollated Foundation scenario for the adapter tests, and short COVID-19 configs.

``adapters-toy``: 3 mobile agents and a planner, per-agent (uncollated) observations, a
planner in multi-action mode with two sub-spaces, masks that change every step and coins
drawn from ``env.rng`` (so seeding matters), and agent-wise planner observations (``"p0"``..).
"""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist.foundation.base.base_component import BaseComponent, component_registry
from ai_economist.foundation.base.base_env import BaseEnvironment, scenario_registry
from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG, env_config

TOY = "adapters-toy"


@component_registry.add
class AdaptersToyDial(BaseComponent):
    """Agents set a dial to 1..3 (not to the value it already has); the planner picks a
    rate (1..2) and a bonus (1..3, bonus 1 allowed on even steps only)."""

    name = "AdaptersToyDial"
    agent_subclasses = ["BasicMobileAgent", "BasicPlanner"]
    required_entities: list[str] = []

    def get_n_actions(self, agent_cls_name):
        if agent_cls_name == "BasicMobileAgent":
            return 3
        return [("rate", 2), ("bonus", 3)]

    def get_additional_state_fields(self, agent_cls_name):
        return {"dial": 0} if agent_cls_name == "BasicMobileAgent" else {"rate": 0}

    def component_step(self):
        for agent in self.world.agents:
            action = agent.get_component_action(self.name)
            if action:
                agent.state["dial"] = action
        rate = self.world.planner.get_component_action(self.name, "rate")
        if rate:
            self.world.planner.state["rate"] = rate

    def generate_observations(self):
        obs = {a.idx: {"dial": a.state["dial"]} for a in self.world.agents}
        obs["p"] = {"dials": np.array([a.state["dial"] for a in self.world.agents])}
        for a in self.world.agents:  # agent-wise planner observations
            obs[f"p{a.idx}"] = {"seen": a.state["dial"] * 10}
        return obs

    def generate_masks(self, completions=0):
        masks = {
            a.idx: np.array([k != a.state["dial"] for k in (1, 2, 3)], dtype=np.float32)
            for a in self.world.agents
        }
        even = float(self.world.timestep % 2 == 0)
        masks["p"] = {"rate": np.ones(2), "bonus": np.array([even, 1.0, 1.0])}
        return masks


@scenario_registry.add
class AdaptersToyScenario(BaseEnvironment):
    """Every step each agent finds 0..2 coins (from env.rng) plus its dial; reward = coins."""

    name = TOY
    agent_subclasses = ["BasicMobileAgent", "BasicPlanner"]
    required_entities: list[str] = []

    def reset_starting_layout(self):
        pass

    def reset_agent_states(self):
        for agent in self.world.agents:
            agent.state["inventory"]["Coin"] = 0
            agent.state["dial"] = 0

    def scenario_step(self):
        found = self.world.rng.integers(0, 3, self.n_agents)
        for agent, k in zip(self.world.agents, found.tolist()):
            agent.state["inventory"]["Coin"] += k + agent.state["dial"]

    def generate_observations(self):
        obs = {
            a.idx: {"coin": a.inventory["Coin"], "loc": np.array([a.idx, 0])}
            for a in self.world.agents
        }
        obs["p"] = {"total": float(sum(a.inventory["Coin"] for a in self.world.agents))}
        return obs

    def compute_reward(self):
        rew = {a.idx: float(a.inventory["Coin"]) for a in self.world.agents}
        rew["p"] = float(sum(rew.values()))
        return rew


def toy_config(**overrides):
    """Keyword arguments of the toy scenario (3 agents, 6 steps)."""
    config = dict(
        components=[("AdaptersToyDial", {})],
        n_agents=3,
        world_size=[2, 2],
        episode_length=6,
        allow_observation_scaling=False,
        seed=0,
    )
    config.update(overrides)
    return config


def covid_config(**overrides):
    """The published COVID-19 training config, shortened (overrides applied)."""
    return env_config(TRAINING_ENV_CONFIG, **{"episode_length": 40, **overrides})


@pytest.fixture
def toy():
    return toy_config


@pytest.fixture
def covid():
    return covid_config

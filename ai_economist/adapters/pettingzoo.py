"""A PettingZoo ``ParallelEnv`` for any Foundation scenario.

Example::

    from ai_economist.adapters.pettingzoo import parallel_env
    from ai_economist.foundation.scenarios.covid19.configs import TUTORIAL_ENV_CONFIG, env_config

    env = parallel_env("CovidAndEconomySimulation", **env_config(TUTORIAL_ENV_CONFIG))
    obs, infos = env.reset(seed=0)
    while env.agents:
        actions = {a: env.action_space(a).sample(infos[a]["action_mask"]) for a in env.agents}
        obs, rewards, terminations, truncations, infos = env.step(actions)

Agents are ``"0".."n-1"`` (mobile agents, the US states in COVID-19) and ``"p"`` (the planner).
Each observation is ``{"observation": float32 vector, "action_mask": int8 mask}`` (PettingZoo's
masking convention, as in its classic games); the vector is the agent's Foundation
observation flattened as :mod:`ai_economist.adapters.core` describes, and ``infos[agent]``
holds the same ``action_mask``. Every agent ends together after ``episode_length`` steps with
``terminations`` True (time is part of the observation, so the horizon is part of the task).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from ai_economist.adapters.core import OBS_BOUND, FoundationAgents, make_scenario


class FoundationParallelEnv(ParallelEnv):
    """PettingZoo ``ParallelEnv`` over a Foundation scenario (see the module docstring).

    Args:
        scenario_name: a registered Foundation scenario (e.g. ``"CovidAndEconomySimulation"``).
        masked_actions: ``"raise"`` (an action the mask forbids raises ``ActionMaskError``) or
            ``"noop"`` (it becomes the agent's NO-OP).
        **env_config: the scenario's keyword arguments.
    """

    metadata = {"name": "ai_economist_foundation_v0", "render_modes": []}

    def __init__(self, scenario_name: str, masked_actions: str = "raise", **env_config: Any):
        self.env = make_scenario(scenario_name, env_config)
        self.scenario_name = self.env.name
        self._raw_obs = self.env.reset()
        self.foundation_agents = FoundationAgents(self.env, self._raw_obs, masked_actions)
        self.possible_agents = list(self.foundation_agents.agent_ids)
        self.agents: list[str] = []
        self.render_mode = None
        self._masks: dict[str, Any] = {}
        self._vectors: dict[str, np.ndarray] = self.foundation_agents.observations(self._raw_obs)
        self.observation_spaces = {
            k: spaces.Dict(
                {
                    "observation": self.foundation_agents.observation_spaces[k],
                    "action_mask": self.foundation_agents.mask_spaces[k],
                }
            )
            for k in self.possible_agents
        }
        self.action_spaces = dict(self.foundation_agents.action_spaces)
        state_dim = sum(self.foundation_agents.obs_dim(k) for k in self.possible_agents)
        self.state_space = spaces.Box(-OBS_BOUND, OBS_BOUND, (state_dim,), np.float32)

    def observation_space(self, agent: str) -> spaces.Dict:
        """``Dict(observation=Box, action_mask=MultiBinary)`` of ``agent`` (the same object
        at every call, as PettingZoo's tests require)."""
        return self.observation_spaces[self.foundation_agents.check_agent(agent)]

    def action_space(self, agent: str) -> spaces.Space:
        """``Discrete`` (single-action mode) or ``MultiDiscrete`` of ``agent``."""
        return self.action_spaces[self.foundation_agents.check_agent(agent)]

    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode; ``seed`` re-seeds the scenario's generator."""
        if seed is not None:
            self.env.seed(seed)
        self.agents = list(self.possible_agents)
        return self._package(self.env.reset())

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """One step of every agent; a missing agent takes the NO-OP.

        Raises:
            RuntimeError: no live agents (call ``reset()``).
            UnknownAgentError, ActionMaskError, ValueError: see ``FoundationAgents.to_foundation``.
        """
        if not self.agents:
            raise RuntimeError("the episode is over (env.agents is empty): call reset() first")
        raw_obs, rew, done, _ = self.env.step(
            self.foundation_agents.to_foundation(actions, self._masks)
        )
        obs, infos = self._package(raw_obs)
        over = bool(done["__all__"])
        terminations = dict.fromkeys(self.agents, over)
        truncations = dict.fromkeys(self.agents, False)
        rewards = self.foundation_agents.rewards(rew)
        if over:
            self.agents = []
        return obs, rewards, terminations, truncations, infos

    def _package(self, raw_obs: dict) -> tuple[dict[str, Any], dict[str, Any]]:
        self._vectors = vectors = self.foundation_agents.observations(raw_obs)
        self._masks = self.foundation_agents.masks(raw_obs)
        obs = {
            k: {"observation": vectors[k], "action_mask": self._masks[k]}
            for k in self.possible_agents
        }
        infos = {k: {"action_mask": self._masks[k]} for k in self.possible_agents}
        return obs, infos

    def state(self) -> np.ndarray:
        """Every agent's observation vector, concatenated in ``possible_agents`` order (in
        ``state_space``)."""
        return np.concatenate([self._vectors[k] for k in self.possible_agents])

    def close(self) -> None:
        """Nothing to release."""


def parallel_env(
    scenario_name: str, masked_actions: str = "raise", **env_config: Any
) -> FoundationParallelEnv:
    """A PettingZoo ``ParallelEnv`` of the Foundation scenario ``scenario_name``.

    Raises:
        UnknownScenarioError: the name is not registered (the message lists close matches).
    """
    return FoundationParallelEnv(scenario_name, masked_actions=masked_actions, **env_config)

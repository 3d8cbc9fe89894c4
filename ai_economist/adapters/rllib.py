"""An RLlib ``MultiAgentEnv`` for any Foundation scenario (install the extra ``rllib``).

Example (PPO, one policy for the mobile agents and one for the planner)::

    from ray.rllib.algorithms.ppo import PPOConfig
    from ai_economist.adapters.rllib import FoundationMultiAgentEnv, multi_agent_config
    from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG

    env_config = dict(TRAINING_ENV_CONFIG, episode_length=60)
    config = (
        PPOConfig()
        .environment(FoundationMultiAgentEnv, env_config=env_config)
        .multi_agent(**multi_agent_config())
    )
    algo = config.build_algo()
    print(algo.train()["env_runners"]["episode_return_mean"])

Agents are ``"0".."n-1"`` and ``"p"`` with flat float32 observations (layout in
:mod:`ai_economist.adapters.core`); :func:`policy_mapping_fn` sends the mobile agents to the
shared policy ``"a"`` and the planner to ``"p"``, the two policies of the original's COVID-19
training. RLlib's default models do not read action masks, so an action the mask forbids is the
agent's NO-OP here (``masked_actions="noop"``); ``infos[agent]["action_mask"]`` has the mask.
"""

from __future__ import annotations

import warnings
from typing import Any

from ray.rllib.env.multi_agent_env import MultiAgentEnv

from ai_economist.adapters.core import PLANNER, FoundationAgents, make_scenario

STATES_POLICY = "a"
PLANNER_POLICY = "p"
_DEPRECATED_DEFAULT = "CovidAndEconomySimulation"  # the 2.0 default scenario_name, deprecated


def policy_mapping_fn(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """``"p"`` for the planner, ``"a"`` (the shared mobile-agent policy) for everyone else."""
    return PLANNER_POLICY if str(agent_id) == PLANNER else STATES_POLICY


def multi_agent_config() -> dict[str, Any]:
    """Keyword arguments of ``AlgorithmConfig.multi_agent`` for the two policies."""
    return {
        "policies": {STATES_POLICY, PLANNER_POLICY},
        "policy_mapping_fn": policy_mapping_fn,
    }


class FoundationMultiAgentEnv(MultiAgentEnv):
    """A Foundation scenario as an RLlib ``MultiAgentEnv``.

    Args:
        config: the scenario's keyword arguments plus ``scenario_name`` (a registered
            Foundation scenario; the published configs carry theirs) and optionally
            ``masked_actions`` (``"noop"`` by default, or ``"raise"``). RLlib passes its
            ``env_config`` here. Without ``scenario_name`` it is ``_DEPRECATED_DEFAULT``, with a
            DeprecationWarning, for one release.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        scenario_name = config.pop("scenario_name", None)
        if scenario_name is None:
            scenario_name = _DEPRECATED_DEFAULT
            warnings.warn(
                f"FoundationMultiAgentEnv without config['scenario_name'] is deprecated; it means "
                f"{_DEPRECATED_DEFAULT!r} for one release, then it is required",
                DeprecationWarning,
                stacklevel=2,
            )
        masked_actions = config.pop("masked_actions", "noop")
        self.env = make_scenario(scenario_name, config)
        first_obs = self.env.reset()
        self.foundation_agents = FoundationAgents(self.env, first_obs, masked_actions)
        self.possible_agents = list(self.foundation_agents.agent_ids)
        self.agents = list(self.possible_agents)
        self.observation_spaces = dict(self.foundation_agents.observation_spaces)
        self.action_spaces = dict(self.foundation_agents.action_spaces)
        self._masks = self.foundation_agents.masks(first_obs)

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode; ``seed`` re-seeds the scenario's generator."""
        super().reset(seed=seed, options=options)
        if seed is not None:
            self.env.seed(seed)
        self.agents = list(self.possible_agents)
        return self._package(self.env.reset())

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """One step of every agent (a missing agent takes the NO-OP)."""
        checked = self.foundation_agents.to_foundation(action_dict, self._masks)
        raw_obs, rew, done, _ = self.env.step(checked)
        obs, infos = self._package(raw_obs)
        over = bool(done["__all__"])
        terminateds = dict.fromkeys(self.possible_agents, over)
        terminateds["__all__"] = over
        truncateds = dict.fromkeys(self.possible_agents, False)
        truncateds["__all__"] = False
        if over:
            self.agents = []
        return obs, self.foundation_agents.rewards(rew), terminateds, truncateds, infos

    def _package(self, raw_obs: dict) -> tuple[dict[str, Any], dict[str, Any]]:
        self._masks = self.foundation_agents.masks(raw_obs)
        infos = {k: {"action_mask": self._masks[k]} for k in self.possible_agents}
        return self.foundation_agents.observations(raw_obs), infos

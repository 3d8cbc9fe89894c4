"""The planner of any Foundation scenario alone, as a single-agent ``gymnasium.Env``, facing
mobile agents that follow a fixed or scripted policy.

Observation: the planner's Foundation observation as one float32 vector (layout in
:mod:`ai_economist.adapters.core`); action: the planner's action space; reward: the planner's
reward. ``info["action_mask"]`` is the planner's int8 mask; a masked planner action is the NO-OP
(``masked_actions="noop"``, the default, so unmasked samplers such as Gymnasium's checker work)
or an ``ActionMaskError`` (``"raise"``). Episodes end after ``episode_length`` steps with
``terminated`` True. The mobile agents need one ``Discrete`` action space and one observation
size (as in every scenario here).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium
import numpy as np

from ai_economist.adapters.core import (
    PLANNER,
    FoundationAgents,
    check_masked_actions,
    make_scenario,
)

AgentsPolicy = int | np.ndarray | Callable[[int, np.ndarray], Any]


class PlannerEnv(gymnasium.Env):
    """The planner of the Foundation scenario ``scenario_name`` as a single-agent Gymnasium env.

    Args:
        scenario_name: a registered Foundation scenario.
        env_config: its keyword arguments.
        agents_policy: what the mobile agents do each step: an int (that action for every agent
            whenever its mask allows, else the NO-OP), an int array
            ``(episode_length, n_agents)`` of scripted actions (masked entries become the
            NO-OP), or a callable ``(timestep, obs_agents (n_agents, obs_dim)) -> n_agents
            actions``.
        masked_actions: ``"noop"`` or ``"raise"`` for the planner's masked actions.
    """

    policy_name = "agents_policy"  # the argument's name in error messages

    metadata = {"render_modes": []}

    def __init__(
        self,
        scenario_name: str,
        env_config: Mapping[str, Any],
        agents_policy: AgentsPolicy = 0,
        masked_actions: str = "noop",
    ) -> None:
        self.env = make_scenario(scenario_name, env_config)
        first_obs = self.env.reset()
        self.foundation_agents = FoundationAgents(
            self.env, first_obs, check_masked_actions(masked_actions)
        )
        self.mobile_agents = [k for k in self.foundation_agents.agent_ids if k != PLANNER]
        self.agents_policy = self._check_agents_policy(agents_policy)
        self.observation_space = self.foundation_agents.observation_spaces[PLANNER]
        self.action_space = self.foundation_agents.action_spaces[PLANNER]
        self._masks = self.foundation_agents.masks(first_obs)
        self._vectors = self.foundation_agents.observations(first_obs)
        self._started = False

    def _check_agents_policy(self, policy: Any) -> Any:
        n_actions = self.foundation_agents.action_spaces[self.mobile_agents[0]].n
        if callable(policy):
            return policy
        if isinstance(policy, (int, np.integer)) and not isinstance(policy, bool):
            if not 0 <= policy < n_actions:
                raise ValueError(f"{self.policy_name} must be in 0..{n_actions - 1}, got {policy}")
            return int(policy)
        arr = np.asarray(policy)
        shape = (self.env.episode_length, len(self.mobile_agents))
        if arr.dtype.kind not in "iu" or arr.shape != shape:
            raise ValueError(
                f"{self.policy_name} must be an int, a callable or an int array of shape {shape} "
                f"(episode_length, agents), got {type(policy).__name__} {getattr(arr, 'shape', '')}"
            )
        if arr.min() < 0 or arr.max() >= n_actions:
            raise ValueError(f"states_policy actions must be in 0..{n_actions - 1}")
        return arr

    def _agent_actions(self) -> np.ndarray:
        t = self.env.world.timestep
        policy = self.agents_policy
        if isinstance(policy, int):
            wanted = np.full(len(self.mobile_agents), policy)
        elif isinstance(policy, np.ndarray):
            wanted = policy[t]
        else:
            obs = np.stack([self._vectors[k] for k in self.mobile_agents])
            wanted = np.asarray(policy(t, obs))
        n_actions = self.foundation_agents.action_spaces[self.mobile_agents[0]].n
        if (
            wanted.shape != (len(self.mobile_agents),)
            or wanted.dtype.kind not in "iu"
            or wanted.min() < 0
            or wanted.max() >= n_actions
        ):
            raise ValueError(
                f"{self.policy_name} must give {len(self.mobile_agents)} ints in 0..{n_actions - 1} at "
                f"timestep {t}, got {wanted.dtype} {wanted.shape}: {wanted.reshape(-1)[:6]}"
            )
        allowed = np.array([self._masks[k][a] for k, a in zip(self.mobile_agents, wanted.tolist())])
        return np.where(allowed > 0, wanted, 0)

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict]:
        """Start an episode (the model is deterministic; ``seed`` seeds ``np_random``)."""
        super().reset(seed=seed)
        if seed is not None:
            self.env.seed(seed)
        self._started = True
        return self._package(self.env.reset())[0], {"action_mask": self._masks[PLANNER]}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """One step: the planner's ``action``, the mobile agents' scripted actions
        (``info["agents_actions"]``)."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        agent_actions = self._agent_actions()
        actions = {k: int(a) for k, a in zip(self.mobile_agents, agent_actions.tolist())}
        actions[PLANNER] = action
        checked = self.foundation_agents.to_foundation(actions, self._masks)
        masked = self._is_masked(action, self._masks[PLANNER])
        raw_obs, rew, done, _ = self.env.step(checked)
        obs, info = self._package(raw_obs)
        info["masked_action"] = bool(masked)
        info["agents_actions"] = agent_actions
        terminated = bool(done["__all__"])
        if terminated:
            self._started = False
            info["episode_metrics"] = dict(self.env.previous_episode_metrics or {})
        return obs, self.foundation_agents.rewards(rew)[PLANNER], terminated, False, info

    @staticmethod
    def _is_masked(action: Any, mask: Any) -> bool:
        """Whether the (checked) planner ``action`` is one its mask forbids (a tuple of masks
        in multi-action mode)."""
        values = np.asarray(action).reshape(-1).astype(np.int64)
        if isinstance(mask, tuple):
            return any(m[a] == 0 for m, a in zip(mask, values.tolist()))
        return bool(mask[int(values[0])] == 0)

    def _package(self, raw_obs: dict) -> tuple[np.ndarray, dict]:
        self._vectors = self.foundation_agents.observations(raw_obs)
        self._masks = self.foundation_agents.masks(raw_obs)
        return self._vectors[PLANNER], {"action_mask": self._masks[PLANNER]}

"""The federal planner of COVID-19 alone, as a single-agent ``gymnasium.Env``, facing states
that follow a fixed or scripted policy; registered as ``ai_economist/CovidPlanner-v0`` by this
package (see its docstring)::

    import gymnasium
    import ai_economist.foundation.scenarios.covid19.adapters  # registers the id

    env = gymnasium.make("ai_economist/CovidPlanner-v0", states_policy=1, episode_length=60)

It takes the published training configuration (``configs.TRAINING_ENV_CONFIG``) with keyword
overrides, and ends every episode after ``episode_length`` days with ``terminated`` True.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np

from ai_economist.adapters.core import (
    PLANNER,
    FoundationAgents,
    check_masked_actions,
    make_scenario,
)
from ai_economist.foundation.scenarios.covid19.adapters import ENV_ID

__all__ = ["ENV_ID", "SCENARIO", "CovidPlannerEnv", "StatesPolicy", "covid_config"]

SCENARIO = "CovidAndEconomySimulation"

StatesPolicy = int | np.ndarray | Callable[[int, np.ndarray], Any]


def covid_config(**overrides: Any) -> dict[str, Any]:
    """The published COVID-19 training env config with ``overrides`` applied."""
    from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG, env_config

    return env_config(TRAINING_ENV_CONFIG, **overrides)


class CovidPlannerEnv(gymnasium.Env):
    """The federal planner of COVID-19 and the economy as a single-agent Gymnasium env.

    Observation: the planner's Foundation observation as one float32 vector (layout in
    :mod:`ai_economist.adapters.core`). Action: ``Discrete(1 + subsidy levels)``, 0 = NO-OP.
    Reward: the planner's reward (social welfare). ``info["action_mask"]`` is the planner's
    int8 mask: subsidy levels are read only on the first day of each subsidy interval; on other
    days an action the mask forbids is the NO-OP (``masked_actions="noop"``, the default, so
    unmasked samplers such as Gymnasium's checker work) or an ``ActionMaskError`` (``"raise"``).

    Args:
        states_policy: what the 51 states do each day: an int (that action for every state
            whenever its mask allows, else the NO-OP; 0 = keep the current stringency, 1..10
            = that stringency level), an int array ``(episode_length, 51)`` of scripted
            actions (masked entries become the NO-OP), or a callable
            ``(timestep, obs_states (51, obs_dim)) -> 51 actions``.
        masked_actions: ``"noop"`` or ``"raise"`` for the planner's masked actions.
        **env_config: overrides of the published training config (e.g. ``episode_length``).
    """

    metadata = {"render_modes": []}

    def __init__(
        self, states_policy: StatesPolicy = 0, masked_actions: str = "noop", **env_config: Any
    ) -> None:
        self.env = make_scenario(SCENARIO, covid_config(**env_config))
        first_obs = self.env.reset()
        self.foundation_agents = FoundationAgents(
            self.env, first_obs, check_masked_actions(masked_actions)
        )
        self.states = [k for k in self.foundation_agents.agent_ids if k != PLANNER]
        self.states_policy = self._check_states_policy(states_policy)
        self.observation_space = self.foundation_agents.observation_spaces[PLANNER]
        self.action_space = self.foundation_agents.action_spaces[PLANNER]
        self._masks = self.foundation_agents.masks(first_obs)
        self._vectors = self.foundation_agents.observations(first_obs)
        self._started = False

    def _check_states_policy(self, policy: Any) -> Any:
        n_actions = self.foundation_agents.action_spaces["0"].n
        if callable(policy):
            return policy
        if isinstance(policy, (int, np.integer)) and not isinstance(policy, bool):
            if not 0 <= policy < n_actions:
                raise ValueError(f"states_policy must be in 0..{n_actions - 1}, got {policy}")
            return int(policy)
        arr = np.asarray(policy)
        shape = (self.env.episode_length, len(self.states))
        if arr.dtype.kind not in "iu" or arr.shape != shape:
            raise ValueError(
                f"states_policy must be an int, a callable or an int array of shape {shape} "
                f"(episode_length, states), got {type(policy).__name__} {getattr(arr, 'shape', '')}"
            )
        if arr.min() < 0 or arr.max() >= n_actions:
            raise ValueError(f"states_policy actions must be in 0..{n_actions - 1}")
        return arr

    def _state_actions(self) -> np.ndarray:
        t = self.env.world.timestep
        policy = self.states_policy
        if isinstance(policy, int):
            wanted = np.full(len(self.states), policy)
        elif isinstance(policy, np.ndarray):
            wanted = policy[t]
        else:
            obs = np.stack([self._vectors[k] for k in self.states])
            wanted = np.asarray(policy(t, obs))
        n_actions = self.foundation_agents.action_spaces["0"].n
        if (
            wanted.shape != (len(self.states),)
            or wanted.dtype.kind not in "iu"
            or wanted.min() < 0
            or wanted.max() >= n_actions
        ):
            raise ValueError(
                f"states_policy must give {len(self.states)} ints in 0..{n_actions - 1} at "
                f"timestep {t}, got {wanted.dtype} {wanted.shape}: {wanted.reshape(-1)[:6]}"
            )
        allowed = np.array([self._masks[k][a] for k, a in zip(self.states, wanted.tolist())])
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
        """One day: the planner's ``action``, the states' scripted actions."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        states = self._state_actions()
        actions = {k: int(a) for k, a in zip(self.states, states.tolist())}
        actions[PLANNER] = action
        checked = self.foundation_agents.to_foundation(actions, self._masks)
        masked = self._masks[PLANNER][int(np.asarray(action).reshape(-1)[0])] == 0
        raw_obs, rew, done, _ = self.env.step(checked)
        obs, info = self._package(raw_obs)
        info["masked_action"] = bool(masked)
        info["states_actions"] = states
        terminated = bool(done["__all__"])
        if terminated:
            self._started = False
            info["episode_metrics"] = dict(self.env.previous_episode_metrics or {})
        return obs, self.foundation_agents.rewards(rew)[PLANNER], terminated, False, info

    def _package(self, raw_obs: dict) -> tuple[np.ndarray, dict]:
        self._vectors = self.foundation_agents.observations(raw_obs)
        self._masks = self.foundation_agents.masks(raw_obs)
        return self._vectors[PLANNER], {"action_mask": self._masks[PLANNER]}

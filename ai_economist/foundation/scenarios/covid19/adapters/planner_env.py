"""Gymnasium adapters of the COVID-19 scenario.

* :class:`CovidPlannerEnv`: the federal planner alone (a single-agent ``gymnasium.Env``) facing
  states that follow a fixed or scripted policy; registered as ``ai_economist/CovidPlanner-v0``
  when this module is imported::

      import gymnasium
      import ai_economist.adapters.gymnasium  # registers the id

      env = gymnasium.make("ai_economist/CovidPlanner-v0", states_policy=1, episode_length=60)

* :class:`CovidVectorEnv`: a ``gymnasium.vector.VectorEnv`` over the batched numpy model
  (``FoundationEnvWrapper(..., env_backend="numpy")``): ``num_envs`` copies of the whole
  scenario stepped at once, with the joint action ``{"a": 51 states, "p": planner}``.

Both take the published training configuration (``configs.TRAINING_ENV_CONFIG``) with keyword
overrides, and end every episode after ``episode_length`` days with ``terminated`` True.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ai_economist.adapters.core import (
    OBS_BOUND,
    PLANNER,
    FoundationAgents,
    check_masked_actions,
    make_scenario,
)
from ai_economist.adapters.errors import ActionMaskError, UnknownAgentError

ENV_ID = "ai_economist/CovidPlanner-v0"
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


class CovidVectorEnv(VectorEnv):
    """``num_envs`` COVID-19 scenarios on the batched numpy model, as a Gymnasium ``VectorEnv``.

    One sub-env is the whole scenario: observation ``{"a": (51, obs_dim_a), "p": (obs_dim_p,)}``
    float32 (the batched model's observation layout, as the trainer sees it), action
    ``{"a": MultiDiscrete([11] * 51), "p": Discrete(21)}``, reward the planner's reward;
    ``infos`` holds ``rewards_a`` ``(num_envs, 51)`` and the int8 masks ``action_mask_a``
    ``(num_envs, 51, 11)`` and ``action_mask_p`` ``(num_envs, 21)``. Every env ends its episode
    on the same step; the next ``step`` resets them all (``AutoresetMode.NEXT_STEP``: its
    actions are ignored, its rewards are 0).

    Args:
        num_envs: number of scenarios stepped together.
        masked_actions: ``"raise"`` (``ActionMaskError``) or ``"noop"`` for masked actions.
        **env_config: overrides of the published training config.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 1, masked_actions: str = "raise", **env_config: Any):
        from ai_economist.foundation.env_wrapper import FoundationEnvWrapper

        self.masked_actions = check_masked_actions(masked_actions)
        self.wrapper = FoundationEnvWrapper(
            make_scenario(SCENARIO, covid_config(**env_config)),
            num_envs=num_envs,
            env_backend="numpy",
        )
        self.num_envs = self.wrapper.num_envs
        specs = self.wrapper.policy_specs
        n_states, n_a, n_p = specs["a"].num_agents, specs["a"].num_actions, specs["p"].num_actions
        self.single_observation_space = spaces.Dict(
            {
                "a": spaces.Box(-OBS_BOUND, OBS_BOUND, (n_states, specs["a"].obs_dim), np.float32),
                "p": spaces.Box(-OBS_BOUND, OBS_BOUND, (specs["p"].obs_dim,), np.float32),
            }
        )
        self.single_action_space = spaces.Dict(
            {"a": spaces.MultiDiscrete([n_a] * n_states), "p": spaces.Discrete(n_p)}
        )
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._started = False
        self._needs_reset = False

    def _pull(self, name: str) -> np.ndarray:
        return np.array(self.wrapper.cuda_data_manager.pull_data_from_device(name))

    def _observe(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        obs = {"a": self._pull("observations_a"), "p": self._pull("observations_p")[:, 0]}
        info = {
            "action_mask_a": (self._pull("action_mask_a") > 0).astype(np.int8),
            "action_mask_p": (self._pull("action_mask_p")[:, 0] > 0).astype(np.int8),
        }
        return obs, info

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Reset every env (the model is deterministic; ``seed`` seeds ``np_random``)."""
        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(
                seed if isinstance(seed, int) else seed[0]
            )
        self.wrapper.reset_all_envs()
        self._started, self._needs_reset = True, False
        return self._observe()

    def step(self, actions: dict[str, Any]) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every env with ``{"a": (num_envs, 51), "p": (num_envs,)}`` (a missing key is
        the NO-OP); after the last day, reset them all instead (see the class docstring)."""
        n = self.num_envs
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._needs_reset:  # every env ended on the last step: reset them (metrics kept)
            self.wrapper.reset_only_done_envs()
            self._needs_reset = False
            obs, info = self._observe()
            zeros = np.zeros(n, bool)
            info["rewards_a"] = np.zeros_like(self._pull("rewards_a"))
            return obs, np.zeros(n, np.float32), zeros, zeros.copy(), info
        self.wrapper.step_all_envs(self._checked(actions))
        obs, info = self._observe()
        info["rewards_a"] = self._pull("rewards_a")
        done = self._pull("_done_").astype(bool)
        self._needs_reset = bool(done.all())
        return obs, self._pull("rewards_p")[:, 0], done, np.zeros(n, bool), info

    def _checked(self, actions: dict[str, Any]) -> dict[str, np.ndarray]:
        if not isinstance(actions, dict):
            raise TypeError(f"actions must be a dict with keys 'a' and 'p', got {type(actions)}")
        unknown = sorted(str(k) for k in actions if k not in ("a", "p"))
        if unknown:
            raise UnknownAgentError(
                f"Unknown key(s) {unknown} in the actions; expected 'a' (states) and 'p' (planner)"
            )
        _, masks = self._observe()
        out = {}
        for tag in ("a", "p"):
            if tag not in actions:
                continue
            arr = np.asarray(actions[tag])
            shape = self.action_space[tag].shape
            if arr.shape != shape or arr.dtype.kind not in "iu":
                raise ValueError(f"actions[{tag!r}] must be ints of shape {shape}, got {arr.shape}")
            mask = masks[f"action_mask_{tag}"]
            if np.any(arr < 0) or np.any(arr >= mask.shape[-1]):
                raise ValueError(f"actions[{tag!r}] must be in 0..{mask.shape[-1] - 1}")
            allowed = np.take_along_axis(mask, arr[..., None], axis=-1)[..., 0] > 0
            if not allowed.all() and self.masked_actions == "raise":
                where = tuple(int(i) for i in np.argwhere(~allowed)[0])
                raise ActionMaskError(
                    f"actions[{tag!r}]{list(where)} = {int(arr[where])} is masked "
                    f"(infos['action_mask_{tag}']); pass masked_actions='noop' to replace it"
                )
            out[tag] = np.where(allowed, arr, 0)
        return out

    def episode_metrics(self) -> dict[str, float]:
        """The metrics of the last finished episode (averaged over the envs), available from
        the autoreset step after it."""
        return self.wrapper.episode_metrics()


if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point=CovidPlannerEnv)

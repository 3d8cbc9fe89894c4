"""What every adapter shares: building a scenario by name, per-agent observations, spaces,
masks and action checks over the Foundation dict API.

Agents are ``"0".."n-1"`` (the mobile agents) and ``"p"`` (the planner), whatever mode the
scenario runs in: a collated scenario (``collate_agent_step_and_reset_data=True``, such as
COVID-19) is split per agent on the way out and collated again on the way in.

Observations: the numeric fields of an agent's Foundation observation (``action_mask``
left out, nested dicts followed as ``"p0/flat"``), raveled and concatenated in sorted field
order into one float32 vector in ``Box(-OBS_BOUND, OBS_BOUND)``;
:attr:`FoundationAgents.fields` records the layout. Masks are the Foundation's flattened masks
as int8 (``1`` = allowed): single-action mode ``[NO-OP, sub-space 1, sub-space 2, ...]``,
multi-action mode one vector per sub-space (its NO-OP first).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from ai_economist.adapters.errors import ActionMaskError, UnknownAgentError, UnknownScenarioError

MASKED_ACTION_MODES = ("raise", "noop")
"""What an action that the mask forbids does: raise :class:`ActionMaskError` or become NO-OP."""

PLANNER = "p"

OBS_BOUND = 1e20
"""Observation boxes are ``[-OBS_BOUND, OBS_BOUND]``: finite (Gymnasium's checker warns on
infinite bounds) and far beyond any value a scenario observes."""


def make_scenario(scenario_name: str, env_config: Mapping[str, Any]) -> Any:
    """The Foundation scenario registered as ``scenario_name``, built with ``env_config``.

    ``flatten_masks`` is set to True (the adapters read one mask vector per agent); a
    ``scenario_name`` key in ``env_config`` is dropped.

    Raises:
        UnknownScenarioError: no scenario has that name (the message lists close matches).
        ValueError: ``env_config`` sets ``flatten_masks=False``.
    """
    from ai_economist import foundation

    if not isinstance(scenario_name, str) or not foundation.scenarios.has(scenario_name):
        known = foundation.scenarios.entries
        close = difflib.get_close_matches(str(scenario_name), known, n=3, cutoff=0.5)
        hint = f"; did you mean {close}?" if close else ""
        raise UnknownScenarioError(
            f"No Foundation scenario named {scenario_name!r}{hint} Known scenarios: {known}"
        )
    config = dict(env_config)
    config.pop("scenario_name", None)
    if config.get("flatten_masks", True) is not True:
        raise ValueError(
            f"env_config['flatten_masks'] must be True for the adapters (one mask vector per "
            f"agent), got {config['flatten_masks']!r}"
        )
    config["flatten_masks"] = True
    return foundation.make_env_instance(scenario_name, **config)


def check_masked_actions(value: str) -> str:
    """``value`` if it is one of :data:`MASKED_ACTION_MODES`, else a ValueError."""
    if value not in MASKED_ACTION_MODES:
        raise ValueError(f"masked_actions must be one of {MASKED_ACTION_MODES}, got {value!r}")
    return value


def split_observations(obs: Mapping[str, Any], n_agents: int) -> dict[str, dict[str, Any]]:
    """Per-agent observation dicts from Foundation observations (collated ``"a"`` split)."""
    if "a" not in obs:
        return {str(k): v for k, v in obs.items()}
    out = {str(i): {k: np.asarray(v)[..., i] for k, v in obs["a"].items()} for i in range(n_agents)}
    out[PLANNER] = obs[PLANNER]
    return out


def _leaves(obs: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """``(name, value)`` of every field in sorted order, ``action_mask`` left out; nested dicts
    (e.g. agent-wise planner observations ``"p0"``) give ``"p0/field"`` names."""
    out = []
    for key in sorted(obs, key=str):
        if not prefix and key == "action_mask":
            continue
        value = obs[key]
        if isinstance(value, Mapping):
            out.extend(_leaves(value, f"{prefix}{key}/"))
        else:
            out.append((f"{prefix}{key}", value))
    return out


class FoundationAgents:
    """Spaces, observation vectors, masks and action checks of one Foundation env.

    Args:
        env: a Foundation scenario built with ``flatten_masks=True``.
        first_obs: the observations ``env.reset()`` returned (they fix the layout).
        masked_actions: ``"raise"`` or ``"noop"`` (see :data:`MASKED_ACTION_MODES`).
    """

    def __init__(self, env: Any, first_obs: Mapping[str, Any], masked_actions: str) -> None:
        self.env = env
        self.masked_actions = check_masked_actions(masked_actions)
        self.agent_ids = [str(i) for i in range(env.n_agents)] + [PLANNER]
        self._agents = {str(a.idx): a for a in env.all_agents}
        per_agent = split_observations(first_obs, env.n_agents)
        self.fields = {k: self._layout(k, per_agent[k]) for k in self.agent_ids}
        self.observation_spaces = {
            k: spaces.Box(-OBS_BOUND, OBS_BOUND, (self.obs_dim(k),), np.float32)
            for k in self.agent_ids
        }
        self.action_spaces = {k: self._action_space(self._agents[k]) for k in self.agent_ids}
        self.mask_spaces = {k: self._mask_space(self._agents[k]) for k in self.agent_ids}

    # ------------------------------------------------------------------ layout
    @staticmethod
    def _layout(agent_id: str, obs: Mapping[str, Any]) -> list[tuple[str, tuple[int, ...]]]:
        fields = []
        for name, value in _leaves(obs):
            arr = np.asarray(value)
            if arr.dtype.kind not in "biuf":
                raise TypeError(
                    f"Observation field {name!r} of agent {agent_id!r} is not numeric "
                    f"(dtype {arr.dtype}); the adapters flatten numeric fields only"
                )
            fields.append((name, arr.shape))
        return fields

    def obs_dim(self, agent_id: str) -> int:
        """Length of the agent's observation vector."""
        return int(sum(int(np.prod(shape)) for _, shape in self.fields[agent_id]))

    @staticmethod
    def _action_space(agent: Any) -> spaces.Space:
        n = agent.action_spaces
        if np.ndim(n) == 0:
            return spaces.Discrete(int(n))
        return spaces.MultiDiscrete(np.asarray(n, dtype=np.int64))

    @staticmethod
    def _mask_space(agent: Any) -> spaces.Space:
        n = agent.action_spaces
        if np.ndim(n) == 0:
            return spaces.MultiBinary(int(n))
        return spaces.Tuple([spaces.MultiBinary(int(k)) for k in n])

    def check_agent(self, agent_id: Any, where: str = "") -> str:
        """``agent_id`` as a str key, or :class:`UnknownAgentError` naming it."""
        key = str(agent_id)
        if key not in self._agents:
            raise UnknownAgentError(
                f"Unknown agent id {agent_id!r}{' ' + where if where else ''}; expected one of "
                f"'0'..'{self.env.n_agents - 1}' or 'p'"
            )
        return key

    # ------------------------------------------------------------ observations
    def observations(self, obs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """``{agent_id: float32 vector}`` from the env's observations."""
        per_agent = split_observations(obs, self.env.n_agents)
        return {k: self._vector(k, per_agent[k]) for k in self.agent_ids}

    def _vector(self, agent_id: str, obs: Mapping[str, Any]) -> np.ndarray:
        parts = []
        leaves = dict(_leaves(obs))
        for name, shape in self.fields[agent_id]:
            if name not in leaves:
                raise ValueError(
                    f"Observation field {name!r} of agent {agent_id!r} disappeared; "
                    "the adapters need a fixed layout"
                )
            arr = np.asarray(leaves[name], dtype=np.float32)
            if arr.shape != shape:
                raise ValueError(
                    f"Observation field {name!r} of agent {agent_id!r} changed shape from "
                    f"{shape} to {arr.shape}; the adapters need a fixed layout"
                )
            parts.append(arr.reshape(-1))
        return np.concatenate(parts) if parts else np.zeros(0, np.float32)

    def masks(self, obs: Mapping[str, Any]) -> dict[str, Any]:
        """``{agent_id: int8 mask}`` (a tuple of per-sub-space masks in multi-action mode)."""
        per_agent = split_observations(obs, self.env.n_agents)
        return {k: self._mask(k, per_agent[k]["action_mask"]) for k in self.agent_ids}

    def _mask(self, agent_id: str, flat: Any) -> Any:
        flat = (np.asarray(flat) > 0).astype(np.int8).reshape(-1)
        n = self._agents[agent_id].action_spaces
        if np.ndim(n) == 0:
            return flat
        return tuple(np.split(flat, np.cumsum(n)[:-1]))

    # ----------------------------------------------------------------- actions
    def to_foundation(self, actions: Mapping[Any, Any], masks: Mapping[str, Any]) -> dict:
        """Checked actions in the Foundation format (collated ``"a"`` when the env collates).

        A missing agent takes the NO-OP. An action the agent's mask forbids raises
        :class:`ActionMaskError` (``masked_actions="raise"``) or becomes the NO-OP.

        Raises:
            UnknownAgentError: a key is not an agent id.
            ActionMaskError: see above.
            ValueError: an action outside the agent's action space.
        """
        if not isinstance(actions, Mapping):
            raise TypeError(f"actions must be a dict keyed by agent id, got {type(actions)}")
        checked = {}
        for key, action in actions.items():
            agent_id = self.check_agent(key, "in the action dict")
            checked[agent_id] = self._check_action(agent_id, action, masks[agent_id])
        return self._collate(checked)

    def _check_action(self, agent_id: str, action: Any, mask: Any) -> Any:
        space = self.action_spaces[agent_id]
        arr = np.asarray(action)
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        if isinstance(space, spaces.Discrete):
            arr = arr.reshape(-1)
            limits = np.array([space.n])
        else:
            limits = space.nvec
        bad = arr.dtype.kind not in "iu" or arr.shape != limits.shape
        if bad or np.any(arr < 0) or np.any(arr >= limits):
            raise ValueError(f"Action {action!r} of agent {agent_id!r} is not in {space}")
        if isinstance(space, spaces.Discrete):
            value = int(arr[0])
            if mask[value]:
                return value
            return self._masked(agent_id, action, 0, np.flatnonzero(mask).tolist())
        values = [int(a) for a in arr]
        if all(m[a] for m, a in zip(mask, values)):
            return values
        return self._masked(agent_id, action, [0] * len(values), [m.tolist() for m in mask])

    def _masked(self, agent_id: str, action: Any, noop: Any, allowed: Any) -> Any:
        if self.masked_actions == "noop":
            return noop
        raise ActionMaskError(
            f"Action {action!r} of agent {agent_id!r} is masked at timestep "
            f"{self.env.world.timestep}: allowed {allowed} (infos[{agent_id!r}]['action_mask'])"
        )

    def _collate(self, checked: dict[str, Any]) -> dict:
        if not self.env.collate_agent_step_and_reset_data:
            return checked
        out: dict[str, Any] = {}
        if PLANNER in checked:
            out[PLANNER] = checked.pop(PLANNER)
        if checked:
            noop = self.action_spaces["0"]
            multi = isinstance(noop, spaces.MultiDiscrete)
            width = (len(noop.nvec),) if multi else ()
            arr = np.zeros((self.env.n_agents, *width), np.int64)
            for agent_id, value in checked.items():
                arr[int(agent_id)] = value
            out["a"] = arr.T if multi else arr
        return out

    def rewards(self, rew: Mapping[str, Any]) -> dict[str, float]:
        """``{agent_id: float}`` from the env's (possibly collated) rewards."""
        if "a" in rew:
            out = {str(i): float(r) for i, r in enumerate(np.asarray(rew["a"]).reshape(-1))}
        else:
            out = {str(k): float(v) for k, v in rew.items() if str(k) != PLANNER}
        out[PLANNER] = float(np.asarray(rew[PLANNER]).reshape(-1)[0])
        return out

"""``GatherTradeBuildBatch``: N gather-trade-build dict-API envs behind the trainer's
``BatchedPolicyEnv`` protocol (CPU, torch tensors).

Policies: ``"a"`` (the mobile agents, single-action mode) and ``"p"`` (the planner). An
agent's observation vector is its ``flat`` followed by the raveled ``world-map`` and
``world-idx_map``; the planner's is its ``flat``, then each ``p<i>`` and any spatial maps.
Each env is seeded ``seed + i``.

The planner may have no actions (phase 1: taxes disabled; its policy then has one agent with
one action, the NO-OP) or one action sub-space (one agent), or, in multi-action mode, several
sub-spaces (phase 2's tax brackets): then ``"p"`` has one agent per sub-space, which sees the
planner's vector plus the one-hot of its sub-space and picks that sub-space's action (0 is
its NO-OP); every one of them gets the planner's reward (the design of the one-step
economy's batched env, so that each policy keeps one discrete action space).

The envs always step on the host; with ``device="cuda"`` the protocol's tensors live on the
GPU (where the trainer then keeps the models) and are copied after every reset and step, the
trainer's actions copied back before every step. On the CPU the tensors share the host
arrays' memory.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist import foundation
from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import SCENARIO_NAME
from ai_economist.warp_drive.env_protocol import PolicySpec
from ai_economist.warp_drive.obs_layout import ObsSegment, layout_of_arrays

REPORTED_METRICS = (
    "social/productivity",
    "social/equality",
    "social_welfare/coin_eq_times_productivity",
    "social_welfare/inv_income_weighted_utility",
)


def _agent_vector(o: dict[str, Any]) -> np.ndarray:
    parts = [o["flat"]] + [np.ravel(o[k]) for k in ("world-map", "world-idx_map") if k in o]
    return np.concatenate(parts).astype(np.float32, copy=False)


def _planner_vector(o: dict[str, Any], n_agents: int) -> np.ndarray:
    parts = [o["flat"]] + [np.ravel(o[f"p{i}"]) for i in range(n_agents) if f"p{i}" in o]
    parts += [np.ravel(o[k]) for k in ("world-map", "world-idx_map") if k in o]
    return np.concatenate(parts).astype(np.float32, copy=False)


def _agent_fields(o: dict[str, Any]) -> list[tuple[str, Any]]:
    """The arrays :func:`_agent_vector` joins, in its order."""
    return [("flat", o["flat"])] + [(k, o[k]) for k in ("world-map", "world-idx_map") if k in o]


def _planner_fields(o: dict[str, Any], n_agents: int) -> list[tuple[str, Any]]:
    """The arrays :func:`_planner_vector` joins, in its order."""
    named = [("flat", o["flat"])]
    named += [(f"p{i}", np.ravel(o[f"p{i}"])) for i in range(n_agents) if f"p{i}" in o]
    return named + [(k, o[k]) for k in ("world-map", "world-idx_map") if k in o]


class HostMirror:
    """Torch tensors of host numpy arrays ``{group: {tag: array}}`` on ``device``.

    On the CPU (``share`` None or True) the tensors are the arrays' memory; elsewhere (or with
    ``share=False``) they are device copies: :meth:`push` copies host to device, :meth:`pull`
    device to host.
    """

    def __init__(
        self, arrays: dict[str, dict[str, np.ndarray]], device: Any, share: bool | None = None
    ) -> None:
        import torch

        self.device = torch.device(device)
        self.shared = self.device.type == "cpu" if share is None else bool(share)
        if self.shared and self.device.type != "cpu":
            raise ValueError(f"HostMirror: tensors on {self.device} cannot share host memory")
        self._arrays = arrays
        self.tensors = {
            group: {
                t: torch.from_numpy(a)
                if self.shared
                else torch.from_numpy(a).to(self.device, copy=True)
                for t, a in by_tag.items()
            }
            for group, by_tag in arrays.items()
        }

    def push(self, *groups: str) -> None:
        """Copy the host arrays of ``groups`` to their tensors (nothing when shared)."""
        if self.shared:
            return
        import torch

        for group in groups:
            for t, array in self._arrays[group].items():
                self.tensors[group][t].copy_(torch.from_numpy(array))

    def pull(self, *groups: str) -> None:
        """Copy the tensors of ``groups`` to their host arrays (nothing when shared)."""
        if self.shared:
            return
        for group in groups:
            for t, array in self._arrays[group].items():
                array[...] = self.tensors[group][t].cpu().numpy()


class HostPolicyBatch:
    """The part of the trainer's ``BatchedPolicyEnv`` protocol both gather-trade-build batches
    share: host arrays per policy tag (observations, masks, rewards, actions, done flags),
    their tensors on ``device`` (:class:`HostMirror`) and the accessors."""

    def _allocate(self, specs: dict[str, PolicySpec], num_envs: int, device: Any) -> None:
        """The host arrays of ``specs`` for ``num_envs`` envs and their mirrored tensors."""
        e = num_envs
        self._specs = specs
        self._obs = {
            t: np.zeros((e, s.num_agents, s.obs_dim), np.float32) for t, s in specs.items()
        }
        self._masks = {
            t: np.ones((e, s.num_agents, s.num_actions), np.float32) for t, s in specs.items()
        }
        self._rew = {t: np.zeros((e, s.num_agents), np.float32) for t, s in specs.items()}
        self._act = {t: np.zeros((e, s.num_agents), np.int32) for t, s in specs.items()}
        self._done = np.zeros(e, np.int32)
        arrays = {"obs": self._obs, "masks": self._masks, "rew": self._rew, "act": self._act}
        self._mirror = HostMirror({**arrays, "done": {"": self._done}}, device)
        self._tensors = self._mirror.tensors
        self._last_metrics: dict[str, float] = {}

    @property
    def device(self) -> Any:
        return self._mirror.device

    @property
    def policy_specs(self) -> dict[str, PolicySpec]:
        return dict(self._specs)

    def observations(self, tag: str) -> Any:
        return self._tensors["obs"][tag]

    def action_masks(self, tag: str) -> Any:
        return self._tensors["masks"][tag]

    def actions(self, tag: str) -> Any:
        return self._tensors["act"][tag]

    def rewards(self, tag: str) -> Any:
        return self._tensors["rew"][tag]

    def done(self) -> Any:
        return self._tensors["done"][""]

    def episode_metrics(self) -> dict[str, float]:
        """Mean social metrics of the envs that finished an episode at the latest such step."""
        return dict(self._last_metrics)


class GatherTradeBuildBatch(HostPolicyBatch):
    """``num_envs`` gather-trade-build envs stepped one after the other on the CPU.

    Args:
        env_config: the scenario's kwargs (``scenario_name`` optional, default
            ``layout_from_file/simple_wood_and_stone``); needs flattened observations and
            masks and single-action mobile agents.
        num_envs: number of envs.
        seed: env i is seeded ``seed + i``.
        device: torch device of the protocol's tensors (the envs step on the host).
    """

    def __init__(
        self, env_config: dict[str, Any], num_envs: int, seed: int = 0, device: Any = "cpu"
    ) -> None:
        config = dict(env_config)
        name = config.pop("scenario_name", SCENARIO_NAME)
        config.pop("seed", None)
        for key, needed in (
            ("flatten_observations", True),
            ("flatten_masks", True),
            ("multi_action_mode_agents", False),
        ):
            if config.get(key, needed) != needed:
                raise ValueError(f"env.{key} must be {needed} for training, got {config[key]!r}")
        self.num_envs = int(num_envs)
        self.envs = [
            foundation.make_env_instance(name, seed=seed + i, **config)
            for i in range(self.num_envs)
        ]
        first = self.envs[0]
        self.episode_length = first.episode_length
        self.n_agents = first.n_agents
        planner = first.world.planner
        # Per planner policy agent, the number of actions (NO-OP included) of its sub-space.
        if planner.multi_action_mode:
            self._planner_sizes = [int(n) for n in np.atleast_1d(planner.action_spaces)]
        else:
            self._planner_sizes = [int(planner.action_spaces)]
        self._multi_planner = planner.multi_action_mode and not planner._passive_multi_action_agent
        n_p = len(self._planner_sizes)
        self._one_hot = np.eye(n_p, dtype=np.float32) if n_p > 1 else np.zeros((1, 0), np.float32)
        obs = [env.reset() for env in self.envs]
        p_dim = _planner_vector(obs[0]["p"], self.n_agents).size + self._one_hot.shape[1]
        specs = {
            "a": PolicySpec(
                self.n_agents,
                _agent_vector(obs[0]["0"]).size,
                int(first.world.agents[0].action_spaces),
            ),
            "p": PolicySpec(n_p, p_dim, max(self._planner_sizes)),
        }
        planner_layout = layout_of_arrays(_planner_fields(obs[0]["p"], self.n_agents))
        if self._one_hot.shape[1]:
            planner_layout += (ObsSegment("sub-space one-hot", (self._one_hot.shape[1],)),)
        self._layouts = {"a": layout_of_arrays(_agent_fields(obs[0]["0"])), "p": planner_layout}
        self._allocate(specs, self.num_envs, device)
        for i, o in enumerate(obs):
            self._write(i, o)
        self._mirror.push("obs", "masks")

    # ---------------------------------------------------------------- protocol
    @property
    def policy_tag_to_agent_id_map(self) -> dict[str, list[str]]:
        """Agents ``"0".."N-1"``; the planner ``"p"``, or one id per planner sub-space
        (``"p_<sub-space>"``, e.g. ``"p_PeriodicBracketTax.TaxIndexBracket_000"``)."""
        planner = self.envs[0].world.planner
        if self._multi_planner and len(self._planner_sizes) > 1:
            planner_ids = [f"p_{name}" for name in planner.action_names]
        else:
            planner_ids = ["p"]
        return {"a": [str(i) for i in range(self.n_agents)], "p": planner_ids}

    def observation_layout(self, tag: str) -> tuple[ObsSegment, ...]:
        """The segments of policy ``tag``'s vectors, read off the dict env's arrays (maps
        are 3-D; the integer ``world-idx_map`` holds index codes)."""
        return self._layouts[tag]

    def reset_all_envs(self) -> None:
        for i, env in enumerate(self.envs):
            self._write(i, env.reset())
        self._done[:] = 0
        self._mirror.push("obs", "masks", "done")

    def reset_only_done_envs(self) -> None:
        which = np.flatnonzero(self._done)
        for i in which:
            self._write(i, self.envs[i].reset())
            self._done[i] = 0
        if which.size:
            self._mirror.push("obs", "masks", "done")

    def step_all_envs(self) -> None:
        self._mirror.pull("act")
        finished = []
        for i, env in enumerate(self.envs):
            actions: dict[str, Any] = {str(k): int(a) for k, a in enumerate(self._act["a"][i])}
            if self._multi_planner:
                actions["p"] = [int(a) for a in self._act["p"][i]]
            elif self._planner_sizes[0] > 1:
                actions["p"] = int(self._act["p"][i, 0])
            obs, rew, done, _ = env.step(actions)
            self._write(i, obs)
            self._rew["a"][i] = [rew[str(k)] for k in range(self.n_agents)]
            self._rew["p"][i] = rew["p"]
            self._done[i] = int(done["__all__"])
            if done["__all__"]:
                finished.append(env.previous_episode_metrics)
        self._mirror.push("obs", "masks", "rew", "done")
        if finished:
            self._last_metrics = {
                k: float(np.mean([m[k] for m in finished]))
                for k in REPORTED_METRICS
                if k in finished[0]
            }

    # ---------------------------------------------------------------- internals
    def _write(self, i: int, obs: dict[str, Any]) -> None:
        for k in range(self.n_agents):
            o = obs[str(k)]
            self._obs["a"][i, k] = _agent_vector(o)
            self._masks["a"][i, k] = o["action_mask"]
        vector = _planner_vector(obs["p"], self.n_agents)
        n_vec = vector.size
        self._obs["p"][i, :, :n_vec] = vector
        self._obs["p"][i, :, n_vec:] = self._one_hot
        mask = obs["p"]["action_mask"]
        start = 0
        for b, size in enumerate(self._planner_sizes):
            self._masks["p"][i, b, :size] = mask[start : start + size]
            self._masks["p"][i, b, size:] = 0
            start += size

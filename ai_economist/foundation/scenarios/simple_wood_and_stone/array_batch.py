"""``ArrayGatherTradeBuildBatch``: the trainer's ``BatchedPolicyEnv`` protocol served from
the gather-trade-build array economy (:mod:`.array_economy`) instead of N dict envs.

The same policies, specs, agent ids, observation vectors, masks, rewards, dones and episode
metrics as :class:`~.batched.GatherTradeBuildBatch` for the configs the array economy
covers (the published phase-1 and phase-2 configs; :meth:`.EconomyParams.from_env` says
what it refuses): an agent's vector is its ``flat`` followed by the raveled ``world-map``
and ``world-idx_map``; the planner's is its ``flat`` then each ``p<i>``, plus the one-hot of
its tax bracket when it sets the rates (one policy agent per bracket). Env i is seeded
``seed + i``. All envs step at once on the host; the tensors mirror the host arrays
(:class:`~.batched.HostMirror`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist import foundation
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_checkpoint, array_obs
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy as ae
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy_obs as aeo
from ai_economist.foundation.scenarios.simple_wood_and_stone.batched import (
    REPORTED_METRICS,
    HostPolicyBatch,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import SCENARIO_NAME
from ai_economist.foundation.scenarios.utils import rewards as social_rewards
from ai_economist.foundation.scenarios.utils import social_metrics
from ai_economist.warp_drive.env_protocol import PolicySpec
from ai_economist.warp_drive.env_state import check_keys, checked_array
from ai_economist.warp_drive.obs_layout import ObsSegment


def economy_params(env_config: dict[str, Any]) -> ae.EconomyParams:
    """The array economy's parameters of a run config's ``env`` block (raises ValueError
    when the economy does not cover it)."""
    config = dict(env_config)
    name = config.pop("scenario_name", SCENARIO_NAME)
    config.pop("seed", None)
    return ae.EconomyParams.from_env(foundation.make_env_instance(name, seed=0, **config))


def episode_metrics(coin: np.ndarray, utility: np.ndarray) -> dict[str, float]:
    """:data:`REPORTED_METRICS` of one env from its agents' coin endowments and utilities
    (``scenario_metrics``' formulas)."""
    return {
        "social/productivity": float(social_metrics.get_productivity(coin)),
        "social/equality": float(social_metrics.get_equality(coin)),
        "social_welfare/coin_eq_times_productivity": float(
            social_rewards.coin_eq_times_productivity(coin, 1.0)
        ),
        "social_welfare/inv_income_weighted_utility": float(
            social_rewards.inv_income_weighted_utility(coin, utility)
        ),
    }


class ArrayGatherTradeBuildBatch(HostPolicyBatch):
    """``num_envs`` gather-trade-build envs stepped together as arrays on the CPU, bit-equal to
    :class:`~.batched.GatherTradeBuildBatch` (the dict envs one after the other), whose
    arguments it takes: ``env_config``, ``num_envs``, ``seed`` (env i is seeded ``seed + i``)
    and ``device`` (of the protocol's tensors; the envs step on the host)."""

    def __init__(
        self, env_config: dict[str, Any], num_envs: int, seed: int = 0, device: Any = "cpu"
    ) -> None:
        self.params = params = economy_params(env_config)
        self.num_envs = e = int(num_envs)
        self.n_agents = a = params.world.n_agents
        self.episode_length = params.world.episode_length
        self.state = ae.initial_state(params, seed + np.arange(e))
        self._static = array_obs.static_windows(params.world)
        tax = params.tax
        if tax.planner_sets_rates:
            self._n_planner, self._planner_actions = tax.n_brackets, tax.disc_rates.size + 1
        else:
            self._n_planner, self._planner_actions = 1, 1
        n_p = self._n_planner
        self._one_hot = np.eye(n_p, dtype=np.float32) if n_p > 1 else np.zeros((1, 0), np.float32)
        obs = aeo.observations(self.state, params, self._static)
        p_dim = obs["planner_vector"].shape[-1] + self._one_hot.shape[1]
        specs = {
            "a": PolicySpec(a, obs["agent_vectors"].shape[-1], params.n_agent_actions),
            "p": PolicySpec(n_p, p_dim, self._planner_actions),
        }
        self._layouts = {
            "a": (
                ObsSegment("flat", (obs["agent_flat"].shape[-1],)),
                ObsSegment("world-map", obs["world_map"].shape[2:]),
                ObsSegment("world-idx_map", obs["world_idx_map"].shape[2:], "index"),
            ),
            "p": (ObsSegment("flat", (p_dim,)),),
        }
        self._allocate(specs, e, device)
        self._write(obs)
        self._mirror.push("obs", "masks")

    # ---------------------------------------------------------------- protocol
    @property
    def policy_tag_to_agent_id_map(self) -> dict[str, list[str]]:
        """Agents ``"0".."N-1"``; the planner ``"p"``, or one id per tax bracket
        (``"p_PeriodicBracketTax.TaxIndexBracket_000"``, ...) when it sets the rates."""
        if self._n_planner > 1:
            cutoffs = self.params.tax.cutoffs
            planner = [f"p_PeriodicBracketTax.TaxIndexBracket_{int(c):03d}" for c in cutoffs]
        else:
            planner = ["p"]
        return {"a": [str(i) for i in range(self.n_agents)], "p": planner}

    def observation_layout(self, tag: str) -> tuple[ObsSegment, ...]:
        """The segments of policy ``tag``'s vectors: an agent's ``flat``, its ``world-map``
        (7, s, s) and its ``world-idx_map`` (2, s, s, index codes); the planner's one flat
        segment."""
        return self._layouts[tag]

    def reset_all_envs(self) -> None:
        ae.reset_envs(self.state, self.params, np.ones(self.num_envs, dtype=bool))
        self._done[:] = 0
        self._write(self._observe())
        self._mirror.push("obs", "masks", "done")

    def reset_only_done_envs(self) -> None:
        which = self._done.astype(bool)
        if which.any():
            ae.reset_envs(self.state, self.params, which)
            self._done[:] = 0
            self._write(self._observe())
            self._mirror.push("obs", "masks", "done")

    def step_all_envs(self) -> None:
        self._mirror.pull("act")
        planner = self._act["p"].astype(np.int64) if self._n_planner > 1 else None
        agent_rew, planner_rew, done = ae.step(
            self.state, self.params, self._act["a"].astype(np.int64), planner
        )
        self._write(self._observe())
        self._rew["a"][:] = agent_rew
        self._rew["p"][:] = planner_rew[:, None]
        self._done[:] = done
        self._mirror.push("obs", "masks", "rew", "done")
        if done.any():
            coin = ae.coin_endowment(self.state)
            finished = [
                episode_metrics(coin[i], self.state.world.utility[i]) for i in np.flatnonzero(done)
            ]
            self._last_metrics = {
                k: float(np.mean([m[k] for m in finished])) for k in REPORTED_METRICS
            }

    # ---------------------------------------------------------------- checkpoints
    def state_dict(self) -> dict:
        """The economy's arrays, generators and Saez trackers, the published arrays and the
        last episode metrics (copies), for bit-exact resumes."""
        state: dict[str, Any] = {
            f"economy/{k}": v for k, v in array_checkpoint.capture(self.state).items()
        }
        for group in ("obs", "masks", "rew"):
            for tag, value in getattr(self, f"_{group}").items():
                state[f"{group}/{tag}"] = value.copy()
        state["done"] = self._done.copy()
        state["last_metrics"] = dict(self._last_metrics)
        return state

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict`'s output (checked first: a mismatch changes nothing).

        Raises:
            EnvStateMismatch: naming the first entry that does not fit this batch.
        """
        current = self.state_dict()
        check_keys("gather-trade-build batch state", state, current)
        published = {
            k: checked_array(k, state[k], v.shape)
            for k, v in current.items()
            if not k.startswith("economy/") and k != "last_metrics"
        }
        n = len("economy/")
        array_checkpoint.restore(
            self.state, {k[n:]: v for k, v in state.items() if k[:n] == "economy/"}
        )
        for key, value in published.items():
            group, _, tag = key.partition("/")
            target = self._done if group == "done" else getattr(self, f"_{group}")[tag]
            target[...] = value
        self._last_metrics = {k: float(v) for k, v in state["last_metrics"].items()}
        self._mirror.push("obs", "masks", "rew", "done")

    # ---------------------------------------------------------------- internals
    def _observe(self) -> dict[str, Any]:
        """The array economy's observations, the agents' vectors written in place."""
        return aeo.observations(self.state, self.params, self._static, self._obs["a"])

    def _write(self, obs: dict[str, Any]) -> None:
        if obs["agent_vectors"] is not self._obs["a"]:
            self._obs["a"][:] = obs["agent_vectors"]
        self._masks["a"][:] = obs["agent_masks"]
        vector = obs["planner_vector"]
        n_vec = vector.shape[-1]
        self._obs["p"][:, :, :n_vec] = vector[:, None, :]
        self._obs["p"][:, :, n_vec:] = self._one_hot
        self._masks["p"][:] = obs["planner_masks"].reshape(self._masks["p"].shape)

"""``OneStepEconomyBatchedEnv``: the batched array model behind the trainer's protocol.

Implements ``warp_drive.env_protocol.BatchedPolicyEnv`` over :mod:`array_model` (numpy on
the host; the tensors live on ``device``, so the policy models may sit on a GPU).

Policies: ``"a"``, the ``n_agents`` workers (101 actions: NO-OP or 1..100 hours), and
``"p"``, the planner, split into one agent per tax bracket: bracket ``b``'s agent sees the
planner's flat observation, the per-agent entries (``p<i>``) and the one-hot of ``b``, and
picks that bracket's rate (NO-OP or one of the ``K`` rates). All bracket agents get the
planner's reward. This keeps one discrete action space per policy, as the protocol asks,
where the dict env gives the planner ``B`` sub-spaces.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch

from ai_economist.foundation.scenarios.one_step_economy import array_model as am
from ai_economist.foundation.scenarios.one_step_economy.one_step_economy import OneStepEconomy
from ai_economist.foundation.scenarios.utils import social_metrics
from ai_economist.warp_drive.env_protocol import PolicySpec
from ai_economist.warp_drive.env_state import as_numpy, check_keys, checked_array
from ai_economist.warp_drive.policy_tensors import PolicyTensors


class OneStepEconomyBatchedEnv(PolicyTensors):
    """``num_envs`` one-step economies stepped together (see the module docstring).

    Args:
        num_envs: number of environments.
        device: torch device of the tensors the trainer reads and writes.
        **env_config: ``OneStepEconomy`` arguments (the dict env is built once to check them
            and to read the skills and the tax brackets). The tax model must be
            ``model_wrapper`` (the planner is trained).
    """

    name = "one_step_economy"

    def __init__(
        self, num_envs: int = 1, device: str | torch.device = "cpu", **env_config: Any
    ) -> None:
        self.env = OneStepEconomy(**env_config)
        self.params = am.OneStepParams.from_env(self.env)
        if self.params.tax_model != "model_wrapper":
            raise ValueError(
                f"training the one-step economy needs tax_model 'model_wrapper' (the planner "
                f"learns the rates), got {self.params.tax_model!r}"
            )
        self.num_envs = int(num_envs)
        self.episode_length = self.params.episode_length
        p = self.params
        n, b = p.n_agents, p.n_brackets
        planner_dim = (b + n + 6) + 3 * n + b
        specs = {
            "a": PolicySpec(n, b + n + 6, am.NUM_LABOR_HOURS + 1),
            "p": PolicySpec(b, planner_dim, len(p.disc_rates) + 1),
        }
        self._allocate_policy_tensors(specs, self.num_envs, device)
        self._one_hot = np.eye(b, dtype=np.float32)
        self.state = am.initial_state(p, self.num_envs)
        self._last_metrics: dict[str, float] = {}

    # -- protocol (the array side: PolicyTensors) -------------------------------------------
    @property
    def policy_tag_to_agent_id_map(self) -> dict[str, list[str]]:
        """Workers ``"0".."N-1"``; the planner's bracket agents ``"p_000"``, ``"p_009"``, ..."""
        tax = self.env.get_component("PeriodicBracketTax")
        return {
            "a": [str(i) for i in range(self.params.n_agents)],
            "p": [f"p_{k}" for k in tax.bracket_keys],
        }

    def reset_all_envs(self) -> None:
        am.reset_envs(self.state, self.params, np.ones(self.num_envs, dtype=bool))
        self._done.zero_()
        self._publish()

    def reset_only_done_envs(self) -> None:
        which = self._done.cpu().numpy().astype(bool)
        if which.any():
            am.reset_envs(self.state, self.params, which)
            self._done.zero_()
            self._publish()

    def step_all_envs(self) -> None:
        hours = self._actions["a"].cpu().numpy().astype(np.int64)
        rates = self._actions["p"].cpu().numpy().astype(np.int64)
        agent_rew, planner_rew, done = am.step(self.state, self.params, hours, rates)
        self._rewards["a"].copy_(torch.as_tensor(agent_rew, dtype=torch.float32))
        planner = np.broadcast_to(planner_rew[:, None], (self.num_envs, self.params.n_brackets))
        self._rewards["p"].copy_(
            torch.as_tensor(np.ascontiguousarray(planner), dtype=torch.float32)
        )
        self._done.copy_(torch.as_tensor(done.astype(np.int32)))
        if done.any():
            self._last_metrics = self._metrics(done)
        self._publish()

    def episode_metrics(self) -> dict[str, float]:
        return dict(self._last_metrics)

    # -- checkpoint support (optional extension of the protocol) ---------------------------
    def state_dict(self) -> dict:
        """Every state array and published tensor (copies), for bit-exact resumes."""
        state: dict[str, Any] = {
            f"state/{f.name}": np.array(getattr(self.state, f.name))
            for f in dataclasses.fields(am.OneStepState)
        }
        state["done"] = self._done.clone()
        for group in ("obs", "masks", "rewards"):
            for tag, value in getattr(self, f"_{group}").items():
                state[f"{group}/{tag}"] = value.clone()
        return state

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict`'s output (checked first: a mismatch changes nothing)."""
        current = self.state_dict()
        check_keys("one-step economy env state", state, current)
        arrays = {
            k: checked_array(k, as_numpy(state[k]), tuple(v.shape)) for k, v in current.items()
        }
        for key, value in arrays.items():
            group, name = key.split("/") if "/" in key else (key, "")
            if group == "state":
                getattr(self.state, name)[...] = value
            elif group == "done":
                self._done.copy_(torch.as_tensor(value))
            else:
                getattr(self, f"_{group}")[name].copy_(torch.as_tensor(value))

    # -- internals ----------------------------------------------------------------------------
    def _metrics(self, done: np.ndarray) -> dict[str, float]:
        s = self.state
        coin = s.coin[done]
        return {
            "social/productivity": float(social_metrics.get_productivity(coin).mean()),
            "social/equality": float(np.mean(social_metrics.get_equality(coin))),
            "social_welfare": float(s.welfare[done].mean()),
            "util/avg_agent": float(s.utility[done].mean()),
            "total_collected_taxes": float(s.total_collected_taxes[done].mean()),
        }

    def planner_policy_observations(self) -> np.ndarray:
        """``(E, B, obs_dim)``: planner flat, per-agent entries and the bracket one-hot."""
        flat, agentwise = am.planner_observations(self.state, self.params)
        e, b = self.num_envs, self.params.n_brackets
        shared = np.concatenate([flat, agentwise.reshape(e, -1)], axis=-1)
        shared = np.broadcast_to(shared[:, None, :], (e, b, shared.shape[-1]))
        one_hot = np.broadcast_to(self._one_hot, (e, b, b))
        return np.concatenate([shared, one_hot], axis=-1)

    def _publish(self) -> None:
        agent_masks, planner_masks = am.action_masks(self.state, self.params)
        agents = am.agent_observations(self.state, self.params)
        self._obs["a"].copy_(torch.as_tensor(agents, dtype=torch.float32))
        self._obs["p"].copy_(
            torch.as_tensor(self.planner_policy_observations(), dtype=torch.float32)
        )
        self._masks["a"].copy_(torch.as_tensor(agent_masks))
        self._masks["p"].copy_(torch.as_tensor(planner_masks))

"""``OneStepEconomyGpu``: the one-step economy as a ``GpuEnvironment`` (generic GPU path).

The numpy reference step below IS the batched array model (:mod:`array_model`, ``am.step``
and its observation and mask functions) run on the declared arrays; the CUDA C kernel
(``kernels/one_step_economy_step.cu``) and its Numba twin (``one_step_economy_numba.py``)
mirror those functions name for name: one block per environment, one thread per worker and
per tax bracket. Components: ``SimpleLabor`` then ``PeriodicBracketTax`` with the tax models
``model_wrapper`` (planner-set rates), ``us-federal-single-filer-2018-scaled``,
``fixed-bracket-rates`` and ``saez`` (per-env income buffer and elasticity estimate,
:mod:`gpu_saez`).

Observations, masks and actions are laid out as in ``OneStepEconomyBatchedEnv`` (policies
``"a"``: workers, 101 actions; ``"p"``: one agent per bracket, NO-OP or one of the rates),
so a policy trained here acts unchanged there. Every environment starts alike (the skills
are the dict-API env's, drawn from its ``seed``), so the initial state is one environment's,
replicated and reset on the device.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.foundation.scenarios.one_step_economy import array_model as am
from ai_economist.foundation.scenarios.one_step_economy import gpu_declaration as decl
from ai_economist.foundation.scenarios.one_step_economy import gpu_saez
from ai_economist.foundation.scenarios.utils import social_metrics
from ai_economist.warp_drive.scenario import GpuEnvironment, KernelSpec, PolicyGroup
from ai_economist.warp_drive.state import StateField

HERE = Path(__file__).resolve().parent
STEP_KERNEL = "one_step_economy_step"
MODEL_FIELDS = [f.name for f in dataclasses.fields(am.OneStepState)]
#: OneStepState field -> declared field
FIELD_OF = {"timestep": "_timestep_"}


def planner_policy_observations(state: am.OneStepState, params: am.OneStepParams) -> np.ndarray:
    """``(E, B, obs_dim)``: planner flat, per-agent entries and the bracket one-hot (the
    layout of ``OneStepEconomyBatchedEnv.planner_policy_observations``)."""
    flat, agentwise = am.planner_observations(state, params)
    e, b = flat.shape[0], params.n_brackets
    shared = np.concatenate([flat, agentwise.reshape(e, -1)], axis=-1)
    shared = np.broadcast_to(shared[:, None, :], (e, b, shared.shape[-1]))
    one_hot = np.broadcast_to(np.eye(b), (e, b, b))
    return np.concatenate([shared, one_hot], axis=-1)


def check_masked_actions(tag: str, actions: np.ndarray, masks: np.ndarray) -> None:
    """ValueError naming the first env / agent whose action lies outside its mask."""
    actions = np.asarray(actions)
    n = masks.shape[-1]
    inside = (actions >= 0) & (actions < n)
    allowed = np.take_along_axis(masks, np.clip(actions, 0, n - 1)[..., None], -1)[..., 0] > 0
    bad = ~(inside & allowed)
    if bad.any():
        e, i = (int(x) for x in np.argwhere(bad)[0])
        ok = np.flatnonzero(masks[e, i] > 0).tolist()
        raise ValueError(
            f"one_step_economy: policy {tag!r} env {e} agent {i} chose action "
            f"{int(actions[e, i])}, outside its mask; allowed: {ok if len(ok) < 8 else ok[:8]}"
            f"{' ...' if len(ok) >= 8 else ''} ({bad.sum()} such action(s) this step)"
        )


class OneStepEconomyGpu(GpuEnvironment):
    """The one-step economy on the generic GPU path (see the module docstring).

    Args:
        **env_config: ``OneStepEconomy`` arguments (the env block of a run config); default
            ``gpu_declaration.DEFAULT_ENV_CONFIG``. ``UnsupportedOnGpuError`` names any
            component, tax model or size the kernels do not cover.
    """

    name = "one_step_economy"
    replicated_initial_state = True

    def __init__(self, **env_config: Any) -> None:
        from ai_economist.foundation.scenarios.one_step_economy.one_step_economy import (
            OneStepEconomy,
        )

        self._config = dict(env_config) if env_config else dict(decl.DEFAULT_ENV_CONFIG)
        self.dict_env = OneStepEconomy(**self._config)
        self.params = decl.check_kernel_support(self.dict_env)
        tax = self.dict_env.get_component("PeriodicBracketTax")
        self.saez = (
            gpu_saez.SaezParams.from_component(tax) if self.params.tax_model == "saez" else None
        )
        self._seed = 0
        self.episode_length = self.params.episode_length
        self.num_agents = self.params.n_agents + self.params.n_brackets

    def config(self) -> dict[str, Any]:
        """Constructor arguments that rebuild this environment."""
        return dict(self._config)

    # ------------------------------------------------------------ declaration
    def dims(self) -> dict[str, int]:
        return decl.dims_of(self.params)

    def state_fields(self) -> list[StateField]:
        return decl.state_fields()

    def policies(self) -> dict[str, PolicyGroup]:
        d, n = self.dims(), self.params.n_agents
        return {
            "a": PolicyGroup("a", 0, n, d["agent_obs_dim"], d["agent_actions"]),
            "p": PolicyGroup("p", n, d["n_brackets"], d["planner_obs_dim"], d["planner_actions"]),
        }

    def kernels(self) -> KernelSpec:
        """The CUDA C step packs up to ``256 // threads`` envs into a block (an env's block of
        ``n_agents + n_brackets`` threads is under a warp, and at most 32 blocks fit an SM),
        except with the Saez model, whose envs would take turns at the block's one scratch."""
        return KernelSpec(
            step_kernels=(STEP_KERNEL,),
            cuda_source=HERE / "kernels" / "one_step_economy_step.cu",
            numba_module="ai_economist.foundation.scenarios.one_step_economy.one_step_economy_numba",
            envs_per_block=1 if self.saez is not None else max(1, 256 // self.num_agents),
        )

    def parity_tolerances(self) -> dict[str, tuple[float, Any]]:
        """float64 money and utilities: sums in another order and the device's ``pow`` /
        ``log`` differ from numpy's in the last bits (relative 1e-12)."""
        names = ["coin", "last_coin", "last_income", "utility", "welfare", "rates_obs"]
        names += ["total_collected_taxes", "episode_equality", "episode_productivity"]
        names += ["episode_welfare", "episode_taxes", "episode_coin"]
        if self.saez is None:
            tight = {name: (1e-12, 1e-12) for name in names}
        else:  # the elasticity fit solves its normal equations another way
            names += ["production", "labor", "last_marginal_rate", "saez_buffer", "saez_elas"]
            names += ["saez_log_z0", "saez_rates", "saez_running_avg"]
            tight = {name: (1e-7, 1e-9) for name in names}
        tight["rewards_a"] = tight["rewards_p"] = (1e-5, 1e-5)
        return tight

    # ------------------------------------------------------------ behaviour
    def initial_state(self, num_envs: int, seed: int | None) -> dict[str, np.ndarray]:
        """One environment's reset state (replicated): the array model's ``initial_state``
        with its observations and masks, and the constants. ``seed`` is unused: the skills
        come from the dict-API env's own ``seed``."""
        p = self.params
        model = am.initial_state(p, 1)
        arrays = {FIELD_OF.get(k, k): getattr(model, k)[0] for k in MODEL_FIELDS}
        del arrays["_timestep_"]
        arrays = {k: np.asarray(v, np.int32 if k in ("tax_cycle_pos", "rate_index") else None)
                  for k, v in arrays.items()}  # fmt: skip
        agent_masks, planner_masks = am.action_masks(model, p)
        arrays["observations_a"] = am.agent_observations(model, p)[0].astype(np.float32)
        arrays["observations_p"] = planner_policy_observations(model, p)[0].astype(np.float32)
        arrays["action_mask_a"], arrays["action_mask_p"] = agent_masks[0], planner_masks[0]
        saez = gpu_saez.saez_initial(self.saez, p.n_brackets, self._seed)
        return {**arrays, **decl.constants_of(p), **saez}

    def _model_state(self, state: dict[str, np.ndarray]) -> am.OneStepState:
        return am.OneStepState(**{k: state[FIELD_OF.get(k, k)] for k in MODEL_FIELDS})

    def reference_step(self, state: dict[str, np.ndarray]) -> None:
        """``am.step`` on the declared arrays, then rewards, observations, masks, metrics.
        An action outside its mask raises (the kernels apply it as NO-OP and count it in
        ``invalid_actions``; see ``check_device_actions``)."""
        p = self.params
        for tag in ("a", "p"):
            check_masked_actions(tag, state[f"sampled_actions_{tag}"], state[f"action_mask_{tag}"])
        tax_day = state["tax_cycle_pos"] >= p.period
        if self.saez is not None:  # this period's rates, then the array model reads them
            gpu_saez.saez_first_day(state, self.saez, state["tax_cycle_pos"] == 1, self._seed)
            p = dataclasses.replace(p, fixed_rates=np.array(state["saez_rates"]))
        model = self._model_state(state)
        hours = state["sampled_actions_a"].astype(np.int64)
        rates = state["sampled_actions_p"].astype(np.int64)
        agent_rew, planner_rew, done = am.step(model, p, hours, rates)
        for k in MODEL_FIELDS:
            target = state[FIELD_OF.get(k, k)]
            np.copyto(target, getattr(model, k), casting="unsafe")
        if self.saez is not None:
            gpu_saez.saez_record(state, tax_day)
        model = self._model_state(state)
        state["rewards_a"][:] = agent_rew
        state["rewards_p"][:] = planner_rew[:, None]
        state["observations_a"][:] = am.agent_observations(model, p)
        state["observations_p"][:] = planner_policy_observations(model, p)
        state["action_mask_a"][:], state["action_mask_p"][:] = am.action_masks(model, p)
        state["_done_"][done] = 1
        self._record_episode(state, done)

    @staticmethod
    def _record_episode(state: dict[str, np.ndarray], done: np.ndarray) -> None:
        if not done.any():
            return
        coin = state["coin"][done]
        state["episode_equality"][done] = social_metrics.get_equality(coin)
        state["episode_productivity"][done] = social_metrics.get_productivity(coin)
        state["episode_welfare"][done] = state["welfare"][done]
        state["episode_taxes"][done] = state["total_collected_taxes"][done]
        state["episode_coin"][done] = coin
        state["episode_labor"][done] = state["labor"][done]
        state["completed_episodes"][done] += 1

    def episode_metrics(self, pull: Callable[[str], np.ndarray]) -> dict[str, float]:
        """Means over the environments that finished an episode (their last one):
        ``social/equality``, ``social/productivity`` (total coin), their product per agent
        ``social_welfare/coin_eq_times_productivity``, the planner's ``social_welfare``,
        ``total_collected_taxes``, and per worker ``endow/<i>/Coin``, ``endogenous/<i>/Labor``."""
        completed = pull("completed_episodes") > 0
        if not completed.any():
            return {}
        eq = pull("episode_equality")[completed]
        prod = pull("episode_productivity")[completed]
        out = {
            "social/equality": float(eq.mean()),
            "social/productivity": float(prod.mean()),
            "social_welfare/coin_eq_times_productivity": float(
                (eq * prod / self.params.n_agents).mean()
            ),
            "social_welfare": float(pull("episode_welfare")[completed].mean()),
            "total_collected_taxes": float(pull("episode_taxes")[completed].mean()),
        }
        coin = pull("episode_coin")[completed].mean(0)
        labor = pull("episode_labor")[completed].mean(0)
        if self.saez is not None:
            out["saez/estimated_elasticity"] = float(pull("saez_elas").mean())
        for i in range(self.params.n_agents):
            out[f"endow/{i}/Coin"] = float(coin[i])
            out[f"endogenous/{i}/Labor"] = float(labor[i])
        return out

    def check_device_actions(self, pull: Callable[[str], np.ndarray]) -> None:
        """ValueError if a kernel met an action outside its mask (it applied a NO-OP)."""
        bad = pull("invalid_actions")
        if bad.any():
            e = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"one_step_economy: {int(bad.sum())} action(s) outside their masks on the "
                f"device (first in env {e}); the kernels applied them as NO-OP. Sample actions "
                "from the masked distributions (action_mask_a / action_mask_p)."
            )

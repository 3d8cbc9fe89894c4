"""The one-step economy's GPU state, declared once (``StateField`` s), and its config checks.

One environment is one block: threads ``0..N-1`` are the workers (policy ``"a"``), threads
``N..N+B-1`` the planner's bracket agents (policy ``"p"``, one per tax bracket), as in
``OneStepEconomyBatchedEnv``. Money and labour are float64 (as in the numpy array model);
observations, masks and rewards float32 (as the trainer reads them).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ai_economist.foundation.components.simple_labor import NUM_LABOR_HOURS
from ai_economist.foundation.scenarios.one_step_economy import array_model as am
from ai_economist.foundation.scenarios.one_step_economy import gpu_saez
from ai_economist.foundation.scenarios.utils.social_metrics import EXACT_GINI_MAX_AGENTS
from ai_economist.warp_drive.state import StateField

#: the largest number of workers the kernels hold in shared memory
MAX_WORKERS = EXACT_GINI_MAX_AGENTS - 1
#: the most tax brackets the kernels hold in shared memory
MAX_BRACKETS = 64
#: tax models of the kernels, by the code the kernels read (``tax_model_code``)
KERNEL_TAX_MODELS = {
    "model_wrapper": 0,
    "us-federal-single-filer-2018-scaled": 1,
    "fixed-bracket-rates": 1,
    "saez": 2,
}
AGENT_REWARD_CODES = {"coin_minus_labor_cost": 0, "isoelastic_coin_minus_labor": 1}
PLANNER_REWARD_CODES = {"inv_income_weighted_utility": 0, "coin_eq_times_productivity": 1}
KERNEL_COMPONENTS = ["SimpleLabor", "PeriodicBracketTax"]

#: the env block of ``run_configs/one_step_economy.yaml`` (the default environment)
DEFAULT_ENV_CONFIG: dict[str, Any] = {
    "n_agents": 10,
    "world_size": [1, 1],
    "episode_length": 2,
    "seed": 0,
    "agent_reward_type": "isoelastic_coin_minus_labor",
    "isoelastic_eta": 0.23,
    "labor_cost": 0.7,
    "planner_reward_type": "inv_income_weighted_utility",
    "components": [
        {"SimpleLabor": {"mask_first_step": True, "payment_max_skill_multiplier": 3}},
        {
            "PeriodicBracketTax": {
                "disable_taxes": False,
                "tax_model": "model_wrapper",
                "period": 2,
                "rate_min": 0.0,
                "rate_max": 1.0,
                "rate_disc": 0.05,
                "usd_scaling": 1000.0,
                "bracket_spacing": "us-federal",
            }
        },
    ],
}


class UnsupportedOnGpuError(ValueError):
    """A component, tax model or size the one-step economy's kernels do not cover."""


def check_kernel_support(env: Any) -> am.OneStepParams:
    """The batched parameters of the dict-API env ``env``, or ``UnsupportedOnGpuError``
    naming the component / option and what the kernels support (no silent CPU fallback)."""
    names = [c.name for c in env.components]
    if names != KERNEL_COMPONENTS:
        raise UnsupportedOnGpuError(
            f"the GPU one-step economy supports the components {KERNEL_COMPONENTS} in that "
            f"order, got {names}; run other component lists on the dict API (env_backend 'cpu')"
        )
    tax = env.components[1]
    if tax.tax_model not in KERNEL_TAX_MODELS:
        raise UnsupportedOnGpuError(
            f"PeriodicBracketTax tax_model {tax.tax_model!r} has no GPU kernel; the GPU one-step "
            f"economy supports {sorted(KERNEL_TAX_MODELS)}"
        )
    if tax.tax_annealing_schedule is not None:
        raise UnsupportedOnGpuError(
            "PeriodicBracketTax tax_annealing_schedule has no GPU kernel; set it to None"
        )
    params = _batched_params(env, tax)
    if not 1 <= params.n_agents <= MAX_WORKERS:
        raise UnsupportedOnGpuError(
            f"n_agents={params.n_agents}: the GPU one-step economy supports 1..{MAX_WORKERS} "
            "workers (the exact Gini formula of fewer than 30 agents)"
        )
    if params.n_brackets > MAX_BRACKETS:
        raise UnsupportedOnGpuError(
            f"{params.n_brackets} tax brackets: the GPU one-step economy supports at most "
            f"{MAX_BRACKETS}"
        )
    if params.n_agents + params.n_brackets > 1024:
        raise UnsupportedOnGpuError(
            f"n_agents + brackets = {params.n_agents + params.n_brackets} threads; at most 1024"
        )
    return params


def _batched_params(env: Any, tax: Any) -> am.OneStepParams:
    """``OneStepParams.from_env``; for the Saez model (which the batched CPU model lacks) read
    as a fixed-rate model, the per-env Saez rates replacing ``fixed_rates`` at every step."""
    if tax.tax_model != "saez":
        return am.OneStepParams.from_env(env)
    tax.tax_model = "us-federal-single-filer-2018-scaled"  # read the rest as a fixed model
    try:
        params = am.OneStepParams.from_env(env)
    finally:
        tax.tax_model = "saez"
    return dataclasses.replace(params, tax_model="saez", fixed_rates=np.zeros(tax.n_brackets))


def dims_of(params: am.OneStepParams) -> dict[str, int]:
    """Named sizes of the declaration (``num_agents`` = threads = workers + brackets)."""
    n, b, k = params.n_agents, params.n_brackets, len(params.disc_rates)
    return {
        "num_agents": n + b,
        "n_workers": n,
        "n_brackets": b,
        "n_rates": k,
        "agent_obs_dim": b + n + 6,
        "planner_obs_dim": (b + n + 6) + 3 * n + b,
        "agent_actions": NUM_LABOR_HOURS + 1,
        "planner_actions": k + 1,
        **gpu_saez.saez_dims(params.tax_model == "saez"),
    }


def state_fields() -> list[StateField]:
    """Every array and constant, in kernel-parameter order."""
    f64, f32, i32 = np.float64, np.float32, np.int32
    workers, brackets = ("n_workers",), ("n_brackets",)

    def none(name: str, dtype: Any, shape: tuple = (), doc: str = "") -> StateField:
        return StateField(name, dtype, shape, reset="none", doc=doc)

    def const(name: str, dtype: Any, shape: tuple = (), doc: str = "") -> StateField:
        return StateField(name, dtype, shape, per_env=False, doc=doc)

    return [
        StateField("_timestep_", i32, doc="steps taken in the current episode"),
        StateField("_done_", i32, doc="1 once the episode has ended"),
        StateField("tax_cycle_pos", i32, doc="day of the tax period (1 = first day)"),
        StateField("rate_index", i32, brackets, doc="planner's rate index per bracket"),
        StateField("rates_obs", f64, brackets, doc="rates observed (set on a first day)"),
        StateField("coin", f64, workers),
        StateField("labor", f64, workers),
        StateField("production", f64, workers, doc="pre-tax income"),
        StateField("last_coin", f64, workers, doc="coin after the last tax day"),
        StateField("last_income", f64, workers),
        StateField("last_marginal_rate", f64, workers),
        StateField("utility", f64, workers, doc="utility at the last step (reward baseline)"),
        StateField("welfare", f64, doc="planner's social welfare at the last step"),
        StateField("total_collected_taxes", f64),
        StateField("observations_a", f32, ("n_workers", "agent_obs_dim")),
        StateField("observations_p", f32, ("n_brackets", "planner_obs_dim")),
        StateField("action_mask_a", f32, ("n_workers", "agent_actions")),
        StateField("action_mask_p", f32, ("n_brackets", "planner_actions")),
        StateField("sampled_actions_a", i32, workers, reset="zeros"),
        StateField("sampled_actions_p", i32, brackets, reset="zeros"),
        StateField("rewards_a", f32, workers, reset="zeros"),
        StateField("rewards_p", f32, brackets, reset="zeros"),
        none("invalid_actions", i32, doc="actions outside their mask (applied as NO-OP)"),
        none("completed_episodes", i32),
        none("episode_equality", f64, doc="equality of coin at the last episode's end"),
        none("episode_productivity", f64, doc="total coin at the last episode's end"),
        none("episode_welfare", f64),
        none("episode_taxes", f64),
        none("episode_coin", f64, workers),
        none("episode_labor", f64, workers),
        const("skills", f64, workers),
        const("cutoffs", f64, brackets),
        const("disc_rates", f64, ("n_rates",)),
        const("fixed_rates", f64, brackets),
        const("period", i32),
        const("episode_length", i32),
        const("tax_model_code", i32, doc="0 planner-set rates, 1 fixed rates"),
        const("mask_first_step", i32),
        const("agent_reward_code", i32, doc=str(AGENT_REWARD_CODES)),
        const("planner_reward_code", i32, doc=str(PLANNER_REWARD_CODES)),
        const("isoelastic_eta", f64),
        const("labor_exponent", f64),
        const("labor_cost", f64),
        const("equality_weight", f64, doc="1 - mixing_weight_gini_vs_coin"),
        const("skill_scale", f64, doc="payment_max_skill_multiplier"),
        const("time_scale", f64, doc="episode_length with observation scaling, else 1"),
        *gpu_saez.saez_fields(),
    ]


def constants_of(params: am.OneStepParams) -> dict[str, Any]:
    """Host values of the constants."""
    return {
        "skills": params.skills,
        "cutoffs": params.cutoffs,
        "disc_rates": params.disc_rates,
        "fixed_rates": params.fixed_rates,
        "period": np.int32(params.period),
        "episode_length": np.int32(params.episode_length),
        "tax_model_code": np.int32(KERNEL_TAX_MODELS[params.tax_model]),
        "mask_first_step": np.int32(params.mask_first_step),
        "agent_reward_code": np.int32(AGENT_REWARD_CODES[params.agent_reward_type]),
        "planner_reward_code": np.int32(PLANNER_REWARD_CODES[params.planner_reward_type]),
        "isoelastic_eta": np.float64(params.isoelastic_eta),
        "labor_exponent": np.float64(params.labor_exponent),
        "labor_cost": np.float64(params.labor_cost),
        "equality_weight": np.float64(1.0 - params.mixing_weight_gini_vs_coin),
        "skill_scale": np.float64(params.payment_max_skill_multiplier),
        "time_scale": np.float64(params.time_scale),
    }

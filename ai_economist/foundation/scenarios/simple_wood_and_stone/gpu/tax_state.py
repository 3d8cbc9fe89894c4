"""The device state of gather-trade-build's tax (``PeriodicBracketTax``), declared once.

Per env, sized from the tax's :class:`~..array_tax.TaxParams` (``B`` brackets, ``R`` planner
rates) and the agents ``A``; the fields of :class:`~..array_tax.TaxState`:

* ``tax_cycle_pos`` (1 on a period's first step, ``period`` on its last), ``tax_rate_index``
  ``(B,)`` (the planner's picks), ``tax_rates_obs`` ``(B,)`` (the rates as of the period's
  first step), ``tax_rate_completions`` (the episode count the rates read: the annealed
  limit, ``EconomyState.rate_completions``);
* per agent ``(A,)``: ``last_coin`` (coin endowment after the last tax day), ``last_income``
  (income of that period), ``last_marginal_rate``;
* ``total_collected`` (taxes since the reset), ``last_lump_sum`` (the last tax day's
  redistribution to every agent);
* the Saez model's income buffer, elasticity estimate and rates: the one-step economy's
  declaration (:func:`~...one_step_economy.gpu_saez.saez_fields`, one model, one state),
  kept across episodes as the component keeps them.

Settings travel in ``tax_params`` (float64, :data:`FLOAT_PARAMS`) and ``tax_iparams`` (int32,
:data:`INT_PARAMS`) with the cutoffs, the planner's rate choices and the fixed schedule;
``obs_offset_a`` / ``obs_offset_p`` are where the tax's block starts in the agents' / the
planner's observations, ``obs_offset_pa`` / ``obs_stride_pa`` where the planner's per-agent
(``p<i>``) fields start and the stride between agents, so the same device functions write
into the world's vectors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.components import tax_brackets as tb
from ai_economist.foundation.components.saez_tax import SAEZ_N_ESTIMATION_BINS
from ai_economist.foundation.scenarios.one_step_economy import gpu_saez
from ai_economist.foundation.scenarios.simple_wood_and_stone.array_tax import TaxParams
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.limits import (
    MAX_AGENTS,
    UnsupportedGpuConfig,
)
from ai_economist.warp_drive.state import StateField

MAX_BRACKETS = 16  # shared rate arrays of a block
MAX_RATES = 128  # the planner's rate choices
#: the tax models by the code the kernels read
TAX_MODEL_CODES = {
    "model_wrapper": 0,
    "us-federal-single-filer-2018-scaled": 1,
    "fixed-bracket-rates": 1,
    "saez": 2,
}
FLOAT_PARAMS = ("rate_max", "anneal_warmup", "anneal_slope")
INT_PARAMS = ("tax_model_code", "planner_sets_rates", "period", "n_rates", "annealing",
              "obs_offset_a", "obs_offset_p", "obs_offset_pa", "obs_stride_pa")  # fmt: skip
TP = {name: i for i, name in enumerate(FLOAT_PARAMS)}
TI = {name: i for i, name in enumerate(INT_PARAMS)}
#: the tax's observation fields in the dict env's sorted key order (``PeriodicBracketTax-``)
AGENT_FIELDS = ("curr_rates", "is_first_day", "is_tax_day", "last_incomes", "marginal_rate",
                "tax_phase")  # fmt: skip
PLANNER_FIELDS = ("curr_rates", "is_first_day", "is_tax_day", "last_incomes", "tax_phase")
PLANNER_AGENT_FIELDS = ("curr_marginal_rate", "last_income", "last_marginal_rate")


def check_tax_support(params: TaxParams, n_agents: int, where: str) -> None:
    """Raise :class:`~.state.UnsupportedGpuConfig` naming the first tax setting the kernels
    do not cover (agents, brackets, rate choices past the limits)."""
    limits = (
        ("n_agents", n_agents, 2, MAX_AGENTS),
        ("n_brackets", params.n_brackets, 2, MAX_BRACKETS),
        ("len(disc_rates)", params.disc_rates.size, 1, MAX_RATES),
        ("period", params.period, 1, 1_000_000),
    )
    for name, value, lo, hi in limits:
        if not lo <= value <= hi:
            raise UnsupportedGpuConfig(
                f"{where}: PeriodicBracketTax {name}={value}; the GPU tax supports {lo}..{hi:,}"
            )
    if params.tax_model not in TAX_MODEL_CODES:
        raise UnsupportedGpuConfig(
            f"{where}: tax_model={params.tax_model!r}; expected one of {list(TAX_MODEL_CODES)}"
        )


def agent_obs_size(params: TaxParams, n_agents: int) -> int:
    """Floats of the tax's block in an agent's observation (:data:`AGENT_FIELDS`)."""
    return params.n_brackets + 4 + n_agents


def planner_obs_size(params: TaxParams, n_agents: int) -> int:
    """Floats of the tax's block in the planner's flat observation (:data:`PLANNER_FIELDS`)."""
    return params.n_brackets + 3 + n_agents


def n_planner_agents(params: TaxParams) -> int:
    """The planner's policy agents: one per bracket when it sets the rates, else 1."""
    return params.n_brackets if params.planner_sets_rates else 1


def n_planner_actions(params: TaxParams) -> int:
    """Actions of a bracket agent: NO-OP then one per rate choice (1 without rate setting)."""
    return params.disc_rates.size + 1 if params.planner_sets_rates else 1


def state_dims(params: TaxParams, n_agents: int) -> dict[str, int]:
    """The named sizes of :func:`state_fields` (``n_agents`` as the world's)."""
    return {
        "n_agents": n_agents,
        "n_brackets": params.n_brackets,
        "n_rates": params.disc_rates.size,
        "obs_dim_tax_a": agent_obs_size(params, n_agents),
        "obs_dim_tax_p": planner_obs_size(params, n_agents),
        "n_tax_float_params": len(FLOAT_PARAMS),
        "n_tax_int_params": len(INT_PARAMS),
        **gpu_saez.saez_dims(params.tax_model == "saez"),
    }


def _f(name, dtype, shape=(), reset="none", doc="", per_env=True) -> StateField:
    return StateField(name, dtype, shape, per_env=per_env, reset=reset, doc=doc)


def state_fields() -> list[StateField]:
    """The tax's per-env device arrays, in kernel-parameter order (reset ``"none"``: the
    reset kernel's ``tax_reset`` re-initialises them when an env's ``_timestep_`` is 0; the
    Saez fields live across episodes)."""
    i32, f64 = np.int32, np.float64
    return [
        _f("tax_cycle_pos", i32, doc="1 on a period's first step, period on its last"),
        _f("tax_rate_index", i32, ("n_brackets",), doc="the planner's picks (disc_rates index)"),
        _f("tax_rates_obs", f64, ("n_brackets",), doc="the rates as of the period's first step"),
        _f("tax_rate_completions", i32, doc="the episode count the rates' annealed limit reads"),
        _f("last_coin", f64, ("n_agents",), doc="coin endowment after the last tax day"),
        _f("last_income", f64, ("n_agents",), doc="income of the last tax period"),
        _f("last_marginal_rate", f64, ("n_agents",), doc="its marginal rate"),
        _f("total_collected", f64, doc="taxes collected since the reset"),
        _f("last_lump_sum", f64, doc="the last tax day's transfer to every agent"),
        *[f for f in gpu_saez.saez_fields() if f.per_env],
    ]


def constant_fields() -> list[StateField]:
    """The tax's settings (``per_env=False``), declared after the host env's own."""
    f64, i32 = np.float64, np.int32
    return [
        _f("tax_cutoffs", f64, ("n_brackets",), per_env=False, doc="bracket lower edges"),
        _f("tax_disc_rates", f64, ("n_rates",), per_env=False, doc="the planner's choices"),
        _f("tax_fixed_rates", f64, ("n_brackets",), per_env=False, doc="us-federal / fixed"),
        _f("tax_params", f64, ("n_tax_float_params",), per_env=False, doc="FLOAT_PARAMS"),
        _f("tax_iparams", i32, ("n_tax_int_params",), per_env=False, doc="INT_PARAMS"),
        *[f for f in gpu_saez.saez_fields() if not f.per_env],
    ]


def saez_params(params: TaxParams) -> gpu_saez.SaezParams | None:
    """The Saez model's constants (``rate_max`` the unannealed one), or None."""
    if params.tax_model != "saez":
        return None
    edges = np.linspace(0, params.cutoffs[-1], SAEZ_N_ESTIMATION_BINS + 1)
    return gpu_saez.SaezParams(
        rate_min=params.rate_min,
        rate_max=params.rate_max,
        pareto_weight_type=params.pareto_weight_type,
        fixed_elas=params.saez_fixed_elas,
        bin_edges=edges,
        bin_sizes=np.concatenate([np.diff(edges), [np.inf]]),
        cutoffs=params.cutoffs,
        bracket_sizes=tb.bracket_edges_and_sizes(params.cutoffs)[1],
    )


def constant_values(params: TaxParams, obs_offset_a: int, obs_offset_p: int, obs_offset_pa: int,
                    obs_stride_pa: int, seed: int | None = None) -> dict[str, Any]:  # fmt: skip
    """Host values of the constant arrays (``seed``: the Saez draws')."""
    warmup, slope = params.annealing if params.annealing is not None else (0.0, 0.0)
    floats = {"rate_max": params.rate_max, "anneal_warmup": warmup, "anneal_slope": slope}
    ints = {
        "tax_model_code": TAX_MODEL_CODES[params.tax_model],
        "planner_sets_rates": int(params.planner_sets_rates),
        "period": params.period,
        "n_rates": params.disc_rates.size,
        "annealing": int(params.annealing is not None),
        "obs_offset_a": obs_offset_a,
        "obs_offset_p": obs_offset_p,
        "obs_offset_pa": obs_offset_pa,
        "obs_stride_pa": obs_stride_pa,
    }
    saez = gpu_saez.saez_initial(saez_params(params), params.n_brackets, seed)
    return {
        "tax_cutoffs": np.asarray(params.cutoffs, dtype=np.float64),
        "tax_disc_rates": np.asarray(params.disc_rates, dtype=np.float64),
        "tax_fixed_rates": np.asarray(params.fixed_rates, dtype=np.float64),
        "tax_params": np.array([floats[n] for n in FLOAT_PARAMS], dtype=np.float64),
        "tax_iparams": np.array([ints[n] for n in INT_PARAMS], dtype=np.int32),
        **{k: v for k, v in saez.items() if k != "saez_elas"},
    }


def kernel_defines() -> dict[str, int]:
    """C constants: ``TP_<NAME>`` / ``TI_<NAME>`` indices."""
    out = {f"TP_{n.upper()}": i for n, i in TP.items()}
    out.update({f"TI_{n.upper()}": i for n, i in TI.items()})
    return out

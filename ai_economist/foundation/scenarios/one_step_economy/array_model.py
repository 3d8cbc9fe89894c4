"""The one-step economy and its bracket tax as arrays: all environments at once (numpy).

The batched twin of ``OneStepEconomy`` with the components ``SimpleLabor`` then
``PeriodicBracketTax`` (tax models ``model_wrapper``, ``us-federal-single-filer-2018-scaled``
and ``fixed-bracket-rates``). State is a handful of plain arrays with the envs on the first
axis and the agents (or brackets) on the last; each rule is one function, written so that a
CUDA C or Numba kernel can mirror it name for name:

* :func:`set_rates_from_actions`  planner actions -> rate indices (first day of a period)
* :func:`labor_step`              hours -> coin, labour, production (``simple_labor``)
* :func:`tax_step`                tax day: bills, lump sum, last incomes (``tax_brackets``)
* :func:`optimization_metrics`    utilities and social welfare (``rules``)
* :func:`agent_observations` / :func:`planner_observations` / :func:`action_masks`

``tests`` hold this model equal to the dict-API env step for step.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ai_economist.foundation.components import tax_brackets as tb
from ai_economist.foundation.components.simple_labor import NUM_LABOR_HOURS, labor_step
from ai_economist.foundation.scenarios.one_step_economy import rules

SUPPORTED_TAX_MODELS = (
    "model_wrapper",
    "us-federal-single-filer-2018-scaled",
    "fixed-bracket-rates",
)
_ENV_REWARD_FIELDS = (
    "agent_reward_type", "isoelastic_eta", "labor_exponent", "labor_cost",
    "planner_reward_type", "mixing_weight_gini_vs_coin",
)  # fmt: skip
"""The :class:`OneStepParams` reward fields that ``from_env`` copies from the env by name."""


@dataclasses.dataclass(frozen=True)
class OneStepParams:
    """Constants of the batched model (read from a dict-API env by :meth:`from_env`)."""

    n_agents: int
    episode_length: int
    period: int
    skills: np.ndarray  # (N,)
    payment_max_skill_multiplier: float
    mask_first_step: bool
    cutoffs: np.ndarray  # (B,)
    tax_model: str
    disc_rates: np.ndarray  # (K,) planner choices (model_wrapper)
    fixed_rates: np.ndarray  # (B,) the rates of the fixed tax models
    agent_reward_type: str
    isoelastic_eta: float
    labor_exponent: float
    labor_cost: float
    planner_reward_type: str
    mixing_weight_gini_vs_coin: float
    time_scale: float  # episode_length with observation scaling, else 1

    @property
    def n_brackets(self) -> int:
        """Number of tax brackets."""
        return len(self.cutoffs)

    @classmethod
    def from_env(cls, env: Any) -> OneStepParams:
        """Parameters of a ``one-step-economy`` env built with [SimpleLabor, PeriodicBracketTax].

        Raises:
            ValueError: another component list, a Saez tax or tax annealing (not batched).
        """
        names = [c.name for c in env.components]
        if names != ["SimpleLabor", "PeriodicBracketTax"]:
            raise ValueError(
                f"the batched one-step economy needs components ['SimpleLabor', 'PeriodicBracketTax'] "
                f"in that order, got {names}"
            )
        labor, tax = env.components
        if tax.tax_model not in SUPPORTED_TAX_MODELS or tax.tax_annealing_schedule is not None:
            raise ValueError(
                f"the batched one-step economy supports tax_model in {list(SUPPORTED_TAX_MODELS)} "
                f"without tax_annealing_schedule; got {tax.tax_model!r}, {tax.tax_annealing_schedule!r}"
            )
        fixed = (
            np.zeros(tax.n_brackets)
            if tax.tax_model == "model_wrapper"
            else tax.curr_marginal_rates
        )
        return cls(
            n_agents=env.n_agents,
            episode_length=env.episode_length,
            period=tax.period,
            skills=np.array(labor.skills, dtype=np.float64),
            payment_max_skill_multiplier=labor.payment_max_skill_multiplier,
            mask_first_step=labor.mask_first_step,
            cutoffs=np.array(tax.bracket_cutoffs, dtype=np.float64),
            tax_model=tax.tax_model,
            disc_rates=np.array(tax.config.disc_rates, dtype=np.float64),
            fixed_rates=np.array(fixed, dtype=np.float64),
            **{name: getattr(env, name) for name in _ENV_REWARD_FIELDS},
            time_scale=float(env.episode_length if env._allow_observation_scaling else 1),
        )


@dataclasses.dataclass
class OneStepState:
    """Per-env state: ``(E,)``, ``(E, N)`` agents or ``(E, B)`` brackets."""

    timestep: np.ndarray
    tax_cycle_pos: np.ndarray
    rate_index: np.ndarray  # (E, B) int: index into disc_rates (model_wrapper)
    rates_obs: np.ndarray  # (E, B) the rates observed (set on a period's first day)
    coin: np.ndarray
    labor: np.ndarray
    production: np.ndarray
    last_coin: np.ndarray
    last_income: np.ndarray
    last_marginal_rate: np.ndarray
    utility: np.ndarray  # (E, N) at the last step (reward baseline)
    welfare: np.ndarray  # (E,)
    total_collected_taxes: np.ndarray  # (E,)


_AGENT_FLOAT_FIELDS = ("coin", "labor", "production", "last_coin", "last_income",
                       "last_marginal_rate", "utility")  # fmt: skip
"""The :class:`OneStepState` fields that are ``(E, N)`` floats, zero at reset."""


def initial_state(params: OneStepParams, num_envs: int) -> OneStepState:
    """Every env at its reset state."""
    e, n, b = num_envs, params.n_agents, params.n_brackets
    state = OneStepState(
        timestep=np.zeros(e, dtype=np.int64),
        tax_cycle_pos=np.ones(e, dtype=np.int64),
        rate_index=np.zeros((e, b), dtype=np.int64),
        rates_obs=np.zeros((e, b)),
        **{name: np.zeros((e, n)) for name in _AGENT_FLOAT_FIELDS},
        welfare=np.zeros(e),
        total_collected_taxes=np.zeros(e),
    )
    state.rates_obs[:] = current_rates(state, params)
    state.utility[:], state.welfare[:] = optimization_metrics(state, params)
    return state


def reset_envs(state: OneStepState, params: OneStepParams, which: np.ndarray) -> None:
    """Reset the envs selected by the bool ``(E,)`` array ``which`` in place."""
    fresh = initial_state(params, int(np.sum(which)))
    for field in dataclasses.fields(OneStepState):
        getattr(state, field.name)[which] = getattr(fresh, field.name)


def current_rates(state: OneStepState, params: OneStepParams) -> np.ndarray:
    """The marginal rate of every bracket in every env, ``(E, B)``."""
    if params.tax_model == "model_wrapper":
        return params.disc_rates[state.rate_index]
    return np.broadcast_to(params.fixed_rates, state.rate_index.shape).copy()


def set_rates_from_actions(
    rate_index: np.ndarray, planner_actions: np.ndarray, n_rates: int
) -> np.ndarray:
    """New rate indices: action 0 keeps a bracket's index, ``k`` in 1..n_rates picks ``k - 1``."""
    actions = np.asarray(planner_actions)
    if np.any((actions < 0) | (actions > n_rates)):
        raise ValueError(
            f"planner tax actions must be in 0..{n_rates}, got {np.unique(actions).tolist()}"
        )
    return np.where(actions > 0, actions - 1, rate_index)


def tax_step(state: OneStepState, params: OneStepParams, tax_day: np.ndarray) -> None:
    """On the envs where ``tax_day``: tax the period's incomes and pay the lump sum back."""
    if not np.any(tax_day):
        return
    rates = current_rates(state, params)[tax_day]
    out = tb.enact_taxes(state.coin[tax_day], 0.0, state.last_coin[tax_day], params.cutoffs, rates)
    state.coin[tax_day] = out.inventory_coin
    state.last_coin[tax_day] = out.last_coin
    state.last_income[tax_day] = out.income
    state.last_marginal_rate[tax_day] = out.marginal_rate
    state.total_collected_taxes[tax_day] += out.tax_paid.sum(axis=-1)


def optimization_metrics(
    state: OneStepState, params: OneStepParams
) -> tuple[np.ndarray, np.ndarray]:
    """Agents' utilities ``(E, N)`` and the planner's social welfare ``(E,)``."""
    util = rules.agent_utilities(
        state.coin, state.labor, params.agent_reward_type, params.isoelastic_eta,
        params.labor_exponent, params.labor_cost,
    )  # fmt: skip
    welfare = rules.planner_welfare(
        state.coin,
        state.production,
        util,
        params.planner_reward_type,
        params.mixing_weight_gini_vs_coin,
    )
    return util, np.asarray(welfare, dtype=np.float64)


def step(
    state: OneStepState, params: OneStepParams, agent_actions: Any, planner_actions: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Advance every env one step in place; return ``(agent_rewards, planner_reward, done)``.

    ``agent_actions`` (E, N) hours (0 = NO-OP); ``planner_actions`` (E, B) per-bracket rate
    actions (read on a period's first day, model_wrapper only).
    """
    agent_actions = np.asarray(agent_actions)
    if np.any((agent_actions < 0) | (agent_actions > NUM_LABOR_HOURS)):
        raise ValueError(f"SimpleLabor actions must be in 0..{NUM_LABOR_HOURS}")
    state.timestep += 1
    state.coin, state.labor, state.production = labor_step(
        agent_actions, params.skills, state.coin, state.labor, state.production
    )
    first_day = state.tax_cycle_pos == 1
    if params.tax_model == "model_wrapper" and np.any(first_day):
        new_index = set_rates_from_actions(
            state.rate_index, planner_actions, len(params.disc_rates)
        )
        state.rate_index[first_day] = new_index[first_day]
    state.rates_obs[first_day] = current_rates(state, params)[first_day]
    tax_day = state.tax_cycle_pos >= params.period
    tax_step(state, params, tax_day)
    state.tax_cycle_pos = np.where(tax_day, 1, state.tax_cycle_pos + 1)
    util, welfare = optimization_metrics(state, params)
    agent_rew, planner_rew = util - state.utility, welfare - state.welfare
    state.utility, state.welfare = util, welfare
    return agent_rew, planner_rew, state.timestep >= params.episode_length


def _cycle_features(state: OneStepState, params: OneStepParams) -> tuple[np.ndarray, ...]:
    pos = state.tax_cycle_pos.astype(np.float64)
    return (
        (pos >= params.period).astype(np.float64),
        (pos == 1).astype(np.float64),
        pos / params.period,
    )


def agent_observations(state: OneStepState, params: OneStepParams) -> np.ndarray:
    """``(E, N, B + N + 6)``: each agent's flat observation, in the dict env's order.

    curr_rates, is_first_day, is_tax_day, sorted last incomes / period, marginal_rate,
    tax_phase, skill / pmsm, time.
    """
    e, n = state.coin.shape
    is_tax_day, is_first_day, phase = _cycle_features(state, params)
    marginal = tb.marginal_rate(
        state.coin - state.last_coin, params.cutoffs, current_rates(state, params)
    )
    incomes = np.sort(state.last_income / params.period, axis=-1)
    per_env = np.concatenate(
        [state.rates_obs, is_first_day[:, None], is_tax_day[:, None], incomes], axis=-1
    )
    skill = np.broadcast_to(params.skills / params.payment_max_skill_multiplier, (e, n))
    time = np.broadcast_to((state.timestep / params.time_scale)[:, None], (e, n))
    tail = np.stack([marginal, np.broadcast_to(phase[:, None], (e, n)), skill, time], axis=-1)
    return np.concatenate(
        [np.broadcast_to(per_env[:, None, :], (e, n, per_env.shape[-1])), tail], axis=-1
    )


def planner_observations(
    state: OneStepState, params: OneStepParams
) -> tuple[np.ndarray, np.ndarray]:
    """The planner's flat observation ``(E, B + N + 6)`` and per-agent entries ``(E, N, 3)``.

    Flat: curr_rates, is_first_day, is_tax_day, sorted last incomes / period, tax_phase,
    time, equality, per-capita productivity / 1000. Per agent: curr_marginal_rate,
    last_income / period, last_marginal_rate.
    """
    is_tax_day, is_first_day, phase = _cycle_features(state, params)
    world = rules.planner_observations(state.coin)
    flat = np.concatenate(
        [
            state.rates_obs,
            is_first_day[:, None],
            is_tax_day[:, None],
            np.sort(state.last_income / params.period, axis=-1),
            np.stack([phase, state.timestep / params.time_scale, world["equality"],
                      world["normalized_per_capita_productivity"]], axis=-1),
        ],
        axis=-1,
    )  # fmt: skip
    marginal = tb.marginal_rate(
        state.coin - state.last_coin, params.cutoffs, current_rates(state, params)
    )
    agentwise = np.stack(
        [marginal, state.last_income / params.period, state.last_marginal_rate], axis=-1
    )
    return flat, agentwise


def action_masks(state: OneStepState, params: OneStepParams) -> tuple[np.ndarray, np.ndarray]:
    """Agent masks ``(E, N, 101)`` and planner masks per bracket ``(E, B, K + 1)``; NO-OP first."""
    e = state.coin.shape[0]
    agents = np.ones((e, params.n_agents, NUM_LABOR_HOURS + 1), dtype=np.float32)
    if params.mask_first_step:
        agents[state.timestep == 0, :, 1:] = 0
    planner = np.ones((e, params.n_brackets, len(params.disc_rates) + 1), dtype=np.float32)
    planner[state.tax_cycle_pos != 1, :, 1:] = 0
    return agents, planner

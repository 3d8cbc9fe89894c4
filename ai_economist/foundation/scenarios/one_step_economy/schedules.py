"""Compare tax schedules in the one-step economy with best-responding agents.

Each agent chooses the hours (0..100) that maximise its own utility given the bracket rates
and the other agents' hours (its taxes and its share of the lump sum included); repeating
this for every agent until no one changes gives a Nash equilibrium of the labour step
(:func:`best_response_hours`). :func:`evaluate_schedule` then plays the episode in the
batched array model and reports the planner's welfare, productivity and equality, so any
schedule (no taxes, US federal, Saez, a trained planner's) is scored the same way.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ai_economist.foundation.components import tax_brackets as tb
from ai_economist.foundation.components.simple_labor import NUM_LABOR_HOURS
from ai_economist.foundation.scenarios.one_step_economy import array_model as am
from ai_economist.foundation.scenarios.one_step_economy import rules
from ai_economist.foundation.scenarios.one_step_economy.one_step_economy import OneStepEconomy


def _post_tax_coin(income: np.ndarray, cutoffs: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """Coin after taxes and the equal lump sum; incomes ``(..., N)``."""
    paid = tb.taxes_due(income, cutoffs, rates)
    return income - paid + paid.sum(axis=-1, keepdims=True) / income.shape[-1]


def best_response_hours(params: am.OneStepParams, rates: Any, max_rounds: int = 100) -> np.ndarray:
    """Hours ``(N,)`` where no agent gains by changing its own (agents move in index order).

    Raises:
        RuntimeError: no equilibrium within ``max_rounds`` rounds.
    """
    rates = np.asarray(rates, dtype=np.float64)
    candidates = np.arange(NUM_LABOR_HOURS + 1, dtype=np.float64)
    hours = np.zeros(params.n_agents)
    for _ in range(max_rounds):
        changed = False
        for i in range(params.n_agents):
            trial = np.repeat(hours[None, :], len(candidates), axis=0)
            trial[:, i] = candidates
            coin = _post_tax_coin(trial * params.skills, params.cutoffs, rates)[:, i]
            util = rules.agent_utilities(
                coin, candidates, params.agent_reward_type, params.isoelastic_eta,
                params.labor_exponent, params.labor_cost,
            )  # fmt: skip
            best = candidates[int(np.argmax(util))]
            changed |= best != hours[i]
            hours[i] = best
        if not changed:
            return hours.astype(np.int64)
    raise RuntimeError(f"best responses did not settle within {max_rounds} rounds")


def evaluate_schedule(
    params: am.OneStepParams, rates: Any, hours: Any | None = None
) -> dict[str, Any]:
    """Play one episode with fixed ``rates`` (and ``hours``, default: best responses).

    Returns the rates, hours, the planner's welfare, productivity, equality, mean utility
    and the taxes collected.
    """
    rates = np.asarray(rates, dtype=np.float64)
    fixed = dataclasses.replace(params, tax_model="fixed-bracket-rates", fixed_rates=rates)
    hours = best_response_hours(params, rates) if hours is None else np.asarray(hours)
    state = am.initial_state(fixed, 1)
    no_op = np.zeros((1, params.n_brackets), dtype=np.int64)
    am.step(state, fixed, np.zeros((1, params.n_agents), dtype=np.int64), no_op)
    am.step(state, fixed, hours[None, :], no_op)
    world = rules.planner_observations(state.coin[0])
    return {
        "rates": rates.tolist(),
        "hours": np.asarray(hours).tolist(),
        "welfare": float(state.welfare[0]),
        "productivity": float(state.coin[0].sum()),
        "equality": float(world["equality"]),
        "util/avg_agent": float(state.utility[0].mean()),
        "taxes": float(state.total_collected_taxes[0]),
    }


def saez_rates(env_config: dict[str, Any], episodes: int = 100) -> np.ndarray:
    """The Saez model's rates after ``episodes`` episodes of best-responding agents.

    Drives a dict-API env whose ``PeriodicBracketTax`` uses ``tax_model="saez"`` (random
    rates until its 500-sample buffer is full, then the formula with the estimated
    elasticity); returns the rates the formula set in the last episode.
    """
    config = dict(env_config)
    components = []
    for spec in config.pop("components"):
        (name, kwargs), = spec.items() if isinstance(spec, dict) else [spec]  # fmt: skip
        if name == "PeriodicBracketTax":
            kwargs = {**kwargs, "tax_model": "saez"}
        components.append((name, dict(kwargs)))
    env = OneStepEconomy(components=components, **config)
    fixed_env = OneStepEconomy(
        components=[(n, {**k, "tax_model": "fixed-bracket-rates", "fixed_bracket_rates": [0.0] * 7})
                    if n == "PeriodicBracketTax" else (n, k) for n, k in components],
        **config,
    )  # fmt: skip
    params = am.OneStepParams.from_env(fixed_env)
    tax = env.get_component("PeriodicBracketTax")
    if tax.n_brackets != 7:
        raise ValueError("saez_rates expects the 7 US-federal brackets")
    for _ in range(episodes):
        env.reset()
        env.step({})
        hours = best_response_hours(params, tax.curr_marginal_rates)
        env.step({str(i): int(h) for i, h in enumerate(hours)})
    return np.array(
        tax.running_avg_tax_rates if tax._reached_min_samples else tax.curr_marginal_rates
    )

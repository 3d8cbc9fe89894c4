"""Rewards of the gather-trade-build array world: isoelastic coin minus labour per agent and
the planner's ``coin_eq_times_productivity``, with the envs on the first axis.

The sums run in the dict env's order (``WoodAndStoneBase._fast_metrics``: plain loops over
the agents) and the coin term uses C's ``pow`` per changed coin, so the rewards equal the
dict env's to the last bit; a GPU twin's ``pow`` may differ in the last bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rules as rules
from ai_economist.foundation.scenarios.simple_wood_and_stone.array_state import (
    GTBWorldParams,
    GTBWorldState,
)


def coin_utilities(coin: np.ndarray, params: GTBWorldParams) -> np.ndarray:
    """``(c^(1-eta) - 1) / (1-eta)`` per element with C's ``pow`` (Python floats), as the
    dict env computes it (numpy's vectorised power may differ in the last bit). Called only
    for the agents whose coin changed."""
    e1 = 1 - params.isoelastic_eta
    flat = [(float(c) ** e1 - 1) / e1 for c in np.ravel(coin)]
    return np.array(flat, dtype=np.float64).reshape(np.shape(coin))


def energy_weight(state: GTBWorldState, params: GTBWorldParams, idx: Any) -> np.ndarray:
    """Per env, the annealing progress of the labour cost (``WoodAndStoneBase.energy_weight``)."""
    if params.energy_warmup_constant <= 0.0:
        return np.ones(np.shape(state.completions[idx]))
    progress = (
        state.completions[idx]
        if params.energy_warmup_method == "decay"
        else state.auto_integrator[idx]
    )
    return 1.0 - np.exp(-progress / params.energy_warmup_constant)


def optimization_metrics(
    state: GTBWorldState, params: GTBWorldParams, idx: Any = slice(None)
) -> tuple[np.ndarray, np.ndarray]:
    """Agents' utilities ``(E, A)`` and the planner's ``coin_eq_times_productivity``
    ``(E,)`` of the envs ``idx``, summed in the dict env's order (plain loops over agents)."""
    k = energy_weight(state, params, idx) * params.energy_cost
    utility = state.coin_utility[idx] - state.labor[idx] * k[:, None]
    coins = state.inventory[idx, :, rules.COIN] + state.escrow[idx, :, rules.COIN]
    n = params.n_agents
    total = np.zeros(coins.shape[0])
    diff = np.zeros(coins.shape[0])
    for i in range(n):
        total = total + coins[:, i]
        for j in range(n):
            diff = diff + np.abs(coins[:, i] - coins[:, j])
    gini = diff / (2 * n * total + 1e-10) / ((n - 1) / n)
    w = 1 - params.mixing_weight_gini_vs_coin
    welfare = (w * (1 - gini) + 1 - w) * (total / n)
    return utility, welfare


def refresh_coin_utility(state: GTBWorldState, params: GTBWorldParams, changed: Any) -> None:
    """Recompute ``state.coin_utility`` where the bool (E, A) ``changed`` says an agent's
    coin endowment (inventory + escrow) changed: a batched market or tax step that moves
    coin calls this before the rewards."""
    e, a = np.nonzero(changed)
    coin = state.inventory[e, a, rules.COIN] + state.escrow[e, a, rules.COIN]
    state.coin_utility[e, a] = coin_utilities(coin, params)


def step_rewards(
    state: GTBWorldState, params: GTBWorldParams
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The step's rewards (utility and welfare changes) and done flags; updates the
    baselines, the auto-warmup integrator and the completed-episode counts in place."""
    utility, welfare = optimization_metrics(state, params)
    agent_rew, planner_rew = utility - state.utility, welfare - state.welfare
    state.utility, state.welfare = utility, welfare
    total = np.zeros(state.num_envs)
    for i in range(params.n_agents):
        total = total + agent_rew[:, i]
    state.auto_integrator += total > 0
    done = state.timestep >= params.episode_length
    state.completions += done
    return agent_rew, planner_rew, done

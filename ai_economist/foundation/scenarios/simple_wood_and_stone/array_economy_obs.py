"""Masks and flat observations of the gather-trade-build array economy (numpy).

Each function reads an :class:`~.array_economy.EconomyState` and returns arrays with the env
on the first axis, equal to what the dict env (``flatten_observations=True``,
``flatten_masks=True``) returns:

* :func:`agent_masks` / :func:`planner_masks`  the flat ``action_mask`` vectors
* :func:`agent_fields` / :func:`planner_fields` / :func:`planner_agent_fields`  the
  observation fields keyed as in the dict env (source prefix, then the field)
* :func:`flatten`  the fields packed as the dict env's ``"flat"``: sorted keys, float32
* :func:`observations`  everything at once, and the trainer's vectors (as
  ``batched.GatherTradeBuildBatch`` builds them from the dict env)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.components import cda_batched_views as views
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_obs
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rules as rules
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_tax as tax
from ai_economist.foundation.scenarios.simple_wood_and_stone.array_economy import (
    COMPONENTS,
    EconomyParams,
    EconomyState,
    coin_endowment,
    market_goods,
)

CDA, TAX = COMPONENTS[1] + "-", COMPONENTS[3] + "-"


def agent_masks(state: EconomyState, params: EconomyParams) -> np.ndarray:
    """float32 (E, A, n): ``[NO-OP, build, (Buy_c, Sell_c) per commodity, 4 moves]``."""
    w, wp = state.world, params.world
    masks = np.ones((state.num_envs, wp.n_agents, params.n_agent_actions), dtype=np.float32)
    masks[..., 1] = rules.build_masks(
        w.inventory, w.resource_maps, w.house_owner, wp.landmarks, w.locs
    )
    inventory, _ = market_goods(params, state)
    buy, sell = views.action_masks(params.market, state.market, inventory)
    p = params.market.n_prices
    for c in range(params.market.n_commodities):
        start = 2 + 2 * c * p
        masks[..., start : start + p] = buy[:, :, c]
        masks[..., start + p : start + 2 * p] = sell[:, :, c]
    masks[..., params.move_start :] = rules.move_masks(w.locs, w.house_owner, wp.water)
    return masks


def planner_masks(state: EconomyState, params: EconomyParams) -> np.ndarray:
    """float32 (E, n): the planner's flat mask (phase 2: per bracket ``[1]`` + its rates)."""
    return tax.planner_masks(params.tax, state.tax, state.mask_completions)


def _market_fields(state: EconomyState, params: EconomyParams) -> dict[str, np.ndarray]:
    return views.market_observations(params.market, state.market)


def _tax_fields(
    state: EconomyState, params: EconomyParams
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    return tax.tax_observations(
        params.tax, state.tax, coin_endowment(state), state.rate_completions
    )


def agent_fields(state: EconomyState, params: EconomyParams) -> dict[str, np.ndarray]:
    """The agents' flat-able observation fields, each (E, A, k)."""
    e, a = state.num_envs, params.world.n_agents

    def common(value: np.ndarray) -> np.ndarray:  # (E,) or (E, k), the same for every agent
        value = value.reshape(e, 1, -1)
        return np.broadcast_to(value, (e, a, value.shape[-1]))

    fields = {
        k: common(v) if v.ndim == 1 else v[..., None]
        for k, v in array_obs.scalar_observations(state.world, params.world).items()
    }
    obs = _market_fields(state, params)
    for c, name in enumerate(params.market.commodities):
        fields[f"{CDA}market_rate-{name}"] = common(obs["market_rate"][:, c])
        fields[f"{CDA}price_history-{name}"] = common(obs["price_history"][:, c])
        for key in ("available_asks", "available_bids", "my_asks", "my_bids"):
            fields[f"{CDA}{key}-{name}"] = obs[key][:, c]
    tax_common, _ = _tax_fields(state, params)
    for key, value in tax_common.items():
        fields[TAX + key] = value[..., None] if key == "marginal_rate" else common(value)
    return fields


def planner_fields(state: EconomyState, params: EconomyParams) -> dict[str, np.ndarray]:
    """The planner's own flat-able fields, each (E, k) (its inventory is always empty)."""
    e = state.num_envs
    fields = {"time": (state.world.timestep / params.world.time_scale).reshape(e, 1)}
    for name in rules.INVENTORY:
        fields[f"world-inventory-{name}"] = np.zeros((e, 1))
    obs = _market_fields(state, params)
    for c, name in enumerate(params.market.commodities):
        fields[f"{CDA}market_rate-{name}"] = obs["market_rate"][:, c, None]
        for key in ("price_history", "full_asks", "full_bids"):
            fields[f"{CDA}{key}-{name}"] = obs[key][:, c]
    tax_common, _ = _tax_fields(state, params)
    for key, value in tax_common.items():
        if key != "marginal_rate":
            fields[TAX + key] = value.reshape(e, -1)
    return fields


def planner_agent_fields(state: EconomyState, params: EconomyParams) -> dict[str, np.ndarray]:
    """The planner's ``p<i>`` fields of every agent, each (E, A, 1)."""
    inventory = state.world.inventory * params.world.inv_scale
    fields = {
        f"world-inventory-{n}": inventory[..., k, None] for k, n in enumerate(rules.INVENTORY)
    }
    _, per_agent = _tax_fields(state, params)
    fields.update({TAX + k: v[..., None] for k, v in per_agent.items()})
    return fields


def flatten(fields: dict[str, np.ndarray]) -> np.ndarray:
    """The fields' values concatenated on the last axis in sorted key order, float32 (the
    dict env's ``Packager``)."""
    keys = sorted(fields)
    lead = fields[keys[0]].shape[:-1]
    out = np.empty((*lead, sum(fields[k].shape[-1] for k in keys)), dtype=np.float32)
    start = 0
    for k in keys:
        size = fields[k].shape[-1]
        out[..., start : start + size] = fields[k]
        start += size
    return out


def observations(
    state: EconomyState, params: EconomyParams, static: np.ndarray | None = None
) -> dict[str, Any]:
    """Every env's observations: ``agent_flat`` (E, A, Fa), ``world_map`` (E, A, 7, s, s),
    ``world_idx_map`` (E, A, 2, s, s), ``agent_masks``, ``planner_flat`` (E, Fp),
    ``planner_agents`` (E, A, 6) (the ``p<i>`` vectors), ``planner_masks``; and the trainer's
    vectors ``agent_vectors`` (E, A, Fa + maps) and ``planner_vector`` (E, Fp + A * 6)
    (``static``: :func:`array_obs.static_windows`, computed when not given)."""
    maps, idx_maps = array_obs.egocentric_maps(state.world, params.world, static)
    agent_flat = flatten(agent_fields(state, params))
    planner_flat = flatten(planner_fields(state, params))
    planner_agents = flatten(planner_agent_fields(state, params))
    e, a = agent_flat.shape[:2]
    return {
        "agent_flat": agent_flat,
        "world_map": maps,
        "world_idx_map": idx_maps,
        "agent_masks": agent_masks(state, params),
        "planner_flat": planner_flat,
        "planner_agents": planner_agents,
        "planner_masks": planner_masks(state, params),
        "agent_vectors": np.concatenate(
            [agent_flat, maps.reshape(e, a, -1), idx_maps.reshape(e, a, -1)],
            axis=-1,
            dtype=np.float32,
        ),
        "planner_vector": np.concatenate([planner_flat, planner_agents.reshape(e, -1)], axis=-1),
    }

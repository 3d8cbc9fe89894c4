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


Sources = tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]


def sources(state: EconomyState, params: EconomyParams) -> Sources:
    """What the fields are read from: the market's observations, the tax's common and
    per-agent observations (computed once per step by :func:`observations`)."""
    common, per_agent = tax.tax_observations(
        params.tax, state.tax, coin_endowment(state), state.rate_completions
    )
    return views.market_observations(params.market, state.market), common, per_agent


def agent_fields(
    state: EconomyState, params: EconomyParams, src: Sources | None = None
) -> dict[str, np.ndarray]:
    """The agents' flat-able observation fields, each (E, A, k) (``src``: :func:`sources`,
    computed when not given)."""
    e, a = state.num_envs, params.world.n_agents

    def common(value: np.ndarray) -> np.ndarray:  # (E,) or (E, k), the same for every agent
        value = value.reshape(e, 1, -1)
        return np.broadcast_to(value, (e, a, value.shape[-1]))

    fields = {
        k: common(v) if v.ndim == 1 else v[..., None]
        for k, v in array_obs.scalar_observations(state.world, params.world).items()
    }
    obs, tax_common, _ = src or sources(state, params)
    for c, name in enumerate(params.market.commodities):
        fields[f"{CDA}market_rate-{name}"] = common(obs["market_rate"][:, c])
        fields[f"{CDA}price_history-{name}"] = common(obs["price_history"][:, c])
        for key in ("available_asks", "available_bids", "my_asks", "my_bids"):
            fields[f"{CDA}{key}-{name}"] = obs[key][:, c]
    for key, value in tax_common.items():
        fields[TAX + key] = value[..., None] if key == "marginal_rate" else common(value)
    return fields


def planner_fields(
    state: EconomyState, params: EconomyParams, src: Sources | None = None
) -> dict[str, np.ndarray]:
    """The planner's own flat-able fields, each (E, k) (its inventory is always empty)."""
    e = state.num_envs
    fields = {"time": (state.world.timestep / params.world.time_scale).reshape(e, 1)}
    for name in rules.INVENTORY:
        fields[f"world-inventory-{name}"] = np.zeros((e, 1))
    obs, tax_common, _ = src or sources(state, params)
    for c, name in enumerate(params.market.commodities):
        fields[f"{CDA}market_rate-{name}"] = obs["market_rate"][:, c, None]
        for key in ("price_history", "full_asks", "full_bids"):
            fields[f"{CDA}{key}-{name}"] = obs[key][:, c]
    for key, value in tax_common.items():
        if key != "marginal_rate":
            fields[TAX + key] = value.reshape(e, -1)
    return fields


def planner_agent_fields(
    state: EconomyState, params: EconomyParams, src: Sources | None = None
) -> dict[str, np.ndarray]:
    """The planner's ``p<i>`` fields of every agent, each (E, A, 1)."""
    inventory = state.world.inventory * params.world.inv_scale
    fields = {
        f"world-inventory-{n}": inventory[..., k, None] for k, n in enumerate(rules.INVENTORY)
    }
    _, _, per_agent = src or sources(state, params)
    fields.update({TAX + k: v[..., None] for k, v in per_agent.items()})
    return fields


def flatten(fields: dict[str, np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
    """The fields' values concatenated on the last axis in sorted key order, float32 (the
    dict env's ``Packager``), written into ``out`` when given."""
    keys = sorted(fields)
    lead = fields[keys[0]].shape[:-1]
    if out is None:
        out = np.empty((*lead, sum(fields[k].shape[-1] for k in keys)), dtype=np.float32)
    start = 0
    for k in keys:
        size = fields[k].shape[-1]
        out[..., start : start + size] = fields[k]
        start += size
    return out


def observations(
    state: EconomyState,
    params: EconomyParams,
    static: np.ndarray | None = None,
    agent_out: np.ndarray | None = None,
) -> dict[str, Any]:
    """Every env's observations: ``agent_flat`` (E, A, Fa), ``world_map`` (E, A, 7, s, s),
    ``world_idx_map`` (E, A, 2, s, s), ``agent_masks``, ``planner_flat`` (E, Fp),
    ``planner_agents`` (E, A, 6) (the ``p<i>`` vectors), ``planner_masks``; and the trainer's
    vectors ``agent_vectors`` (E, A, Fa + maps; written into ``agent_out`` when given, the
    other agent entries are then views of it) and ``planner_vector`` (E, Fp + A * 6)
    (``static``: :func:`array_obs.static_windows`, computed when not given)."""
    src = sources(state, params)
    fields = agent_fields(state, params, src)
    e, a = state.num_envs, params.world.n_agents
    n_flat = sum(v.shape[-1] for v in fields.values())
    maps, idx_maps = array_obs.egocentric_maps(state.world, params.world, static)
    n_map = maps[0, 0].size
    if agent_out is None:
        agent_out = np.empty((e, a, n_flat + n_map + idx_maps[0, 0].size), dtype=np.float32)
    agent_flat = flatten(fields, agent_out[..., :n_flat])
    agent_out[..., n_flat : n_flat + n_map] = maps.reshape(e, a, -1)
    agent_out[..., n_flat + n_map :] = idx_maps.reshape(e, a, -1)
    planner_flat = flatten(planner_fields(state, params, src))
    planner_agents = flatten(planner_agent_fields(state, params, src))
    return {
        "agent_flat": agent_flat,
        "world_map": maps,
        "world_idx_map": idx_maps,
        "agent_masks": agent_masks(state, params),
        "planner_flat": planner_flat,
        "planner_agents": planner_agents,
        "planner_masks": planner_masks(state, params),
        "agent_vectors": agent_out,
        "planner_vector": np.concatenate([planner_flat, planner_agents.reshape(e, -1)], axis=-1),
    }

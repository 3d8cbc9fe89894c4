"""The device state of the full gather-trade-build economy (Build, ContinuousDoubleAuction,
Gather, PeriodicBracketTax), declared once from the three parts' declarations.

The world's arrays (:mod:`.state`), the market's after the world's per-env arrays
(:mod:`.market_state`) and the tax's after the market's (:mod:`.tax_state`); the world's
constants, then the market's, then the tax's. The planner is ``n_planner`` policy agents
(one per tax bracket when it sets the rates, as ``ArrayGatherTradeBuildBatch``), so its
observation, mask, action and reward arrays get ``n_planner`` rows.

Where the parts sit in the vectors (the dict env's sorted keys, ``array_economy_obs``):

* an agent's ``flat``: ``Build-*`` (2), the market's block, ``Gather-bonus_gather_prob``,
  the tax's block (``PeriodicBracketTax-*``), ``time``, ``world-inventory-*``,
  ``world-loc-*``; then ``world-map`` and ``world-idx_map``;
* the planner's: the market's block, the tax's flat block, ``time``, its (empty)
  inventory, then per agent ``p<i>`` (6 floats: the tax's 3 fields, then the agent's
  inventory), then the bracket one-hot (phase 2).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.components.cda_batched import MarketParams
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rules as rules
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_world as aw
from ai_economist.foundation.scenarios.simple_wood_and_stone.array_tax import TaxParams
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import market_state as ms
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import state as gs
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import tax_state as ts
from ai_economist.warp_drive.state import StateField

ECONOMY_COMPONENTS = (*gs.MARKET_COMPONENTS, "PeriodicBracketTax")
PLANNER_ROWS = ("observations_p", "action_mask_p", "sampled_actions_p", "rewards_p")
P_AGENT_STRIDE = len(ts.PLANNER_AGENT_FIELDS) + len(rules.INVENTORY)  # 6 floats per p<i>


def one_hot_size(tax: TaxParams) -> int:
    """The bracket one-hot at the end of the planner's rows (0 with a single planner)."""
    n = ts.n_planner_agents(tax)
    return n if n > 1 else 0


def sizes(market: MarketParams, tax: TaxParams, n_agents: int) -> dict[str, int]:
    """The blocks' sizes: market agent / planner, tax agent / planner."""
    mk_a, mk_p, _ = gs.market_sizes(market)
    return {"mk_a": mk_a, "mk_p": mk_p, "tax_a": ts.agent_obs_size(tax, n_agents),
            "tax_p": ts.planner_obs_size(tax, n_agents)}  # fmt: skip


def offsets(market: MarketParams, tax: TaxParams, n_agents: int) -> dict[str, int]:
    """Where the parts start in the vectors: ``market_a`` / ``market_p``, ``tax_a`` /
    ``tax_p`` (the tax's flat blocks), ``tax_pa`` (the first ``p<i>``, stride
    :data:`P_AGENT_STRIDE`), ``flat_a`` (the first map cell), ``p_time`` (the planner's
    ``time``), ``one_hot`` (the planner's bracket one-hot)."""
    s = sizes(market, tax, n_agents)
    n_build = sum(k.startswith("Build-") for k in gs.AGENT_FLAT_KEYS)
    p_time = s["mk_p"] + s["tax_p"]
    tax_pa = p_time + gs.PLANNER_FLAT
    return {
        "market_a": n_build,
        "market_p": 0,
        "tax_a": n_build + s["mk_a"] + 1,  # after Gather-bonus_gather_prob
        "tax_p": s["mk_p"],
        "tax_pa": tax_pa,
        "flat_a": len(gs.AGENT_FLAT_KEYS) + s["mk_a"] + s["tax_a"],
        "p_time": p_time,
        "one_hot": tax_pa + P_AGENT_STRIDE * n_agents,
    }


def agent_flat_positions(market: MarketParams, tax: TaxParams, n_agents: int) -> np.ndarray:
    """int (9,): the positions of the world's flat agent features (:data:`.state.AGENT_FLAT_KEYS`)
    in the economy's agent vector."""
    s, off = sizes(market, tax, n_agents), offsets(market, tax, n_agents)
    pos = []
    for k, key in enumerate(gs.AGENT_FLAT_KEYS):
        if key.startswith("Build-"):
            pos.append(k)
        elif key.startswith("Gather-"):
            pos.append(k + s["mk_a"])
        else:
            pos.append(k + s["mk_a"] + s["tax_a"])
    assert pos[-1] + 1 == off["flat_a"]
    return np.array(pos)


def planner_world_positions(market: MarketParams, tax: TaxParams, n_agents: int) -> np.ndarray:
    """int (4 + 3 A,): the positions of the world's planner vector (``time``, its inventory,
    then each agent's inventory) in the economy's planner vector."""
    off, n_inv = offsets(market, tax, n_agents), len(rules.INVENTORY)
    own = off["p_time"] + np.arange(gs.PLANNER_FLAT)
    per_agent = [off["tax_pa"] + i * P_AGENT_STRIDE + len(ts.PLANNER_AGENT_FIELDS) + np.arange(n_inv)
                 for i in range(n_agents)]  # fmt: skip
    return np.concatenate([own, *per_agent])


def state_dims(params: aw.GTBWorldParams, market: MarketParams, tax: TaxParams) -> dict[str, int]:
    """The named sizes of :func:`state_fields`."""
    a = params.n_agents
    d = gs.state_dims(params, market)
    tax_dims = ts.state_dims(tax, a)
    s = sizes(market, tax, a)
    side = gs.window_side(params)
    d.update(tax_dims)
    d.update(
        obs_dim_a=offsets(market, tax, a)["flat_a"]
        + (gs.MAP_CHANNELS + gs.IDX_CHANNELS) * side * side,
        obs_dim_p=s["mk_p"] + s["tax_p"] + gs.PLANNER_FLAT + P_AGENT_STRIDE * a + one_hot_size(tax),
        n_planner=ts.n_planner_agents(tax),
        n_actions_p=ts.n_planner_actions(tax),
        num_agents=a + ts.n_planner_agents(tax),
    )
    return d


def state_fields() -> list[StateField]:
    """Every device array of the economy in kernel-parameter order: the world's and the
    market's per-env arrays (:func:`.state.state_fields` with the market), the tax's, then
    the world's and the market's constants, the tax's; the planner's arrays with
    ``n_planner`` rows."""
    fields = [_planner_rows(f) for f in gs.state_fields(market=True)]
    first_constant = next(i for i, f in enumerate(fields) if not f.per_env)
    return [*fields[:first_constant], *ts.state_fields(), *fields[first_constant:],
            *ts.constant_fields()]  # fmt: skip


def _planner_rows(f: StateField) -> StateField:
    if f.name not in PLANNER_ROWS:
        return f
    return StateField(f.name, f.dtype, ("n_planner", *f.shape[1:]), per_env=f.per_env,
                      reset=f.reset, doc=f.doc)  # fmt: skip


def constant_values(params: aw.GTBWorldParams, market: MarketParams, tax: TaxParams,
                    seed: int | None = None) -> dict[str, Any]:  # fmt: skip
    """Host values of every constant array (the market's actions from 2 and its blocks at
    :func:`offsets`; the tax's blocks there too; ``seed``: the Saez draws')."""
    off = offsets(market, tax, params.n_agents)
    return {
        **gs.constant_values(params),
        **ms.constant_values(market, action_offset=2, obs_offset_a=off["market_a"],
                             obs_offset_p=off["market_p"]),
        **ts.constant_values(tax, off["tax_a"], off["tax_p"], off["tax_pa"], P_AGENT_STRIDE,
                             seed=seed),
    }  # fmt: skip


def check_economy_components(names: list[str], where: str) -> None:
    """Raise :class:`~.state.UnsupportedGpuConfig` unless the components are
    :data:`ECONOMY_COMPONENTS` in that order."""
    if tuple(names) != ECONOMY_COMPONENTS:
        raise gs.UnsupportedGpuConfig(
            f"{where}: components {names}: the GPU economy covers {list(ECONOMY_COMPONENTS)} "
            "in that order (the published phase-1 and phase-2 configs)"
        )

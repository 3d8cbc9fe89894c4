"""The numpy reference of the GPU market: ``cda_batched`` on the declared device arrays.

The declared arrays (:mod:`.market_state`) hold the books as int32 and the goods in the
world's order (coin first); ``cda_batched`` holds int64 slots, float64 book counts and goods
with coin last. :func:`market_state_of` copies the declared arrays into a
``cda_batched.MarketState`` and :func:`store_market_state` writes it back (every value is an
integer or the same double, so the round trip is exact), so each function here is the batched
market's, step for step:

* :func:`reset_market`        empty books, histories and trade totals (``cda_batched.reset_envs``)
* :func:`split_actions`       the agents' flat actions as ``market_bids`` / ``market_asks``
* :func:`market_step`         decay, place (with escrow), match, expire (``cda_batched.market_step``)
* :func:`agent_observations`, :func:`planner_observations`, :func:`action_masks`  the
  market's blocks of the flat observations and masks (``cda_batched_views``), in the dict
  env's sorted key order
* :func:`observe_market`      those blocks written into the host env's arrays
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.components import cda_batched as cb
from ai_economist.foundation.components import cda_batched_views as views
from ai_economist.foundation.components.cda_batched_matching import TradeRecord
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import market_state as ms

State = dict[str, np.ndarray]
SLOT_FIELDS = ("bid_price", "bid_created", "ask_price", "ask_created", "n_orders")


def goods_order(params: cb.MarketParams) -> list[int]:
    """World goods index of each ``cda_batched`` goods index (commodities, then coin)."""
    return [1 + c for c in range(params.n_commodities)] + [0]


def market_state_of(state: State, params: cb.MarketParams) -> cb.MarketState:
    """A ``cda_batched.MarketState`` holding copies of the declared arrays (no trades)."""
    n = state["market_clock"].shape[0]
    return cb.MarketState(
        step=state["market_clock"].astype(np.int64),
        **{name: state[name].astype(np.int64) for name in SLOT_FIELDS},
        books=state["books"].astype(np.float64),
        history=state["price_history"].copy(),
        trade_count=state["trade_count"].astype(np.int64),
        trade_value=state["trade_value"].copy(),
        trades=TradeRecord.empty(n, params.n_commodities, params.max_trades),
    )


def store_market_state(state: State, market: cb.MarketState, trades: bool = True) -> None:
    """Write ``market`` back into the declared arrays (exact: integers and the same doubles);
    ``trades``: also its step's trade counts as ``n_trades``."""
    state["market_clock"][:] = market.step
    for name in SLOT_FIELDS:
        state[name][:] = getattr(market, name)
    state["books"][:] = market.books
    state["price_history"][:] = market.history
    state["trade_count"][:] = market.trade_count
    state["trade_value"][:] = market.trade_value
    if trades:
        state["n_trades"][:] = market.trades.count


def reset_market(state: State, params: cb.MarketParams, which: np.ndarray) -> None:
    """Empty the market of the envs selected by the bool ``(E,)`` ``which`` (the caller resets
    their goods: escrow must be zero then)."""
    market = market_state_of(state, params)
    cb.reset_envs(market, params, which)
    store_market_state(state, market, trades=False)
    state["n_trades"][which] = 0
    state["market_bids"][which] = 0
    state["market_asks"][which] = 0


def split_actions(params: cb.MarketParams, actions: np.ndarray, offset: int) -> tuple:
    """``(bids, asks)`` int32 ``(E, A, C)`` of the flat actions ``(E, A)``: ``Buy_c`` at
    ``offset + 2 c P .. + P - 1``, ``Sell_c`` the next ``P`` (``array_economy.split_actions``);
    0 none, ``j`` price ``j - 1``."""
    p = params.n_prices
    bids = np.zeros((*actions.shape, params.n_commodities), dtype=np.int32)
    asks = np.zeros_like(bids)
    for c in range(params.n_commodities):
        start = offset + 2 * c * p
        for out, lo in ((bids, start), (asks, start + p)):
            inside = (actions >= lo) & (actions < lo + p)
            out[..., c] = np.where(inside, actions - lo + 1, 0)
    return bids, asks


def market_step(state: State, params: cb.MarketParams) -> TradeRecord:
    """One market step of every env from ``market_bids`` / ``market_asks``: the declared
    ``inventory``, ``escrow`` (world order) and ``labor`` change in place."""
    order = goods_order(params)
    inventory, escrow = state["inventory"][..., order], state["escrow"][..., order]
    market = market_state_of(state, params)
    trades = cb.market_step(params, market, state["market_bids"], state["market_asks"],
                            inventory, escrow, state["labor"])  # fmt: skip
    state["inventory"][..., order] = inventory
    state["escrow"][..., order] = escrow
    store_market_state(state, market)
    return trades


def agent_observations(state: State, params: cb.MarketParams) -> np.ndarray:
    """float32 ``(E, A, obs_dim_market_a)``: the agents' market fields, sorted keys."""
    obs = views.market_observations(params, market_state_of(state, params))
    e, a = state["market_clock"].shape[0], params.n_agents
    parts = []
    for field in ms.AGENT_FIELDS:
        for c in range(params.n_commodities):
            value = obs[field][:, c]
            if field == "market_rate":
                value = np.broadcast_to(value[:, None, None], (e, a, 1))
            elif field == "price_history":
                value = np.broadcast_to(value[:, None, :], (e, a, params.n_prices))
            parts.append(value)
    return np.concatenate(parts, axis=-1).astype(np.float32)


def planner_observations(state: State, params: cb.MarketParams) -> np.ndarray:
    """float32 ``(E, obs_dim_market_p)``: the planner's market fields, sorted keys."""
    obs = views.market_observations(params, market_state_of(state, params))
    parts = []
    for field in ms.PLANNER_FIELDS:
        for c in range(params.n_commodities):
            value = obs[field][:, c]
            parts.append(value[:, None] if field == "market_rate" else value)
    return np.concatenate(parts, axis=-1).astype(np.float32)


def action_masks(state: State, params: cb.MarketParams) -> np.ndarray:
    """float32 ``(E, A, 2 C P)``: ``Buy_c`` then ``Sell_c`` per commodity."""
    inventory = state["inventory"][..., goods_order(params)]
    buy, sell = views.action_masks(params, market_state_of(state, params), inventory)
    parts = []
    for c in range(params.n_commodities):
        parts += [buy[:, :, c], sell[:, :, c]]
    return np.concatenate(parts, axis=-1)


def observe_market(state: State, params: cb.MarketParams, idx: Any = slice(None)) -> None:
    """Write the market's blocks of the envs ``idx`` into ``observations_a``,
    ``observations_p`` and ``action_mask_a`` at the offsets of ``market_iparams``."""
    iparams = state["market_iparams"]
    off_a, off_p = int(iparams[ms.MI["obs_offset_a"]]), int(iparams[ms.MI["obs_offset_p"]])
    act = int(iparams[ms.MI["action_offset"]])
    na, np_, nm = ms.agent_obs_size(params), ms.planner_obs_size(params), ms.n_actions(params)
    state["observations_a"][idx, :, off_a : off_a + na] = agent_observations(state, params)[idx]
    state["observations_p"][idx, 0, off_p : off_p + np_] = planner_observations(state, params)[idx]
    state["action_mask_a"][idx, :, act : act + nm] = action_masks(state, params)[idx]

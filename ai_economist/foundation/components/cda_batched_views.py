"""What agents and metrics see of the batched market (``cda_batched``), all envs at once.

* :func:`market_observations`  ``ContinuousDoubleAuction.generate_observations`` as arrays
* :func:`action_masks`         ``generate_masks``: ``Buy_R`` / ``Sell_R`` per agent
* :func:`market_metrics`       ``get_metrics`` of one env, from the episode's trade totals
* :func:`goods_from_envs` / :func:`goods_to_envs`  the goods arrays of dict-API envs
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ai_economist.foundation.components.cda_batched import MarketParams, MarketState
from ai_economist.foundation.components.cda_batched_matching import ASKS, BIDS, BUY, SELL


def market_observations(params: MarketParams, state: MarketState) -> dict[str, np.ndarray]:
    """The market's observation fields of every env.

    ``market_rate`` ``(N, C)``: mean sale price of the decayed history,
    ``sum_p p h_p / max(0.001, sum_p h_p)`` with ``h`` summed over sellers;
    ``price_history`` ``(N, C, P)``: ``h * inv_scale``; ``full_asks``/``full_bids``
    ``(N, C, P)``: all open orders (the planner's); ``available_asks``/``available_bids``
    ``(N, C, A, P)``: the other agents' orders; ``my_asks``/``my_bids`` ``(N, C, A, P)``: the
    agent's own. Agents also see ``market_rate`` and ``price_history``."""
    history = state.history.sum(axis=2)  # (N, C, P)
    prices = np.arange(params.n_prices, dtype=np.float64)
    rates = (history @ prices) / np.maximum(0.001, history.sum(axis=-1))
    full = state.books.sum(axis=3)  # (N, 2, C, P)
    others = full[:, :, :, None, :] - state.books
    return {
        "market_rate": rates,
        "price_history": history * params.inv_scale,
        "full_asks": full[:, ASKS],
        "full_bids": full[:, BIDS],
        "available_asks": others[:, ASKS],
        "available_bids": others[:, BIDS],
        "my_asks": state.books[:, ASKS].copy(),
        "my_bids": state.books[:, BIDS].copy(),
    }


def action_masks(
    params: MarketParams, state: MarketState, inventory: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(buy, sell)`` float32 masks ``(N, A, C, P)`` for the ``Buy_R``/``Sell_R`` prices
    (the NO-OP is not included). Buy: prices up to the agent's coin, while it is below
    ``max_num_orders`` on R; sell: every price while below the limit and holding a unit of R."""
    below = np.moveaxis(state.n_orders < params.max_num_orders, 1, 2)  # (N, A, C)
    prices = np.arange(params.n_prices, dtype=np.float64)
    can_pay = prices <= inventory[:, :, params.coin_index, None]  # (N, A, P)
    buy = below[..., None] & can_pay[:, :, None, :]
    can_ask = below & (inventory[:, :, : params.n_commodities] > 0)
    sell = np.broadcast_to(can_ask[..., None], buy.shape)
    return buy.astype(np.float32), sell.astype(np.float32)


def market_metrics(params: MarketParams, state: MarketState, env: int) -> dict[str, Any]:
    """``ContinuousDoubleAuction.get_metrics`` of env ``env`` since its reset: per agent,
    commodity and side the mean price (= cost = income; NaN without trades) and the count."""
    out: dict[str, Any] = {}
    for a in range(params.n_agents):
        for c, name in enumerate(params.commodities):
            for side, label in ((SELL, "Sell"), (BUY, "Buy")):
                n = int(state.trade_count[env, side, c, a])
                mean = state.trade_value[env, side, c, a] / n if n else np.nan
                for key in ("price", "cost", "income"):
                    out[f"{a}/{label}{name}/{key}"] = mean
                out[f"{a}/{label}{name}/n_sales"] = n
    out["n_trades"] = int(state.trade_count[env, SELL].sum())
    return out


def goods_from_envs(
    params: MarketParams, envs: Sequence[Any]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(inventory, escrow, labor)`` of dict-API envs' mobile agents: ``(N, A, C + 1)``
    (commodities in ``params.commodities`` order, then coin) and ``(N, A)``, float64."""
    names = [*params.commodities, "Coin"]
    shape = (len(envs), params.n_agents, len(names))
    inventory, escrow = np.zeros(shape), np.zeros(shape)
    labor = np.zeros(shape[:2])
    for n, env in enumerate(envs):
        for a, agent in enumerate(env.world.agents):
            inventory[n, a] = [agent.state["inventory"][r] for r in names]
            escrow[n, a] = [agent.state["escrow"][r] for r in names]
            labor[n, a] = agent.state["endogenous"]["Labor"]
    return inventory, escrow, labor


def goods_to_envs(
    params: MarketParams,
    envs: Sequence[Any],
    inventory: np.ndarray,
    escrow: np.ndarray,
    labor: np.ndarray,
) -> None:
    """Write the goods arrays back into dict-API envs' mobile agents (as Python floats)."""
    names = [*params.commodities, "Coin"]
    for n, env in enumerate(envs):
        for a, agent in enumerate(env.world.agents):
            for r, name in enumerate(names):
                agent.state["inventory"][name] = float(inventory[n, a, r])
                agent.state["escrow"][name] = float(escrow[n, a, r])
            agent.state["endogenous"]["Labor"] = float(labor[n, a])

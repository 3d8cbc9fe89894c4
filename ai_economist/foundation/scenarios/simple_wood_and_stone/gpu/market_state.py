"""The device state of gather-trade-build's market (``ContinuousDoubleAuction``), declared once.

Per env, sized from the market's config (:class:`~ai_economist.foundation.components.
cda_batched.MarketParams`): ``C`` commodities (Stone, Wood: the world's collectible order),
``A`` agents, ``K = max_num_orders`` order slots per agent, commodity and side, ``P =
max_bid_ask + 1`` prices. The books mirror ``cda_batched.MarketState``:

* order slots ``(C, A, K)``: price (:data:`EMPTY` when free) and the market step that created
  the order (its age is ``market_clock - created``), for bids and asks;
* ``n_orders`` ``(C, A)`` open bids + asks, ``books`` ``(2, C, A, P)`` open asks / bids per
  price (ints; ``cda_batched`` keeps float64 counts), ``price_history`` ``(C, A, P)`` the
  decayed sales per seller and price, the episode's trade totals and the last step's count;
* ``market_bids`` / ``market_asks`` ``(A, C)``: this step's orders (0 none, ``j`` price
  ``j - 1``), written from the agents' actions (``split_actions``).

Escrow lives with the goods of the env that hosts the market (the world's ``inventory`` and
``escrow`` ``(A, 3)`` in :data:`~..array_rules.INVENTORY` order: coin at 0, commodity ``c`` at
``1 + c``). Settings travel in ``market_params`` (float64, :data:`FLOAT_PARAMS`) and
``market_iparams`` (int32, :data:`INT_PARAMS`), as the world's do; ``action_offset`` is the
index of the first market action in the agents' flat action space, ``obs_offset_a`` /
``obs_offset_p`` where the market's block starts in the agents' / planner's observations.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.components.cda_batched import MarketParams
from ai_economist.foundation.components.cda_batched_matching import EMPTY
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rules as rules
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.limits import (
    MAX_AGENTS,
    UnsupportedGpuConfig,
)
from ai_economist.warp_drive.state import StateField

MAX_ORDERS_PER_AGENT = 64  # slots per agent, commodity and side (the matching loops)
MAX_PRICES = 1001  # max_bid_ask <= 1000
MAX_ORDER_DURATION = 1_000_000  # ages and rank keys stay far inside int32 / int64
FLOAT_PARAMS = ("order_labor", "inv_scale")
INT_PARAMS = ("max_bid_ask", "order_duration", "max_num_orders", "action_offset",
              "obs_offset_a", "obs_offset_p")  # fmt: skip
MP = {name: i for i, name in enumerate(FLOAT_PARAMS)}
MI = {name: i for i, name in enumerate(INT_PARAMS)}
# The market's observation fields in the dict env's sorted key order (field, then commodity).
AGENT_FIELDS = ("available_asks", "available_bids", "market_rate", "my_asks", "my_bids",
                "price_history")  # fmt: skip
PLANNER_FIELDS = ("full_asks", "full_bids", "market_rate", "price_history")
__all__ = ["EMPTY", "MarketParams", "state_fields", "state_dims", "check_market_support"]


def check_market_support(params: MarketParams, where: str) -> None:
    """Raise :class:`~.state.UnsupportedGpuConfig` naming the first market setting the kernels
    do not cover: commodities other than the world's, fewer than 2 or more than ``MAX_AGENTS``
    agents, more than ``MAX_ORDERS_PER_AGENT`` orders, prices or durations past the limits."""
    if tuple(params.commodities) != rules.COLLECTIBLE:
        raise UnsupportedGpuConfig(
            f"{where}: market commodities {list(params.commodities)}; the GPU market trades "
            f"{list(rules.COLLECTIBLE)} (the world's collectible resources)"
        )
    limits = (
        ("n_agents", params.n_agents, 2, MAX_AGENTS),
        ("max_num_orders", params.max_num_orders, 1, MAX_ORDERS_PER_AGENT),
        ("max_bid_ask", params.max_bid_ask, 1, MAX_PRICES - 1),
        ("order_duration", params.order_duration, 1, MAX_ORDER_DURATION),
    )
    for name, value, lo, hi in limits:
        if not lo <= value <= hi:
            raise UnsupportedGpuConfig(
                f"{where}: ContinuousDoubleAuction {name}={value}; the GPU market supports "
                f"{lo}..{hi:,}"
            )


def agent_obs_size(params: MarketParams) -> int:
    """Floats of the market's block in an agent's observation: per commodity 5 books or
    histories of ``P`` prices and the market rate."""
    return params.n_commodities * (5 * params.n_prices + 1)


def planner_obs_size(params: MarketParams) -> int:
    """Floats of the market's block in the planner's observation (3 of ``P`` + the rate)."""
    return params.n_commodities * (3 * params.n_prices + 1)


def n_actions(params: MarketParams) -> int:
    """The market's actions of an agent: ``Buy_c`` then ``Sell_c`` (``P`` each) per commodity."""
    return 2 * params.n_commodities * params.n_prices


def state_dims(params: MarketParams) -> dict[str, int]:
    """The named sizes of :func:`state_fields` (``n_agents`` as the world's)."""
    return {
        "n_agents": params.n_agents,
        "n_commodities": params.n_commodities,
        "max_num_orders": params.max_num_orders,
        "n_prices": params.n_prices,
        "obs_dim_market_a": agent_obs_size(params),
        "obs_dim_market_p": planner_obs_size(params),
        "n_market_float_params": len(FLOAT_PARAMS),
        "n_market_int_params": len(INT_PARAMS),
    }


def _f(name, dtype, shape=(), reset="none", doc="", per_env=True) -> StateField:
    return StateField(name, dtype, shape, per_env=per_env, reset=reset, doc=doc)


def state_fields() -> list[StateField]:
    """The market's device arrays, in kernel-parameter order (reset ``"none"``: the reset
    kernel's ``market_reset`` empties them when an env's ``_timestep_`` is 0), then its two
    constant arrays."""
    i32, f64 = np.int32, np.float64
    slots = ("n_commodities", "n_agents", "max_num_orders")
    per_agent = ("n_commodities", "n_agents")
    return [
        _f("market_clock", i32, doc="market steps since the env's reset"),
        _f("bid_price", i32, slots, doc="price of each bid slot, -1: free"),
        _f("bid_created", i32, slots, doc="market step that placed the bid"),
        _f("ask_price", i32, slots, doc="price of each ask slot, -1: free"),
        _f("ask_created", i32, slots, doc="market step that placed the ask"),
        _f("n_orders", i32, per_agent, doc="open bids + asks per commodity and agent"),
        _f("books", i32, (2, *per_agent, "n_prices"), doc="open asks (0), bids (1) per price"),
        _f("price_history", f64, (*per_agent, "n_prices"), doc="decayed sales per seller/price"),
        _f("trade_count", i32, (2, *per_agent), doc="this episode's sales (0), purchases (1)"),
        _f("trade_value", f64, (2, *per_agent), doc="their summed prices"),
        _f("n_trades", i32, ("n_commodities",), doc="trades of the last step per commodity"),
        _f("market_bids", i32, ("n_agents", "n_commodities"), doc="this step's bids, price + 1"),
        _f("market_asks", i32, ("n_agents", "n_commodities"), doc="this step's asks, price + 1"),
    ]


def constant_fields() -> list[StateField]:
    """The market's settings (``per_env=False``), declared after the host env's own."""
    f64, i32 = np.float64, np.int32
    return [
        _f("market_params", f64, ("n_market_float_params",), per_env=False, doc="FLOAT_PARAMS"),
        _f("market_iparams", i32, ("n_market_int_params",), per_env=False, doc="INT_PARAMS"),
    ]


def constant_values(params: MarketParams, action_offset: int, obs_offset_a: int,
                    obs_offset_p: int) -> dict[str, Any]:  # fmt: skip
    """Host values of the two constant arrays."""
    ints = {
        "max_bid_ask": params.max_bid_ask,
        "order_duration": params.order_duration,
        "max_num_orders": params.max_num_orders,
        "action_offset": action_offset,
        "obs_offset_a": obs_offset_a,
        "obs_offset_p": obs_offset_p,
    }
    return {
        "market_params": np.array([params.order_labor, params.inv_scale], dtype=np.float64),
        "market_iparams": np.array([ints[n] for n in INT_PARAMS], dtype=np.int32),
    }


def kernel_defines() -> dict[str, int]:
    """C constants: ``MP_<NAME>`` / ``MI_<NAME>`` indices, the empty slot, the goods layout."""
    out = {f"MP_{n.upper()}": i for n, i in MP.items()}
    out.update({f"MI_{n.upper()}": i for n, i in MI.items()})
    out.update({"MARKET_EMPTY": EMPTY, "GOODS_COIN": rules.COIN, "GOODS_FIRST_COMMODITY": 1})
    return out

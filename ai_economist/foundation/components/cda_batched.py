"""``ContinuousDoubleAuction`` as arrays: the market of N envs at once (numpy).

The batched twin of :class:`~ai_economist.foundation.components.continuous_double_auction.
ContinuousDoubleAuction`, step for step. Arrays have the env as first axis; ``C`` commodities
(the component's ``commodities`` order), ``A`` mobile agents, ``K = max_num_orders`` order slots
per agent and commodity and side, ``P = max_bid_ask + 1`` prices. Goods arrays are
``(N, A, C + 1)``: the commodities, then coin (index ``C``); the caller passes inventory,
escrow and labour in and they are updated in place, so the market composes with a batched
world.

Each rule is one function over plain arrays, written so that a CUDA C or Numba kernel (one
thread per env, the commodities in order: trades on both books move the same coin, and the
order of float additions is part of the result) can mirror it name for name:

* :func:`place_orders`   new bids (coin to escrow) and asks (one unit to escrow), per
  commodity in order, bid before ask (``component_step``'s loop)
* :func:`match_orders`   ``cda_batched_matching``: the books' matching and the trades
* :func:`expire_orders`  orders older than ``order_duration`` leave, escrow returned
* :func:`market_step`    decay of the price history, then the three above

The market uses no random agent order (the component walks ``world.agents`` by index), so no
order array is taken. Observations, masks and metrics are in ``cda_batched_views``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ai_economist.foundation.components.cda_batched_matching import (
    ASKS,
    BIDS,
    EMPTY,
    TradeRecord,
    match_orders,
)
from ai_economist.foundation.components.continuous_double_auction import PRICE_DECAY


@dataclasses.dataclass(frozen=True)
class MarketParams:
    """Constants of the batched market (read from a component by :meth:`from_component`)."""

    commodities: tuple[str, ...]
    n_agents: int
    max_bid_ask: int
    order_labor: float
    order_duration: int
    max_num_orders: int
    inv_scale: float

    def __post_init__(self) -> None:
        if not self.commodities:
            raise ValueError("MarketParams.commodities must name at least one commodity")
        for name in ("n_agents", "max_bid_ask", "order_duration", "max_num_orders"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"MarketParams.{name} must be an int >= 1, got {value!r}")
        if self.order_labor < 0:
            raise ValueError(f"MarketParams.order_labor must be >= 0, got {self.order_labor!r}")

    @property
    def n_commodities(self) -> int:
        """Number of traded commodities ``C``."""
        return len(self.commodities)

    @property
    def n_prices(self) -> int:
        """Number of price levels ``P`` (``max_bid_ask + 1``)."""
        return self.max_bid_ask + 1

    @property
    def coin_index(self) -> int:
        """Index of coin on the last axis of the goods arrays (after the commodities)."""
        return self.n_commodities

    @property
    def max_trades(self) -> int:
        """Most trades one book can clear in one step (every bid slot of every agent)."""
        return self.n_agents * self.max_num_orders

    @classmethod
    def from_component(cls, cda: Any) -> MarketParams:
        """Parameters of a dict-API ``ContinuousDoubleAuction`` component."""
        if cda.price_floor != 0:
            raise ValueError(f"the batched market needs price_floor 0, got {cda.price_floor!r}")
        return cls(
            commodities=tuple(cda.commodities),
            n_agents=int(cda.n_agents),
            max_bid_ask=int(cda.max_bid_ask),
            order_labor=float(cda.order_labor),
            order_duration=int(cda.order_duration),
            max_num_orders=int(cda.max_num_orders),
            inv_scale=float(cda.inv_scale),
        )


@dataclasses.dataclass
class MarketState:
    """Per-env market state. Order slots are ``(N, C, A, K)``: price (``EMPTY`` when free)
    and the market step that created the order (its lifetime is ``step - created``)."""

    step: np.ndarray  # (N,) market steps since the env's reset
    bid_price: np.ndarray  # (N, C, A, K) int
    bid_created: np.ndarray  # (N, C, A, K) int
    ask_price: np.ndarray  # (N, C, A, K) int
    ask_created: np.ndarray  # (N, C, A, K) int
    n_orders: np.ndarray  # (N, C, A) open bids + asks
    books: np.ndarray  # (N, 2, C, A, P) open asks, bids per price (the component's _books)
    history: np.ndarray  # (N, C, A, P) decayed sales per seller and price (price_history)
    trade_count: np.ndarray  # (N, 2, C, A) this episode's sales (0) and purchases (1)
    trade_value: np.ndarray  # (N, 2, C, A) their summed prices
    trades: TradeRecord  # the last step's trades


def initial_state(params: MarketParams, num_envs: int) -> MarketState:
    """Every env with empty books, histories and trade totals."""
    n, c, a = num_envs, params.n_commodities, params.n_agents
    slots = (n, c, a, params.max_num_orders)
    return MarketState(
        step=np.zeros(n, dtype=np.int64),
        bid_price=np.full(slots, EMPTY, dtype=np.int64),
        bid_created=np.zeros(slots, dtype=np.int64),
        ask_price=np.full(slots, EMPTY, dtype=np.int64),
        ask_created=np.zeros(slots, dtype=np.int64),
        n_orders=np.zeros((n, c, a), dtype=np.int64),
        books=np.zeros((n, 2, c, a, params.n_prices)),
        history=np.zeros((n, c, a, params.n_prices)),
        trade_count=np.zeros((n, 2, c, a), dtype=np.int64),
        trade_value=np.zeros((n, 2, c, a)),
        trades=TradeRecord.empty(n, c, params.max_trades),
    )


def reset_envs(state: MarketState, params: MarketParams, which: np.ndarray) -> None:
    """Reset the envs selected by the bool ``(N,)`` array ``which`` in place (the caller
    resets their inventories and escrows)."""
    fresh = initial_state(params, int(np.sum(which)))
    for field in dataclasses.fields(MarketState):
        if field.name != "trades":
            getattr(state, field.name)[which] = getattr(fresh, field.name)
    state.trades.count[which] = 0


def check_actions(params: MarketParams, actions: np.ndarray, label: str) -> np.ndarray:
    """``actions`` as an int array ``(N, A, C)`` of 0 (no order) or ``1..P`` (price + 1).

    Raises:
        ValueError: wrong shape, non-integers or values outside ``0..P``.
    """
    arr = np.asarray(actions)
    if arr.ndim != 3 or arr.shape[1:] != (params.n_agents, params.n_commodities):
        raise ValueError(
            f"{label} must have shape (num_envs, {params.n_agents}, {params.n_commodities}) "
            f"(envs, agents, commodities {list(params.commodities)}), got {arr.shape}"
        )
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind != "f" or not np.all(arr == np.round(arr)):
            raise ValueError(f"{label} must hold integers, got dtype {arr.dtype}")
        arr = arr.astype(np.int64)
    bad = (arr < 0) | (arr > params.n_prices)
    if np.any(bad):
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{label}[{where}] = {int(arr[where])} is out of range 0..{params.n_prices} "
            f"(0: no order, j: price j - 1)"
        )
    return arr.astype(np.int64, copy=False)


def _free_slot(prices: np.ndarray) -> np.ndarray:
    """Index of the first empty slot on the last axis (0 where none is empty)."""
    return np.argmax(prices == EMPTY, axis=-1)


def place_side(
    params: MarketParams,
    state: MarketState,
    side: int,
    commodity: int,
    actions: np.ndarray,
    inventory: np.ndarray,
    escrow: np.ndarray,
    labor: np.ndarray,
) -> np.ndarray:
    """Orders of one ``side`` (``BIDS`` or ``ASKS``) on one commodity from ``actions``
    ``(N, A)``: placed where the agent is below ``max_num_orders`` and holds what the order
    escrows, the price in coin for a bid (``create_bid``), a unit of the commodity for an ask
    (``create_ask``). Returns the envs of the placed orders."""
    price = actions - 1
    if side == BIDS:
        held, prices, created = params.coin_index, state.bid_price, state.bid_created
        holds = inventory[:, :, held] >= price
    else:
        held, prices, created = commodity, state.ask_price, state.ask_created
        holds = inventory[:, :, held] > 0
    below = state.n_orders[:, commodity] < params.max_num_orders
    env, agent = np.nonzero((actions > 0) & below & holds)
    p = price[env, agent]
    slot = _free_slot(prices[env, commodity, agent])
    prices[env, commodity, agent, slot] = p
    created[env, commodity, agent, slot] = state.step[env]
    state.books[env, side, commodity, agent, p] += 1
    state.n_orders[env, commodity, agent] += 1
    moved = p if side == BIDS else 1
    inventory[env, agent, held] -= moved
    escrow[env, agent, held] += moved
    labor[env, agent] += params.order_labor
    return env


def place_orders(
    params: MarketParams,
    state: MarketState,
    bid_actions: np.ndarray,
    ask_actions: np.ndarray,
    inventory: np.ndarray,
    escrow: np.ndarray,
    labor: np.ndarray,
) -> np.ndarray:
    """Every new order: commodity by commodity, each agent's bid before its ask (a bid on an
    earlier commodity leaves less coin for a later one). Returns ``(N, C)`` bool: the books
    that got new orders."""
    changed = np.zeros((state.step.shape[0], params.n_commodities), dtype=bool)
    for c in range(params.n_commodities):
        for side, actions in ((BIDS, bid_actions), (ASKS, ask_actions)):
            placed = place_side(params, state, side, c, actions[:, :, c], inventory, escrow, labor)
            changed[placed, c] = True
    return changed


def expire_orders(
    params: MarketParams, state: MarketState, inventory: np.ndarray, escrow: np.ndarray
) -> None:
    """Age every order by one step; those older than ``order_duration`` leave the books and
    their escrow returns to the inventory (``remove_expired_orders``). At most one order per
    agent, commodity and side expires in a step, so the per-agent sums below add one value."""
    age = (state.step + 1)[:, None, None]
    coin = params.coin_index
    for c in range(params.n_commodities):
        old_bid = (state.bid_price[:, c] != EMPTY) & (
            age - state.bid_created[:, c] > params.order_duration
        )
        old_ask = (state.ask_price[:, c] != EMPTY) & (
            age - state.ask_created[:, c] > params.order_duration
        )
        if not (old_bid.any() or old_ask.any()):
            continue
        refund = np.where(old_bid, state.bid_price[:, c], 0).sum(axis=-1)  # (N, A)
        escrow[:, :, coin] -= refund
        inventory[:, :, coin] += refund
        units = old_ask.sum(axis=-1)
        escrow[:, :, c] -= units
        inventory[:, :, c] += units
        for side, old, price in (
            (BIDS, old_bid, state.bid_price),
            (ASKS, old_ask, state.ask_price),
        ):
            env, agent, slot = np.nonzero(old)
            state.books[env, side, c, agent, price[env, c, agent, slot]] -= 1
            state.n_orders[env, c, agent] -= 1
            price[env, c, agent, slot] = EMPTY


def market_step(
    params: MarketParams,
    state: MarketState,
    bid_actions: np.ndarray,
    ask_actions: np.ndarray,
    inventory: np.ndarray,
    escrow: np.ndarray,
    labor: np.ndarray,
) -> TradeRecord:
    """One market step of every env (``component_step``): decay the price histories, place
    the new orders, match the books, expire old orders. ``bid_actions``/``ask_actions`` are
    ``(N, A, C)``: 0 = no order, ``j`` = an order at price ``j - 1`` (the ``Buy_R``/``Sell_R``
    actions). ``inventory`` and ``escrow`` ``(N, A, C + 1)`` and ``labor`` ``(N, A)`` float
    arrays are updated in place; returns the step's trades (also ``state.trades``)."""
    bids = check_actions(params, bid_actions, "bid_actions")
    asks = check_actions(params, ask_actions, "ask_actions")
    _check_goods(params, state, inventory, escrow, labor)
    state.history *= PRICE_DECAY
    changed = place_orders(params, state, bids, asks, inventory, escrow, labor)
    match_orders(params, state, inventory, escrow, changed)
    expire_orders(params, state, inventory, escrow)
    state.step += 1
    return state.trades


def _check_goods(
    params: MarketParams,
    state: MarketState,
    inventory: np.ndarray,
    escrow: np.ndarray,
    labor: np.ndarray,
) -> None:
    goods = (state.step.shape[0], params.n_agents, params.n_commodities + 1)
    for name, arr, shape in (
        ("inventory", inventory, goods),
        ("escrow", escrow, goods),
        ("labor", labor, goods[:2]),
    ):
        if not isinstance(arr, np.ndarray) or arr.shape != shape or arr.dtype != np.float64:
            got = (getattr(arr, "shape", None), getattr(arr, "dtype", type(arr).__name__))
            raise ValueError(
                f"{name} must be a float64 array of shape {shape} (envs, agents"
                f"{', commodities + coin' if len(shape) == 3 else ''}), got {got}"
            )
        if name != "labor" and not (arr >= 0).all():
            where = tuple(int(i) for i in np.argwhere(~(arr >= 0))[0])
            raise ValueError(
                f"{name}[{where}] = {arr[where]!r}: goods must be >= 0 (envs, agents, "
                f"{list(params.commodities) + ['Coin']})"
            )

"""Matching of the batched market's books (``ContinuousDoubleAuction._match_resource``).

One book per env and commodity. The component sorts bids by price then age, highest and
oldest first, and asks by price lowest first, then oldest; ties left are broken by the order
the orders were placed in, which is agent index (an agent places at most one order per side,
commodity and step). So every order has a unique rank, and the component's loop is, per book:

1. take the first bid (in that order) whose buyer is still *possible*; none left: done;
2. take the first ask (in that order) from another agent; if there is one at a price <= the
   bid's, they trade; otherwise the buyer is not possible any more (for this step);
3. repeat.

Here the passes run for all envs of one commodity at once, on integer rank keys
(:func:`bid_keys`, :func:`ask_keys`), and mark every buyer that cannot trade in one pass
(:func:`match_book`: the same trades in the same order); a CUDA C or Numba twin runs the
same loop for one env in one thread, commodity after commodity. The price is the earlier order's (the ask's when the bid is not
older); the buyer gets the unused part of its escrowed bid back.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

ASKS, BIDS = 0, 1  # first axis of ``MarketState.books``, as the component's ``_books``
SELL, BUY = 0, 1  # first axis of ``MarketState.trade_count`` / ``trade_value``
EMPTY = -1  # price of an empty order slot
ASK_NONE = np.iinfo(np.int64).max  # ask key of an empty slot (bids: -1)
TRADE_FIELDS = ("buyer", "seller", "bid", "ask", "bid_lifetime", "ask_lifetime", "price")


@dataclasses.dataclass
class TradeRecord:
    """One step's trades: field arrays ``(N, C, T)`` (``TRADE_FIELDS``, ints) in execution
    order, the first ``count[n, c]`` of them valid. The component's trade dicts of env n are
    commodity by commodity, in that order (:meth:`as_dicts`)."""

    count: np.ndarray  # (N, C)
    fields: dict[str, np.ndarray]

    @classmethod
    def empty(cls, num_envs: int, n_commodities: int, max_trades: int) -> TradeRecord:
        """A record without trades."""
        shape = (num_envs, n_commodities, max_trades)
        return cls(
            count=np.zeros(shape[:2], dtype=np.int64),
            fields={f: np.zeros(shape, dtype=np.int64) for f in TRADE_FIELDS},
        )

    def as_dicts(self, env: int, commodities: tuple[str, ...]) -> list[dict[str, Any]]:
        """Env ``env``'s trades as the component's ``executed_trades`` entries."""
        out = []
        for c, name in enumerate(commodities):
            for t in range(int(self.count[env, c])):
                trade: dict[str, Any] = {"commodity": name}
                trade.update({f: int(self.fields[f][env, c, t]) for f in TRADE_FIELDS})
                trade["cost"] = trade["income"] = trade["price"]
                out.append(trade)
        return out


def bid_keys(prices: np.ndarray, lifetimes: np.ndarray, order_duration: int) -> np.ndarray:
    """Rank of each bid slot ``(N, A, K)``, higher first: price, then age, then lower agent
    index; -1 for empty slots."""
    n_agents = prices.shape[1]
    later_agent = (n_agents - 1 - np.arange(n_agents))[None, :, None]
    key = (prices * (order_duration + 1) + lifetimes) * n_agents + later_agent
    return np.where(prices == EMPTY, -1, key)


def ask_keys(prices: np.ndarray, lifetimes: np.ndarray, order_duration: int) -> np.ndarray:
    """Rank of each ask slot ``(N, A, K)``, lower first: price, then age (older first), then
    lower agent index; a value above every key for empty slots."""
    n_agents = prices.shape[1]
    agent = np.arange(n_agents)[None, :, None]
    key = (prices * (order_duration + 1) + (order_duration - lifetimes)) * n_agents + agent
    return np.where(prices == EMPTY, ASK_NONE, key)


def match_orders(
    params: Any,
    state: Any,
    inventory: np.ndarray,
    escrow: np.ndarray,
    changed: np.ndarray | None = None,
) -> None:
    """Match every book of every env, commodity by commodity; fills ``state.trades``.
    ``changed`` ``(N, C)`` bool: the books with new orders (the others hold no matchable
    pair, as in the component); None: all."""
    state.trades.count[:] = 0
    for c in range(params.n_commodities):
        which = None if changed is None else np.flatnonzero(changed[:, c])
        match_book(params, state, c, inventory, escrow, which)


def best_other_ask(ask_best: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each agent of ``ask_best`` ``(E, A)`` (each agent's best ask key), the best key
    among the other agents and whose it is, ``(E, A)`` each."""
    n_agents = ask_best.shape[1]
    others = np.where(np.eye(n_agents, dtype=bool), ASK_NONE, ask_best[:, None, :])
    return others.min(axis=2), np.argmin(others, axis=2)


def match_book(
    params: Any,
    state: Any,
    commodity: int,
    inventory: np.ndarray,
    escrow: np.ndarray,
    env: np.ndarray | None = None,
) -> None:
    """Match commodity ``commodity``'s book in the envs ``env`` (all when None).

    Each pass, per env: every buyer whose best bid is below the best ask of the other
    agents is marked impossible (for good: asks only leave during matching); of the others,
    the best bid trades with that ask. This is the component's loop with its impossible
    buyers marked in one go; a pass makes one trade per env, and an env without a trade
    is done."""
    c, top = commodity, ASK_NONE
    env = np.arange(state.step.shape[0]) if env is None else env
    now = state.step[env, None, None]
    bids = bid_keys(state.bid_price[env, c], now - state.bid_created[env, c], params.order_duration)
    asks = ask_keys(state.ask_price[env, c], now - state.ask_created[env, c], params.order_duration)
    per_price = (params.order_duration + 1) * params.n_agents  # key // per_price = price
    possible = np.ones((env.size, params.n_agents), dtype=bool)
    live = np.arange(env.size)  # rows of env still matching
    while live.size:
        bid_best, ask_best = bids[live].max(axis=2), asks[live].min(axis=2)
        other, seller_of = best_other_ask(ask_best)
        ok = possible[live] & (bid_best >= 0) & (other < top)
        ok &= bid_best // per_price >= np.where(ok, other, 0) // per_price
        possible[live] = ok
        row = np.flatnonzero(ok.any(axis=1))
        live = live[row]
        if not live.size:
            return
        buyer = np.argmax(np.where(ok[row], bid_best[row], -1), axis=1)
        seller = seller_of[row, buyer]
        bid_slot = np.argmax(bids[live, buyer], axis=1)
        ask_slot = np.argmin(asks[live, seller], axis=1)
        bids[live, buyer, bid_slot] = -1
        asks[live, seller, ask_slot] = top
        execute_trades(params, state, c, env[live], buyer, bid_slot, seller, ask_slot,
                       inventory, escrow)  # fmt: skip


def execute_trades(
    params: Any,
    state: Any,
    commodity: int,
    env: np.ndarray,
    buyer: np.ndarray,
    bid_slot: np.ndarray,
    seller: np.ndarray,
    ask_slot: np.ndarray,
    inventory: np.ndarray,
    escrow: np.ndarray,
) -> None:
    """One trade in each env of ``env`` (distinct envs): the bid in ``bid_slot`` of ``buyer``
    meets the ask in ``ask_slot`` of ``seller`` (``ContinuousDoubleAuction._execute``)."""
    c, coin = commodity, params.coin_index
    bid_p = state.bid_price[env, c, buyer, bid_slot]
    ask_p = state.ask_price[env, c, seller, ask_slot]
    bid_life = state.step[env] - state.bid_created[env, c, buyer, bid_slot]
    ask_life = state.step[env] - state.ask_created[env, c, seller, ask_slot]
    price = np.where(bid_life <= ask_life, ask_p, bid_p)
    state.books[env, BIDS, c, buyer, bid_p] -= 1
    state.books[env, ASKS, c, seller, ask_p] -= 1
    state.n_orders[env, c, seller] -= 1
    state.n_orders[env, c, buyer] -= 1
    state.history[env, c, seller, price] += 1
    state.bid_price[env, c, buyer, bid_slot] = EMPTY
    state.ask_price[env, c, seller, ask_slot] = EMPTY
    escrow[env, seller, c] -= 1
    inventory[env, buyer, c] += 1
    escrow[env, buyer, coin] -= bid_p
    inventory[env, seller, coin] += price
    inventory[env, buyer, coin] += bid_p - price
    for side, who in ((SELL, seller), (BUY, buyer)):
        state.trade_count[env, side, c, who] += 1
        state.trade_value[env, side, c, who] += price
    rec = state.trades
    t = rec.count[env, c]
    values = (buyer, seller, bid_p, ask_p, bid_life, ask_life, price)
    for name, value in zip(TRADE_FIELDS, values):
        rec.fields[name][env, c, t] = value
    rec.count[env, c] += 1

"""Component ``ContinuousDoubleAuction`` (shorthand ``Trade``): a market for every collectible resource.

Per commodity R a mobile agent has two sub-spaces, ``Buy_R`` and ``Sell_R``, with
``max_bid_ask + 1`` actions each: action j places an order at price j - 1 (0 = NO-OP).

* A bid needs ``inventory["Coin"] >= price``; the price goes to escrow. An ask needs one unit
  of R, which goes to escrow. Each order adds ``order_labor``; an agent may hold at most
  ``max_num_orders`` open orders (bids + asks) per commodity.
* Matching, every step after the new orders: bids by (price, age) descending, asks by price
  ascending then oldest first; an agent never trades with itself; the trade price is that of
  the earlier order (the ask's when the bid is not older); the buyer gets the unfilled part
  of its escrowed bid back.
* Orders age by 1 per step and expire (escrow returned) when older than ``order_duration``.
* ``price_history[R][seller]`` counts sales per price, decaying by 0.995 per step.

The books' histograms are arrays: ``bid_hists[R]``, ``ask_hists[R]`` and ``price_history[R]``
are (n_agents, n_prices) views of (n_commodities, n_agents, n_prices) blocks (edit them in
place), ``n_orders[R]`` is (n_agents,), so ``bid_hists[R][i]`` is agent i's row as in 1.7.1
(where they were dicts of arrays).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ai_economist.foundation.base.base_component import BaseComponent, component_registry
from ai_economist.foundation.components import cda_writers
from ai_economist.foundation.components.param_checks import check_integer, check_number
from ai_economist.foundation.entities import resource_registry

PRICE_DECAY = 0.995
_LIFETIME_KEYS = {"bid": "bid_lifetime", "ask": "ask_lifetime"}
_BID_RANK = operator.itemgetter("bid", "bid_lifetime")  # (price, age) of a bid, as a tuple
_SUM = np.add.reduce
_ASK_PRICE, _ASK_AGE = operator.itemgetter("ask"), operator.itemgetter("ask_lifetime")


@component_registry.add
class ContinuousDoubleAuction(BaseComponent):
    """Continuous double auction between mobile agents (``component_type="Trade"``).

    Args:
        max_bid_ask: highest price (int >= 1); prices are 0..max_bid_ask.
        order_labor: labour per order placed (>= 0).
        order_duration: steps an unfilled order stays on the books (int >= 1).
        max_num_orders: open bids + asks per agent and commodity (int >= 1; None:
            ``order_duration``).
    """

    name = "ContinuousDoubleAuction"
    component_type = "Trade"
    required_entities = ["Coin", "Labor"]
    agent_subclasses = ["BasicMobileAgent"]

    def __init__(
        self,
        *args: Any,
        max_bid_ask: int = 10,
        order_labor: float = 0.25,
        order_duration: int = 50,
        max_num_orders: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.max_bid_ask = check_integer(self.name, "max_bid_ask", max_bid_ask, 1)
        self.price_floor = 0
        self.price_ceiling = self.max_bid_ask
        self.order_duration = check_integer(self.name, "order_duration", order_duration, 1)
        self.max_num_orders = check_integer(
            self.name,
            "max_num_orders",
            self.order_duration if max_num_orders is None else max_num_orders,
            1,
        )
        self.order_labor = check_number(self.name, "order_labor", order_labor, 0.0)
        self.commodities = [r for r in self.world.resources if resource_registry.get(r).collectible]
        self._prices = np.arange(self.price_floor, self.price_ceiling + 1, dtype=np.float64)
        self._buy_names = {c: f"{self.name}.Buy_{c}" for c in self.commodities}
        self._sell_names = {c: f"{self.name}.Sell_{c}" for c in self.commodities}
        fields = ("market_rate", "price_history", "available_asks", "available_bids")
        fields += ("full_asks", "full_bids", "my_asks", "my_bids")
        self._obs_keys = {c: tuple(f"{f}-{c}" for f in fields) for c in self.commodities}
        self.additional_reset_steps()

    @property
    def n_prices(self) -> int:
        """Number of price levels (``max_bid_ask + 1``)."""
        return self.price_ceiling - self.price_floor + 1

    def _price_zeros(self, *lead: int) -> np.ndarray:
        return np.zeros((*lead, self.n_prices))

    # ------------------------------------------------------------------ queries
    def available_asks(self, resource: str, agent: Any) -> np.ndarray:
        """Per price, the asks on R that ``agent`` could buy from (None: all asks)."""
        total = self.ask_hists[resource].sum(axis=0)
        return total if agent is None else total - self.ask_hists[resource][agent.idx]

    def available_bids(self, resource: str, agent: Any) -> np.ndarray:
        """Per price, the bids on R that ``agent`` could sell to (None: all bids)."""
        total = self.bid_hists[resource].sum(axis=0)
        return total if agent is None else total - self.bid_hists[resource][agent.idx]

    def can_bid(self, resource: str, agent: Any) -> bool:
        """Whether ``agent`` is below the order limit for R."""
        return bool(self.n_orders[resource][agent.idx] < self.max_num_orders)

    def can_ask(self, resource: str, agent: Any) -> bool:
        """Whether ``agent`` is below the order limit for R and holds a unit of R."""
        return self.can_bid(resource, agent) and agent.state["inventory"][resource] > 0

    # ------------------------------------------------------------------- orders
    def create_bid(self, resource: str, agent: Any, max_payment: int) -> None:
        """Place a bid at ``max_payment`` if allowed (escrows the coin); else do nothing."""
        if not self.can_bid(resource, agent) or agent.state["inventory"]["Coin"] < max_payment:
            return
        price = int(max_payment)
        self.bids[resource].append({"buyer": agent.idx, "bid": price, "bid_lifetime": 0})
        self.bid_hists[resource][agent.idx, price - self.price_floor] += 1
        self.n_orders[resource][agent.idx] += 1
        agent.inventory_to_escrow("Coin", price)
        agent.state["endogenous"]["Labor"] += self.order_labor

    def create_ask(self, resource: str, agent: Any, min_income: int) -> None:
        """Place an ask at ``min_income`` if allowed (escrows one unit); else do nothing."""
        if not self.can_ask(resource, agent):
            return
        price = int(min_income)
        self.asks[resource].append({"seller": agent.idx, "ask": price, "ask_lifetime": 0})
        self.ask_hists[resource][agent.idx, price - self.price_floor] += 1
        self.n_orders[resource][agent.idx] += 1
        agent.inventory_to_escrow(resource, 1)
        agent.state["endogenous"]["Labor"] += self.order_labor

    def _execute(self, resource: str, bid: dict[str, Any], ask: dict[str, Any]) -> dict[str, Any]:
        trade: dict[str, Any] = {"commodity": resource, **bid, **ask}
        # The earlier order sets the price: the ask's when the bid is not older.
        price = ask["ask"] if bid["bid_lifetime"] <= ask["ask_lifetime"] else bid["bid"]
        trade["price"] = trade["cost"] = trade["income"] = int(price)
        agents = self._world.agents
        buyer, seller = agents[bid["buyer"]], agents[ask["seller"]]
        self.bid_hists[resource][buyer.idx, bid["bid"] - self.price_floor] -= 1
        self.ask_hists[resource][seller.idx, ask["ask"] - self.price_floor] -= 1
        self.n_orders[resource][seller.idx] -= 1
        self.n_orders[resource][buyer.idx] -= 1
        self.price_history[resource][seller.idx, price - self.price_floor] += 1
        seller.state["escrow"][resource] -= 1
        buyer.state["inventory"][resource] += 1
        buyer.state["escrow"]["Coin"] -= bid["bid"]
        seller.state["inventory"]["Coin"] += price
        buyer.state["inventory"]["Coin"] += bid["bid"] - price
        return trade

    def _match_resource(self, resource: str) -> list[dict[str, Any]]:
        bids = sorted(self.bids[resource], key=_BID_RANK, reverse=True)
        # by (ask, -ask_lifetime), ties in book order: two stable sorts with C-level keys
        asks = sorted(sorted(self.asks[resource], key=_ASK_AGE, reverse=True), key=_ASK_PRICE)
        trades: list[dict[str, Any]] = []
        if not bids or not asks or bids[0]["bid"] < asks[0]["ask"]:
            # the highest bid is below the lowest ask: nothing matches
            self.bids[resource], self.asks[resource] = bids, asks
            return trades
        possible = [True] * self.n_agents
        while bids and asks and any(possible):
            i_bid, i_ask, matched = 0, 0, False
            while i_bid < len(bids):
                buyer = bids[i_bid]["buyer"]
                if not possible[buyer]:
                    i_bid += 1
                elif i_ask >= len(asks) or bids[i_bid]["bid"] < asks[i_ask]["ask"]:
                    possible[buyer] = False  # no ask this buyer can take on this pass
                    break
                elif asks[i_ask]["seller"] == buyer:
                    i_ask += 1
                else:
                    trades.append(self._execute(resource, bids.pop(i_bid), asks.pop(i_ask)))
                    matched = True
                    break
            if i_bid >= len(bids) and not matched:
                break
        self.bids[resource], self.asks[resource] = bids, asks
        return trades

    def match_orders(self, changed: Any = None) -> None:
        """Match the books of every commodity (of those in ``changed``, when given: a book
        without new orders since its last matching has no matchable pair); append this
        step's trades to ``executed_trades``."""
        trades: list[dict[str, Any]] = []
        for resource in self.commodities:
            if changed is None or resource in changed:
                trades.extend(self._match_resource(resource))
        self.executed_trades.append(trades)

    def remove_expired_orders(self) -> None:
        """Age every open order by 1 and cancel those older than ``order_duration``."""
        for resource in self.commodities:
            if self.bids[resource]:
                self.bids[resource] = self._age_orders(resource, self.bids[resource], "bid")
            if self.asks[resource]:
                self.asks[resource] = self._age_orders(resource, self.asks[resource], "ask")

    def _age_orders(self, resource: str, orders: list[dict], side: str) -> list[dict]:
        """The ``side`` (``"bid"`` or ``"ask"``) orders on ``resource`` still open after
        ageing them by 1; each cancelled one goes back to its owner's inventory (a bid's
        coin, an ask's unit) and leaves the books."""
        lifetime, duration = _LIFETIME_KEYS[side], self.order_duration
        kept = []
        expired = []
        for order in orders:
            age = order[lifetime] + 1
            order[lifetime] = age
            if age <= duration:
                kept.append(order)
            else:
                expired.append(order)
        if expired:
            self._cancel(resource, expired, side)
        return kept

    def _cancel(self, resource: str, orders: list[dict], side: str) -> None:
        """Return expired ``side`` orders on ``resource`` to their owners, in order."""
        owner, hists = ("buyer", self.bid_hists) if side == "bid" else ("seller", self.ask_hists)
        agents = self._world.agents
        for order in orders:
            agent, price = order[owner], order[side]
            if side == "bid":
                agents[agent].escrow_to_inventory("Coin", price)
            else:
                agents[agent].escrow_to_inventory(resource, 1)
            hists[resource][agent, price - self.price_floor] -= 1
            self.n_orders[resource][agent] -= 1

    # ----------------------------------------------------------------- contract
    def get_n_actions(self, agent_cls_name: str) -> list[tuple[str, int]] | None:
        """``Buy_R`` and ``Sell_R`` (``max_bid_ask + 1`` prices each) per commodity R."""
        if agent_cls_name != "BasicMobileAgent":
            return None
        spaces = []
        for c in self.commodities:
            spaces += [(f"Buy_{c}", self.n_prices), (f"Sell_{c}", self.n_prices)]
        return spaces

    def get_additional_state_fields(self, agent_cls_name: str) -> dict[str, Any]:
        """No state fields."""
        return {}

    def component_step(self) -> None:
        """Place the new orders, match the books, expire old orders."""
        changed = set()
        self._history *= PRICE_DECAY
        agents = self._world.agents
        for resource in self.commodities:
            buy, sell = self._buy_names[resource], self._sell_names[resource]
            n_open = len(self.bids[resource]) + len(self.asks[resource])
            for agent in agents:
                action = agent.action
                bid, ask = action.get(buy, 0), action.get(sell, 0)
                if bid:
                    self._place(resource, agent, buy, bid, self.create_bid)
                if ask:
                    self._place(resource, agent, sell, ask, self.create_ask)
            if len(self.bids[resource]) + len(self.asks[resource]) != n_open:
                changed.add(resource)
        self.match_orders(changed)
        self.remove_expired_orders()

    def _place(self, resource: str, agent: Any, key: str, action: int, place: Any) -> None:
        """``place`` (``create_bid`` or ``create_ask``) the order of ``agent``'s ``action``
        for sub-space ``key`` (1..n_prices: price ``action - 1``)."""
        if not 1 <= action <= self.n_prices:
            raise ValueError(
                f"{self.name}: action {action} of agent {agent.idx} for {key} is "
                f"out of range 0..{self.n_prices}"
            )
        place(resource, agent, action - 1)

    def generate_observations(self) -> dict[Any, dict[str, Any]]:
        """Market rate, price history and the books (agents see others' orders and their own)."""
        agents = self.world.agents
        rates, scaled, full, others = self._market_view()
        mine = self._books.copy()
        keys = [a.idx for a in agents]
        obs: dict[Any, dict[str, Any]] = {k: {} for k in keys}
        planner: dict[str, Any] = {}
        for j, c in enumerate(self.commodities):
            k_rate, k_hist, k_asks, k_bids, k_full_asks, k_full_bids, k_my_asks, k_my_bids = (
                self._obs_keys[c]
            )
            rate, hist = rates[j], scaled[j]
            planner[k_rate] = rate
            planner[k_hist] = hist
            planner[k_full_asks] = full[0, j]
            planner[k_full_bids] = full[1, j]
            rows = zip(keys, others[0, j], others[1, j], mine[0, j], mine[1, j])
            for key, others_asks, others_bids, my_asks, my_bids in rows:
                o = obs[key]
                o[k_rate] = rate
                o[k_hist] = hist
                o[k_asks] = others_asks
                o[k_bids] = others_bids
                o[k_my_asks] = my_asks
                o[k_my_bids] = my_bids
        obs[self.world.planner.idx] = planner
        return obs

    def _market_view(self) -> tuple[list[float], np.ndarray, np.ndarray, np.ndarray]:
        """Market rates, scaled price histories (commodities, prices), the full books
        (asks/bids, commodities, prices) and each agent's view of the others' orders
        (asks/bids, commodities, agents, prices)."""
        # np.add.reduce is what ndarray.sum calls, without its Python wrapper
        history = _SUM(self._history, 1)  # (commodities, prices)
        rates = cda_writers.market_rates(history, self._prices)
        full = _SUM(self._books, 2)
        return rates, history * self.inv_scale, full, full[:, :, None] - self._books

    def generate_masks(self, completions: int = 0) -> dict[int, dict[str, np.ndarray]]:
        """Sell: all prices if the agent can ask, else none. Buy: prices <= its coin, if below the order limit."""
        agents = self.world.agents
        zeros = np.zeros(self.n_prices, dtype=np.float32)
        ones = np.ones(self.n_prices, dtype=np.float32)
        coin = np.array([a.state["inventory"]["Coin"] for a in agents])
        can_pay = (self._prices <= coin[:, None]).astype(np.float32)
        masks: dict[int, dict[str, np.ndarray]] = {a.idx: {} for a in agents}
        for c in self.commodities:
            below_limit = (self.n_orders[c] < self.max_num_orders).tolist()
            buy, sell = f"Buy_{c}", f"Sell_{c}"
            for i, agent in enumerate(agents):
                m = masks[agent.idx]
                m[buy] = can_pay[i] if below_limit[i] else zeros
                m[sell] = ones if below_limit[i] and agent.state["inventory"][c] > 0 else zeros
        return masks

    def observation_writer(self, slots: Any) -> Any:
        """Direct-path writer of :meth:`generate_observations` (``base/direct_obs.py``)."""
        return cda_writers.observation_writer(self, slots)

    def mask_writer(self, slots: Any) -> Any:
        """Direct-path writer of :meth:`generate_masks` (``base/direct_masks.py``)."""
        return cda_writers.mask_writer(self, slots)

    # ----------------------------------------------------------------- optional
    def get_metrics(self) -> dict[str, Any]:
        """Per agent and commodity: mean price, cost, income and the count of sales and
        purchases (``<idx>/{Sell,Buy}<R>/{price,cost,income,n_sales}``, NaN means without
        trades), and ``n_trades``."""
        keys = ("price", "cost", "income")
        stats = {
            (side, a.idx, c): dict.fromkeys((*keys, "n_sales"), 0)
            for side in ("Sell", "Buy")
            for a in self.world.agents
            for c in self.commodities
        }
        n_trades = 0
        for trades in self.executed_trades:
            for t in trades:
                n_trades += 1
                for side, idx in (("Sell", t["seller"]), ("Buy", t["buyer"])):
                    entry = stats[(side, idx, t["commodity"])]
                    entry["n_sales"] += 1
                    for k in keys:
                        entry[k] += t[k]
        out: dict[str, Any] = {}
        for a in self.world.agents:
            for c in self.commodities:
                for side in ("Sell", "Buy"):
                    entry = stats[(side, a.idx, c)]
                    n = entry["n_sales"]
                    for k in keys:
                        out[f"{a.idx}/{side}{c}/{k}"] = entry[k] / n if n else np.nan
                    out[f"{a.idx}/{side}{c}/n_sales"] = n
        out["n_trades"] = n_trades
        return out

    def additional_reset_steps(self) -> None:
        """Empty the books, histograms, price histories and the trade log."""
        n = self.n_agents
        self.bids: dict[str, list[dict[str, Any]]] = {c: [] for c in self.commodities}
        self.asks: dict[str, list[dict[str, Any]]] = {c: [] for c in self.commodities}
        self.n_orders = {c: np.zeros(n, dtype=np.int64) for c in self.commodities}
        # (commodities, agents, prices) blocks; the per-commodity dicts hold views of them.
        n_c = len(self.commodities)
        self._history = self._price_zeros(n_c, n)
        self._books = self._price_zeros(2, n_c, n)  # asks, then bids
        self._bind_views()
        self.executed_trades: list[list[dict[str, Any]]] = []

    def _bind_views(self) -> None:
        """The per-commodity dicts and the asks/bids halves as views of the blocks."""
        self._asks, self._bids = self._books[0], self._books[1]
        self.price_history = {c: self._history[j] for j, c in enumerate(self.commodities)}
        self.bid_hists = {c: self._bids[j] for j, c in enumerate(self.commodities)}
        self.ask_hists = {c: self._asks[j] for j, c in enumerate(self.commodities)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Copies and pickles turn views into separate arrays: make them views again.
        self.__dict__.update(state)
        self._bind_views()

    def get_dense_log(self) -> list[list[dict[str, Any]]]:
        """Per step, the executed trades."""
        return self.executed_trades

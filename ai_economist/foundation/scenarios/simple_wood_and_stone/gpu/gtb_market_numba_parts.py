"""Device functions of the GPU market (Numba): the twins of ``kernels/gtb_market.cuh``, each
named after the ``cda_batched`` function it mirrors (one env ``e``; agent ``a`` where a
function is per agent).

Per-agent functions (``split_actions``, ``place_orders``, ``expire_orders``, the
observation and mask writers) touch only that agent's slots, books, goods and labour, in the
numpy order (commodity by commodity, a bid before an ask), so the agents run in parallel;
``match_orders`` runs in one thread, commodity after commodity: trades on both books move the
same coin, and the order of the float additions is part of the result. Goods are in the
world's order: coin at 0, commodity ``c`` at ``1 + c``.
"""

from __future__ import annotations

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import market_state as ms
from ai_economist.warp_drive.numba_index import index_divmod
from ai_economist.warp_drive.numba_loops import device_jit

EMPTY = ms.EMPTY
ASK_NONE = 1 << 62  # above every ask key (cda_batched: int64 max)
ASKS, BIDS = 0, 1
MP_LABOR, MP_INV = ms.MP["order_labor"], ms.MP["inv_scale"]
MI_DURATION, MI_ORDERS = ms.MI["order_duration"], ms.MI["max_num_orders"]
MI_MAX_BID_ASK = ms.MI["max_bid_ask"]
MI_ACTION, MI_OBS_A, MI_OBS_P = (ms.MI[k] for k in ("action_offset", "obs_offset_a", "obs_offset_p"))  # fmt: skip


@device_jit
def market_reset(e, a, bid_price, bid_created, ask_price, ask_created, n_orders, books,
                 price_history, trade_count, trade_value, market_bids, market_asks):  # fmt: skip
    """``cda_batched.reset_envs`` for agent ``a``'s rows (the caller zeroes the clock and
    ``n_trades``)."""
    n_c, k_max, n_p = bid_price.shape[1], bid_price.shape[3], books.shape[4]
    for c in range(n_c):
        for k in range(k_max):
            bid_price[e, c, a, k] = EMPTY
            ask_price[e, c, a, k] = EMPTY
            bid_created[e, c, a, k] = 0
            ask_created[e, c, a, k] = 0
        n_orders[e, c, a] = 0
        for p in range(n_p):
            books[e, ASKS, c, a, p] = 0
            books[e, BIDS, c, a, p] = 0
            price_history[e, c, a, p] = 0.0
        for side in range(2):
            trade_count[e, side, c, a] = 0
            trade_value[e, side, c, a] = 0.0
        market_bids[e, a, c] = 0
        market_asks[e, a, c] = 0


@device_jit
def split_actions(e, a, action, offset, n_prices, market_bids, market_asks):
    """``market_reference.split_actions`` of agent ``a``'s flat action."""
    for c in range(market_bids.shape[2]):
        start = offset + 2 * c * n_prices
        bid, ask = 0, 0
        if action >= start and action < start + n_prices:
            bid = action - start + 1
        if action >= start + n_prices and action < start + 2 * n_prices:
            ask = action - start - n_prices + 1
        market_bids[e, a, c] = bid
        market_asks[e, a, c] = ask


@device_jit
def decay_history(e, tid, nt, price_history, decay):
    """``state.history *= PRICE_DECAY`` (threads stride over the cells)."""
    n_c, n_a, n_p = price_history.shape[1], price_history.shape[2], price_history.shape[3]
    for i in range(tid, n_c * n_a * n_p, nt):
        c, r = index_divmod(i, n_a * n_p)
        s, p = index_divmod(r, n_p)
        price_history[e, c, s, p] *= decay


@device_jit
def free_slot(prices, e, c, a):
    """The first empty slot (0 where none is: ``cda_batched._free_slot``)."""
    for k in range(prices.shape[3]):
        if prices[e, c, a, k] == EMPTY:
            return k
    return 0


@device_jit
def place_orders(e, a, clock, market_bids, market_asks, bid_price, bid_created, ask_price,
                 ask_created, n_orders, books, inventory, escrow, labor, params, iparams):  # fmt: skip
    """``cda_batched.place_orders`` for agent ``a``: per commodity its bid (coin to escrow)
    then its ask (one unit to escrow), each while below ``max_num_orders``."""
    k_max, order_labor = iparams[MI_ORDERS], params[MP_LABOR]
    for c in range(bid_price.shape[1]):
        g = 1 + c
        action = market_bids[e, a, c]
        p = action - 1
        if action > 0 and n_orders[e, c, a] < k_max and inventory[e, a, 0] >= p:
            slot = free_slot(bid_price, e, c, a)
            bid_price[e, c, a, slot] = p
            bid_created[e, c, a, slot] = clock
            books[e, BIDS, c, a, p] += 1
            n_orders[e, c, a] += 1
            inventory[e, a, 0] -= p
            escrow[e, a, 0] += p
            labor[e, a] += order_labor
        action = market_asks[e, a, c]
        p = action - 1
        if action > 0 and n_orders[e, c, a] < k_max and inventory[e, a, g] > 0:
            slot = free_slot(ask_price, e, c, a)
            ask_price[e, c, a, slot] = p
            ask_created[e, c, a, slot] = clock
            books[e, ASKS, c, a, p] += 1
            n_orders[e, c, a] += 1
            inventory[e, a, g] -= 1
            escrow[e, a, g] += 1
            labor[e, a] += order_labor


@device_jit
def best_bid(e, c, b, clock, bid_price, bid_created, duration):
    """``(key, slot)`` of agent ``b``'s best bid (``cda_batched_matching.bid_keys``: price,
    then age, then the lower agent); key -1 without bids."""
    n_a = bid_price.shape[2]
    best, slot = -1, 0
    for k in range(bid_price.shape[3]):
        p = bid_price[e, c, b, k]
        if p != EMPTY:
            key = (p * (duration + 1) + (clock - bid_created[e, c, b, k])) * n_a + (n_a - 1 - b)
            if key > best:
                best, slot = key, k
    return best, slot


@device_jit
def best_ask(e, c, s, clock, ask_price, ask_created, duration):
    """``(key, slot)`` of agent ``s``'s best ask (``ask_keys``: price, then older, then the
    lower agent); key ``ASK_NONE`` without asks."""
    n_a = ask_price.shape[2]
    best, slot = ASK_NONE, 0
    for k in range(ask_price.shape[3]):
        p = ask_price[e, c, s, k]
        if p != EMPTY:
            life = clock - ask_created[e, c, s, k]
            key = (p * (duration + 1) + (duration - life)) * n_a + s
            if key < best:
                best, slot = key, k
    return best, slot


@device_jit
def best_other_ask(e, c, b, clock, ask_price, ask_created, duration):
    """``(key, seller)`` of the best ask of the agents other than ``b``."""
    best, owner = ASK_NONE, -1
    for s in range(ask_price.shape[2]):
        if s != b:
            key, _ = best_ask(e, c, s, clock, ask_price, ask_created, duration)
            if key < best:
                best, owner = key, s
    return best, owner


@device_jit
def execute_trades(e, c, buyer, bid_slot, seller, ask_slot, clock, bid_price, bid_created,
                   ask_price, ask_created, n_orders, books, price_history, trade_count,
                   trade_value, n_trades, inventory, escrow):  # fmt: skip
    """``cda_batched_matching.execute_trades``: one trade, at the earlier order's price."""
    g = 1 + c
    bid_p, ask_p = bid_price[e, c, buyer, bid_slot], ask_price[e, c, seller, ask_slot]
    bid_life = clock - bid_created[e, c, buyer, bid_slot]
    ask_life = clock - ask_created[e, c, seller, ask_slot]
    price = ask_p if bid_life <= ask_life else bid_p
    books[e, BIDS, c, buyer, bid_p] -= 1
    books[e, ASKS, c, seller, ask_p] -= 1
    n_orders[e, c, seller] -= 1
    n_orders[e, c, buyer] -= 1
    price_history[e, c, seller, price] += 1
    bid_price[e, c, buyer, bid_slot] = EMPTY
    ask_price[e, c, seller, ask_slot] = EMPTY
    escrow[e, seller, g] -= 1
    inventory[e, buyer, g] += 1
    escrow[e, buyer, 0] -= bid_p
    inventory[e, seller, 0] += price
    inventory[e, buyer, 0] += bid_p - price
    trade_count[e, 0, c, seller] += 1
    trade_value[e, 0, c, seller] += price
    trade_count[e, 1, c, buyer] += 1
    trade_value[e, 1, c, buyer] += price
    n_trades[e, c] += 1


@device_jit
def match_book(e, c, clock, bid_price, bid_created, ask_price, ask_created, n_orders, books,
               price_history, trade_count, trade_value, n_trades, inventory, escrow, duration):  # fmt: skip
    """``cda_batched_matching.match_book`` of one env and commodity: each pass, every
    possible buyer whose best bid is below the other agents' best ask becomes impossible;
    the best bid of the rest trades with that ask; no trade: done."""
    n_a = bid_price.shape[2]
    per_price = (duration + 1) * n_a
    possible = (1 << n_a) - 1
    while True:
        buyer, top, seller = -1, -1, -1
        for b in range(n_a):
            if (possible >> b) & 1 == 0:
                continue
            key, _ = best_bid(e, c, b, clock, bid_price, bid_created, duration)
            other, owner = best_other_ask(e, c, b, clock, ask_price, ask_created, duration)
            if key < 0 or owner < 0 or key // per_price < other // per_price:
                possible &= ~(1 << b)
            elif key > top:
                buyer, top, seller = b, key, owner
        if buyer < 0:
            return
        _, bid_slot = best_bid(e, c, buyer, clock, bid_price, bid_created, duration)
        _, ask_slot = best_ask(e, c, seller, clock, ask_price, ask_created, duration)
        execute_trades(e, c, buyer, bid_slot, seller, ask_slot, clock, bid_price, bid_created,
                       ask_price, ask_created, n_orders, books, price_history, trade_count,
                       trade_value, n_trades, inventory, escrow)  # fmt: skip


@device_jit
def book_changed(e, c, clock, bid_price, bid_created, ask_price, ask_created):
    """Whether the book got an order this step (``place_orders``' ``changed``)."""
    for a in range(bid_price.shape[2]):
        for k in range(bid_price.shape[3]):
            if bid_price[e, c, a, k] != EMPTY and bid_created[e, c, a, k] == clock:
                return True
            if ask_price[e, c, a, k] != EMPTY and ask_created[e, c, a, k] == clock:
                return True
    return False


@device_jit
def match_orders(e, clock, bid_price, bid_created, ask_price, ask_created, n_orders, books,
                 price_history, trade_count, trade_value, n_trades, inventory, escrow, iparams):  # fmt: skip
    """``cda_batched_matching.match_orders`` of one env (one thread), commodity by commodity;
    a book without new orders holds no matchable pair and is skipped."""
    for c in range(bid_price.shape[1]):
        n_trades[e, c] = 0
        if book_changed(e, c, clock, bid_price, bid_created, ask_price, ask_created):
            match_book(e, c, clock, bid_price, bid_created, ask_price, ask_created, n_orders,
                       books, price_history, trade_count, trade_value, n_trades, inventory,
                       escrow, iparams[MI_DURATION])  # fmt: skip


@device_jit
def expire_orders(e, a, clock, bid_price, bid_created, ask_price, ask_created, n_orders, books,
                  inventory, escrow, iparams):  # fmt: skip
    """``cda_batched.expire_orders`` for agent ``a``: orders older than ``order_duration``
    (after this step) leave, their coin and units return from escrow."""
    age, duration = clock + 1, iparams[MI_DURATION]
    for c in range(bid_price.shape[1]):
        g = 1 + c
        refund, units = 0, 0
        for k in range(bid_price.shape[3]):
            if bid_price[e, c, a, k] != EMPTY and age - bid_created[e, c, a, k] > duration:
                refund += bid_price[e, c, a, k]
            if ask_price[e, c, a, k] != EMPTY and age - ask_created[e, c, a, k] > duration:
                units += 1
        escrow[e, a, 0] -= refund
        inventory[e, a, 0] += refund
        escrow[e, a, g] -= units
        inventory[e, a, g] += units
        for k in range(bid_price.shape[3]):
            p = bid_price[e, c, a, k]
            if p != EMPTY and age - bid_created[e, c, a, k] > duration:
                books[e, BIDS, c, a, p] -= 1
                n_orders[e, c, a] -= 1
                bid_price[e, c, a, k] = EMPTY
            p = ask_price[e, c, a, k]
            if p != EMPTY and age - ask_created[e, c, a, k] > duration:
                books[e, ASKS, c, a, p] -= 1
                n_orders[e, c, a] -= 1
                ask_price[e, c, a, k] = EMPTY


# ----------------------------------------------------------------------- cda_batched_views
@device_jit
def history_at(e, c, p, price_history):
    """The sales at price ``p`` summed over sellers, in seller order."""
    h = 0.0
    for s in range(price_history.shape[2]):
        h = h + price_history[e, c, s, p]
    return h


@device_jit
def market_rate(e, c, price_history):
    """``sum_p p h_p / max(0.001, sum_p h_p)`` (``market_observations``' rate)."""
    num, den = 0.0, 0.0
    for p in range(price_history.shape[3]):
        h = history_at(e, c, p, price_history)
        num = num + p * h
        den = den + h
    return num / max(0.001, den)


@device_jit
def full_book(e, side, c, p, books):
    """Open orders of one side, commodity and price over all agents."""
    total = 0
    for s in range(books.shape[3]):
        total += books[e, side, c, s, p]
    return total


@device_jit
def market_observations(e, a, out, offset, books, price_history, params):
    """Agent ``a``'s market block at ``out[e, a, offset:]``, the dict env's sorted keys:
    available asks, available bids, market rate, my asks, my bids, price history."""
    n_c, n_p = books.shape[2], books.shape[4]
    pos = offset
    for side in range(2):  # available_asks, available_bids: the other agents' orders
        for c in range(n_c):
            for p in range(n_p):
                out[e, a, pos] = full_book(e, side, c, p, books) - books[e, side, c, a, p]
                pos += 1
    for c in range(n_c):
        out[e, a, pos] = market_rate(e, c, price_history)
        pos += 1
    for side in range(2):  # my_asks, my_bids
        for c in range(n_c):
            for p in range(n_p):
                out[e, a, pos] = books[e, side, c, a, p]
                pos += 1
    for c in range(n_c):
        for p in range(n_p):
            out[e, a, pos] = history_at(e, c, p, price_history) * params[MP_INV]
            pos += 1


@device_jit
def planner_market_observations(e, out, offset, books, price_history, params):
    """The planner's market block at ``out[e, 0, offset:]``: full asks, full bids, market
    rate, price history."""
    n_c, n_p = books.shape[2], books.shape[4]
    pos = offset
    for side in range(2):
        for c in range(n_c):
            for p in range(n_p):
                out[e, 0, pos] = full_book(e, side, c, p, books)
                pos += 1
    for c in range(n_c):
        out[e, 0, pos] = market_rate(e, c, price_history)
        pos += 1
    for c in range(n_c):
        for p in range(n_p):
            out[e, 0, pos] = history_at(e, c, p, price_history) * params[MP_INV]
            pos += 1


@device_jit
def action_masks(e, a, mask, offset, n_orders, inventory, iparams):
    """``cda_batched_views.action_masks`` of agent ``a`` at ``mask[e, a, offset:]``: per
    commodity ``Buy`` (prices up to its coin) then ``Sell`` (all prices if it holds a unit),
    while below ``max_num_orders``."""
    n_c, k_max = n_orders.shape[1], iparams[MI_ORDERS]
    n_p = iparams[MI_MAX_BID_ASK] + 1
    for c in range(n_c):
        below = n_orders[e, c, a] < k_max
        can_ask = below and inventory[e, a, 1 + c] > 0
        start = offset + 2 * c * n_p
        for p in range(n_p):
            mask[e, a, start + p] = 1.0 if below and p <= inventory[e, a, 0] else 0.0
            mask[e, a, start + n_p + p] = 1.0 if can_ask else 0.0

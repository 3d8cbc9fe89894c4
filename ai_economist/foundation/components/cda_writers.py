"""Direct-path writers of ``ContinuousDoubleAuction``'s observations and masks.

``ContinuousDoubleAuction.observation_writer`` / ``mask_writer`` (see ``base/direct_obs.py``
and ``base/direct_masks.py``): the same values as its ``generate_observations`` and
``generate_masks``, written into the step's buffers.
"""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np

_SUM = np.add.reduce  # what ndarray.sum calls, without its Python wrapper


def market_rates(history: np.ndarray, prices: np.ndarray) -> list[float]:
    """Per commodity, the mean price of the (commodities, prices) sale counts ``history``:
    ``(history @ prices) / np.maximum(0.001, history.sum(1))``, the division in Python
    floats (the same float64 division; ``x < 0.001`` keeps a NaN as ``np.maximum`` does)."""
    totals = _SUM(history, 1).tolist()
    weighted = (history @ prices).tolist()
    return [n / (0.001 if d < 0.001 else d) for n, d in zip(weighted, totals)]


def observation_writer(cda: Any, slots: Any) -> Any:
    """Direct-path writer of :meth:`generate_observations` (``base/direct_obs.py``):
    one fancy-indexed write for every book and price-history field of every key."""
    agent_keys = [str(a.idx) for a in cda.world.agents]
    keys = [*agent_keys, cda.world.planner.idx]
    slots.scalars([(k, f"market_rate-{c}") for c in cda.commodities for k in keys])

    def where(fields: tuple[str, ...], who: list[str]) -> np.ndarray:
        return np.array(
            [
                [[slots.positions(k, f"{f}-{c}") for k in who] for c in cda.commodities]
                for f in fields
            ]
        )

    hist = where(("price_history",), keys)[0]  # (commodities, keys, prices)
    others = where(("available_asks", "available_bids"), agent_keys)
    mine = where(("my_asks", "my_bids"), agent_keys)
    full = where(("full_asks", "full_bids"), [cda.world.planner.idx])[:, :, 0]
    n_keys = len(keys)
    positions, sources = _joined_layout(hist, [others, mine, full])
    values, (v_scaled, v_others, v_mine, v_full) = _scratch(
        [hist[:, 0].shape, *(a.shape for a in (others, mine, full))]
    )
    history = np.empty(v_scaled.shape)

    def write(buf: np.ndarray, scalars: list, outs: dict) -> None:
        # _market_view's values, computed into one scratch array laid out like the sources
        _SUM(cda._history, 1, out=history)
        rates = market_rates(history, cda._prices)
        for rate in rates:
            scalars.extend([rate] * n_keys)
        np.multiply(history, cda.inv_scale, out=v_scaled)
        books = cda._books
        _SUM(books, 2, out=v_full)
        np.subtract(v_full[:, :, None], books, out=v_others)
        np.copyto(v_mine, books)
        buf.put(positions, values.take(sources))

    return write


def _scratch(shapes: list[tuple[int, ...]]) -> tuple[np.ndarray, list[np.ndarray]]:
    """One float64 array and views of it, back to back, of the ``shapes``."""
    sizes = [int(np.prod(shape)) for shape in shapes]
    values = np.empty(sum(sizes))
    ends = np.cumsum(sizes).tolist()
    views = [values[e - n : e].reshape(s) for s, n, e in zip(shapes, sizes, ends)]
    return values, views


def _joined_layout(hist: np.ndarray, rest: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Buffer positions of the price histories ``hist`` (commodities, keys, prices) and of
    the ``rest`` (each laid out like its values) back to back, and where each position's
    value sits in the values joined the same way (the histories once, not per key)."""
    n_c, n_keys, n_p = hist.shape
    per_key = np.arange(n_c * n_p, dtype=np.int64).reshape(n_c, 1, n_p)
    hist_sources = np.repeat(per_key, n_keys, axis=1)  # the same row for every key
    n_rest = sum(r.size for r in rest)
    positions = np.concatenate([hist.ravel(), *(r.ravel() for r in rest)])
    sources = np.concatenate([hist_sources.ravel(), n_c * n_p + np.arange(n_rest)])
    return positions, sources


def mask_writer(cda: Any, slots: Any) -> Any:
    """Direct-path writer of :meth:`generate_masks` (``base/direct_masks.py``); the
    buffer starts at zeros there, so only allowed orders are written."""
    agents = cda.world.agents

    def bounds(side: str, c: str) -> list[tuple[int, int]]:
        out = []
        for agent in agents:
            where = slots.positions(str(agent.idx), f"{side}_{c}")
            out.append((int(where[0]), int(where[-1]) + 1))
        return out

    per_commodity = [(c, bounds("Buy", c), bounds("Sell", c)) for c in cda.commodities]

    def write(buf: np.ndarray, completions: int) -> None:
        prices = cda._prices.tolist()  # ascending (an arange)
        limit = cda.max_num_orders
        inventories, affordable = [], []  # one pass over the agents
        for agent in agents:
            inventory = agent.state["inventory"]
            inventories.append(inventory)
            affordable.append(_n_affordable(prices, inventory["Coin"]))
        for c, buy, sell in per_commodity:
            n_orders = cda.n_orders[c].tolist()
            for i, inv in enumerate(inventories):
                if n_orders[i] < limit:
                    start = buy[i][0]
                    buf[start : start + affordable[i]] = 1  # the prices <= its coin
                    if inv[c] > 0:
                        buf[sell[i][0] : sell[i][1]] = 1.0

    return write


def _n_affordable(prices: list[float], coin: float) -> int:
    """How many of the ascending ``prices`` are <= ``coin`` (``(prices <= coin).sum()``:
    the buy mask is that prefix of the prices)."""
    return bisect.bisect_right(prices, coin) if coin == coin else 0  # NaN: none

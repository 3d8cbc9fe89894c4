"""The GPU market's numpy reference (``gpu/market_reference.py``) against the batched market
``cda_batched`` on random order sequences, hand-computed trades, and the market's limits."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ai_economist.foundation.components import cda_batched as cb
from ai_economist.foundation.components import cda_batched_views as views
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import market_reference as mr
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import market_state as ms
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.market_env import (
    PAPER_MARKET,
    GatherTradeBuildMarketGpu,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.state import UnsupportedGpuConfig

SMALL = dataclasses.replace(PAPER_MARKET, n_agents=3, order_duration=4, max_num_orders=3)


def declared_state(env: GatherTradeBuildMarketGpu, num_envs: int) -> dict:
    state = env.initial_state(num_envs, 0)
    for name in ("_timestep_", "_done_"):
        state[name] = np.zeros(num_envs, dtype=np.int32)
    return state


@pytest.mark.parametrize("params", [SMALL, PAPER_MARKET])
def test_reference_equals_cda_batched_on_random_order_sequences(params):
    n, rng = 3, np.random.default_rng(4)
    goods = np.stack([rng.uniform(0, 25, (params.n_agents,)),
                      *rng.integers(0, 6, (2, params.n_agents))], axis=1)  # fmt: skip
    env = GatherTradeBuildMarketGpu(params, start_goods=goods)
    state = declared_state(env, n)
    # the batched market on its own arrays: goods with coin last, int64 slots, float books
    market = cb.initial_state(params, n)
    order = mr.goods_order(params)
    inventory, escrow = state["inventory"][..., order].copy(), np.zeros((n, params.n_agents, 3))
    labor = np.zeros((n, params.n_agents))
    trades = 0
    for step in range(40):
        shape = (n, params.n_agents, params.n_commodities)
        # bids and asks on both commodities at once (the multi-action mode's orders)
        bids = np.where(rng.random(shape) < 0.5, rng.integers(1, params.n_prices + 1, shape), 0)
        asks = np.where(rng.random(shape) < 0.5, rng.integers(1, params.n_prices + 1, shape), 0)
        state["market_bids"][:], state["market_asks"][:] = bids, asks
        mr.market_step(state, params)
        record = cb.market_step(params, market, bids, asks, inventory, escrow, labor)
        trades += int(record.count.sum())
        np.testing.assert_array_equal(state["inventory"][..., order], inventory, f"step {step}")
        np.testing.assert_array_equal(state["escrow"][..., order], escrow)
        np.testing.assert_array_equal(state["labor"], labor)
        for name in mr.SLOT_FIELDS:
            np.testing.assert_array_equal(state[name], getattr(market, name), name)
        np.testing.assert_array_equal(state["market_clock"], market.step)
        np.testing.assert_array_equal(state["books"], market.books)
        np.testing.assert_array_equal(state["price_history"], market.history)
        np.testing.assert_array_equal(state["trade_count"], market.trade_count)
        np.testing.assert_array_equal(state["trade_value"], market.trade_value)
        np.testing.assert_array_equal(state["n_trades"], record.count)
        buy, sell = views.action_masks(params, market, inventory)
        masks = mr.action_masks(state, params).reshape(n, params.n_agents, -1, 2, params.n_prices)
        np.testing.assert_array_equal(masks[..., 0, :], buy)
        np.testing.assert_array_equal(masks[..., 1, :], sell)
    assert trades > 20  # the sequences trade, expire and refill the books
    # escrow is what the open orders hold: bid prices in coin, one unit per ask
    open_bids = np.where(state["bid_price"] >= 0, state["bid_price"], 0).sum(axis=(1, 3))
    np.testing.assert_array_equal(state["escrow"][..., 0], open_bids)
    np.testing.assert_array_equal(state["escrow"][..., 1:],
                                  (state["ask_price"] >= 0).sum(axis=3).transpose(0, 2, 1))  # fmt: skip


def test_observations_follow_the_dict_envs_sorted_keys():
    env = GatherTradeBuildMarketGpu(SMALL)
    state = declared_state(env, 1)
    state["market_bids"][0, 0] = (5, 0)  # agent 0 bids 4 on stone
    state["market_asks"][0, 1] = (0, 3)  # agent 1 asks 2 for wood
    mr.market_step(state, SMALL)
    obs, p = mr.agent_observations(state, SMALL)[0], SMALL.n_prices
    blocks = {}
    start = 0
    for field in ms.AGENT_FIELDS:
        for name in SMALL.commodities:
            size = 1 if field == "market_rate" else p
            blocks[f"{field}-{name}"] = obs[:, start : start + size]
            start += size
    assert start == ms.agent_obs_size(SMALL) == obs.shape[1]
    np.testing.assert_array_equal(blocks["my_bids-Stone"][0], np.eye(p)[4])
    np.testing.assert_array_equal(blocks["available_bids-Stone"][1], np.eye(p)[4])
    np.testing.assert_array_equal(blocks["available_bids-Stone"][0], np.zeros(p))
    np.testing.assert_array_equal(blocks["available_asks-Wood"][2], np.eye(p)[2])
    np.testing.assert_array_equal(blocks["market_rate-Stone"], np.zeros((3, 1)))
    planner = mr.planner_observations(state, SMALL)[0]
    assert planner.shape == (ms.planner_obs_size(SMALL),)
    np.testing.assert_array_equal(planner[2 * p : 3 * p], np.eye(p)[4])  # full_bids-Stone


def test_a_bid_meets_the_standing_ask_at_the_ask_price_and_gets_the_rest_back():
    env = GatherTradeBuildMarketGpu(SMALL)
    state = declared_state(env, 1)
    coin0 = state["inventory"][0, :, 0].copy()
    state["market_asks"][0, 1, 0] = 4  # agent 1 asks 3 for stone (step 0)
    mr.market_step(state, SMALL)
    state["market_asks"][:] = 0
    state["market_bids"][0, 0, 0] = 8  # agent 0 bids 7 (step 1): the older ask sets price 3
    mr.market_step(state, SMALL)
    inv, esc = state["inventory"][0], state["escrow"][0]
    assert inv[0, 0] == coin0[0] - 3 and inv[1, 0] == coin0[1] + 3
    assert inv[0, 1] == 2.0 + 1 and inv[1, 1] == 3.0 - 1
    assert not esc.any()
    assert state["labor"][0].tolist() == [0.25, 0.25, 0.0]
    assert state["n_trades"][0].tolist() == [1, 0]
    assert state["price_history"][0, 0, 1, 3] == 1.0  # the seller's sale at 3
    assert state["trade_value"][0, :, 0].tolist() == [[0.0, 3.0, 0.0], [3.0, 0.0, 0.0]]


def test_an_unmatched_order_expires_after_order_duration_and_returns_its_escrow():
    env = GatherTradeBuildMarketGpu(SMALL)
    state = declared_state(env, 1)
    coin0 = state["inventory"][0, 2, 0]
    state["market_bids"][0, 2, 1] = 6  # agent 2 bids 5 for wood
    mr.market_step(state, SMALL)
    state["market_bids"][:] = 0
    assert state["escrow"][0, 2, 0] == 5 and state["inventory"][0, 2, 0] == coin0 - 5
    for _ in range(SMALL.order_duration - 1):  # still open at age order_duration
        mr.market_step(state, SMALL)
    assert state["bid_price"][0, 1, 2].tolist() == [5, -1, -1]
    mr.market_step(state, SMALL)  # age order_duration + 1: gone, escrow back
    assert state["bid_price"][0, 1, 2].tolist() == [-1, -1, -1]
    assert state["escrow"][0, 2, 0] == 0 and state["inventory"][0, 2, 0] == coin0
    assert state["n_orders"][0].sum() == 0 and state["books"][0].sum() == 0


def test_split_actions_reads_the_single_action_layout():
    p = SMALL.n_prices
    actions = np.array([[0, 2 + 3, 2 + p + 10, 2 + 2 * p + 0, 2 + 3 * p + 1, 1]])
    params = dataclasses.replace(SMALL, n_agents=6)
    bids, asks = mr.split_actions(params, actions, offset=2)
    assert bids[0].tolist() == [[0, 0], [4, 0], [0, 0], [0, 1], [0, 0], [0, 0]]
    assert asks[0].tolist() == [[0, 0], [0, 0], [11, 0], [0, 0], [0, 2], [0, 0]]


@pytest.mark.parametrize(
    "change, named",
    [
        ({"max_num_orders": ms.MAX_ORDERS_PER_AGENT + 1}, "max_num_orders=65"),
        ({"max_bid_ask": ms.MAX_PRICES}, "max_bid_ask=1001"),
        ({"n_agents": 30}, "n_agents=30"),
        ({"commodities": ("Wood", "Stone")}, "commodities ['Wood', 'Stone']"),
    ],
)
def test_settings_past_the_kernels_are_refused_by_name(change, named):
    with pytest.raises(UnsupportedGpuConfig, match=named.replace("[", r"\[")):
        GatherTradeBuildMarketGpu(dataclasses.replace(SMALL, **change))


def test_bad_start_goods_are_refused():
    with pytest.raises(ValueError, match=r"start_goods must be >= 0 of shape \(3, 3\)"):
        GatherTradeBuildMarketGpu(SMALL, start_goods=np.ones((2, 3)))


def test_the_config_rebuilds_the_same_market():
    env = GatherTradeBuildMarketGpu(SMALL, episode_length=7)
    again = GatherTradeBuildMarketGpu(**env.config())
    assert again.params == SMALL and again.episode_length == 7
    np.testing.assert_array_equal(again.start_goods, env.start_goods)

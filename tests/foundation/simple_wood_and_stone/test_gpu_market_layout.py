"""The GPU market's blocks sit where the economy's flat vectors hold the market: its agent and
planner observation blocks equal the ``ContinuousDoubleAuction-*`` keys of the array economy's
flat observations (which equal the dict env's), contiguous in the sorted keys; its masks and
action split equal the economy's ``Buy``/``Sell`` actions at offset 2 (after NO-OP, build)."""

from __future__ import annotations

import numpy as np

from ai_economist import foundation
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy as ae
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy_obs as aeo
from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import (
    PHASE1_ENV_CONFIG,
    SCENARIO_NAME,
    env_config,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import market_reference as mr
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import market_state as ms
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.market_env import (
    PAPER_MARKET,
    market_params,
)

CDA = "ContinuousDoubleAuction-"


def economy(num_envs: int):
    config = env_config(PHASE1_ENV_CONFIG)
    config.update(episode_length=30, dense_log_frequency=None, starting_agent_coin=30.0)
    env = foundation.make_env_instance(SCENARIO_NAME, seed=0, **config)
    params = ae.EconomyParams.from_env(env)
    return config, params, ae.initial_state(params, list(range(num_envs)))


def declared(params: ae.EconomyParams, state: ae.EconomyState) -> dict:
    """The GPU market's declared arrays holding the economy's market and goods."""
    m = state.market
    out = {"market_clock": m.step.astype(np.int32), "books": m.books.astype(np.int32),
           "price_history": m.history.copy(), "trade_count": m.trade_count.astype(np.int32),
           "trade_value": m.trade_value.copy(), "n_trades": m.trades.count.astype(np.int32),
           "inventory": state.world.inventory.copy(), "escrow": state.world.escrow.copy()}  # fmt: skip
    for name in mr.SLOT_FIELDS:
        out[name] = getattr(m, name).astype(np.int32)
    return out


def test_market_blocks_equal_the_economys_flat_market_keys():
    config, params, state = economy(2)
    assert market_params(config) == params.market == PAPER_MARKET
    rng = np.random.default_rng(1)
    for _ in range(12):  # mostly market orders: books, trades, histories
        masks = aeo.agent_masks(state, params)
        market = masks.copy()
        market[..., :2] = 0
        market[..., params.move_start :] = 0
        use = np.where(market.any(-1, keepdims=True) & (rng.random(masks.shape[:2] + (1,)) < 0.8),
                       market, masks)  # fmt: skip
        actions = (rng.random(masks.shape) * use).argmax(-1)
        bids, asks = mr.split_actions(params.market, actions, offset=2)
        _, ref_bids, ref_asks, _ = ae.split_actions(params, actions)
        np.testing.assert_array_equal(bids, ref_bids)
        np.testing.assert_array_equal(asks, ref_asks)
        ae.step(state, params, actions)
    assert state.market.trade_count.sum() > 0 and state.market.history.sum() > 0
    ours = declared(params, state)
    fields = aeo.agent_fields(state, params)
    market_keys = sorted(k for k in fields if k.startswith(CDA))
    start = sum(fields[k].shape[-1] for k in sorted(fields) if k < market_keys[0])
    assert start == 2  # after Build-build_payment, Build-build_skill
    flat = aeo.flatten(fields)
    size = ms.agent_obs_size(params.market)
    first = sorted(fields).index(market_keys[0])
    assert sorted(fields)[first : first + len(market_keys)] == market_keys  # one block
    np.testing.assert_array_equal(mr.agent_observations(ours, params.market),
                                  flat[..., start : start + size])  # fmt: skip
    planner = aeo.planner_fields(state, params)
    p_keys = sorted(k for k in planner if k.startswith(CDA))
    p_start = sum(planner[k].shape[-1] for k in sorted(planner) if k < p_keys[0])
    assert p_start == 0  # the planner's market keys sort first
    p_size = ms.planner_obs_size(params.market)
    np.testing.assert_array_equal(mr.planner_observations(ours, params.market),
                                  aeo.flatten(planner)[..., p_start : p_start + p_size])  # fmt: skip
    n = ms.n_actions(params.market)
    assert params.move_start == 2 + n
    np.testing.assert_array_equal(mr.action_masks(ours, params.market),
                                  aeo.agent_masks(state, params)[..., 2 : 2 + n])  # fmt: skip

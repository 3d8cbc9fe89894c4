"""The gather-trade-build GPU world with the market on a GPU: pycuda and Numba against the
numpy reference at a few hundred envs (run on the device machine: ``python -m pytest -m gpu``)."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_helpers import GPU_BACKENDS, require_gpu
from gtb_gpu_helpers import small_config

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import state as gs
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.env import (
    MARKET_WORLD_CONFIG,
    GatherTradeBuildMarketWorldGpu,
)
from ai_economist.warp_drive.checks.parity import check_parity
from ai_economist.warp_drive.env_wrapper import EnvWrapper

require_gpu()
pytestmark = pytest.mark.gpu


def with_market(config, **market):
    """``config`` with its ContinuousDoubleAuction's settings replaced by ``market``."""
    comps = [dict(c) for c in config["components"]]
    for i, comp in enumerate(comps):
        if "ContinuousDoubleAuction" in comp:
            comps[i] = {"ContinuousDoubleAuction": {**comp["ContinuousDoubleAuction"], **market}}
    return {**config, "components": comps}


def market_heavy(move_start, seed=0):
    """An ``actions(step, masks)`` that picks an allowed order 70% of the time."""
    rng = np.random.default_rng(seed)

    def actions(step, masks):
        m = masks["a"]
        market = m.copy()
        market[..., :2] = 0
        market[..., move_start:] = 0
        use = market.any(-1, keepdims=True) & (rng.random(m.shape[:2] + (1,)) < 0.7)
        pick = (rng.random(m.shape) * np.where(use, market, m)).argmax(-1)
        return {"a": pick.astype(np.int32), "p": np.zeros((m.shape[0], 1), np.int32)}

    return actions


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_paper_market_world_matches_the_reference(backend):
    config = {**MARKET_WORLD_CONFIG, "starting_agent_coin": 20}
    env = GatherTradeBuildMarketWorldGpu(config)
    result = check_parity(env, backend, num_envs=256, num_steps=80, seed=11,
                          actions=market_heavy(gs.move_start(env.market), 1))  # fmt: skip
    assert result, result.message


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_expiry_and_device_resets_match_the_reference(backend):
    # 5 agents placed at random, 5-step orders, 25-step episodes reset on the device
    config = {**MARKET_WORLD_CONFIG, "fixed_four_skill_and_loc": False, "n_agents": 5,
              "episode_length": 25, "resource_regen_prob": 0.2, "starting_agent_coin": 10}  # fmt: skip
    env = GatherTradeBuildMarketWorldGpu(with_market(config, order_duration=5))
    result = check_parity(env, backend, num_envs=512, num_steps=70, seed=5,
                          actions=market_heavy(gs.move_start(env.market), 2))  # fmt: skip
    assert result, result.message


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_the_device_world_trades_and_matches_the_reference(backend, tmp_path):
    # the small world, 3 agents, prices 0..3, 3-step orders: trades every few steps
    config = small_config(tmp_path, n_agents=3, starting_agent_coin=6, episode_length=40)
    config["components"].insert(1, {"ContinuousDoubleAuction": {
        "max_bid_ask": 3, "order_duration": 3, "max_num_orders": 3, "order_labor": 0.25}})  # fmt: skip
    env = GatherTradeBuildMarketWorldGpu(config)
    result = check_parity(env, backend, num_envs=384, num_steps=100, seed=2,
                          actions=market_heavy(gs.move_start(env.market), 3))  # fmt: skip
    assert result, result.message
    w = EnvWrapper(env, 384, backend, seed=2)
    w.reset_all_envs()
    act, traded = market_heavy(gs.move_start(env.market), 4), 0
    for step in range(39):
        w.step_all_envs(act(step, {"a": w.action_masks("a").cpu().numpy()}))
        traded += int(w.pull("n_trades").sum())
    assert traded > 384 and (w.pull("trade_count") > 0).any()
    assert np.isfinite(w.pull("rewards_a")).all() and (w.pull("escrow") >= 0).all()

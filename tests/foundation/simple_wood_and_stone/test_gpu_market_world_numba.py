"""The Numba kernels of the GPU world with the market against the numpy reference, under
Numba's CUDA simulator (2 envs, a few steps: each simulated launch costs about 0.1 s)."""

from __future__ import annotations

import numpy as np
import pytest
from gtb_gpu_helpers import small_config

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import state as gs
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.env import (
    MARKET_WORLD_CONFIG,
    GatherTradeBuildMarketWorldGpu,
)
from ai_economist.warp_drive.checks.parity import check_parity, compare_fields
from ai_economist.warp_drive.env_wrapper import EnvWrapper
from ai_economist.warp_drive.errors import cudasim_enabled

pytestmark = pytest.mark.skipif(not cudasim_enabled(), reason="set NUMBA_ENABLE_CUDASIM=1")


def market_config(tmp_path, **overrides):
    """The small test world with a market of prices 0..3, 2-step orders, 3 agents."""
    config = small_config(tmp_path, n_agents=3, starting_agent_coin=6, **overrides)
    market = {"ContinuousDoubleAuction": {"max_bid_ask": 3, "order_duration": 2,
                                          "max_num_orders": 3, "order_labor": 0.25}}  # fmt: skip
    config["components"].insert(1, market)
    return config


def market_heavy_actions(masks, rng, start):
    """Mostly an allowed order, else a random allowed action."""
    market = masks.copy()
    market[..., :2] = 0
    market[..., start:] = 0
    use = market.any(-1, keepdims=True) & (rng.random(masks.shape[:2] + (1,)) < 0.8)
    return (rng.random(masks.shape) * np.where(use, market, masks)).argmax(-1).astype(np.int32)


def test_numba_market_world_matches_the_reference_through_trades_and_expiry(tmp_path):
    env = GatherTradeBuildMarketWorldGpu(market_config(tmp_path, episode_length=4),
                                         threads_per_env=4)  # fmt: skip
    ref, dev = (EnvWrapper(env, 2, b, seed=2) for b in ("numpy", "numba"))
    names = [f.name for f in env.state_spec() if f.per_env]
    tols, rng = env.parity_tolerances(), np.random.default_rng(3)
    for w in (ref, dev):
        w.reset_all_envs()
        w.backend.tensor("inventory")[..., 1:] = 2.0  # units to sell
    trades = expired = 0
    for step in range(6):  # an episode end at step 4, the device reset, the next episode
        masks = ref.action_masks("a").numpy()
        chosen = {"a": market_heavy_actions(masks, rng, gs.move_start(env.market)),
                  "p": np.zeros((2, 1), np.int32)}  # fmt: skip
        clock, created = ref.pull("market_clock"), ref.pull("bid_created")
        old = (ref.pull("bid_price") >= 0) & (clock[:, None, None, None] + 1 - created > 2)
        for w in (ref, dev):
            w.step_all_envs(chosen)
        diff = compare_fields(names, ref, dev, 1e-5, 1e-6, tols)
        assert diff is None, f"step {step + 1}: {diff}"
        trades += int(ref.pull("n_trades").sum())
        expired += int((old & (ref.pull("bid_price") < 0)).sum())
        for w in (ref, dev):
            w.reset_only_done_envs()
        diff = compare_fields(names, ref, dev, 1e-5, 1e-6, tols)
        assert diff is None, f"reset after step {step + 1}: {diff}"
    assert trades >= 2 and expired >= 1
    assert (ref.pull("completions") == 1).all() and (ref.pull("market_clock") == 2).all()


def test_numba_market_world_matches_the_reference_on_the_paper_market():
    # the paper's market and world (3x3 windows keep the simulator quick)
    config = {**MARKET_WORLD_CONFIG, "episode_length": 3, "mobile_agent_observation_range": 1,
              "starting_agent_coin": 10}  # fmt: skip
    env = GatherTradeBuildMarketWorldGpu(config, threads_per_env=5)
    result = check_parity(env, "numba", num_envs=2, num_steps=4, seed=8)
    assert result, result.message

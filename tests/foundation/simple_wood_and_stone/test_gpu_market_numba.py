"""The GPU market's Numba kernels against its numpy reference (``cda_batched``) under Numba's
CUDA simulator (2 envs, a few steps: each simulated launch costs about 0.1 s)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.market_env import (
    PAPER_MARKET,
    GatherTradeBuildMarketGpu,
)
from ai_economist.warp_drive.checks.parity import check_parity, compare_fields
from ai_economist.warp_drive.env_wrapper import EnvWrapper
from ai_economist.warp_drive.errors import cudasim_enabled

pytestmark = pytest.mark.skipif(not cudasim_enabled(), reason="set NUMBA_ENABLE_CUDASIM=1")
SMALL = dataclasses.replace(PAPER_MARKET, n_agents=3, order_duration=2, max_num_orders=2,
                            max_bid_ask=4)  # fmt: skip


def test_numba_market_matches_the_reference_through_expiry_and_an_episode_end():
    # 2-step orders expire within the 5-step episodes; the device reset starts the next one
    env = GatherTradeBuildMarketGpu(SMALL, episode_length=5, threads_per_env=4)
    result = check_parity(env, "numba", num_envs=2, num_steps=7, seed=3)
    assert result, result.message


def test_numba_market_trades_like_the_reference_at_the_paper_size():
    env = GatherTradeBuildMarketGpu(PAPER_MARKET, episode_length=50, threads_per_env=5)
    ref, dev = (EnvWrapper(env, 2, b, seed=1) for b in ("numpy", "numba"))
    names = [f.name for f in env.state_spec() if f.per_env]
    rng = np.random.default_rng(0)
    traded = 0
    for w in (ref, dev):
        w.reset_all_envs()
    for step in range(4):
        masks = ref.action_masks("a").numpy()
        pick = (rng.random(masks.shape) * masks).argmax(-1).astype(np.int32)
        for w in (ref, dev):
            w.step_all_envs({"a": pick, "p": np.zeros((2, 1), np.int32)})
        diff = compare_fields(names, ref, dev, 0.0, 0.0, env.parity_tolerances())
        assert diff is None, f"step {step + 1}: {diff}"
        traded += int(ref.pull("n_trades").sum())
    assert traded > 0


def test_numba_market_takes_bids_and_asks_on_every_commodity_at_once():
    torch = pytest.importorskip("torch")
    # the multi-action mode's orders: a bid and an ask per commodity and agent in one step
    env = GatherTradeBuildMarketGpu(SMALL, episode_length=50, threads_per_env=4)
    ref, dev = (EnvWrapper(env, 2, b, seed=0) for b in ("numpy", "numba"))
    names = [f.name for f in env.state_spec() if f.per_env]
    rng, shape = np.random.default_rng(2), (2, SMALL.n_agents, SMALL.n_commodities)
    for w in (ref, dev):
        w.reset_all_envs()
    for step in range(3):
        orders = [rng.integers(0, SMALL.n_prices + 1, shape).astype(np.int32) for _ in range(2)]
        for w in (ref, dev):
            w.backend.tensor("market_bids")[:] = torch.from_numpy(orders[0])
            w.backend.tensor("market_asks")[:] = torch.from_numpy(orders[1])
        ref.backend.env.reference_orders_step(ref.backend.arrays)
        dev.backend.launch("gtb_market_orders_step")
        diff = compare_fields(names, ref, dev, 0.0, 0.0, env.parity_tolerances())
        assert diff is None, f"step {step + 1}: {diff}"
    assert ref.pull("trade_count").sum() > 0

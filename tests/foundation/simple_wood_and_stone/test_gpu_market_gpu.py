"""The GPU market on a GPU: pycuda and Numba against the numpy reference (``cda_batched``) at
larger sizes (run on the device machine: ``python -m pytest -m gpu``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from gpu_helpers import GPU_BACKENDS, require_gpu

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.market_env import (
    PAPER_MARKET,
    GatherTradeBuildMarketGpu,
)
from ai_economist.warp_drive.checks.parity import check_parity, compare_fields
from ai_economist.warp_drive.env_wrapper import EnvWrapper

require_gpu()
pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_paper_market_matches_the_reference_through_expiry_and_resets(backend):
    # 50-step orders expire from step 51; 80-step episodes reset on the device
    env = GatherTradeBuildMarketGpu(PAPER_MARKET, episode_length=80)
    result = check_parity(env, backend, num_envs=256, num_steps=120, seed=11)
    assert result, result.message


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_crowded_market_matches_the_reference(backend):
    # 12 agents, 16 slots each, 3-step orders, prices 0..20: long books, many passes a step
    params = dataclasses.replace(PAPER_MARKET, n_agents=12, max_num_orders=16,
                                 order_duration=3, max_bid_ask=20)  # fmt: skip
    env = GatherTradeBuildMarketGpu(params, episode_length=25)
    result = check_parity(env, backend, num_envs=512, num_steps=60, seed=5)
    assert result, result.message


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_the_device_market_trades_and_conserves_goods(backend):
    env = GatherTradeBuildMarketGpu(PAPER_MARKET, episode_length=200)
    w = EnvWrapper(env, 1024, backend, seed=2)
    w.reset_all_envs()
    rng, traded = np.random.default_rng(0), 0
    for _ in range(100):
        masks = w.action_masks("a").cpu().numpy()
        pick = (rng.random(masks.shape) * masks).argmax(-1).astype(np.int32)
        w.step_all_envs({"a": pick, "p": np.zeros((1024, 1), np.int32)})
        traded += int(w.pull("n_trades").sum())
    total = w.pull("inventory") + w.pull("escrow")
    np.testing.assert_allclose(total.sum(axis=1), np.broadcast_to(env.start_goods.sum(axis=0),
                               (1024, 3)), rtol=0, atol=1e-9)  # fmt: skip
    assert traded > 1024


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_bids_and_asks_on_every_commodity_at_once_match_the_reference(backend):
    torch = require_gpu()
    params = dataclasses.replace(PAPER_MARKET, order_duration=6)
    env = GatherTradeBuildMarketGpu(params, episode_length=1000)
    ref, dev = (EnvWrapper(env, 256, b, seed=4) for b in ("numpy", backend))
    names = [f.name for f in env.state_spec() if f.per_env]
    rng, shape = np.random.default_rng(3), (256, params.n_agents, params.n_commodities)
    for w in (ref, dev):
        w.reset_all_envs()
    for step in range(40):
        orders = [np.where(rng.random(shape) < 0.5, rng.integers(1, params.n_prices + 1, shape), 0)
                  .astype(np.int32) for _ in range(2)]  # fmt: skip
        for w in (ref, dev):
            for name, value in zip(("market_bids", "market_asks"), orders):
                tensor = w.backend.tensor(name)
                tensor[:] = torch.from_numpy(value).to(tensor.device)
        ref.backend.env.reference_orders_step(ref.backend.arrays)
        dev.backend.launch("gtb_market_orders_step")
        diff = compare_fields(names, ref, dev, 0.0, 0.0, env.parity_tolerances())
        assert diff is None, f"step {step + 1}: {diff}"

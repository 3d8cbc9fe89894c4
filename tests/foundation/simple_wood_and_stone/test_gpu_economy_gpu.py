"""The full gather-trade-build GPU economy (Build, ContinuousDoubleAuction, Gather,
PeriodicBracketTax) on a GPU: pycuda and Numba against the numpy reference at a few hundred
envs (run on the device machine: ``python -m pytest -m gpu``)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from gpu_helpers import GPU_BACKENDS, require_gpu

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import state as gs
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.economy_env import (
    PHASE1_CONFIG,
    PHASE2_CONFIG,
    GatherTradeBuildEconomyGpu,
)
from ai_economist.warp_drive.checks.parity import check_parity
from ai_economist.warp_drive.env_wrapper import EnvWrapper

require_gpu()
pytestmark = pytest.mark.gpu


def economy(base, tax=None, market=None, **overrides):
    """A copy of a published config with its tax's and market's settings updated."""
    config = copy.deepcopy(base)
    config.update(overrides)
    for comp in config["components"]:
        ((name, kwargs),) = comp.items()
        kwargs.update({"PeriodicBracketTax": tax, "ContinuousDoubleAuction": market}.get(name)
                      or {})  # fmt: skip
    return config


def trading_and_taxing(move_start, seed=0):
    """An ``actions(step, masks)``: an allowed order 60% of the time, else any allowed
    action; the planner's agents a random allowed pick."""
    rng = np.random.default_rng(seed)

    def actions(step, masks):
        m, pm = masks["a"], masks["p"]
        market = m.copy()
        market[..., :2] = 0
        market[..., move_start:] = 0
        use = market.any(-1, keepdims=True) & (rng.random(m.shape[:2] + (1,)) < 0.6)
        pick = (rng.random(m.shape) * np.where(use, market, m)).argmax(-1)
        return {"a": pick.astype(np.int32),
                "p": (rng.random(pm.shape) * pm).argmax(-1).astype(np.int32)}  # fmt: skip

    return actions


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_phase2_matches_the_reference(backend):
    # the paper's phase 2 with 10-step tax periods and 40-step episodes (device resets)
    env = GatherTradeBuildEconomyGpu(economy(PHASE2_CONFIG, {"period": 10}, episode_length=40,
                                             starting_agent_coin=20))  # fmt: skip
    result = check_parity(env, backend, num_envs=256, num_steps=120, seed=11,
                          actions=trading_and_taxing(gs.move_start(env.market), 1))  # fmt: skip
    assert result, result.message


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_phase1_matches_the_reference(backend):
    env = GatherTradeBuildEconomyGpu(economy(PHASE1_CONFIG, {"period": 7}, episode_length=30,
                                             starting_agent_coin=10))  # fmt: skip
    result = check_parity(env, backend, num_envs=320, num_steps=80, seed=3,
                          actions=trading_and_taxing(gs.move_start(env.market), 2))  # fmt: skip
    assert result, result.message


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_saez_reaches_its_formula_and_matches_the_reference(backend):
    # 5 agents taxed every step: the 500-sample buffer fills at step 100, the formula follows
    config = economy(PHASE2_CONFIG, {"period": 1, "tax_model": "saez"}, {"order_duration": 5},
                     n_agents=5, fixed_four_skill_and_loc=False, episode_length=60,
                     starting_agent_coin=15)  # fmt: skip
    env = GatherTradeBuildEconomyGpu(config)
    result = check_parity(env, backend, num_envs=256, num_steps=130, seed=7,
                          actions=trading_and_taxing(gs.move_start(env.market), 3))  # fmt: skip
    assert result, result.message


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_the_device_economy_taxes_and_trades(backend):
    env = GatherTradeBuildEconomyGpu(economy(PHASE2_CONFIG, {"period": 5}, episode_length=50,
                                             starting_agent_coin=20))  # fmt: skip
    w = EnvWrapper(env, 384, backend, seed=2)
    w.reset_all_envs()
    act, traded = trading_and_taxing(gs.move_start(env.market), 4), 0
    for step in range(49):
        masks = {tag: w.action_masks(tag).cpu().numpy() for tag in ("a", "p")}
        w.step_all_envs(act(step, masks))
        traded += int(w.pull("n_trades").sum())
    assert traded > 384 and (w.pull("total_collected") > 0).mean() > 0.5
    assert np.isfinite(w.pull("rewards_p")).all() and (w.pull("inventory") >= 0).all()
    rewards = w.pull("rewards_p")
    assert (rewards == rewards[:, :1]).all()  # every bracket agent gets the planner's reward

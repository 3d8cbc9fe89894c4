"""The Numba kernels of the GPU economy (Build, ContinuousDoubleAuction, Gather,
PeriodicBracketTax) against the numpy reference, under Numba's CUDA simulator (2 envs, a
few steps through tax days, an episode end and the device reset)."""

from __future__ import annotations

import numpy as np
import pytest
from test_gpu_market_world_numba import market_config, market_heavy_actions

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import state as gs
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.economy_env import (
    PHASE1_CONFIG,
    GatherTradeBuildEconomyGpu,
)
from ai_economist.warp_drive.checks.parity import check_parity, compare_fields
from ai_economist.warp_drive.env_wrapper import EnvWrapper
from ai_economist.warp_drive.errors import cudasim_enabled

pytestmark = pytest.mark.skipif(not cudasim_enabled(), reason="set NUMBA_ENABLE_CUDASIM=1")


def economy_config(tmp_path, tax_model="model_wrapper", **overrides):
    """The small test world with the market and a 2-step tax period (brackets scaled to the
    small world's incomes, no annealing)."""
    config = market_config(tmp_path, **overrides)
    config["components"].append({"PeriodicBracketTax": {
        "disable_taxes": False, "tax_model": tax_model, "period": 2, "usd_scaling": 1000,
        "bracket_spacing": "us-federal", "rate_disc": 0.25, "tax_annealing_schedule": None}})  # fmt: skip
    return config


def run(env, steps, seed=2):
    """Step the numpy and the Numba backends on the same actions; compare every per-env
    field after every step and every reset; return the reference."""
    ref, dev = (EnvWrapper(env, 2, b, seed=seed) for b in ("numpy", "numba"))
    names = [f.name for f in env.state_spec() if f.per_env]
    tols, rng = env.parity_tolerances(), np.random.default_rng(3)
    for w in (ref, dev):
        w.reset_all_envs()
        w.backend.tensor("inventory")[..., 1:] = 2.0  # units to sell
    collected = 0.0
    for step in range(steps):
        masks, pm = ref.action_masks("a").numpy(), ref.action_masks("p").numpy()
        chosen = {"a": market_heavy_actions(masks, rng, gs.move_start(env.market)),
                  "p": (rng.random(pm.shape) * pm).argmax(-1).astype(np.int32)}  # fmt: skip
        for w in (ref, dev):
            w.step_all_envs(chosen)
        diff = compare_fields(names, ref, dev, 1e-5, 1e-6, tols)
        assert diff is None, f"step {step + 1}: {diff}"
        collected = max(collected, float(ref.pull("total_collected").max()))
        for w in (ref, dev):
            w.reset_only_done_envs()
        diff = compare_fields(names, ref, dev, 1e-5, 1e-6, tols)
        assert diff is None, f"reset after step {step + 1}: {diff}"
    return ref, collected


def test_numba_economy_matches_the_reference_with_the_planners_rates(tmp_path):
    env = GatherTradeBuildEconomyGpu(economy_config(tmp_path, episode_length=4),
                                     threads_per_env=10)  # fmt: skip
    assert env.n_planner == 7 and env.num_agents == 10
    ref, collected = run(env, 5)
    assert collected > 0 and (ref.pull("completions") == 1).all()


def test_numba_economy_matches_the_reference_with_saez(tmp_path):
    env = GatherTradeBuildEconomyGpu(economy_config(tmp_path, "saez", episode_length=4),
                                     threads_per_env=7)  # fmt: skip
    ref, collected = run(env, 5)
    assert collected > 0 and (ref.pull("saez_count") > 0).all()


def test_numba_economy_matches_the_reference_on_phase1():
    # the paper's phase-1 economy (3x3 windows keep the simulator quick)
    config = {**PHASE1_CONFIG, "episode_length": 3, "mobile_agent_observation_range": 1,
              "starting_agent_coin": 10}  # fmt: skip
    env = GatherTradeBuildEconomyGpu(config, threads_per_env=7)
    result = check_parity(env, "numba", num_envs=2, num_steps=4, seed=8)
    assert result, result.message

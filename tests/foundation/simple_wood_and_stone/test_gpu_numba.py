"""The Numba kernels of the gather-trade-build GPU world against the numpy reference, under
Numba's CUDA simulator (2 envs, a few steps: each simulated launch costs about 0.1 s)."""

from __future__ import annotations

import numpy as np
import pytest
from gtb_gpu_helpers import crowded_config, small_config

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.env import (
    WORLD_CONFIG,
    GatherTradeBuildWorldGpu,
)
from ai_economist.warp_drive.checks.parity import check_parity, compare_fields
from ai_economist.warp_drive.env_wrapper import EnvWrapper
from ai_economist.warp_drive.errors import cudasim_enabled

pytestmark = pytest.mark.skipif(not cudasim_enabled(), reason="set NUMBA_ENABLE_CUDASIM=1")


def build_heavy_actions(step, masks):
    """Build whenever allowed, else the first allowed move (cycling), else NO-OP."""
    m = masks["a"]
    pick = np.where(m[..., 1] > 0, 1, 2 + (step + np.arange(m.shape[1])) % 4)
    allowed = np.take_along_axis(m, pick[..., None], axis=-1)[..., 0] > 0
    return {
        "a": np.where(allowed, pick, 0).astype(np.int32),
        "p": np.zeros((m.shape[0], 1), np.int32),
    }


def test_numba_matches_the_reference_through_an_episode_end(tmp_path):
    # 4-step episodes: the step that ends an episode, the device reset and the next episode
    env = GatherTradeBuildWorldGpu(small_config(tmp_path, episode_length=4), threads_per_env=4)
    result = check_parity(env, "numba", num_envs=2, num_steps=6, seed=3)
    assert result, result.message


def test_numba_matches_the_reference_with_builds_gathers_and_regrowth(tmp_path):
    config = small_config(tmp_path, episode_length=50, resource_regen_prob=0.9)
    env = GatherTradeBuildWorldGpu(config, threads_per_env=3)
    ref, dev = (EnvWrapper(env, 2, b, seed=1) for b in ("numpy", "numba"))
    names = [f.name for f in env.state_spec() if f.per_env]
    tols = env.parity_tolerances()
    for w in (ref, dev):
        w.reset_all_envs()
        w.backend.tensor("inventory")[..., 1:] = 2.0  # stone and wood to build with
    for step in range(4):
        chosen = build_heavy_actions(step, {"a": ref.action_masks("a").numpy()})
        if step == 0:
            chosen["a"][:] = 1  # build wherever the cell allows (the kernel checks)
        for w in (ref, dev):
            w.step_all_envs(chosen)
        diff = compare_fields(names, ref, dev, 1e-5, 1e-6, tols)
        assert diff is None, f"step {step + 1}: {diff}"
    assert (ref.pull("house_owner") >= 0).any()  # somebody built
    assert (ref.pull("labor") > 0).all()


def test_numba_matches_the_reference_when_agents_contend_for_cells(tmp_path):
    # 7 agents on 25 land cells: moves blocked by agents that moved earlier in the order
    env = GatherTradeBuildWorldGpu(crowded_config(tmp_path), threads_per_env=8)
    result = check_parity(env, "numba", num_envs=2, num_steps=4, seed=6)
    assert result, result.message


def test_numba_matches_the_reference_on_the_paper_world():
    # fixed four skills and corners (the device ranking) on the 25x25 quadrant map; 3x3
    # windows keep the simulator quick (the reference tests cover the 11x11 ones)
    config = {**WORLD_CONFIG, "episode_length": 2, "mobile_agent_observation_range": 1}
    env = GatherTradeBuildWorldGpu(config, threads_per_env=5)
    result = check_parity(env, "numba", num_envs=2, num_steps=3, seed=8)
    assert result, result.message


def test_numba_reset_redraws_like_the_reference(tmp_path):
    env = GatherTradeBuildWorldGpu(small_config(tmp_path, episode_length=2), threads_per_env=3)
    ref, dev = (EnvWrapper(env, 2, b, seed=7) for b in ("numpy", "numba"))
    for w in (ref, dev):
        w.reset_all_envs()
        for _ in range(2):
            w.step_all_envs({"a": np.zeros((2, 2), np.int32), "p": np.zeros((2, 1), np.int32)})
        w.reset_only_done_envs()
    assert (dev.pull("completions") == 1).all()
    for name in ("locs", "build_payment", "bonus_gather_prob", "observations_a"):
        np.testing.assert_allclose(dev.pull(name), ref.pull(name), rtol=1e-12, err_msg=name)

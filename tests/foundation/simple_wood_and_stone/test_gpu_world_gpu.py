"""The gather-trade-build GPU world on a GPU: pycuda and Numba against the numpy reference at
larger sizes (run on the device machine: ``python -m pytest -m gpu``)."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_helpers import GPU_BACKENDS, require_gpu
from gtb_gpu_helpers import crowded_config, small_config

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.env import (
    WORLD_CONFIG,
    GatherTradeBuildWorldGpu,
)
from ai_economist.warp_drive.checks.parity import check_parity
from ai_economist.warp_drive.env_wrapper import EnvWrapper

require_gpu()
pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_paper_world_matches_the_reference(backend):
    env = GatherTradeBuildWorldGpu()
    result = check_parity(env, backend, num_envs=64, num_steps=60, seed=11)
    assert result, result.message


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_random_starts_and_device_resets_match_the_reference(backend, tmp_path):
    # 5 agents placed at random, 25-step episodes: resets redraw on the device every 25 steps
    config = {**WORLD_CONFIG, "fixed_four_skill_and_loc": False, "n_agents": 5,
              "episode_length": 25, "resource_regen_prob": 0.2}  # fmt: skip
    result = check_parity(GatherTradeBuildWorldGpu(config), backend, num_envs=256,
                          num_steps=60, seed=5)  # fmt: skip
    assert result, result.message


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_crowded_moves_match_the_reference(backend, tmp_path):
    # 7 agents on 25 land cells: the device's move order decides contested cells
    env = GatherTradeBuildWorldGpu(crowded_config(tmp_path, episode_length=40))
    result = check_parity(env, backend, num_envs=512, num_steps=100, seed=3)
    assert result, result.message


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_builds_on_the_device_match_the_reference(backend, tmp_path):
    env = GatherTradeBuildWorldGpu(small_config(tmp_path, resource_regen_prob=0.5))
    result = check_parity(env, backend, num_envs=512, num_steps=120, seed=2)
    assert result, result.message
    w = EnvWrapper(env, 512, backend, seed=2)
    w.reset_all_envs()
    rng = np.random.default_rng(0)
    for _ in range(59):
        masks = w.action_masks("a").cpu().numpy()
        pick = np.where(masks[..., 1] > 0, 1, (rng.random(masks.shape) * masks).argmax(-1))
        w.step_all_envs({"a": pick.astype(np.int32), "p": np.zeros((512, 1), np.int32)})
    assert (w.pull("house_owner") >= 0).any()  # the device built houses
    assert np.isfinite(w.pull("rewards_a")).all()

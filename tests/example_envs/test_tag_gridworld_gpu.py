"""On a GPU, grid-world Tag's CUDA C (pycuda) and Numba steps equal the numpy reference.

Run on the device machine: ``python -m pytest -m gpu tests/example_envs/test_tag_gridworld_gpu.py``
(without ``NUMBA_ENABLE_CUDASIM``).  Includes the paper's 1,000 agents per env (one block of
1,000 threads) on a few envs.
"""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest
from tag_gridworld_support import host_state, reset_done_envs

from ai_economist.example_envs.tag_gridworld import TagGridWorld
from ai_economist.example_envs.tag_gridworld.env import NUM_ACTIONS, STEP_KERNEL

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        os.environ.get("NUMBA_ENABLE_CUDASIM") == "1",
        reason="real GPU kernels: unset NUMBA_ENABLE_CUDASIM",
    ),
]

CASES = [
    pytest.param(dict(num_taggers=3, grid_length=2, episode_length=5), 4, id="small-full"),
    pytest.param(dict(num_taggers=3, grid_length=2, episode_length=5, use_full_observation=False),
                 4, id="small-partial"),
    pytest.param(dict(num_taggers=199, grid_length=20, episode_length=8), 16, id="200-full"),
    pytest.param(dict(num_taggers=999, grid_length=30, episode_length=8,
                      use_full_observation=False), 64, id="1000-partial"),
]  # fmt: skip


def numba_stepper(env: TagGridWorld, state: dict, num_envs: int):
    from numba import cuda

    kernel = getattr(importlib.import_module(env.kernels().numba_module), STEP_KERNEL)
    names = [f.name for f in env.state_spec().kernel_fields()]
    device = {n: cuda.to_device(state[n]) for n in names if state[n].ndim}

    def step(host: dict) -> None:
        for n in device:
            device[n].copy_to_device(host[n])
        args = [device[n] if n in device else host[n][()] for n in names]
        kernel[num_envs, env.num_agents](*args)
        cuda.synchronize()
        for n in device:
            host[n][...] = device[n].copy_to_host()

    return step


def pycuda_stepper(env: TagGridWorld, state: dict, num_envs: int):
    import torch

    from ai_economist.warp_drive.function_manager import CUDAFunctionManager

    manager = CUDAFunctionManager(env.num_agents, num_envs)
    manager.compile_and_load_cuda(env.kernels().cuda_source)
    names = [f.name for f in env.state_spec().kernel_fields()]
    tensors = {n: torch.from_numpy(state[n].copy()).cuda() for n in names if state[n].ndim}

    def step(host: dict) -> None:
        for n in tensors:
            tensors[n].copy_(torch.from_numpy(host[n]))
        manager.launch(STEP_KERNEL, *[tensors[n] if n in tensors else host[n][()] for n in names])
        torch.cuda.synchronize()
        for n in tensors:
            host[n][...] = tensors[n].cpu().numpy()

    return step


@pytest.mark.parametrize("backend", ["pycuda", "numba"])
@pytest.mark.parametrize("kwargs, num_envs", CASES)
def test_gpu_step_matches_reference(backend, kwargs, num_envs):
    env = TagGridWorld(seed=0, **kwargs)
    ref = host_state(env, num_envs)
    dev = {k: v.copy() for k, v in ref.items()}
    initial = {k: v.copy() for k, v in ref.items()}
    step = (pycuda_stepper if backend == "pycuda" else numba_stepper)(env, dev, num_envs)
    rng = np.random.default_rng(1)
    for t in range(10):
        actions = rng.integers(0, NUM_ACTIONS, (num_envs, env.num_agents), dtype=np.int32)
        ref["sampled_actions_shared"][:] = actions
        dev["sampled_actions_shared"][:] = actions
        env.reference_step(ref)
        step(dev)
        for name in ref:
            np.testing.assert_array_equal(dev[name], ref[name], err_msg=f"{name} at step {t}")
        reset_done_envs(env, ref, initial)
        reset_done_envs(env, dev, initial)
    assert ref["episodes_completed"].sum() > 0

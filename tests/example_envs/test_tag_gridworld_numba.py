"""The Numba step of grid-world Tag equals the numpy reference bit for bit (Numba's simulator).

Runs under ``NUMBA_ENABLE_CUDASIM=1`` (``make test`` sets it); on a GPU the same check runs in
``test_tag_gridworld_gpu.py``.
"""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest
from tag_gridworld_support import host_state, kernel_arrays, reset_done_envs

from ai_economist.example_envs.tag_gridworld import TagGridWorld
from ai_economist.example_envs.tag_gridworld.env import NUM_ACTIONS, STEP_KERNEL

pytestmark = pytest.mark.skipif(
    os.environ.get("NUMBA_ENABLE_CUDASIM") != "1", reason="needs NUMBA_ENABLE_CUDASIM=1"
)


def run_both(env: TagGridWorld, num_envs: int, steps: int, threads: int, seed: int = 0):
    """Step the reference and the kernel side by side (resetting done envs as the wrapper
    does); return the per-step done counts and tags of the reference."""
    kernel = getattr(importlib.import_module(env.kernels().numba_module), STEP_KERNEL)
    ref, dev = host_state(env, num_envs, seed), host_state(env, num_envs, seed)
    initial = {k: v.copy() for k, v in ref.items()}
    rng = np.random.default_rng(seed)
    tags = 0
    for t in range(steps):
        actions = rng.integers(0, NUM_ACTIONS, (num_envs, env.num_agents), dtype=np.int32)
        ref["sampled_actions_shared"][:] = actions
        dev["sampled_actions_shared"][:] = actions
        env.reference_step(ref)
        kernel[num_envs, threads](*kernel_arrays(env, dev))
        for name in ref:
            np.testing.assert_array_equal(dev[name], ref[name], err_msg=f"{name} at step {t}")
        tags += int(ref["last_episode_tagged"].sum())
        reset_done_envs(env, ref, initial)
        reset_done_envs(env, dev, initial)
    return ref, tags


@pytest.mark.parametrize("full", [True, False], ids=["full", "partial"])
def test_numba_step_matches_reference(full):
    env = TagGridWorld(num_taggers=3, grid_length=2, episode_length=4, use_full_observation=full)
    ref, tags = run_both(env, num_envs=2, steps=6, threads=env.num_agents)
    assert ref["episodes_completed"].sum() >= 2 and tags > 0  # tags and episode ends were covered


@pytest.mark.parametrize("threads", [2, 8], ids=["2-threads-step-5-agents", "8-threads"])
@pytest.mark.parametrize("full", [True, False], ids=["full", "partial"])
def test_fewer_or_more_threads_than_agents(threads, full):
    env = TagGridWorld(num_taggers=4, grid_length=2, episode_length=3, use_full_observation=full)
    ref, tags = run_both(env, num_envs=2, steps=4, threads=threads, seed=1)
    assert tags > 0


def test_runner_breaks_distance_ties_by_the_lowest_tagger_index():
    kernel = getattr(importlib.import_module(TagGridWorld().kernels().numba_module), STEP_KERNEL)
    env = TagGridWorld(num_taggers=4, grid_length=4, use_full_observation=False,
                       starting_location_x=[4, 2, 1, 1, 1], starting_location_y=[4, 1, 2, 0, 1])  # fmt: skip
    ref, dev = host_state(env, 1), host_state(env, 1)
    env.reference_step(ref)  # everyone stays: taggers 1, 2 and 3 at distance 1
    kernel[1, env.num_agents](*kernel_arrays(env, dev))
    np.testing.assert_array_equal(ref["observations_shared"][0, 4, 2:4], [0.5, 0.25])  # tagger 1
    np.testing.assert_array_equal(dev["observations_shared"], ref["observations_shared"])

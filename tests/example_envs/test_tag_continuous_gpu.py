"""Continuous Tag's CUDA C (pycuda) and Numba kernels on a real GPU against the numpy reference.

Run on the device machine with ``pytest -m gpu tests/example_envs``.
"""

from __future__ import annotations

import numpy as np
import pytest
from gpu_helpers import require_gpu

pytestmark = pytest.mark.gpu

torch = require_gpu()

from ai_economist.example_envs.tag_continuous import TagContinuous  # noqa: E402
from ai_economist.warp_drive.checks.parity import check_parity  # noqa: E402
from ai_economist.warp_drive.env_wrapper import EnvWrapper  # noqa: E402

SMALL = dict(
    num_taggers=2, num_runners=6, grid_length=3.0, episode_length=12, tagging_distance=0.1,
    max_acceleration=0.2, min_acceleration=-0.2, num_acceleration_levels=4, num_turn_levels=4,
    edge_hit_penalty=-0.5, use_full_observation=False, num_other_agents_observed=3,
)  # fmt: skip


@pytest.mark.parametrize("backend", ["pycuda", "numba"])
@pytest.mark.parametrize("own", [False, True], ids=["plain", "own-state+egocentric"])
@pytest.mark.parametrize("full", [False, True], ids=["nearest-3", "full"])
def test_kernels_match_the_reference_with_resets(backend, full, own):
    env = TagContinuous(**{**SMALL, "use_full_observation": full, "observe_own_state": own,
                           "egocentric_observation": own})  # fmt: skip
    result = check_parity(env, backend, num_envs=8, num_steps=30, seed=1)
    assert result, result.message


@pytest.mark.parametrize("backend", ["pycuda", "numba"])
@pytest.mark.parametrize("k", [4, 7, 10, 12, 13], ids=lambda k: f"nearest-{k}")
def test_nearest_lists_of_every_size_match_the_reference(backend, k):
    # k <= 12: the register lists (sizes 4, 8, 10, 12); 13: the local-memory list
    env = TagContinuous(**{**SMALL, "num_runners": 18, "num_other_agents_observed": k})
    result = check_parity(env, backend, num_envs=8, num_steps=30, seed=k)
    assert result, result.message


@pytest.mark.parametrize("backend", ["pycuda", "numba"])
def test_lists_too_large_to_stage_match_the_reference(backend):
    # 120 agents x 64 slots > TAG_STAGED_NEIGHBORS: every thread writes its own row
    env = TagContinuous(**{**SMALL, "num_runners": 118, "num_other_agents_observed": 64})
    result = check_parity(env, backend, num_envs=4, num_steps=12, seed=5)
    assert result, result.message


def test_pycuda_is_bit_exact_at_the_published_observation_size():
    env = TagContinuous(**{**SMALL, "num_turn_levels": 0, "num_runners": 30,
                           "num_other_agents_observed": 10},
                        starting_directions=[0.0] * 32)  # fmt: skip
    result = check_parity(env, "pycuda", num_envs=16, num_steps=40, seed=3, rtol=0.0, atol=0.0)
    assert result, result.message


def test_pycuda_is_bit_exact_with_own_state_and_heading_frame_when_trigonometry_is_exact():
    env = TagContinuous(**{**SMALL, "num_turn_levels": 0, "num_runners": 30,
                           "num_other_agents_observed": 10, "observe_own_state": True,
                           "egocentric_observation": True},
                        starting_directions=[0.0] * 32)  # fmt: skip
    result = check_parity(env, "pycuda", num_envs=16, num_steps=40, seed=4, rtol=0.0, atol=0.0)
    assert result, result.message


def test_pycuda_is_bit_exact_when_trigonometry_is_exact():
    # headings stay 0 (no turn levels): cos = 1 and sin = 0 exactly, everything else is IEEE
    env = TagContinuous(**{**SMALL, "num_turn_levels": 0, "num_runners": 14},
                        starting_directions=[0.0] * 16)  # fmt: skip
    result = check_parity(env, "pycuda", num_envs=16, num_steps=40, seed=2, rtol=0.0, atol=0.0)
    assert result, result.message


@pytest.mark.parametrize("backend", ["pycuda", "numba"])
def test_split_search_at_the_published_size_matches_the_reference(backend):
    # 110 agents observing their nearest 10: 4 threads an agent share the search (440 threads);
    # headings stay 0 (no turn levels), so positions are exact and near ties cannot flip
    env = TagContinuous(**{**SMALL, "num_taggers": 10, "num_runners": 100, "grid_length": 20.0,
                           "num_turn_levels": 0, "num_other_agents_observed": 10,
                           "tagging_distance": 0.02},
                        starting_directions=[0.0] * 110)  # fmt: skip
    assert env.threads_per_env == 440
    exact = {"rtol": 0.0, "atol": 0.0} if backend == "pycuda" else {}
    result = check_parity(env, backend, num_envs=8, num_steps=12, seed=6, **exact)
    assert result, result.message


@pytest.mark.parametrize("backend", ["pycuda", "numba"])
def test_published_size_steps_a_whole_episode(backend):
    env = TagContinuous(num_taggers=10, num_runners=100, grid_length=20.0, episode_length=500,
                        max_acceleration=0.1, min_acceleration=-0.1, max_turn=2.356,
                        min_turn=-2.356, num_acceleration_levels=20, num_turn_levels=20,
                        use_full_observation=False, num_other_agents_observed=10,
                        tag_reward_for_tagger=10.0, tag_penalty_for_runner=-10.0,
                        tagging_distance=0.02)  # fmt: skip
    wrapper = EnvWrapper(env, num_envs=100, env_backend=backend, device="cuda", seed=0)
    wrapper.reset_all_envs()
    gen = torch.Generator(device="cuda").manual_seed(0)
    for _ in range(env.episode_length):
        for tag in ("tagger", "runner"):
            acts = wrapper.actions(tag)
            acts.copy_(torch.randint(0, env.num_actions, acts.shape, generator=gen, device="cuda"))
        wrapper.step_all_envs()
    torch.cuda.synchronize()
    assert wrapper.done().all()
    x = wrapper.pull("loc_x")
    assert ((x >= 0) & (x <= 20.0)).all()
    metrics = wrapper.episode_metrics()
    assert 0 < metrics["tags per episode"] <= 100
    obs = wrapper.pull("observations_runner")
    assert np.isfinite(obs).all()

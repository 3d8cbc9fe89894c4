"""Continuous Tag's kernels: Numba (CUDA simulator) against the numpy reference, CUDA C with nvcc.

GPU runs of both kernels are in ``test_tag_continuous_gpu.py`` (marked ``gpu``).
"""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest
from tag_continuous_helpers import host_state, numba_step, set_actions

from ai_economist.example_envs.tag_continuous import TagContinuous, dynamics
from ai_economist.example_envs.tag_continuous.env import MAX_OBSERVED, STEP_KERNEL
from ai_economist.warp_drive import codegen
from ai_economist.warp_drive.backends.gpu import header_for
from ai_economist.warp_drive.checks.declaration import check_cuda_kernels
from ai_economist.warp_drive.errors import cudasim_enabled
from ai_economist.warp_drive.state import parse_kernel_parameters

SMALL = dict(
    num_taggers=2, num_runners=4, grid_length=2.0, episode_length=5, tagging_distance=0.2,
    max_acceleration=0.3, min_acceleration=-0.3, num_acceleration_levels=3, num_turn_levels=4,
    edge_hit_penalty=-0.5, step_penalty_for_tagger=-0.1, step_reward_for_runner=0.1,
)  # fmt: skip
CUDA_SOURCE = TagContinuous().kernels().cuda_source

needs_sim = pytest.mark.skipif(not cudasim_enabled(), reason="needs NUMBA_ENABLE_CUDASIM=1")


@needs_sim
@pytest.mark.parametrize(
    "kwargs",
    [
        {"use_full_observation": False, "num_other_agents_observed": 3},
        {"use_full_observation": True, "runner_exits_game_after_tagged": False},
        {
            "use_full_observation": False,
            "num_other_agents_observed": 3,
            "observe_own_state": True,
            "egocentric_observation": True,
        },
        {"use_full_observation": True, "observe_own_state": True, "egocentric_observation": True},
    ],
    ids=["nearest-3", "full-observation+runners-stay", "nearest-3+own+ego", "full+own+ego"],
)
def test_numba_matches_the_reference_step_by_step(kwargs):
    env = TagContinuous(**SMALL, **kwargs)
    ref, sim = host_state(env, 2, seed=3), host_state(env, 2, seed=3)
    rng = np.random.default_rng(0)
    tags = 0
    for _ in range(env.episode_length):
        actions = rng.integers(0, env.num_actions, (2, env.num_agents))
        set_actions(ref, actions, env.num_taggers)
        set_actions(sim, actions, env.num_taggers)
        env.reference_step(ref)
        numba_step(env, sim, 2)
        for name, value in ref.items():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                np.testing.assert_allclose(sim[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
            else:
                np.testing.assert_array_equal(sim[name], value, err_msg=name)
        tags = int(ref["episode_tags"].sum())
    assert tags > 0  # the comparison covered tags
    assert ref["_done_"].all()


@needs_sim
@pytest.mark.parametrize("staged", [True, False], ids=["block-writes", "thread-writes"])
@pytest.mark.parametrize("k", [4, 7, 10, 12, 13], ids=lambda k: f"nearest-{k}")
def test_numba_nearest_lists_of_every_size_match_the_reference_with_ties(k, staged, monkeypatch):
    # k <= 4, 8, 10, 12 use the fixed-size (register) lists, 13 the local-memory list; agents
    # start on a coarse lattice (many equal distances) and do not move in the first step;
    # without room to stage the lists (STAGED_NEIGHBORS = 0) every thread writes its own row
    from ai_economist.example_envs.tag_continuous import tag_continuous_numba

    if not staged:  # the simulator reads the module global at run time
        monkeypatch.setattr(tag_continuous_numba, "STAGED_NEIGHBORS", 0)
    n = 15
    lattice = np.arange(n, dtype=np.float32) % 3
    env = TagContinuous(**{**SMALL, "num_taggers": 3, "num_runners": n - 3, "grid_length": 3.0,
                           "episode_length": 3}, starting_location_x=lattice.tolist(),
                        starting_location_y=(lattice[::-1] % 2).tolist(),
                        use_full_observation=False, num_other_agents_observed=k,
                        runner_exits_game_after_tagged=False)  # fmt: skip
    ref, sim = host_state(env, 2, seed=1), host_state(env, 2, seed=1)
    rng = np.random.default_rng(k)
    for step in range(2):
        actions = rng.integers(0, env.num_actions, (2, env.num_agents)) * (step > 0)
        set_actions(ref, actions, env.num_taggers)
        set_actions(sim, actions, env.num_taggers)
        env.reference_step(ref)
        numba_step(env, sim, 2)
        for name in ("observations_tagger", "observations_runner", "tagged_by", "rewards_runner"):
            np.testing.assert_allclose(sim[name], ref[name], rtol=1e-6, atol=0, err_msg=name)
    assert (ref["observations_runner"][:, :, 6 * k : 7 * k] == 1).all()  # every slot filled
    assert (ref["tagged_by"] >= 0).any()


@needs_sim
@pytest.mark.parametrize("split", [1, 2, 3, 4, 8])
def test_numba_split_nearest_search_matches_the_reference_with_ties(split):
    # `split` threads an agent scan chunks of the candidates and merge their lists; agents on a
    # coarse lattice (many equal distances: ties must stay in id order), some out of the game
    from ai_economist.example_envs.tag_continuous import tag_continuous_numba

    n, k = 11, 4
    lattice = np.arange(n, dtype=np.float32) % 3
    env = TagContinuous(**{**SMALL, "num_taggers": 2, "num_runners": n - 2, "grid_length": 3.0,
                           "episode_length": 3, "tagging_distance": 0.3},
                        starting_location_x=lattice.tolist(),
                        starting_location_y=(lattice[::-1] % 2).tolist(),
                        use_full_observation=False, num_other_agents_observed=k)  # fmt: skip
    ref, sim = host_state(env, 2, seed=1), host_state(env, 2, seed=1)
    for state in (ref, sim):
        state["still_in_the_game"][:, [3, 7]] = 0
        state["runners_left"][:] = n - 2 - 2
    assert split * n * k <= tag_continuous_numba.STAGED_NEIGHBORS
    rng = np.random.default_rng(split)
    for step in range(2):
        actions = rng.integers(0, env.num_actions, (2, env.num_agents)) * (step > 0)
        set_actions(ref, actions, env.num_taggers)
        set_actions(sim, actions, env.num_taggers)
        env.reference_step(ref)
        numba_step(env, sim, 2, threads=split * n)
        for name in ("observations_tagger", "observations_runner", "tagged_by", "rewards_tagger"):
            np.testing.assert_allclose(sim[name], ref[name], rtol=1e-6, atol=0, err_msg=name)


def test_threads_per_env_share_the_nearest_search_when_it_fits():
    from ai_economist.example_envs.tag_continuous.arguments import search_threads_per_agent

    published = TagContinuous(num_taggers=10, num_runners=100, use_full_observation=False,
                              num_other_agents_observed=10)  # fmt: skip
    assert published.threads_per_env == 4 * 110 == published.kernels().threads_per_env
    assert search_threads_per_agent(300, False, 10) == 2  # 4 x 300 threads > 1,024
    assert search_threads_per_agent(200, False, 12) == 2  # 4 x 200 x 12 ids > 7,168 staged
    assert search_threads_per_agent(110, True, 109) == 1  # full observation: no search
    assert search_threads_per_agent(110, False, 13) == 1  # longer than the register lists
    assert search_threads_per_agent(1000, False, 10) == 1


@needs_sim
def test_numba_parity_through_the_wrapper_with_resets():
    from ai_economist.warp_drive.checks.parity import check_parity

    env = TagContinuous(**{**SMALL, "episode_length": 3}, use_full_observation=False,
                        num_other_agents_observed=2)  # fmt: skip
    result = check_parity(env, "numba", num_envs=2, num_steps=5)
    assert result, result.message


def test_kernel_parameters_are_the_declaration():
    env = TagContinuous()
    spec = env.state_spec()
    source = CUDA_SOURCE.read_text()
    assert parse_kernel_parameters(source, STEP_KERNEL) == spec.c_declarations()


def test_device_functions_mirror_numpy_names():
    source = CUDA_SOURCE.read_text()
    # the kernel module and its device-function modules (per agent; observations)
    numba_source = "\n".join(
        path.read_text() for path in sorted(CUDA_SOURCE.parent.glob("tag_continuous_numba*.py"))
    )
    for name in ("move_agents", "nearest_neighbors", "observe", "tag_runners", "compute_rewards"):
        assert hasattr(dynamics, name), name
        assert re.search(rf"__device__[^;{{]*\b{name}\(", source), name
        assert re.search(rf"@cuda.jit\(device=True\)\ndef {name}\(", numba_source), name
    assert f"#define TAG_MAX_OBSERVED {MAX_OBSERVED}" in source


def test_cuda_step_compiles_for_sm90_without_spills(nvcc, tmp_path):
    env = TagContinuous(num_taggers=10, num_runners=100, use_full_observation=False,
                        num_other_agents_observed=10)  # fmt: skip
    spec = env.state_spec()
    include = codegen.write_header(env.name, header_for(env, spec), tmp_path / "include")
    check_cuda_kernels(env, spec, CUDA_SOURCE, include)
    cubin = tmp_path / "tag.cubin"
    cmd = [
        str(nvcc), "-cubin", "-arch=sm_90", "-o", str(cubin), str(CUDA_SOURCE), "-I",
        str(include), "-Werror", "all-warnings", "-Xptxas", "-v,-warn-spills",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert STEP_KERNEL.encode() in cubin.read_bytes()
    spills = re.findall(r"(\d+) bytes spill stores", proc.stderr)
    assert spills and all(int(s) == 0 for s in spills), proc.stderr

"""Grid-world Tag on the generic path: registries, EnvWrapper, the parity checker, training."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ai_economist.example_envs.tag_gridworld import TagGridWorld
from ai_economist.training import environments, training_script
from ai_economist.training.config import check_env_kwargs, default_config_path, load_run_config
from ai_economist.warp_drive.checks.parity import check_parity
from ai_economist.warp_drive.env_wrapper import EnvWrapper
from ai_economist.warp_drive.errors import cudasim_enabled
from ai_economist.warp_drive.registrar import default_registrar

needs_sim = pytest.mark.skipif(not cudasim_enabled(), reason="needs NUMBA_ENABLE_CUDASIM=1")


def test_registered_for_every_backend_and_for_training():
    for backend in ("numpy", "pycuda", "numba"):
        assert default_registrar.get("tag_gridworld", env_backend=backend) is TagGridWorld
    assert default_registrar.get_cuda_env_src_path("tag_gridworld", "numba").endswith(
        "tag_gridworld_numba"
    )
    assert environments.get_training_env("tag_gridworld").env_class() is TagGridWorld


def test_run_config_has_the_published_settings():
    config = load_run_config(default_config_path("tag_gridworld"))
    check_env_kwargs(config["env"], TagGridWorld, "tag_gridworld.yaml")
    env = TagGridWorld(**config["env"])
    assert (env.num_agents, env.grid_length, env.episode_length) == (5, 100, 100)
    assert (env.tag_penalty_for_runner, env.tag_reward_for_tagger) == (5.0, 10.0)
    assert config["trainer"]["num_envs"] == 2000 and config["trainer"]["train_batch_size"] == 200000
    policy = config["policy"]["shared"]
    assert (policy["algorithm"], policy["lr"], policy["gamma"]) == ("A2C", 0.001, 0.98)
    assert policy["model"]["fc_dims"] == [32, 32] and policy["entropy_coeff"] == 0.05
    assert set(config["policy"]) == set(env.policies())


def test_wrapper_steps_and_resets_each_env_to_its_own_start():
    env = TagGridWorld(num_taggers=2, grid_length=3, episode_length=1)
    wrapper = EnvWrapper.from_registry(
        "tag_gridworld", env.config(), num_envs=3, env_backend="numpy", seed=4
    )
    wrapper.reset_all_envs()
    start = {n: wrapper.pull(n) for n in ("loc_x", "loc_y", "observations_shared")}
    np.testing.assert_array_equal(start["loc_x"], env.initial_state(3, 4)["loc_x"])
    wrapper.step_all_envs({"shared": np.ones((3, 3), np.int64)})  # everyone +x
    assert not np.array_equal(wrapper.pull("loc_x"), start["loc_x"])
    assert (wrapper.pull("_done_") == 1).all()
    wrapper.reset_only_done_envs()
    for name, value in start.items():
        np.testing.assert_array_equal(wrapper.pull(name), value, err_msg=name)
    metrics = wrapper.episode_metrics()
    assert metrics["episodes completed"] == 3.0 and 0.0 <= metrics["tag rate"] <= 1.0


@needs_sim
@pytest.mark.parametrize("full", [True, False], ids=["full", "partial"])
def test_parity_checker_numba_simulator_bit_exact(full):
    env = TagGridWorld(num_taggers=3, grid_length=2, episode_length=4, use_full_observation=full)
    result = check_parity(env, "numba", num_envs=2, num_steps=8, seed=3, rtol=0.0, atol=0.0)
    assert result.ok, result.message


def test_more_than_1024_agents_run_in_one_block_of_1024_threads():
    env = TagGridWorld(num_taggers=1500, grid_length=50, use_full_observation=False)
    assert env.kernels().threads_per_env == 1024
    assert TagGridWorld(num_taggers=9).kernels().threads_per_env == 10
    wrapper = EnvWrapper(env, num_envs=2, env_backend="numpy")  # the declaration checks pass
    wrapper.reset_all_envs()
    wrapper.step_all_envs()
    assert wrapper.pull("observations_shared").shape == (2, 1501, 6)
    with pytest.raises(ValueError, match="threads_per_env=2000 exceeds the maximum 1024"):
        TagGridWorld(threads_per_env=2000)


@needs_sim
def test_parity_checker_with_two_threads_stepping_five_agents():
    env = TagGridWorld(num_taggers=4, grid_length=2, episode_length=4, use_full_observation=False,
                       threads_per_env=2)  # fmt: skip
    result = check_parity(env, "numba", num_envs=2, num_steps=6, seed=2, rtol=0.0, atol=0.0)
    assert result.ok, result.message


def test_trains_through_the_training_script_on_the_cpu(tmp_path):
    run_dir = tmp_path / "run"
    args = ["--env", "tag_gridworld", "--device", "cpu", "--results_dir", str(run_dir), "--quiet",
            "trainer.num_envs=4", "trainer.train_batch_size=40", "trainer.num_episodes=4",
            "env.episode_length=10", "env.grid_length=4", "saving.tensorboard=false",
            "saving.metrics_log_freq=1", "trainer.progress_bar=false"]  # fmt: skip
    assert training_script.main(args) == 0
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1]
    assert rows[0]["env_steps"] == 40 and rows[0]["env/episodes completed"] >= 4
    assert 0.0 <= rows[0]["env/tag rate"] <= 1.0
    assert np.isfinite(rows[0]["shared/loss"])

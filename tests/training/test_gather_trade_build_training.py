"""Gather-trade-build: the run configs are the published ones, and both phases train on the CPU."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from ai_economist.training import training_script
from ai_economist.training.config import packaged_config_path

pytest.importorskip("torch")

from ai_economist.foundation.scenarios.simple_wood_and_stone import configs  # noqa: E402
from ai_economist.foundation.scenarios.simple_wood_and_stone.batched import (  # noqa: E402
    GatherTradeBuildBatch,
)

TINY = ["trainer.num_envs=2", "trainer.train_batch_size=20", "trainer.num_episodes=4",
        "env.episode_length=10", "saving.tensorboard=false", "trainer.progress_bar=false",
        "saving.metrics_log_freq=1", "policy.a.model.fc_dims=[8]", "policy.p.model.fc_dims=[8]",
        "env.dense_log_frequency=null"]  # fmt: skip


@pytest.mark.parametrize(
    "phase, published",
    [("phase1", configs.PHASE1_ENV_CONFIG), ("phase2", configs.PHASE2_ENV_CONFIG)],
)
def test_run_config_env_blocks_are_the_published_configs(phase, published):
    config = yaml.safe_load((packaged_config_path(f"gather_trade_build_{phase}")).read_text())
    assert config["name"] == f"gather_trade_build_{phase}"
    assert config["env"] == configs.env_config(published)


@pytest.mark.filterwarnings("ignore:.*GatherTradeBuildBatch has no state_dict")
@pytest.mark.parametrize("phase", ["phase1", "phase2"])
def test_both_phases_train_a_few_iterations_on_the_cpu(tmp_path, phase):
    run_dir = tmp_path / phase
    args = [
        "--env",
        f"gather_trade_build_{phase}",
        "--device",
        "cpu",
        "--results_dir",
        str(run_dir),
    ]
    assert training_script.main([*args, "--quiet", *TINY]) == 0
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2]
    assert "env/social/productivity" in rows[-1] and np.isfinite(rows[-1]["a/loss"])
    assert ("p/loss" in rows[-1]) == (phase == "phase2")


def test_the_phase2_planner_is_one_policy_agent_per_tax_bracket():
    config = configs.env_config(configs.PHASE2_ENV_CONFIG)
    config.update(episode_length=3, dense_log_frequency=None)
    batch = GatherTradeBuildBatch(config, num_envs=2, seed=0)
    specs = batch.policy_specs
    assert (specs["a"].num_agents, specs["a"].num_actions) == (4, 50)
    assert specs["a"].obs_dim == 136 + 7 * 11 * 11 + 2 * 11 * 11
    assert (specs["p"].num_agents, specs["p"].num_actions) == (7, 22)
    assert specs["p"].obs_dim == 86 + 4 * 6 + 7
    assert len(batch.policy_tag_to_agent_id_map["p"]) == 7
    masks = batch.action_masks("p").numpy()
    assert masks.shape == (2, 7, 22) and (masks[..., 0] == 1).all()  # tax day 1: rates allowed
    obs = batch.observations("p").numpy()
    assert np.array_equal(obs[0, :, -7:], np.eye(7))
    batch.actions("p")[:] = 2  # annealing allows rates up to about 0.1 at first
    batch.step_all_envs()
    rates = batch.envs[0].get_component("PeriodicBracketTax").curr_rate_indices
    assert list(rates) == [1] * 7  # action 2 = the second rate (index 1, 0.05)
    assert (batch.action_masks("p").numpy()[..., 1:] == 0).all()  # no changes mid-period
    batch.actions("p")[:] = 0
    for _ in range(2):
        batch.step_all_envs()
    assert batch.done().tolist() == [1, 1]
    batch.reset_only_done_envs()
    assert batch.done().tolist() == [0, 0] and batch.envs[0].world.timestep == 0


def test_host_mirror_copies_only_when_the_tensors_are_not_shared():
    import torch

    from ai_economist.foundation.scenarios.simple_wood_and_stone.batched import HostMirror

    obs, act = np.zeros((2, 3), np.float32), np.zeros(2, np.int32)
    shared = HostMirror({"obs": {"a": obs}, "act": {"a": act}}, "cpu")
    obs[0, 1] = 5.0
    assert shared.shared and shared.tensors["obs"]["a"][0, 1].item() == 5.0  # same memory
    copied = HostMirror({"obs": {"a": obs}, "act": {"a": act}}, "cpu", share=False)
    obs[1, 2] = 7.0
    assert copied.tensors["obs"]["a"][1, 2].item() == 0.0  # a copy until pushed
    copied.push("obs")
    assert torch.equal(copied.tensors["obs"]["a"], torch.from_numpy(obs))
    copied.tensors["act"]["a"][:] = torch.tensor([3, 4], dtype=torch.int32)
    assert act.tolist() == [0, 0]
    copied.pull("act")
    assert act.tolist() == [3, 4]
    with pytest.raises(ValueError, match="cannot share host memory"):
        HostMirror({"obs": {"a": obs}}, "meta", share=True)


def test_the_registry_names_an_unusable_env_backend():
    from ai_economist.warp_drive.registry import ENVIRONMENTS

    entry = ENVIRONMENTS["gather_trade_build_phase1"]
    run_config = {"env": {}, "trainer": {"num_envs": 1, "env_backend": "pycuda"}}
    with pytest.raises(ValueError, match="'pycuda' steps the env on the GPU and needs"):
        entry.make(run_config, "cpu")
    with pytest.raises(ValueError, match="'pycuda': the environment has no such backend"):
        entry.make(run_config, "cuda")


@pytest.mark.gpu
def test_gpu_tensors_hold_the_host_batch_values_step_after_step():
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs an NVIDIA GPU")
    config = configs.env_config(configs.PHASE2_ENV_CONFIG)
    config.update(episode_length=4, dense_log_frequency=None)
    cpu = GatherTradeBuildBatch(config, num_envs=2, seed=0)
    gpu = GatherTradeBuildBatch(config, num_envs=2, seed=0, device="cuda")
    assert gpu.device.type == "cuda" and gpu.observations("a").is_cuda
    for _ in range(5):
        for tag in ("a", "p"):
            for name in ("observations", "action_masks", "rewards"):
                assert torch.equal(getattr(gpu, name)(tag).cpu(), getattr(cpu, name)(tag)), name
        assert torch.equal(gpu.done().cpu(), cpu.done())
        gpu.reset_only_done_envs()
        cpu.reset_only_done_envs()
        masks = cpu.action_masks("a")
        first_allowed = (masks * torch.arange(masks.shape[-1])).argmax(-1).to(torch.int32)
        cpu.actions("a").copy_(first_allowed)
        gpu.actions("a").copy_(first_allowed.cuda())
        cpu.step_all_envs()
        gpu.step_all_envs()


@pytest.mark.gpu
@pytest.mark.filterwarnings("ignore:.*GatherTradeBuildBatch has no state_dict")
@pytest.mark.parametrize("env", ["gather_trade_build_phase1", "one_step_economy"])
def test_two_iterations_with_the_models_on_the_gpu(tmp_path, env):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs an NVIDIA GPU")
    run_dir = tmp_path / env
    args = ["--env", env, "--device", "cuda", "--quiet", "--results_dir", str(run_dir)]
    if env == "one_step_economy":
        tiny = ["trainer.num_envs=4", "trainer.train_batch_size=16", "trainer.num_episodes=16",
                "saving.tensorboard=false", "saving.metrics_log_freq=1",
                "trainer.progress_bar=false", "policy.a.model.fc_dims=[8]",
                "policy.p.model.fc_dims=[8]"]  # fmt: skip
    else:
        tiny = TINY
    assert training_script.main([*args, *tiny]) == 0
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2]
    assert np.isfinite(rows[-1]["a/loss"])

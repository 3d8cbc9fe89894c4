"""End-to-end training on the toy env on the CPU: the objective improves, results are written."""

from __future__ import annotations

import copy
import json

import pytest
import torch

from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer

AGENT_MAP = {"a": ["0", "1", "2"], "p": ["p"]}


def make_trainer(tmp_path, config, **env_kwargs):
    env = ToyTargetEnv(num_envs=config["trainer"]["num_envs"], **{**config["env"], **env_kwargs})
    return Trainer(env, config, AGENT_MAP, True, "first", results_directory=tmp_path, verbose=False)


def test_training_improves_the_objective_and_writes_results(tmp_path):
    config = toy_run_config(num_episodes=120)  # 15 iterations of 80 env-steps
    config["saving"]["tensorboard"] = True
    trainer = make_trainer(tmp_path, config)
    assert trainer.num_iterations == 15 and trainer.num_steps == 10
    trainer.train()
    trainer.graceful_close()
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == list(range(1, 16))
    first, last = rows[0], rows[-1]
    # random play scores ~0.3 (a) / ~0.45 (p) per step; optimal is 1.0
    assert last["a/reward_per_step"] > 0.9 > first["a/reward_per_step"] + 0.3
    assert last["p/reward_per_step"] > first["p/reward_per_step"] + 0.1
    assert last["a/episode_reward"] > 9.0 and last["env/accuracy_a"] > 0.9
    for key in (
        "a/loss",
        "a/entropy",
        "p/value_loss",
        "time/env_step",
        "time/update",
        "env_steps_per_s",
    ):
        assert key in last
    assert (tmp_path / "metrics.csv").read_text().count("\n") == 16
    assert list((tmp_path / "tensorboard").glob("events.out.tfevents.*"))
    assert (tmp_path / "config.yaml").is_file()
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == [
        "ckpt_00000005.pt", "ckpt_00000005.pt.sha256", "ckpt_00000010.pt",
        "ckpt_00000010.pt.sha256", "ckpt_00000015.pt", "ckpt_00000015.pt.sha256",
    ]  # fmt: skip


def test_frozen_policy_is_not_updated_and_a2c_path_runs(tmp_path):
    config = toy_run_config(num_episodes=16)
    config["policy"]["p"]["to_train"] = False
    config["policy"]["a"]["algorithm"] = "a2c"
    trainer = make_trainer(tmp_path, config)
    before = copy.deepcopy(trainer.policies["p"].model.state_dict())
    a_before = copy.deepcopy(trainer.policies["a"].model.state_dict())
    metrics = trainer.train()
    trainer.graceful_close()
    after = trainer.policies["p"].model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert not all(
        torch.equal(a_before[k], v) for k, v in trainer.policies["a"].model.state_dict().items()
    )
    assert "p/loss" not in metrics and "a/loss" in metrics


def test_schedules_drive_the_optimizer(tmp_path):
    config = toy_run_config(num_episodes=32)  # 4 iterations of 80 steps
    config["policy"]["a"]["lr"] = [[0, 0.01], [320, 0.0]]
    trainer = make_trainer(tmp_path, config)
    metrics = trainer.train()
    trainer.graceful_close()
    # the update of iteration 4 runs at env step 240: lr = 0.01 * (1 - 240 / 320)
    assert metrics["a/lr"] == pytest.approx(0.0025)
    assert trainer.policies["a"].optimizer.param_groups[0]["lr"] == pytest.approx(0.0025)


def test_env_and_config_must_agree(tmp_path):
    config = toy_run_config()
    env = ToyTargetEnv(num_envs=4, **config["env"])
    with pytest.raises(ValueError, match="num_envs"):
        Trainer(env, config, AGENT_MAP, results_directory=tmp_path)
    env = ToyTargetEnv(num_envs=8, **config["env"])
    with pytest.raises(ValueError, match="agent ids"):
        Trainer(env, config, {"a": ["0"], "p": ["p"]}, results_directory=tmp_path)
    with pytest.raises(ValueError, match="policy tags differ"):
        Trainer(env, config, {"a": ["0", "1", "2"]}, results_directory=tmp_path)


def test_initial_weights_from_a_checkpoint(tmp_path):
    config = toy_run_config(num_episodes=8)
    trainer = make_trainer(tmp_path / "first", config)
    trainer.train()
    trainer.graceful_close()
    warm = toy_run_config(num_episodes=8)
    warm["policy"]["a"]["model"]["model_ckpt_filepath"] = str(trainer.last_checkpoint)
    second = make_trainer(tmp_path / "second", warm)
    trained = trainer.policies["a"].model.state_dict()
    loaded = second.policies["a"].model.state_dict()
    assert all(torch.equal(trained[k], loaded[k]) for k in trained)
    second.graceful_close()


def test_policy_streams_do_nothing_off_the_gpu():
    from ai_economist.warp_drive.training.rollout import PolicyStreams

    streams = PolicyStreams(torch.device("cpu"), ["a", "p"])
    assert not streams.enabled
    with streams.on("a"):
        pass
    streams.join()  # nothing to join


def test_cpu_threads_share_the_cores_among_processes(monkeypatch):
    from ai_economist.warp_drive.training import trainer as trainer_module

    monkeypatch.setattr(trainer_module.os, "cpu_count", lambda: 8)
    assert trainer_module.cpu_threads(3, processes=4) == 3  # as configured
    assert trainer_module.cpu_threads(0, processes=1) == 8
    assert trainer_module.cpu_threads(0, processes=4) == 2
    assert trainer_module.cpu_threads(0, processes=16) == 1  # at least one each


@pytest.mark.parametrize(
    "precision, acting, used",
    [
        ("fp32", "", "fp32"),
        ("bf16", "", "bf16"),
        ("bf16", "fp32", "fp32"),
        ("fp32", "bf16", "bf16"),
    ],
)
def test_acting_precision_follows_precision_unless_given(tmp_path, precision, acting, used):
    config = toy_run_config()
    config["trainer"].update(precision=precision, acting_precision=acting)
    assert make_trainer(tmp_path, config).rollout.precision == used


def test_an_unknown_acting_precision_is_named():
    from ai_economist.training.config import ConfigError, load_run_config

    with pytest.raises(ConfigError, match="acting_precision"):
        load_run_config(base=toy_run_config(), overrides=["trainer.acting_precision=fp16"])


def test_metrics_appear_from_the_first_iteration(tmp_path):
    """A long ``metrics_log_freq`` (Tag grid-world's 100) still logs the first iteration."""
    config = toy_run_config(num_episodes=56)  # 7 iterations of 80 env-steps
    config["saving"].update(metrics_log_freq=100, model_params_save_freq=100)
    trainer = make_trainer(tmp_path, config)
    trainer.train()
    trainer.graceful_close()
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 7]

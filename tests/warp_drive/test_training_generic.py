"""One registry of trainable environments; a GpuEnvironment trains through the training
script on the CPU (numpy backend), resumes exactly and evaluates."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ai_economist.example_envs.ring_chase import RingChase
from ai_economist.training import environments, evaluate, training_script
from ai_economist.warp_drive.env_wrapper import EnvWrapper
from ai_economist.warp_drive.registrar import (
    EnvironmentRegistrar,
    default_registrar,
    register_gpu_environment,
)

TINY = ["trainer.num_envs=4", "trainer.train_batch_size=20", "saving.tensorboard=false",
        "trainer.progress_bar=false", "env.episode_length=5", "policy.chaser.model.fc_dims=[16]",
        "policy.runner.model.fc_dims=[16]", "saving.metrics_log_freq=1",
        "saving.model_params_save_freq=2"]  # fmt: skip


def rows(run_dir):
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def test_ring_chase_trains_resumes_and_evaluates_on_the_cpu(tmp_path):
    run_dir = tmp_path / "run"
    args = ["--env", "ring_chase", "--device", "cpu", "--results_dir", str(run_dir), "--quiet"]
    assert training_script.main([*args, *TINY, "trainer.num_episodes=16"]) == 0  # 4 iterations
    first = rows(run_dir)
    assert [r["iteration"] for r in first] == [1, 2, 3, 4]
    assert first[-1]["env/tags per episode"] >= 0 and first[-1]["episodes"] > 0
    ckpt2 = run_dir / "checkpoints" / "ckpt_00000002.pt"
    assert training_script.main(["--resume", str(ckpt2), "--quiet"]) == 0
    again = rows(run_dir)
    assert [r["iteration"] for r in again] == [1, 2, 3, 4]
    for key in ("chaser/loss", "runner/reward_per_step", "env/tags per episode"):
        assert again[-1][key] == first[-1][key]  # the env state resumed exactly
    assert evaluate.main(["--run_dir", str(run_dir), "--greedy"]) == 0
    log = json.loads((run_dir / "eval" / "ckpt_00000004" / "dense_log.json").read_text())
    assert set(log["steps"][0]["actions"]) == {"chaser", "runner"} and len(log["steps"]) == 5


def test_unknown_env_keys_and_backends_are_config_errors(tmp_path, capsys):
    base = ["--env", "ring_chase", "--device", "cpu", "--results_dir", str(tmp_path), "--quiet"]
    assert training_script.main([*base, "env.num_chaser=3"]) == 2
    assert (
        "unknown key 'env.num_chaser' (did you mean 'env.num_chasers'?)" in capsys.readouterr().err
    )
    args = [*base, *TINY, "trainer.num_episodes=4", "trainer.env_backend=pycuda"]
    assert training_script.main(args) == 2
    err = capsys.readouterr().err
    assert "'trainer.env_backend' = 'pycuda'" in err and "needs trainer.device cuda" in err


def test_one_registry_for_every_environment():
    names = environments.training_env_names()
    assert {"covid_and_economy_environment", "toy", "ring_chase"} <= set(names)
    assert training_script.ENVIRONMENTS is environments.ENVIRONMENTS
    assert environments.get_training_env("ring_chase").env_class() is RingChase
    with pytest.raises(KeyError, match="Unknown training environment 'ring_chace'.*'ring_chase'"):
        environments.get_training_env("ring_chace")
    for backend in ("numpy", "pycuda", "numba"):
        assert default_registrar.get("ring_chase", env_backend=backend) is RingChase
    assert default_registrar.get_cuda_env_src_path("ring_chase", "numba").endswith(
        "ring_chase_numba"
    )


def test_custom_registrations_win(monkeypatch):
    monkeypatch.setattr(environments, "ENVIRONMENTS", environments.TrainingEnvironments())
    environments.ENVIRONMENTS.register("toy", environments.EnvEntry(lambda c, d, b: "mine"))

    class Mine(RingChase):
        name = "mine"

    environments.register_gpu_training_env(Mine)
    assert environments.get_training_env("toy").build({}, "cpu", None) == "mine"
    config = {"env": {"episode_length": 3}, "trainer": {"num_envs": 2, "seed": 0}}
    wrapper = environments.get_training_env("mine").build(config, "cpu", None)
    assert isinstance(wrapper, EnvWrapper) and wrapper.env_backend == "numpy"
    assert wrapper.episode_length == 3 and wrapper.num_envs == 2

    registrar = EnvironmentRegistrar()
    registrar.add_env(Mine, env_backend="numpy", name="ring_chase")
    assert registrar.get("ring_chase", env_backend="numpy") is Mine
    assert default_registrar.get("ring_chase", env_backend="numpy") is RingChase


def test_register_gpu_environment_follows_the_kernels(monkeypatch):
    monkeypatch.setattr(environments, "ENVIRONMENTS", environments.TrainingEnvironments())

    class NumbaOnly(RingChase):
        name = "numba_only"

        def kernels(self):
            return dataclasses.replace(super().kernels(), cuda_source=None)

    registrar = EnvironmentRegistrar(use_defaults=False)
    assert register_gpu_environment(NumbaOnly, registrar) is NumbaOnly
    assert registrar.env_names("numpy") == registrar.env_names("numba") == ["numba_only"]
    assert registrar.env_names("pycuda") == [] and not registrar.has_env("numba_only", "cpu")
    assert registrar.get_cuda_env_src_path("numba_only", "numba").endswith("ring_chase_numba")
    assert environments.get_training_env("numba_only").env_class() is NumbaOnly
    register_gpu_environment(RingChase, EnvironmentRegistrar(use_defaults=False), training=False)
    assert "ring_chase" not in environments.training_env_names()


def test_builtin_registrations_never_replace_a_custom_entry(monkeypatch):
    """A scenario's registration module, imported lazily on the first lookup, keeps an entry the
    user registered under the same name before; names it alone registers still appear."""
    import sys

    module = "ai_economist.foundation.scenarios.one_step_economy.registration"
    registry = environments.TrainingEnvironments((module,))
    monkeypatch.setattr(environments, "ENVIRONMENTS", registry)
    monkeypatch.delitem(sys.modules, module, raising=False)  # restored after the test
    custom = environments.EnvEntry(lambda *args: "mine")
    registry.register("one_step_economy", custom)
    assert "one_step_economy" in list(registry)  # listing the names imports the module
    assert module in sys.modules and registry["one_step_economy"] is custom
    registry.register("one_step_economy", environments.EnvEntry(lambda *args: "later"))
    assert registry["one_step_economy"] is not custom  # outside the import, register replaces

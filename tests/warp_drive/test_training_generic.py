"""One registry of trainable environments; a GpuEnvironment trains through the training
script on the CPU (numpy backend), resumes exactly and evaluates."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ai_economist.example_envs.ring_chase import RingChase
from ai_economist.training import environments, evaluate, training_script
from ai_economist.warp_drive import registry as registry_module
from ai_economist.warp_drive.backend_names import EnvBackend
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
    custom = EnvironmentRegistrar()  # its own registrations shadow the registry's, for it only
    custom.add_env(type("Mine", (RingChase,), {}), env_backend="numpy", name="ring_chase")
    assert custom.get("ring_chase", env_backend="numpy") is not RingChase
    assert default_registrar.get("ring_chase", env_backend="numpy") is RingChase


def test_a_second_registration_of_one_name_names_both(monkeypatch):
    fresh = registry_module.Registry()
    monkeypatch.setattr(registry_module, "ENVIRONMENTS", fresh)
    fresh.register("toy", environments.EnvEntry(lambda c, d, b: "mine"), origin="package 'a'")
    with pytest.raises(registry_module.DuplicateEnvironmentError) as err:
        fresh.register("toy", environments.EnvEntry(lambda c, d, b: "theirs"), origin="package 'b'")
    assert "'toy' is registered twice: by package 'a' and by package 'b'" in str(err.value)
    assert fresh["toy"].build({}, "cpu", None) == "mine"

    class Mine(RingChase):
        name = "mine"

    environments.register_gpu_training_env(Mine)
    assert fresh["mine"].origin == f"module {__name__!r}"  # the caller, not the facade
    environments.register_gpu_training_env(Mine)  # the same module again: replaced
    config = {"env": {"episode_length": 3}, "trainer": {"num_envs": 2, "seed": 0}}
    wrapper = environments.get_training_env("mine").make(config, "cpu")
    assert isinstance(wrapper, EnvWrapper) and wrapper.env_backend == "numpy"
    assert wrapper.episode_length == 3 and wrapper.num_envs == 2

    registrar = EnvironmentRegistrar()
    registrar.add_env(Mine, env_backend="numpy", name="ring_chase")
    assert registrar.get("ring_chase", env_backend="numpy") is Mine


def test_register_gpu_environment_follows_the_kernels(monkeypatch):
    monkeypatch.setattr(registry_module, "ENVIRONMENTS", registry_module.Registry())

    class NumbaOnly(RingChase):
        name = "numba_only"

        def kernels(self):
            return dataclasses.replace(super().kernels(), cuda_source=None)

    registrar = EnvironmentRegistrar(use_defaults=False)
    assert register_gpu_environment(NumbaOnly, registrar) is NumbaOnly
    assert registrar.env_names("numpy") == registrar.env_names("numba") == ["numba_only"]
    assert registrar.env_names("pycuda") == [] and not registrar.has_env("numba_only", "cpu")
    assert registrar.get_cuda_env_src_path("numba_only", "numba").endswith("ring_chase_numba")
    entry = environments.get_training_env("numba_only")
    assert entry.env_class() is NumbaOnly
    assert entry.backends == (EnvBackend.NUMPY, EnvBackend.NUMBA)
    assert entry.config_dir is None  # no run_configs/ beside this test module
    register_gpu_environment(RingChase, EnvironmentRegistrar(use_defaults=False), training=False)
    assert "ring_chase" not in environments.training_env_names()


@pytest.mark.parametrize(
    "requested,device,expected",
    [
        ("auto", "cpu", "numpy"),
        ("auto", "cuda", "pycuda"),
        ("auto", "cuda:1", "pycuda"),
        ("cpu", "cpu", "numpy"),  # 'cpu' means the host path of an env without Python objects
        ("NUMBA", "cuda", "numba"),
        (EnvBackend.NUMPY, "cuda", "numpy"),
    ],
)
def test_one_rule_resolves_the_backend(requested, device, expected):
    entry = environments.get_training_env("ring_chase")
    assert entry.resolve_backend({"trainer": {}}, device, requested) is EnvBackend(expected)


def test_auto_takes_the_fastest_backend_the_env_has():
    from ai_economist.warp_drive.backend_names import resolve_backend

    host = (EnvBackend.CPU, EnvBackend.NUMPY)
    assert resolve_backend("auto", host, "cuda") is EnvBackend.NUMPY  # no GPU backend
    assert resolve_backend("auto", (EnvBackend.CPU,), "cuda") is EnvBackend.CPU
    assert resolve_backend("auto", (EnvBackend.NUMBA, EnvBackend.NUMPY), "cuda") is EnvBackend.NUMBA
    with pytest.raises(ValueError, match="no backend that runs on device 'cpu'.*'numba'"):
        resolve_backend("auto", (EnvBackend.NUMBA,), "cpu")
    with pytest.raises(ValueError, match="'pycuda': the environment has no such backend"):
        resolve_backend("pycuda", host, "cuda")
    with pytest.raises(ValueError, match="Unknown env_backend 'cuda'"):
        resolve_backend("cuda", host, "cuda")


def test_the_run_records_the_resolved_backend(tmp_path):
    import yaml

    run_dir = tmp_path / "run"
    args = ["--env", "ring_chase", "--device", "cpu", "--results_dir", str(run_dir), "--quiet"]
    assert training_script.main([*args, *TINY, "trainer.num_episodes=4"]) == 0
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert saved["trainer"]["env_backend"] == "numpy"  # 'auto' on the CPU


def test_an_unknown_env_lists_close_matches_and_exits_2(capsys):
    assert training_script.main(["--env", "gather_trade_buld", "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert "Unknown training environment 'gather_trade_buld'" in err
    hint = err.split("Did you mean ")[1].split("?")[0]
    assert sorted(hint.split(", ")) == [
        "'gather_trade_build_phase1'",
        "'gather_trade_build_phase2'",
    ]
    assert "ring_chase" in err and "file not found" not in err


def test_an_unknown_name_in_a_run_config_names_the_file(tmp_path, capsys):
    from ai_economist.training.config import packaged_config_path

    config = tmp_path / "mine.yaml"
    text = packaged_config_path("ring_chase").read_text()
    config.write_text(text.replace('name: "ring_chase"', 'name: "ring_chace"', 1))
    assert training_script.main(["--config", str(config), "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert f"run config {config}: 'name' = 'ring_chace': Unknown training environment" in err
    assert "Did you mean 'ring_chase'?" in err

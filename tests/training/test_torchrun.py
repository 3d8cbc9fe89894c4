"""Training launched by ``torchrun``: two processes on the CPU (gloo), one run folder, the
gradients averaged exactly as on the single-host ``trainer.num_gpus`` path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from ai_economist.training import training_script
from ai_economist.warp_drive.training import checkpoint as ckpt
from ai_economist.warp_drive.training.distributed import launch, torchrun_environment

TINY = ["trainer.num_envs=4", "trainer.train_batch_size=20", "trainer.num_episodes=6",
        "trainer.num_threads=1", "saving.tensorboard=false", "trainer.progress_bar=false",
        "saving.metrics_log_freq=1", "saving.model_params_save_freq=3",
        "policy.a.model.fc_dims=[16]", "policy.p.model.fc_dims=[16]"]  # fmt: skip
ROOT = Path(__file__).resolve().parents[2]
TORCHRUN_ENV = {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
                "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"}  # fmt: skip


def _torchrun(basedir: Path, *args: str) -> subprocess.CompletedProcess:
    """``torchrun --standalone --nproc-per-node 2 -m ...training_script ARGS`` in a new process."""
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env.update(OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               "--nproc-per-node", "2", "-m", "ai_economist.training.training_script",
               "--quiet", *args, f"saving.basedir={basedir}"]  # fmt: skip
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def _params(state: dict) -> dict:
    return {tag: p["model"] for tag, p in state["policies"].items()}


def _launched(ctx, config: dict, run_dir: str) -> None:
    torch.set_num_threads(1)
    training_script.train_process(ctx, "toy", config, None, run_dir, False)


def test_torchrun_two_processes_match_the_num_gpus_path(tmp_path):
    done = _torchrun(tmp_path / "runs", "--env", "toy", "--device", "cpu", *TINY)
    assert done.returncode == 0, done.stderr[-3000:]
    (run_dir,) = (tmp_path / "runs" / "toy" / "default").iterdir()  # one folder, rank 0's
    state = ckpt.load_checkpoint(ckpt.find_checkpoint(run_dir))
    assert state["world_size"] == 2 and state["env_steps"] == 3 * 2 * 20  # both ranks stepped
    env0, env1 = (shard["env"]["obs/a"] for shard in state["ranks"])
    assert not torch.equal(env0, env1)  # each rank simulated its own envs (seed + rank)
    # the same config through the spawning path (gloo, forked): bit-identical weights
    _, config, _ = training_script.prepare(
        training_script.parse_args(["--env", "toy", "--device", "cpu", *TINY])
    )
    launch(_launched, 2, (config, str(tmp_path / "spawned")), backend="gloo", start_method="fork")
    spawned = ckpt.load_checkpoint(ckpt.find_checkpoint(tmp_path / "spawned"))
    for tag, model in _params(state).items():
        for key, value in model.items():
            assert torch.equal(value, _params(spawned)[tag][key]), (tag, key)
    # ... and not those of one process (the other rank's gradients were averaged in)
    assert training_script.main(["--env", "toy", "--device", "cpu", "--quiet", *TINY,
                                 "--results_dir", str(tmp_path / "one")]) == 0  # fmt: skip
    alone = ckpt.load_checkpoint(ckpt.find_checkpoint(tmp_path / "one"))
    assert any(
        not torch.equal(value, _params(alone)[tag][key])
        for tag, model in _params(state).items()
        for key, value in model.items()
    )


def test_num_gpus_under_torchrun_is_refused(tmp_path, monkeypatch, capsys):
    for name, value in TORCHRUN_ENV.items():
        monkeypatch.setenv(name, value)
    args = ["--env", "toy", "--device", "cpu", *TINY, f"saving.basedir={tmp_path}/runs"]
    assert training_script.main([*args, "trainer.num_gpus=2"]) == 2
    err = capsys.readouterr().err
    assert "trainer.num_gpus=2 under torchrun" in err and "--nproc-per-node" in err
    assert not (tmp_path / "runs").exists()


def test_torchrun_environment_parsing():
    base = dict(TORCHRUN_ENV)
    assert torchrun_environment(base) == {
        "rank": 3,
        "world_size": 4,
        "local_rank": 1,
        "local_world_size": 2,
    }
    assert torchrun_environment({k: v for k, v in base.items() if k != "MASTER_PORT"}) is None
    with pytest.raises(ValueError, match="RANK='x'"):
        torchrun_environment({**base, "RANK": "x"})
    with pytest.raises(ValueError, match="RANK=4, LOCAL_RANK=1 must lie in WORLD_SIZE=4"):
        torchrun_environment({**base, "RANK": "4"})


@pytest.mark.gpu
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 CUDA GPUs")
def test_torchrun_on_two_gpus_trains_the_published_env(tmp_path):
    done = _torchrun(tmp_path / "runs", "--env", "covid_and_economy_environment", "--device",
                     "cuda", "trainer.num_episodes=20", "saving.model_params_save_freq=1")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (run_dir,) = (tmp_path / "runs").glob("*/*/*")
    state = ckpt.load_checkpoint(ckpt.find_checkpoint(run_dir))
    assert state["world_size"] == 2 and len(state["ranks"]) == 2

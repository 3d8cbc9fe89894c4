"""Interrupts keep work: SIGINT / SIGTERM finish the iteration, write a checkpoint, print the
resume command and exit 130 / 143; checkpoints are also taken on a wall-clock interval."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest

from ai_economist.training import training_script
from ai_economist.warp_drive.training import checkpoint as ckpt
from ai_economist.warp_drive.training.schema import SAVING_SCHEMA
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer

TINY = ["trainer.num_envs=4", "trainer.train_batch_size=40", "saving.tensorboard=false",
        "trainer.progress_bar=false", "env.episode_length=5", "policy.a.model.fc_dims=[16]",
        "policy.p.model.fc_dims=[16]", "saving.metrics_log_freq=1",
        "saving.model_params_save_freq=100000", "saving.checkpoint_interval_s=0"]  # fmt: skip
AGENT_MAP = {"a": ["0", "1", "2"], "p": ["p"]}


def rows(run_dir):
    path = run_dir / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_saves_a_checkpoint_and_the_printed_command_resumes(tmp_path, sig, status):
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "ai_economist.training.training_script", "--env", "toy",
           "--device", "cpu", "--quiet", "--results_dir", str(run_dir), *TINY,
           "trainer.num_episodes=400000"]  # 50,000 iterations: far more than the test waits  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not rows(run_dir) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == status, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    saved = ckpt.list_checkpoints(run_dir)
    assert len(saved) == 1  # only the interrupt wrote one (no frequency, no interval)
    iteration = ckpt.load_checkpoint(saved[0])["iteration"]
    assert rows(run_dir)[-1]["iteration"] == iteration  # the finished iteration was logged
    name = signal.Signals(sig).name
    assert f"{name}: iteration {iteration} finished and saved to {saved[0]}" in err
    hint = err.strip().splitlines()[-1].strip()
    expected = f"python -m ai_economist.training.training_script --resume {run_dir}"
    assert hint == expected
    # the printed command continues the run at the next iteration
    args = shlex.split(hint)[3:]
    budget = f"trainer.num_episodes={8 * (iteration + 2)}"  # two more iterations
    assert training_script.main([*args, "--quiet", budget]) == 0
    assert [r["iteration"] for r in rows(run_dir)][-3:] == [iteration, iteration + 1,
                                                             iteration + 2]  # fmt: skip


def test_a_second_signal_stops_at_once_naming_the_last_checkpoint(tmp_path, capsys):
    from ai_economist.warp_drive.training.interrupts import StopSignals, TrainingInterrupted

    def stop(signum):
        raise TrainingInterrupted(signum, 7, tmp_path / "ckpt_7.pt", True)

    before = signal.getsignal(signal.SIGTERM)  # SIG_DFL, or what an earlier test left (Ray)
    with StopSignals(stop) as stops, pytest.raises(TrainingInterrupted) as info:
        signal.raise_signal(signal.SIGTERM)
        assert stops.signum == signal.SIGTERM
        signal.raise_signal(signal.SIGTERM)
    assert info.value.exit_status == 143 and info.value.immediate
    message = training_script.interrupted_message(info.value)
    assert f"SIGTERM: stopped at once; the last checkpoint is {tmp_path / 'ckpt_7.pt'}" in message
    assert signal.getsignal(signal.SIGTERM) is before  # the handlers are restored


def run_toy(tmp_path, interval):
    config = toy_run_config(num_envs=2, train_batch_size=8, num_episodes=8)
    config["env"]["episode_length"] = 4
    config["saving"].update(model_params_save_freq=1000, checkpoint_interval_s=interval)
    trainer = Trainer(ToyTargetEnv(num_envs=2, **config["env"]), config, AGENT_MAP,
                      results_directory=tmp_path / str(interval), verbose=False)  # fmt: skip
    try:
        trainer.train()
    finally:
        trainer.graceful_close()
    return [int(p.stem.split("_")[1]) for p in ckpt.list_checkpoints(trainer.run_dir)]


def test_checkpoints_on_a_wall_clock_interval(tmp_path):
    assert 0 < SAVING_SCHEMA["checkpoint_interval_s"].default <= 600  # <= 10 minutes at risk
    assert run_toy(tmp_path, 1e-9) == [1, 2, 3, 4]  # every iteration ends past the interval
    assert run_toy(tmp_path, 0.0) == [4]  # off: the frequency (1000) and the end only
    assert run_toy(tmp_path, 3600.0) == [4]


def toy_trainer(run_dir, resume=None, signal_at=None):
    """4 toy iterations; SIGTERM is raised in-process at the end of iteration ``signal_at``."""
    config = toy_run_config(num_envs=2, train_batch_size=8, num_episodes=8)
    config["env"]["episode_length"] = 4
    config["saving"].update(model_params_save_freq=1000, checkpoint_interval_s=0)
    trainer = Trainer(ToyTargetEnv(num_envs=2, **config["env"]), config, AGENT_MAP,
                      results_directory=run_dir, verbose=False, resume_from=resume)  # fmt: skip
    one = trainer.train_iteration

    def iteration():
        one()
        if trainer.iteration == signal_at:
            signal.raise_signal(signal.SIGTERM)

    trainer.train_iteration = iteration
    return trainer


def test_the_api_raises_training_interrupted_and_a_signal_in_the_last_iteration_is_no_error(
    tmp_path,
):
    from ai_economist.warp_drive.training.trainer import TrainingInterrupted

    trainer = toy_trainer(tmp_path, signal_at=2)
    with pytest.raises(TrainingInterrupted) as info:
        trainer.train()
    trainer.graceful_close()
    assert (info.value.iteration, info.value.exit_status) == (2, 143)
    assert info.value.checkpoint == ckpt.checkpoint_path(tmp_path, 2)
    trainer = toy_trainer(tmp_path, resume=tmp_path, signal_at=4)
    trainer.train()  # the run is complete: no error, the final checkpoint as usual
    trainer.graceful_close()
    assert ckpt.list_checkpoints(tmp_path)[-1] == ckpt.checkpoint_path(tmp_path, 4)

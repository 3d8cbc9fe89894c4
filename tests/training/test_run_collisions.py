"""Runs never collide: exclusive run folders, refusal of a folder holding another run, a lock
naming the process that trains in a folder."""

from __future__ import annotations

import datetime
import hashlib
import socket
import subprocess
import sys

import pytest

from ai_economist.training import training_script
from ai_economist.warp_drive.training import trainer as trainer_module
from ai_economist.warp_drive.training.run_dir import (
    LOCK_NAME,
    RunDirLocked,
    RunLock,
    create_run_dir,
)
from ai_economist.warp_drive.training.toy_env import ToyTargetEnv, toy_run_config
from ai_economist.warp_drive.training.trainer import Trainer

TINY = ["trainer.num_envs=4", "trainer.train_batch_size=40", "saving.tensorboard=false",
        "trainer.progress_bar=false", "env.episode_length=5", "policy.a.model.fc_dims=[16]",
        "policy.p.model.fc_dims=[16]", "saving.metrics_log_freq=1", "trainer.num_episodes=8"]  # fmt: skip
AGENT_MAP = {"a": ["0", "1", "2"], "p": ["p"]}


def snapshot(folder):
    """Every file under ``folder`` with the SHA-256 of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def train(*options, overrides=()):
    return training_script.main(
        ["--env", "toy", "--device", "cpu", "--quiet", *options, *TINY, *overrides]
    )


def test_two_runs_started_in_the_same_second_get_two_folders(tmp_path, monkeypatch):
    class Frozen(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return cls(2026, 1, 2, 3, 4, 5)

    monkeypatch.setattr(trainer_module.datetime, "datetime", Frozen)
    config = toy_run_config(num_envs=2, train_batch_size=8, num_episodes=2)
    config["env"]["episode_length"] = 4
    config["saving"].update(basedir=str(tmp_path), tensorboard=False)
    folders = []
    for _ in range(2):
        trainer = Trainer(ToyTargetEnv(num_envs=2, **config["env"]), config, AGENT_MAP,
                          verbose=False)  # fmt: skip
        folders.append(trainer.run_dir)
        trainer.graceful_close()
    parent = tmp_path / "experiment" / "default"  # the schema defaults of saving.name, .tag
    assert folders == [parent / "20260102-030405", parent / "20260102-030405-2"]
    assert all((f / "config.yaml").is_file() for f in folders)


def test_create_run_dir_never_reuses_a_folder(tmp_path):
    made = [create_run_dir(tmp_path / "p", "stamp") for _ in range(3)]
    assert [p.name for p in made] == ["stamp", "stamp-2", "stamp-3"]


def test_results_dir_holding_another_run_is_refused_untouched(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert train("--results_dir", str(run_dir)) == 0
    before = snapshot(run_dir)
    capsys.readouterr()
    assert train("--results_dir", str(run_dir), overrides=["trainer.num_episodes=16"]) == 2
    err = capsys.readouterr().err
    assert f"--results_dir {run_dir}: holds another run (config.yaml, checkpoints" in err
    assert f"--resume {run_dir}" in err
    assert snapshot(run_dir) == before
    # with --resume the same folder continues the run
    assert training_script.main(["--resume", str(run_dir), "--results_dir", str(run_dir),
                                 "--quiet", "trainer.num_episodes=16"]) == 0  # fmt: skip
    assert snapshot(run_dir) != before


def test_an_existing_empty_folder_is_accepted(tmp_path):
    assert train("--results_dir", str(tmp_path)) == 0
    assert (tmp_path / "metrics.jsonl").is_file()
    assert not (tmp_path / LOCK_NAME).exists()  # released at the end


def test_a_live_lock_refuses_a_second_process_and_a_stale_one_is_taken_over(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert train("--results_dir", str(run_dir)) == 0
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        host = socket.gethostname()
        (run_dir / LOCK_NAME).write_text(f'{{"pid": {holder.pid}, "host": "{host}"}}')
        before = snapshot(run_dir)
        capsys.readouterr()
        resume = ["--resume", str(run_dir), "--quiet", "trainer.num_episodes=16"]
        assert training_script.main(resume) == 2
        err = capsys.readouterr().err
        assert f"process {holder.pid} on this host trains in it" in err
        assert snapshot(run_dir) == before
    finally:
        holder.kill()
        holder.wait()
    assert training_script.main(resume) == 0
    err = capsys.readouterr().err
    assert f"taking over the lock {run_dir / LOCK_NAME} of process {holder.pid}" in err
    assert (run_dir / "checkpoints" / "ckpt_00000002.pt").is_file()


def test_a_lock_of_another_host_is_refused_naming_it(tmp_path):
    (tmp_path / LOCK_NAME).write_text('{"pid": 1, "host": "elsewhere"}')
    with pytest.raises(RunDirLocked, match="process 1 on host elsewhere trains in it"):
        RunLock(tmp_path).acquire()


def test_the_lock_is_shared_within_a_process_and_released_by_its_taker(tmp_path):
    first = RunLock(tmp_path).acquire()
    second = RunLock(tmp_path).acquire()
    assert first.owned and not second.owned
    second.release()
    assert (tmp_path / LOCK_NAME).exists()
    first.release()
    assert not (tmp_path / LOCK_NAME).exists()

"""A full disk (ENOSPC) or another OS error while writing a checkpoint or a metrics row is a
named error with its own exit status; the last good checkpoint and every earlier row stay
whole."""

from __future__ import annotations

import csv
import errno
import json
import os

import pytest

from ai_economist.training import training_script
from ai_economist.warp_drive.training import checkpoint as ckpt
from ai_economist.warp_drive.training import durable
from ai_economist.warp_drive.training.durable import EXIT_WRITE_ERROR, OutputWriteError

# 4 iterations of the toy env, a checkpoint every 2
TINY = ["trainer.num_envs=4", "trainer.train_batch_size=40", "saving.tensorboard=false",
        "trainer.progress_bar=false", "env.episode_length=5", "policy.a.model.fc_dims=[16]",
        "policy.p.model.fc_dims=[16]", "saving.metrics_log_freq=1",
        "saving.model_params_save_freq=2", "trainer.num_episodes=32"]  # fmt: skip


def fill_disk_when(monkeypatch, target, calls=1):
    """From the ``calls``-th write into a file whose name contains ``target``: write half the
    bytes, then fail with ENOSPC (what a full disk does mid-write)."""
    real, seen = durable._write, []

    def write(fd, data):
        if target in os.readlink(f"/proc/self/fd/{fd}"):
            seen.append(fd)
            if len(seen) >= calls:
                real(fd, bytes(data[: len(data) // 2]))
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(durable, "_write", write)


def train(run_dir):
    return training_script.main(
        ["--env", "toy", "--device", "cpu", "--quiet", "--results_dir", str(run_dir), *TINY]
    )


def test_a_full_disk_during_a_checkpoint_keeps_the_last_good_one(tmp_path, monkeypatch, capsys):
    run_dir = tmp_path / "run"
    fill_disk_when(monkeypatch, "ckpt_00000004.pt")  # the checksum file, then the checkpoint
    assert train(run_dir) == EXIT_WRITE_ERROR != 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "unexpected pos" not in err
    good = run_dir / "checkpoints" / "ckpt_00000002.pt"
    assert "No space left on device (ENOSPC)" in err
    assert f"The last good checkpoint, {good}, is intact" in err
    assert ckpt.load_checkpoint(good)["iteration"] == 2
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == [
        "ckpt_00000002.pt",
        "ckpt_00000002.pt.sha256",
    ]  # no temporary file, no checksum without its checkpoint
    monkeypatch.undo()
    resumed = training_script.main(["--resume", str(run_dir), "--quiet"])
    assert resumed == 0 and ckpt.list_checkpoints(run_dir)[-1].name == "ckpt_00000004.pt"


def test_the_checkpoint_itself_failing_mid_write_leaves_no_partial_file(tmp_path, monkeypatch):
    path = ckpt.checkpoint_path(tmp_path, 1)
    state = {"format_version": ckpt.FORMAT_VERSION, "iteration": 1, "env_steps": 0,
             "config": {}, "policies": {}, "ranks": []}  # fmt: skip
    ckpt.save_checkpoint(path, state)
    fill_disk_when(monkeypatch, ".ckpt_00000002.pt.tmp", calls=1)
    with pytest.raises(OutputWriteError) as info:
        ckpt.save_checkpoint(ckpt.checkpoint_path(tmp_path, 2), {**state, "iteration": 2})
    assert info.value.errno == errno.ENOSPC and info.value.path.name == "ckpt_00000002.pt"
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name, path.name + ".sha256"]
    assert ckpt.load_checkpoint(path)["iteration"] == 1


def test_a_full_disk_during_a_metrics_row_never_half_writes_it(tmp_path, monkeypatch, capsys):
    run_dir = tmp_path / "run"
    fill_disk_when(monkeypatch, "metrics.jsonl", calls=3)  # the row of iteration 3
    assert train(run_dir) == EXIT_WRITE_ERROR
    err = capsys.readouterr().err
    assert f"writing metrics {run_dir / 'metrics.jsonl'} failed: No space left" in err
    assert f"continue with --resume {run_dir}" in err
    text = (run_dir / "metrics.jsonl").read_text()
    assert text.endswith("\n")
    assert [json.loads(line)["iteration"] for line in text.splitlines()] == [1, 2]
    monkeypatch.undo()
    fill_disk_when(monkeypatch, "metrics.csv", calls=3)
    other = tmp_path / "other"
    assert train(other) == EXIT_WRITE_ERROR
    with (other / "metrics.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["iteration"] for r in rows] == ["1"]  # header + row 1 written, row 2 failed
    assert all(None not in r and None not in r.values() for r in rows)  # whole rows


def test_other_os_errors_are_named_too(tmp_path, monkeypatch):
    def refuse(fd, data):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(durable, "_write", refuse)
    with pytest.raises(OutputWriteError, match=r"writing run config .* Input/output error \(EIO\)"):
        durable.write_atomic(tmp_path / "config.yaml", b"x: 1\n", "run config")
    assert list(tmp_path.iterdir()) == []


def test_an_os_error_outside_our_writers_is_exit_74_too(tmp_path, monkeypatch, capsys):
    from ai_economist.warp_drive.training.metrics_logger import MetricsLogger

    def full(self, row):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "tensorboard/events.out")

    monkeypatch.setattr(MetricsLogger, "log", full)  # e.g. TensorBoard's event writer
    assert train(tmp_path / "run") == EXIT_WRITE_ERROR
    err = capsys.readouterr().err
    assert "No space left on device: 'tensorboard/events.out'" in err and "Traceback" not in err

"""Checkpoint files: SHA-256 verification, format-1 compatibility, leftovers of killed saves,
the newest checkpoint that verifies, metric rows set aside, and checkpoints that do not fit."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest
import torch

from ai_economist.training.config import ConfigError
from ai_economist.warp_drive.env_protocol import PolicySpec
from ai_economist.warp_drive.training import checkpoint as ckpt
from ai_economist.warp_drive.training import checkpoint_state as cstate
from ai_economist.warp_drive.training.metrics_logger import MetricsLogger, set_aside_rows
from ai_economist.warp_drive.training.models import build_policy_model
from ai_economist.warp_drive.training.toy_env import toy_run_config


def state(iteration=2, version=ckpt.FORMAT_VERSION):
    config = toy_run_config(num_envs=4, train_batch_size=20, num_episodes=10)
    weights = {"w": torch.arange(4000, dtype=torch.float32)}
    return {"format_version": version, "iteration": iteration, "env_steps": 40 * iteration,
            "config": config, "policies": {"a": {"model": weights}}, "ranks": []}  # fmt: skip


def save(run_dir, iteration):
    return ckpt.save_checkpoint(ckpt.checkpoint_path(run_dir, iteration), state(iteration))


def alter(path, offset, data):
    raw = bytearray(path.read_bytes())
    raw[offset : offset + len(data)] = data
    path.write_bytes(bytes(raw))


def test_altered_bytes_are_never_loaded(tmp_path):
    path = save(tmp_path, 2)
    assert ckpt.verify_checkpoint(path) is True
    assert ckpt.load_checkpoint(path)["iteration"] == 2
    middle = path.stat().st_size // 2
    alter(path, middle, bytes(b ^ 0xFF for b in path.read_bytes()[middle : middle + 200]))
    with pytest.raises(ckpt.CheckpointError, match=r"ckpt_00000002\.pt is damaged.*SHA-256"):
        ckpt.load_checkpoint(path)
    with pytest.raises(ConfigError, match="damaged"):  # the CLI's exit-2 error class
        ckpt.find_checkpoint(path)
    path.write_bytes(b"")
    with pytest.raises(ckpt.CheckpointError, match=r"is empty \(0 bytes\)"):
        ckpt.load_checkpoint(path)
    ckpt.checksum_path(path).write_text("not a digest\n")
    path.write_bytes(b"x")
    with pytest.raises(ckpt.CheckpointError, match="does not hold a SHA-256 digest"):
        ckpt.verify_checkpoint(path)


def test_format_1_checkpoints_load_with_a_warning_format_2_need_their_checksum(tmp_path):
    old = tmp_path / "ckpt_00000001.pt"
    torch.save(state(1, version=1), old)  # written before checksums existed
    with pytest.warns(UserWarning, match="predates checksums"):
        assert ckpt.load_checkpoint(old)["iteration"] == 1
    new = save(tmp_path, 2)
    ckpt.checksum_path(new).unlink()
    with pytest.raises(ckpt.CheckpointError, match=r"no checksum file ckpt_00000002\.pt\.sha256"):
        ckpt.load_checkpoint(new)


def test_files_that_are_not_checkpoints_are_named(tmp_path):
    text = tmp_path / "config.yaml"
    text.write_text("name: toy\n")
    with pytest.raises(
        ckpt.CheckpointError,
        match=r"config\.yaml cannot be read \(not a torch.save file.*expected a",
    ):
        ckpt.load_checkpoint(text)
    weights = tmp_path / "weights.pt"
    torch.save({"w": torch.zeros(2)}, weights)
    with pytest.raises(ckpt.CheckpointError, match=r"not a trainer checkpoint.*expected a"):
        ckpt.load_checkpoint(weights)
    with pytest.raises(ckpt.CheckpointNotFound, match="no checkpoint.*expected a"):
        ckpt.find_checkpoint(tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):  # still a FileNotFoundError
        ckpt.find_checkpoint(tmp_path / "missing")


def test_a_run_directory_resumes_from_its_newest_checkpoint_that_verifies(tmp_path):
    first, second, third = (save(tmp_path, i) for i in (2, 4, 6))
    third.write_bytes(third.read_bytes()[:100])  # truncated
    second.write_bytes(b"")  # empty
    skipped = []
    assert ckpt.find_checkpoint(tmp_path, report=skipped.append) == first
    assert [m.split(":")[0] for m in skipped] == [
        "skipping checkpoint ckpt_00000006.pt",
        "skipping checkpoint ckpt_00000004.pt",
    ]
    assert "damaged" in skipped[0] and "empty" in skipped[1]
    with pytest.warns(UserWarning) as warned:  # by default each skip is a warning
        assert ckpt.find_checkpoint(tmp_path / "checkpoints") == first
    assert [str(w.message) for w in warned] == skipped
    first.write_bytes(b"")
    with pytest.raises(ckpt.CheckpointError, match="no usable checkpoint") as err:
        ckpt.find_checkpoint(tmp_path, report=lambda message: None)
    assert all(f"ckpt_0000000{i}.pt: " in str(err.value) for i in (2, 4, 6))


def dead_pid():
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    return int(child.stdout)


def test_leftovers_of_a_killed_save_are_removed_by_the_next_save(tmp_path):
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    dead, live = dead_pid(), os.getppid()  # the parent process outlives this test
    stale = [folder / f".ckpt_00000004.pt.tmp{dead}", folder / f".ckpt_00000004.pt.sha256.tmp{dead}",
             folder / f".ckpt_00000003.pt.tmp{os.getpid()}", folder / "ckpt_00000004.pt.sha256"]  # fmt: skip
    running = folder / f".ckpt_00000005.pt.tmp{live}"  # another process saving right now
    for path in [*stale, running]:
        path.write_bytes(b"partial")
    save(tmp_path, 2)
    assert sorted(p.name for p in folder.iterdir()) == [
        running.name, "ckpt_00000002.pt", "ckpt_00000002.pt.sha256"
    ]  # fmt: skip


def test_pruning_and_setting_aside_take_the_checksum_along(tmp_path):
    for i in (2, 4, 6, 8):
        save(tmp_path, i)
    ckpt.prune_checkpoints(tmp_path, keep=3)
    names = sorted(p.name for p in (tmp_path / "checkpoints").iterdir())
    assert names == [f"ckpt_0000000{i}.pt{s}" for i in (4, 6, 8) for s in ("", ".sha256")]
    folder = ckpt.set_aside_newer(tmp_path, 4)
    assert sorted(p.name for p in folder.iterdir()) == names[2:]
    assert ckpt.find_checkpoint(tmp_path).name == "ckpt_00000004.pt"


def test_initial_weights_from_a_damaged_trainer_checkpoint_are_refused(tmp_path):
    path = save(tmp_path, 2)
    alter(path, path.stat().st_size // 2, b"\x00" * 200)
    config = {
        "model": {"type": "fully_connected", "fc_dims": [4], "model_ckpt_filepath": str(path)}
    }
    with pytest.raises(ckpt.CheckpointError, match="damaged"):
        build_policy_model("a", config, PolicySpec(3, 5, 2), torch.device("cpu"))


JSONL = "".join(json.dumps({"iteration": i, "loss": i / 2}) + "\n" for i in (1, 2, 3, 4))
CSV = "iteration,loss\r\n1,0.5\r\n2,1.0\r\n3,1.5\r\n4,2.0\r\n"


def test_later_rows_and_damaged_lines_are_moved_aside_never_deleted(tmp_path):
    (tmp_path / "metrics.jsonl").write_text(JSONL + '{"iteration": 5, "lo')
    (tmp_path / "metrics.csv").write_bytes(CSV.encode() + b"5,2.")
    logger = MetricsLogger(tmp_path, tensorboard=False, resume_iteration=2)
    logger.log({"iteration": 3, "loss": 9.0})
    (later,) = tmp_path.glob("metrics.after_iter_2.*.jsonl")
    assert later.read_text() == "".join(JSONL.splitlines(keepends=True)[2:])
    (damaged,) = tmp_path.glob("metrics.damaged.*.jsonl")
    assert damaged.read_text() == '{"iteration": 5, "lo\n'
    (later_csv,) = tmp_path.glob("metrics.after_iter_2.*.csv")
    assert later_csv.read_bytes() == b"iteration,loss\r\n3,1.5\r\n4,2.0\r\n"  # byte for byte
    (damaged_csv,) = tmp_path.glob("metrics.damaged.*.csv")
    assert damaged_csv.read_bytes() == b"iteration,loss\r\n5,2.\n"
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2, 3] and rows[-1]["loss"] == 9.0
    assert (tmp_path / "metrics.csv").read_text().splitlines() == [
        "iteration,loss", "1,0.5", "2,1.0", "3,9.0"
    ]  # fmt: skip
    assert sorted(logger.set_aside) == sorted([later, damaged, later_csv, damaged_csv])
    logger.close()


def test_setting_aside_twice_in_one_second_keeps_both(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text(JSONL)
    (first,) = set_aside_rows(path, 3, "T")
    path.write_text(JSONL)
    (second,) = set_aside_rows(path, 3, "T")
    assert (first.name, second.name) == (
        "metrics.after_iter_3.T.jsonl",
        "metrics.after_iter_3.T.1.jsonl",
    )
    assert first.read_text() == second.read_text() == JSONL.splitlines(keepends=True)[3]
    assert set_aside_rows(path, 3, "T") == []  # nothing later: the file is left as it is


def test_config_differences_name_each_key():
    # a JSON round trip: toy_run_config shares one policy block between the tags
    saved = json.loads(json.dumps(toy_run_config(num_envs=4, train_batch_size=20, num_episodes=10)))
    config = copy.deepcopy(saved)
    assert cstate.config_differences(saved, config) == []
    config["policy"]["a"]["model"]["model_ckpt_filepath"] = "/elsewhere.pt"  # not a difference
    config["policy"]["a"]["lr"] = 0.5  # hyper-parameters may change on resume
    assert cstate.config_differences(saved, config) == []
    config.update(name="covid_and_economy_environment")
    config["trainer"]["num_envs"] = 8
    config["policy"]["p"]["model"]["fc_dims"] = [64]
    assert cstate.config_differences(saved, config) == [
        "'name' (the environment): checkpoint 'toy', run config 'covid_and_economy_environment'",
        "'trainer.num_envs': checkpoint 4, run config 8",
        f"'policy.p.model.fc_dims': checkpoint {saved['policy']['p']['model']['fc_dims']}, "
        f"run config [64]",
    ]
    del config["policy"]["p"]
    assert "policy tags: checkpoint ['a', 'p'], run config ['a']" in cstate.config_differences(
        saved, config
    )


def test_damaged_bytes_are_kept_verbatim_and_a_complete_last_row_is_kept(tmp_path):
    path = tmp_path / "metrics.jsonl"
    rows_1_2 = "".join(JSONL.splitlines(keepends=True)[:2])
    garbage = b'{"iteration": 3, "a": "\xff\xfe\x0c"'  # invalid UTF-8, a form feed, no "}"
    path.write_bytes(rows_1_2.encode() + garbage + b"\n" + b'{"iteration": 2}')  # no line end
    (damaged,) = set_aside_rows(path, 2, "T")
    assert damaged.name == "metrics.damaged.T.jsonl" and damaged.read_bytes() == garbage + b"\n"
    assert path.read_text() == rows_1_2 + '{"iteration": 2}\n'

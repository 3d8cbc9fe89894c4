"""`--resume` on the command line: damaged checkpoints, damaged metrics, leftovers of a killed
save, checkpoints that do not fit the config, and paths that are not checkpoints."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from ai_economist.training import training_script
from ai_economist.training.config import packaged_config_path

TINY = ["trainer.num_envs=4", "trainer.train_batch_size=40", "saving.tensorboard=false",
        "trainer.progress_bar=false", "env.episode_length=5", "policy.a.model.fc_dims=[16]",
        "policy.p.model.fc_dims=[16]", "saving.metrics_log_freq=1", "saving.model_params_save_freq=2"]  # fmt: skip


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A toy run of 3 iterations: checkpoints 2 and 3, metric rows 1, 2, 3."""
    run_dir = tmp_path_factory.mktemp("trained") / "run"
    args = ["--env", "toy", "--device", "cpu", "--results_dir", str(run_dir), "--quiet"]
    assert training_script.main([*args, *TINY, "trainer.num_episodes=24"]) == 0
    return run_dir


@pytest.fixture
def run_dir(trained, tmp_path):
    """A private copy of the trained run."""
    return shutil.copytree(trained, tmp_path / "run")


def ckpt(run_dir, iteration):
    return run_dir / "checkpoints" / f"ckpt_{iteration:08d}.pt"


def iterations(path):
    return [json.loads(line)["iteration"] for line in path.read_text().splitlines()]


def resume(path, *extra):
    return training_script.main(["--resume", str(path), "--quiet", *extra])


def scribble(path, count=200, seed=0):
    """Write ``count`` random bytes into the middle of a file (its size unchanged)."""
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + count] = np.random.default_rng(seed).bytes(count)
    path.write_bytes(bytes(data))


def test_altered_bytes_are_detected_never_loaded(run_dir, capsys):
    scribble(ckpt(run_dir, 3))
    assert resume(ckpt(run_dir, 3)) == 2
    err = capsys.readouterr().err
    assert "ckpt_00000003.pt is damaged" in err and "SHA-256" in err
    # the run directory resumes from the newest checkpoint that verifies, and says why
    assert resume(run_dir) == 0
    err = capsys.readouterr().err
    assert "skipping checkpoint ckpt_00000003.pt" in err and "damaged" in err
    assert iterations(run_dir / "metrics.jsonl") == [1, 2, 3]  # iteration 3 trained again
    (aside,) = run_dir.glob("metrics.after_iter_2.*.jsonl")
    assert iterations(aside) == [3]  # the first branch's row is kept, named
    (superseded,) = (run_dir / "checkpoints").glob("superseded_*")
    assert sorted(p.name for p in superseded.iterdir()) == [
        "ckpt_00000003.pt",
        "ckpt_00000003.pt.sha256",
    ]


@pytest.mark.parametrize("damage", ["truncated", "empty"])
def test_a_truncated_or_empty_newest_checkpoint_no_longer_stops_the_run(run_dir, capsys, damage):
    newest = ckpt(run_dir, 3)
    newest.write_bytes(
        newest.read_bytes()[: newest.stat().st_size // 2 if damage == "truncated" else 0]
    )
    assert resume(run_dir, "trainer.num_episodes=32") == 0  # 4 iterations
    err = capsys.readouterr().err
    assert "skipping checkpoint ckpt_00000003.pt" in err
    assert ("empty" if damage == "empty" else "damaged") in err
    assert iterations(run_dir / "metrics.jsonl") == [1, 2, 3, 4]


def test_no_usable_checkpoint_names_each_one(run_dir, capsys):
    ckpt(run_dir, 3).write_bytes(b"")
    scribble(ckpt(run_dir, 2))
    assert resume(run_dir) == 2
    err = capsys.readouterr().err
    assert "no usable checkpoint in run directory" in err
    assert "ckpt_00000003.pt: " in err and "ckpt_00000002.pt: " in err


def test_a_partial_last_metrics_line_does_not_block_resume(run_dir, capsys):
    with (run_dir / "metrics.jsonl").open("a") as f:
        f.write('{"iteration": 4, "env_steps": 1')  # a crash during the append of row 4
    assert resume(run_dir, "trainer.num_episodes=32") == 0
    assert iterations(run_dir / "metrics.jsonl") == [1, 2, 3, 4]
    (damaged,) = run_dir.glob("metrics.damaged.*.jsonl")
    assert damaged.read_text() == '{"iteration": 4, "env_steps": 1\n'
    assert "metric rows moved to" in capsys.readouterr().out


def test_leftovers_of_a_killed_save_are_removed_on_resume(run_dir):
    folder = run_dir / "checkpoints"
    # a save killed before os.replace (no process has pid 2**22 + 1: Linux's pid_max <= 2**22)
    leftover = folder / f".ckpt_00000004.pt.tmp{2**22 + 1}"
    leftover.write_bytes(b"partial")
    (folder / f".ckpt_00000004.pt.sha256.tmp{2**22 + 1}").write_text("0" * 64)
    assert resume(run_dir, "trainer.num_episodes=32") == 0
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".")]
    assert ckpt(run_dir, 4).is_file()


@pytest.mark.parametrize(
    "extra,expected",
    [
        (["policy.a.model.fc_dims=[32]"], "'policy.a.model.fc_dims': checkpoint [16], run config [32]"),
        (["trainer.num_envs=8"], "'trainer.num_envs': checkpoint 4, run config 8"),
        (["env.num_noise_features=3"], "'env.num_noise_features': checkpoint 2, run config 3"),
        (["--config", str(packaged_config_path("covid_and_economy_environment"))],
         "'name' (the environment): checkpoint 'toy', run config 'covid_and_economy_environment'"),
    ],
)  # fmt: skip
def test_a_checkpoint_that_does_not_fit_the_config_is_a_named_error(
    run_dir, capsys, extra, expected
):
    assert resume(run_dir, *extra) == 2
    err = capsys.readouterr().err
    assert "does not fit this run" in err and expected in err
    assert "Traceback" not in err and "size mismatch" not in err
    assert iterations(run_dir / "metrics.jsonl") == [1, 2, 3]  # nothing touched


def test_resume_on_something_that_is_not_a_checkpoint(run_dir, tmp_path, capsys):
    config = run_dir / "config.yaml"
    assert resume(config) == 2
    err = capsys.readouterr().err
    assert str(config) in err and "expected a checkpoint written by the trainer" in err
    (tmp_path / "empty").mkdir()
    assert resume(tmp_path / "empty") == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "empty") in err and "expected a checkpoint written by the trainer" in err
    assert resume(tmp_path / "missing") == 2
    assert "does not exist" in capsys.readouterr().err


def test_an_env_state_that_does_not_fit_restarts_the_episodes_with_a_warning(run_dir):
    # 5 agents share the models of 4 (same sizes); the saved env state has 4 agents
    with pytest.warns(UserWarning, match=r"env state 'obs/a' has shape.*restart from a reset"):
        assert resume(run_dir, "env.num_agents=5", "trainer.num_episodes=32") == 0
    assert iterations(run_dir / "metrics.jsonl") == [1, 2, 3, 4]

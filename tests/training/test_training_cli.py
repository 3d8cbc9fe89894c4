"""The training script and the evaluation command, end to end on the CPU."""

from __future__ import annotations

import json

import pytest

from ai_economist.training import evaluate, training_script
from ai_economist.training.config import packaged_config_path

TINY = ["trainer.num_envs=4", "trainer.train_batch_size=40", "saving.tensorboard=false",
        "trainer.progress_bar=false", "env.episode_length=5", "policy.a.model.fc_dims=[16]",
        "policy.p.model.fc_dims=[16]", "saving.metrics_log_freq=1", "saving.model_params_save_freq=2"]  # fmt: skip


def iterations(run_dir):
    return [
        json.loads(line)["iteration"]
        for line in (run_dir / "metrics.jsonl").read_text().splitlines()
    ]


def test_train_resume_and_evaluate_the_toy_env(tmp_path, capsys):
    run_dir = tmp_path / "run"
    args = ["--env", "toy", "--device", "cpu", "--results_dir", str(run_dir), "--quiet"]
    assert training_script.main([*args, *TINY, "trainer.num_episodes=24"]) == 0  # 3 iterations
    assert iterations(run_dir) == [1, 2, 3]
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == [
        "ckpt_00000002.pt",
        "ckpt_00000002.pt.sha256",
        "ckpt_00000003.pt",
        "ckpt_00000003.pt.sha256",
    ]
    # resume from the run directory with a longer budget: the curve continues at iteration 4
    assert (
        training_script.main(["--resume", str(run_dir), "--quiet", "trainer.num_episodes=40"]) == 0
    )
    assert iterations(run_dir) == [1, 2, 3, 4, 5]
    # resuming from an older checkpoint rewrites the rows after it (the old ones moved aside)
    ckpt2 = run_dir / "checkpoints" / "ckpt_00000002.pt"
    assert training_script.main(["--resume", str(ckpt2), "--quiet"]) == 0
    assert iterations(run_dir) == [1, 2, 3]
    (aside,) = run_dir.glob("metrics.after_iter_2.*.jsonl")
    assert [json.loads(line)["iteration"] for line in aside.read_text().splitlines()] == [3, 4, 5]

    assert evaluate.main(["--run_dir", str(run_dir), "--greedy"]) == 0
    out = run_dir / "eval" / "ckpt_00000003"
    log = json.loads((out / "dense_log.json").read_text())
    assert log["iteration"] == 3 and log["greedy"] is True and len(log["steps"]) == 5
    assert (
        set(log["steps"][0]["actions"]) == {"a", "p"} and len(log["steps"][0]["actions"]["a"]) == 4
    )
    assert "accuracy_a" in log["metrics"]
    pytest.importorskip("matplotlib")
    assert {p.name for p in out.glob("*.png")} == {"rewards.png", "actions_a.png", "actions_p.png"}


@pytest.mark.parametrize(
    "extra,expected",
    [
        (["trainer.num_env=4"], "unknown key 'trainer.num_env' (did you mean 'trainer.num_envs'?)"),
        (["env.num_agent=2"], "unknown key 'env.num_agent' (did you mean 'env.num_agents'?)"),
        (["trainer.num_envs=three"], "'trainer.num_envs' must be an integer"),
        (["--env", "covid_and_economy_environment"], "the run config's 'name' is 'toy'"),
        (["trainer.device=gpu"], "'trainer.device' must be one of"),
    ],
)  # fmt: skip
def test_config_errors_stop_before_any_work(tmp_path, capsys, extra, expected):
    run_dir = tmp_path / "run"
    config = str(packaged_config_path("toy"))
    code = training_script.main(["--config", config, "--results_dir", str(run_dir), *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert expected in err
    assert "toy.yaml" in err or "toy" in err
    assert not run_dir.exists()


def test_describe_config_lists_every_key(capsys):
    assert training_script.main(["--describe_config"]) == 0
    out = capsys.readouterr().out
    assert (
        "trainer.num_envs: int, required" in out and "policy.<tag>.entropy_coeff: schedule" in out
    )


def test_covid_training_runs_on_the_cpu(tmp_path):
    pytest.importorskip("ai_economist.foundation.env_wrapper")
    run_dir = tmp_path / "covid"
    args = ["--env", "covid_and_economy_environment", "--device", "cpu", "--quiet",
            "--config", str(packaged_config_path("covid_and_economy_cpu_demo")), "--results_dir", str(run_dir),
            "trainer.num_envs=2", "trainer.train_batch_size=20", "trainer.num_episodes=2", "env.episode_length=20",
            "saving.tensorboard=false", "saving.metrics_log_freq=1"]  # fmt: skip
    assert training_script.main(args) == 0
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2]
    last = rows[-1]
    assert last["episodes"] == 2 and "env/usa/deaths (thousands)" in last
    assert all(
        abs(last[k]) < float("inf")
        for k in ("a/loss", "p/loss", "a/episode_reward", "p/episode_reward")
    )


def test_covid_evaluation_writes_dense_log_and_plots(tmp_path):
    pytest.importorskip("ai_economist.foundation.env_wrapper")
    run_dir = tmp_path / "covid"
    args = ["--env", "covid_and_economy_environment", "--device", "cpu", "--quiet",
            "--config", str(packaged_config_path("covid_and_economy_cpu_demo")), "--results_dir", str(run_dir),
            "trainer.num_envs=1", "trainer.train_batch_size=10", "trainer.num_episodes=1", "env.episode_length=10",
            "saving.tensorboard=false"]  # fmt: skip
    assert training_script.main(args) == 0
    assert evaluate.main(["--run_dir", str(run_dir), "--greedy"]) == 0
    out = run_dir / "eval" / "ckpt_00000001"
    log = json.loads((out / "dense_log.json").read_text())
    assert len(log["steps"]) == 10 and len(log["steps"][0]["actions"]["a"]) == 51
    assert "usa/deaths (thousands)" in log["metrics"]
    assert len(log["scenario_metrics"]) > 100 and "states" in log["scenario_dense_log"]
    pytest.importorskip("matplotlib")
    assert (out / "covid_state.png").is_file() and (out / "rewards.png").is_file()

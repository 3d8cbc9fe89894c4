"""The one-step economy through the trainer: protocol, a short CPU run, config errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ai_economist.foundation.scenarios.one_step_economy.batched_env import (  # noqa: E402
    OneStepEconomyBatchedEnv,
)
from ai_economist.training import training_script  # noqa: E402
from ai_economist.training.config import load_run_config, packaged_config_path  # noqa: E402
from ai_economist.warp_drive.env_protocol import BatchedPolicyEnv  # noqa: E402


def packaged_env_block():
    return load_run_config(packaged_config_path("one_step_economy"))["env"]


def test_batched_env_follows_the_protocol():
    env = OneStepEconomyBatchedEnv(num_envs=3, **packaged_env_block())
    assert isinstance(env, BatchedPolicyEnv)
    specs = env.policy_specs
    assert (specs["a"].num_agents, specs["a"].obs_dim, specs["a"].num_actions) == (10, 23, 101)
    assert (specs["p"].num_agents, specs["p"].obs_dim, specs["p"].num_actions) == (
        7,
        23 + 30 + 7,
        22,
    )
    env.reset_all_envs()
    dict_obs = env.env.reset()
    np.testing.assert_allclose(
        env.observations("a")[0, 4].numpy(), dict_obs["4"]["flat"], rtol=1e-6
    )
    planner = env.observations("p")[1].numpy()
    np.testing.assert_allclose(
        planner[:, :23], np.broadcast_to(dict_obs["p"]["flat"], (7, 23)), rtol=1e-6
    )
    np.testing.assert_array_equal(planner[:, -7:], np.eye(7))
    assert env.action_masks("a")[:, :, 1:].sum() == 0  # labour masked on the tax step
    assert env.action_masks("p").sum() == 3 * 7 * 22
    env.actions("p").fill_(5)  # every bracket at rate 0.20
    env.step_all_envs()
    assert (
        env.action_masks("p")[:, :, 1:].sum() == 0 and env.action_masks("a").sum() == 3 * 10 * 101
    )
    env.actions("a").fill_(30)
    env.step_all_envs()
    assert env.done().tolist() == [1, 1, 1]
    metrics = env.episode_metrics()
    assert metrics["total_collected_taxes"] == pytest.approx(0.2 * metrics["social/productivity"])
    rew_p = env.rewards("p")
    assert torch.all(rew_p == rew_p[:, :1])  # every bracket agent gets the planner's reward
    env.reset_only_done_envs()
    assert env.done().sum() == 0 and env.state.timestep.tolist() == [0, 0, 0]


def test_state_dict_round_trip():
    env = OneStepEconomyBatchedEnv(num_envs=2, **packaged_env_block())
    env.reset_all_envs()
    env.actions("p").fill_(3)
    env.step_all_envs()
    saved = env.state_dict()
    env.actions("a").fill_(20)
    env.step_all_envs()
    after = env.observations("a").clone(), env.rewards("a").clone()
    other = OneStepEconomyBatchedEnv(num_envs=2, **packaged_env_block())
    other.load_state_dict(saved)
    other.actions("a").fill_(20)
    other.step_all_envs()
    assert torch.equal(other.observations("a"), after[0]) and torch.equal(
        other.rewards("a"), after[1]
    )


def test_training_runs_on_the_cpu(tmp_path):
    run_dir = tmp_path / "one_step"
    args = ["--env", "one_step_economy", "--device", "cpu", "--quiet", "--results_dir", str(run_dir),
            "trainer.num_envs=4", "trainer.train_batch_size=16", "trainer.num_episodes=16",
            "saving.tensorboard=false", "saving.metrics_log_freq=1", "trainer.progress_bar=false",
            "policy.a.model.fc_dims=[8]", "policy.p.model.fc_dims=[8]"]  # fmt: skip
    assert training_script.main(args) == 0
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2]
    assert "env/social_welfare" in rows[-1] and np.isfinite(rows[-1]["p/loss"])


def test_packaged_planner_waits_while_the_workers_learn(tmp_path):
    """The packaged config's warm-up: in its first iterations the workers' policy moves and the
    planner's hardly does (its rates stay random, so the workers learn to respond to any)."""
    run_dir = tmp_path / "warm_up"
    args = ["--env", "one_step_economy", "--device", "cpu", "--quiet", "--results_dir", str(run_dir),
            "trainer.num_envs=64", "trainer.train_batch_size=256", "trainer.num_episodes=256",
            "saving.tensorboard=false", "saving.metrics_log_freq=1", "trainer.progress_bar=false"]  # fmt: skip
    assert training_script.main(args) == 0
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    for row in rows:
        assert row["p/lr"] <= 1e-6 < 1e-3 <= row["a/lr"]
        assert abs(row["p/approx_kl"]) < 1e-6 < 1e-4 < row["a/approx_kl"]


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (
            "env.components=[{SimpleLabor: {}}, {PeriodicBracketTax: {period: 2, tax_model: saez}}]",
            "model_wrapper",
        ),
        ("env.planner_reward_type=inv_income", "inv_income_weighted_utility"),
        ("env.labour_cost=1", "labor_cost"),
    ],
)
def test_config_errors(tmp_path, capsys, override, expected):
    args = [
        "--env",
        "one_step_economy",
        "--device",
        "cpu",
        "--quiet",
        "--results_dir",
        str(tmp_path / "r"),
        override,
    ]
    assert training_script.main(args) == 2
    assert expected in capsys.readouterr().err


@pytest.mark.gpu
def test_training_with_models_on_the_gpu(tmp_path):
    run_dir = tmp_path / "one_step_gpu"
    args = ["--env", "one_step_economy", "--device", "cuda", "--quiet", "--results_dir", str(run_dir),
            "trainer.num_envs=64", "trainer.train_batch_size=256", "trainer.num_episodes=256",
            "saving.tensorboard=false", "saving.metrics_log_freq=1", "trainer.progress_bar=false"]  # fmt: skip
    assert training_script.main(args) == 0
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and np.isfinite(rows[-1]["p/loss"])

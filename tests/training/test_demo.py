"""``make demo``: PPO statistics that show the updates, fixed-policy baselines and the summary."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from ai_economist.foundation.scenarios.covid19.training import demo
from ai_economist.training.config import load_run_config, packaged_config_path
from ai_economist.warp_drive.training.algorithms import (
    STAT_NAMES,
    Batch,
    UpdateHyperParams,
    update_policy,
)
from ai_economist.warp_drive.training.models import FullyConnectedActorCritic, sample_masked

DEMO = packaged_config_path("covid_and_economy_cpu_demo")
PUBLISHED = packaged_config_path("covid_and_economy_environment")


def ppo_stats(num_epochs: int, num_mini_batches: int) -> dict[str, float]:
    """One PPO update of a small model on a batch it sampled itself (on-policy log-probs)."""
    torch.manual_seed(0)
    model = FullyConnectedActorCritic(obs_dim=3, num_actions=4, fc_dims=[8])
    gen = torch.Generator().manual_seed(1)
    obs = torch.randn(64, 3, generator=gen)
    masks = torch.ones(64, 4, dtype=torch.bool)
    with torch.no_grad():
        actions, log_probs = sample_masked(model(obs)[0], masks, gen)
    batch = Batch(obs, masks, actions, log_probs, torch.randn(64, generator=gen), torch.zeros(64))
    hp = UpdateHyperParams("PPO", 1.0, 0.0, 0.2, True, 10.0, True, num_epochs, num_mini_batches)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    stats, _ = update_policy(model, optimizer, batch, hp, gen)
    return dict(zip(STAT_NAMES, stats.tolist(), strict=True))


def test_one_on_policy_pass_reads_zero_kl_and_later_passes_do_not():
    # the published settings (one epoch, one minibatch): the only minibatch is evaluated with
    # the weights that sampled it, so the ratio is exactly 1
    single = ppo_stats(1, 1)
    assert single["approx_kl"] == 0.0 and single["clip_frac"] == 0.0
    several = ppo_stats(2, 2)  # minibatches 2-4 see the weights after earlier steps
    assert several["approx_kl"] > 1e-6 and several["clip_frac"] > 0.0


def test_demo_config_shows_ppo_moving_the_policies():
    for tag, policy in load_run_config(DEMO)["policy"].items():
        assert policy["algorithm"] == "PPO"
        assert policy["num_epochs"] * policy["num_mini_batches"] > 1, tag


def env_of(config_path, **env):
    from ai_economist.foundation.scenarios.covid19.covid19_env import CovidAndEconomyEnvironment

    return CovidAndEconomyEnvironment(**{**load_run_config(config_path)["env"], **env})


def test_fixed_policies_match_the_published_learning_check():
    pytest.importorskip("ai_economist.foundation.scenarios.covid19.covid19_env")
    returns = demo.fixed_policy_returns(env_of(PUBLISHED))
    # README "learning check": the best fixed policy's planner sum is 435.61
    assert round(returns["closed 180 days, then open, no subsidy"][0], 2) == 435.61
    assert (
        max(p for p, _ in returns.values()) == returns["closed 180 days, then open, no subsidy"][0]
    )


def test_fixed_policy_sums_equal_the_dict_api():
    pytest.importorskip("ai_economist.foundation.scenarios.covid19.covid19_env")
    env = env_of(PUBLISHED, episode_length=20)
    closed = demo.fixed_policy_returns(env)["all closed, full subsidy"]
    env.reset()
    planner = states = 0.0
    for _ in range(env.episode_length):
        _, rew, _, _ = env.step({"a": np.full(51, 10), "p": 20})
        planner += float(rew["p"])
        states += float(np.mean(rew["a"]))
    assert closed == pytest.approx((planner, states), rel=1e-6)


def test_demo_trains_then_summarises(tmp_path, capsys):
    pytest.importorskip("ai_economist.foundation.env_wrapper")
    run_dir = tmp_path / "demo"
    tiny = ["trainer.num_envs=1", "trainer.train_batch_size=10", "trainer.num_episodes=2",
            "env.episode_length=10", "saving.tensorboard=false"]  # fmt: skip
    assert demo.main(["--results_dir", str(run_dir), "--quiet", *tiny]) == 0
    out = capsys.readouterr().out
    summary = out[out.index("== demo summary ==") :]
    assert f"run directory: {run_dir}  (checkpoint of iteration 2)" in summary
    assert "one greedy episode of 10 days" in summary
    for name in (
        "trained (greedy)",
        "fixed: all open, no subsidy",
        "fixed: all closed, full subsidy",
    ):
        assert name in summary
    assert f"python -m ai_economist.training.evaluate --run_dir {run_dir} --greedy" in summary
    assert f"tensorboard --logdir {run_dir / 'tensorboard'}" in summary
    # the closing lines are this run's (issue 25: no "one-minute run", no "2 of the 3 seeds")
    assert "after 2 iterations, " in summary and " s on the CPU" in summary
    assert "one-minute" not in summary and "2 of the 3" not in summary
    assert ("jupyter notebook" in summary) == (shutil.which("jupyter") is not None)
    last = json.loads((run_dir / "metrics.jsonl").read_text().splitlines()[-1])
    assert last["a/approx_kl"] > 0.0  # the demo's two passes of two minibatches
    assert f"a: approx_kl {last['a/approx_kl']:.2g}" in summary


def test_demo_config_errors_exit_2(capsys):
    assert demo.main(["trainer.num_env=1"]) == 2
    assert "unknown key 'trainer.num_env'" in capsys.readouterr().err


def test_metrics_table_shows_both_ppo_statistics():
    from ai_economist.warp_drive.training.metrics_logger import format_table

    row = {"iteration": 1, "a/approx_kl": 4.4e-05, "a/clip_frac": 0.0002}
    lines = format_table(row, ["a"]).splitlines()
    assert any(ln.startswith("approx_kl") and "4.4e-05" in ln for ln in lines)
    assert any(ln.startswith("clip_frac") and "0.0002" in ln for ln in lines)


def test_verdict_says_how_long_this_run_trained_and_what_was_measured():
    above = demo.verdict(440.0, 435.61, "closed 180 days", 12, 200.0)
    assert (
        above == "the trained planner is 4.39 above the best fixed policy (closed 180 days) "
        "after 12 iterations, 3.3 minutes on the CPU."
    )
    below = demo.verdict(430.0, 435.61, "closed 180 days", 3, 42.4)
    assert below.startswith("the trained planner is 5.61 below the best fixed policy "
                            "(closed 180 days) after 3 iterations, 42 s on the CPU;")  # fmt: skip
    assert "5 of 5 seeds" in below and "3 of 3 seeds" in below

"""Continuous Tag trains through the training script on the CPU (numpy backend)."""

from __future__ import annotations

import inspect
import json

from ai_economist.example_envs.tag_continuous import TagContinuous
from ai_economist.training import environments, training_script

TINY = ["env.num_taggers=2", "env.num_runners=4", "env.num_other_agents_observed=3",
        "env.episode_length=5", "env.tagging_distance=0.2", "trainer.num_envs=3",
        "trainer.train_batch_size=15", "trainer.num_episodes=6", "saving.tensorboard=false",
        "trainer.progress_bar=false", "policy.tagger.model.fc_dims=[16]",
        "policy.runner.model.fc_dims=[16]", "saving.metrics_log_freq=1"]  # fmt: skip


def test_trains_with_the_published_config_and_tiny_overrides(tmp_path):
    run_dir = tmp_path / "run"
    args = ["--env", "tag_continuous", "--device", "cpu", "--results_dir", str(run_dir), "--quiet"]
    assert training_script.main([*args, *TINY]) == 0
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2]
    last = rows[-1]
    assert 0 <= last["env/fraction of runners tagged"] <= 1
    assert {"tagger/loss", "runner/loss", "tagger/episode_reward"} <= set(last)


def test_registered_and_its_config_keys_are_checked(tmp_path, capsys):
    assert environments.get_training_env("tag_continuous").env_class() is TagContinuous
    assert "num_other_agents_observed" in inspect.signature(TagContinuous).parameters
    base = ["--env", "tag_continuous", "--device", "cpu", "--results_dir", str(tmp_path), "--quiet"]
    assert training_script.main([*base, "env.num_taggrs=3"]) == 2
    assert (
        "unknown key 'env.num_taggrs' (did you mean 'env.num_taggers'?)" in capsys.readouterr().err
    )

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


def test_learning_config_is_the_published_one_but_documented_changes(tmp_path):
    from ai_economist.training.config import load_run_config, packaged_config_path

    def flat(config: dict, prefix: str = "") -> dict:
        out = {}
        for key, value in config.items():
            if isinstance(value, dict):
                out.update(flat(value, f"{prefix}{key}."))
            else:
                out[f"{prefix}{key}"] = value
        return out

    learning = flat(load_run_config(packaged_config_path("tag_continuous_learning")))
    published = flat(load_run_config(packaged_config_path("tag_continuous")))
    changed = {k: (learning.get(k), published.get(k)) for k in learning.keys() | published.keys()
               if learning.get(k) != published.get(k)}  # fmt: skip
    assert changed == {
        "env.observe_own_state": (True, None),  # the published config leaves it out (False)
        "env.egocentric_observation": (True, None),
        "policy.runner.normalize_advantage": (True, False),
        "policy.runner.gae_lambda": (0.95, 1.0),
        "policy.tagger.normalize_advantage": (True, False),
        "policy.tagger.gae_lambda": (0.95, 1.0),
        "policy.tagger.lr": (0.003, 0.001),
        "policy.tagger.entropy_coeff": (0.01, 0.05),
        "saving.tag": ("learning", "experiments"),
    }
    run_dir = tmp_path / "run"
    args = ["--env", "tag_continuous", "--config", "tag_continuous_learning", "--device", "cpu",
            "--results_dir", str(run_dir), "--quiet"]  # fmt: skip
    assert training_script.main([*args, *TINY]) == 0
    assert (run_dir / "metrics.jsonl").is_file()


def test_registered_and_its_config_keys_are_checked(tmp_path, capsys):
    assert environments.get_training_env("tag_continuous").env_class() is TagContinuous
    assert "num_other_agents_observed" in inspect.signature(TagContinuous).parameters
    base = ["--env", "tag_continuous", "--device", "cpu", "--results_dir", str(tmp_path), "--quiet"]
    assert training_script.main([*base, "env.num_taggrs=3"]) == 2
    assert (
        "unknown key 'env.num_taggrs' (did you mean 'env.num_taggers'?)" in capsys.readouterr().err
    )


def test_wrapper_from_the_registry_steps_and_reports_metrics():
    import numpy as np

    from ai_economist.warp_drive.env_wrapper import EnvWrapper

    config = dict(num_taggers=1, num_runners=2, grid_length=1.0, episode_length=3,
                  tagging_distance=0.9, starting_directions=[0.0, 0.0, 0.0])  # fmt: skip
    wrapper = EnvWrapper.from_registry("tag_continuous", config, num_envs=2, env_backend="numpy")
    wrapper.reset_all_envs()
    assert wrapper.policy_specs["runner"].num_agents == 2
    assert wrapper.episode_metrics() == {}
    for _ in range(3):
        wrapper.step_all_envs({"tagger": np.zeros((2, 1), int), "runner": np.zeros((2, 2), int)})
    assert wrapper.done().tolist() == [1, 1]
    metrics = wrapper.episode_metrics()  # margin 0.9 on a 1 x 1 grid: almost every runner
    assert metrics["tags per episode"] == 2 * metrics["fraction of runners tagged"]
    wrapper.reset_only_done_envs()
    assert wrapper.done().tolist() == [0, 0] and wrapper.pull("runners_left").tolist() == [2, 2]


def test_more_than_1024_agents_fail_with_an_error_that_says_so():
    import pytest

    from ai_economist.warp_drive.checks.declaration import EnvironmentDeclarationError
    from ai_economist.warp_drive.env_wrapper import EnvWrapper

    env = TagContinuous(num_taggers=1, num_runners=1024, use_full_observation=False)
    with pytest.raises(EnvironmentDeclarationError, match="'tag_continuous'.*more than 1,024"):
        EnvWrapper(env, num_envs=1, env_backend="numpy")

"""CPU smoke tests of benchmarks/example_env_step.py and benchmarks/tag_learning.py (tiny settings)."""

from __future__ import annotations

import numpy as np
import pytest

TINY_ENV = ["num_taggers=1", "num_runners=3", "num_other_agents_observed=2", "episode_length=4"]


@pytest.fixture
def benchmarks(import_benchmark):
    return import_benchmark("example_env_step"), import_benchmark("tag_learning")


def test_env_step_benchmark_prints_rates_memory_and_the_peer_ratio(benchmarks, capsys):
    example_env_step, _ = benchmarks
    args = ["--env", "tag_continuous", "--backends", "numpy", "--num_envs", "2", "3",
            "--steps", "6", "--warmup", "1", "--peer", "1000", *TINY_ENV]  # fmt: skip
    results = example_env_step.main(args)
    out = capsys.readouterr().out
    assert [r["num_envs"] for r in results] == [2, 3]
    assert all(r["num_agents"] == 4 and r["env_steps_per_s"] > 0 for r in results)
    assert results[0]["state_bytes_per_env"] > 0
    assert "env-steps/s" in out and "KiB per env" in out and "x the peer (1,000" in out
    assert "num_runners=3" in out  # the override reached the environment


def test_env_step_benchmark_rejects_dotted_overrides(benchmarks):
    example_env_step, _ = benchmarks
    with pytest.raises(SystemExit, match="key=value"):
        example_env_step.main(["env.num_runners=3", "--backends", "numpy", "--steps", "1"])


def test_tag_learning_benchmark_runs_and_gives_a_verdict(benchmarks, capsys, tmp_path):
    _, tag_learning = benchmarks
    result = tag_learning.main([
        "--device", "cpu", "--minutes", "0", "--eval_envs", "2", "--results_dir", str(tmp_path),
        "--checkpoints", "3",
        *[f"env.{o}" for o in TINY_ENV], "env.tagging_distance=0.3", "trainer.num_envs=2",
        "trainer.num_episodes=4", "trainer.train_batch_size=8",
        "policy.runner.model.fc_dims=[8]", "policy.tagger.model.fc_dims=[8]",
    ])  # fmt: skip
    out = capsys.readouterr().out
    # each of the 3 shares of the budget ends after one iteration; the run's 4 episodes (2 a
    # iteration) end training after the second, so the third checkpoint repeats the second
    assert result["iterations"] == 2
    points = result["checkpoints"]
    assert [p["iterations"] for p in points] == [1, 2, 2]
    assert all(p["ratio"] >= 0 and p["window"] == 4 for p in points)
    assert result["ratio"] == points[-1]["ratio"]
    for key in ("trained", "random", "untrained"):
        tagged = result[key]
        assert 0 <= tagged["fraction of runners tagged"] <= 1
        curve = tagged["curve"]  # runners tagged by each step: never decreases, ends at the total
        assert np.all(np.diff(curve) >= 0) and 0 <= curve[0] and curve[-1] <= 1
        assert curve[-1] == pytest.approx(tagged["fraction of runners tagged"])
        assert tagged["mean steps untagged"] == pytest.approx(np.sum(1 - curve))
    assert "fraction of runners tagged by step" in out and "in the first" in out
    assert "at the checkpoints" in out and out.count("x\n") >= 3  # one row a checkpoint
    assert result["verdict"] in ("PASS", "FAIL") and f"verdict: {result['verdict']}" in out
    assert "random taggers vs trained runners" in out
    assert "env-steps/s end to end" in out and "x the peer (13,500)" in out
    assert result["env_steps_per_s"] > 0

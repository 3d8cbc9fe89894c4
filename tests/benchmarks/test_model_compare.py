"""benchmarks/model_compare.py: a tiny run of both models, its table and its JSON."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")


def test_both_models_train_the_same_budget_and_are_summarised(import_benchmark, tmp_path, capsys):
    compare = import_benchmark("model_compare")
    out = tmp_path / "result.json"
    args = ["--env_steps", "40", "--num_envs", "2", "--batch", "20", "--episode_length", "10",
            "--seq_len", "5", "--json", str(out)]  # fmt: skip
    assert compare.main(args) == 0
    results = json.loads(out.read_text())["results"]
    assert set(results) == {"fully_connected", "conv_lstm"}
    for model in results.values():
        run = model["0"]
        assert run["env_steps"] == 40 and run["iterations"] == 2 and len(run["curve"]) == 2
        assert run["productivity"] == run["productivity"]  # an episode ended: not NaN
    printed = capsys.readouterr().out
    assert "means over seeds:" in printed and printed.count("conv_lstm") >= 3


def test_summary_of_hand_made_rows(import_benchmark):
    compare = import_benchmark("model_compare")
    rows = [{"a/reward_per_step": r} for r in (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0)]
    rows[5]["env/social/productivity"] = 10.0
    summary = compare.summarize(rows, 2.0, 80)
    assert summary["reward first 1/4"] == 0.5 and summary["reward last 1/4"] == 6.5
    assert summary["productivity"] == 10.0 and summary["iterations"] == 8

"""``benchmarks/one_step_learning_curve.py``: each checkpoint's greedy planner, scored."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")


def test_rows_score_the_greedy_rates_both_ways(tmp_path, capsys, import_benchmark):
    from ai_economist.foundation.scenarios.one_step_economy import array_model as am
    from ai_economist.foundation.scenarios.one_step_economy import schedules
    from ai_economist.foundation.scenarios.one_step_economy.one_step_economy import (
        OneStepEconomy,
    )
    from ai_economist.training import training_script
    from ai_economist.warp_drive.training.checkpoint import list_checkpoints, load_checkpoint

    curve = import_benchmark("one_step_learning_curve")
    run_dir = tmp_path / "run"
    args = ["--env", "one_step_economy", "--device", "cpu", "--quiet", "--results_dir", str(run_dir),
            "trainer.num_envs=4", "trainer.train_batch_size=16", "trainer.num_episodes=24",
            "saving.tensorboard=false", "trainer.progress_bar=false",
            "saving.model_params_save_freq=1", "policy.a.model.fc_dims=[8]",
            "policy.p.model.fc_dims=[8]"]  # fmt: skip
    assert training_script.main(args) == 0
    found = list_checkpoints(run_dir)
    assert len(found) == 3
    row = curve.checkpoint_row(found[-1])
    params = am.OneStepParams.from_env(
        OneStepEconomy(**load_checkpoint(found[-1])["config"]["env"])
    )
    assert set(np.round(row["rates"], 2)) <= set(np.round(params.disc_rates, 2))
    best = schedules.evaluate_schedule(params, row["rates"])
    assert row["welfare_br"] == best["welfare"] and row["hours_br"] == best["hours"]
    trained = schedules.evaluate_schedule(params, row["rates"], row["hours"])
    assert row["welfare_trained"] == trained["welfare"]
    assert curve.main([str(run_dir), "--every", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[1:]] == [found[0].name, found[2].name]

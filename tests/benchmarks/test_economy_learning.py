"""benchmarks/economy_learning.py: a tiny end-to-end run, the fixed schedules' env blocks, a
deterministic GTB evaluation and the verdicts."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

TINY = ["--gtb_envs", "2", "--gtb_batch", "20", "--gtb_seeds", "2", "--saez_episodes", "3",
        "--one_step_overrides", "trainer.num_envs=8", "trainer.train_batch_size=16",
        "--gtb_env_overrides", "env.episode_length=10"]  # fmt: skip


@pytest.fixture
def learning(import_benchmark):
    return import_benchmark("economy_learning")


def phase2_block() -> dict:
    from ai_economist.foundation.scenarios.simple_wood_and_stone import configs

    block = configs.env_config(configs.PHASE2_ENV_CONFIG)
    block["episode_length"] = 12
    return block


def tax_settings(block: dict) -> dict:
    return next(s["PeriodicBracketTax"] for s in block["components"] if "PeriodicBracketTax" in s)


def test_schedule_env_changes_only_the_tax_component(learning):
    block = phase2_block()
    free = learning.schedule_env(block, learning.GTB_SCHEDULES["free market"])
    assert tax_settings(free)["disable_taxes"] is True
    assert tax_settings(block)["disable_taxes"] is False  # the original is untouched
    saez = learning.schedule_env(block, learning.GTB_SCHEDULES["Saez"])
    assert tax_settings(saez)["tax_model"] == "saez" and saez["dense_log_frequency"] is None
    assert tax_settings(saez)["tax_annealing_schedule"] is None  # no rate caps when comparing
    assert tax_settings(block)["tax_annealing_schedule"] == [-100, 0.001]
    assert {k: v for k, v in saez.items() if k not in ("components", "dense_log_frequency")} == {
        k: v for k, v in block.items() if k not in ("components", "dense_log_frequency")
    }


def test_gtb_evaluation_is_deterministic_and_reports_the_objective(learning):
    from ai_economist.foundation.scenarios.simple_wood_and_stone.batched import (
        GatherTradeBuildBatch,
    )
    from ai_economist.warp_drive.training.models import build_model

    block = learning.schedule_env(phase2_block(), learning.GTB_SCHEDULES["US federal"])
    specs = GatherTradeBuildBatch(block, num_envs=1).policy_specs
    models = {t: build_model({"fc_dims": [8]}, s.obs_dim, s.num_actions) for t, s in specs.items()}
    first = learning.play_gtb(block, models, seeds=2, sample_seed=3)
    assert learning.play_gtb(block, models, seeds=2, sample_seed=3) == first
    assert set(first) == {"productivity", "equality", "coin_eq_times_productivity"}
    assert 0 <= first["equality"] <= 1 and first["productivity"] >= 0


def test_verdicts_need_a_strict_win(learning, capsys):
    rows = [("no taxes", {"welfare": 1.0}), ("US federal 2018", {"welfare": 2.0}),
            ("Saez", {"welfare": 1.5}), ("trained planner", {"welfare": 2.0})]  # fmt: skip
    assert "does NOT beat" in learning.one_step_verdict(rows)
    rows[-1] = ("trained planner", {"welfare": 2.5})
    assert "trained planner beats" in learning.one_step_verdict(rows)
    same = {"productivity": 0.0, "equality": 1.0, "coin_eq_times_productivity": 0.0}
    learning.print_gtb({name: same for name in learning.GTB_SCHEDULES}, seeds=1)
    assert "does NOT beat (free market: 0.0)" in capsys.readouterr().out


def test_a_tiny_run_prints_both_tables(learning, tmp_path, capsys):
    assert learning.main(["--minutes", "0.01", "--results_dir", str(tmp_path), *TINY]) == 0
    out = capsys.readouterr().out
    for name in ("no taxes", "US federal 2018", "Saez", "trained planner + trained workers"):
        assert f"\n{name} " in out
    for name in learning.GTB_SCHEDULES:
        assert f"\n{name:20s} " in out
    assert "one-step: the trained planner" in out and "GTB: the trained planner" in out
    assert (tmp_path / "gtb1").is_dir() and (tmp_path / "gtb2").is_dir()
    trained_gtb = [line for line in out.splitlines() if line.startswith("trained planner  ")]

    # evaluating the saved runs again (no training) prints the same tables
    again = ["--one_step_run", str(tmp_path / "one_step"), "--gtb_run", str(tmp_path / "gtb2")]
    assert learning.main([*again, "--results_dir", str(tmp_path / "again"), *TINY]) == 0
    out_again = capsys.readouterr().out
    assert "no training" in out_again and "iterations" not in out_again
    assert [
        ln for ln in out_again.splitlines() if ln.startswith("trained planner  ")
    ] == trained_gtb

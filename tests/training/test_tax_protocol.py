"""The tax protocol command end to end on the CPU, at tiny budgets (one seed, 100-step
episodes, a few iterations): manifest, run folders, CSV, phase-2 warm starts, schedules,
resume, and bad input (exit 2)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from ai_economist.foundation.components.tax_brackets import US_FEDERAL_2018_RATES
from ai_economist.training.tax_protocol import cli, report
from ai_economist.training.tax_protocol.plan import (
    compress_tax_annealing,
    plan_runs,
    rescale_per_env_schedules,
)
from ai_economist.warp_drive.training.checkpoint import (
    file_sha256,
    find_checkpoint,
    load_checkpoint,
)

GTB_ARGS = ["--scenario", "gather-trade-build", "--seeds", "0", "--phase1_steps", "100",
            "--phase2_steps", "100", "--workers", "2", "--eval_episodes", "1",
            "--saez_warmup_episodes", "1",
            "env.episode_length=100", "trainer.num_envs=1", "trainer.train_batch_size=50"]  # fmt: skip
GTB_RUNS = ["phase1_seed0", "phase2_ai-planner_seed0", "phase2_saez_seed0",
            "phase2_us-federal_seed0", "phase2_free-market_seed0"]  # fmt: skip
BRACKETS = ["000", "009", "039", "084", "160", "204", "510"]


@pytest.fixture(scope="module")
def gtb(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("protocol") / "gtb"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = cli.main([*GTB_ARGS, "--results_dir", str(out)])
    rows = list(csv.DictReader(open(out / report.CSV_NAME)))
    return {"code": code, "dir": out, "rows": {r["schedule"]: r for r in rows}, "header": rows,
            "printed": printed.getvalue()}  # fmt: skip


def test_plan_has_phase1_then_every_schedule_per_seed() -> None:
    runs = plan_runs("gather-trade-build", [0, 3], 10, 20)
    assert [r.name for r in runs if r.seed == 0] == GTB_RUNS
    assert all(r.depends_on == f"phase1_seed{r.seed}" for r in runs if r.phase == 2)
    assert {r.steps for r in runs if r.phase == 1} == {10}
    one_step = plan_runs("one-step-economy", [0, 1], 0, 20)
    assert [(r.name, r.depends_on) for r in one_step] == [
        ("phase2_ai-planner_seed0", None), ("phase2_ai-planner_seed1", None)]  # fmt: skip


def test_phase_overrides_route_by_prefix() -> None:
    given = ["trainer.num_envs=2", "phase1:env.energy_cost=0.1", "phase2:policy.p.lr=0.01",
             "saving.basedir=/tmp/a:b"]  # fmt: skip
    assert cli.phase_overrides(given, 1) == ["trainer.num_envs=2", "env.energy_cost=0.1",
                                             "saving.basedir=/tmp/a:b"]  # fmt: skip
    assert cli.phase_overrides(given, 2) == ["trainer.num_envs=2", "policy.p.lr=0.01",
                                             "saving.basedir=/tmp/a:b"]  # fmt: skip


def test_manifest_and_run_folders(gtb: dict) -> None:
    assert gtb["code"] == 0
    manifest = json.loads((gtb["dir"] / "manifest.json").read_text())
    assert manifest["settings"]["scenario"] == "gather-trade-build"
    assert {n: e["status"] for n, e in manifest["runs"].items()} == dict.fromkeys(GTB_RUNS, "done")
    for name in GTB_RUNS:
        folder = gtb["dir"] / name
        for file in ("run.json", "config.yaml", "log.txt", "result.json"):
            assert (folder / file).is_file(), f"{name}/{file}"
        result = json.loads((folder / "result.json").read_text())
        assert result["train_env_steps"] == 100  # the budget: 1 episode of 100 steps
        assert find_checkpoint(folder / "train").is_file()


def test_csv_columns_and_rows(gtb: dict) -> None:
    header = list(gtb["header"][0])
    assert header == report.COLUMNS + [f"rate_{b}" for b in BRACKETS]
    assert sorted(gtb["rows"]) == ["ai-planner", "free-market", "saez", "us-federal"]
    for row in gtb["rows"].values():
        assert 0 <= float(row["equality"]) <= 1 and float(row["productivity"]) >= 0
        assert float(row["equality_x_productivity"]) == pytest.approx(
            float(row["equality"]) * float(row["productivity"]))  # fmt: skip


def test_each_run_prints_its_scores_when_it_finishes(gtb: dict) -> None:
    lines = {
        line.split(":")[0]: line for line in gtb["printed"].splitlines() if " done in " in line
    }
    assert sorted(lines) == sorted(GTB_RUNS)
    assert lines["phase1_seed0"].endswith(" s")  # phase 1 is not scored
    for schedule, row in gtb["rows"].items():
        line = lines[f"phase2_{schedule}_seed0"]
        assert f"eq x prod {float(row['equality_x_productivity']):.1f}" in line
        assert ("planner entropy" in line) == (schedule == "ai-planner")
    entropy = float(gtb["rows"]["ai-planner"]["planner_entropy"])
    assert 0 <= entropy <= 1 + 1e-6  # a fraction of the uniform policy's entropy
    assert gtb["rows"]["saez"]["planner_entropy"] == ""  # no planner policy to measure


def test_the_table_notes_a_planner_that_has_not_learnt() -> None:
    def row(seed: int, entropy: float) -> dict:
        return {"schedule": "ai-planner", "seed": seed, "equality": 0.8, "productivity": 200.0,
                "equality_x_productivity": 160.0, "welfare": 40.0, "planner_entropy": entropy,
                "rate_000": 0.9}  # fmt: skip

    table = report.format_table([row(0, 0.96), row(1, 0.35)])
    notes = [line for line in table.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and "seed 0" in notes[0] and "0.96 of the uniform" in notes[0]
    assert report.unlearnt_planner_notes([row(2, 0.79)]) == []


def test_decision_entropy_is_a_share_of_the_uniform_one() -> None:
    from ai_economist.training.tax_protocol.gtb_eval import decision_entropy

    masks = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0], [0, 1, 1, 1], [1, 1, 0, 0]])
    logits = torch.tensor([[0.0, 0.0, 0.0, 9.0], [1.0, 2.0, 3.0, 4.0],
                           [0.0, 50.0, 0.0, 0.0], [0.0, np.log(3.0), 0.0, 0.0]])  # fmt: skip
    got = decision_entropy(logits, masks)  # row 1 has no choice: left out
    p = torch.tensor([0.25, 0.75])
    expected = [1.0, 0.0, float(-(p * p.log()).sum() / np.log(2.0))]
    np.testing.assert_allclose(got.numpy(), expected, atol=1e-6)
    assert decision_entropy(logits[1:2], masks[1:2]).numel() == 0


def test_an_interruption_prints_the_table_of_the_finished_runs(
    gtb: dict, tmp_path: Path, capsys, monkeypatch
) -> None:
    out = tmp_path / "copy"
    shutil.copytree(gtb["dir"], out)
    (out / report.CSV_NAME).unlink()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run_all", interrupted)
    assert cli.main([*GTB_ARGS, "--results_dir", str(out)]) == 130
    printed = capsys.readouterr()
    assert "partial table: the 4 scored runs finished before the interruption" in printed.out
    assert "means over the seeds:" in printed.out and "rerun the same command" in printed.err
    assert len(list(csv.DictReader(open(out / report.CSV_NAME)))) == 4


def test_phase2_runs_start_from_the_phase1_agents(gtb: dict) -> None:
    from ai_economist.training.training_script import build_trainer

    phase1 = find_checkpoint(gtb["dir"] / "phase1_seed0" / "train")
    phase1_weights = load_checkpoint(phase1)["policies"]["a"]["model"]
    for name in GTB_RUNS[1:]:
        folder = gtb["dir"] / name
        info = json.loads((folder / "run.json").read_text())
        assert info["init_checkpoint"] == str(phase1)
        assert info["init_checkpoint_sha256"] == file_sha256(phase1)
        config = yaml.safe_load((folder / "config.yaml").read_text())
        config["trainer"]["device"] = "cpu"
        trainer = build_trainer(config, torch.device("cpu"), verbose=False,
                                results_directory=str(folder / "rebuilt"))  # fmt: skip
        try:
            start = trainer.policies["a"].model.state_dict()
            for key, value in phase1_weights.items():
                assert torch.equal(start[key], value), f"{name}: {key}"
        finally:
            trainer.graceful_close()
        trained = load_checkpoint(find_checkpoint(folder / "train"))["policies"]["a"]["model"]
        assert any(not torch.equal(trained[k], v) for k, v in phase1_weights.items())


def test_schedules_reach_the_tax_component(gtb: dict) -> None:
    rows = gtb["rows"]
    free = rows["free-market"]
    assert float(free["taxes_collected"]) == 0.0
    assert [float(free[f"rate_{b}"]) for b in BRACKETS] == [0.0] * 7
    us = [float(rows["us-federal"][f"rate_{b}"]) for b in BRACKETS]
    # one 100-step episode per env: the published annealing still caps every schedule at 10%
    # of the range, in training and so in the evaluation
    assert float(rows["us-federal"]["tax_limit"]) == pytest.approx(0.1)
    np.testing.assert_allclose(us, np.minimum(US_FEDERAL_2018_RATES, 0.1))
    taxes = {}
    for name in GTB_RUNS[1:]:
        config = yaml.safe_load((gtb["dir"] / name / "config.yaml").read_text())
        (tax,) = [c["PeriodicBracketTax"] for c in config["env"]["components"]
                  if "PeriodicBracketTax" in c]  # fmt: skip
        taxes[name.split("_")[1]] = (tax["disable_taxes"], tax.get("tax_model"),
                                     config["policy"]["p"]["to_train"])  # fmt: skip
    assert taxes == {
        "ai-planner": (False, "model_wrapper", True),
        "saez": (False, "saez", False),
        "us-federal": (False, "us-federal-single-filer-2018-scaled", False),
        "free-market": (True, "model_wrapper", False),
    }


def test_the_evaluation_holds_the_rate_limit_the_training_ended_with(gtb: dict) -> None:
    # the planner is scored on rates it was allowed in training (the limit is 10% here), never
    # on the argmax of logits its masks kept out of training
    for name, row in gtb["rows"].items():
        assert float(row["tax_limit"]) == pytest.approx(0.1), name
    planner = [float(gtb["rows"]["ai-planner"][f"rate_{b}"]) for b in BRACKETS]
    assert max(planner) <= 0.1 + 1e-12
    notes = [
        line for line in gtb["printed"].splitlines() if "rates at most 10.0% of the range" in line
    ]
    assert len(notes) == len(gtb["rows"])


def test_trained_tax_limit_is_the_annealing_of_the_last_episodes() -> None:
    from ai_economist.foundation.components.utils import annealed_tax_limit
    from ai_economist.training.tax_protocol.gtb_eval import eval_env_block, trained_tax_limit

    def state(schedule, env_steps: int, num_envs: int = 1000) -> dict:
        env = {"episode_length": 1000,
               "components": [{"PeriodicBracketTax": {"tax_annealing_schedule": schedule}}]}  # fmt: skip
        return {"config": {"env": env, "trainer": {"num_envs": num_envs}}, "env_steps": env_steps}

    block = state([-100, 0.001], 0)["config"]["env"]
    compress_tax_annealing(block, episodes_per_env=90, fraction=9.0)  # ends near 20%
    schedule = block["components"][0]["PeriodicBracketTax"]["tax_annealing_schedule"]
    limit = trained_tax_limit(state(schedule, 90_000_000))  # 90 episodes per env: the 90th's
    assert limit == annealed_tax_limit(89, *schedule, 1.0) == pytest.approx(0.1 + 0.9 * 89 / 810)
    assert trained_tax_limit(state(schedule, 45_000_000)) == annealed_tax_limit(44, *schedule, 1.0)
    compress_tax_annealing(block, episodes_per_env=90, fraction=0.3)  # the whole range by 27
    schedule = block["components"][0]["PeriodicBracketTax"]["tax_annealing_schedule"]
    assert trained_tax_limit(state(schedule, 90_000_000)) is None
    assert trained_tax_limit(state(None, 90_000_000)) is None
    assert trained_tax_limit(state([-100, 0.001], 999_999)) is None  # no episode finished yet
    held = eval_env_block(state(None, 0)["config"]["env"], limit)
    assert held["components"][0]["PeriodicBracketTax"]["tax_annealing_schedule"] == [
        -(2.0**40), limit / 2.0**40]  # fmt: skip
    free = eval_env_block(state(schedule, 0)["config"]["env"], None)
    assert free["components"][0]["PeriodicBracketTax"]["tax_annealing_schedule"] is None


def test_per_env_schedules_advance_with_total_env_steps() -> None:
    # 1,000 envs against the original's 30: f = 0.03. The labour-cost constant 10,000 steps per
    # env becomes 300; the annealing [-100, 0.001] becomes [-3, 1/30].
    block = {
        "energy_warmup_constant": 10000,
        "components": [
            {"Gather": {}},
            {"PeriodicBracketTax": {"tax_annealing_schedule": [-100, 0.001]}},
        ],
    }
    rescale_per_env_schedules(block, 1000, 30)
    assert block["energy_warmup_constant"] == pytest.approx(300.0)
    warmup, slope = block["components"][1]["PeriodicBracketTax"]["tax_annealing_schedule"]
    assert (warmup, slope) == (pytest.approx(-3.0), pytest.approx(1 / 30))
    # the limit after 27 episodes per env (27M env-steps at 1,000 envs) is the original's after
    # 900 episodes per env of its 30 (27M env-steps too): the full range
    assert slope * (27 - warmup) == pytest.approx(0.001 * (900 + 100)) == 1.0
    unchanged = {"energy_warmup_constant": 0, "components": [{"PeriodicBracketTax": {}}]}
    rescale_per_env_schedules(unchanged, 1000, 30)
    assert unchanged == {"energy_warmup_constant": 0, "components": [{"PeriodicBracketTax": {}}]}
    per_env = {"energy_warmup_constant": 10000}
    rescale_per_env_schedules(per_env, 1000, 0)
    assert per_env == {"energy_warmup_constant": 10000}


def test_tax_annealing_fits_a_share_of_the_run() -> None:
    from ai_economist.foundation.components.utils import annealed_tax_limit

    block = {"components": [{"PeriodicBracketTax": {"tax_annealing_schedule": [-100, 0.001]}}]}
    compress_tax_annealing(block, episodes_per_env=30, fraction=0.4)  # full range at episode 12
    schedule = block["components"][0]["PeriodicBracketTax"]["tax_annealing_schedule"]
    assert annealed_tax_limit(0, *schedule, 1.0) == pytest.approx(0.1)
    assert annealed_tax_limit(6, *schedule, 1.0) == pytest.approx(0.55)
    assert annealed_tax_limit(12, *schedule, 1.0) == pytest.approx(1.0)
    assert annealed_tax_limit(29, *schedule, 1.0) == 1.0
    compress_tax_annealing(block, episodes_per_env=30, fraction=3.0)  # past the run's end
    schedule = block["components"][0]["PeriodicBracketTax"]["tax_annealing_schedule"]
    assert annealed_tax_limit(30, *schedule, 1.0) == pytest.approx(0.1 + 0.9 / 3)
    none = {"components": [{"PeriodicBracketTax": {"tax_annealing_schedule": None}}]}
    compress_tax_annealing(none, 30, 0.4)
    assert none["components"][0]["PeriodicBracketTax"]["tax_annealing_schedule"] is None


def test_run_configs_keep_or_rescale_the_per_env_schedules(gtb: dict) -> None:
    from ai_economist.training.tax_protocol.plan import RunSpec, build_run_config

    def tax_of(config: dict) -> dict:
        (tax,) = [c["PeriodicBracketTax"] for c in config["env"]["components"]
                  if "PeriodicBracketTax" in c]  # fmt: skip
        return tax

    # by default the packaged per-env values (per iteration of 200-step rollouts) are kept
    phase1 = yaml.safe_load((gtb["dir"] / "phase1_seed0" / "config.yaml").read_text())
    assert phase1["env"]["energy_warmup_constant"] == 10000
    phase2 = yaml.safe_load((gtb["dir"] / "phase2_ai-planner_seed0" / "config.yaml").read_text())
    assert tax_of(phase2)["tax_annealing_schedule"] == [-100, 0.001]
    # --schedule_envs 30 with 1 env: 30x faster per env, as 30 envs of the original would go
    run = RunSpec("phase2_ai-planner_seed0", 2, "ai-planner", 0, "gather_trade_build_phase2", 100)
    config = build_run_config(run, "cpu", ["trainer.num_envs=1", "trainer.train_batch_size=50"],
                              1, schedule_envs=30)  # fmt: skip
    assert tax_of(config)["tax_annealing_schedule"] == [pytest.approx(-3000.0),
                                                        pytest.approx(0.001 / 30)]  # fmt: skip


def test_schedules_option_runs_a_subset() -> None:
    runs = plan_runs("gather-trade-build", [0, 1], 10, 20, ["free-market", "ai-planner"])
    assert [r.name for r in runs] == [
        "phase1_seed0", "phase2_ai-planner_seed0", "phase2_free-market_seed0",
        "phase1_seed1", "phase2_ai-planner_seed1", "phase2_free-market_seed1",
    ]  # fmt: skip
    assert plan_runs("gather-trade-build", [0], 10, 20) == plan_runs(
        "gather-trade-build", [0], 10, 20, ["ai-planner", "saez", "us-federal", "free-market"]
    )


def test_fixed_schedules_are_planned_after_the_named_ones() -> None:
    runs = plan_runs("gather-trade-build", [0], 10, 20, ["fixed:0.1,0,0,0,0,0,0.5", "saez"])
    assert [r.name for r in runs] == ["phase1_seed0", "phase2_saez_seed0",
                                      "phase2_fixed-0.1_0_0_0_0_0_0.5_seed0"]  # fmt: skip
    assert runs[-1].schedule == "fixed:0.1,0,0,0,0,0,0.5"


def test_a_fixed_schedule_retrains_the_agents_under_its_rates(tmp_path: Path, capsys) -> None:
    out = tmp_path / "fixed"
    # two episodes per env, the annealing open to the whole range for the second: no cap
    args = ["--schedules", "fixed:0.25", "--phase2_steps", "200", "--tax_annealing_fraction", "0.5"]
    assert cli.main([*GTB_ARGS, *args, "--results_dir", str(out)]) == 0
    config = yaml.safe_load((out / "phase2_fixed-0.25_seed0" / "config.yaml").read_text())
    (tax,) = [c["PeriodicBracketTax"] for c in config["env"]["components"]
              if "PeriodicBracketTax" in c]  # fmt: skip
    assert (tax["disable_taxes"], tax["tax_model"]) == (False, "fixed-bracket-rates")
    assert tax["fixed_bracket_rates"] == [0.25] * 7
    assert config["policy"]["p"]["to_train"] is False and config["policy"]["a"]["to_train"]
    (row,) = list(csv.DictReader(open(out / report.CSV_NAME)))
    assert row["schedule"] == "fixed:0.25"
    assert [float(row[f"rate_{b}"]) for b in BRACKETS] == [0.25] * 7
    assert row["tax_limit"] == ""  # the evaluation is not capped either
    assert "fixed:0.25" in capsys.readouterr().out


def test_a_manifest_from_before_an_option_resumes(gtb: dict, tmp_path: Path, capsys) -> None:
    out = tmp_path / "older"
    shutil.copytree(gtb["dir"], out)
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["settings"]["schedules"]  # written before --schedules existed
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert cli.main([*GTB_ARGS, "--results_dir", str(out)]) == 0
    assert "phase1_seed0: done earlier, skipped" in capsys.readouterr().out
    assert cli.main([*GTB_ARGS, "--schedules", "saez", "--results_dir", str(out)]) == 2
    assert "(differing: schedules)" in capsys.readouterr().err


def test_rerun_skips_finished_runs_and_refuses_other_settings(gtb: dict, capsys) -> None:
    stamps = {n: (gtb["dir"] / n / "result.json").stat().st_mtime_ns for n in GTB_RUNS}
    capsys.readouterr()
    assert cli.main([*GTB_ARGS, "--results_dir", str(gtb["dir"])]) == 0
    out = capsys.readouterr().out
    assert all(f"{n}: done earlier, skipped" in out for n in GTB_RUNS)
    assert stamps == {n: (gtb["dir"] / n / "result.json").stat().st_mtime_ns for n in GTB_RUNS}
    other = [a if a != "100" else "200" for a in GTB_ARGS]
    assert cli.main([*other, "--results_dir", str(gtb["dir"])]) == 2
    assert "phase1_steps, phase2_steps" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--scenario", "gather-trade-build", "--phase2_steps", "10"], "--phase1_steps None"),
        (["--scenario", "one-step-economy", "--phase1_steps", "5", "--phase2_steps", "10"],
         "has no phase 1"),
        (["--scenario", "one-step-economy", "--phase2_steps", "0"], "--phase2_steps 0"),
        (["--scenario", "one-step-economy", "--phase2_steps", "9", "--seeds", "1", "1"],
         "distinct"),
        (["--scenario", "one-step-economy", "--phase2_steps", "9", "--workers", "0"],
         "--workers 0"),
        (["--scenario", "one-step-economy", "--phase2_steps", "9", "phase3:trainer.num_envs=2"],
         "phase3:"),
        (["--scenario", "one-step-economy", "--phase2_steps", "9", "trainer.seed=4"],
         "comes from the options"),
        (["--scenario", "one-stepp", "--phase2_steps", "9"], "invalid choice"),
        (["--scenario", "one-step-economy", "--phase2_steps", "9", "--schedules", "saez"],
         "--schedules saez: one-step-economy trains ai-planner"),
        (["--scenario", "gather-trade-build", "--phase1_steps", "9", "--phase2_steps", "9",
          "--schedules", "ai-planner", "saes"], "--schedules saes: gather-trade-build trains "
         "ai-planner, saez, us-federal, free-market or fixed:R"),
        (["--scenario", "gather-trade-build", "--phase1_steps", "9", "--phase2_steps", "9",
          "--schedules", "fixed:1.5"], "--schedules fixed:1.5: schedule 'fixed:1.5': policy "
         "'fixed:1.5': rate 1.5 is outside [0, 1]"),
        (["--scenario", "gather-trade-build", "--phase1_steps", "9", "--phase2_steps", "9",
          "--schedules", "fixed:0.1,0.2"], "2 rates; the tax has 7 brackets"),
        (["--scenario", "one-step-economy", "--phase2_steps", "9", "--schedules", "fixed:0.1"],
         "--schedules fixed:0.1: one-step-economy trains ai-planner"),
        (["--scenario", "gather-trade-build", "--phase1_steps", "9", "--phase2_steps", "9",
          "--tax_annealing_fraction", "0"], "--tax_annealing_fraction 0.0: expected a positive"),
        (["--scenario", "gather-trade-build", "--phase1_steps", "9", "--phase2_steps", "9",
          "--tax_annealing_fraction", "inf"], "--tax_annealing_fraction inf: expected a positive"),
    ],
)  # fmt: skip
def test_bad_options_exit_2(tmp_path: Path, capsys, args: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main([*args, "--results_dir", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_bad_config_key_exits_2_before_training(tmp_path: Path, capsys) -> None:
    args = ["--scenario", "one-step-economy", "--phase2_steps", "9", "--results_dir",
            str(tmp_path / "out"), "trainer.num_envz=2"]  # fmt: skip
    assert cli.main(args) == 2
    assert "num_envz" in capsys.readouterr().err
    assert not (tmp_path / "out" / "phase2_ai-planner_seed0" / "train").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal without a GPU")
def test_cuda_without_gpu_exits_2(tmp_path: Path, capsys) -> None:
    args = ["--scenario", "one-step-economy", "--phase2_steps", "9", "--device", "cuda",
            "--results_dir", str(tmp_path / "out")]  # fmt: skip
    assert cli.main(args) == 2
    assert "no CUDA GPU" in capsys.readouterr().err


def test_one_step_protocol(tmp_path: Path) -> None:
    out = tmp_path / "one_step"
    args = ["--scenario", "one-step-economy", "--seeds", "0", "--phase2_steps", "1024",
            "--saez_episodes", "20", "--optimum_sweeps", "1", "--no_plot", "--results_dir",
            str(out), "trainer.num_envs=64", "trainer.train_batch_size=512"]  # fmt: skip
    assert cli.main(args) == 0
    rows = {r["schedule"]: r for r in csv.DictReader(open(out / report.CSV_NAME))}
    assert list(rows) == ["ai-planner", "ai-planner+trained-workers", "free-market",
                          "us-federal", "saez", "grid-optimum"]  # fmt: skip
    assert float(rows["free-market"]["taxes_collected"]) == 0.0
    # the packaged economy's seed 0 under US federal with best-responding workers
    # (docs/results/cpu-economy-learning-2026-11-30.md: welfare 3.080, productivity 286.6)
    assert float(rows["us-federal"]["welfare"]) == pytest.approx(3.080, abs=5e-4)
    assert float(rows["us-federal"]["productivity"]) == pytest.approx(286.6, abs=0.05)
    # the grid optimum ascends from the best start on the grid: it beats every schedule on
    # the planner's grid (the trained planner's, the free market's); off-grid ones (Saez,
    # US federal) may beat it
    on_grid = max(float(rows[n]["welfare"]) for n in ("ai-planner", "free-market"))
    assert float(rows["grid-optimum"]["welfare"]) >= on_grid
    rates = [float(rows["grid-optimum"][f"rate_{b}"]) for b in BRACKETS]
    np.testing.assert_allclose(np.round(np.array(rates) / 0.05) * 0.05, rates, atol=1e-12)
    assert not (out / report.PLOT_NAME).exists()


def test_sigterm_interrupts_and_a_rerun_resumes(tmp_path: Path) -> None:
    out = tmp_path / "stopped"
    args = ["--scenario", "one-step-economy", "--seeds", "0", "--phase2_steps", "6400",
            "--saez_episodes", "5", "--optimum_sweeps", "0", "--no_plot", "--results_dir",
            str(out), "trainer.num_envs=32", "trainer.train_batch_size=64"]  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-m", "ai_economist.training.tax_protocol", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    folder = out / "phase2_ai-planner_seed0"
    metrics = folder / "train" / "metrics.csv"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:  # training has started
        if metrics.exists() and len(metrics.read_text().splitlines()) >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["runs"]["phase2_ai-planner_seed0"]["status"] == "interrupted"
    stopped_at = load_checkpoint(find_checkpoint(folder / "train"))["env_steps"]
    assert 0 < stopped_at < 6400
    assert cli.main(args) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["runs"]["phase2_ai-planner_seed0"]["status"] == "done"
    assert f"resuming {folder / 'train'}" in (folder / "log.txt").read_text()
    result = json.loads((folder / "result.json").read_text())
    assert result["train_env_steps"] == 6400


def test_missing_matplotlib_names_the_plot_extra(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # find_spec: "not installed"
    args = ["--scenario", "one-step-economy", "--phase2_steps", "9", "--results_dir",
            str(tmp_path / "out")]  # fmt: skip
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert 'pip install "ai-economist[plot]"' in err and "--no_plot" in err
    assert not (tmp_path / "out").exists()

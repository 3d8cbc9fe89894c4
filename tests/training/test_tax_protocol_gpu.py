"""The tax protocol on the GPU: several runs side by side on one GPU (tiny budgets)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from gpu_helpers import require_gpu

from ai_economist.training.tax_protocol import cli, report

pytestmark = pytest.mark.gpu
require_gpu()


def test_gtb_protocol_on_one_gpu(tmp_path: Path) -> None:
    out = tmp_path / "gtb"
    args = ["--scenario", "gather-trade-build", "--seeds", "0", "1", "--phase1_steps", "200",
            "--phase2_steps", "200", "--workers", "4", "--eval_episodes", "1",
            "--saez_warmup_episodes", "1", "--device", "cuda", "--results_dir", str(out),
            "env.episode_length=100", "trainer.num_envs=2", "trainer.train_batch_size=100"]  # fmt: skip
    assert cli.main(args) == 0
    runs = json.loads((out / "manifest.json").read_text())["runs"]
    assert len(runs) == 10 and {e["status"] for e in runs.values()} == {"done"}
    result = json.loads((out / "phase2_saez_seed1" / "result.json").read_text())
    assert result["train_env_steps"] == 200
    rows = list(csv.DictReader(open(out / report.CSV_NAME)))
    assert len(rows) == 8 and (out / report.PLOT_NAME).is_file()


def test_one_step_protocol_on_one_gpu(tmp_path: Path) -> None:
    out = tmp_path / "one_step"
    args = ["--scenario", "one-step-economy", "--seeds", "0", "1", "2", "--phase2_steps",
            "4096", "--workers", "3", "--saez_episodes", "20", "--optimum_sweeps", "1",
            "--device", "cuda", "--results_dir", str(out), "trainer.num_envs=256",
            "trainer.train_batch_size=1024"]  # fmt: skip
    assert cli.main(args) == 0
    rows = list(csv.DictReader(open(out / report.CSV_NAME)))
    assert sorted({r["seed"] for r in rows}) == ["0", "1", "2"]

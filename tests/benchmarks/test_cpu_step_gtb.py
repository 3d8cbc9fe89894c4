"""CPU smoke test of ``benchmarks/cpu_step.py --env <gather-trade-build>`` (tiny settings)."""

from __future__ import annotations

import sys

import numpy as np
import pytest


@pytest.fixture
def cpu_step(import_benchmark):
    return import_benchmark("cpu_step")


def test_random_valid_actions_respect_every_sub_space_mask(cpu_step):
    rng = np.random.default_rng(0)
    mask = np.zeros(10, dtype=np.float32)
    mask[[0, 2, 5, 6, 9]] = 1  # sub-spaces of sizes 4, 3, 3: allowed {0, 2}, {1, 2}, {2}
    seen = {tuple(cpu_step.random_valid_action(mask, rng, [4, 3, 3])) for _ in range(200)}
    assert seen == {(0, 1, 2), (0, 2, 2), (2, 1, 2), (2, 2, 2)}
    assert {cpu_step.random_valid_action(mask, rng, None) for _ in range(200)} == {0, 2, 5, 6, 9}


def test_gtb_benchmark_prints_wall_and_cpu_rates(cpu_step, monkeypatch, capsys):
    monkeypatch.setattr(cpu_step, "pin_to_one_core", lambda: "not pinned")
    argv = ["cpu_step.py", "--env", "layout_from_file/simple_wood_and_stone", "--steps", "5",
            "--repeats", "1"]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    cpu_step.main()
    out = capsys.readouterr().out
    assert "phase-2 config, random valid actions), wall clock:" in out
    assert "CPU time:" in out and "ratio to 490" in out
    assert "env.step alone (sampling left out), CPU time:" in out

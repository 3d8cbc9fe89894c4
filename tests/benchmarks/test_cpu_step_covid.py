"""CPU smoke test of ``benchmarks/cpu_step.py`` for the COVID-19 dict API (tiny settings)."""

import sys

import pytest


@pytest.fixture
def cpu_step(import_benchmark):
    return import_benchmark("cpu_step")


def test_covid_benchmark_prints_wall_and_cpu_rates(cpu_step, monkeypatch, capsys):
    monkeypatch.setattr(cpu_step, "pin_to_one_core", lambda: "not pinned")
    argv = ["cpu_step.py", "--steps", "5", "--repeats", "1", "--batch_envs", "2",
            "--batch_steps", "2"]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    cpu_step.main()
    out = capsys.readouterr().out
    assert "dict API, 1 env (env.step, 51 states + planner):" in out
    assert "ratio to 357" in out and "the same, CPU time:" in out
    assert "array model,     2 envs (CovidSimulation.step):" in out

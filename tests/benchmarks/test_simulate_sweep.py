"""benchmarks/simulate_sweep.py: the sweep benchmark reports the machine, wall and CPU rates."""

from __future__ import annotations


def test_small_sweep_prints_machine_and_rates(import_benchmark, capsys):
    simulate_sweep = import_benchmark("simulate_sweep")

    assert simulate_sweep.sweep_for(10_000) == [
        "infection_intercept=0.5:1.5:50",
        "unemployment=0.5:1.5:50",
    ]  # 4 policies x 50 x 50 = 10,000 runs
    assert simulate_sweep.main(["--runs", "8", "--days", "5", "--workers", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("machine: ") and "cores; load average" in lines[0]
    assert lines[1].startswith("16 runs x 5 days with 1 worker(s): ")
    assert "runs per CPU second" in lines[2] and len(lines) == 3  # no verdict below 10,000

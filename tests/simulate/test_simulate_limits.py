"""Sweeps are sized before any work and refused beyond ``--max_runs``; ``--workers 0`` is
refused before the progress bar; schedule CSVs accept integer-valued floats (issue 25)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from ai_economist.simulate import ScheduleError, SweepError, run_sweep
from ai_economist.simulate.cli import main
from ai_economist.simulate.sweep import MAX_RUNS


def command(tmp_path, *args: str) -> int:
    return main([*args, "--days", "2", "--out", str(tmp_path / "out")])


def test_a_huge_range_is_refused_at_once_naming_its_size(tmp_path, capsys):
    start = time.perf_counter()
    code = command(tmp_path, "--policy", "open", "--sweep", "infection_intercept=0:1:100000000")
    assert code == 2 and time.perf_counter() - start < 5
    err = capsys.readouterr().err
    assert "100,000,000 runs" in err and f"limit of {MAX_RUNS:,} runs" in err
    assert "--max_runs" in err


def test_the_size_is_the_product_of_policies_and_swept_values(tmp_path, capsys):
    sweeps = ["--sweep", "unemployment=0:1:1000", "--sweep", "infection_intercept=0:1:1000"]
    assert command(tmp_path, "--policy", "open", "closed", *sweeps) == 2
    err = capsys.readouterr().err
    assert (
        "the sweep (2 policies x 1,000 unemployment x 1,000 infection_intercept) has "
        "2,000,000 runs" in err
    )


def test_max_runs_sets_the_limit(tmp_path, capsys):
    sweep = ["--sweep", "unemployment=0.8,1.0,1.2", "--no_progress", "--no_plots"]
    assert command(tmp_path, "--policy", "open", "closed", *sweep, "--max_runs", "5") == 2
    assert "has 6 runs, more than the limit of 5 runs" in capsys.readouterr().err
    assert command(tmp_path, "--policy", "open", "closed", *sweep, "--max_runs", "6") == 0
    with pytest.raises(SweepError, match="max_runs=0"):
        run_sweep(["open"], days=2, max_runs=0)
    with pytest.raises(SweepError, match="has 3 runs"):
        run_sweep(["open"], {"seed": [0, 1, 2]}, days=2, max_runs=2)


def test_workers_0_is_refused_before_the_progress_bar(tmp_path, capsys):
    assert command(tmp_path, "--policy", "open", "--workers", "0") == 2
    err = capsys.readouterr().err
    assert "workers=0: expected an integer >= 1" in err
    assert "simulating" not in err and "run/s" not in err  # no tqdm bar was drawn


def schedule(tmp_path, cells: list[str]) -> str:
    rows = "".join(f"{day},{cell},{cell}\n" for day, cell in enumerate(cells, start=1))
    (tmp_path / "s.csv").write_text("day,subsidy_level,stringency_level\n" + rows)
    return f"schedule:{tmp_path / 's.csv'}"


def test_schedule_cells_may_be_integer_valued_floats(tmp_path):
    as_floats = run_sweep([schedule(tmp_path, ["3.0", "7.0"])], days=2)
    as_ints = run_sweep([schedule(tmp_path, ["3", "7"])], days=2)
    assert np.array_equal(as_floats["planner_reward"], as_ints["planner_reward"])
    with pytest.raises(ScheduleError, match=r"'3\.5' is not an integer >= 0"):
        run_sweep([schedule(tmp_path, ["3.5", "7"])], days=2)
    with pytest.raises(ScheduleError, match=r"'-1\.0' is not an integer >= 0"):
        run_sweep([schedule(tmp_path, ["-1.0", "7"])], days=2)

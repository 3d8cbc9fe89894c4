"""Bad input to ``ai-economist-simulate`` / ``run_sweep``: each a named error, exit status 2."""

from __future__ import annotations

import socket

import pytest

from ai_economist.simulate import (
    RayConnectionError,
    ScheduleError,
    SimulateError,
    SweepError,
    UnknownPolicyError,
    run_sweep,
)
from ai_economist.simulate.cli import main
from ai_economist.simulate.parallel import check_ray_address
from ai_economist.simulate.sweep import parse_sweep


def test_unknown_policy_names_close_matches():
    with pytest.raises(
        UnknownPolicyError, match=r"Unknown policy 'clsoed'\. Did you mean 'closed'"
    ):
        run_sweep(["open", "clsoed"], days=2)
    with pytest.raises(UnknownPolicyError, match="fixed:CLOSE,DAYS,OPEN,SUBSIDY"):
        run_sweep(["fixed:10,180,1"], days=2)
    with pytest.raises(SimulateError, match="more than once"):
        run_sweep(["open", "open"], days=2)


def schedule(tmp_path, header: str, rows: int, name: str = "s.csv", cell: str = "5") -> str:
    columns = header.count(",") + 1
    body = "".join(f"{d}," + ",".join([cell] * (columns - 1)) + "\n" for d in range(1, rows + 1))
    (tmp_path / name).write_text(header + "\n" + body)
    return f"schedule:{tmp_path / name}"


@pytest.mark.parametrize(
    "header, rows, cell, message",
    [
        ("day,subsidy_level", 10, "5", r"2 columns .*expected 3 columns"),
        ("day,subsidy_level,stringency_level,extra", 10, "5", "4 columns"),
        ("day,subsidy_level,stringency_level", 9, "5", "has 9 days; the episode has 10"),
        ("day,subsidy_level,stringency_level", 11, "5", "has 11 days; the episode has 10"),
        ("day,subsidy_level,stringency_level", 10, "x", r"row 2, column 'subsidy_level': 'x'"),
        (
            "day,subsidy_level,stringency_level",
            10,
            "11",
            r"column 'stringency_level': 11 is above 10",
        ),
    ],
)
def test_bad_schedule_csv_names_file_and_problem(tmp_path, header, rows, cell, message):
    policy = schedule(tmp_path, header, rows, cell=cell)
    with pytest.raises(ScheduleError, match=message) as info:
        run_sweep([policy], days=10)
    assert "s.csv" in str(info.value)


def test_schedule_days_must_run_in_order(tmp_path):
    (tmp_path / "s.csv").write_text("day,subsidy_level,stringency_level\n1,0,5\n3,0,5\n")
    with pytest.raises(ScheduleError, match="row 3: day 3, expected day 2"):
        run_sweep([f"schedule:{tmp_path / 's.csv'}"], days=2)
    with pytest.raises(ScheduleError, match="cannot be read"):
        run_sweep([f"schedule:{tmp_path / 'missing.csv'}"], days=2)


@pytest.mark.parametrize(
    "text, message",
    [
        ("infection_intercept=", "has no values"),
        ("infection_intercept=1:2:0", "is empty"),
        ("infection_intercept=a,b", "'a' is not a number"),
        ("infection_intercept=1:x:3", "'x' is not a number"),
        ("infection_intercept=nan", "not a finite number"),
        ("infection_intercept=1:2", "is not START:STOP:NUM"),
        ("infection_intercept", "is not NAME="),
        ("infection_intercept=-1", "below the minimum 0"),
        ("seed=0.5", "is not an integer"),
        ("infection_rate=1", r"Unknown sweep parameter 'infection_rate'\. Did you mean"),
    ],
)
def test_bad_sweeps_are_named(text, message):
    with pytest.raises(SweepError, match=message):
        parse_sweep(text)


def test_sweep_values_from_python_are_checked_too():
    with pytest.raises(SweepError, match="has no values"):
        run_sweep(["open"], {"unemployment": []}, days=2)
    with pytest.raises(SweepError, match="is not a number"):
        run_sweep(["open"], {"unemployment": [None]}, days=2)
    assert parse_sweep("unemployment=0.5:1.5:3") == ("unemployment", (0.5, 1.0, 1.5))
    assert parse_sweep("seed=0:4:5")[1] == (0, 1, 2, 3, 4)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_ray_address_is_named():
    port = closed_port()
    with pytest.raises(
        RayConnectionError, match=f"cannot reach the Ray cluster at .*127.0.0.1:{port}"
    ):
        check_ray_address(f"127.0.0.1:{port}", timeout=1)
    with pytest.raises(RayConnectionError, match="is not HOST:PORT"):
        check_ray_address("nowhere")


def test_real_world_policies_need_an_episode_the_data_covers():
    with pytest.raises(SimulateError, match="at most 437 days"):
        run_sweep(["real-world"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["--policy", "clsoed"], "Did you mean 'closed'"),
        (["--policy", "open", "--sweep", "unemployment=1:2:0"], "is empty"),
        (["--policy", "open", "--sweep", "unemployment=high"], "is not a number"),
        (["--policy", "schedule:no/such.csv"], "cannot be read"),
        (["--policy", "checkpoint:no/such/run"], "does not exist"),
        (["--policy", "open", "--workers", "0"], "workers=0"),
    ],
)
def test_command_exits_2_with_the_message(tmp_path, capsys, args, message):
    assert main([*args, "--days", "3", "--out", str(tmp_path / "out"), "--no_progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ai-economist-simulate: error: ") and message in err


def test_command_rejects_an_unreachable_ray_address_and_a_file_as_output(tmp_path, capsys):
    address = f"127.0.0.1:{closed_port()}"
    assert main(["--policy", "open", "--ray_address", address, "--out", str(tmp_path)]) == 2
    assert "cannot reach the Ray cluster" in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    assert main(["--policy", "open", "--out", str(tmp_path / "file")]) == 2
    assert "is a file; expected a folder" in capsys.readouterr().err


def test_unknown_scenario_and_bad_lengths_are_named():
    with pytest.raises(
        SimulateError, match=r"Unknown scenario 'tutorail'\. Did you mean 'tutorial'"
    ):
        run_sweep(["open"], scenario="tutorail")
    with pytest.raises(SimulateError, match="days=0: expected an episode of at least 1 day"):
        run_sweep(["open"], days=0)
    with pytest.raises(SimulateError, match="chunk_size=0"):
        run_sweep(["open"], days=2, chunk_size=0)
    with pytest.raises(SimulateError, match="no policies given"):
        run_sweep([], days=2)

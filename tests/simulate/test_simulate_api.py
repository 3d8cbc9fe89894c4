"""``run_sweep``: the fixed policies' known planner sums, hand-checkable outcomes, CSV round
trips, and the same table for any chunking."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist.simulate import SweepTable, run_sweep, write_schedule_csv
from ai_economist.simulate.model import ModelKey, build_model, state_names
from ai_economist.simulate.plots import pareto_front, write_plots
from ai_economist.simulate.policies import fixed_schedule


@pytest.fixture(scope="module")
def fixed_540():
    return run_sweep(["open", "closed", "closed-180-then-open"])


def test_fixed_policies_have_the_known_planner_sums(fixed_540):
    sums = dict(zip(fixed_540["policy"], fixed_540["planner_reward"].round(2)))
    assert sums == {"open": 369.78, "closed": 371.09, "closed-180-then-open": 435.61}
    assert set(fixed_540["days"]) == {540} and set(fixed_540["health_priority"]) == {0.45}


def test_real_world_policies_on_the_tutorial_config():
    table = run_sweep(["real-world", "open"], scenario="tutorial")
    assert table["planner_reward"][0] == pytest.approx(349.06, abs=0.005)
    assert table["planner_reward"][1] == pytest.approx(183.81, abs=0.005)  # golden test value
    assert list(table["days"]) == [405, 405]


def test_subsidies_paid_are_the_full_budget_every_day(fixed_540):
    """Full subsidy (level 20 of 20) pays each state population * $20,000 / 365 a day."""
    params, _, _ = build_model(ModelKey("training", 540, 0.45, 0.3, 20000.0, 3000.0))
    expected = 540 * params.population.sum() * 20000 / 365 / 1e12
    paid = dict(zip(fixed_540["policy"], fixed_540["subsidy_trillions"]))
    assert paid["closed"] == pytest.approx(expected, rel=1e-12)
    assert paid["open"] == 0 and paid["closed-180-then-open"] == 0
    half = run_sweep(["closed"], {"subsidy_budget": [10000]}, days=30)
    assert half["subsidy_trillions"][0] == pytest.approx(
        30 * params.population.sum() * 10000 / 365 / 1e12, rel=1e-12
    )


def test_fixed_spelling_and_csv_schedules_equal_the_named_policy(tmp_path):
    names = state_names()
    stringency, subsidy = fixed_schedule(10, 20, 1, 0, 40, len(names))
    write_schedule_csv(tmp_path / "per_state.csv", stringency, subsidy, names)
    (tmp_path / "one.csv").write_text(
        "day,subsidy_level,stringency_level\n"
        + "".join(f"{d},0,{10 if d <= 20 else 1}\n" for d in range(1, 41))
    )
    policies = ["fixed:10,20,1,0", f"schedule:{tmp_path / 'per_state.csv'}",
                f"schedule:{tmp_path / 'one.csv'}"]  # fmt: skip
    table = run_sweep(policies, days=40)
    assert len(set(table["planner_reward"])) == 1 and len(set(table["deaths_thousands"])) == 1
    reference = run_sweep(["fixed:10,20,1,0", "open"], days=40)
    assert table["planner_reward"][0] == reference["planner_reward"][0]
    assert reference["planner_reward"][1] != reference["planner_reward"][0]


def test_modulations_move_the_outcomes_the_right_way():
    table = run_sweep(
        ["closed-180-then-open"],
        {"infection_intercept": [0.5, 1.0, 1.5], "unemployment": [1.0, 2.0]},
        days=240,
    )
    deaths = table.where(unemployment=1.0)["deaths_thousands"]
    assert deaths[0] < deaths[1] < deaths[2]
    at_one = table.where(infection_intercept=1.0)["mean_unemployment_rate_pct"]
    assert at_one[1] > at_one[0]
    assert len(table) == 6 and list(table["run"]) == list(range(6))


def test_health_priority_changes_rewards_not_the_epidemic():
    table = run_sweep(["closed"], {"health_priority": [0.2, 1.0]}, days=60)
    assert table["deaths_thousands"][0] == table["deaths_thousands"][1]
    assert table["planner_reward"][0] != table["planner_reward"][1]


def test_the_table_is_the_same_for_any_chunk_size():
    sweep = {"infection_intercept": [0.7, 1.0, 1.3], "unemployment": [0.9, 1.1]}
    policies = ["open", "closed", "fixed:6,10,2,5"]
    whole = run_sweep(policies, sweep, days=25, chunk_size=250)
    pieces = run_sweep(policies, sweep, days=25, chunk_size=4)
    assert whole.equals(pieces)


def test_csv_round_trip_is_exact(tmp_path, fixed_540):
    path = fixed_540.to_csv(tmp_path / "sweep.csv")
    back = SweepTable.from_csv(path)
    assert back.equals(fixed_540)
    assert back.names[:4] == ["run", "policy", "scenario", "days"]
    assert path.read_text().splitlines()[0].startswith("run,policy,scenario,days,")


def test_pareto_front_by_hand():
    x = np.array([1.0, 2.0, 3.0, 2.0, 0.5])
    y = np.array([5.0, 1.0, 0.5, 3.0, 9.0])
    assert pareto_front(x, y).tolist() == [4, 0, 1, 2]


def test_plots_are_written(tmp_path, fixed_540):
    pytest.importorskip("matplotlib")
    paths = write_plots(fixed_540, tmp_path)
    assert [p.name for p in paths] == ["frontier.png", "welfare.png"]
    assert all(p.stat().st_size > 1000 for p in paths)

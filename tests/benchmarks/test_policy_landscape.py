"""benchmarks/policy_landscape.py: fixed schedules on the array model (CPU)."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def landscape(import_benchmark):
    policy_landscape = import_benchmark("policy_landscape")
    from ai_economist import foundation
    from ai_economist.training.config import default_config_path, load_yaml

    config = load_yaml(default_config_path("covid_and_economy_environment"))
    env = foundation.make_env_instance("CovidAndEconomySimulation", **config["env"])
    return policy_landscape, env


def test_discounting_weights_each_day(landscape):
    module, env = landscape
    rows = np.array([module.BASELINES["closed 180 days, then open, no subsidy"], [6, 540, 6, 0]])
    planner, states = module.evaluate(env, rows)
    assert planner[0] == pytest.approx(435.61, abs=0.005)  # the learning check's best baseline
    discounted, _ = module.evaluate(env, rows, discount=0.5)
    # with discount 0.5 the sum is dominated by the first days: between r_1 and 2 * max r
    assert 0.8 < discounted[1] < 2.0 and discounted[1] < planner[1] / 100


def test_full_subsidy_costs_the_planner_under_random_states(landscape):
    module, env = landscape
    cost = module.random_states_subsidy_cost(env, num_envs=3)
    assert cost.shape == (3,) and np.all(cost > 10.0) and np.all(cost < 12.5)


def test_schedules_option_parses_like_fixed_policies(import_benchmark):
    policy_landscape = import_benchmark("policy_landscape")

    assert policy_landscape.parse_schedule("6,540,6,20") == (6, 540, 6, 20)
    with pytest.raises(SystemExit, match=r"--schedules: expected CLOSE,DAYS,OPEN,SUBSIDY"):
        policy_landscape.parse_schedule("6,540,6")
    with pytest.raises(SystemExit, match=r"subsidy levels 0 to 20, got '6,540,6,21'"):
        policy_landscape.parse_schedule("6,540,6,21")

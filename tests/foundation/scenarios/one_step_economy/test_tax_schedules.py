"""Best-responding workers and schedule scoring (one_step_economy/schedules.py)."""

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.scenarios.one_step_economy import array_model as am
from ai_economist.foundation.scenarios.one_step_economy import schedules

ENV = {
    "n_agents": 4,
    "world_size": [1, 1],
    "episode_length": 2,
    "seed": 3,
    "agent_reward_type": "isoelastic_coin_minus_labor",
    "labor_cost": 0.7,
    "components": [{"SimpleLabor": {}}, {"PeriodicBracketTax": {"period": 2}}],
}


def params():
    return am.OneStepParams.from_env(foundation.make_env_instance("one-step-economy", **ENV))


def test_no_tax_best_response_is_each_agents_own_optimum():
    p = params()
    hours = schedules.best_response_hours(p, np.zeros(7))
    h = np.arange(101)
    for i, s in enumerate(p.skills):
        util = ((h * s) ** 0.77 - 1) / 0.77 - 0.7 * h
        assert hours[i] == int(np.argmax(util))


def test_equilibrium_under_taxes_has_no_profitable_deviation():
    p = params()
    rates = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
    hours = schedules.best_response_hours(p, rates)
    fixed = {"tax_model": "fixed-bracket-rates", "fixed_bracket_rates": rates.tolist(), "period": 2}
    env = foundation.make_env_instance(
        "one-step-economy",
        **{**ENV, "components": [{"SimpleLabor": {}}, {"PeriodicBracketTax": fixed}]},
    )
    for i in range(4):
        for deviation in (hours[i] - 1, hours[i] + 1):
            if not 0 <= deviation <= 100:
                continue
            trial = hours.copy()
            trial[i] = deviation
            env.reset()
            env.step({})
            env.step({str(k): int(v) for k, v in enumerate(hours)})
            at_equilibrium = env.curr_optimization_metrics[i]
            env.reset()
            env.step({})
            env.step({str(k): int(v) for k, v in enumerate(trial)})
            assert env.curr_optimization_metrics[i] <= at_equilibrium + 1e-9


def test_evaluate_schedule_matches_the_dict_env():
    p = params()
    rates = np.array([0.1, 0.12, 0.22, 0.24, 0.32, 0.35, 0.37])
    result = schedules.evaluate_schedule(p, rates, [10, 20, 30, 40])
    tax = {"tax_model": "us-federal-single-filer-2018-scaled", "period": 2}
    env = foundation.make_env_instance(
        "one-step-economy",
        **{**ENV, "components": [{"SimpleLabor": {}}, {"PeriodicBracketTax": tax}]},
    )
    env.reset()
    env.step({})
    env.step({"0": 10, "1": 20, "2": 30, "3": 40})
    metrics = env.previous_episode_metrics
    assert result["welfare"] == pytest.approx(metrics["util/p"])
    assert result["productivity"] == pytest.approx(metrics["social/productivity"])
    assert result["taxes"] == pytest.approx(metrics["PeriodicTax/total_collected_taxes"])


def test_saez_rates_are_valid_rates():
    rates = schedules.saez_rates(ENV, episodes=130)  # 4 agents: 125 episodes fill the buffer
    assert rates.shape == (7,) and np.all((rates >= 0) & (rates <= 1))

"""SimpleLabor and WealthRedistribution rules on hand-made cases."""

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.components.redistribution import equal_coin_shares
from ai_economist.foundation.components.simple_labor import labor_step, pareto_skills


def make_env(components, n_agents=3, seed=0):
    return foundation.make_env_instance(
        "one-step-economy",
        components=components,
        n_agents=n_agents,
        world_size=[1, 1],
        episode_length=2,
        seed=seed,
    )


def test_labor_step_by_hand():
    coin, labor, prod = labor_step(
        [0, 10, 3], [1.5, 2.0, 3.0], [1.0, 1.0, 1.0], [7.0, 0.0, 0.0], [0.0, 0.0, 2.0]
    )
    np.testing.assert_allclose(coin, [1.0, 21.0, 10.0])
    np.testing.assert_allclose(labor, [7.0, 10.0, 3.0])  # NO-OP keeps the old labour; work sets it
    np.testing.assert_allclose(prod, [0.0, 20.0, 11.0])


def test_skills_sorted_clipped_and_shape_param_used():
    rng = np.random.default_rng(0)
    skills = pareto_skills(10, 3.0, 4.0, rng)
    assert np.all(np.diff(skills) > 0)
    assert skills[0] >= 1.0 and skills[-1] <= 3.0
    heavy = pareto_skills(10, 3.0, 1.5, np.random.default_rng(0))
    assert heavy.mean() > skills.mean()  # a heavier tail gives more skill: pareto_param is used


def test_simple_labor_in_env():
    env = make_env([("SimpleLabor", {"payment_max_skill_multiplier": 3})])
    obs = env.reset()
    labor = env.get_component("SimpleLabor")
    assert obs["0"]["action_mask"].sum() == 1  # first step: every hour masked (NO-OP only)
    skills = labor.skills
    for i, agent in enumerate(env.world.agents):
        assert agent.state["skill"] == pytest.approx(skills[i])
    obs, *_ = env.step({})
    assert obs["0"]["action_mask"].sum() == 101
    obs, *_ = env.step({"0": 20, "2": 100})
    assert env.world.agents[0].inventory["Coin"] == pytest.approx(20 * skills[0])
    assert env.world.agents[0].endogenous["Labor"] == 20
    assert env.world.agents[1].inventory["Coin"] == 0
    assert env.world.agents[2].state["production"] == pytest.approx(100 * skills[2])
    assert obs["2"]["flat"][0] == pytest.approx(skills[2] / 3)  # SimpleLabor-skill sorts first


def test_simple_labor_bad_input():
    with pytest.raises(TypeError, match="mask_first_step"):
        make_env([("SimpleLabor", {"mask_first_step": "yes"})])
    with pytest.raises(ValueError, match="payment_max_skill_multiplier"):
        make_env([("SimpleLabor", {"payment_max_skill_multiplier": 1})])


def test_equal_coin_shares_by_hand():
    np.testing.assert_allclose(
        equal_coin_shares([10.0, 0.0, 2.0], [0.0, 3.0, 0.0]), [5.0, 2.0, 5.0]
    )


def test_wealth_redistribution_equalises_and_conserves():
    env = make_env([("SimpleLabor", {"mask_first_step": False}), ("WealthRedistribution", {})])
    env.reset()
    env.step({"0": 50, "1": 5})
    coin = [a.total_endowment("Coin") for a in env.world.agents]
    skills = env.get_component("SimpleLabor").skills
    np.testing.assert_allclose(coin, [(50 * skills[0] + 5 * skills[1]) / 3] * 3)


def test_taxes_collected_equal_lump_sum_transfers():
    """Invariant: the revenue of a tax day is paid back in full; total coin is conserved."""
    tax = {
        "period": 2,
        "tax_model": "fixed-bracket-rates",
        "fixed_bracket_rates": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7],
    }
    env = make_env([("SimpleLabor", {}), ("PeriodicBracketTax", tax)], n_agents=5, seed=2)
    rng = np.random.default_rng(0)
    for _ in range(3):
        env.reset(force_dense_logging=True)
        env.step({})
        hours = rng.integers(0, 101, size=5)
        env.step({str(i): int(h) for i, h in enumerate(hours)})
        component = env.get_component("PeriodicTax")
        day = component.taxes[-1]
        paid = sum(day[str(i)]["tax_paid"] for i in range(5))
        transfers = sum(day[str(i)]["lump_sum"] for i in range(5))
        assert paid == pytest.approx(transfers)
        assert paid == pytest.approx(component.total_collected_taxes)
        production = sum(a.state["production"] for a in env.world.agents)
        assert sum(a.total_endowment("Coin") for a in env.world.agents) == pytest.approx(production)
        for i in range(5):
            assert day[str(i)]["tax_paid"] == pytest.approx(
                component.taxes_due(day[str(i)]["income"])
            )
    log = env.previous_episode_dense_log["PeriodicTax"]
    assert log[0] == [] and log[1]["0"]["lump_sum"] == pytest.approx(paid / 5)

"""The one-step economy through the dict API: rewards, observations, metrics, bad input."""

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.scenarios.utils import rewards, social_metrics


def make_env(tax=None, n_agents=4, **kw):
    tax = {"period": 2, **(tax or {})}
    return foundation.make_env_instance(
        "one-step-economy",
        components=[("SimpleLabor", {}), ("PeriodicBracketTax", tax)],
        n_agents=n_agents,
        world_size=[1, 1],
        episode_length=2,
        seed=1,
        **kw,
    )


def test_shapes_as_the_original():
    env = make_env(n_agents=10)
    obs = env.reset()
    assert obs["0"]["action_mask"].shape == (101,)
    np.testing.assert_array_equal(env.world.planner.action_spaces, [22] * 7)
    assert sorted(k for k in obs["p"] if k.startswith("p")) == [f"p{i}" for i in range(10)]
    assert obs["p"]["p3"].shape == (3,)


def test_rewards_without_taxes_by_hand():
    env = make_env()  # model_wrapper, planner NO-OP: every rate stays 0
    env.reset()
    _, rew, done, _ = env.step({})
    assert all(v == 0 for v in rew.values()) and not done["__all__"]
    hours = [10, 20, 0, 40]
    _, rew, done, _ = env.step({str(i): h for i, h in enumerate(hours)})
    skills = env.get_component("SimpleLabor").skills
    util = np.array([h * s - h**2 for h, s in zip(hours, skills)])  # coin - 1.0 * labour^2
    for i in range(4):
        assert rew[str(i)] == pytest.approx(util[i])
    production = np.array(hours) * skills
    assert rew["p"] == pytest.approx(rewards.inv_income_weighted_utility(production, util))
    assert done["__all__"]
    metrics = env.previous_episode_metrics
    assert metrics["social/productivity"] == pytest.approx(production.sum())
    assert metrics["social/equality"] == pytest.approx(social_metrics.get_equality(production))
    assert metrics["endogenous/avg_agent/Labor"] == pytest.approx(np.mean(hours))
    assert metrics["util/avg_agent"] == pytest.approx(util.mean())


def test_isoelastic_and_equality_planner():
    env = make_env(
        agent_reward_type="isoelastic_coin_minus_labor",
        isoelastic_eta=0.5,
        labor_cost=0.1,
        planner_reward_type="coin_eq_times_productivity",
        mixing_weight_gini_vs_coin=0.25,
    )
    env.reset()
    env.step({})
    _, rew, _, _ = env.step({"0": 16, "1": 4})
    skills = env.get_component("SimpleLabor").skills
    coin = np.array([16 * skills[0], 4 * skills[1], 0, 0])
    labor = np.array([16, 4, 0, 0])
    util = (coin**0.5 - 1) / 0.5 - 0.1 * labor
    base = -2.0  # utility of zero coin and labour: (0 - 1) / 0.5
    assert rew["0"] == pytest.approx(util[0] - base)
    assert rew["3"] == pytest.approx(0.0)
    assert rew["p"] == pytest.approx(rewards.coin_eq_times_productivity(coin, 0.75))


def test_planner_observations():
    env = make_env()
    env.reset()
    env.step({})
    obs, *_ = env.step({"0": 50})
    coin = 50 * env.get_component("SimpleLabor").skills[0]
    # flat (sorted keys): PeriodicBracketTax-{curr_rates(7), is_first_day, is_tax_day,
    # last_incomes(4), tax_phase}, time, world-equality, world-normalized_per_capita_productivity
    flat = obs["p"]["flat"]
    assert flat[-1] == pytest.approx(coin / 4 / 1000)
    assert flat[-2] == pytest.approx(
        social_metrics.get_equality(np.array([coin, 0, 0, 0])), rel=1e-6
    )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"agent_reward_type": "coin_minus_labour_cost"}, "Did you mean 'coin_minus_labor_cost'"),
        (
            {"planner_reward_type": "inv_income_weighted_utilities"},
            "Did you mean 'inv_income_weighted_utility'",
        ),
        ({"isoelastic_eta": 1.5}, "isoelastic_eta"),
        ({"labor_exponent": 1.0}, "labor_exponent"),
        ({"mixing_weight_gini_vs_coin": -0.1}, "mixing_weight_gini_vs_coin"),
    ],
)
def test_bad_scenario_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_env(**kwargs)


def test_unknown_scenario_name_lists_it():
    with pytest.raises(KeyError, match="one-step-economy"):
        foundation.make_env_instance("one-step-economyy")

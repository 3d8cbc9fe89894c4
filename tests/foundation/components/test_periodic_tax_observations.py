"""PeriodicBracketTax's cached observations equal the uncached computation, step by step,
through tax days and rate changes (model_wrapper, Saez, US federal, taxes disabled)."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.components import tax_brackets as tb
from ai_economist.foundation.scenarios.simple_wood_and_stone import configs


def uncached_observations(tax) -> dict:
    """The observations computed from scratch (the code before the cache)."""
    common = {
        "is_tax_day": float(tax.tax_cycle_pos >= tax.period),
        "is_first_day": float(tax.tax_cycle_pos == 1),
        "tax_phase": tax.tax_cycle_pos / tax.period,
        "last_incomes": np.sort(np.asarray(tax.last_income, dtype=np.float64) / tax.period),
        "curr_rates": tax._curr_rates_obs,
    }
    agents = tax.world.agents
    coin = np.array([a.total_endowment("Coin") for a in agents], dtype=np.float64)
    curr = tb.marginal_rate(coin - tax.last_coin, tax.bracket_cutoffs, tax.curr_marginal_rates)
    obs = {tax.world.planner.idx: dict(common)}
    for i, agent in enumerate(agents):
        obs[str(agent.idx)] = {**common, "marginal_rate": float(curr[i])}
        obs["p" + str(agent.idx)] = {
            "last_income": float(tax.last_income[i] / tax.period),
            "last_marginal_rate": float(tax.last_marginal_rate[i]),
            "curr_marginal_rate": float(curr[i]),
        }
    return obs


def assert_same(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for k in want:
        assert got[k].keys() == want[k].keys(), k
        for name, value in want[k].items():
            np.testing.assert_array_equal(got[k][name], value, err_msg=f"{k}/{name}")


def random_action(agent, mask, rng):
    allowed = np.flatnonzero(mask)
    if not agent.multi_action_mode:
        return int(rng.choice(allowed))
    starts = np.cumsum([0] + list(agent.action_spaces))
    return [int(rng.choice(np.flatnonzero(mask[lo:hi]))) for lo, hi in zip(starts, starts[1:])]


@pytest.mark.parametrize(
    "tax_settings",
    [
        {},  # model_wrapper: the planner picks random rates every period
        {"tax_model": "saez"},
        {"tax_model": "us-federal-single-filer-2018-scaled", "tax_annealing_schedule": None},
        {"disable_taxes": True},
    ],
    ids=["model_wrapper", "saez", "us-federal", "disabled"],
)
def test_cached_observations_equal_the_uncached_ones(tax_settings):
    kwargs = configs.env_config(configs.PHASE2_ENV_CONFIG)
    kwargs.update(episode_length=60, dense_log_frequency=None)
    for spec in kwargs["components"]:
        if "PeriodicBracketTax" in spec:
            spec["PeriodicBracketTax"].update(period=7, **tax_settings)
    env = foundation.make_env_instance(configs.SCENARIO_NAME, seed=3, **kwargs)
    tax = env.get_component("PeriodicBracketTax")
    rng = np.random.default_rng(0)
    incomes_seen = set()
    for _episode in range(2):
        obs = env.reset()
        assert_same(tax.generate_observations(), uncached_observations(tax))
        for _ in range(env.episode_length):
            actions = {
                str(a.idx): 1 if a.idx != "p" and obs[str(a.idx)]["action_mask"][1]
                else random_action(a, obs[str(a.idx)]["action_mask"], rng)
                for a in env.all_agents
            }  # fmt: skip
            obs, _, _, _ = env.step(actions)
            assert_same(tax.generate_observations(), uncached_observations(tax))
            incomes_seen.add(tuple(np.round(tax.last_income, 6)))
    assert len(incomes_seen) > 2  # tax days with incomes happened


def test_live_rate_key_is_the_table_bytes_and_indices_for_discretized_rates():
    kwargs = configs.env_config(configs.PHASE2_ENV_CONFIG)
    env = foundation.make_env_instance(configs.SCENARIO_NAME, seed=3, **kwargs)
    tax = env.get_component("PeriodicBracketTax")
    env.reset()
    tax.disc_rates = np.array([0.0, 0.25, 0.5])
    tax.curr_rate_indices = [2, 0, 1, 1, 0, 2, 0]
    assert tax._indexed_rates()
    assert tax._live_rate_list() == [0.5, 0.0, 0.25, 0.25, 0.0, 0.5, 0.0]
    assert tax._live_rate_key() == (np.array([0.0, 0.25, 0.5]).tobytes(), (2, 0, 1, 1, 0, 2, 0))
    tax.curr_rate_indices = np.array([2, 0, 1, 1, 0, 2, 0])  # not a list: the rates themselves
    assert not tax._indexed_rates()
    assert tax._live_rate_key() == [0.5, 0.0, 0.25, 0.25, 0.0, 0.5, 0.0]

"""The GPU tax's numpy reference (:mod:`...gpu.tax_reference`) against ``array_tax`` (the
batched truth, itself equal to the dict component) on random incomes for every tax model,
and one hand-computed tax day."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ai_economist.foundation.scenarios.one_step_economy import gpu_saez
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_tax
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import tax_reference as tr
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.tax_env import (
    GatherTradeBuildTaxGpu,
    paper_tax,
)

MODELS = ["model_wrapper", "us-federal-single-filer-2018-scaled", "fixed-bracket-rates", "saez"]


class ReplayUniform:
    """An env's generator for ``SaezTracker``: ``uniform(low, high, n)`` from the GPU draws
    (``gpu_saez.uniform_draws`` of the run's seed, the env and its draw counter)."""

    def __init__(self, seed: int, env: int) -> None:
        self.seed, self.env, self.count = seed, env, 0

    def uniform(self, low: float, high: float, size: int) -> np.ndarray:
        u = gpu_saez.uniform_draws(self.seed, self.env, self.count + np.arange(size))
        self.count += size
        return low + (high - low) * u


def drive(model: str, steps: int, n_agents: int = 10, num_envs: int = 3, **tax):
    """Step the reference and ``array_tax`` on the same random incomes and planner picks;
    yield after every step ``(state, mirror, coin, escrow)``."""
    params = paper_tax(model, **tax)
    env = GatherTradeBuildTaxGpu(params, n_agents=n_agents, episode_length=10**6)
    state = env.initial_state(num_envs, seed=7)
    state["_timestep_"] = np.zeros(num_envs, np.int32)
    seed = int(state["rng_seed"])
    rngs = [ReplayUniform(seed, e) for e in range(num_envs)]
    mirror = array_tax.initial_state(params, num_envs, n_agents, rngs if model == "saez" else None)
    completions = np.zeros(num_envs, dtype=np.int64)
    coin, escrow = state["inventory"][..., 0].copy(), state["escrow"][..., 0].copy()
    array_tax.reset_envs(mirror, params, np.ones(num_envs, bool), coin + escrow, completions)
    rng = np.random.default_rng(3)
    for step in range(steps):
        completions = completions + (step % 4 == 3)  # the annealed limit moves
        state["tax_rate_completions"][:] = completions
        d_inv = rng.uniform(-2, 30, coin.shape) * (rng.random(coin.shape) < 0.8)
        d_esc = rng.uniform(0, 5, coin.shape) * (rng.random(coin.shape) < 0.3)
        coin = np.maximum(coin + d_inv - d_esc, 0.0)
        escrow = escrow + d_esc
        state["inventory"][..., 0], state["escrow"][..., 0] = coin, escrow
        picks = rng.integers(0, params.disc_rates.size + 1, (num_envs, params.n_brackets))
        tr.saez_first_day(state, params, seed)
        tr.tax_step(state, params, picks if params.planner_sets_rates else None)
        between = array_tax.saez_between(params, mirror, completions)
        if between is not None:
            for e in np.flatnonzero(between[0]):
                between[1](e)
        actions = array_tax.check_planner_actions(params, picks, num_envs)
        array_tax.tax_step(params, mirror, actions, coin, escrow, completions)
        yield state, mirror, coin, escrow, completions


def assert_equal_states(state, mirror, coin, completions, params):
    for k, name in tr._PAIRS:
        np.testing.assert_array_equal(state[name], getattr(mirror, k), err_msg=name)
    np.testing.assert_array_equal(state["inventory"][..., 0], coin)
    common, per_agent = array_tax.tax_observations(params, mirror, coin + state["escrow"][..., 0],
                                                   completions)  # fmt: skip
    got_common, got_agent = tr.tax_fields(state, params)
    for key in common:
        np.testing.assert_array_equal(got_common[key], common[key], err_msg=key)
    for key in per_agent:
        np.testing.assert_array_equal(got_agent[key], per_agent[key], err_msg=key)


@pytest.mark.parametrize("model", MODELS)
def test_reference_is_array_tax_on_random_incomes(model):
    # 10 agents (numpy's pairwise sums), period 3, annealing: bit for bit
    params = paper_tax(model, period=3, annealing=(2.0, 0.25))
    days = 0
    for state, mirror, coin, _, completions in drive(model, 24, period=3, annealing=(2.0, 0.25)):
        assert_equal_states(state, mirror, coin, completions, params)
        days += int(state["tax_cycle_pos"][0] == 1)
    assert days == 8 and (state["total_collected"] > 0).all()


def test_saez_reference_is_array_tax_through_the_formula():
    # period 1, 10 agents: the buffers fill after 50 tax days, then the formula sets the rates
    params = paper_tax("saez", period=1)
    for state, mirror, coin, _, completions in drive("saez", 56, period=1):
        assert_equal_states(state, mirror, coin, completions, params)
    assert state["saez_reached"].tolist() == [1, 1, 1]
    for e in range(3):
        assert state["saez_elas"][e] == mirror.saez[e].elas_t
        np.testing.assert_array_equal(state["saez_running_avg"][e],
                                      mirror.saez[e].running_avg_tax_rates)  # fmt: skip


def test_a_hand_computed_tax_day():
    # brackets [0, 10), [10, 20), [20, inf) at 10 %, 20 %, 50 %; period 2
    params = paper_tax("fixed-bracket-rates", period=2, cutoffs=np.array([0.0, 10.0, 20.0]),
                       fixed_rates=np.array([0.1, 0.2, 0.5]))  # fmt: skip
    env = GatherTradeBuildTaxGpu(params, n_agents=2, start_coin=[5.0, 0.0])
    state = env.initial_state(1, seed=0)
    state["_timestep_"] = np.zeros(1, np.int32)
    tr.tax_step(state, params, None)  # first day: no tax
    # agent 0 earned 25 (last coin 5); agent 1 earned 4, all but 0.3 of it in escrow
    state["inventory"][0, :, 0] = [30.0, 0.3]
    state["escrow"][0, :, 0] = [0.0, 3.7]
    assert tr.tax_step(state, params, None).tolist() == [True]
    # agent 0 owes 1 + 2 + 2.5 = 5.5; agent 1 owes 0.4 but pays its 0.3 inventory coin
    np.testing.assert_allclose(state["last_lump_sum"], [2.9], rtol=0, atol=1e-12)
    np.testing.assert_allclose(state["total_collected"], [5.8], rtol=0, atol=1e-12)
    np.testing.assert_allclose(state["inventory"][0, :, 0], [27.4, 2.9], rtol=0, atol=1e-12)
    np.testing.assert_allclose(state["last_coin"][0], [27.4, 6.6], rtol=0, atol=1e-12)
    np.testing.assert_allclose(state["last_income"][0], [25.0, 4.0], rtol=0, atol=1e-12)
    assert state["last_marginal_rate"][0].tolist() == [0.5, 0.1]
    assert state["tax_cycle_pos"].tolist() == [1]


def test_planner_masks_open_on_first_days_under_the_annealed_limit():
    params = paper_tax(period=2, annealing=(1.0, 0.5))
    env = GatherTradeBuildTaxGpu(params, n_agents=2)
    state = env.initial_state(2, seed=0)
    masks = tr.planner_masks(state, params, np.array([0, 2]))
    assert masks.shape == (2, 7, 22)
    assert masks[0, :, 1:].sum() == 7 and masks[0, :, 1].all()  # limit 0: only rate 0
    assert (masks[1, :, 1:].sum(axis=-1) == 11).all()  # limit 0.5: rates 0, 0.05, ..., 0.5
    state["tax_cycle_pos"][:] = 2
    assert tr.planner_masks(state, params, np.array([0, 2]))[..., 1:].sum() == 0


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [({"n_agents": 1}, "n_agents=1"), ({"n_agents": 30}, "2..29"),
     ({"params": paper_tax(cutoffs=np.arange(17.0), fixed_rates=np.zeros(17))}, "n_brackets=17"),
     ({"params": paper_tax(disc_rates=np.linspace(0, 1, 129))}, "len(disc_rates)=129"),
     ({"income_unit": [1.0]}, "income_unit")],
)  # fmt: skip
def test_unsupported_settings_name_the_setting(kwargs, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        GatherTradeBuildTaxGpu(**kwargs)

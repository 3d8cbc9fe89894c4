"""The gather-trade-build array economy (Build, market, Gather, tax) against N dict envs,
step for step, with random valid actions (many market and tax actions), and its invariants."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.components import cda_batched as cb
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy as ae
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy_obs as aeo
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rules, array_tax
from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import (
    PHASE1_ENV_CONFIG,
    PHASE2_ENV_CONFIG,
    SCENARIO_NAME,
    env_config,
)

INVENTORY = array_rules.INVENTORY
TAX = "PeriodicBracketTax"


def economy_config(phase, episode_length=100, period=20, published=False, **tax_overrides):
    """The published config, shorter episodes and tax periods; unless ``published``, random
    starts with some coin (so that the agents trade from the first steps)."""
    config = env_config(phase)
    config.update(episode_length=episode_length, dense_log_frequency=None)
    if not published:
        config.update(starting_agent_coin=30.0, fixed_four_skill_and_loc=False)
    config["components"][3][TAX].update(period=period, **tax_overrides)
    return config


def sample(obs, n_agents, rng):
    """Random valid actions from the dict envs' masks: a build when allowed (30 %), else a
    market order when one is allowed (60 %), else any allowed action; the planner picks a
    random allowed rate per bracket (its NO-OP a third of the time)."""
    agents = np.zeros((len(obs), n_agents), dtype=np.int64)
    planner = []
    for e, o in enumerate(obs):
        for i in range(n_agents):
            mask = o[str(i)]["action_mask"]
            valid = np.flatnonzero(mask)
            market = valid[(valid >= 2) & (valid < mask.size - 4)]
            u = rng.random()
            if mask[1] and u < 0.3:
                agents[e, i] = 1
            elif market.size and u < 0.9:
                agents[e, i] = rng.choice(market)
            else:
                agents[e, i] = rng.choice(valid)
        pmask = o["p"]["action_mask"].reshape(7, -1) if o["p"]["action_mask"].size > 1 else None
        if pmask is not None:
            rates = [
                int(rng.choice(np.flatnonzero(m[1:])) + 1) if m[1:].any() else 0 for m in pmask
            ]
            planner.append([r if rng.random() > 0.33 else 0 for r in rates])
    return agents, (np.array(planner, dtype=np.int64) if planner else None)


def assert_same_state(envs, state, params):
    w = state.world
    for e, env in enumerate(envs):
        agents = env.world.agents
        assert w.rngs[e].bit_generator.state == env.world.rng.bit_generator.state
        assert w.timestep[e] == env.world.timestep
        np.testing.assert_array_equal(w.locs[e], [a.loc for a in agents])
        for field in ("inventory", "escrow"):
            want = [[a.state[field][k] for k in INVENTORY] for a in agents]
            np.testing.assert_array_equal(getattr(w, field)[e], want, err_msg=field)
        np.testing.assert_array_equal(w.labor[e], [a.state["endogenous"]["Labor"] for a in agents])
        np.testing.assert_array_equal(w.resource_maps[e, 0], env.world.maps.get("Stone"))
        np.testing.assert_array_equal(w.resource_maps[e, 1], env.world.maps.get("Wood"))
        np.testing.assert_array_equal(w.house_owner[e], env.world.maps.get("House", owner=True))
        cda = env.get_component("ContinuousDoubleAuction")
        m = state.market
        for c, r in enumerate(params.market.commodities):
            for side, price, created, key in (
                ("bids", m.bid_price, m.bid_created, "bid"),
                ("asks", m.ask_price, m.ask_created, "ask"),
            ):
                who = "buyer" if key == "bid" else "seller"
                want = sorted((o[who], o[key], o[f"{key}_lifetime"]) for o in getattr(cda, side)[r])
                a, k = np.nonzero(price[e, c] != cb.EMPTY)
                ages = (m.step[e] - created[e, c, a, k]).tolist()
                assert sorted(zip(a.tolist(), price[e, c, a, k].tolist(), ages)) == want
        np.testing.assert_array_equal(m.books[e], cda._books)
        tax = env.get_component(TAX)
        assert state.tax.cycle_pos[e] == tax.tax_cycle_pos
        rates = array_tax.current_rates(params.tax, state.tax, state.mask_completions)
        np.testing.assert_array_equal(rates[e], tax.curr_marginal_rates)
        np.testing.assert_array_equal(state.tax.last_coin[e], tax.last_coin)
        assert state.tax.total_collected[e] == tax.total_collected_taxes


def assert_same_observations(obs, state, params, maps=False):
    o = aeo.observations(state, params)
    for e, ob in enumerate(obs):
        for i in range(params.world.n_agents):
            np.testing.assert_array_equal(o["agent_flat"][e, i], ob[str(i)]["flat"])
            np.testing.assert_array_equal(o["agent_masks"][e, i], ob[str(i)]["action_mask"])
            np.testing.assert_array_equal(o["planner_agents"][e, i], ob["p"][f"p{i}"])
            if maps:
                np.testing.assert_array_equal(o["world_map"][e, i], ob[str(i)]["world-map"])
                np.testing.assert_array_equal(o["world_idx_map"][e, i], ob[str(i)]["world-idx_map"])
        np.testing.assert_array_equal(o["planner_flat"][e], ob["p"]["flat"])
        np.testing.assert_array_equal(o["planner_masks"][e], ob["p"]["action_mask"])


def run_parity(config, seeds, steps, rng):
    """Step dict envs and the array economy side by side; returns counts of what happened."""
    envs = [foundation.make_env_instance(SCENARIO_NAME, seed=s, **config) for s in seeds]
    obs = [env.reset() for env in envs]
    params = ae.EconomyParams.from_env(envs[0])
    state = ae.initial_state(params, seeds)
    assert_same_state(envs, state, params)
    assert_same_observations(obs, state, params, maps=True)
    counts = {"trades": 0, "tax_days": 0, "taxes": 0.0, "rate_picks": 0, "resets": 0}
    for t in range(steps):
        agents, planner = sample(obs, params.world.n_agents, rng)
        results = []
        for e, env in enumerate(envs):
            actions = {str(i): int(a) for i, a in enumerate(agents[e])}
            if planner is not None:
                actions["p"] = planner[e].tolist()
                counts["rate_picks"] += int((planner[e] > 0).sum())
            results.append(env.step(actions))
        obs = [r[0] for r in results]
        collected = state.tax.total_collected.copy()
        agent_rew, planner_rew, done = ae.step(state, params, agents, planner)
        counts["trades"] += int(state.market.trades.count.sum())
        counts["tax_days"] += int((state.tax.cycle_pos == 1).sum())
        counts["taxes"] += float((state.tax.total_collected - collected).sum())
        for e, (_, rew, dn, _) in enumerate(results):
            assert agent_rew[e].tolist() == [rew[str(i)] for i in range(params.world.n_agents)]
            assert planner_rew[e] == rew["p"]
            assert done[e] == dn["__all__"]
        assert_same_state(envs, state, params)
        assert_same_observations(obs, state, params, maps=t % 50 == 0)
        if done.any():
            for e in np.flatnonzero(done):
                obs[e] = envs[e].reset()
            ae.reset_envs(state, params, done)
            counts["resets"] += int(done.sum())
            assert_same_state(envs, state, params)
            assert_same_observations(obs, state, params, maps=True)
    counts["state"] = state
    return counts


@pytest.mark.parametrize(
    "phase, overrides",
    [
        (PHASE1_ENV_CONFIG, {}),
        (PHASE2_ENV_CONFIG, {"tax_annealing_schedule": None}),
    ],
    ids=["phase1", "phase2"],
)
def test_economy_matches_dict_envs_over_random_episodes(phase, overrides):
    counts = run_parity(
        economy_config(phase, **overrides), [11, 12, 13], 250, np.random.default_rng(5)
    )
    assert counts["trades"] > 30
    assert counts["tax_days"] == 3 * 12
    assert counts["resets"] == 6
    if phase is PHASE2_ENV_CONFIG:
        assert counts["rate_picks"] > 100 and counts["taxes"] > 0
    else:
        assert counts["taxes"] == 0


def test_economy_matches_dict_envs_on_the_published_phase2_config():
    """Fixed corners and skills, no starting coin, the published tax annealing (rates up to
    0.1); only the episodes and tax periods are shorter."""
    config = economy_config(PHASE2_ENV_CONFIG, episode_length=60, period=15, published=True)
    assert config["fixed_four_skill_and_loc"] and config["starting_agent_coin"] == 0
    counts = run_parity(config, [0, 1, 2], 130, np.random.default_rng(2))
    assert counts["resets"] == 6 and counts["tax_days"] == 3 * 8 and counts["rate_picks"] > 50


def test_economy_matches_dict_envs_with_annealed_us_federal_rates():
    """A fixed schedule capped by an annealed limit that grows with each finished episode
    (the limit read on the step and at the reset, as the dict env reads it)."""
    config = economy_config(
        PHASE2_ENV_CONFIG, episode_length=30, period=10,
        tax_model="us-federal-single-filer-2018-scaled", tax_annealing_schedule=[0, 0.15],
    )  # fmt: skip
    counts = run_parity(config, [21, 22], 95, np.random.default_rng(9))
    assert counts["resets"] == 6 and counts["taxes"] > 0


def test_economy_matches_dict_envs_with_the_saez_tax():
    """Random rates (drawn between Gather's and the regrowth's draws) until the income
    buffer holds 500 samples, then the Saez formula; the buffer outlives the episodes."""
    config = economy_config(
        PHASE2_ENV_CONFIG, episode_length=50, period=5, tax_model="saez",
        tax_annealing_schedule=None,
    )  # fmt: skip
    envs_steps = 700  # 4 samples per tax day: the formula from the 126th tax day on
    counts = run_parity(config, [31, 32], envs_steps, np.random.default_rng(4))
    assert counts["resets"] == 2 * 14 and counts["taxes"] > 0
    trackers = counts["state"].tax.saez
    assert all(t._reached_min_samples and t.elas_t != 0.5 for t in trackers)
    rates = np.array([t.curr_bracket_tax_rates for t in trackers])  # the formula's last
    assert (rates > 0.2).all() and len(np.unique(rates)) > 10


def test_coin_is_conserved_and_taxes_collected_equal_transfers():
    """Coin changes only by build payments: trades move it, taxes come back as transfers."""
    config = economy_config(PHASE2_ENV_CONFIG, tax_annealing_schedule=None, period=10)
    seeds = [1, 2, 3, 4]
    envs = [foundation.make_env_instance(SCENARIO_NAME, seed=s, **config) for s in seeds]
    params = ae.EconomyParams.from_env(envs[0])
    state = ae.initial_state(params, seeds)
    rng = np.random.default_rng(3)
    n_agents, n_rates = params.world.n_agents, params.tax.disc_rates.size
    taxed = 0.0
    for _ in range(99):
        o = aeo.observations(state, params)
        u = rng.random(o["agent_masks"].shape) * o["agent_masks"]
        agents = u.argmax(axis=-1)
        planner = rng.integers(0, n_rates + 1, (len(seeds), params.tax.n_brackets))
        coin = ae.coin_endowment(state).sum(axis=1)
        houses = (state.world.house_owner >= 0).sum(axis=(1, 2))
        built = state.world.house_owner.copy()
        collected = state.tax.total_collected.copy()
        ae.step(state, params, agents, planner)
        new = (state.world.house_owner >= 0) & (built < 0)
        e, r, c = np.nonzero(new)
        pay = np.zeros(len(seeds))
        np.add.at(pay, e, state.world.build_payment[e, state.world.house_owner[e, r, c]])
        assert ((state.world.house_owner >= 0).sum(axis=(1, 2)) - houses).sum() == len(e)
        np.testing.assert_allclose(ae.coin_endowment(state).sum(axis=1), coin + pay, rtol=1e-12)
        day = state.tax.cycle_pos == 1
        paid = state.tax.total_collected - collected
        np.testing.assert_allclose(
            state.tax.last_lump_sum[day] * n_agents, paid[day], rtol=1e-12, atol=1e-12
        )
        assert (paid[~day] == 0).all()
        taxed += paid.sum()
        assert (state.world.inventory >= 0).all() and (state.world.escrow >= 0).all()
    assert taxed > 0


def _us_federal_params(period=1):
    tax_model = "us-federal-single-filer-2018-scaled"
    return array_tax.TaxParams(
        tax_model=tax_model, disable_taxes=False, period=period,
        cutoffs=np.array([0, 9700, 39475, 84200, 160725, 204100, 510300]) / 1000.0,
        disc_rates=np.zeros(1), fixed_rates=np.array([0.10, 0.12, 0.22, 0.24, 0.32, 0.35, 0.37]),
        rate_max=1.0, annealing=None,
    )  # fmt: skip


def test_tax_day_by_hand():
    """Incomes 0, 10, 50, 100 under the scaled 2018 US brackets; the second env's day is not
    a tax day. 10: 9.7 * 0.10 + 0.3 * 0.12; 50: 0.97 + 29.775 * 0.12 + 10.525 * 0.22;
    100: 0.97 + 3.573 + 44.725 * 0.22 + 15.8 * 0.24."""
    params = _us_federal_params(period=2)
    state = array_tax.initial_state(params, 2, 4)
    array_tax.reset_envs(state, params, np.ones(2, bool), np.full((2, 4), 5.0), np.zeros(2))
    state.cycle_pos[:] = [2, 1]
    inventory = np.array([[5.0, 15.0, 55.0, 100.0], [5.0, 15.0, 55.0, 100.0]])
    escrow = np.array([[0.0, 0.0, 0.0, 5.0], [0.0] * 4])
    day = array_tax.tax_step(params, state, None, inventory, escrow, np.zeros(2))
    due = np.array([0.0, 1.006, 0.97 + 3.573 + 2.3155, 0.97 + 3.573 + 9.8395 + 3.792])
    lump = due.sum() / 4
    assert day.tolist() == [True, False]
    np.testing.assert_allclose(inventory[0], [5.0, 15.0, 55.0, 100.0] - due + lump, rtol=1e-12)
    np.testing.assert_array_equal(inventory[1], [5.0, 15.0, 55.0, 100.0])
    np.testing.assert_allclose(state.total_collected, [due.sum(), 0.0], rtol=1e-12)
    np.testing.assert_allclose(state.last_income[0], [0.0, 10.0, 50.0, 100.0])
    np.testing.assert_array_equal(state.last_marginal_rate[0], [0.10, 0.12, 0.22, 0.24])
    np.testing.assert_allclose(state.last_coin[0], inventory[0] + escrow[0])
    assert state.cycle_pos.tolist() == [1, 2]


def test_bad_input_is_named():
    config = economy_config(PHASE2_ENV_CONFIG)
    env = foundation.make_env_instance(SCENARIO_NAME, seed=0, **config)
    params = ae.EconomyParams.from_env(env)
    state = ae.initial_state(params, [0, 1])
    with pytest.raises(ValueError, match=r"actions must be ints in 0\.\.49 of shape \(2, 4\)"):
        ae.step(state, params, np.zeros((2, 3), dtype=np.int64))
    with pytest.raises(ValueError, match=r"planner_actions\[1, 2\] = 22 \(bracket 039\)"):
        planner = np.zeros((2, 7), dtype=np.int64)
        planner[1, 2] = 22
        ae.step(state, params, np.zeros((2, 4), dtype=np.int64), planner)
    assert state.world.timestep.tolist() == [0, 0]  # a rejected step changes nothing
    multi = economy_config(PHASE2_ENV_CONFIG)
    multi["multi_action_mode_agents"] = True
    env = foundation.make_env_instance(SCENARIO_NAME, seed=0, **multi)
    with pytest.raises(ValueError, match="multi_action_mode_agents=True"):
        ae.EconomyParams.from_env(env)
    config["components"] = config["components"][:3]
    env = foundation.make_env_instance(SCENARIO_NAME, seed=0, **config)
    with pytest.raises(ValueError, match="PeriodicBracketTax"):
        ae.EconomyParams.from_env(env)

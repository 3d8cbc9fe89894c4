"""The simple_wood_and_stone scenarios: registry, observations, rewards, layouts, seeds."""

import numpy as np
import pytest
from gtb_world_helpers import components, place

from ai_economist import foundation
from ai_economist.foundation.scenarios.simple_wood_and_stone import configs, dynamics

GTB = "layout_from_file/simple_wood_and_stone"


def phase_env(**overrides):
    kwargs = configs.env_config(configs.PHASE2_ENV_CONFIG, without_tax=True)
    kwargs.update(overrides)
    return foundation.make_env_instance(GTB, **kwargs)


def test_both_scenarios_are_registered_under_their_names():
    for name in ("uniform/simple_wood_and_stone", GTB):
        assert foundation.scenarios.has(name)
    assert {"Build", "ContinuousDoubleAuction", "Gather"} <= set(foundation.components.entries)


def test_unknown_scenario_and_component_names_suggest_close_matches():
    with pytest.raises(KeyError, match="Did you mean 'layout_from_file/simple_wood_and_stone'"):
        foundation.make_env_instance("layout_from_file/simple_wood_and_ston")
    with pytest.raises(KeyError, match="Did you mean 'Gather'"):
        foundation.make_env_instance(
            GTB, components=[{"Gatherr": {}}], n_agents=2, world_size=[25, 25]
        )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"starting_agent_coin": -5}, "starting_agent_coin"),
        ({"resource_regen_prob": 1.5}, "resource_regen_prob"),
        ({"isoelastic_eta": 2.0}, "isoelastic_eta"),
        (
            {"planner_reward_type": "coin_eq_times_productivty"},
            "did you mean 'coin_eq_times_productivity'",
        ),
        ({"energy_warmup_method": "linear"}, "energy_warmup_method"),
    ],
)
def test_bad_scenario_arguments_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        phase_env(**kwargs)


def test_observation_and_mask_shapes_of_the_phase_config():
    env = phase_env(seed=1)
    obs = env.reset()
    agent = obs["0"]
    assert agent["world-map"].shape == (7, 11, 11) and agent["world-idx_map"].shape == (2, 11, 11)
    assert agent["flat"].shape == (121,) and agent["flat"].dtype == np.float32
    assert agent["action_mask"].shape == (50,)  # 1 + Build 1 + Trade 4 x 11 + Gather 4
    assert obs["p"]["flat"].shape == (72,) and obs["p"]["p0"].shape == (3,)
    assert "world-map" not in obs["p"]  # planner_gets_spatial_info=False


def test_egocentric_view_marks_the_map_and_the_agent_itself(make_env):
    env = make_env(mobile_agent_observation_range=2, flatten_observations=False)
    place(env, 1, 4, 5)
    place(env, 0, 0, 1)
    obs = env._generate_observations()["0"]
    view, idx = obs["world-map"], obs["world-idx_map"]
    assert view.shape == (7, 5, 5)
    on_map = view[-1]
    assert on_map[:2].sum() == 0 and on_map[2:, 1:].all() and not on_map[:, 0].any()
    assert view[env.world.maps.keys().index("Wood"), 2, 1] == 1  # wood one cell left
    assert idx[1, 2, 2] == 1  # the agent itself, at the centre of the location channel
    assert obs["world-loc-row"] == 0 and obs["world-loc-col"] == pytest.approx(1 / 6)


def test_regrowth_refills_empty_sources_at_probability_one_and_never_at_zero(make_env):
    for prob, expected in ((1.0, 1.0), (0.0, 0.0)):
        env = make_env(resource_regen_prob=prob)
        env.world.maps.set("Wood", np.zeros((5, 6)))
        env.scenario_step()
        assert env.world.maps.get("Wood")[0, 0] == expected
        assert env.world.maps.get("Wood").sum() == expected  # only the source cell


def test_regrow_with_a_kernel_spreads_probability_to_neighbours():
    resource = np.zeros((3, 3))
    source = np.zeros((3, 3))
    source[1, 1] = source[0, 0] = 1
    prob = dynamics.regrowth_probability(resource, source, weight=0.9, halfwidth=1)
    assert prob[1, 1] == pytest.approx(0.9 * 2 / 9) and prob[2, 2] == pytest.approx(0.1)


def test_fixed_four_skill_and_loc_puts_agents_in_the_corners_by_skill():
    env = phase_env(seed=3)
    env.reset()
    by_loc = {tuple(a.loc): a.state["build_payment"] for a in env.world.agents}
    assert set(by_loc) == {(0, 24), (24, 0), (0, 0), (24, 24)}
    order = [by_loc[(0, 24)], by_loc[(24, 0)], by_loc[(0, 0)], by_loc[(24, 24)]]
    assert order == sorted(order) and 10 < order[0] < order[-1] <= 30


def test_the_same_seed_gives_the_same_episode_and_another_seed_does_not():
    def run(seed):
        env = foundation.make_env_instance(
            "uniform/simple_wood_and_stone",
            components=components(Gather={"skill_dist": "pareto"}),
            n_agents=3,
            world_size=[12, 12],
            episode_length=60,
            seed=seed,
        )
        obs = env.reset()
        rng = np.random.default_rng(seed)
        total = []
        for _ in range(60):
            actions = {k: int(rng.choice(np.flatnonzero(obs[k]["action_mask"]))) for k in "012"}
            obs, rew, done, _ = env.step(actions)
            total.append([rew[k] for k in "012p"])
        return env.world.maps.state.copy(), np.array(total), env.previous_episode_metrics

    (m1, r1, x1), (m2, r2, x2), (m3, _, _) = run(7), run(7), run(8)
    assert (
        np.array_equal(m1, m2) and np.array_equal(r1, r2) and x1 == pytest.approx(x2, nan_ok=True)
    )
    assert not np.array_equal(m1, m3)


def test_uniform_layout_meets_its_coverage_targets():
    env = foundation.make_env_instance(
        "uniform/simple_wood_and_stone",
        components=components(),
        n_agents=2,
        world_size=[20, 20],
        starting_wood_coverage=0.05,
        starting_stone_coverage=10,
        seed=2,
    )
    env.reset()
    wood = env.world.maps.get("WoodSourceBlock").mean()
    stone = env.world.maps.get("StoneSourceBlock").sum()
    assert 0.05 / 1.4 <= wood <= 0.05 * 1.4 and 10 / 1.4 <= stone <= 14
    rows = np.nonzero(env.world.maps.get("WoodSourceBlock"))[0]
    assert rows.mean() > 10  # wood towards the bottom rows


def test_metrics_cover_productivity_equality_welfare_endowments_and_labour(make_env):
    env = make_env(episode_length=2)
    env.world.agents[0].state["inventory"]["Coin"] = 30.0
    env.step({})
    env.step({})
    m = env.previous_episode_metrics
    assert m["social/productivity"] == 30
    assert m["social/equality"] == pytest.approx(0.0, abs=1e-9)  # one of two holds everything
    assert m["endow/0/Coin"] == 30 and m["endogenous/1/Labor"] == 0
    assert m["labor/weighted_cost"] == 0.21
    for key in (
        "social_welfare/coin_eq_times_productivity",
        "social_welfare/inv_income_weighted_coin_endow",
        "social_welfare/inv_income_weighted_utility",
        "util/0",
        "util/p",
        "Build/total_builds",
        "Trade/n_trades",
    ):
        assert key in m


def test_energy_warmup_decay_follows_completed_episodes(make_env):
    env = make_env(episode_length=1, energy_warmup_constant=2.0)
    assert env.energy_weight == 0.0
    env.step({})
    assert env.energy_weight == pytest.approx(1 - np.exp(-0.5))


def reference_views(env, w):
    """1.7.1's construction: pad the stacked maps (extra channel padded with 1, then the
    borders with 0) and the index maps, slice each agent's window, mark itself with 1."""
    maps = env.world.maps
    idx_maps = np.concatenate([maps.owner_state, env.world.loc_map[None]]).astype(np.int16) + 2
    idx_maps[idx_maps == 1] = 0
    padded = np.pad(maps.state, [(0, 1), (w, w), (w, w)], constant_values=[(0, 1), (0, 0), (0, 0)])
    padded_idx = np.pad(idx_maps, [(0, 0), (w, w), (w, w)])
    out = {}
    for agent in env.world.agents:
        r, c = agent.loc
        idx = padded_idx[:, r : r + 2 * w + 1, c : c + 2 * w + 1].copy()
        idx[idx == agent.idx + 2] = 1
        out[str(agent.idx)] = (padded[:, r : r + 2 * w + 1, c : c + 2 * w + 1], idx)
    return out


def test_egocentric_views_match_the_original_construction_over_random_play(rng):
    env = phase_env(seed=4, flatten_observations=False, resource_regen_prob=0.2)
    env.reset()
    for agent in env.world.agents:  # so that houses (the owner channel) appear
        agent.state["inventory"].update(Wood=5, Stone=5)
    obs = env._generate_observations()
    for _ in range(120):
        expected = reference_views(env, 5)
        for k in "0123":
            assert np.array_equal(obs[k]["world-map"], expected[k][0])
            assert np.array_equal(obs[k]["world-idx_map"], expected[k][1])
        actions = {k: int(rng.choice(np.flatnonzero(obs[k]["action_mask"]))) for k in "0123"}
        obs, _, _, _ = env.step(actions)
    assert env.get_component("Build").get_metrics()["total_builds"] > 0


@pytest.mark.parametrize("mixing", [0.0, 0.4])
def test_fast_utility_and_welfare_equal_the_reward_helpers(make_env, rng, mixing):
    from ai_economist.foundation.scenarios.utils import rewards

    env = make_env(n_agents=4, mixing_weight_gini_vs_coin=mixing)
    for _ in range(20):
        coins = rng.uniform(0, 300, 4) * (rng.random(4) > 0.2)
        labors = rng.uniform(0, 500, 4)
        for a, c, lab in zip(env.world.agents, coins, labors):
            a.state["inventory"]["Coin"], a.state["escrow"]["Coin"] = float(c), 0
            a.state["endogenous"]["Labor"] = float(lab)
        metric = env.get_current_optimization_metrics()
        utilities = rewards.isoelastic_coin_minus_labor(coins, labors, 0.23, 0.21)
        swf = rewards.coin_eq_times_productivity(coins, 1 - mixing)
        assert [metric[i] for i in range(4)] == pytest.approx(utilities, rel=1e-12, abs=1e-12)
        assert metric["p"] == pytest.approx(swf, rel=1e-12, abs=1e-12)


def test_dense_log_holds_world_states_actions_and_component_logs(make_env, rng):
    env = make_env(episode_length=6, dense_log_frequency=1, world_dense_log_frequency=2)
    obs = env.reset()
    for _ in range(6):
        actions = {k: int(rng.choice(np.flatnonzero(obs[k]["action_mask"]))) for k in "01"}
        obs, _, _, _ = env.step(actions)
    log = env.previous_episode_dense_log
    assert len(log["states"]) == 7 and len(log["rewards"]) == 6 and len(log["actions"]) == 6
    assert {"Gather", "Build", "Trade"} <= set(log)
    assert len(log["Gather"]) == len(log["Build"]) == len(log["Trade"]) == 6
    assert set(log["states"][0]["0"]) >= {"loc", "inventory", "escrow", "endogenous"}
    assert "build_payment" in log["states"][0]["0"] and "bonus_gather_prob" in log["states"][0]["0"]
    assert log["world"][0] and not log["world"][1]  # a map snapshot every 2 steps


def test_full_observability_shows_the_whole_map_and_keeps_the_planner_entries(make_env):
    env = make_env(full_observability=True, flatten_observations=False)
    place(env, 1, 4, 5)
    place(env, 0, 3, 1)
    obs = env._generate_observations()
    assert obs["0"]["world-map"].shape == (6, 5, 6)
    idx = obs["0"]["world-idx_map"]
    assert idx[-1, 3, 1] == 1 and idx[-1, 4, 5] == 3  # itself 1, agent 1 coded 1 + 2
    assert "world-loc-row" not in obs["0"]
    assert set(obs["p"]["p0"]) >= {"world-inventory-Coin", "world-loc-row"}


def test_the_docstring_spelling_of_the_inverse_income_objective_is_accepted(make_env):
    env = make_env(planner_reward_type="inv_income_weighted_coin_endowment")
    assert env.planner_reward_type == "inv_income_weighted_coin_endowments"

"""The gather-trade-build GPU world's numpy reference: declaration, draws, and the array
model (the world equals it step for step given the same draws; the draws follow its
distributions)."""

from __future__ import annotations

import numpy as np
import pytest
from gtb_gpu_helpers import (
    array_state_from,
    biased_actions,
    crowded_config,
    replay,
    small_config,
)

from ai_economist.foundation.scenarios.simple_wood_and_stone import array_obs, array_rules
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_world as aw
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import reference, rng
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import state as gs
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.env import (
    WORLD_CONFIG,
    GatherTradeBuildWorldGpu,
    world_params,
)
from ai_economist.warp_drive.env_wrapper import EnvWrapper


@pytest.fixture(scope="module")
def paper_env():
    return GatherTradeBuildWorldGpu()


def lowbias32(x: int) -> int:
    """An independent pure-Python ``lowbias32``."""
    x &= 0xFFFFFFFF
    x ^= x >> 16
    x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x846CA68B) & 0xFFFFFFFF
    return x ^ (x >> 16)


def test_hash_matches_an_independent_implementation():
    xs = np.random.default_rng(0).integers(0, 2**32, 1000)
    assert rng.hash32(xs).tolist() == [lowbias32(int(x)) for x in xs]
    assert int(rng.hash32(0)) == 0 and int(rng.hash32(1)) == lowbias32(1)
    seed, ep, step, stream, index = -3, 2, 7, 5, 11  # a negative seed reads as unsigned
    h = lowbias32((seed & 0xFFFFFFFF) ^ rng.SEED_SALT)
    for word in (ep, step, (stream << 24) | index):
        h = lowbias32(h ^ word)
    assert int(rng.draw_bits(seed, ep, step, stream, index)) == h


def test_uniforms_lie_on_the_24_bit_grid_and_look_uniform():
    u = rng.uniform(1, 0, 3, 6, np.arange(200_000))
    assert u.min() >= 0 and u.max() < 1
    np.testing.assert_array_equal(u * 2**24, np.floor(u * 2**24))
    assert abs(u.mean() - 0.5) < 0.003 and abs(u.var() - 1 / 12) < 0.001
    counts = np.bincount(rng.below(rng.draw_bits(1, 0, 3, 6, np.arange(25_000)), 25), None, 25)
    assert counts.min() > 850 and counts.max() < 1150  # 1,000 expected per value


def test_declaration_of_the_paper_config(paper_env):
    d = paper_env.dims()
    assert (d["n_agents"], d["num_agents"], d["world_h"], d["world_w"]) == (4, 5, 25, 25)
    assert d["n_regrow"] == 40  # 20 wood and 20 stone sources
    assert d["obs_dim_a"] == 9 + 9 * 11 * 11 and d["obs_dim_p"] == 4 + 3 * 4
    assert paper_env.episode_length == 1000 and paper_env.threads_per_env == 32
    spec = paper_env.state_spec()
    assert spec["resource_maps"].shape == (2, 25, 25) and spec["locs"].shape == (4, 2)
    assert not spec["layout_maps"].per_env and spec["inventory"].dtype == np.float64
    state = reference.zero_state(paper_env.params, 1, 0)
    keys = array_obs.scalar_observations(reference.world_view(state, paper_env.params),
                                         paper_env.params)  # fmt: skip
    assert gs.AGENT_FLAT_KEYS == tuple(sorted(keys))


def test_shapes_follow_the_config():
    config = {**WORLD_CONFIG, "env_layout_file": "env-pure_and_mixed-15x15.txt",
              "world_size": [15, 15], "n_agents": 3, "fixed_four_skill_and_loc": False,
              "mobile_agent_observation_range": 3}  # fmt: skip
    env = GatherTradeBuildWorldGpu(config)
    d = env.dims()
    assert (d["world_h"], d["world_w"], d["n_agents"], d["window"]) == (15, 15, 3, 7)
    assert d["n_regrow"] == 23 + 12  # the map's wood and stone sources
    assert d["obs_dim_a"] == 9 + 9 * 7 * 7 and d["obs_dim_p"] == 4 + 3 * 3
    spec = env.state_spec()
    assert spec["house_owner"].shape == (15, 15) and spec["observations_a"].shape == (3, 450)
    assert env.policies()["p"].first_agent == 3 and env.threads_per_env == 32


def test_a_layout_larger_than_the_kernels_support_is_refused(tmp_path):
    big = tmp_path / "big.txt"
    big.write_text(";".join(["W" + " " * 68 + "S"] * 70) + ";")
    config = small_config(tmp_path, env_layout_file=str(big), world_size=[70, 70])
    with pytest.raises(gs.UnsupportedGpuConfig, match=r"70x70 = 4,900 cells.*at most 4,096"):
        world_params(config)


def test_agent_counts_the_kernels_do_not_cover_are_named(tmp_path):
    with pytest.raises(gs.UnsupportedGpuConfig, match="n_agents=26 but the layout has 25 cells"):
        world_params(small_config(tmp_path, n_agents=26))
    with pytest.raises(ValueError, match=r"threads_per_env=2: needs 3\.\.1024"):
        GatherTradeBuildWorldGpu(small_config(tmp_path), threads_per_env=2)


def test_components_and_scenarios_the_kernels_do_not_cover_are_named(tmp_path):
    config = small_config(tmp_path)
    config["components"].insert(1, {"ContinuousDoubleAuction": {"max_num_orders": 5}})
    config["components"].append({"PeriodicBracketTax": {"disable_taxes": True}})
    with pytest.raises(gs.UnsupportedGpuConfig, match=r"not yet \['PeriodicBracketTax'\]"):
        world_params(config)
    with pytest.raises(gs.UnsupportedGpuConfig, match="uniform/simple_wood_and_stone"):
        world_params({**WORLD_CONFIG, "scenario_name": "uniform/simple_wood_and_stone"})


def run_against_array_model(env, num_envs, seed, steps, action_rng):
    params = env.params
    state = reference.initial_state(params, num_envs, seed, env._static)
    other = array_state_from(state, params)
    counts = {"builds": 0, "gathers": 0, "regrowths": 0}
    for _ in range(steps):
        masks = array_obs.action_masks(other, params)
        np.testing.assert_array_equal(state["action_mask_a"], masks)
        actions = biased_actions(masks, action_rng)
        state["sampled_actions_a"][:] = actions
        before = state["inventory"].copy(), state["resource_maps"].copy()
        draws = reference.world_step(state, params, env._static)
        replay(other, draws)
        agent_rew, planner_rew, done = aw.step(other, params, actions)
        for name in ("locs", "inventory", "labor", "resource_maps", "house_owner",
                     "coin_utility", "utility", "welfare", "completions", "auto_integrator"):  # fmt: skip
            np.testing.assert_array_equal(state[name], getattr(other, name), err_msg=name)
        np.testing.assert_array_equal(state["_timestep_"], other.timestep)
        np.testing.assert_array_equal(state["rewards_a"], agent_rew.astype(np.float32))
        np.testing.assert_array_equal(state["rewards_p"][:, 0], planner_rew.astype(np.float32))
        np.testing.assert_array_equal(state["_done_"], done)
        flat = array_obs.agent_flat_observations(other, params)
        maps, idx_maps = array_obs.egocentric_maps(other, params)
        obs = state["observations_a"]
        np.testing.assert_array_equal(obs[..., :9], flat)
        np.testing.assert_array_equal(
            obs[..., 9 : 9 + maps[0, 0].size], maps.reshape(*maps.shape[:2], -1)
        )
        np.testing.assert_array_equal(
            obs[..., 9 + maps[0, 0].size :], idx_maps.reshape(*maps.shape[:2], -1)
        )
        inv = state["inventory"] - before[0]
        counts["builds"] += int((inv[..., array_rules.COIN] > 0).sum())
        counts["gathers"] += int((inv[..., 1:] > 0).sum())
        counts["regrowths"] += int((state["resource_maps"] > before[1]).sum())
    return state, counts


def test_world_equals_the_array_model_given_the_same_draws(tmp_path):
    env = GatherTradeBuildWorldGpu(small_config(tmp_path))
    state, counts = run_against_array_model(env, 6, 3, env.episode_length, np.random.default_rng(1))
    assert state["_done_"].all() and (state["completions"] == 1).all()
    assert counts["builds"] >= 3 and counts["gathers"] >= 20 and counts["regrowths"] >= 10
    assert (state["auto_integrator"] > 0).any()


def test_crowded_world_equals_the_array_model_given_the_same_draws(tmp_path):
    # 7 agents on 25 land cells: the move order decides who gets a contested cell
    env = GatherTradeBuildWorldGpu(crowded_config(tmp_path))
    state, counts = run_against_array_model(env, 4, 9, env.episode_length, np.random.default_rng(4))
    assert counts["gathers"] > 0 and len(np.unique(state["move_order"][:, 0])) > 1
    assert (state["completions"] == 1).all()  # the decay warm-up saw an episode end
    assert (state["build_payment"] == 10).all() and (state["bonus_gather_prob"] == 0).all()


def test_paper_world_equals_the_array_model_given_the_same_draws(paper_env):
    state, _ = run_against_array_model(paper_env, 2, 0, 15, np.random.default_rng(2))
    corners = {(0, 0), (0, 24), (24, 0), (24, 24)}
    assert (state["labor"] > 0).any() and state["observations_p"].shape == (2, 1, 16)
    start = reference.initial_state(paper_env.params, 2, 0)["locs"]
    assert all({tuple(loc) for loc in start[e]} == corners for e in range(2))


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The two-sample Kolmogorov-Smirnov statistic."""
    grid = np.sort(np.concatenate([a, b]))
    cdf_a = np.searchsorted(np.sort(a), grid, side="right") / a.size
    cdf_b = np.searchsorted(np.sort(b), grid, side="right") / b.size
    return float(np.abs(cdf_a - cdf_b).max())


@pytest.mark.parametrize("build, gather", [("pareto", "lognormal"), ("lognormal", "pareto")])
def test_reset_draws_follow_the_array_models_distributions(tmp_path, build, gather):
    comps = [{"Build": {"skill_dist": build, "payment_max_skill_multiplier": 3}},
             {"Gather": {"skill_dist": gather}}]  # fmt: skip
    params = world_params(small_config(tmp_path, components=comps))
    n = 3000
    ours = reference.initial_state(params, n, 0)
    theirs = aw.initial_state(params, np.arange(n) + 10**6)
    # 1.95 sqrt(2 / n): the 0.1% critical value of the two-sample KS statistic
    critical = 1.95 * np.sqrt(2 / n)
    for name in ("build_skill", "build_payment", "bonus_gather_prob"):
        ours_v, theirs_v = ours[name].ravel(), getattr(theirs, name).ravel()
        assert ks_distance(ours_v, theirs_v) < critical, name
    # the test has power: Pareto(3) against the array model's Pareto(4) build skills
    if build == "pareto":
        assert ks_distance(rng.pareto(rng.uniform(0, 0, 0, 9, np.arange(n)), 3.0),
                           theirs.build_skill.ravel()) > 2 * critical  # fmt: skip
    h, w = params.world_size
    cells = ours["locs"][..., 0] * w + ours["locs"][..., 1]
    assert not params.water.ravel()[cells].any() and (cells[:, 0] != cells[:, 1]).all()
    their_cells = theirs.locs[..., 0] * w + theirs.locs[..., 1]
    for agent in range(2):
        assert ks_distance(cells[:, agent], their_cells[:, agent]) < critical


def test_resets_redraw_per_episode_and_are_idempotent(tmp_path):
    env = GatherTradeBuildWorldGpu(small_config(tmp_path))
    w = EnvWrapper(env, 3, "numpy", seed=4)
    w.reset_all_envs()
    first = {k: w.pull(k) for k in ("locs", "build_skill", "observations_a")}
    w.reset_all_envs()
    for k, v in first.items():
        np.testing.assert_array_equal(w.pull(k), v)  # the same episode, the same draws
    assert len({tuple(s) for s in first["build_skill"]}) == 3  # each env its own seed
    for _ in range(env.episode_length):
        w.step_all_envs({"a": np.zeros((3, 2), np.int32), "p": np.zeros((3, 1), np.int32)})
    assert w.pull("_done_").all()
    w.reset_only_done_envs()
    assert (w.pull("_timestep_") == 0).all() and (w.pull("completions") == 1).all()
    assert not np.array_equal(w.pull("build_skill"), first["build_skill"])  # episode 1
    assert (w.pull("labor") == 0).all() and (w.pull("house_owner") == -1).all()
    metrics = w.episode_metrics()
    assert metrics["social/productivity"] == pytest.approx(4.0)  # 2 agents x 2 starting coin
    assert metrics["social/equality"] == pytest.approx(1.0)
    utility, labor = w.pull("episode_utility"), w.pull("episode_labor")
    assert (utility <= (2**0.77 - 1) / 0.77).all()  # coin 2, minus the labour of collecting
    equal_weights = utility.mean()  # equal coin: every agent weighs 1/2
    assert metrics["social_welfare/inv_income_weighted_utility"] == pytest.approx(equal_weights)
    assert metrics["endow/1/Coin"] == 2.0
    assert metrics["endogenous/0/Labor"] == pytest.approx(labor[:, 0].mean())


def test_a_saved_state_resumes_exactly(tmp_path):
    # every draw is keyed by declared arrays (seed, episode, step): no generator to save
    env = GatherTradeBuildWorldGpu(small_config(tmp_path, episode_length=6))
    w = EnvWrapper(env, 3, "numpy", seed=2)
    w.reset_all_envs()
    g = np.random.default_rng(0)
    actions = [g.integers(0, 6, (3, 2)).astype(np.int32) for _ in range(10)]
    noop_p = np.zeros((3, 1), np.int32)

    def run(steps):
        for a in steps:
            w.step_all_envs({"a": a, "p": noop_p})
            w.reset_only_done_envs()
        return {k: w.pull(k) for k in ("locs", "inventory", "resource_maps", "observations_a")}

    run(actions[:4])
    saved = w.state_dict()
    first = run(actions[4:])
    w.load_state_dict(saved)
    again = run(actions[4:])
    for k, v in first.items():
        np.testing.assert_array_equal(again[k], v, err_msg=k)

"""The gather-trade-build array world against N dict envs, step for step, and hand-made cases."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_obs, array_rules
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_world as aw
from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import (
    PHASE1_ENV_CONFIG,
    PHASE2_ENV_CONFIG,
    SCENARIO_NAME,
    env_config,
)

INVENTORY = array_rules.INVENTORY


def world_config(phase=PHASE2_ENV_CONFIG, **overrides):
    """The published config with only Build and Gather, unflattened observations."""
    config = env_config(phase, without_tax=True)
    config["components"] = [c for c in config["components"] if "ContinuousDoubleAuction" not in c]
    config.update(flatten_observations=False, dense_log_frequency=None)
    config.update(overrides)
    return config


def make_envs(config, seeds):
    envs = [foundation.make_env_instance(SCENARIO_NAME, seed=s, **config) for s in seeds]
    return envs, [env.reset() for env in envs]


def assert_same_state(envs, state, params, obs=None, rew=None, agent_rew=None, planner_rew=None):
    masks = None if obs is None else array_obs.action_masks(state, params)
    for e, env in enumerate(envs):
        agents = env.world.agents
        maps = env.world.maps
        assert state.rngs[e].bit_generator.state == env.world.rng.bit_generator.state
        assert state.timestep[e] == env.world.timestep
        np.testing.assert_array_equal(state.locs[e], [a.loc for a in agents])
        np.testing.assert_array_equal(
            state.inventory[e], [[a.state["inventory"][k] for k in INVENTORY] for a in agents]
        )
        np.testing.assert_array_equal(
            state.escrow[e], [[a.state["escrow"][k] for k in INVENTORY] for a in agents]
        )
        np.testing.assert_array_equal(
            state.labor[e], [a.state["endogenous"]["Labor"] for a in agents]
        )
        np.testing.assert_array_equal(
            state.build_payment[e], [a.state["build_payment"] for a in agents]
        )
        np.testing.assert_array_equal(
            state.bonus_gather_prob[e], [a.state["bonus_gather_prob"] for a in agents]
        )
        np.testing.assert_array_equal(state.resource_maps[e, 0], maps.get("Stone"))
        np.testing.assert_array_equal(state.resource_maps[e, 1], maps.get("Wood"))
        np.testing.assert_array_equal(state.house_owner[e], maps.get("House", owner=True))
        if rew is not None:
            assert agent_rew[e].tolist() == [rew[e][str(i)] for i in range(len(agents))]
            assert planner_rew[e] == rew[e]["p"]
        if masks is not None:
            for i in range(len(agents)):
                np.testing.assert_array_equal(masks[e, i], obs[e][str(i)]["action_mask"])


def sample_actions(masks, rng, build_bias=0.5):
    """A uniformly random allowed action per agent; build (when allowed) with ``build_bias``."""
    u = rng.random(masks.shape) * masks
    actions = u.argmax(axis=-1)
    build = (masks[..., 1] > 0) & (rng.random(masks.shape[:2]) < build_bias)
    return np.where(build, 1, actions)


def run_parity(config, seeds, steps, rng, any_action=False):
    envs, obs = make_envs(config, seeds)
    params = aw.GTBWorldParams.from_env(envs[0])
    state = aw.initial_state(params, seeds)
    assert_same_state(envs, state, params, obs=obs)
    n_builds = n_gathers = 0
    for t in range(steps):
        if any_action:
            actions = rng.integers(0, aw.N_ACTIONS, size=(len(seeds), params.n_agents))
        else:
            actions = sample_actions(array_obs.action_masks(state, params), rng)
        results = [
            env.step({str(i): int(a) for i, a in enumerate(actions[e])})
            for e, env in enumerate(envs)
        ]
        obs = [r[0] for r in results]
        rew = [r[1] for r in results]
        before = state.inventory.copy()
        agent_rew, planner_rew, done = aw.step(state, params, actions)
        n_builds += int((state.inventory[..., 0] > before[..., 0]).sum())
        n_gathers += int((state.inventory[..., 1:] > before[..., 1:]).sum())
        assert done.tolist() == [r[2]["__all__"] for r in results]
        assert_same_state(
            envs, state, params, obs=obs, rew=rew, agent_rew=agent_rew, planner_rew=planner_rew
        )
        if t % 37 == 0:
            assert_same_observations(state, params, obs)
        if done.any():
            for e in np.flatnonzero(done):
                obs[e] = envs[e].reset()
            aw.reset_envs(state, params, done)
            assert_same_state(envs, state, params, obs=obs)
    return n_builds, n_gathers


def assert_same_observations(state, params, obs):
    scalars = array_obs.scalar_observations(state, params)
    maps, idx_maps = array_obs.egocentric_maps(state, params)
    for e, o in enumerate(obs):
        for i in range(params.n_agents):
            oi = o[str(i)]
            np.testing.assert_array_equal(maps[e, i], oi["world-map"])
            np.testing.assert_array_equal(idx_maps[e, i], oi["world-idx_map"])
            assert idx_maps.dtype == oi["world-idx_map"].dtype
            for key, value in scalars.items():
                want = value[e] if key == "time" else value[e, i]
                assert np.ravel(oi[key])[0] == want, key


@pytest.mark.parametrize(
    "phase, warmup",
    [
        (PHASE1_ENV_CONFIG, {}),
        (PHASE1_ENV_CONFIG, {"energy_warmup_method": "decay", "energy_warmup_constant": 2}),
        (PHASE2_ENV_CONFIG, {}),
        (PHASE2_ENV_CONFIG, {"fixed_four_skill_and_loc": False, "n_agents": 5}),
    ],
    ids=["phase1", "phase1-decay", "phase2", "phase2-random-start-5-agents"],
)
def test_parity_with_dict_envs_valid_actions(phase, warmup):
    # 0.2 regrowth and 50-step episodes: many gathers, builds and resets in 220 steps.
    config = world_config(phase, episode_length=50, resource_regen_prob=0.2, **warmup)
    n_builds, n_gathers = run_parity(config, [5, 6, 7], 220, np.random.default_rng(0))
    assert n_builds > 5 and n_gathers > 50  # the rules were exercised


def test_parity_with_dict_envs_any_action_published_regrowth():
    # Masked actions applied as no-ops (check_action_masks=False, 1.7.1's rule).
    config = world_config(episode_length=120, check_action_masks=False)
    run_parity(config, [11, 12], 240, np.random.default_rng(1), any_action=True)


def test_flat_observations_equal_the_flattened_dict_env():
    config = world_config(episode_length=30, flatten_observations=True, resource_regen_prob=0.2)
    seeds = [2, 3]
    envs, obs = make_envs(config, seeds)
    params = aw.GTBWorldParams.from_env(envs[0])
    state = aw.initial_state(params, seeds)
    rng = np.random.default_rng(4)
    for _ in range(30):
        flat = array_obs.agent_flat_observations(state, params)
        planner_flat, agentwise = array_obs.planner_observations(state, params)
        for e, o in enumerate(obs):
            for i in range(params.n_agents):
                np.testing.assert_array_equal(flat[e, i], o[str(i)]["flat"])
                np.testing.assert_array_equal(agentwise[e, i], o["p"][f"p{i}"])
            np.testing.assert_array_equal(planner_flat[e], o["p"]["flat"])
        actions = sample_actions(array_obs.action_masks(state, params), rng)
        obs = [
            env.step({str(i): int(a) for i, a in enumerate(actions[e])})[0]
            for e, env in enumerate(envs)
        ]
        aw.step(state, params, actions)


# ------------------------------------------------------------------ hand-made cases
@pytest.fixture
def world():
    envs, _ = make_envs(world_config(episode_length=20), [0, 1])
    params = aw.GTBWorldParams.from_env(envs[0])
    return params, aw.initial_state(params, [0, 1])


def _water_neighbour(params):
    """A land cell with water directly to its right, and that move's action (3 = right)."""
    rows, cols = np.nonzero(params.water[:, 1:] & ~params.water[:, :-1])
    return (int(rows[0]), int(cols[0])), 3


def test_move_into_water_is_refused(world):
    params, state = world
    (r, c), right = _water_neighbour(params)
    state.locs[0, 0] = (r, c)
    state.locs[0, 1:] = [(0, k) for k in range(params.n_agents - 1)]  # out of the way
    assert array_obs.action_masks(state, params)[0, 0, right] == 0
    labor = state.labor[0, 0]
    actions = np.zeros((2, params.n_agents), dtype=np.int64)
    actions[0, 0] = right
    aw.step(state, params, actions)
    assert state.locs[0, 0].tolist() == [r, c]
    assert state.labor[0, 0] == labor  # a refused move costs nothing


def _empty_cell(params, state):
    free = ~params.landmarks & (state.resource_maps[0].sum(axis=0) == 0)
    free[state.locs[0, :, 0], state.locs[0, :, 1]] = False
    rows, cols = np.nonzero(free)
    return int(rows[0]), int(cols[0])


def test_build_without_stone_fails_and_build_pays_the_skill_payment(world):
    params, state = world
    start = state.locs[0, 0].copy()
    state.locs[0, 0] = _empty_cell(params, state)
    state.inventory[0, 0, array_rules.WOOD] = 2
    state.inventory[0, 0, array_rules.STONE] = 0
    assert array_obs.action_masks(state, params)[0, 0, 1] == 0
    actions = np.zeros((2, params.n_agents), dtype=np.int64)
    actions[0, 0] = 1
    aw.step(state, params, actions)
    assert state.inventory[0, 0].tolist() == [0.0, 0.0, 2.0]
    assert (state.house_owner[0] < 0).all()

    state.inventory[0, 0, array_rules.STONE] = 1
    labor, payment = state.labor[0, 0], state.build_payment[0, 0]
    agent_rew, _, _ = aw.step(state, params, actions)
    r, c = state.locs[0, 0]
    assert state.inventory[0, 0].tolist() == [payment, 0.0, 1.0]
    assert state.house_owner[0, r, c] == 0
    assert state.labor[0, 0] == labor + 10.0  # build_labor of the published config
    eta, k = params.isoelastic_eta, params.energy_cost
    e1 = 1 - eta
    want = ((payment**e1 - 1) / e1 - (labor + 10) * k) - ((0.0**e1 - 1) / e1 - labor * k)
    assert agent_rew[0, 0] == pytest.approx(want, rel=1e-12)
    # the house blocks a second build on it and the other agents
    assert array_obs.action_masks(state, params)[0, 0, 1] == 0
    state.locs[0, 0] = start  # back to its corner: only the house is in the way now
    # a land neighbour of the house, and the move from there onto the house
    neighbours = {2: (r, c + 1), 3: (r, c - 1), 4: (r + 1, c), 5: (r - 1, c)}
    h, w = params.world_size
    action, (nr, nc) = next(
        (k, (nr, nc))
        for k, (nr, nc) in neighbours.items()
        if 0 <= nr < h and 0 <= nc < w and not params.water[nr, nc]
    )
    state.locs[0, 1] = (nr, nc)
    state.labor[0, 1] = 0.0
    assert array_obs.action_masks(state, params)[0, 1, action] == 0
    actions[:] = 0
    actions[0, 1] = action
    aw.step(state, params, actions)
    assert state.locs[0, 1].tolist() == [nr, nc] and state.labor[0, 1] == 0.0


def test_payments_follow_the_sampled_skills_without_fixed_four():
    envs, _ = make_envs(world_config(fixed_four_skill_and_loc=False), [4])
    params = aw.GTBWorldParams.from_env(envs[0])
    state = aw.initial_state(params, [4])
    pmsm, pay = params.payment_max_skill_multiplier, params.payment
    want = np.minimum(pmsm, (pmsm - 1) * state.build_skill + 1) * pay
    np.testing.assert_allclose(state.build_payment, want, rtol=0, atol=1e-12)
    assert not params.water[state.locs[0, :, 0], state.locs[0, :, 1]].any()


def test_fixed_four_payments_are_the_ranked_ones(world):
    params, state = world
    for e in range(2):
        assert sorted(state.build_payment[e].tolist()) == sorted(params.ranked_payments.tolist())
        corners = {tuple(x) for x in params.ranked_locs.tolist()}
        assert {tuple(x) for x in state.locs[e].tolist()} == corners


def test_bad_actions_and_configs_are_named():
    envs, _ = make_envs(world_config(episode_length=5), [0])
    params = aw.GTBWorldParams.from_env(envs[0])
    state = aw.initial_state(params, [0])
    with pytest.raises(ValueError, match="actions must be ints in 0..5"):
        aw.step(state, params, np.full((1, params.n_agents), 6))
    for _ in range(5):
        aw.step(state, params, np.zeros((1, params.n_agents), dtype=np.int64))
    with pytest.raises(RuntimeError, match="reset"):
        aw.step(state, params, np.zeros((1, params.n_agents), dtype=np.int64))
    full = env_config(PHASE2_ENV_CONFIG, without_tax=True)
    env = foundation.make_env_instance(SCENARIO_NAME, seed=0, **full)
    with pytest.raises(ValueError, match="ContinuousDoubleAuction"):
        aw.GTBWorldParams.from_env(env)

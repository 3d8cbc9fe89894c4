"""Grid-world Tag's numpy reference: hand-computed steps, observations, starts and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from tag_gridworld_support import host_state, reset_done_envs

from ai_economist.example_envs.tag_gridworld import TagGridWorld
from ai_economist.example_envs.tag_gridworld.env import NUM_ACTIONS, STEP_KERNEL

f32 = np.float32
STAY, PLUS_X, MINUS_X, PLUS_Y, MINUS_Y = range(5)


def fixed_env(xs, ys, **kwargs) -> TagGridWorld:
    kwargs.setdefault("grid_length", 4)
    kwargs.setdefault("episode_length", 5)
    return TagGridWorld(
        num_taggers=len(xs) - 1, starting_location_x=xs, starting_location_y=ys, **kwargs
    )


def step(env, state, *actions):
    state["sampled_actions_shared"][:] = np.array(actions, np.int32)
    env.reference_step(state)


def test_wall_hits_step_costs_then_a_tag_ends_the_episode():
    env = fixed_env([0, 2, 4], [0, 2, 4])
    s = host_state(env, 1)
    step(env, s, MINUS_X, PLUS_X, PLUS_Y)  # tagger 0 and the runner walk into walls
    np.testing.assert_array_equal(s["loc_x"], [[0, 3, 4]])
    np.testing.assert_array_equal(s["loc_y"], [[0, 2, 4]])
    expected = [f32(-0.1) + f32(-0.01), f32(-0.01), f32(-0.1) + f32(0.01)]
    np.testing.assert_array_equal(s["rewards_shared"], [expected])
    np.testing.assert_allclose(s["rewards_shared"], [[-0.11, -0.01, -0.09]], rtol=1e-6)
    assert s["_timestep_"][0] == 1 and s["_done_"][0] == 0

    step(env, s, STAY, PLUS_Y, MINUS_X)  # tagger 1 to (3, 3), runner to (3, 4): no tag
    np.testing.assert_array_equal(s["rewards_shared"], [[f32(-0.01), f32(-0.01), f32(0.01)]])
    assert s["_done_"][0] == 0

    step(env, s, STAY, PLUS_Y, STAY)  # tagger 1 onto the runner's cell
    np.testing.assert_array_equal(s["loc_x"][0, 1:], [3, 3])
    np.testing.assert_array_equal(s["loc_y"][0, 1:], [4, 4])
    np.testing.assert_array_equal(s["rewards_shared"], [[10.0, 10.0, -2.0]])
    assert s["_done_"][0] == 1 and s["_timestep_"][0] == 3
    assert s["episodes_completed"][0] == 1
    assert s["last_episode_tagged"][0] == 1 and s["last_episode_length"][0] == 3
    assert env.episode_metrics(s.__getitem__) == {
        "tag rate": 1.0,
        "episode length": 3.0,
        "episodes completed": 1.0,
    }


def test_tag_and_wall_hit_in_one_step_add_up():
    env = fixed_env([1, 0], [0, 0], tag_reward_for_tagger=5.0)
    s = host_state(env, 1)
    step(env, s, MINUS_X, MINUS_X)  # tagger to (0, 0); runner walks into the wall at (0, 0)
    np.testing.assert_array_equal(s["rewards_shared"], [[5.0, f32(-0.1) + f32(-2.0)]])
    assert s["_done_"][0] == 1


def test_episode_ends_at_episode_length_without_a_tag():
    env = fixed_env([0, 4], [0, 4], episode_length=2)
    s = host_state(env, 1)
    step(env, s, STAY, STAY)
    assert s["_done_"][0] == 0 and env.episode_metrics(s.__getitem__) == {}
    step(env, s, STAY, STAY)
    assert s["_done_"][0] == 1 and s["_timestep_"][0] == 2
    assert s["last_episode_tagged"][0] == 0 and s["last_episode_length"][0] == 2


def test_full_observation_layout():
    env = fixed_env([0, 2, 4], [0, 2, 4])
    s = host_state(env, 1)
    assert s["observations_shared"].shape == (1, 3, 13)
    np.testing.assert_array_equal(
        s["observations_shared"][0, 2], [0, 0.5, 1, 0, 0.5, 1, 0, 0, 1, 0, 0, 1, 0]
    )
    step(env, s, MINUS_X, PLUS_X, PLUS_Y)  # x = [0, 3, 4], y = [0, 2, 4], t = 1 of 5
    np.testing.assert_array_equal(
        s["observations_shared"][0, 1], f32([0, 0.75, 1, 0, 0.5, 1, 0, 0, 1, 0, 1, 0, 0.2])
    )
    np.testing.assert_array_equal(s["observations_shared"][0, :, 9:12], np.eye(3))


def test_partial_observation_runner_sees_its_nearest_tagger_lowest_index_on_ties():
    env = fixed_env([2, 1, 4, 1], [1, 2, 4, 1], use_full_observation=False, episode_length=4)
    s = host_state(env, 1)
    step(env, s, STAY, STAY, STAY, STAY)  # taggers 0 and 1 both at distance 1
    obs = s["observations_shared"][0]
    np.testing.assert_array_equal(obs[3], f32([0.25, 0.25, 0.5, 0.25, 1, 0.25]))
    np.testing.assert_array_equal(obs[2], f32([1, 1, 0.25, 0.25, 0, 0.25]))
    step(env, s, PLUS_X, STAY, STAY, STAY)  # tagger 0 to distance 4: tagger 1 is nearest
    np.testing.assert_array_equal(s["observations_shared"][0, 3, 2:4], [0.25, 0.5])
    np.testing.assert_array_equal(
        s["observations_shared"][0, 0], f32([0.75, 0.25, 0.25, 0.25, 0, 0.5])
    )


@pytest.mark.parametrize("full", [True, False])
def test_envs_step_independently(full):
    env = TagGridWorld(num_taggers=3, grid_length=3, episode_length=6, use_full_observation=full)
    batch = host_state(env, 4, seed=7)
    consts = env.constants()
    singles = [
        {k: v if k in consts else v[e : e + 1].copy() for k, v in batch.items()} for e in range(4)
    ]
    rng = np.random.default_rng(0)
    for _ in range(5):
        actions = rng.integers(0, NUM_ACTIONS, (4, env.num_agents), dtype=np.int32)
        batch["sampled_actions_shared"][:] = actions
        env.reference_step(batch)
        for e, one in enumerate(singles):
            one["sampled_actions_shared"][:] = actions[e]
            env.reference_step(one)
    for e, one in enumerate(singles):
        for name, value in one.items():
            if name not in consts:
                np.testing.assert_array_equal(batch[name][e : e + 1], value, err_msg=name)


def test_random_starts_are_per_env_seeded_and_on_the_grid():
    env = TagGridWorld(num_taggers=5, grid_length=6, seed=3)
    a, b = env.initial_state(50, 11), env.initial_state(50, 11)
    np.testing.assert_array_equal(a["loc_x"], b["loc_x"])
    np.testing.assert_array_equal(a["loc_y"], b["loc_y"])
    assert not np.array_equal(a["loc_x"], env.initial_state(50, 12)["loc_x"])
    np.testing.assert_array_equal(env.initial_state(50, None)["loc_x"], env.initial_state(50, 3)["loc_x"])  # fmt: skip
    assert a["loc_x"].dtype == np.int32 and a["loc_x"].shape == (50, 6)
    both = np.concatenate([a["loc_x"], a["loc_y"]])
    assert both.min() == 0 and both.max() == 6  # inclusive bounds are reached
    assert len({tuple(r) for r in a["loc_x"]}) > 40  # envs differ
    np.testing.assert_array_equal(a["action_mask_shared"], 1.0)


def test_center_and_explicit_starts():
    center = TagGridWorld(num_taggers=2, grid_length=5, start="center").initial_state(2, 0)
    np.testing.assert_array_equal(center["loc_x"], [[2, 2, 0]] * 2)
    np.testing.assert_array_equal(center["loc_y"], [[2, 2, 0]] * 2)
    fixed = fixed_env([1, 2, 3], [3, 2, 1]).initial_state(3, 0)
    np.testing.assert_array_equal(fixed["loc_y"], [[3, 2, 1]] * 3)


def test_declaration():
    env = TagGridWorld(num_taggers=4, use_full_observation=False)
    spec = env.state_spec()
    assert spec["observations_shared"].shape == (5, 6)
    assert spec["action_mask_shared"].shape == (5, 5) and not spec["action_mask_shared"].kernel_arg
    group = env.policies()["shared"]
    assert (group.first_agent, group.num_agents, group.obs_dim, group.num_actions) == (0, 5, 6, 5)
    kernels = env.kernels()
    assert kernels.step_kernels == (STEP_KERNEL,) and kernels.cuda_source.is_file()
    assert TagGridWorld(**env.config()).config() == env.config()
    assert TagGridWorld(num_taggers=4).state_spec()["observations_shared"].shape == (5, 21)


def test_reset_restores_each_envs_own_start():
    env = TagGridWorld(num_taggers=2, grid_length=2, episode_length=1, seed=5)
    s = host_state(env, 3)
    initial = {k: v.copy() for k, v in s.items()}
    step(env, s, *([PLUS_X] * 3))
    assert (s["_done_"] == 1).all() and not np.array_equal(s["loc_x"], initial["loc_x"])
    reset_done_envs(env, s, initial)
    for name in ("loc_x", "loc_y", "observations_shared", "_timestep_", "_done_"):
        np.testing.assert_array_equal(s[name], initial[name], err_msg=name)
    np.testing.assert_array_equal(s["episodes_completed"], 1)
    np.testing.assert_array_equal(s["last_episode_length"], 1)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_taggers": 0}, "num_taggers must be a positive integer"),
        ({"grid_length": 40000}, "grid_length=40000 exceeds"),
        ({"episode_length": 1.5}, "episode_length must be a positive integer"),
        ({"start": "corner"}, "start must be one of"),
        ({"wall_hit_penalty": float("nan")}, "wall_hit_penalty must be finite"),
        ({"use_full_observation": "yes"}, "use_full_observation must be True or False"),
        ({"num_taggers": 1, "starting_location_x": [0, 1]}, "give both"),
        ({"num_taggers": 1, "starting_location_x": [0], "starting_location_y": [0]}, "2 integers"),
        ({"num_taggers": 1, "grid_length": 3, "starting_location_x": [0, 4],
          "starting_location_y": [0, 0]}, r"starting_location_x must lie in \[0, grid_length=3\]"),
    ],
)  # fmt: skip
def test_bad_arguments_name_the_key(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TagGridWorld(**kwargs)


def test_bad_action_names_the_field():
    env = fixed_env([0, 4], [0, 4])
    s = host_state(env, 1)
    with pytest.raises(ValueError, match="sampled_actions_shared holds action 5; expected 0..4"):
        step(env, s, 5, 0)

"""Continuous Tag's numpy reference against hand-computed steps and invariants."""

from __future__ import annotations

import numpy as np
import pytest
from tag_continuous_helpers import host_state, set_actions

from ai_economist.example_envs.tag_continuous import TagContinuous
from ai_economist.example_envs.tag_continuous.dynamics import TWO_PI

# acceleration levels [0, -1, 0, 1], turn levels [0, -pi/2, 0, pi/2]: action = 4 * accel + turn
LEVELS = dict(
    min_acceleration=-1.0, max_acceleration=1.0, num_acceleration_levels=3,
    min_turn=-np.pi / 2, max_turn=np.pi / 2, num_turn_levels=3,
)  # fmt: skip
NOOP, ACCELERATE, TURN_RIGHT = 0, 3 * 4 + 0, 0 * 4 + 1


def make(xs, ys, dirs=None, **kwargs) -> TagContinuous:
    n, taggers = len(xs), kwargs.pop("num_taggers", 1)
    defaults = dict(
        num_taggers=taggers, num_runners=n - taggers, grid_length=10.0, episode_length=5,
        starting_location_x=xs, starting_location_y=ys,
        starting_directions=[0.0] * n if dirs is None else dirs, **LEVELS,
    )  # fmt: skip
    return TagContinuous(**{**defaults, **kwargs})


def step(env: TagContinuous, state: dict, actions) -> None:
    set_actions(state, np.array(actions, np.int32).reshape(1, -1), env.num_taggers)
    env.reference_step(state)


def rewards(state: dict) -> np.ndarray:
    return np.concatenate([state["rewards_tagger"], state["rewards_runner"]], axis=1)[0]


def test_published_sizes():
    env = TagContinuous(
        num_taggers=10, num_runners=100, num_acceleration_levels=20, num_turn_levels=20,
        use_full_observation=False, num_other_agents_observed=10,
    )  # fmt: skip
    assert env.num_actions == 21 * 21
    assert env.obs_dim == 7 * 10 + 1
    groups = env.policies()
    assert (groups["tagger"].first_agent, groups["tagger"].num_agents) == (0, 10)
    assert (groups["runner"].first_agent, groups["runner"].num_agents) == (10, 100)
    assert TagContinuous(num_taggers=2, num_runners=3).obs_dim == 7 * 4 + 1  # full observation


def test_tag_at_exactly_the_tagging_distance_is_no_tag():
    # margin = 0.25 * 10 = 2.5: runner 1 sits at exactly 2.5, runner 2 at 2.4 (tagged)
    env = make([5.0, 7.5, 5.0], [5.0, 5.0, 7.4], tagging_distance=0.25, tag_reward_for_tagger=3.0,
               tag_penalty_for_runner=-2.0, step_penalty_for_tagger=-0.5,
               step_reward_for_runner=0.25)  # fmt: skip
    state = host_state(env, 1)
    step(env, state, [NOOP] * 3)
    assert state["tagged_by"][0].tolist() == [-1, -1, 0]
    np.testing.assert_array_equal(rewards(state), np.float32([-0.5 + 3.0, 0.25, 0.25 - 2.0]))
    assert state["still_in_the_game"][0].tolist() == [1, 1, 0]
    assert (state["runners_left"][0], state["episode_tags"][0], state["_done_"][0]) == (1, 1, 0)
    step(env, state, [NOOP] * 3)  # the tagged runner is out: no reward, no second tag
    np.testing.assert_array_equal(rewards(state), np.float32([-0.5, 0.25, 0.0]))
    assert state["episode_tags"][0] == 1


def test_tagger_collects_one_reward_per_runner_and_nearest_tagger_tags():
    # runners 2 and 3 are both closest to tagger 1; runner 4 is closer to tagger 0
    env = make([0.0, 5.0, 5.1, 4.9, 0.3], [0.0, 5.0, 5.0, 5.0, 0.0], num_taggers=2,
               tagging_distance=0.05, tag_reward_for_tagger=2.0)  # fmt: skip
    state = host_state(env, 1)
    step(env, state, [NOOP] * 5)
    assert state["tagged_by"][0].tolist() == [-1, -1, 1, 1, 0]
    np.testing.assert_array_equal(rewards(state)[:2], np.float32([2.0, 4.0]))
    assert state["runners_left"][0] == 0 and state["_done_"][0] == 1
    assert state["completed_episodes"][0] == 1 and state["last_episode_tags"][0] == 3


def test_edge_clamping_and_penalty():
    env = make([1.0, 9.5], [1.0, 5.0], edge_hit_penalty=-0.3)
    state = host_state(env, 1)
    step(env, state, [NOOP, ACCELERATE])  # a = 1, s = min(1, 0 + 1) = 1 -> a reset, x = 10.5
    assert state["speed"][0, 1] == 1.0 and state["acceleration"][0, 1] == 0.0
    assert state["loc_x"][0, 1] == 10.0 and state["loc_y"][0, 1] == 5.0
    assert rewards(state)[1] == np.float32(-0.3)
    step(env, state, [NOOP, NOOP])  # keeps running into the wall
    assert state["loc_x"][0, 1] == 10.0 and rewards(state)[1] == np.float32(-0.3)
    step(env, state, [NOOP, 1 * 4])  # decelerate by 1: speed 0, back inside, no penalty
    assert state["speed"][0, 1] == 0.0 and rewards(state)[1] == 0.0


def test_turn_wraps_heading_into_zero_two_pi_and_speed_is_capped_by_skill():
    env = make([5.0, 2.0], [5.0, 2.0], skill_level_runner=0.5)
    state = host_state(env, 1)
    step(env, state, [NOOP, ACCELERATE + TURN_RIGHT])  # heading 0 - pi/2 -> 3 pi/2
    expected = TWO_PI + np.float32(-np.pi / 2)
    assert state["direction"][0, 1] == expected
    assert state["speed"][0, 1] == 0.5  # max_speed 1 x skill 0.5
    assert state["loc_y"][0, 1] == np.float32(2.0) + np.float32(0.5) * np.sin(expected)


def test_episode_ends_at_episode_length_with_the_end_of_game_reward():
    env = make(
        [0.0, 9.0, 9.0], [0.0, 9.0, 1.0], episode_length=2, end_of_game_reward_for_runner=5.0
    )
    state = host_state(env, 1)
    step(env, state, [NOOP] * 3)
    assert state["_done_"][0] == 0 and rewards(state).tolist() == [0.0, 0.0, 0.0]
    step(env, state, [NOOP] * 3)
    assert state["_done_"][0] == 1 and state["_timestep_"][0] == 2
    assert rewards(state).tolist() == [0.0, 5.0, 5.0]
    assert state["completed_episodes"][0] == 1 and state["last_episode_tags"][0] == 0


def test_runner_tagged_at_the_last_step_gets_no_end_of_game_reward():
    env = make([0.0, 0.1, 9.0], [0.0, 0.0, 9.0], episode_length=1, tagging_distance=0.05)
    state = host_state(env, 1)
    step(env, state, [NOOP] * 3)
    assert rewards(state).tolist() == [1.0, -1.0, 1.0]


def test_runners_that_stay_in_the_game_are_tagged_again():
    env = make([0.0, 0.1], [0.0, 0.0], tagging_distance=0.05, runner_exits_game_after_tagged=False)
    state = host_state(env, 1)
    for t in range(1, 4):
        step(env, state, [NOOP, NOOP])
        assert state["episode_tags"][0] == t and state["runners_left"][0] == 1
        assert rewards(state).tolist() == [1.0, -1.0]
    assert state["_done_"][0] == 0


def test_nearest_observation_order_ties_and_padding():
    # from agent 0 at (5, 5): agent 4 at 0.5, agents 2 and 3 at 1 (tie: lower id first), agent 1 at 3
    xs, ys = [5.0, 8.0, 6.0, 4.0, 5.0], [5.0, 5.0, 5.0, 5.0, 5.5]
    env = make(xs, ys, use_full_observation=False, num_other_agents_observed=3, episode_length=4)
    state = host_state(env, 1)
    diag = np.float32(10.0) * np.float32(np.sqrt(2.0))
    obs = state["observations_tagger"][0, 0]
    np.testing.assert_array_equal(obs[0:3], (np.float32([5.0, 6.0, 4.0]) - 5) / diag)  # dx
    np.testing.assert_array_equal(obs[3:6], (np.float32([5.5, 5.0, 5.0]) - 5) / diag)  # dy
    assert obs[15:18].tolist() == [0, 0, 0] and obs[18:21].tolist() == [1, 1, 1]
    assert obs[21] == 0.0  # t / T at reset
    env = make(xs, ys, use_full_observation=False, num_other_agents_observed=3, episode_length=4,
               tagging_distance=0.06)  # fmt: skip  # agent 4 (0.5 away) is tagged at step 1
    state = host_state(env, 1)
    step(env, state, [NOOP] * 5)
    step(env, state, [NOOP] * 5)  # agent 4 has left: order 2, 3, 1
    obs = state["observations_tagger"][0, 0]
    np.testing.assert_array_equal(obs[0:3], (np.float32([6.0, 4.0, 8.0]) - 5) / diag)
    assert obs[21] == np.float32(0.5)
    runner_out = state["observations_runner"][0, 3]
    assert not runner_out.any()  # an agent out of the game sees zeros


def test_padding_when_fewer_agents_remain_than_observed():
    env = make([0.0, 0.1, 9.0], [0.0, 0.0, 9.0], use_full_observation=False,
               num_other_agents_observed=2, tagging_distance=0.05)  # fmt: skip
    state = host_state(env, 1)
    step(env, state, [NOOP] * 3)  # runner 1 is tagged; obs still shows it (pre-tag state)
    assert state["observations_tagger"][0, 0][12:14].tolist() == [1, 1]
    step(env, state, [NOOP] * 3)
    obs = state["observations_tagger"][0, 0]
    assert obs[12:14].tolist() == [1, 0]  # one other agent left, the second slot is padding
    assert obs[1] == 0 and obs[3] == 0


def test_full_observation_slots_and_out_of_game_agents():
    env = make([0.0, 0.1, 9.0], [0.0, 0.0, 9.0], tagging_distance=0.05)
    state = host_state(env, 1)
    diag = np.float32(10.0) * np.float32(np.sqrt(2.0))
    obs = state["observations_runner"][0, 1]  # agent 2 sees agents 0 and 1 in slots 0 and 1
    np.testing.assert_array_equal(obs[0:2], (np.float32([0.0, 0.1]) - 9) / diag)
    assert obs[10:12].tolist() == [1, 0] and obs[12:14].tolist() == [1, 1]
    step(env, state, [NOOP] * 3)
    step(env, state, [NOOP] * 3)
    out = state["observations_runner"][0, 0]  # agent 1, tagged: types and flags only
    assert not out[:10].any() and out[14] == 0
    assert out[10:12].tolist() == [1, 0] and out[12:14].tolist() == [1, 1]


def test_own_state_ends_the_observation_and_is_zero_out_of_the_game():
    # tagger 0 at (5, 2.5) heading pi, runner 1 at (4.2, 2.5): tagged once the tagger has moved
    # to x = 4 (margin 0.05 * 10 = 0.5), runner 2 far away
    env = make([5.0, 4.2, 9.0], [2.5, 2.5, 8.0], [np.pi, 0.0, 0.0],
               use_full_observation=False, num_other_agents_observed=2,
               tagging_distance=0.05, observe_own_state=True)  # fmt: skip
    assert env.obs_dim == 7 * 2 + 1 + 5
    assert (
        make(
            [1.0, 2.0], [1.0, 2.0], use_full_observation=False, num_other_agents_observed=1
        ).obs_dim
        == 7 + 1
    )  # off by default (the original)
    f32 = np.float32
    state = host_state(env, 1)
    heading = f32(np.pi)
    np.testing.assert_array_equal(
        state["observations_tagger"][0, 0][-5:],
        f32([0.5, 0.25, 0.0, np.cos(heading), np.sin(heading)]),
    )
    step(env, state, [ACCELERATE, NOOP, NOOP])  # speed 1, heading pi: x = 5 - 1
    assert state["tagged_by"][0].tolist() == [-1, 0, -1]
    own = state["observations_tagger"][0, 0][-5:]
    x = f32(5.0) + f32(1.0) * np.cos(heading)
    np.testing.assert_array_equal(
        own, [x / f32(10.0), f32(0.25), f32(1.0) / (f32(1.0) + f32(1e-10)), own[3], own[4]]
    )
    np.testing.assert_array_equal(own[3:], [np.cos(heading), np.sin(heading)])
    # the tagged runner's row still describes the step's start of tags, as its neighbour features
    np.testing.assert_array_equal(
        state["observations_runner"][0, 0][-5:], f32([f32(4.2) / f32(10.0), 0.25, 0.0, 1.0, 0.0])
    )
    step(env, state, [NOOP] * 3)
    assert not state["observations_runner"][0, 0].any()  # out of the game: zeros, own state too


def test_egocentric_positions_are_forward_and_left_of_the_heading():
    # tagger 0 at (5, 5) heading pi/2 (north): runner 1 one to the east (its right), runner 2
    # two to the north (ahead); slots in distance order: runner 1, runner 2
    heading = np.float32(np.pi / 2)
    env = make([5.0, 6.0, 5.0], [5.0, 5.0, 7.0], [float(heading), 0.0, 0.0],
               use_full_observation=False, num_other_agents_observed=2,
               egocentric_observation=True)  # fmt: skip
    state = host_state(env, 1)
    diag = np.float32(10.0) * np.float32(np.sqrt(2.0))
    c, s = np.cos(heading), np.sin(heading)
    dx, dy = np.float32([1.0, 0.0]) / diag, np.float32([0.0, 2.0]) / diag
    obs = state["observations_tagger"][0, 0]
    np.testing.assert_array_equal(obs[0:2], dx * c + dy * s)  # forward
    np.testing.assert_array_equal(obs[2:4], dy * c - dx * s)  # left
    np.testing.assert_allclose(obs[0:4] * diag, [0.0, 2.0, -1.0, 0.0], atol=1e-6)
    plain = make([5.0, 6.0, 5.0], [5.0, 5.0, 7.0], [float(heading), 0.0, 0.0],
                 use_full_observation=False, num_other_agents_observed=2)  # fmt: skip
    other = host_state(plain, 1)["observations_tagger"][0, 0]
    np.testing.assert_array_equal(obs[4:], other[4:])  # only the positions turn


def test_reward_sums_over_random_episodes():
    env = TagContinuous(num_taggers=3, num_runners=12, grid_length=4.0, episode_length=30,
                        tagging_distance=0.08, tag_reward_for_tagger=10.0,
                        tag_penalty_for_runner=-10.0, end_of_game_reward_for_runner=1.0,
                        use_full_observation=False, num_other_agents_observed=4, seed=7)  # fmt: skip
    state = host_state(env, 3, seed=1)
    rng = np.random.default_rng(0)
    totals = np.zeros((3, env.num_agents))
    for _ in range(env.episode_length):
        if state["_done_"].all():
            break
        set_actions(state, rng.integers(0, env.num_actions, (3, env.num_agents)), 3)
        live = state["_done_"] == 0
        env.reference_step(state)
        totals[live] += np.concatenate([state["rewards_tagger"], state["rewards_runner"]], 1)[live]
    tags = state["last_episode_tags"]
    assert (state["completed_episodes"] == 1).all() and tags.sum() > 0
    np.testing.assert_allclose(totals[:, :3].sum(1), 10.0 * tags)
    survivors = state["still_in_the_game"][:, 3:].sum(1)
    at_end = state["_timestep_"] == env.episode_length
    np.testing.assert_allclose(totals[:, 3:].sum(1), -10.0 * tags + np.where(at_end, survivors, 0))
    assert (state["runners_left"] == survivors).all()
    assert ((state["loc_x"] >= 0) & (state["loc_x"] <= 4.0)).all()


def test_initial_state_is_per_env_and_seeded():
    env = TagContinuous(num_taggers=2, num_runners=5, grid_length=3.0, seed=11)
    a, b = env.initial_state(4, 0), env.initial_state(4, 0)
    np.testing.assert_array_equal(a["loc_x"], b["loc_x"])
    assert not np.array_equal(a["loc_x"][0], a["loc_x"][1])
    assert not np.array_equal(a["loc_x"], env.initial_state(4, 1)["loc_x"])
    assert ((a["loc_x"] >= 0) & (a["loc_x"] < 3.0)).all()
    allowed = np.float32([0, np.pi / 2, np.pi, 3 * np.pi / 2])
    assert np.isin(a["direction"], allowed).all()
    assert (
        a["action_mask_tagger"].shape == (4, 2, env.num_actions) and a["action_mask_tagger"].all()
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_taggers": 0}, "num_taggers must be an integer >= 1"),
        ({"edge_hit_penalty": 0.5}, "edge_hit_penalty must be a number <= 0"),
        ({"tagging_distance": 2.0}, r"tagging_distance must be a number in \[0, 1\]"),
        ({"num_runners": 2.5}, "num_runners must be an integer"),
        ({"starting_location_x": [1.0], "starting_location_y": [1.0]}, "one value per agent"),
        ({"num_other_agents_observed": 50}, "must be <= num_agents"),
        ({"observe_own_state": 1}, "observe_own_state must be True or False"),
        ({"egocentric_observation": "yes"}, "egocentric_observation must be True or False"),
        ({"use_full_observation": False, "num_runners": 99, "num_other_agents_observed": 65},
         "must be <= 64"),
    ],
)  # fmt: skip
def test_bad_arguments_name_the_key(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        TagContinuous(**kwargs)


def test_unknown_argument_and_bad_action():
    with pytest.raises(TypeError, match="'num_tagers' \\(did you mean 'num_taggers'\\?\\)"):
        TagContinuous(num_tagers=2)
    env = TagContinuous(num_taggers=1, num_runners=2)
    state = host_state(env, 2)
    state["sampled_actions_runner"][1, 0] = env.num_actions
    with pytest.raises(ValueError, match=r"agent 1 in env 1 is outside \[0, 121\)"):
        env.reference_step(state)


@pytest.mark.parametrize("k", [0, 1, 3, 7, 8])
def test_nearest_neighbors_equal_a_stable_sort_with_many_ties(k):
    from ai_economist.example_envs.tag_continuous import dynamics

    rng = np.random.default_rng(k)
    x = rng.integers(0, 3, (5, 8)).astype(np.float32)  # coarse grid: many equal distances
    y = rng.integers(0, 3, (5, 8)).astype(np.float32)
    still_in = (rng.random((5, 8)) > 0.3).astype(np.int32)
    d2 = dynamics.squared_distances(x, y)
    got = dynamics.nearest_neighbors(d2, still_in, k)
    for e in range(5):
        for i in range(8):
            others = [j for j in range(8) if j != i and still_in[e, j]]
            expected = sorted(others, key=lambda j: (d2[e, i, j], j))[:k]
            assert got[e, i].tolist() == expected + [-1] * (k - len(expected))

"""The CPU fast paths give exactly what the general paths give (bit for bit).

The Foundation env (one env) and the batched array model take shortcuts for speed: a direct
observation/mask assembly for the standard components, collated actions kept out of the
agents' dicts, (1, A)-shaped constants, tabulated time-only values, cached subsidy amounts,
column sums over the short filter axis.  Each is checked here against the path it replaces.
"""

import copy
import dataclasses
import json

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.base.base_env import BaseEnvironment
from ai_economist.foundation.scenarios.covid19 import covid19_env
from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG, env_config
from ai_economist.foundation.scenarios.covid19.model import dynamics as d
from ai_economist.foundation.scenarios.covid19.model.simulation import (
    ComponentParams,
    CovidSimulation,
)


def make(**overrides):
    return foundation.make_env_instance(
        "CovidAndEconomySimulation", **env_config(TRAINING_ENV_CONFIG, **overrides)
    )


def random_actions(rng):
    a = rng.integers(0, 11, 51)
    a[rng.random(51) < 0.6] = 0
    return {"a": a, "p": int(rng.integers(0, 21))}


def assert_same_tree(x, y, path="obs"):
    assert type(x) is type(y), path
    if isinstance(x, dict):
        assert list(x) == list(y), path  # same keys in the same order
        for key in x:
            assert_same_tree(x[key], y[key], f"{path}/{key}")
    elif isinstance(x, np.ndarray):
        assert x.dtype == y.dtype and x.shape == y.shape, path
        np.testing.assert_array_equal(x, y, err_msg=path)
    else:
        assert x == y, path


def test_direct_observations_equal_the_base_env_assembly():
    env = make()
    assert env._make_fast_observation_plan() is not False
    rng = np.random.default_rng(0)
    env.reset()
    for _ in range(300):  # covers the first subsidy decision (t = 90) and cooldowns
        env.step(random_actions(rng))
        fast = env._generate_observations()
        general = BaseEnvironment._generate_observations(env)
        assert_same_tree(fast, general)


def test_real_world_policies_take_the_same_direct_path():
    env = make(use_real_world_policies=True, episode_length=60)
    env.reset()
    for _ in range(60):
        env.step({"a": np.zeros(51, int), "p": 0})
        assert_same_tree(env._generate_observations(), BaseEnvironment._generate_observations(env))


def test_other_configurations_use_the_base_path():
    assert make(flatten_observations=True)._make_fast_observation_plan() is False
    assert make(flatten_masks=False)._make_fast_observation_plan() is False
    components = copy.deepcopy(TRAINING_ENV_CONFIG["components"])[:2]
    assert make(components=components)._make_fast_observation_plan() is False


def run(env, actions, force_dicts=False):
    if force_dicts:  # the base behaviour: actions always go through the agents' dicts
        env._collated_actions_to_agent_dicts = lambda: True
    env.reset()
    out = []
    for act in actions:
        obs, rew, done, _ = env.step(act)
        out.append((obs, rew, done))
        assert all(v == 0 for a in env.world.agents for v in a.action.values())
    return out, env.previous_episode_replay_log


def test_collated_actions_kept_out_of_the_agents_dicts_change_nothing():
    rng = np.random.default_rng(1)
    actions = []
    for t in range(40):
        act = random_actions(rng)
        if t % 7 == 3:
            act["4"] = 6  # a per-agent entry next to "a": the dicts are written then
        actions.append(act)
    fast, fast_log = run(make(episode_length=40, seed=0), actions)
    general, general_log = run(make(episode_length=40, seed=0), actions, force_dicts=True)
    assert fast_log == general_log
    for (obs_f, rew_f, done_f), (obs_g, rew_g, done_g) in zip(fast, general, strict=True):
        assert_same_tree(obs_f, obs_g)
        assert_same_tree(rew_f, rew_g, "rew")
        assert done_f == done_g


def test_dense_logged_episodes_record_the_states_actions():
    env = make(episode_length=5)
    env.reset(force_dense_logging=True)
    actions = np.zeros(51, int)
    actions[3] = 7
    env.step({"a": actions, "p": 2})
    logged = env.dense_log["actions"][0]
    assert logged["3"] == {"ControlUSStateOpenCloseStatus": 7} and logged["0"] == {}
    assert logged["p"] == {"FederalGovernmentSubsidy": 2}


def test_parse_actions_outside_step_still_writes_the_dicts():
    env = make()
    env.reset()
    actions = np.zeros(51, int)
    actions[5] = 3
    env.parse_actions({"a": actions})
    assert env.world.agents[5].action["ControlUSStateOpenCloseStatus"] == 3
    env.set_agent_component_action(6, "ControlUSStateOpenCloseStatus", 9)
    env.step()  # no actions: the components read the dicts
    levels = env.world.simulation.stringency_level[0]
    assert levels[5] == 3 and levels[6] == 9


def test_one_env_matches_a_batch_and_envs_on_different_steps():
    env = make()
    params, comps = env.params, env.component_params()
    single = [CovidSimulation(params, comps, 1) for _ in range(3)]
    batch = CovidSimulation(params, comps, 3)
    rng = np.random.default_rng(2)
    for t in range(1, 320):
        agent = rng.integers(0, 11, (3, 51))
        planner = rng.integers(0, 21, 3)
        if t == 150:  # env 1 starts over: the envs are on different steps from here
            batch.reset_envs(np.array([False, True, False]))
            single[1].reset()
        rewards = batch.step(agent, planner)
        for e, sim in enumerate(single):
            agent_rew, planner_rew = sim.step(agent[e : e + 1], planner[e : e + 1])
            np.testing.assert_array_equal(agent_rew[0], rewards[0][e])
            np.testing.assert_array_equal(planner_rew, rewards[1][e : e + 1])
    for e, sim in enumerate(single):
        for attr in CovidSimulation.STATE_ATTRS:
            np.testing.assert_array_equal(getattr(sim, attr)[0], getattr(batch, attr)[e], attr)


def test_component_params_copy_every_field_from_the_one_component_that_has_it():
    env = make()
    comps = env.component_params()
    copied = [name for names in covid19_env._COMPONENT_FIELDS for name in names]
    assert sorted(copied) == sorted(f.name for f in dataclasses.fields(ComponentParams))
    for field in dataclasses.fields(ComponentParams):
        holders = [c for c in env.components if hasattr(c, field.name)]
        assert len(holders) == 1, field.name
        np.testing.assert_array_equal(
            getattr(comps, field.name), getattr(holders[0], field.name), field.name
        )
        assert getattr(comps, field.name) is not None, field.name


def test_unemployment_column_sums_equal_numpy_sums():
    rng = np.random.default_rng(3)
    for shape in [(1000, 51, 5), (64, 51, 3), (2, 51, 9), (1, 51, 5)]:
        filters = rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 7, shape)
        weights = rng.standard_normal(shape[-2:])
        expected = (filters * weights).sum(axis=-1)
        np.testing.assert_array_equal(d._sum_last_axis(filters * weights), expected)
        bias, population = rng.random(shape[-2]), rng.uniform(1e5, 1e7, shape[-2])
        np.testing.assert_array_equal(
            d.unemployment_step(filters, weights, bias, 1.3, population),
            (d.softplus(expected * 1.3) + bias) * population / 100.0,
        )


@pytest.mark.parametrize("eta", [0.5, 1.0, 2.0, 3.5])
def test_crra_of_a_scalar_equals_the_array_value(eta):
    x = np.random.default_rng(4).uniform(-1e-3, 2e-2, 2000)
    array = d.crra_nonlinearity(x, eta)
    scalars = np.array([d.crra_nonlinearity(np.float64(v), eta) for v in x])
    np.testing.assert_array_equal(array, scalars)


def test_finished_replay_log_is_converted_when_read():
    env = make(episode_length=3, seed=0)
    rng = np.random.default_rng(5)
    env.reset()
    sent = [random_actions(rng) for _ in range(3)]
    for act in sent:
        env.step(act)
    env.reset()
    env.step(random_actions(rng))  # the next episode's steps are not in it
    log = env.previous_episode_replay_log
    json.dumps(log)
    assert [entry["actions"]["a"] for entry in log["step"]] == [a["a"].tolist() for a in sent]
    assert env.previous_episode_replay_log is log

"""The one-pass ``env.step`` (``one_env_step.py``, ``one_env_model.py``) gives exactly what the
general path gives: the same observations (values, dtypes, key order), rewards, dones, infos,
agent states, global state, episode metrics, replay and dense logs, simulation state and
random draws, bit for bit; and every call or configuration it does not cover takes the
general path."""

import copy
import json

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG, env_config
from ai_economist.foundation.scenarios.covid19.env import one_env_model as model
from ai_economist.foundation.scenarios.covid19.model import dynamics
from ai_economist.foundation.scenarios.covid19.model.simulation import CovidSimulation


def make(fast=True, **overrides):
    env = foundation.make_env_instance(
        "CovidAndEconomySimulation", **env_config(TRAINING_ENV_CONFIG, **overrides)
    )
    if not fast:
        env._one_env_step = False  # the general path only (BaseEnvironment.step)
    return env


def random_actions(rng, zeros=0.7):
    a = rng.integers(0, 11, 51)
    a[rng.random(51) < zeros] = 0
    act = {"a": a, "p": int(rng.integers(0, 21))}
    return act if rng.random() < 0.8 else {"p": act["p"], "a": act["a"]}


def assert_same(x, y, path="out"):
    """Equal values, types, dtypes, shapes and dict order; floats compared bit for bit."""
    assert type(x) is type(y), path
    if isinstance(x, dict):
        assert list(x) == list(y), path
        for key in x:
            assert_same(x[key], y[key], f"{path}/{key}")
    elif isinstance(x, (list, tuple)):
        assert len(x) == len(y), path
        for i, (a, b) in enumerate(zip(x, y)):
            assert_same(a, b, f"{path}[{i}]")
    elif isinstance(x, np.ndarray):
        assert x.dtype == y.dtype and x.shape == y.shape, path
        assert x.tobytes() == y.tobytes(), path
    elif isinstance(x, float):
        assert np.float64(x).tobytes() == np.float64(y).tobytes(), path
    else:
        assert x == y, path


def snapshot(env):
    """Everything a step may change besides its return value."""
    sim = env.world.simulation
    return {
        "planner": env.world.planner.state.copy(),
        "agent": env.world.agents[7].state.copy(),
        "global": {k: v.copy() for k, v in env.world.global_state.items()},
        "sim": {attr: np.array(getattr(sim, attr)) for attr in CovidSimulation.STATE_ATTRS},
        "beta": np.array(sim.beta),
        "date": env.current_date,
        "new": (np.array(env._new_infections), np.array(env._new_deaths)),
        "actions": [dict(a.action) for a in env.all_agents],
    }


def run_pair(steps, seed, prepare=None, actions=random_actions, **overrides):
    """Step a fast and a general env side by side with the same actions; compare all."""
    fast, general = make(seed=seed, **overrides), make(False, seed=seed, **overrides)
    rng = np.random.default_rng(seed)
    episodes = 0
    for env in (fast, general):
        env.reset()
        if prepare:
            prepare(env)
    for t in range(steps):
        act = actions(rng)
        out_f, out_g = fast.step(copy.deepcopy(act)), general.step(copy.deepcopy(act))
        assert_same(out_f, out_g, f"step {t}")
        if t % 17 == 0 or out_f[2]["__all__"]:
            assert_same(snapshot(fast), snapshot(general), f"state after step {t}")
        if out_f[2]["__all__"]:
            episodes += 1
            assert_same(fast.previous_episode_metrics, general.previous_episode_metrics)
            assert_same(fast.previous_episode_replay_log, general.previous_episode_replay_log)
            assert_same(fast.previous_episode_dense_log, general.previous_episode_dense_log)
            json.dumps(fast.previous_episode_replay_log)
            for env in (fast, general):
                env.reset()
                if prepare:
                    prepare(env)
    assert_same(fast.metrics, general.metrics, "metrics")
    assert_same(fast.replay_log, general.replay_log, "replay log")
    assert_same(fast.rng.random(4), general.rng.random(4), "draws")
    assert fast._one_env_step and general._one_env_step is False
    return episodes


def test_published_config_trajectory_is_bit_identical():
    # 700 steps of 330-day episodes: two episode ends, subsidy decisions, cooldowns,
    # vaccine deliveries from day 296 on, and the fast path's zero-vaccine shortcut before
    assert run_pair(700, seed=3, episode_length=330) == 2


def test_busy_states_and_modulations_are_bit_identical():
    def prepare(env):
        env.set_parameter_modulations(beta_intercept=1.1, beta_slope=0.9, unemployment=1.7)
        # changes 600 days back: the filters drop a non-zero change on every step
        sim, p = env.world.simulation, env.params
        slots = [(t - p.filter_len - 1) % p.history_len for t in range(260)]
        sim.history[0, slots] = np.random.default_rng(9).integers(1, 11, (260, 51))

    run_pair(250, seed=4, prepare=prepare, actions=lambda rng: random_actions(rng, 0.0))


@pytest.mark.parametrize(
    "overrides",
    [
        {"economic_reward_crra_eta": 1, "reward_normalization_factor": 3.5},
        {"economic_reward_crra_eta": 0.5, "allow_observation_scaling": False},
        {"health_priority_scaling_agents": 1, "health_priority_scaling_planner": 1},
    ],
)
def test_other_parameters_are_bit_identical(overrides):
    run_pair(120, seed=5, episode_length=100, **overrides)


def test_dense_logged_episodes_and_mixed_calls_take_the_general_path():
    """Calls the fast path does not cover (dense-logged episodes, seed states, other action
    forms) run through the general path, and the trajectory stays the same."""
    forms = [
        lambda a: a,
        lambda a: {"a": a["a"].astype(np.int32), "p": a["p"]},
        lambda a: {"a": a["a"].astype(float), "p": np.int64(a["p"])},
        lambda a: {"a": a["a"]},
        lambda a: {"p": a["p"], "3": 4},
        lambda a: {**a, "5": 2},
        lambda a: None,
    ]
    counter = iter(range(10**6))

    def actions(rng):
        act = random_actions(rng)
        return forms[next(counter) % len(forms)](act)

    run_pair(150, seed=6, actions=actions, episode_length=40, dense_log_frequency=2)


def per_agent_actions(rng):
    """``{"0": a0, ..., "p": p}`` of Python ints as the original's users send them: sometimes
    shuffled, some NO-OP agents or the planner left out."""
    act = random_actions(rng)
    items = [(str(i), int(v)) for i, v in enumerate(act["a"]) if v or rng.random() < 0.5]
    if rng.random() < 0.9:
        items.insert(int(rng.integers(0, len(items) + 1)), ("p", act["p"]))
    if rng.random() < 0.3:
        items = [items[i] for i in rng.permutation(len(items))]
    return dict(items)


def test_per_agent_dict_actions_take_the_fast_path_bit_identically():
    assert run_pair(400, seed=8, actions=per_agent_actions, episode_length=330) == 1
    env = make(episode_length=20)
    env.reset()
    env.step({"p": 0})
    fast = env._one_env_step
    full = {**{str(i): i % 11 for i in range(51)}, "p": 20}
    agents, planner, copied = fast._checked_actions(full)
    assert agents.dtype == np.int64 and agents.tolist() == [i % 11 for i in range(51)]
    assert planner == 20 and copied == full and copied is not full
    assert fast._checked_actions({"3": 4})[0].tolist() == [0, 0, 0, 4] + [0] * 47
    # everything else is left to the general path (which checks and names the bad value)
    for other in ({"3": np.int64(4)}, {3: 4}, {"3": True}, {"3": 11}, {"3": -1}, {"51": 1},
                  {"p": 21}, {"p": 2.0}, {"a": np.zeros(51, np.int64), "3": 1}):  # fmt: skip
        assert fast._checked_actions(other) is None, other
    # the full dict in the usual key order (its own checks) and reordered (the loop) agree
    reordered = dict(reversed(list(full.items())))
    got = fast._checked_actions(reordered)
    assert got[0].tolist() == agents.tolist() and got[1] == planner and got[2] == reordered
    for key, bad in (("7", True), ("7", 11), ("7", -1), ("7", 2.0), ("p", 21), ("p", True)):
        assert fast._checked_actions({**full, key: bad}) is None, (key, bad)


def test_seed_state_and_rejected_actions_match_the_general_path():
    fast, general = make(seed=1, episode_length=20), make(False, seed=1, episode_length=20)
    for env in (fast, general):
        env.reset()
    state = fast.rng.bit_generator.state
    act = {"a": np.full(51, 3), "p": 4}
    assert_same(fast.step(act, seed_state=state), general.step(act, seed_state=state))
    for bad in ({"a": np.full(51, 11), "p": 0}, {"a": np.full(51, -1), "p": 0}, {"p": 21}):
        for env in (fast, general):
            before = snapshot(env)
            with pytest.raises(ValueError):
                env.step(bad)
            assert_same(snapshot(env), before)
    assert_same(fast.step(act), general.step(act))


@pytest.mark.parametrize(
    "overrides",
    [
        {"use_real_world_policies": True},
        {"flatten_observations": True},
        {"multi_action_mode_agents": True},
        {"components": list(reversed(TRAINING_ENV_CONFIG["components"]))},
    ],
)
def test_other_configurations_keep_the_general_path(overrides):
    env = make(episode_length=60, **overrides)
    env.reset()
    env.step({"p": 0})
    assert env._one_env_step is False


def test_episode_end_and_the_step_after_it():
    env = make(episode_length=3)
    env.reset()
    for _ in range(3):
        _, _, done, _ = env.step({"a": np.zeros(51, int), "p": 0})
    assert done["__all__"] and env.previous_episode_metrics is not None
    with pytest.raises(RuntimeError, match="call reset"):
        env.step({"a": np.zeros(51, int), "p": 0})


def test_softplus_without_its_where_equals_the_model():
    rng = np.random.default_rng(7)
    below = rng.uniform(-30, 20, (1, 51))
    mixed = np.concatenate([below[:, :40], rng.uniform(20, 60, (1, 11))], axis=1)
    for x in (below, mixed, np.full((1, 51), 20.0)):
        assert model._softplus(x).tobytes() == dynamics.softplus(x).tobytes()


@pytest.mark.parametrize("eta", [2.0, 1.0, 0.5, 3.5])
def test_crra_shortcuts_equal_the_model(eta):
    x = np.random.default_rng(8).uniform(-1e-3, 2e-2, (1, 400))
    assert model._crra(x, eta).tobytes() == dynamics.crra_nonlinearity(x, eta).tobytes()
    for value in x[0, :100].tolist() + [np.nan, np.inf, -np.inf, 0.0]:
        expected = dynamics.crra_nonlinearity(np.float64(value), eta)
        assert np.float64(model._crra_scalar(np.float64(value), eta)).tobytes() == (
            np.float64(expected).tobytes()
        )


def test_copies_step_like_the_original():
    import pickle

    env = make(seed=2, episode_length=60)
    rng = np.random.default_rng(2)
    env.reset()
    for _ in range(30):
        env.step(random_actions(rng))
    clones = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    for clone in clones:
        assert clone._one_env_step and clone._one_env_step.env is clone
    for _ in range(35):  # across the episode end
        act = random_actions(rng)
        expected = env.step(copy.deepcopy(act))
        for clone in clones:
            assert_same(clone.step(copy.deepcopy(act)), expected)
        if expected[2]["__all__"]:
            for e in (env, *clones):
                e.reset()

"""The step contract of the COVID-19 env: rejected steps change nothing, episode ends are
enforced, and the dict API and ``FoundationEnvWrapper`` read host actions the same way."""

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG, env_config

N = 51


def make(episode_length=5, **overrides):
    return foundation.make_env_instance(
        "CovidAndEconomySimulation",
        **env_config(TRAINING_ENV_CONFIG, episode_length=episode_length, **overrides),
    )


def closed_but_last(last):
    """Every state closes (level 10) except the last one, whose action is ``last``."""
    actions = np.full(N, 10)
    actions[-1] = last
    return actions


@pytest.mark.parametrize(
    "bad, exc, match",
    [
        ({"a": closed_but_last(99), "p": 0}, ValueError, r"action 99 of agent 50 .*0\.\.10"),
        ({"a": closed_but_last(-1), "p": 0}, ValueError, "out of range"),
        ({"a": np.full(N, 10), "p": 21}, ValueError, r"Action 21 of agent 'p'"),
        ({"a": np.full(N, 10), "p": 0, "7": 12}, ValueError, "agent '7'|agent 7"),
        ({"a": np.full(N, 10), "p": 0, "52": 1}, KeyError, "52"),
        ({"a": np.r_[np.full(N - 1, 10.0), 0.5], "p": 0}, TypeError, "integers"),
        ({"a": np.full(N, 10), "p": 2.5}, TypeError, "integer action"),
    ],
)
def test_a_rejected_step_changes_nothing(bad, exc, match):
    env, fresh = make(), make()
    env.reset(), fresh.reset()
    with pytest.raises(exc, match=match):
        env.step(bad)
    assert env.world.timestep == 0
    assert all(v == 0 for agent in env.all_agents for v in agent.action.values())
    noop = {"a": np.zeros(N, int), "p": 0}
    obs, rew, _, _ = env.step(noop)
    obs_fresh, rew_fresh, _, _ = fresh.step(noop)
    np.testing.assert_array_equal(
        env.world.global_state["Stringency Level"][1],
        fresh.world.global_state["Stringency Level"][1],
    )
    np.testing.assert_array_equal(rew["a"], rew_fresh["a"])
    assert rew["p"] == rew_fresh["p"]
    for key in obs["a"]:
        np.testing.assert_array_equal(obs["a"][key], obs_fresh["a"][key])


def test_step_after_the_episode_end_and_before_reset_are_errors():
    env = make(episode_length=3)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before the first step"):
        env.step({"a": np.zeros(N, int), "p": 0})
    env.reset()
    for _ in range(3):
        _, _, done, _ = env.step()
    assert done["__all__"]
    deaths = env.world.global_state["Deaths"].copy()
    with pytest.raises(RuntimeError, match=r"episode_length=3 .*call reset\(\)"):
        env.step()
    assert env.world.timestep == 3
    np.testing.assert_array_equal(env.world.global_state["Deaths"], deaths)
    env.reset()
    env.step()
    assert env.world.timestep == 1


def test_missing_planner_action_and_integral_floats_mean_the_same_in_both_apis():
    """Missing "p" = the planner's NO-OP; floats holding integers = those integers."""
    explicit, implicit = make(), make()
    explicit.reset(), implicit.reset()
    wrapper = FoundationEnvWrapper(make(), num_envs=1, env_backend="numpy")
    wrapper.reset_all_envs()
    for level in (10.0, 3.0):
        _, rew_explicit, _, _ = explicit.step({"a": np.full(N, int(level)), "p": 0})
        _, rew_implicit, _, _ = implicit.step({"a": np.full(N, level)})
        wrapper.step_all_envs({"a": np.full((1, N), level)})
        np.testing.assert_array_equal(rew_implicit["a"], rew_explicit["a"])
        rewards_a = wrapper.cuda_data_manager.pull_data_from_device("rewards_a")[0]
        rewards_p = wrapper.cuda_data_manager.pull_data_from_device("rewards_p")[0, 0]
        np.testing.assert_allclose(rewards_a, rew_explicit["a"], rtol=1e-5)
        assert rewards_p == pytest.approx(rew_explicit["p"], rel=1e-5)
    assert wrapper.pull("subsidy_level").tolist() == [0]
    assert (wrapper.pull("stringency_level") == 3).all()


@pytest.mark.parametrize("bad", [np.full(N, 2.5), np.full(N, np.nan), np.full(N, True)])
def test_non_integral_actions_are_rejected_by_both_apis(bad):
    env = make()
    env.reset()
    wrapper = FoundationEnvWrapper(make(), num_envs=1, env_backend="numpy")
    wrapper.reset_all_envs()
    with pytest.raises(TypeError, match="must be integers"):
        env.step({"a": bad, "p": 0})
    with pytest.raises(TypeError, match="must be integers"):
        wrapper.step_all_envs({"a": bad[None], "p": np.zeros(1)})
    assert wrapper.pull("_timestep_").tolist() == [0]


def _needs_numba_or_gpu():
    numba = pytest.importorskip("numba")
    if not numba.config.ENABLE_CUDASIM:
        pytest.skip("needs NUMBA_ENABLE_CUDASIM=1 (set by `make test`) or a GPU (-m gpu)")


@pytest.mark.parametrize(
    "backend",
    [
        "numpy",
        "cpu",
        "numba-cudasim",
        pytest.param("numba", marks=pytest.mark.gpu),
        pytest.param("pycuda", marks=pytest.mark.gpu),
    ],
)
def test_wrapper_does_not_run_past_the_episode_end(backend):
    if backend == "numba-cudasim":
        _needs_numba_or_gpu()
        backend = "numba"
    wrapper = FoundationEnvWrapper(make(episode_length=3), num_envs=2, env_backend=backend)
    wrapper.reset_all_envs()
    for _ in range(3):
        wrapper.step_all_envs({"a": np.ones((2, N), int), "p": np.zeros(2, int)})
    assert wrapper.pull("_done_").tolist() == [1, 1]
    with pytest.raises(RuntimeError, match=r"episode_length=3 .*reset_only_done_envs\(\)"):
        wrapper.step_all_envs()
    assert wrapper.pull("_timestep_").tolist() == [3, 3]
    wrapper.reset_only_done_envs()  # what the trainer does after every step
    for _ in range(3):
        wrapper.step_all_envs()
        wrapper.reset_only_done_envs()
    wrapper.step_all_envs()  # the second episode started: no error
    assert wrapper.pull("_timestep_").tolist() == [1, 1]


@pytest.mark.parametrize("backend", ["numpy", pytest.param("pycuda", marks=pytest.mark.gpu)])
def test_wrapper_step_counter_follows_a_restored_state(backend):
    wrapper = FoundationEnvWrapper(make(episode_length=3), num_envs=1, env_backend=backend)
    wrapper.reset_all_envs()
    wrapper.step_all_envs()
    wrapper.step_all_envs()
    state = wrapper.state_dict()
    restored = FoundationEnvWrapper(make(episode_length=3), num_envs=1, env_backend=backend)
    restored.reset_all_envs()
    restored.load_state_dict(state)
    restored.step_all_envs()  # day 3 of 3
    with pytest.raises(RuntimeError, match="episode_length=3"):
        restored.step_all_envs()


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_a_missing_states_entry_is_the_noop_on_every_cpu_backend(backend):
    wrapper = FoundationEnvWrapper(make(), num_envs=2, env_backend=backend)
    wrapper.reset_all_envs()
    before = wrapper.pull("stringency_level")
    wrapper.step_all_envs({"p": np.array([20, 0])})
    np.testing.assert_array_equal(wrapper.pull("stringency_level"), before)
    assert wrapper.pull("subsidy_level").reshape(-1).tolist() == [20, 0]

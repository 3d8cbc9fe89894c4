"""COVID-19's Gymnasium adapters (covid19/adapters/): CovidPlanner-v0 under the official
checker, scripted states, the VectorEnv over the batched numpy model against the dict API, and
the old ``ai_economist.adapters.gymnasium`` names (deprecated)."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from ai_economist import foundation
from ai_economist.adapters.errors import ActionMaskError, UnknownAgentError
from ai_economist.foundation.scenarios.covid19.adapters import ENV_ID
from ai_economist.foundation.scenarios.covid19.adapters.planner_env import CovidPlannerEnv
from ai_economist.foundation.scenarios.covid19.adapters.vector_env import CovidVectorEnv

COVID = "CovidAndEconomySimulation"


def test_registered_id_passes_the_official_checker():
    assert ENV_ID == "ai_economist/CovidPlanner-v0" and ENV_ID in gymnasium.registry
    env = gymnasium.make(ENV_ID, episode_length=30, states_policy=1)
    check_env(env.unwrapped, skip_render_check=True)
    assert isinstance(env.unwrapped, CovidPlannerEnv)
    assert env.action_space == gymnasium.spaces.Discrete(21)


def test_planner_episode_matches_the_dict_api(covid):
    config = covid(episode_length=30)
    env = CovidPlannerEnv(states_policy=10, **config)
    ref = foundation.make_env_instance(COVID, **config)
    obs, info = env.reset(seed=0)
    ref.reset()
    assert info["action_mask"].tolist() == [1] * 21  # day 0 reads a subsidy level
    for t in range(30):
        obs, reward, terminated, truncated, info = env.step(7)
        # states: 10 (fully closed) on day 0, then their 28-day cooldown masks it to NO-OP
        expected_states = np.full(51, 10 if t in (0, 28) else 0)
        np.testing.assert_array_equal(info["states_actions"], expected_states)
        assert info["masked_action"] == (t % 30 != 0)  # subsidy interval is 90 days
        _, ref_rew, _, _ = ref.step({"a": expected_states, "p": 7 if t == 0 else 0})
        assert reward == ref_rew["p"]
    assert terminated and not truncated
    assert info["episode_metrics"]["usa/deaths (thousands)"] == pytest.approx(
        ref.previous_episode_metrics["usa/deaths (thousands)"]
    )


def test_scripted_states_array_and_callable_agree(covid):
    config = covid(episode_length=10)
    schedule = np.zeros((10, 51), np.int64)
    schedule[0, :25] = 3
    env_array = CovidPlannerEnv(states_policy=schedule, **config)
    env_fn = CovidPlannerEnv(states_policy=lambda t, obs: schedule[t], **config)
    seen_shapes = []
    env_fn.states_policy = lambda t, obs: (seen_shapes.append(obs.shape), schedule[t])[1]
    for env in (env_array, env_fn):
        env.reset()
    for _ in range(10):
        a = env_array.step(0)
        b = env_fn.step(0)
        assert a[1] == b[1]
        np.testing.assert_array_equal(a[0], b[0])
    assert seen_shapes[0] == (51, env_fn.foundation_agents.obs_dim("0"))


def test_planner_bad_input(covid):
    with pytest.raises(ValueError, match=r"states_policy must be in 0\.\.10, got 11"):
        CovidPlannerEnv(states_policy=11, **covid())
    with pytest.raises(ValueError, match=r"int array of shape \(40, 51\)"):
        CovidPlannerEnv(states_policy=np.zeros((3, 51), int), **covid())
    bad = CovidPlannerEnv(states_policy=lambda t, obs: np.full(51, 12), **covid())
    bad.reset()
    with pytest.raises(
        ValueError, match=r"states_policy must give 51 ints in 0\.\.10 at timestep 0"
    ):
        bad.step(0)
    env = CovidPlannerEnv(masked_actions="raise", **covid())
    env.reset()
    env.step(2)
    with pytest.raises(ActionMaskError, match="agent 'p' is masked at timestep 1"):
        env.step(2)
    with pytest.raises(RuntimeError, match="reset"):
        CovidPlannerEnv(**covid()).step(0)


def test_vector_env_matches_the_dict_api_and_autoresets(covid):
    length = 6
    venv = CovidVectorEnv(num_envs=2, episode_length=length)
    ref = foundation.make_env_instance(COVID, **covid(episode_length=length))
    obs, info = venv.reset(seed=0)
    ref.reset()
    assert obs["a"].shape == (2, 51, venv.single_observation_space["a"].shape[1])
    assert obs["p"].shape == (2, venv.single_observation_space["p"].shape[0])
    assert info["action_mask_a"].shape == (2, 51, 11) and info["action_mask_p"].shape == (2, 21)
    first = {k: v.copy() for k, v in obs.items()}
    states = np.tile(np.arange(51) % 10 + 1, (2, 1))
    for t in range(length):
        acts = {"a": states if t == 0 else np.zeros((2, 51), int), "p": np.full(2, 4 * (t == 0))}
        obs, rew, term, trunc, info = venv.step(acts)
        _, ref_rew, _, _ = ref.step({"a": acts["a"][0], "p": int(acts["p"][0])})
        np.testing.assert_allclose(rew, ref_rew["p"], rtol=1e-5)
        np.testing.assert_allclose(info["rewards_a"][1], ref_rew["a"], rtol=1e-5)
        assert term.tolist() == [t == length - 1] * 2 and not trunc.any()
    obs, rew, term, _, _ = venv.step({})  # NEXT_STEP autoreset: actions ignored
    assert rew.tolist() == [0.0, 0.0] and not term.any()
    for key in ("a", "p"):
        np.testing.assert_array_equal(obs[key], first[key])
    assert "usa/deaths (thousands)" in venv.episode_metrics()


def test_vector_env_masks_and_keys(covid):
    venv = CovidVectorEnv(num_envs=2, episode_length=5)
    with pytest.raises(RuntimeError, match="reset"):
        venv.step({})
    venv.reset()
    venv.step({"p": np.array([1, 2])})
    with pytest.raises(ActionMaskError, match=r"actions\['p'\]\[0\] = 1 is masked"):
        venv.step({"p": np.array([1, 0])})
    with pytest.raises(UnknownAgentError, match="'q'"):
        venv.step({"q": np.zeros(2, int)})
    with pytest.raises(ValueError, match=r"actions\['a'\] must be ints of shape \(2, 51\)"):
        venv.step({"a": np.zeros((2, 50), int)})
    lenient = CovidVectorEnv(num_envs=2, masked_actions="noop", episode_length=5)
    lenient.reset()
    lenient.step({"p": np.array([1, 2])})
    assert lenient.step({"p": np.array([1, 0])})[1].shape == (2,)


def test_the_old_adapter_names_warn_and_are_the_moved_objects():
    import ai_economist.adapters.gymnasium as covid_gym

    new = "ai_economist.foundation.scenarios.covid19.adapters"
    for name, obj in (
        ("CovidPlannerEnv", CovidPlannerEnv),
        ("CovidVectorEnv", CovidVectorEnv),
        ("ENV_ID", ENV_ID),
    ):
        with pytest.warns(DeprecationWarning, match=rf"{name} moved to {new}[.\w]*\.{name}"):
            assert getattr(covid_gym, name) is obj
    with pytest.raises(AttributeError, match="NoSuchEnv"):
        covid_gym.NoSuchEnv  # noqa: B018


def test_the_id_registers_through_gymnasiums_module_prefix():
    """``gymnasium.make("<package>:<id>")`` imports the scenario's adapters package itself."""
    import subprocess
    import sys

    code = (
        "import gymnasium, sys; "
        "env = gymnasium.make('ai_economist.foundation.scenarios.covid19.adapters:"
        "ai_economist/CovidPlanner-v0', episode_length=5); "
        "print(type(env.unwrapped).__name__, 'ai_economist.adapters.gymnasium' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["CovidPlannerEnv", "False"]


def test_the_generic_vector_env_by_name_has_the_covid_spaces():
    from ai_economist.adapters.gymnasium import make_vector_env

    venv = make_vector_env("covid_and_economy_environment", num_envs=2, env_backend="numpy")
    assert venv.single_action_space == CovidVectorEnv(num_envs=1).single_action_space
    assert venv.single_action_space["a"].nvec.tolist() == [11] * 51
    obs, info = venv.reset()
    assert obs["p"].ndim == 2 and info["action_mask_p"].shape == (2, 21)

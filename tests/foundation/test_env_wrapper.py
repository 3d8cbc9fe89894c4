"""FoundationEnvWrapper on the CPU backends, and the consistency checker."""

import numpy as np
import pytest
import torch

from ai_economist import foundation
from ai_economist.foundation.consistency import check_consistency
from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
from ai_economist.foundation.scenarios.covid19.configs import (
    TRAINING_ENV_CONFIG,
    TUTORIAL_ENV_CONFIG,
    env_config,
)
from ai_economist.warp_drive.env_protocol import BatchedPolicyEnv


def make(base=TRAINING_ENV_CONFIG, **overrides):
    return foundation.make_env_instance(
        "CovidAndEconomySimulation", **env_config(base, **overrides)
    )


def test_numpy_backend_matches_python_env_over_full_episodes():
    report = check_consistency(
        lambda: make(episode_length=40), "numpy", num_envs=2, num_episodes=2, rtol=1e-9, atol=1e-9
    )
    assert report.ok, report.message
    assert report.steps == 80


def test_checker_reports_first_difference():
    calls = []

    def make_reference_then_changed():
        calls.append(1)  # the reference is built first, the candidate second
        return make(
            episode_length=20, health_priority_scaling_agents=1.0 if len(calls) == 1 else 0.5
        )

    report = check_consistency(make_reference_then_changed, "numpy", num_envs=2, num_episodes=1)
    assert not report.ok
    assert report.field == "rewards_a" and report.step == 1 and report.phase == "step"
    assert "numpy differs from the cpu backend (Python envs) in field 'rewards_a'" in report.message
    assert "step 1 (step)" in report.message


def test_wrapper_implements_trainer_protocol_on_cpu():
    wrapper = FoundationEnvWrapper(make(episode_length=10), num_envs=3, env_backend="numpy")
    assert isinstance(wrapper, BatchedPolicyEnv)
    specs = wrapper.policy_specs
    assert (specs["a"].num_agents, specs["a"].obs_dim, specs["a"].num_actions) == (51, 64, 11)
    assert (specs["p"].num_agents, specs["p"].obs_dim, specs["p"].num_actions) == (1, 463, 21)
    wrapper.reset_all_envs()
    assert wrapper.device == torch.device("cpu")
    for _ in range(10):
        wrapper.actions("a").fill_(1)
        wrapper.actions("p").fill_(0)
        wrapper.step_all_envs()
    assert wrapper.done().tolist() == [1, 1, 1]
    rewards = wrapper.cuda_data_manager.pull_data_from_device("rewards_a")
    assert rewards.shape == (3, 51) and np.isfinite(rewards).all()
    wrapper.reset_only_done_envs()
    assert wrapper.done().tolist() == [0, 0, 0]
    assert wrapper.pull("_timestep_").tolist() == [0, 0, 0]
    assert wrapper.episode_metrics()["usa/deaths (thousands)"] > 0


def test_host_actions_and_errors():
    wrapper = FoundationEnvWrapper(make(episode_length=10), num_envs=2, env_backend="numpy")
    wrapper.reset_all_envs()
    wrapper.step_all_envs({"a": np.full((2, 51), 10), "p": np.array([20, 0])})
    levels = wrapper.pull("stringency_level")
    assert (levels == 10).all()
    assert wrapper.pull("subsidy_level").tolist() == [20, 0]
    with pytest.raises(ValueError, match=r"actions\['a'\] must have shape \(2, 51\)"):
        wrapper.step_all_envs({"a": np.zeros((3, 51), int), "p": np.zeros(2, int)})
    with pytest.raises(ValueError, match=r"must be in 0..20"):
        wrapper.step_all_envs({"a": np.zeros((2, 51), int), "p": np.array([21, 0])})
    with pytest.raises(KeyError, match=r"keys 'a' and 'p', got \['q'\]"):
        wrapper.step_all_envs({"a": np.zeros((2, 51), int), "q": np.zeros(2, int)})
    with pytest.raises(
        ValueError, match="Unknown env_backend 'cuda'; allowed: 'cpu', 'numpy', 'pycuda', 'numba'"
    ):
        FoundationEnvWrapper(make(episode_length=10), env_backend="cuda")
    with pytest.raises(ValueError, match="num_envs"):
        FoundationEnvWrapper(make(episode_length=10), num_envs=0)


def test_legacy_cpu_step_returns_per_agent_dicts():
    wrapper = FoundationEnvWrapper(
        make(TUTORIAL_ENV_CONFIG, use_real_world_policies=True), num_envs=1
    )
    obs = wrapper.reset()
    assert set(obs) == {str(i) for i in range(51)} | {"p"}
    assert obs["0"]["world-agent_state"].shape == (6,)
    assert set(wrapper.observation_space) == set(wrapper.action_space) == set(obs)
    assert wrapper.action_space["0"].n == 11 and wrapper.action_space["p"].n == 21
    total = 0.0
    for _ in range(405):
        obs, rew, done, info = wrapper.step({str(i): 0 for i in range(51)} | {"p": 0})
        total += rew["p"]
    assert done["__all__"] and total == pytest.approx(349.06, rel=0.005)


def test_real_world_policies_on_numpy_backend_match_golden_sum():
    wrapper = FoundationEnvWrapper(
        make(TUTORIAL_ENV_CONFIG, use_real_world_policies=True), num_envs=2, env_backend="numpy"
    )
    wrapper.reset_all_envs()
    total = torch.zeros(2)
    for _ in range(405):
        wrapper.step_all_envs()
        total += wrapper.rewards("p")[:, 0]
    assert total.tolist() == pytest.approx([349.06, 349.06], rel=0.005)


def test_per_env_parameter_modulations():
    wrapper = FoundationEnvWrapper(make(episode_length=30), num_envs=2, env_backend="numpy")
    wrapper.reset_all_envs()
    wrapper.set_parameter_modulations(beta_intercept=0.5, env_ids=[1])
    for _ in range(30):
        wrapper.step_all_envs()
    infected = wrapper.pull("infected").sum(axis=1)
    assert infected[1] < infected[0]


def test_custom_registrar_kernel_source_takes_priority():
    numba = pytest.importorskip("numba")
    if not numba.config.ENABLE_CUDASIM:
        pytest.skip("needs NUMBA_ENABLE_CUDASIM=1 (set by `make test`) or a GPU")
    from ai_economist.warp_drive.registrar import EnvironmentRegistrar

    registrar = EnvironmentRegistrar()
    registrar.add_cuda_env_src_path("CovidAndEconomySimulation", "no_such_module.kernels", "numba")
    with pytest.raises(ModuleNotFoundError, match="no_such_module"):
        FoundationEnvWrapper(
            make(episode_length=5), num_envs=1, env_backend="numba", env_registrar=registrar
        )
    default = FoundationEnvWrapper(make(episode_length=5), num_envs=1, env_backend="numba")
    assert (
        default.backend.source == "ai_economist.foundation.scenarios.covid19.kernels.covid19_numba"
    )


def test_the_unused_event_messenger_is_gone_and_later_arguments_are_keyword_only():
    env = make(episode_length=2)
    with pytest.raises(TypeError, match="event_messenger"):
        FoundationEnvWrapper(env, num_envs=1, event_messenger=None)
    with pytest.raises(TypeError, match="positional"):  # 1.7.1's order: ..., event_messenger
        FoundationEnvWrapper(env, None, None, 1, False, None, None)
    assert FoundationEnvWrapper(env, None, None, 1, False, None, process_id=0).num_envs == 1

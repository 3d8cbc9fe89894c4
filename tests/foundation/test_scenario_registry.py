"""The generic Foundation entry points (wrapper, consistency command, evaluation) look the
scenario up instead of naming it: a second scenario plugs in through its class and the
training registry."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist.foundation import consistency
from ai_economist.foundation.base.base_env import BaseEnvironment
from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
from ai_economist.foundation.scenarios.covid19 import registration as covid_registration
from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG, env_config
from ai_economist.foundation.scenarios.covid19.covid19_env import CovidAndEconomyEnvironment
from ai_economist.training import environments, evaluate
from ai_economist.warp_drive.backend_names import EnvBackend


class RecordingCovid(CovidAndEconomyEnvironment):
    """A 'second scenario': its own class decides which backend the wrapper gets."""

    calls: list = []

    def batched_backend(self, env_backend, num_envs, **options):
        RecordingCovid.calls.append((env_backend, num_envs, sorted(options)))
        return super().batched_backend(env_backend, num_envs, **options)


def test_wrapper_asks_the_scenario_for_its_backend():
    RecordingCovid.calls.clear()
    env = RecordingCovid(**env_config(TRAINING_ENV_CONFIG, episode_length=4))
    wrapper = FoundationEnvWrapper(env, num_envs=2, env_backend="numpy")
    assert RecordingCovid.calls == [(EnvBackend.NUMPY, 2, ["device", "fused_step", "source"])]
    assert wrapper.backend.name is EnvBackend.NUMPY
    wrapper.reset_all_envs()
    wrapper.step_all_envs({"a": np.ones((2, 51), int)})
    assert wrapper.pull("_timestep_").tolist() == [1, 1]


class NoBackends(CovidAndEconomyEnvironment):
    """A scenario that keeps BaseEnvironment's default: no batched backends."""

    batched_backend = BaseEnvironment.batched_backend


def test_a_scenario_without_batched_backends_says_what_to_override():
    env = NoBackends(**env_config(TRAINING_ENV_CONFIG, episode_length=4))
    with pytest.raises(NotImplementedError, match=r"env_backend='numpy'; override NoBackends"):
        FoundationEnvWrapper(env, num_envs=1, env_backend="numpy")


def test_consistency_command_takes_the_env_from_the_training_registry(capsys):
    argv = ["--backend", "numpy", "--num_envs", "2", "--episode_length", "3", "--max_steps", "3"]
    assert consistency.main(argv) == 0
    assert capsys.readouterr().out.startswith(
        "CovidAndEconomySimulation: numpy matches the cpu backend (Python envs) for 3 steps x 2 envs"
    )


def test_consistency_command_rejects_an_env_that_is_no_foundation_scenario():
    with pytest.raises(ValueError, match="'toy' is not a Foundation scenario"):
        consistency.foundation_env_factory("toy")


def test_evaluate_uses_the_registered_eval_builder(monkeypatch):
    built = []

    def build_eval(config):
        built.append(config["name"])
        return "env", "scenario"

    entry = environments.EnvEntry(lambda *a: None, build_eval=build_eval)
    monkeypatch.setitem(environments.ENVIRONMENTS._entries, "second_scenario", entry)
    assert evaluate.build_eval_env({"name": "second_scenario"}) == ("env", "scenario")
    assert built == ["second_scenario"]
    covid = environments.ENVIRONMENTS["covid_and_economy_environment"]
    assert covid.build_eval is covid_registration.build_covid_eval_env


def test_foundation_wrapper_shares_the_generic_policy_arrays():
    from ai_economist.warp_drive.env_wrapper import PolicyArrays
    from ai_economist.warp_drive.errors import UnknownNameError

    env = CovidAndEconomyEnvironment(**env_config(TRAINING_ENV_CONFIG, episode_length=4))
    wrapper = FoundationEnvWrapper(env, num_envs=3, env_backend="numpy")
    assert isinstance(wrapper, PolicyArrays)
    a, p = wrapper.groups["a"], wrapper.groups["p"]
    assert (a.first_agent, a.num_agents, p.first_agent, p.num_agents) == (0, 51, 51, 1)
    assert wrapper.policy_specs["p"].num_actions == 21  # NO-OP + 20 subsidy levels
    assert tuple(wrapper.observations("p").shape) == (3, 1, p.obs_dim)
    assert (
        wrapper.actions("a").data_ptr()
        == wrapper.cuda_data_manager.data_on_device_via_torch("sampled_actions_a").data_ptr()
    )  # the backend's own buffer, no copy
    with pytest.raises(UnknownNameError, match="'q'"):
        wrapper.rewards("q")


def test_the_covid_builder_called_directly_resolves_by_the_one_rule():
    from ai_economist.training.config import default_config_path, load_run_config

    config = load_run_config(default_config_path(covid_registration.NAME))
    config["trainer"]["num_envs"] = 1
    assert covid_registration.build_env_wrapper(config, "cpu").env_backend is EnvBackend.NUMPY
    config["trainer"]["env_backend"] = "cpu"
    assert covid_registration.build_env_wrapper(config, "cpu").env_backend is EnvBackend.CPU

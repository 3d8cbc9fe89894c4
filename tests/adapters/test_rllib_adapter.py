"""RLlib adapter: RLlib's own env check, the policy mapping, and one PPO iteration in the driver
process (no env-runner or learner actors)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="RLlib is not installed (pip install -e '.[rllib]')")

from ai_economist.adapters.rllib import (  # noqa: E402
    FoundationMultiAgentEnv,
    multi_agent_config,
    policy_mapping_fn,
)

COVID = "CovidAndEconomySimulation"


def test_policy_mapping_states_and_planner():
    assert policy_mapping_fn("p") == "p"
    assert {policy_mapping_fn(str(i)) for i in range(51)} == {"a"}
    assert multi_agent_config()["policies"] == {"a", "p"}


def test_env_passes_rllib_checks_and_ends_every_agent(covid):
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    env = FoundationMultiAgentEnv(dict(covid(episode_length=5), scenario_name=COVID))
    check_multiagent_environments(env)
    obs, infos = env.reset(seed=0)
    assert set(obs) == set(env.possible_agents) == {str(i) for i in range(51)} | {"p"}
    for _ in range(5):
        sampled = {a: env.action_spaces[a].sample() for a in env.agents}
        obs, rew, term, trunc, infos = env.step(sampled)  # masked samples become NO-OPs
    assert term["__all__"] and not trunc["__all__"] and env.agents == []
    assert all(env.observation_spaces[a].contains(o) for a, o in obs.items())
    assert infos["p"]["action_mask"].shape == (21,)


def test_scenario_name_is_required_after_its_deprecated_default(covid, toy):
    with pytest.warns(DeprecationWarning, match="without config\\['scenario_name'\\]"):
        env = FoundationMultiAgentEnv(covid(episode_length=5))
    assert len(env.possible_agents) == 52  # the 2.0 default: COVID-19
    toy_env = FoundationMultiAgentEnv(dict(toy(), scenario_name="adapters-toy"))
    assert toy_env.possible_agents == ["0", "1", "2", "p"]


def test_ppo_trains_one_iteration(covid):
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig

    env_config = dict(covid(episode_length=10), scenario_name=COVID)
    config = (
        PPOConfig()
        .environment(FoundationMultiAgentEnv, env_config=env_config)
        .multi_agent(**multi_agent_config())
        .env_runners(num_env_runners=0, rollout_fragment_length=10)
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=20, minibatch_size=20, num_epochs=1)
        .rl_module(model_config={"fcnet_hiddens": [16]})
        .debugging(seed=0)
    )
    started = not ray.is_initialized()  # another test may hold a local Ray already
    if started:
        ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        algo = config.build_algo()
        result = algo.train()
        algo.stop()
    finally:
        if started:
            ray.shutdown()
    assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 20
    assert {"a", "p"} <= set(result["learners"])
    assert np.isfinite(result["env_runners"]["episode_return_mean"])

"""The COVID-19 scenario through the Foundation dict API."""

import copy

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.scenarios.covid19.configs import TUTORIAL_ENV_CONFIG, env_config


def make(**overrides):
    return foundation.make_env_instance(
        "CovidAndEconomySimulation", **env_config(TUTORIAL_ENV_CONFIG, **overrides)
    )


@pytest.fixture(scope="module")
def env():
    return make()


def test_registered_and_importable():
    from ai_economist.foundation.scenarios.covid19.covid19_env import CovidAndEconomyEnvironment

    assert foundation.scenarios.get("covidandeconomysimulation") is CovidAndEconomyEnvironment
    for name in (
        "ControlUSStateOpenCloseStatus",
        "FederalGovernmentSubsidy",
        "VaccinationCampaign",
    ):
        assert foundation.components.has(name)


def test_observation_keys_and_shapes(env):
    obs = env.reset()
    assert set(obs) == {"a", "p"}
    a, p = obs["a"], obs["p"]
    assert a["world-agent_index"].shape == (51, 51) and np.array_equal(
        a["world-agent_index"], np.eye(51)
    )
    assert a["world-agent_state"].shape == (6, 51) and p["world-agent_state"].shape == (6, 51)
    for key in (
        "world-agent_postsubsidy_productivity",
        "world-lagged_stringency_level",
        "ControlUSStateOpenCloseStatus-agent_policy_indicators",
        "FederalGovernmentSubsidy-t_until_next_subsidy",
        "FederalGovernmentSubsidy-current_subsidy_level",
        "VaccinationCampaign-t_until_next_vaccines",
        "time",
    ):
        assert a[key].shape == (51,), key
    assert p["time"].shape == (1,) and p["FederalGovernmentSubsidy-t_until_next_subsidy"].size == 1
    assert a["action_mask"].shape == (11, 51) and p["action_mask"].shape == (21,)
    np.testing.assert_allclose(
        a["world-agent_state"][:, 0].sum(), 1.0, rtol=0.05
    )  # S+I+R+D+V+U ~ N share


def test_action_spaces(env):
    assert env.get_agent("0").action_spaces == 11
    assert env.get_agent("p").action_spaces == 21


def test_cooldown_masks_through_dict_api(env):
    obs = env.reset()
    assert obs["a"]["action_mask"][1:, :].all()  # everybody may act on day 1
    actions = np.zeros(51, int)
    actions[3] = 7
    obs, *_ = env.step({"a": actions, "p": 0})
    assert obs["a"]["action_mask"][1:, 3].sum() == 0  # state 3 in cooldown
    assert obs["a"]["action_mask"][1:, 4].all()  # a NO-OP only extends the cooldown by one day
    assert env.world.agents[3].state["Current Open Close Stringency Level"] == 7
    for _ in range(26):
        obs, *_ = env.step({"a": np.zeros(51, int), "p": 0})
    assert obs["a"]["action_mask"][1:, 3].sum() == 0  # t = 27 < 28
    obs, *_ = env.step({"a": np.zeros(51, int), "p": 0})
    assert obs["a"]["action_mask"][1:, 3].all()  # t = 28


def test_planner_mask_every_subsidy_interval(env):
    obs = env.reset()
    assert obs["p"]["action_mask"][1:].all()
    obs, *_ = env.step({"a": np.zeros(51, int), "p": 5})
    assert not obs["p"]["action_mask"][1:].any()
    assert obs["p"]["FederalGovernmentSubsidy-current_subsidy_level"][0] == pytest.approx(5 / 20)


def test_per_agent_action_keys_work(env):
    env.reset()
    actions = {str(i): 1 for i in range(51)}
    actions["p"] = 20
    obs, rew, done, info = env.step(actions)
    assert rew["a"].shape == (51,) and isinstance(rew["p"], float)
    assert set(info) == {"a", "p"} and not done["__all__"]
    assert env.world.planner.state["Current Subsidy Level"] == 20


def test_golden_reward_sum_through_dict_api():
    env = make(use_real_world_policies=True)
    env.reset()
    total = sum(env.step({"a": np.zeros(51, int), "p": 0})[1]["p"] for _ in range(405))
    assert total == pytest.approx(349.06, rel=0.005)
    metrics = env.previous_episode_metrics
    assert len(metrics) == 415
    assert metrics["usa/deaths (thousands)"] == pytest.approx(583.7, rel=0.002)
    assert metrics["usa/total_amount_subsidized (trillion $)"] == pytest.approx(0.635, rel=0.002)


def test_determinism_and_seeds():
    rng = np.random.default_rng(3)
    actions = [(rng.integers(0, 11, 51), int(rng.integers(0, 21))) for _ in range(60)]

    def run():
        env = make(seed=7)
        env.reset()
        return [env.step({"a": a, "p": p})[1]["p"] for a, p in actions]

    assert run() == run()


def test_agent_states_are_live_and_deepcopyable(env):
    env.reset()
    for _ in range(5):
        env.step({"a": np.full(51, 10), "p": 20})
    state = env.world.agents[0].state
    assert state["Total Infected"] == int(env.world.simulation.infected[0, 0])
    assert state["Date"] == "2020-03-27"
    snapshot = copy.deepcopy(state)
    assert type(snapshot) is dict and snapshot["Total Infected"] == state["Total Infected"]
    planner = env.world.planner.state
    assert planner["Total Deaths"] == sum(a.state["Total Deaths"] for a in env.world.agents)


def test_dense_log_records_states(env):
    env.reset(force_dense_logging=True)
    for _ in range(env.episode_length):
        env.step({"a": np.zeros(51, int), "p": 0})
    log = env.previous_episode_dense_log
    assert len(log["states"]) >= env.episode_length
    assert "Total Infected" in log["states"][10]["0"]


def test_parameter_modulations_lower_infections():
    env = make()
    env.reset()
    env.set_parameter_modulations(beta_intercept=0.5, beta_slope=0.5)
    for _ in range(60):
        env.step({"a": np.zeros(51, int), "p": 0})
    modulated = env.world.simulation.infected.sum()
    env.reset()  # modulations last until the next reset
    for _ in range(60):
        env.step({"a": np.zeros(51, int), "p": 0})
    assert modulated < env.world.simulation.infected.sum()
    with pytest.raises(ValueError, match="beta_slope"):
        env.set_parameter_modulations(beta_slope=-1.0)


def test_real_world_data_mode_replays_data():
    env = make(use_real_world_data=True, use_real_world_policies=True, episode_length=100)
    env.reset()
    env.step({"a": np.zeros(51, int), "p": 0})
    real = env.calibration.real_world_data
    np.testing.assert_allclose(
        env.world.global_state["Infected"][1], real["infected"][82], rtol=1e-6
    )


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"n_agents": 50}, "n_agents must be 51"),
        ({"collate_agent_step_and_reset_data": False}, "collate_agent_step_and_reset_data=True"),
        ({"use_real_world_data": True}, "use_real_world_policies"),
        ({"use_real_world_policies": True, "episode_length": 500}, "episode_length <= 437"),
        (
            {"use_real_world_data": True, "use_real_world_policies": True},
            "use_real_world_data needs episode_length",
        ),
        ({"pop_between_age_18_65": 1.5}, r"pop_between_age_18_65 must be in \[0, 1\]"),
        ({"economic_reward_crra_eta": 25}, "economic_reward_crra_eta"),
        ({"start_date": "2019-12-01"}, "before the data's POLICY_START_DATE"),
        ({"start_date": "March 1st"}, "not a date"),
        ({"reward_normalization_factor": 0}, "reward_normalization_factor must be > 0"),
        ({"path_to_data_and_fitted_params": "/nonexistent/dir"}, "calibration"),
    ],
)
def test_bad_config_errors(overrides, message):
    with pytest.raises((ValueError, TypeError, KeyError), match=message):
        make(**overrides)


def test_bad_component_params():
    comps = copy.deepcopy(TUTORIAL_ENV_CONFIG["components"])
    comps[2]["VaccinationCampaign"]["delivery_interval"] = 0
    with pytest.raises(ValueError, match="delivery_interval"):
        make(components=comps)
    comps = copy.deepcopy(TUTORIAL_ENV_CONFIG["components"])
    comps[0]["ControlUSStateOpenCloseStatus"]["n_stringency_levels"] = 5
    with pytest.raises(ValueError, match="NUM_STRINGENCY_LEVELS"):
        make(components=comps)


def test_bad_actions_are_rejected(env):
    env.reset()
    with pytest.raises(ValueError):
        env.step({"a": np.full(51, 11), "p": 0})


def test_batched_component_defaults_are_the_components_ones():
    """component_params_from_config (batched/GPU backends) defaults as the three components."""
    import inspect

    from ai_economist.foundation.scenarios.covid19.covid19_env import COMPONENT_NAMES
    from ai_economist.foundation.scenarios.covid19.model.component_params import (
        component_params_from_config,
    )

    batched = inspect.signature(component_params_from_config).parameters
    for name in COMPONENT_NAMES:
        own = inspect.signature(foundation.components.get(name)).parameters
        shared = [p for p in own if p in batched]
        assert shared, name
        assert [own[p].default for p in shared] == [batched[p].default for p in shared], name

"""PettingZoo adapter: the official API and seed tests, layouts, parity with the dict API, errors."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import parallel_api_test, parallel_seed_test  # noqa: E402

from ai_economist import foundation  # noqa: E402
from ai_economist.adapters.errors import (  # noqa: E402
    ActionMaskError,
    UnknownAgentError,
    UnknownScenarioError,
)
from ai_economist.adapters.pettingzoo import parallel_env  # noqa: E402

COVID = "CovidAndEconomySimulation"


def test_official_parallel_api_test_covid(covid):
    env = parallel_env(COVID, **covid())
    parallel_api_test(env, num_cycles=60)  # past the 28-day cooldown: masked sampling works
    assert env.possible_agents == [str(i) for i in range(51)] + ["p"]


def test_official_seed_test_covid(covid):
    parallel_seed_test(lambda: parallel_env(COVID, **covid()))


def test_official_tests_uncollated_multi_action_toy(toy):
    env = parallel_env("adapters-toy", **toy())
    parallel_api_test(env, num_cycles=20)
    parallel_seed_test(lambda: parallel_env("adapters-toy", **toy()))
    assert str(env.action_space("p")) == "MultiDiscrete([3 4])"  # rate 0..2, bonus 0..3


def test_reset_seed_fixes_the_scenario_rng(toy):
    def coins(seed):
        env = parallel_env("adapters-toy", **toy(seed=None))
        env.reset(seed=seed)
        obs = [env.step({})[0]["0"]["observation"] for _ in range(4)]
        return np.stack(obs)

    assert np.array_equal(coins(7), coins(7))
    assert not np.array_equal(coins(7), coins(8))


def test_observation_layout_is_sorted_fields_raveled(toy):
    env = parallel_env("adapters-toy", **toy(flatten_observations=False))
    obs, infos = env.reset(seed=0)
    fields = env.foundation_agents.fields
    assert [name for name, _ in fields["2"]] == [
        "AdaptersToyDial-dial",
        "time",
        "world-coin",
        "world-loc",
    ]
    np.testing.assert_array_equal(obs["2"]["observation"], [0, 0, 0, 2, 0])  # dial, t, coin, loc
    obs, *_ = env.step({"2": 3})
    vec = obs["2"]["observation"]
    assert vec[0] == 3 and vec[1] == 1 and vec[2] >= 3  # dial 3; t=1; coin >= dial
    # the dial just chosen is masked; NO-OP first, always allowed
    np.testing.assert_array_equal(obs["2"]["action_mask"], [1, 1, 1, 0])
    assert obs["p"]["action_mask"][1].tolist() == [1, 0, 1, 1]  # t=1: bonus 1 is masked
    assert infos["2"]["action_mask"].dtype == np.int8
    planner_fields = [name for name, _ in fields["p"]]
    assert planner_fields == [
        "AdaptersToyDial-dials",
        "p0/AdaptersToyDial-seen",
        "p1/AdaptersToyDial-seen",
        "p2/AdaptersToyDial-seen",
        "time",
        "world-total",
    ]
    np.testing.assert_array_equal(obs["p"]["observation"][:7], [0, 0, 3, 0, 0, 30, 1])
    state = env.state()
    assert env.state_space.contains(state)
    np.testing.assert_array_equal(state[-obs["p"]["observation"].size :], obs["p"]["observation"])


def test_rewards_and_observations_match_the_dict_api(covid):
    config = covid(episode_length=30)
    env = parallel_env(COVID, **config)
    ref = foundation.make_env_instance(COVID, **config)
    obs, _ = env.reset()
    ref.reset()
    for t in range(30):
        actions = {str(i): (i % 10 + 1 if t == 0 else 0) for i in range(51)}
        actions["p"] = 5 if t == 0 else 0
        obs, rew, term, trunc, _ = env.step(actions)
        a = np.array([actions[str(i)] for i in range(51)])
        ref_obs, ref_rew, done, _ = ref.step({"a": a, "p": actions["p"]})
        np.testing.assert_allclose([rew[str(i)] for i in range(51)], ref_rew["a"], rtol=0, atol=0)
        assert rew["p"] == ref_rew["p"]
        fields = sorted(k for k in ref_obs["a"] if k != "action_mask")
        state7 = np.concatenate([np.ravel(np.asarray(ref_obs["a"][k])[..., 7]) for k in fields])
        np.testing.assert_array_equal(obs["7"]["observation"], state7.astype(np.float32))
    assert all(term.values()) and not any(trunc.values()) and env.agents == []
    with pytest.raises(RuntimeError, match="call reset"):
        env.step({})


def test_unknown_scenario_names_close_matches(covid):
    with pytest.raises(UnknownScenarioError, match=r"did you mean \['CovidAndEconomySimulation'\]"):
        parallel_env("CovidAndEconomySimulaton", **covid())


def test_unknown_agent_id_is_named(covid):
    env = parallel_env(COVID, **covid())
    env.reset()
    with pytest.raises(UnknownAgentError, match="'51'"):
        env.step({"51": 0})
    with pytest.raises(UnknownAgentError, match="'planner'"):
        env.action_space("planner")


def test_masked_action_raises_or_becomes_noop(covid):
    env = parallel_env(COVID, **covid())
    env.reset()
    env.step({"p": 3})  # day 0: subsidy levels allowed
    with pytest.raises(ActionMaskError, match=r"agent 'p' is masked at timestep 1"):
        env.step({"p": 4})  # day 1: only the NO-OP until the next interval
    assert env.foundation_agents.env.world.timestep == 1  # the rejected step changed nothing

    noop = parallel_env(COVID, masked_actions="noop", **covid())
    ref = parallel_env(COVID, **covid())
    for e in (noop, ref):
        e.reset()
        e.step({"p": 3})
    got = noop.step({"p": 4})[1]["p"]
    assert got == ref.step({"p": 0})[1]["p"]


def test_actions_outside_the_space_and_bad_config(covid):
    env = parallel_env(COVID, **covid())
    env.reset()
    with pytest.raises(ValueError, match=r"Action 11 of agent '3' is not in Discrete\(11\)"):
        env.step({"3": 11})
    with pytest.raises(ValueError, match="Action 1.5 of agent 'p'"):
        env.step({"p": 1.5})
    with pytest.raises(ValueError, match="flatten_masks"):
        parallel_env(COVID, **covid(flatten_masks=False))
    with pytest.raises(ValueError, match="masked_actions must be one of"):
        parallel_env(COVID, masked_actions="ignore", **covid())

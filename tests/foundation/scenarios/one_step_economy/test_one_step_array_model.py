"""The batched array model equals the dict-API one-step economy, step for step."""

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.scenarios.one_step_economy import array_model as am

N_AGENTS, N_ENVS = 4, 3


def make_env(tax, episode_length=2, **kw):
    return foundation.make_env_instance(
        "one-step-economy",
        components=[("SimpleLabor", {}), ("PeriodicBracketTax", tax)],
        n_agents=N_AGENTS,
        world_size=[1, 1],
        episode_length=episode_length,
        seed=7,
        **kw,
    )


def dict_obs(obs):
    agents = np.stack([obs[str(i)]["flat"] for i in range(N_AGENTS)])
    agent_masks = np.stack([obs[str(i)]["action_mask"] for i in range(N_AGENTS)])
    planner = obs["p"]
    agentwise = np.stack([planner[f"p{i}"] for i in range(N_AGENTS)])
    return agents, agent_masks, planner["flat"], agentwise, planner["action_mask"]


def check_equal(envs, obs_list, state, params):
    agents = am.agent_observations(state, params)
    planner, agentwise = am.planner_observations(state, params)
    agent_masks, planner_masks = am.action_masks(state, params)
    for e, obs in enumerate(obs_list):
        a, am_, p, pw, pm = dict_obs(obs)
        np.testing.assert_allclose(agents[e], a, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(agent_masks[e], am_)
        np.testing.assert_allclose(planner[e], p, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(agentwise[e], pw, rtol=1e-6, atol=1e-6)
        if params.tax_model == "model_wrapper":
            # dict env: [1] + mask per sub-space; the array model: one row per bracket
            np.testing.assert_array_equal(planner_masks[e].reshape(-1), pm)
        coin = [a.total_endowment("Coin") for a in envs[e].world.agents]
        np.testing.assert_allclose(state.coin[e], coin, rtol=1e-12)


@pytest.mark.parametrize(
    ("tax", "episode_length", "kw"),
    [
        ({"period": 2}, 2, {}),
        ({"period": 2, "tax_model": "us-federal-single-filer-2018-scaled"}, 2, {}),
        (
            {
                "period": 2,
                "tax_model": "fixed-bracket-rates",
                "fixed_bracket_rates": [0.5, 0.4, 0.3, 0.2, 0.1],
            },
            4,
            {
                "agent_reward_type": "isoelastic_coin_minus_labor",
                "planner_reward_type": "coin_eq_times_productivity",
            },
        ),
        (
            {"period": 2, "bracket_spacing": "linear", "n_brackets": 5, "top_bracket_cutoff": 100},
            4,
            {},
        ),
    ],
)
def test_array_model_equals_dict_env(tax, episode_length, kw):
    if "fixed_bracket_rates" in tax:
        tax = {**tax, "bracket_spacing": "linear", "n_brackets": 5}
    envs = [make_env(tax, episode_length, **kw) for _ in range(N_ENVS)]
    params = am.OneStepParams.from_env(envs[0])
    state = am.initial_state(params, N_ENVS)
    check_equal(envs, [env.reset() for env in envs], state, params)
    rng = np.random.default_rng(0)
    for _ in range(2 * episode_length):
        hours = rng.integers(0, 101, size=(N_ENVS, N_AGENTS))
        brackets = rng.integers(0, len(params.disc_rates) + 1, size=(N_ENVS, params.n_brackets))
        agent_rew, planner_rew, done = am.step(state, params, hours, brackets)
        results = []
        for e, env in enumerate(envs):
            actions = {str(i): int(h) for i, h in enumerate(hours[e])}
            if params.tax_model == "model_wrapper":
                actions["p"] = [int(b) for b in brackets[e]]
            results.append(env.step(actions))
        check_equal(envs, [r[0] for r in results], state, params)
        for e, (_, rew, d, _) in enumerate(results):
            np.testing.assert_allclose(
                agent_rew[e], [rew[str(i)] for i in range(N_AGENTS)], rtol=1e-9, atol=1e-9
            )
            assert planner_rew[e] == pytest.approx(rew["p"], rel=1e-9, abs=1e-9)
            assert bool(done[e]) == d["__all__"]
        if done.all():
            am.reset_envs(state, params, done)
            check_equal(envs, [env.reset() for env in envs], state, params)


def test_reset_only_selected_envs():
    env = make_env({"period": 2})
    params = am.OneStepParams.from_env(env)
    state = am.initial_state(params, 2)
    am.step(state, params, np.zeros((2, N_AGENTS), int), np.full((2, 7), 3))
    am.step(state, params, np.full((2, N_AGENTS), 10), np.zeros((2, 7), int))
    am.reset_envs(state, params, np.array([True, False]))
    assert state.coin[0].sum() == 0 and state.coin[1].sum() > 0
    assert state.timestep.tolist() == [0, 2]


def test_unsupported_configs_are_named():
    saez_env = make_env({"period": 2, "tax_model": "saez"})
    with pytest.raises(ValueError, match="saez"):
        am.OneStepParams.from_env(saez_env)
    env = foundation.make_env_instance(
        "one-step-economy",
        components=[("PeriodicBracketTax", {"period": 2}), ("SimpleLabor", {})],
        n_agents=2,
        world_size=[1, 1],
        episode_length=2,
    )
    with pytest.raises(ValueError, match="in that order"):
        am.OneStepParams.from_env(env)
    params = am.OneStepParams.from_env(make_env({"period": 2}))
    state = am.initial_state(params, 1)
    with pytest.raises(ValueError, match="planner tax actions must be in 0..21"):
        am.step(state, params, np.zeros((1, N_AGENTS), int), np.full((1, 7), 22))

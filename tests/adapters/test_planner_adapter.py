"""The generic planner env (adapters/planner.py) over the small toy scenario of conftest.py:
Gymnasium's checker, scripted agents under their masks, bad input naming ``agents_policy``."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from ai_economist.adapters.errors import UnknownScenarioError
from ai_economist.adapters.planner import PlannerEnv
from tests.adapters.conftest import TOY


def test_toy_planner_passes_the_checker_and_scripts_its_agents(toy):
    check_env(PlannerEnv(TOY, toy(), agents_policy=1), skip_render_check=True)
    env = PlannerEnv(TOY, toy(), agents_policy=2)
    obs, info = env.reset(seed=0)
    assert env.mobile_agents == ["0", "1", "2"] and obs.dtype == np.float32
    seen = []
    for t in range(6):
        obs, reward, terminated, _, info = env.step(env.action_space.sample())
        seen.append(info["agents_actions"].tolist())
        assert terminated == (t == 5)
    # dial 2 on the first step; after it, 2 is the dial's value, masked, so the NO-OP
    assert seen == [[2, 2, 2]] + [[0, 0, 0]] * 5
    assert [a.state["dial"] for a in env.env.world.agents] == [2, 2, 2]


def test_toy_planner_callable_policy_sees_the_agents_observations(toy):
    shapes = []
    env = PlannerEnv(
        TOY,
        toy(),
        agents_policy=lambda t, obs: (shapes.append(obs.shape), np.full(3, 1 + t % 3))[1],
    )
    env.reset()
    acts = [env.step(env.action_space.sample())[4]["agents_actions"].tolist() for _ in range(3)]
    assert acts == [[1, 1, 1], [2, 2, 2], [3, 3, 3]]  # each differs from the dial: allowed
    assert shapes[0] == (3, env.foundation_agents.obs_dim("0"))


def test_toy_planner_bad_input(toy):
    with pytest.raises(ValueError, match=r"agents_policy must be in 0\.\.3, got 4"):
        PlannerEnv(TOY, toy(), agents_policy=4)
    with pytest.raises(ValueError, match=r"agents_policy must be .*shape \(6, 3\)"):
        PlannerEnv(TOY, toy(), agents_policy=np.zeros((6, 2), int))
    with pytest.raises(UnknownScenarioError, match="adapters-toy"):
        PlannerEnv("adapters-toyy", toy())

"""The generic Gymnasium VectorEnv (adapters/vector.py): over a registered env by name (the
toy target-matching env, whose right answer is in its observation) and over a small numpy
``BatchedPolicyEnv`` whose envs end at different steps (both autoreset modes)."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist.adapters.errors import ActionMaskError, UnknownAgentError
from ai_economist.adapters.vector import BatchedVectorEnv, make_vector_env
from ai_economist.warp_drive.env_protocol import PolicySpec
from ai_economist.warp_drive.errors import UnknownNameError


def test_toy_env_by_name_pays_the_target_and_autoresets():
    venv = make_vector_env("toy", num_envs=3)  # packaged toy.yaml: 4 agents, 10 steps
    assert venv.single_action_space["a"].nvec.tolist() == [5] * 4
    assert venv.single_action_space["p"].n == 3  # one planner: Discrete, no agent axis
    obs, info = venv.reset(seed=0)
    assert obs["a"].shape == (3, 4, 8) and obs["p"].shape == (3, 6)
    assert info["action_mask_a"].shape == (3, 4, 5) and info["action_mask_p"].shape == (3, 3)
    for t in range(10):
        # the first num_actions features are the one-hot target, never masked
        acts = {"a": obs["a"][..., :5].argmax(-1), "p": obs["p"][:, :3].argmax(-1)}
        obs, rew, term, trunc, info = venv.step(acts)
        assert rew.tolist() == [1.0] * 3  # the planner's reward
        assert info["rewards_a"].tolist() == [[1.0] * 4] * 3
        assert term.tolist() == [t == 9] * 3 and not trunc.any()
    assert venv.episode_metrics() == {"accuracy_a": 1.0, "accuracy_p": 1.0}
    obs, rew, term, _, info = venv.step({})  # NEXT_STEP: the reset step
    assert rew.tolist() == [0.0] * 3 and not term.any() and not info["rewards_a"].any()
    assert obs["a"][..., -1].max() == 0.0  # the time feature is back at 0


def test_toy_env_bad_input():
    venv = make_vector_env("toy", num_envs=2, reward_tag="a")
    with pytest.raises(RuntimeError, match="reset"):
        venv.step({})
    obs, info = venv.reset()
    masked = np.argwhere(info["action_mask_a"] == 0)[0]  # (env, agent, action)
    acts = np.zeros((2, 4), int)
    acts[masked[0], masked[1]] = masked[2]
    with pytest.raises(ActionMaskError, match=r"actions\['a'\]\[\d, \d\] = \d is masked"):
        venv.step({"a": acts})
    with pytest.raises(UnknownAgentError, match=r"\['q'\].*\['a', 'p'\]"):
        venv.step({"q": acts})
    with pytest.raises(ValueError, match=r"actions\['p'\] must be ints of shape \(2,\)"):
        venv.step({"p": np.zeros((2, 1), int)})
    rew = venv.step({"a": obs["a"][..., :5].argmax(-1)})[1]
    assert rew.tolist() == [4.0, 4.0]  # reward_tag="a": the 4 agents' rewards summed
    with pytest.raises(UnknownNameError, match="toy"):
        make_vector_env("toyy")
    with pytest.raises(UnknownAgentError, match=r"reward_tag 'x'.*\['a', 'p'\]"):
        make_vector_env("toy", reward_tag="x")


class StaggeredEnv:
    """2 envs of 2 agents; env 0 ends after 2 steps, env 1 after 3; obs = the timestep,
    reward = the action; numpy buffers (as FoundationEnvWrapper's without torch)."""

    num_envs, episode_length = 2, 3
    policy_specs = {"a": PolicySpec(2, 1, 3)}

    def __init__(self) -> None:
        self.t = np.zeros(2, int)
        self.lengths = np.array([2, 3])
        self._actions = np.zeros((2, 2), np.int32)
        self._rewards = np.zeros((2, 2), np.float32)

    def reset_all_envs(self):
        self.t[:] = 0

    def reset_only_done_envs(self):
        self.t[self.done() > 0] = 0

    def step_all_envs(self):
        self._rewards[:] = self._actions
        self.t += 1

    def observations(self, tag):
        return np.repeat(self.t[:, None, None], 2, axis=1).astype(np.float32)

    def action_masks(self, tag):
        return np.ones((2, 2, 3), np.float32)

    def actions(self, tag):
        return self._actions

    def rewards(self, tag):
        return self._rewards

    def done(self):
        return (self.t >= self.lengths).astype(np.int32)

    def episode_metrics(self):
        return {}


def test_same_step_autoreset_resets_the_envs_that_end():
    venv = BatchedVectorEnv(StaggeredEnv(), autoreset_mode="same_step")
    venv.reset()
    venv.step({"a": np.ones((2, 2), int)})
    obs, rew, term, _, info = venv.step({"a": np.array([[1, 2], [2, 2]])})
    assert rew.tolist() == [3.0, 4.0]  # no "p" policy: the first tag, summed over agents
    assert term.tolist() == [True, False] and info["_final_obs"].tolist() == [True, False]
    assert info["final_obs"]["a"][:, :, 0].tolist() == [[2, 2], [2, 2]]
    assert obs["a"][:, :, 0].tolist() == [[0, 0], [2, 2]]  # env 0 reset, env 1 went on
    term = venv.step({})[2]
    assert term.tolist() == [False, True]


def test_next_step_autoreset_needs_envs_that_end_together():
    venv = BatchedVectorEnv(StaggeredEnv())
    venv.reset()
    venv.step({})
    with pytest.raises(RuntimeError, match=r"envs \[0\] of 2 ended.*autoreset_mode='same_step'"):
        venv.step({})
    with pytest.raises(ValueError, match="autoreset_mode must be one of"):
        BatchedVectorEnv(StaggeredEnv(), autoreset_mode="later")


def test_importing_the_adapter_calls_each_registration_modules_gymnasium_hook():
    import gymnasium

    from ai_economist.adapters.gymnasium import register_gymnasium_ids

    called = register_gymnasium_ids()
    assert called == ["ai_economist.foundation.scenarios.covid19.registration"]
    assert "ai_economist/CovidPlanner-v0" in gymnasium.registry


def test_loading_the_registry_imports_no_gymnasium():
    """The hook keeps registration modules light: ``--env`` lookups do not import Gymnasium."""
    import subprocess
    import sys

    code = (
        "import sys; from ai_economist.warp_drive.registry import env_names; env_names(); "
        "print('gymnasium' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]

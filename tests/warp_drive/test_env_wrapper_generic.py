"""EnvWrapper on the numpy backend (and Numba's CUDA simulator): hand-computed steps,
shared memory, per-env initial states, resets, actions, state and metrics."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ai_economist.example_envs.ring_chase import RingChase
from ai_economist.warp_drive.env_protocol import BatchedPolicyEnv, PolicySpec, StatefulEnv
from ai_economist.warp_drive.env_state import EnvStateMismatch
from ai_economist.warp_drive.env_wrapper import EnvWrapper
from ai_economist.warp_drive.errors import cudasim_enabled

BACKENDS = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(
    not cudasim_enabled(), reason="needs NUMBA_ENABLE_CUDASIM=1 on the CPU"))]  # fmt: skip


def tiny(backend: str, num_envs: int = 1) -> EnvWrapper:
    """One chaser (thread 0) and one runner (thread 1) on a ring of 8 cells, 3 steps."""
    env = RingChase(num_chasers=1, num_runners=1, ring_size=8, episode_length=3, tagged_penalty=2)
    return EnvWrapper(env, num_envs=num_envs, env_backend=backend, seed=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hand_computed_steps_reset_and_metrics(backend):
    w = tiny(backend)
    w.reset_all_envs()
    w.cuda_data_manager.data_on_device_via_torch("positions").copy_(torch.tensor([[0, 2]]))
    # chaser +2 (action 4) lands on the runner (stays, action 0): a tag
    w.step_all_envs({"chaser": [[4]], "runner": [[0]]})
    assert w.pull("positions").tolist() == [[2, 2]]
    assert w.rewards("chaser").tolist() == [[1.0]] and w.rewards("runner").tolist() == [[-2.0]]
    np.testing.assert_array_equal(w.observations("chaser")[0, 0], np.float32([2 / 8, 1 / 3, 0]))
    assert int(w.pull("tags_this_episode")[0]) == 1 and int(w.done()[0]) == 0
    # runner -1 (action 1) to cell 1: the chaser sees it at signed distance -1
    w.step_all_envs({"chaser": [[0]], "runner": [[1]]})
    np.testing.assert_array_equal(
        w.observations("chaser")[0, 0], np.float32([2 / 8, 2 / 3, -1 / 8])
    )
    np.testing.assert_array_equal(w.observations("runner")[0, 0], np.float32([1 / 8, 2 / 3, 1 / 8]))
    assert w.rewards("chaser").tolist() == [[0.0]] and w.rewards("runner").tolist() == [[0.0]]
    assert w.episode_metrics() == {}
    w.step_all_envs({"chaser": [[2]], "runner": [[2]]})  # both +1: chaser 3, runner 2
    assert int(w.done()[0]) == 1 and int(w.pull("_timestep_")[0]) == 3
    assert w.episode_metrics() == {"tags per episode": 1.0}
    start = w.env.initial_state(1, 0)
    w.reset_only_done_envs()
    assert int(w.done()[0]) == 0 and int(w.pull("_timestep_")[0]) == 0
    np.testing.assert_array_equal(w.pull("positions"), start["positions"])  # snapshot
    np.testing.assert_array_equal(w.pull("observations_chaser"), start["observations_chaser"])
    assert int(w.pull("tags_this_episode")[0]) == 0  # reset "zeros"
    assert int(w.pull("completed_episodes")[0]) == 1  # reset "none"


def test_protocol_shapes_and_shared_memory():
    w = EnvWrapper(RingChase(num_chasers=2, num_runners=3), num_envs=4, env_backend="numpy")
    assert isinstance(w, BatchedPolicyEnv) and isinstance(w, StatefulEnv)
    assert w.policy_specs == {"chaser": PolicySpec(2, 3, 5), "runner": PolicySpec(3, 3, 3)}
    assert w.policy_tag_to_agent_id_map == {"chaser": ["0", "1"], "runner": ["2", "3", "4"]}
    assert w.device == torch.device("cpu") and w.cuda_function_manager is None
    assert w.observations("runner").shape == (4, 3, 3) and w.actions("chaser").dtype == torch.int32
    assert w.action_masks("chaser").shape == (4, 2, 5) and w.done().shape == (4,)
    # the trainer writes actions into the tensor; the numpy reference reads the same memory
    w.actions("chaser").fill_(3)
    assert (w.backend.arrays["sampled_actions_chaser"] == 3).all()
    before = w.pull("positions")
    w.step_all_envs()
    np.testing.assert_array_equal(w.pull("positions")[:, :2], (before[:, :2] - 2) % 16)
    with pytest.raises(KeyError, match="Unknown policy tag 'chasr'.*'chaser'"):
        w.observations("chasr")


def test_environments_start_differently_and_seeds_reproduce():
    a = EnvWrapper(RingChase(), num_envs=5, env_backend="numpy", seed=7).pull("positions")
    b = EnvWrapper(RingChase(), num_envs=5, env_backend="numpy", seed=7).pull("positions")
    np.testing.assert_array_equal(a, b)
    assert len({tuple(row) for row in a}) > 1


def test_host_actions_are_validated():
    w = EnvWrapper(RingChase(num_chasers=2, num_runners=3), num_envs=2, env_backend="numpy")
    ok = {"chaser": np.zeros((2, 2), int), "runner": np.zeros((2, 3), int)}
    with pytest.raises(ValueError, match=r"actions\['runner'\] has shape \(2, 2\); expected"):
        w.step_all_envs({**ok, "runner": np.zeros((2, 2), int)})
    with pytest.raises(ValueError, match=r"actions\['runner'\] must lie in \[0, 3\); got .* to 3"):
        w.step_all_envs({**ok, "runner": np.full((2, 3), 3)})
    with pytest.raises(TypeError, match="must be integers"):
        w.step_all_envs({**ok, "chaser": np.zeros((2, 2))})
    with pytest.raises(KeyError, match="policy tag"):
        w.step_all_envs({"planner": np.zeros((2, 1), int)})


def test_a_rejected_host_action_leaves_every_buffer_unchanged():
    w = EnvWrapper(RingChase(num_chasers=2, num_runners=3), num_envs=2, env_backend="numpy")
    w.reset_all_envs()
    before = {tag: w.actions(tag).clone() for tag in ("chaser", "runner")}
    good_chasers = np.ones((2, 2), int)  # valid, listed before the bad runners
    with pytest.raises(ValueError, match=r"actions\['runner'\] must lie in"):
        w.step_all_envs({"chaser": good_chasers, "runner": np.full((2, 3), 3)})
    for tag, old in before.items():
        assert torch.equal(w.actions(tag), old), tag


def test_state_dict_round_trip_continues_exactly():
    def run(w, steps, rng):
        for _ in range(steps):
            w.step_all_envs(
                {"chaser": rng.integers(0, 5, (3, 2)), "runner": rng.integers(0, 3, (3, 3))}
            )
            w.reset_only_done_envs()

    a = EnvWrapper(RingChase(episode_length=4), num_envs=3, env_backend="numpy", seed=1)
    run(a, 6, np.random.default_rng(0))
    state = a.state_dict()
    b = EnvWrapper(RingChase(episode_length=4), num_envs=3, env_backend="numpy", seed=99)
    b.load_state_dict(state)
    run(a, 5, np.random.default_rng(1))
    run(b, 5, np.random.default_rng(1))
    for name in ("positions", "observations_runner", "completed_episodes", "_timestep_"):
        np.testing.assert_array_equal(a.pull(name), b.pull(name))
    c = EnvWrapper(RingChase(episode_length=4), num_envs=2, env_backend="numpy")
    with pytest.raises(EnvStateMismatch, match="'num_envs' is 3; this environment has 2"):
        c.load_state_dict(state)
    with pytest.raises(
        EnvStateMismatch, match="'backend' is 'numba'; this environment has 'numpy'"
    ):
        c.load_state_dict({**state, "backend": "numba"})


def test_a_reference_that_rebinds_arrays_still_shares_memory():
    class Rebinding(RingChase):
        def reference_step(self, state):
            super().reference_step(state)
            state["rewards_chaser"] = state["rewards_chaser"] + 10  # a new array

    w = EnvWrapper(Rebinding(), num_envs=2, env_backend="numpy")
    w.step_all_envs()
    assert (w.rewards("chaser") >= 10).all()


def test_from_registry_builds_the_registered_env():
    w = EnvWrapper.from_registry("ring_chase", {"num_runners": 4}, num_envs=2)
    assert isinstance(w.env, RingChase) and w.policy_specs["runner"].num_agents == 4
    with pytest.raises(KeyError, match="Unknown environment for backend\\(s\\) numpy 'ring_chace'"):
        EnvWrapper.from_registry("ring_chace")

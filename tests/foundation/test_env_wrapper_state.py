"""FoundationEnvWrapper.state_dict()/load_state_dict(): mid-episode round trips continue bit
for bit (numpy backend, Numba kernels under the CUDA simulator, pycuda on a GPU)."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from ai_economist import foundation
from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG, env_config
from ai_economist.warp_drive.env_protocol import StatefulEnv
from ai_economist.warp_drive.env_state import EnvStateMismatch, to_checkpoint

WATCHED = ("observations_a", "observations_p", "action_mask_a", "action_mask_p", "rewards_a",
           "rewards_p", "_done_", "_timestep_", "infected", "unemployed")  # fmt: skip


def make_wrapper(backend: str, num_envs: int, episode_length: int) -> FoundationEnvWrapper:
    env = foundation.make_env_instance(
        "CovidAndEconomySimulation",
        **env_config(TRAINING_ENV_CONFIG, episode_length=episode_length),
    )
    wrapper = FoundationEnvWrapper(env, num_envs=num_envs, env_backend=backend)
    wrapper.reset_all_envs()
    return wrapper


def random_actions(num_envs: int, steps: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [
        {"a": rng.integers(0, 11, (num_envs, 51)), "p": rng.integers(0, 21, num_envs)}
        for _ in range(steps)
    ]


def play(wrapper: FoundationEnvWrapper, actions: list[dict]) -> list[dict]:
    """Step (resetting done envs, as the trainer does); host copies of the watched arrays."""
    out = []
    for step in actions:
        wrapper.step_all_envs(step)
        out.append({name: wrapper.pull(name) for name in WATCHED})
        wrapper.reset_only_done_envs()
    out.append(wrapper.episode_metrics())
    return out


def through_checkpoint(state: dict) -> dict:
    """The state as a resumed trainer sees it: converted, saved and loaded weights-only."""
    buffer = io.BytesIO()
    torch.save(to_checkpoint(state), buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def assert_same(expected: list, got: list) -> None:
    assert len(expected) == len(got)
    for step, (a, b) in enumerate(zip(expected[:-1], got[:-1])):
        for name in WATCHED:
            assert a[name].dtype == b[name].dtype and np.array_equal(a[name], b[name]), (step, name)
    assert expected[-1] == got[-1]


def round_trip(backend: str, num_envs: int, episode_length: int, before: int, after: int) -> None:
    actions = random_actions(num_envs, before + after)
    wrapper = make_wrapper(backend, num_envs, episode_length)
    assert isinstance(wrapper, StatefulEnv)
    play(wrapper, actions[:before])  # mid-episode, one episode finished already
    state = through_checkpoint(wrapper.state_dict())
    expected = play(wrapper, actions[before:])
    fresh = make_wrapper(backend, num_envs, episode_length)
    fresh.load_state_dict(state)
    assert_same(expected, play(fresh, actions[before:]))


def test_numpy_backend_round_trip_mid_episode_continues_bit_for_bit():
    round_trip("numpy", num_envs=3, episode_length=7, before=10, after=12)


def test_numpy_round_trip_with_envs_on_different_steps_and_modulations():
    num_envs, actions = 3, random_actions(3, 16, seed=1)
    wrapper = make_wrapper("numpy", num_envs, episode_length=9)
    play(wrapper, actions[:4])
    wrapper.backend.sim.reset_envs(np.array([False, True, False]))  # env 1 back at step 0
    wrapper.set_parameter_modulations(beta_intercept=[1.2], unemployment=0.8, env_ids=[2])
    state = wrapper.state_dict()
    expected = play(wrapper, actions[4:])
    fresh = make_wrapper("numpy", num_envs, episode_length=9)
    fresh.load_state_dict(through_checkpoint(state))
    # the slot-major memory layout of the stringency history is kept
    assert fresh.backend.sim.history.strides == wrapper.backend.sim.history.strides
    assert_same(expected, play(fresh, actions[4:]))


def test_state_dict_is_a_copy_and_load_checks_before_changing_anything():
    wrapper = make_wrapper("numpy", num_envs=2, episode_length=5)
    state = wrapper.state_dict()
    infected = state["backend_state"]["simulation"]["infected"].copy()
    play(wrapper, random_actions(2, 2))
    assert np.array_equal(state["backend_state"]["simulation"]["infected"], infected)

    other = make_wrapper("numpy", num_envs=3, episode_length=5)
    with pytest.raises(EnvStateMismatch, match="'num_envs' is 2; this environment has 3"):
        other.load_state_dict(state)
    broken = through_checkpoint(state)
    broken["backend_state"]["buffers"]["rewards_a"] = torch.zeros(2, 50)
    before = wrapper.pull("infected")
    with pytest.raises(EnvStateMismatch, match=r"buffers/rewards_a.*\(2, 50\).*\(2, 51\)"):
        wrapper.load_state_dict(broken)
    assert np.array_equal(wrapper.pull("infected"), before)  # untouched
    del broken["backend_state"]["simulation"]["deaths"]
    with pytest.raises(EnvStateMismatch, match=r"lacks \['deaths'\]"):
        wrapper.load_state_dict(broken)


def test_cpu_backend_says_it_cannot_save_its_state():
    wrapper = make_wrapper("cpu", num_envs=1, episode_length=5)
    with pytest.raises(NotImplementedError, match="env_backend='cpu'.*env_backend='numpy'"):
        wrapper.state_dict()
    numpy_state = make_wrapper("numpy", num_envs=1, episode_length=5).state_dict()
    with pytest.raises(EnvStateMismatch, match="'backend' is 'numpy'; this environment has 'cpu'"):
        wrapper.load_state_dict(numpy_state)


def test_numba_backend_round_trip_under_the_cuda_simulator():
    numba = pytest.importorskip("numba")
    if not numba.config.ENABLE_CUDASIM:
        pytest.skip("needs NUMBA_ENABLE_CUDASIM=1 (set by `make test`) or a GPU")
    round_trip("numba", num_envs=2, episode_length=4, before=3, after=3)


@pytest.mark.gpu
@pytest.mark.parametrize("backend", ["pycuda", "numba"])
def test_gpu_backend_round_trip(backend):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    pytest.importorskip(backend)
    round_trip(backend, num_envs=4, episode_length=9, before=12, after=12)

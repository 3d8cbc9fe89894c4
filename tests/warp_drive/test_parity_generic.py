"""check_parity: the Numba kernels (CUDA simulator) match the numpy reference, and a broken
kernel or reference is reported with its field, env, agent and step."""

from __future__ import annotations

from pathlib import Path

import pytest

from ai_economist.example_envs.ring_chase import RingChase
from ai_economist.example_envs.ring_chase import env as ring_env
from ai_economist.warp_drive.checks.parity import check_parity, random_actions
from ai_economist.warp_drive.errors import cudasim_enabled
from ai_economist.warp_drive.registrar import EnvironmentRegistrar
from ai_economist.warp_drive.scenario import KernelSpec

needs_sim = pytest.mark.skipif(not cudasim_enabled(), reason="needs NUMBA_ENABLE_CUDASIM=1")
NUMBA_SOURCE = Path(ring_env.__file__).with_name("ring_chase_numba.py")
GOOD_LINE = "obs[1] = float32(t_next) / float32(episode_length)"
BAD_LINE = "obs[1] = float32(t_next + (1 if agent == 3 else 0)) / float32(episode_length)"


def broken_numba_module(tmp_path: Path) -> Path:
    """The ring-chase Numba kernel with agent 3's time observation off by one step."""
    text = NUMBA_SOURCE.read_text()
    assert GOOD_LINE in text
    path = tmp_path / "ring_chase_broken_numba.py"
    path.write_text(text.replace(GOOD_LINE, BAD_LINE))
    return path


class WithKernelModule(RingChase):
    def __init__(self, module: str, **kw) -> None:
        super().__init__(**kw)
        self._module = module

    def kernels(self) -> KernelSpec:
        return KernelSpec(("ring_chase_step",), numba_module=self._module)


@needs_sim
def test_numba_kernel_matches_the_reference_across_episode_ends():
    result = check_parity(RingChase(episode_length=4), "numba", num_envs=2, num_steps=9, seed=3)
    assert result.ok, result.message
    assert bool(result) and "matches the numpy reference for 9 steps x 2 envs" in result.message


@needs_sim
def test_a_broken_kernel_is_found_at_its_field_env_agent_and_step(tmp_path):
    env = WithKernelModule(str(broken_numba_module(tmp_path)))  # threads 0-1 chase, 2-4 run
    result = check_parity(env, "numba", num_envs=2, num_steps=3, seed=0)
    assert not result
    assert (result.step, result.phase, result.field) == (1, "step", "observations_runner")
    assert (result.env, result.index, result.agent) == (0, (1, 1), 1)
    assert result.reference == pytest.approx(1 / 20) and result.actual == pytest.approx(2 / 20)
    assert result.num_different == 2  # agent 3 in both envs
    assert "field 'observations_runner' at env 0, index (1, 1) (agent 1), step 1" in result.message


@needs_sim
def test_a_custom_registered_kernel_source_wins(tmp_path, monkeypatch):
    from ai_economist.warp_drive.env_wrapper import EnvWrapper

    broken_numba_module(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    registrar = EnvironmentRegistrar()
    registrar.add_cuda_env_src_path("ring_chase", "ring_chase_broken_numba", "numba")
    custom = EnvWrapper(RingChase(), 1, "numba", env_registrar=registrar)
    default = EnvWrapper(RingChase(), 1, "numba")
    for w in (custom, default):
        w.step_all_envs()
    assert float(default.observations("runner")[0, 1, 1]) == pytest.approx(1 / 20)
    assert float(custom.observations("runner")[0, 1, 1]) == pytest.approx(2 / 20)


def test_a_broken_reference_is_found_too():
    class Broken(RingChase):
        def reference_step(self, state):
            super().reference_step(state)
            state["rewards_chaser"][1, 0] += (state["_timestep_"][1] == 2) * 0.5

    result = check_parity(RingChase(), "numpy", num_envs=3, num_steps=4, reference_env=Broken())
    assert (result.step, result.field, result.env, result.agent) == (2, "rewards_chaser", 1, 0)
    assert check_parity(RingChase(), "numpy", num_envs=2, num_steps=3).ok


def test_random_actions_respect_the_masks():
    import numpy as np

    rng = np.random.default_rng(0)
    mask = np.zeros((50, 2, 4), np.float32)
    mask[:, 0, [0, 2]] = 1  # agent 0: actions 0 and 2; agent 1: none allowed -> NO-OP
    actions = random_actions(rng, {"a": mask})["a"]
    assert set(actions[:, 0]) == {0, 2} and set(actions[:, 1]) == {0}

"""The generic reset hook: ``GpuEnvironment.reference_reset`` (numpy twin of
``KernelSpec.reset_kernels``) runs after every reset, on the envs whose ``_timestep_`` is 0."""

from __future__ import annotations

import numpy as np

from ai_economist.example_envs.ring_chase import RingChase
from ai_economist.warp_drive.env_wrapper import EnvWrapper
from ai_economist.warp_drive.scenario import KernelSpec


class RedrawnRingChase(RingChase):
    """Ring chase whose resets put every agent on the cell ``completed episodes``."""

    def reference_reset(self, state):
        fresh = state["_timestep_"] == 0
        state["positions"][fresh] = state["completed_episodes"][fresh, None]


def test_reference_reset_runs_after_every_reset_on_fresh_envs_only():
    env = RedrawnRingChase(num_chasers=1, num_runners=1, ring_size=8, episode_length=3)
    w = EnvWrapper(env, 2, "numpy", seed=0)
    w.reset_all_envs()
    assert (w.pull("positions") == 0).all()
    stay = {"chaser": np.zeros((2, 1), np.int32), "runner": np.zeros((2, 1), np.int32)}
    w.step_all_envs(stay)
    w.reset_only_done_envs()  # nobody is done: nothing redrawn
    assert (w.pull("positions") == 0).all() and (w.pull("_timestep_") == 1).all()
    for _ in range(2):
        w.step_all_envs(stay)
    w.reset_only_done_envs()
    assert (w.pull("completed_episodes") == 1).all() and (w.pull("positions") == 1).all()


def test_reset_kernels_are_bound_with_the_other_kernels():
    spec = KernelSpec(step_kernels=("a",), other_kernels=("b",), reset_kernels=("c", "a"))
    assert spec.all_kernels == ("a", "b", "c")

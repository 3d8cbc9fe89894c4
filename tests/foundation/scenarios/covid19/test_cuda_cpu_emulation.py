"""The CUDA C kernels, run on the CPU through a g++ CUDA shim, against the float64 numpy model.

This executes the exact ``.cu`` sources, generated header and pointer table of the pycuda
backend (see ``cuda_cpu_emulation``), so the CUDA C logic is checked in CI without a GPU:
a full 540-day episode of the published configuration (both step modes), device resets,
real-world policies and parameter modulations. Tolerances: ``gpu_consistency.TOLERANCES``.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from cuda_cpu_emulation import EmulatedCudaBackend, compiler_problem  # noqa: E402

from ai_economist.foundation.scenarios.covid19.backends import gpu_consistency as gc  # noqa: E402
from ai_economist.foundation.scenarios.covid19.configs import published_model  # noqa: E402
from ai_economist.foundation.scenarios.covid19.model.simulation import (  # noqa: E402
    CovidSimulation,
    component_params_from_config,
    real_world_subsidy_levels,
)

NUM_ENVS = 2


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    problem = compiler_problem()
    if problem:
        pytest.skip(problem)
    return tmp_path_factory.mktemp("covid19_cuda_emulation")


def assert_reset_state(backend, envs) -> None:
    for field in backend.spec:
        if field.per_env and field.reset != "none":
            want = backend.initial_values.get(field.name, np.zeros(field.shape, field.dtype))
            for env in envs:
                np.testing.assert_array_equal(
                    backend.pull(field.name)[env], want, err_msg=f"{field.name} env {env}"
                )


def test_cuda_kernels_full_published_episode(build_dir):
    """540 days, alternating the five per-component kernels and the fused kernel."""
    mode = "alternate"
    params, comps = published_model()
    backend = EmulatedCudaBackend(params, comps, NUM_ENVS, build_dir)
    sim = CovidSimulation(params, comps, NUM_ENVS)
    assert not gc.compare(backend, sim), "initial state differs"
    gc.run_and_compare(backend, sim, 540, np.random.default_rng(10), mode, label="CUDA C: ")
    np.testing.assert_array_equal(backend.pull("_done_"), 1)
    np.testing.assert_array_equal(backend.pull("completed_episodes"), 1)  # by the last step
    deaths = sim.deaths.sum(axis=-1).mean() / 1e3
    backend.reset_done()
    assert_reset_state(backend, range(NUM_ENVS))
    metrics = backend.episode_metrics()
    assert metrics["usa/deaths (thousands)"] == pytest.approx(deaths, rel=1e-4)
    fresh = CovidSimulation(params, comps, NUM_ENVS)
    gc.run_and_compare(backend, fresh, 3, np.random.default_rng(11), mode, label="after reset: ")


def test_cuda_reset_only_touches_done_envs_and_records_nothing(build_dir):
    """Done envs go back to their reset state, the others keep theirs; a reset records no
    metrics (the step that ends an episode does: test above)."""
    params, comps = published_model()
    backend = EmulatedCudaBackend(params, comps, 4, build_dir)
    sim = CovidSimulation(params, comps, 4)
    gc.run_and_compare(backend, sim, 30, np.random.default_rng(12), "fused")
    before = {f.name: backend.pull(f.name) for f in backend.spec if f.per_env}
    backend.tensor("_done_")[[0, 2]] = 1
    backend.reset_done()
    assert_reset_state(backend, [0, 2])
    for name, value in before.items():
        if name != "_done_":
            np.testing.assert_array_equal(backend.pull(name)[[1, 3]], value[[1, 3]], err_msg=name)
    assert backend.pull("completed_episodes").tolist() == [0, 0, 0, 0]
    backend.reset_all()
    assert_reset_state(backend, range(4))
    assert backend.pull("completed_episodes").tolist() == [0, 0, 0, 0]


def test_cuda_real_world_policies_reproduce_the_original(build_dir):
    """The covid tutorial with real policies: planner reward sum 349.06 in the original."""
    params, comps = published_model(405, m_a=1.0, m_p=1.0)
    levels = real_world_subsidy_levels(params, 20, 90, 20000)
    backend = EmulatedCudaBackend(params, comps, 1, build_dir, use_real_world_policies=True)
    sim = CovidSimulation(params, comps, 1, True, levels)
    total = 0.0
    rng = np.random.default_rng(13)
    for _ in range(405):
        gc.run_and_compare(backend, sim, 1, rng, "alternate", label="real-world policies: ")
        total += float(backend.pull("rewards_p")[0, 0])
    assert total == pytest.approx(349.06, rel=0.005)


def test_cuda_parameter_modulations(build_dir):
    params, comps = published_model()
    backend = EmulatedCudaBackend(params, comps, NUM_ENVS, build_dir)
    sim = CovidSimulation(params, comps, NUM_ENVS)
    values = np.array([[1.3, 0.7], [0.5, 1.2], [1.5, 0.8]])
    backend.set_parameter_modulations(*values)
    for target, v in zip(
        (sim.beta_intercept_modulation, sim.beta_slope_modulation, sim.unemployment_modulation),
        values,
    ):
        target[:, 0] = v
    gc.run_and_compare(backend, sim, 120, np.random.default_rng(14), "alternate")


def test_fused_kernel_equals_per_component_kernels_bit_for_bit(build_dir):
    """The fused kernel's own memory schedule (loads first, stores only on change, whole-sector
    observation stores, shuffle sums) changes no value: every device array is identical to
    the five per-component kernels' after every step, across a subsidy decision, cooldowns,
    the first vaccines and an episode end with a device reset."""
    params, comps = published_model(episode_length=300)
    fused = EmulatedCudaBackend(params, comps, NUM_ENVS, build_dir)
    split = EmulatedCudaBackend(params, comps, NUM_ENVS, build_dir)
    sim = CovidSimulation(params, comps, NUM_ENVS)
    rng = np.random.default_rng(15)
    for t in range(1, 306):
        mask_a, mask_p = sim.action_masks()
        actions_a, actions_p = gc.random_valid_actions(rng, mask_a, mask_p)
        for backend in (fused, split):
            backend.tensor("sampled_actions_a").copy_(torch.from_numpy(actions_a))
            backend.tensor("sampled_actions_p").copy_(torch.from_numpy(actions_p))
        fused.step_fused()
        split.step_per_component()
        sim.step(actions_a, actions_p[:, 0])
        for field in fused.spec:
            if field.per_env:
                np.testing.assert_array_equal(
                    fused.pull(field.name), split.pull(field.name), err_msg=f"{field.name} t={t}"
                )
        if t == 300:  # episode end: device resets, then the first steps of a new episode
            for backend in (fused, split):
                backend.reset_done()
            sim = CovidSimulation(params, comps, NUM_ENVS)


def test_fused_kernel_with_unaligned_observation_rows(build_dir):
    """observe_rate adds a column (65 floats a row, not whole sectors): the fused kernel must
    still store every dynamic column (it used to skip those after the one-hot block)."""
    params, _ = published_model(60)
    comps = component_params_from_config(
        params, vaccine_delivery_start_date="2020-04-01", observe_rate=True
    )
    backend = EmulatedCudaBackend(params, comps, NUM_ENVS, build_dir)
    assert backend.constants["OBS_A_DIM"] % 8 != 0 and backend.constants["OBS_A_AGENT_INDEX"] > 0
    sim = CovidSimulation(params, comps, NUM_ENVS)
    gc.run_and_compare(backend, sim, 12, np.random.default_rng(12), "fused", label="CUDA C: ")
    assert sim.vaccinated.sum() > 0  # the rate observation switched on at t = 10

"""The Numba kernels in Numba's CUDA simulator against the float64 numpy model.

Runs on the CPU under ``NUMBA_ENABLE_CUDASIM=1`` (``make test`` sets it for the whole suite).
The simulator runs every CUDA thread as a Python thread (~0.1-0.5 s per launch of 2 blocks x
52 threads), so the full-episode test uses a 60-day episode and the published 540-day
configuration is covered by a 31-day window around its interesting events (subsidy decision
at t=271, first vaccine delivery at t=296) started from the numpy model's state.
Tolerances: see ``gpu_consistency`` (float32 storage, rtol 1e-4 plus per-field floors).
"""

from __future__ import annotations

import numpy as np
import pytest

numba = pytest.importorskip("numba")
torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(
    not numba.config.ENABLE_CUDASIM,
    reason="needs NUMBA_ENABLE_CUDASIM=1 (set by `make test`): the Numba kernels run in "
    "Numba's CUDA simulator on the CPU here",
)

from ai_economist.foundation.scenarios.covid19 import gpu_consistency as gc  # noqa: E402
from ai_economist.foundation.scenarios.covid19 import gpu_state  # noqa: E402
from ai_economist.foundation.scenarios.covid19.configs import published_model  # noqa: E402
from ai_economist.foundation.scenarios.covid19.simulation import (  # noqa: E402
    CovidSimulation,
    real_world_subsidy_levels,
)

NUM_ENVS = 2


def make_backend(params, comps, num_envs=NUM_ENVS, **kwargs):
    from ai_economist.foundation.scenarios.covid19.gpu_backend import CovidGpuBackend

    return CovidGpuBackend(params, comps, num_envs, backend="numba", **kwargs)


def advance_simulation(sim, steps: int, rng) -> None:
    """Step the numpy model alone with random valid actions."""
    for _ in range(steps):
        actions_a, actions_p = gc.random_valid_actions(rng, *sim.action_masks())
        sim.step(actions_a, actions_p[:, 0])


def assert_reset_state(backend, envs) -> None:
    """The listed envs hold exactly the reset values (bitwise)."""
    initial = backend.initial_values
    for field in backend.spec:
        if not field.per_env or field.reset == "none":
            continue
        got = backend.pull(field.name)[list(envs)]
        want = initial.get(field.name, np.zeros(field.shape, field.dtype))
        for env, row in zip(envs, got):
            np.testing.assert_array_equal(
                row, np.broadcast_to(want, row.shape), err_msg=f"{field.name} env {env}"
            )


@pytest.fixture(scope="module")
def short_config():
    return published_model(60)


@pytest.fixture(scope="module")
def published_config():
    return published_model(540)


def test_full_short_episode_matches_simulation_then_resets(short_config):
    params, comps = short_config
    backend = make_backend(params, comps)
    sim = CovidSimulation(params, comps, NUM_ENVS)
    assert not gc.compare(backend, sim), "initial state differs"
    gc.run_and_compare(backend, sim, 60, np.random.default_rng(1), mode="fused")
    np.testing.assert_array_equal(backend.pull("_done_"), 1)
    np.testing.assert_array_equal(backend.pull("_timestep_"), 60)
    expected = {
        "usa/deaths (thousands)": sim.deaths.sum(axis=-1).mean() / 1e3,
        "usa/vaccinated (% of population)": sim.vaccinated.sum(axis=-1).mean()
        / params.us_population
        * 100,
        "usa/health_index_at_end_of_episode": sim.planner_health_index.mean(),
        "usa/economic_index_at_end_of_episode": sim.planner_economic_index.mean(),
    }
    backend.reset_done()
    assert_reset_state(backend, range(NUM_ENVS))
    metrics = backend.episode_metrics()
    assert metrics.keys() == expected.keys()
    for key, value in expected.items():
        assert metrics[key] == pytest.approx(value, rel=1e-4, abs=1e-4), key
    # stepping after the device reset matches a fresh simulation
    fresh = CovidSimulation(params, comps, NUM_ENVS)
    gc.run_and_compare(backend, fresh, 2, np.random.default_rng(2), mode="alternate")


def test_published_config_events_window(published_config):
    """t = 268..298: subsidy decision (mask at 270, read at 271) and the first vaccines (296)."""
    params, comps = published_config
    rng = np.random.default_rng(3)
    sim = CovidSimulation(params, comps, NUM_ENVS)
    advance_simulation(sim, 267, rng)
    backend = make_backend(params, comps)
    backend.load_simulation_state(sim)
    assert not gc.compare(backend, sim), "loaded state differs"
    vaccinated_before = sim.vaccinated.sum()
    gc.run_and_compare(backend, sim, 31, rng, mode="alternate", label="events window: ")
    assert sim.vaccinated.sum() > vaccinated_before  # deliveries happened in the window
    assert int(sim.timestep[0]) == 298


def test_reset_done_resets_only_done_envs(short_config):
    params, comps = short_config
    backend = make_backend(params, comps, num_envs=3)
    sim = CovidSimulation(params, comps, 3)
    gc.run_and_compare(backend, sim, 3, np.random.default_rng(4), mode="fused")
    before = {f.name: backend.pull(f.name) for f in backend.spec if f.per_env}
    backend.tensor("_done_")[1] = 1
    deaths_1 = float(before["deaths"][1].astype(np.float64).sum())
    backend.reset_done()
    assert_reset_state(backend, [1])
    for name, value in before.items():
        if name not in ("_done_", "completed_episodes", "episode_metrics"):
            np.testing.assert_array_equal(backend.pull(name)[[0, 2]], value[[0, 2]], err_msg=name)
    np.testing.assert_array_equal(backend.pull("completed_episodes"), [0, 1, 0])
    metrics = backend.episode_metrics()
    assert metrics["usa/deaths (thousands)"] == pytest.approx(deaths_1 / 1e3, rel=1e-5)
    backend.reset_all()
    assert_reset_state(backend, range(3))


def test_real_world_policy_mode(short_config):
    """Real policies with the one-day lag; real subsidies start on step 25 from 2020-03-22."""
    params, comps = published_model(405)
    levels = real_world_subsidy_levels(params, 20, 90, 20000)
    rng = np.random.default_rng(5)
    sim = CovidSimulation(params, comps, NUM_ENVS, True, levels)
    advance_simulation(sim, 20, rng)
    backend = make_backend(params, comps, use_real_world_policies=True)
    np.testing.assert_array_equal(backend.pull("real_subsidy_levels"), levels)  # derived
    backend.load_simulation_state(sim)
    gc.run_and_compare(backend, sim, 8, rng, mode="alternate", label="real-world policies: ")
    assert backend.pull("subsidy_level").tolist() == [levels[28]] * NUM_ENVS != [0, 0]
    np.testing.assert_array_equal(backend.pull("action_mask_a"), 1.0)


def test_parameter_modulations(short_config):
    params, comps = short_config
    backend = make_backend(params, comps)
    sim = CovidSimulation(params, comps, NUM_ENVS)
    backend.set_parameter_modulations(beta_intercept=[1.3, 0.7], beta_slope=0.5, unemployment=1.5)
    backend.set_parameter_modulations(unemployment=0.8, env_ids=[1])
    sim.beta_intercept_modulation[:, 0] = [1.3, 0.7]
    sim.beta_slope_modulation[:] = 0.5
    sim.unemployment_modulation[:, 0] = [1.5, 0.8]
    gc.run_and_compare(backend, sim, 6, np.random.default_rng(6), mode="per_component")
    with pytest.raises(ValueError):
        backend.set_parameter_modulations(beta_slope=-1.0)
    backend.reset_all()  # modulations last until the next reset, as in the numpy model
    assert_reset_state(backend, range(NUM_ENVS))
    np.testing.assert_array_equal(backend.pull("unemployment_modulation"), 1.0)


def test_numba_kernel_factory_is_cached(short_config):
    from ai_economist.foundation.scenarios.covid19.covid19_numba import make_numba_kernels

    params, comps = short_config
    layout = gpu_state.observation_layout(CovidSimulation(params, comps, 1))
    constants = gpu_state.compile_time_constants(params, comps, layout)
    assert make_numba_kernels(constants) is make_numba_kernels(dict(constants))

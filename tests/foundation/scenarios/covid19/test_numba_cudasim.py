"""The Numba kernels in Numba's CUDA simulator against the float64 numpy model.

Runs on the CPU under ``NUMBA_ENABLE_CUDASIM=1`` (``make test`` sets it for the whole suite).
The simulator runs every CUDA thread as a Python thread (~0.1-0.5 s per launch of 2 blocks x
52 threads), so the full-episode test uses a 60-day episode whose components act often
(7-day cooldowns, a subsidy decision every 10 days, vaccines from day 20), and the published
540-day configuration is covered by a 31-day window around its interesting events (subsidy
decision at t=271, first vaccine delivery at t=296) started from the numpy model's state.
Tolerances: see ``gpu_consistency`` (float32 storage, rtol 1e-4 plus per-field floors).
"""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

numba = pytest.importorskip("numba")
torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(
    not numba.config.ENABLE_CUDASIM,
    reason="needs NUMBA_ENABLE_CUDASIM=1 (set by `make test`): the Numba kernels run in "
    "Numba's CUDA simulator on the CPU here",
)

from ai_economist.foundation.scenarios.covid19.backends import gpu_consistency as gc  # noqa: E402
from ai_economist.foundation.scenarios.covid19.configs import published_model  # noqa: E402
from ai_economist.foundation.scenarios.covid19.declaration import gpu_state  # noqa: E402
from ai_economist.foundation.scenarios.covid19.model.simulation import (  # noqa: E402
    CovidSimulation,
    component_params_from_config,
    real_world_subsidy_levels,
)

NUM_ENVS = 2


def make_backend(params, comps, num_envs=NUM_ENVS, **kwargs):
    from ai_economist.foundation.scenarios.covid19.backends.gpu_backend import CovidGpuBackend

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
def eventful_config():
    """60 days in which every component acts: 7-day cooldowns, a subsidy decision every 10
    days (t = 1, 11, ...), a vaccine delivery every 2 days from t = 20 (2020-04-11)."""
    params, _ = published_model(60)
    comps = component_params_from_config(
        params,
        action_cooldown_period=7,
        subsidy_interval=10,
        daily_vaccines_per_million_people=3000,
        delivery_interval=2,
        vaccine_delivery_start_date="2020-04-11",
    )
    assert comps.first_delivery_step == 20
    return params, comps


@pytest.fixture(scope="module")
def published_config():
    return published_model(540)


def test_fused_episode_matches_simulation_then_resets(eventful_config):
    """The fused kernel (stores only what changes) over a whole episode with cooldowns,
    subsidy changes and vaccines, then a device reset and fused steps from t = 1."""
    params, comps = eventful_config
    num_envs = 3
    backend = make_backend(params, comps, num_envs)
    sim = CovidSimulation(params, comps, num_envs)
    assert not gc.compare(backend, sim), "initial state differs"
    rng = np.random.default_rng(1)
    allowed, mask_flips, subsidy_levels = sim.action_masks()[0][..., 1], 0, set()
    for _ in range(60):
        gc.run_and_compare(backend, sim, 1, rng, mode="fused")
        mask_flips += int((sim.action_masks()[0][..., 1] != allowed).sum())
        allowed = sim.action_masks()[0][..., 1]
        subsidy_levels.add(tuple(sim.subsidy_level.tolist()))
    # the run exercised what the fused kernel stores only on change
    assert mask_flips >= 2 * num_envs * params.num_agents, mask_flips
    assert len(subsidy_levels) >= 4, subsidy_levels
    assert sim.vaccinated.sum() > 0
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
    assert_reset_state(backend, range(num_envs))
    metrics = backend.episode_metrics()
    assert metrics.keys() == expected.keys()
    for key, value in expected.items():
        assert metrics[key] == pytest.approx(value, rel=1e-4, abs=1e-4), key
    # after the device reset, the fused kernel's first step stores masks, subsidies and
    # observations again: they match a fresh simulation
    fresh = CovidSimulation(params, comps, num_envs)
    gc.run_and_compare(backend, fresh, 3, np.random.default_rng(2), mode="fused")


def test_fused_step_with_unaligned_observation_rows(eventful_config):
    """observe_rate adds a column (65 per row): the fused kernel then stores exactly the
    dynamic columns instead of whole sectors; around the first vaccine delivery."""
    params, _ = eventful_config
    comps = component_params_from_config(
        params, vaccine_delivery_start_date="2020-04-01", observe_rate=True
    )
    sim = CovidSimulation(params, comps, NUM_ENVS)
    backend = make_backend(params, comps)
    assert backend.constants["OBS_A_DIM"] % 8 != 0 and backend.constants["OBS_A_AGENT_INDEX"] > 0
    advance_simulation(sim, 8, np.random.default_rng(8))
    backend.load_simulation_state(sim)
    backend.tensor("observations_a")[..., -8:] = -1.0  # stale values the step must overwrite
    gc.run_and_compare(backend, sim, 4, np.random.default_rng(9), mode="fused")
    assert sim.vaccinated.sum() > 0  # t = 10: first delivery


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
    backend.reset_done()
    assert_reset_state(backend, [1])
    for name, value in before.items():
        if name != "_done_":
            np.testing.assert_array_equal(backend.pull(name)[[0, 2]], value[[0, 2]], err_msg=name)
    # a reset records nothing: the step that ends an episode does (test above)
    np.testing.assert_array_equal(backend.pull("completed_episodes"), [0, 0, 0])
    assert backend.episode_metrics() == {}
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
    from ai_economist.foundation.scenarios.covid19.kernels.covid19_numba import make_numba_kernels

    params, comps = short_config
    layout = gpu_state.observation_layout(CovidSimulation(params, comps, 1))
    constants = gpu_state.compile_time_constants(params, comps, layout)
    assert make_numba_kernels(constants) is make_numba_kernels(dict(constants))


def test_kernels_pass_each_body_its_own_parameters(short_config):
    """Each generated kernel calls its bodies with exactly the arrays of the body's signature,
    in that order (a swap of two same-typed arrays would compile and run)."""
    from ai_economist.foundation.scenarios.covid19.kernels import covid19_numba

    def body_parameters(fn) -> list[str]:  # after env, tid, t
        return list(inspect.signature(fn.py_func).parameters)[3:]

    params, comps = short_config
    layout = gpu_state.observation_layout(CovidSimulation(params, comps, 1))
    functions = covid19_numba.device_functions(
        gpu_state.compile_time_constants(params, comps, layout)
    )
    arguments = covid19_numba.body_arguments(functions)
    calls = 0
    for name in (*covid19_numba.STEP_KERNELS, covid19_numba.FUSED_KERNEL):
        tree = ast.parse(covid19_numba.kernel_source(name, arguments))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id in functions:
                    args = [a.id for a in node.args]
                    assert args[:3] == ["env", "tid", "t"], name
                    assert args[3:] == body_parameters(functions[node.func.id]), name
                    calls += 1
    # five per-component bodies, the fused body, record_episode_end(_flat) and commit_timestep
    # twice each
    assert calls == 10


def test_a_body_taking_an_undeclared_array_is_an_error(short_config):
    from ai_economist.foundation.scenarios.covid19.kernels import covid19_numba

    def scenario_kernel_body(env, tid, t, susceptible, infectd):
        pass

    params, comps = short_config
    layout = gpu_state.observation_layout(CovidSimulation(params, comps, 1))
    functions = covid19_numba.device_functions(
        gpu_state.compile_time_constants(params, comps, layout)
    )
    functions["scenario_kernel_body"] = scenario_kernel_body
    with pytest.raises(TypeError, match=r"'scenario_kernel_body' takes \['infectd'\]"):
        covid19_numba.body_arguments(functions)


@pytest.mark.parametrize(
    "dim, agent_index, expected",
    [
        (64, 5, (8, 56)),  # published: sectors [0, 8) and [56, 64) hold the 13 dynamic columns
        (64, 0, (0, 48)),  # one-hot first: dynamic columns 51..63 in sectors [48, 64)
        (72, 16, (16, 64)),  # one-hot [16, 67): head ends at it, tail sector [64, 72)
        (65, 6, (6, 57)),  # unaligned rows (observe_rate): exactly the dynamic columns
        (16, -1, (16, 16)),  # no one-hot block: the whole row
    ],
)
def test_sector_columns(dim, agent_index, expected):
    from ai_economist.foundation.scenarios.covid19.kernels.covid19_numba_fused import sector_columns

    assert sector_columns(dim, agent_index, 51) == expected


def test_fused_kernel_launch_bounds_follow_the_target_warps(monkeypatch):
    """COVID_FUSED_TARGET_WARPS (a kernel define) -> launch bounds of the fused kernel only, as
    CUDA C's __launch_bounds__(NUM_THREADS, target / warps per block); none by default."""
    from ai_economist.foundation.scenarios.covid19.kernels import covid19_numba

    monkeypatch.setattr(covid19_numba, "cudasim_enabled", lambda: False)
    fused, other = covid19_numba.FUSED_KERNEL, covid19_numba.STEP_KERNELS[0]
    target = {"NUM_AGENTS": 51, "COVID_FUSED_TARGET_WARPS": 32}
    assert covid19_numba.jit_options(fused, target) == {"launch_bounds": (52, 16)}
    assert covid19_numba.jit_options(fused, {**target, "NUM_AGENTS": 20}) == {
        "launch_bounds": (21, 32)
    }
    assert covid19_numba.jit_options(other, target) == {}
    assert covid19_numba.jit_options(fused, {"NUM_AGENTS": 51}) == {}

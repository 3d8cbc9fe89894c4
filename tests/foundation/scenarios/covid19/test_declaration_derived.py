"""Names and formulas that used to be listed by hand come from one definition."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist.foundation.scenarios.covid19.configs import published_model
from ai_economist.foundation.scenarios.covid19.declaration import gpu_state
from ai_economist.foundation.scenarios.covid19.model.metrics import (
    EPISODE_METRIC_NAMES,
    episode_metric_values,
)
from ai_economist.foundation.scenarios.covid19.model.simulation import CovidSimulation


@pytest.fixture(scope="module")
def sim():
    params, comps = published_model(10)
    return CovidSimulation(params, comps, 2)


def test_simulator_state_is_the_declared_model_state(sim):
    model = [f.name for f in gpu_state.model_state_fields()]
    assert "stringency_history" in model and "beta_slope_modulation" in model
    assert CovidSimulation.STATE_ATTRS == ("timestep", *(
        "history" if name == "stringency_history" else name for name in model
    ))  # fmt: skip
    for attr in CovidSimulation.STATE_ATTRS:  # each one a per-env array of the simulator
        assert np.shape(getattr(sim, attr))[0] == 2, attr


def test_the_declaration_is_its_groups_in_order():
    groups = (
        gpu_state.model_state_fields()
        + gpu_state.trainer_fields()
        + gpu_state.constant_fields()
        + gpu_state.builtin_fields()
    )
    assert [f.name for f in gpu_state.covid_state_fields()] == [f.name for f in groups]
    assert [f.name for f in gpu_state.builtin_fields()] == list(gpu_state.BUILTIN_FIELDS)
    assert all(not f.per_env for f in gpu_state.constant_fields())


def test_host_values_cover_every_declared_field(sim):
    constants = gpu_state.constant_values(sim)
    assert set(constants) == {f.name for f in gpu_state.constant_fields()}
    assert constants["population"] is sim.params.population
    state = gpu_state.simulation_state(sim)
    for f in gpu_state.model_state_fields():
        assert state[f.name].shape[0] == 2, f.name
    np.testing.assert_array_equal(state["stringency_history"], sim.history)
    assert state["unemployment_modulation"].shape == (2,)


def test_episode_metric_values_by_hand():
    deaths = np.array([[1500.0, 500.0], [0.0, 250.0]])
    vaccinated = np.array([[10.0, 30.0], [0.0, 5.0]])
    health, economic = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    values = episode_metric_values(deaths, vaccinated, health, economic, us_population=200)
    assert len(values) == len(EPISODE_METRIC_NAMES) == 4
    np.testing.assert_allclose(values[0], [2.0, 0.25])  # thousands
    np.testing.assert_allclose(values[1], [20.0, 2.5])  # % of 200 people
    assert values[2] is health and values[3] is economic


def test_episode_metric_values_on_torch_tensors_match_numpy():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    deaths = rng.random((3, 51), dtype=np.float32) * 1e4
    vaccinated = rng.random((3, 51), dtype=np.float32) * 1e6
    health, economic = rng.random(3, dtype=np.float32), rng.random(3, dtype=np.float32)
    ref = episode_metric_values(deaths, vaccinated, health, economic, 328_000_000)
    got = episode_metric_values(
        *map(torch.from_numpy, (deaths, vaccinated, health, economic)), 328_000_000
    )
    for r, g in zip(ref, got, strict=True):
        np.testing.assert_allclose(g.numpy(), r, rtol=1e-6)


def test_cpu_buffers_are_the_declared_policy_fields(sim):
    from ai_economist.foundation.scenarios.covid19.backends.cpu_backend import placeholder_feed

    layout = gpu_state.observation_layout(sim)
    spec = gpu_state.covid_state_spec(sim.params, sim.components, layout)
    feed = placeholder_feed(3, 51, layout, 11, 21)
    assert list(feed) == [f.name for f in gpu_state.policy_fields()]
    for name, value in feed.items():
        field = spec[name]
        assert value.shape == (3, *field.shape) and value.dtype == field.dtype, name
        assert not value.any(), name
    assert feed["action_mask_p"].shape == (3, 1, 21)

"""COVID-19 through the generic parity checker (``check_parity``), exactly as Tag: the Numba
kernels in Numba's CUDA simulator against the float64 model stepped from the declared arrays.

Short episodes (3 days) so that 2 envs x 4 steps cross an episode end (the step that ends it
records the metrics) and the generic one-launch reset (the int8 history included)."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist.foundation.scenarios.covid19.configs import published_model
from ai_economist.foundation.scenarios.covid19.declaration.gpu_env import CovidGpuEnvironment
from ai_economist.foundation.scenarios.covid19.declaration.tolerances import (
    DEFAULT_TOLERANCE,
    field_tolerance,
)
from ai_economist.warp_drive.checks.parity import check_parity
from ai_economist.warp_drive.errors import cudasim_enabled

pytest.importorskip("torch")
needs_sim = pytest.mark.skipif(not cudasim_enabled(), reason="needs NUMBA_ENABLE_CUDASIM=1")


@pytest.fixture(scope="module")
def short_model():
    return published_model(episode_length=3)


@needs_sim
@pytest.mark.parametrize("fused_step", [True, False], ids=["fused", "per-component"])
def test_numba_kernels_match_the_reference_across_an_episode_end(short_model, fused_step):
    env = CovidGpuEnvironment(*short_model, fused_step=fused_step)
    result = check_parity(env, "numba", num_envs=2, num_steps=4, seed=1)
    assert result, result.message
    assert "matches the numpy reference for 4 steps x 2 envs" in result.message


@needs_sim
def test_numba_kernels_match_the_reference_with_real_world_policies():
    env = CovidGpuEnvironment(*published_model(episode_length=30), use_real_world_policies=True)
    result = check_parity(env, "numba", num_envs=2, num_steps=2, seed=2)
    assert result, result.message


class SlowerDeaths(CovidGpuEnvironment):
    """A reference whose state 7 of env 1 gains one death on day 2."""

    def reference_step(self, state):
        super().reference_step(state)
        state["deaths"][1, 7] += (state["_timestep_"][1] == 2) * 1.0


@needs_sim
def test_a_difference_is_found_at_its_field_env_agent_and_step(short_model):
    result = check_parity(
        CovidGpuEnvironment(*short_model),
        "numba",
        num_envs=2,
        num_steps=2,
        reference_env=SlowerDeaths(*short_model),
        tolerances={"deaths": (0.0, 0.5)},
    )
    assert not result
    assert (result.step, result.phase, result.field) == (2, "step", "deaths")
    assert (result.env, result.agent, result.num_different) == (1, 7, 1)
    assert result.reference - result.actual == pytest.approx(1.0, abs=0.01)


def test_reference_episode_records_metrics_and_resets(short_model):
    """The numpy backend (the reference) on its own: the third step ends the episode and
    records its metrics; the generic reset restores the declared reset state."""
    from ai_economist.foundation.scenarios.covid19.model.simulation import CovidSimulation
    from ai_economist.warp_drive.env_wrapper import EnvWrapper

    params, comps = short_model
    env = CovidGpuEnvironment(params, comps)
    wrapper = EnvWrapper(env, num_envs=2, env_backend="numpy")
    wrapper.reset_all_envs()
    sim = CovidSimulation(params, comps, 2)
    for day in range(3):
        actions = {"a": np.full((2, 51), day % 2), "p": np.full((2, 1), 1)}
        wrapper.step_all_envs(actions)
        sim.step(actions["a"], actions["p"][:, 0])
    assert wrapper.pull("_done_").tolist() == [1, 1]
    assert wrapper.pull("completed_episodes").tolist() == [1, 1]
    metrics = wrapper.episode_metrics()
    assert metrics["usa/deaths (thousands)"] == pytest.approx(
        sim.deaths.sum(-1).mean() / 1e3, rel=1e-6
    )
    wrapper.reset_only_done_envs()
    initial = env.initial_state(2, None)
    np.testing.assert_array_equal(
        wrapper.pull("stringency_history")[1], initial["stringency_history"]
    )
    assert wrapper.pull("_timestep_").tolist() == [0, 0]
    assert wrapper.pull("completed_episodes").tolist() == [1, 1]  # reset "none"


def test_parity_tolerances_scale_people_with_population(short_model):
    params, comps = short_model
    tolerances = CovidGpuEnvironment(params, comps).parity_tolerances()
    rtol, atol = tolerances["infected"]
    assert rtol == 1e-4
    np.testing.assert_allclose(atol, 1e-5 * np.asarray(params.population))
    assert tolerances["observations_a"] == (1e-4, 1e-5)
    assert tolerances["action_mask_a"] == (0.0, 0.0)  # exact, as in tolerances.EXACT
    assert field_tolerance("a_new_float_field") == DEFAULT_TOLERANCE == (1e-4, 1e-6)

"""The parity command on an environment registered with a ``parity`` hook (``EnvEntry.parity``)
rather than as a ``GpuEnvironment`` class: COVID-19 (``covid_and_economy_environment``), its
Numba kernels in Numba's CUDA simulator against the float64 model, 2 envs x 3 steps."""

from __future__ import annotations

import pytest

from ai_economist.foundation.scenarios.covid19.declaration.gpu_env import CovidGpuEnvironment
from ai_economist.warp_drive.checks import parity_command
from ai_economist.warp_drive.errors import cudasim_enabled

pytest.importorskip("torch")
needs_sim = pytest.mark.skipif(not cudasim_enabled(), reason="needs NUMBA_ENABLE_CUDASIM=1")
NAME = "covid_and_economy_environment"
SMALL = ["--env", NAME, "--backend", "numba", "--num_envs", "2", "--num_steps", "3"]


@pytest.mark.parametrize("backend", ["numba", "pycuda"])
def test_listing_offers_covid_and_the_gpu_environments(backend, capsys):
    assert parity_command.main(["--list", "--backend", backend]) == 0
    listed = capsys.readouterr().out.split()
    assert NAME in listed and "ring_chase" in listed


def test_a_misspelt_covid_name_exits_2_with_the_close_match(capsys):
    assert parity_command.main(["--env", "covid_and_economy_env", *SMALL[2:]]) == 2
    err = capsys.readouterr().err
    assert f"Did you mean '{NAME}'" in err


def test_missing_env_without_list_exits_2(capsys):
    assert parity_command.main(["--backend", "numba"]) == 2
    assert "--env NAME is required (or --list)" in capsys.readouterr().err


@needs_sim
def test_covid_numba_kernels_are_consistent(capsys):
    assert parity_command.main(SMALL) == 0
    out = capsys.readouterr().out
    assert f"{NAME}: numba consistent with the numpy reference (2 envs x 3 steps, seed 0)" in out


@needs_sim
def test_a_broken_reference_exits_1_naming_field_env_agent_step(monkeypatch, capsys):
    """The reference gains one death in state 7 of env 1 on day 2 (as a kernel that lost one
    would differ), and the deaths must match within half a person."""
    step = CovidGpuEnvironment.reference_step
    tolerances = CovidGpuEnvironment.parity_tolerances

    def slower_deaths(self, state):
        step(self, state)
        state["deaths"][1, 7] += (state["_timestep_"][1] == 2) * 1.0

    monkeypatch.setattr(CovidGpuEnvironment, "reference_step", slower_deaths)
    monkeypatch.setattr(
        CovidGpuEnvironment,
        "parity_tolerances",
        lambda self: {**tolerances(self), "deaths": (0.0, 0.5)},
    )
    assert parity_command.main(SMALL) == 1
    out = capsys.readouterr().out
    assert out.startswith("inconsistent: CovidAndEconomySimulation (fused kernels): numba differs")
    assert "field 'deaths' at env 1, index (7,) (agent 7), step 2 (step)" in out
    assert "(1 element(s) of 'deaths' differ)" in out


@needs_sim
def test_the_scenario_command_runs_the_same_case_across_an_episode_end(capsys):
    """``python -m ...covid19.backends.gpu_consistency``: 3-day episodes, so the third step
    ends the episode and the reset is compared too."""
    from ai_economist.foundation.scenarios.covid19.backends import gpu_consistency

    argv = ["--backend", "numba", "--num_envs", "2", "--episode_length", "3", "--mode", "fused"]
    assert gpu_consistency.main(argv) == 0
    out = capsys.readouterr().out
    assert "CovidAndEconomySimulation (fused kernels): numba matches the numpy reference" in out
    assert "for 3 steps x 2 envs" in out

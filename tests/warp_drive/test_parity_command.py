"""``python -m ai_economist.warp_drive.checks.parity``: consistent (exit 0), the first
difference (exit 1), unknown environments with close matches (exit 2); under the Numba
simulator for ring chase and the one-step economy (COVID-19, an environment that is no
``GpuEnvironment`` class but registers a ``parity`` hook: ``test_parity_command_covid.py``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ai_economist.example_envs.ring_chase import RingChase
from ai_economist.warp_drive import registrar as registrar_module
from ai_economist.warp_drive.checks import parity_command
from ai_economist.warp_drive.errors import cudasim_enabled
from ai_economist.warp_drive.registrar import EnvironmentRegistrar, register_gpu_environment
from ai_economist.warp_drive.scenario import KernelSpec

needs_sim = pytest.mark.skipif(not cudasim_enabled(), reason="needs NUMBA_ENABLE_CUDASIM=1")
SMALL = ["--backend", "numba", "--num_envs", "2", "--num_steps", "3"]


@needs_sim
@pytest.mark.parametrize("name", ["ring_chase", "one_step_economy"])
def test_registered_environments_are_consistent_under_the_simulator(name, capsys):
    assert parity_command.main(["--env", name, *SMALL]) == 0
    out = capsys.readouterr().out
    assert f"{name}: numba consistent with the numpy reference (2 envs x 3 steps" in out


@needs_sim
def test_runs_as_a_module():
    cmd = [sys.executable, "-m", "ai_economist.warp_drive.checks.parity", "--env", "ring_chase",
           "--backend", "numba", "--num_envs", "1", "--num_steps", "2"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ), check=False)
    assert proc.returncode == 0, proc.stderr
    assert "consistent" in proc.stdout and "RuntimeWarning" not in proc.stderr


def test_unknown_environment_lists_close_matches(capsys):
    assert parity_command.main(["--env", "ring_chas", *SMALL]) == 2
    err = capsys.readouterr().err
    assert "no environment 'ring_chas' with numba kernels and a parity check" in err
    assert "Did you mean 'ring_chase'?" in err and "tag_continuous" in err


def test_bad_sizes_exit_2(capsys):
    assert (
        parity_command.main(["--env", "ring_chase", "--backend", "numba", "--num_envs", "0"]) == 2
    )
    assert "--num_envs must be >= 1, got 0" in capsys.readouterr().err


@needs_sim
def test_a_broken_kernel_exits_1_naming_field_env_agent_step(tmp_path, monkeypatch, capsys):
    from test_parity_generic import broken_numba_module

    broken_numba_module(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = "ring_chase_broken_numba"

    class BrokenChase(RingChase):
        name = "broken_chase"

        def kernels(self) -> KernelSpec:
            return KernelSpec(("ring_chase_step",), numba_module=module)

    parity_command.gpu_environment_classes("numba")  # registration modules imported first
    custom = EnvironmentRegistrar(use_defaults=False)
    register_gpu_environment(BrokenChase, custom, training=False)
    monkeypatch.setattr(registrar_module, "default_registrar", custom)
    assert parity_command.main(["--env", "broken_chase", *SMALL]) == 1
    out = capsys.readouterr().out
    assert out.startswith("inconsistent: broken_chase: numba differs")
    assert "field 'observations_runner' at env 0, index (1, 1) (agent 1), step 1 (step)" in out

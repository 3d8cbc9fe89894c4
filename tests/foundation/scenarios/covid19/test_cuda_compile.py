"""nvcc compiles the COVID-19 CUDA C kernels with the generated header (no GPU needed)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from ai_economist.datasets.covid19 import load_calibration
from ai_economist.foundation.scenarios.covid19.declaration import gpu_state
from ai_economist.foundation.scenarios.covid19.declaration.gpu_env import CovidGpuEnvironment
from ai_economist.foundation.scenarios.covid19.model.params import build_params
from ai_economist.foundation.scenarios.covid19.model.simulation import component_params_from_config
from ai_economist.warp_drive import codegen
from ai_economist.warp_drive.backends.gpu import header_for
from ai_economist.warp_drive.errors import find_nvcc
from ai_economist.warp_drive.state import parse_kernel_parameters

STEP_KERNELS = (*gpu_state.STEP_KERNELS, gpu_state.FUSED_KERNEL)
SOURCES = tuple(p for p in gpu_state.CUDA_SOURCES if p.suffix == ".cu")


def configuration(observe_rate=False, eta=2.0, delivery_interval=1, real=False):
    params = build_params(
        load_calibration(),
        episode_length=540,
        health_priority_scaling_agents=0.3,
        health_priority_scaling_planner=0.45,
        economic_reward_crra_eta=eta,
    )
    comps = component_params_from_config(
        params,
        daily_vaccines_per_million_people=3000,
        vaccine_delivery_start_date="2021-01-12",
        observe_rate=observe_rate,
        delivery_interval=delivery_interval,
    )
    env = CovidGpuEnvironment(params, comps, use_real_world_policies=real)
    return header_for(env, env.state_spec())  # the generic header, struct CovidData included


def compile_build(header: str, tmp_path: Path) -> tuple[bytes, str]:
    """nvcc as the function manager runs it, plus -Werror and ptxas' resource report."""
    include = codegen.write_header(CovidGpuEnvironment.name, header, tmp_path / "include")
    cubin = tmp_path / "covid19.cubin"
    cmd = [
        str(find_nvcc()), "-cubin", "-arch=sm_90", "-o", str(cubin), str(gpu_state.BUILD_SOURCE),
        "-I", str(include), "-Werror", "all-warnings", "-Xptxas", "-v,-warn-spills,-warn-lmem-usage",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.fail(f"nvcc failed on covid19_build.cu:\n{' '.join(cmd)}\n{proc.stderr}")
    return cubin.read_bytes(), proc.stderr


@pytest.mark.parametrize(
    "variant",
    [
        {},
        {"observe_rate": True, "eta": 1.0, "delivery_interval": 3, "real": True},
    ],
    ids=["published", "real-policies+observe_rate+eta1+interval3"],
)
def test_build_compiles_for_sm90_without_spills(nvcc, tmp_path, variant):
    cubin, report = compile_build(configuration(**variant), tmp_path)
    for name in STEP_KERNELS:
        assert name.encode() in cubin, f"kernel {name} missing from the cubin"
    spills = re.findall(r"(\d+) bytes spill stores", report)
    assert spills and all(int(s) == 0 for s in spills), report
    stacks = re.findall(r"(\d+) bytes stack frame", report)
    assert all(int(s) == 0 for s in stacks), report


def test_step_kernels_take_only_the_state_table():
    source = "\n".join(path.read_text() for path in SOURCES)
    for name in STEP_KERNELS:
        assert parse_kernel_parameters(source, name) == ["const CovidData* d"], name
    assert "CudaCovidResetEnvs" not in source  # done envs reset through the generic reset


def test_sources_have_include_guards_and_build_includes_both():
    for path in SOURCES:
        text = path.read_text()
        guards = re.findall(r"#ifndef (\w+)\s*\n#define (\w+)", text)
        assert guards and guards[0][0] == guards[0][1], path.name
    build = SOURCES[0].read_text()
    assert '#include "../../components/covid19_components_step.cu"' in build  # as in 1.7.1
    assert '#include "covid19_env_step.cu"' in build


def test_device_functions_mirror_numpy_names():
    source = "\n".join(path.read_text() for path in SOURCES)
    for name in (
        "sir_step", "softplus", "unemployment_filter_update", "unemployment_step",
        "economy_step", "crra_nonlinearity", "min_max_normalization", "get_rew",
        "agent_indices", "planner_indices", "open_close_step", "open_close_action_mask",
        "subsidy_step", "subsidy_amounts", "subsidy_action_mask", "vaccination_step",
        "time_until_next_vaccines",
    ):  # fmt: skip
        assert re.search(rf"__device__[^;{{]*\b{name}\(", source), name

"""nvcc compiles the GPU tax's CUDA C for sm_90 without spills (no GPU needed); both twins
take the declared parameters."""

from __future__ import annotations

import importlib
import re

import pytest
from gtb_gpu_helpers import compile_for_sm90_without_spills

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.tax_env import (
    RESET_KERNEL,
    STEP_KERNEL,
    GatherTradeBuildTaxGpu,
    paper_tax,
)
from ai_economist.warp_drive import codegen
from ai_economist.warp_drive.backends.gpu import header_for
from ai_economist.warp_drive.checks.declaration import check_cuda_kernels, check_numba_kernels


@pytest.mark.parametrize("model", ["model_wrapper", "saez"])
def test_tax_compiles_for_sm90_without_spills(model, nvcc, tmp_path):
    env = GatherTradeBuildTaxGpu(paper_tax(model))
    compile_for_sm90_without_spills(env, nvcc, tmp_path, (STEP_KERNEL, RESET_KERNEL))


def test_both_tax_twins_take_the_declared_parameters(tmp_path):
    env = GatherTradeBuildTaxGpu(paper_tax("saez"))
    spec = env.state_spec()
    headers = codegen.write_header(env.name, header_for(env, spec), tmp_path)
    check_cuda_kernels(env, spec, env.kernels().cuda_source, headers)  # raises on a mismatch
    check_numba_kernels(env, spec, importlib.import_module(env.kernels().numba_module))


def test_the_c_and_numba_twins_have_the_same_device_functions():
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import gtb_tax_numba as nb
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import (
        gtb_tax_numba_parts as parts,
    )

    kernels = GatherTradeBuildTaxGpu().kernels().cuda_source.parent
    source = (kernels / "gtb_tax.cuh").read_text() + (kernels / "gtb_tax_step.cu").read_text()
    names = set(re.findall(r"__device__ [\w ]+?\**\b(\w+)\(", source))
    assert {"numpy_sum", "enact_taxes", "planner_masks", "tax_reset", "observe"} <= names
    for name in names:
        assert hasattr(parts, name) or hasattr(nb, name), name
    for kernel in (STEP_KERNEL, RESET_KERNEL):
        assert f"void {kernel}(" in source and hasattr(nb, kernel)

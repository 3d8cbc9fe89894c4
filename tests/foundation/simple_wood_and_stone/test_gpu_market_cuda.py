"""nvcc compiles the GPU market's CUDA C (no GPU needed); both twins take the declared
parameters; the C constants equal the Python ones."""

from __future__ import annotations

import importlib
import re

import pytest
from gtb_gpu_helpers import compile_for_sm90_without_spills

from ai_economist.foundation.components.continuous_double_auction import PRICE_DECAY
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.market_env import (
    ORDERS_KERNEL,
    RESET_KERNEL,
    STEP_KERNEL,
    GatherTradeBuildMarketGpu,
)
from ai_economist.warp_drive import codegen
from ai_economist.warp_drive.backends.gpu import header_for
from ai_economist.warp_drive.checks.declaration import check_cuda_kernels, check_numba_kernels


@pytest.fixture(scope="module")
def env():
    return GatherTradeBuildMarketGpu()


def test_market_compiles_for_sm90_without_spills(env, nvcc, tmp_path):
    compile_for_sm90_without_spills(env, nvcc, tmp_path, (STEP_KERNEL, RESET_KERNEL, ORDERS_KERNEL))


def test_both_market_twins_take_the_declared_parameters(env, tmp_path):
    spec = env.state_spec()
    headers = codegen.write_header(env.name, header_for(env, spec), tmp_path)
    check_cuda_kernels(env, spec, env.kernels().cuda_source, headers)  # raises on a mismatch
    check_numba_kernels(env, spec, importlib.import_module(env.kernels().numba_module))


def test_the_c_price_decay_is_the_components():
    text = (GatherTradeBuildMarketGpu().kernels().cuda_source.parent / "gtb_market.cuh").read_text()
    value = re.search(r"#define MARKET_PRICE_DECAY (\S+)", text).group(1)
    assert float(value) == PRICE_DECAY

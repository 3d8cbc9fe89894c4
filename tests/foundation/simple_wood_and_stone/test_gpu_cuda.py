"""nvcc compiles the gather-trade-build GPU world's CUDA C, alone, with the market and as the full
economy with the tax (phase 2's bracket agents and phase 1's single planner) (no GPU needed):
the kernels take the declared parameters, and the C draws equal the numpy ones (host build of
gtb_rng.cuh)."""

from __future__ import annotations

import importlib
import subprocess

import numpy as np
import pytest
from gtb_gpu_helpers import compile_for_sm90_without_spills

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import rng
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.economy_env import (
    PHASE1_CONFIG,
    GatherTradeBuildEconomyGpu,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.env import (
    GatherTradeBuildMarketWorldGpu,
    GatherTradeBuildWorldGpu,
)
from ai_economist.warp_drive import codegen
from ai_economist.warp_drive.backends.gpu import header_for
from ai_economist.warp_drive.checks.declaration import check_cuda_kernels, check_numba_kernels


@pytest.fixture(
    scope="module",
    params=[GatherTradeBuildWorldGpu, GatherTradeBuildMarketWorldGpu, GatherTradeBuildEconomyGpu,
            lambda: GatherTradeBuildEconomyGpu(PHASE1_CONFIG)],
    ids=["world", "market_world", "economy_phase2", "economy_phase1"],
)  # fmt: skip
def env(request):
    return request.param()


def test_compiles_for_sm90_without_spills(env, nvcc, tmp_path):
    kernels = env.kernels()
    compile_for_sm90_without_spills(env, nvcc, tmp_path,
                                    (*kernels.step_kernels, *kernels.reset_kernels))  # fmt: skip


def test_both_twins_take_the_declared_parameters(env, tmp_path):
    spec = env.state_spec()
    headers = codegen.write_header(env.name, header_for(env, spec), tmp_path)
    check_cuda_kernels(env, spec, env.kernels().cuda_source, headers)  # raises on a mismatch
    check_numba_kernels(env, spec, importlib.import_module(env.kernels().numba_module))


HOST_PROGRAM = r"""
#include <cstdio>
#include "gtb_rng.cuh"
int main() {
  int seed, ep, step, stream, index, n;
  while (scanf("%d %d %d %d %d %d", &seed, &ep, &step, &stream, &index, &n) == 6) {
    printf("%u %.17g %d\n", gtb_draw_bits(seed, ep, step, stream, index),
           gtb_uniform(seed, ep, step, stream, index),
           gtb_below(gtb_draw_bits(seed, ep, step, stream, index), n));
  }
  return 0;
}
"""


def test_the_c_draws_equal_the_numpy_draws(nvcc, tmp_path):
    env = GatherTradeBuildWorldGpu()
    program = tmp_path / "draws.cu"
    program.write_text(HOST_PROGRAM)
    exe = tmp_path / "draws"
    include = env.kernels().cuda_source.parent
    cmd = [str(nvcc), "-o", str(exe), str(program), "-I", str(include)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    g = np.random.default_rng(0)
    rows = np.stack([
        g.integers(-(2**31), 2**31 - 1, 300), g.integers(0, 10**6, 300),
        g.integers(0, 1001, 300), g.integers(1, 8, 300), g.integers(0, 2**24, 300),
        g.integers(1, 65, 300),
    ], axis=1)  # fmt: skip
    text = "\n".join(" ".join(str(int(v)) for v in row) for row in rows)
    out = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True)
    got = np.array([line.split() for line in out.stdout.splitlines()], dtype=np.float64)
    bits = np.array([rng.draw_bits(*r[:3], int(r[3]), r[4]) for r in rows])
    uniforms = np.array([rng.uniform(*r[:3], int(r[3]), r[4]) for r in rows])
    np.testing.assert_array_equal(got[:, 0], bits)
    np.testing.assert_array_equal(got[:, 1], uniforms)
    np.testing.assert_array_equal(got[:, 2], [rng.below(b, int(r[5])) for b, r in zip(bits, rows)])

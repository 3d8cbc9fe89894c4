"""The GPU tax's Numba kernels against its numpy reference (``array_tax``) under Numba's CUDA
simulator: every tax model at 2 envs through more than 2 tax periods and a device reset."""

from __future__ import annotations

import pytest

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.tax_env import (
    GatherTradeBuildTaxGpu,
    paper_tax,
)
from ai_economist.warp_drive.checks.parity import check_parity
from ai_economist.warp_drive.errors import cudasim_enabled

pytestmark = pytest.mark.skipif(not cudasim_enabled(), reason="set NUMBA_ENABLE_CUDASIM=1")
MODELS = ["model_wrapper", "us-federal-single-filer-2018-scaled", "fixed-bracket-rates", "saez"]


@pytest.mark.parametrize("model", MODELS)
def test_numba_tax_matches_the_reference_through_periods_and_a_reset(model):
    # period 3 in 7-step episodes: tax days at steps 3 and 6, a device reset, the next cycle;
    # annealing (warm-up 1, slope 0.5) moves the limit with the episode count
    env = GatherTradeBuildTaxGpu(paper_tax(model, period=3, annealing=(1.0, 0.5)), n_agents=3,
                                 episode_length=7, threads_per_env=10)  # fmt: skip
    result = check_parity(env, "numba", num_envs=2, num_steps=12, seed=2)
    assert result, result.message


def test_numba_saez_formula_matches_the_reference():
    # 10 agents, period 1: the ring fills after 50 steps, then the formula sets the rates
    env = GatherTradeBuildTaxGpu(paper_tax("saez", period=1), n_agents=10, episode_length=40,
                                 threads_per_env=11)  # fmt: skip
    result = check_parity(env, "numba", num_envs=2, num_steps=53, seed=4)
    assert result, result.message

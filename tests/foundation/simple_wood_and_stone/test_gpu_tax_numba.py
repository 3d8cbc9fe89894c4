"""The GPU tax's Numba kernels against its numpy reference (``array_tax``) under Numba's CUDA
simulator: every tax model at 2 envs through more than 2 tax periods and a device reset."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.tax_env import (
    GatherTradeBuildTaxGpu,
    paper_tax,
)
from ai_economist.warp_drive.checks.parity import check_parity
from ai_economist.warp_drive.env_wrapper import EnvWrapper
from ai_economist.warp_drive.errors import cudasim_enabled

pytestmark = pytest.mark.skipif(not cudasim_enabled(), reason="set NUMBA_ENABLE_CUDASIM=1")
MODELS = ["model_wrapper", "us-federal-single-filer-2018-scaled", "fixed-bracket-rates", "saez"]


@pytest.mark.parametrize("model", [*MODELS, "disabled"])
def test_numba_tax_matches_the_reference_through_periods_and_a_reset(model):
    # period 3 in 7-step episodes: tax days at steps 3 and 6, a device reset, the next cycle;
    # annealing (warm-up 1, slope 0.5) moves the limit with the episode count; "disabled":
    # phase 1 (model_wrapper with disable_taxes: one planner agent, rate 0 everywhere)
    tax = {"tax_model": "model_wrapper", "disable_taxes": True} if model == "disabled" else {}
    params = paper_tax(model if not tax else "model_wrapper", period=3, annealing=(1.0, 0.5))
    env = GatherTradeBuildTaxGpu(dataclasses.replace(params, **tax), n_agents=3,
                                 episode_length=7, threads_per_env=10)  # fmt: skip
    result = check_parity(env, "numba", num_envs=2, num_steps=12, seed=2)
    assert result, result.message


def test_numba_saez_formula_matches_the_reference():
    # 10 agents, period 1: the ring fills after 50 steps (whatever the actions), then the
    # formula sets the rates (and moves the estimate) on steps 51..53
    env = GatherTradeBuildTaxGpu(paper_tax("saez", period=1), n_agents=10, episode_length=40,
                                 threads_per_env=11)  # fmt: skip
    result = check_parity(env, "numba", num_envs=2, num_steps=53, seed=4)
    assert result, result.message
    ref = EnvWrapper(env, 2, "numpy", seed=4)
    ref.reset_all_envs()
    for _ in range(53):
        ref.step_all_envs({"a": np.full((2, 10), 2, np.int32), "p": np.zeros((2, 1), np.int32)})
        ref.reset_only_done_envs()
    assert ref.pull("saez_reached").tolist() == [1, 1]
    assert (ref.pull("saez_elas") != 0.5).all() and (ref.pull("saez_running_avg") > 0).all()

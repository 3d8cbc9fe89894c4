"""The GPU tax on a GPU: pycuda and Numba against the numpy reference (``array_tax``) at a few
hundred envs (run on the device machine: ``python -m pytest -m gpu``)."""

from __future__ import annotations

import pytest
from gpu_helpers import GPU_BACKENDS, require_gpu

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.tax_env import (
    GatherTradeBuildTaxGpu,
    paper_tax,
)
from ai_economist.warp_drive.checks.parity import check_parity

require_gpu()
pytestmark = pytest.mark.gpu
MODELS = ["model_wrapper", "us-federal-single-filer-2018-scaled", "fixed-bracket-rates", "saez"]


@pytest.mark.parametrize("model", [*MODELS, "disabled"])
@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_tax_matches_the_reference_through_periods_resets_and_annealing(backend, model):
    # period 5 in 23-step episodes, 4 agents, the limit annealed over the episodes;
    # "disabled": phase 1 (model_wrapper with disable_taxes)
    name = "model_wrapper" if model == "disabled" else model
    params = paper_tax(name, period=5, annealing=(1.0, 0.3), disable_taxes=model == "disabled")
    env = GatherTradeBuildTaxGpu(params, episode_length=23)
    result = check_parity(env, backend, num_envs=256, num_steps=100, seed=9)
    assert result, result.message


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_saez_formula_matches_the_reference_at_12_agents(backend):
    # period 2: the rings fill after 84 steps, the formula sets the rates from then on
    env = GatherTradeBuildTaxGpu(paper_tax("saez", period=2, annealing=(0.0, 0.5)),
                                 n_agents=12, episode_length=37)  # fmt: skip
    result = check_parity(env, backend, num_envs=256, num_steps=120, seed=3)
    assert result, result.message

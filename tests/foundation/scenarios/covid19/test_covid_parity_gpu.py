"""COVID-19's CUDA C (pycuda) and Numba kernels on a real GPU through the generic parity
checker: a full 540-day published episode (and its episode end, metrics and reset).

Run on the device machine with ``pytest -m gpu tests/foundation/scenarios/covid19``.
"""

from __future__ import annotations

import pytest
from gpu_helpers import GPU_BACKENDS, require_gpu

pytestmark = pytest.mark.gpu

torch = require_gpu()

from ai_economist.foundation.scenarios.covid19.configs import published_model  # noqa: E402
from ai_economist.foundation.scenarios.covid19.declaration.gpu_env import CovidGpuEnvironment  # noqa: E402
from ai_economist.warp_drive.checks.parity import check_parity  # noqa: E402


@pytest.mark.parametrize("backend", GPU_BACKENDS)
@pytest.mark.parametrize("fused_step", [True, False], ids=["fused", "per-component"])
def test_full_published_episode_matches_the_reference(backend, fused_step):
    env = CovidGpuEnvironment(*published_model(), fused_step=fused_step)
    result = check_parity(env, backend, num_envs=4, num_steps=542, seed=5)
    assert result, result.message

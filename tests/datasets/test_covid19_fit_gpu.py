"""The unemployment fit on a GPU gives the CPU's result (float64; the FFTs differ in rounding)."""

from __future__ import annotations

import numpy as np
import pytest
from covid19_fit_helpers import FIXTURE
from gpu_helpers import require_gpu

pytestmark = pytest.mark.gpu
require_gpu()

from ai_economist.datasets.covid19.fit_data import load_fit_inputs  # noqa: E402
from ai_economist.datasets.covid19.fit_unemployment import fit_unemployment  # noqa: E402


def test_unemployment_fit_on_gpu_equals_cpu():
    inputs = load_fit_inputs(FIXTURE)
    policy, rate = inputs.series["policy"], inputs.series["unemployment"]
    kwargs = dict(filter_len=120, steps=60, lr=0.05, seed=1)
    cpu = fit_unemployment(policy, rate, 139, 169, device="cpu", **kwargs)
    gpu = fit_unemployment(policy, rate, 139, 169, device="cuda", **kwargs)
    for key in ("weights", "lambdas", "bias"):
        np.testing.assert_allclose(getattr(gpu, key), getattr(cpu, key), rtol=1e-7, atol=1e-9)
    assert gpu.errors["train_mse"] == pytest.approx(cpu.errors["train_mse"], rel=1e-7)


def test_auto_device_picks_the_gpu():
    from ai_economist.datasets.covid19.fit_unemployment import _device

    assert _device("auto").type == "cuda"

"""Helpers of the GPU and nvcc tests (import as ``from gpu_helpers import ...``; the ``nvcc``
fixture lives in ``conftest.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from ai_economist.warp_drive.errors import cudasim_enabled

GPU_BACKENDS = [
    "pycuda",
    pytest.param(
        "numba", marks=pytest.mark.skipif(cudasim_enabled(), reason="unset NUMBA_ENABLE_CUDASIM")
    ),
]
"""``backend`` parameters of a GPU test: pycuda, and numba unless the CUDA simulator is on."""


def require_gpu() -> Any:
    """``torch``; skips the calling test module (call it at module level) without torch or
    without an NVIDIA GPU visible to it."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():  # pragma: no cover - CPU machines deselect gpu tests anyway
        pytest.skip("needs an NVIDIA GPU", allow_module_level=True)
    return torch

"""The CUDA C fused sampling kernel (``kernels/fused_sampling.cu``), launched through the CUDA
driver on torch's current stream (``driver_launch``: capturable in a CUDA graph).

The twin of the Triton kernel of :mod:`.fused_sampling`, without Triton: the cubin is compiled
once by nvcc into the cubin cache (``cuda_compile.compile_cuda_cached``) and loaded in
milliseconds afterwards, where importing Triton and loading its kernel take about half a second
of a process's start-up.  Nothing is compiled or probed at import time.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import torch

SOURCE = Path(__file__).resolve().parent / "kernels" / "fused_sampling.cu"
THREADS_PER_BLOCK = 128
"""Threads of a block; one thread samples one row (an agent of an env)."""

LOGIT_CODES = {torch.float32: "f32", torch.bfloat16: "bf16"}
MASK_CODES = {torch.uint8: "u8", torch.int32: "i32", torch.float32: "f32"}
ENV_ACTION_CODES = {torch.int32: "i32", torch.int64: "i64"}


def cuda_kernel_name(
    logits: torch.dtype, values: torch.dtype, masks: torch.dtype, env_actions: torch.dtype
) -> str | None:
    """The ``extern "C"`` kernel of ``fused_sampling.cu`` for these dtypes, or ``None`` where
    it has none (float32 logits take float32 values; bfloat16 logits bfloat16 or float32)."""
    logit = LOGIT_CODES.get(logits)
    value = {logits: logit, torch.float32: "f32"}.get(values)
    mask, env = MASK_CODES.get(masks), ENV_ACTION_CODES.get(env_actions)
    if None in (logit, value, mask, env):
        return None
    return f"fused_sample_{logit}{value}_{mask}_{env}"


def kernel_names() -> list[str]:
    """Every kernel name :func:`cuda_kernel_name` can return (the ones the source defines)."""
    names = {
        cuda_kernel_name(logit, value, mask, env)
        for logit in LOGIT_CODES
        for value in (logit, torch.float32)
        for mask in MASK_CODES
        for env in ENV_ACTION_CODES
    }
    return sorted(names)


@functools.cache
def cuda_c_available() -> bool:
    """Whether nvcc is there to build the kernel (checked once, when first asked)."""
    from ai_economist.warp_drive.errors import find_nvcc

    try:
        find_nvcc()
    except RuntimeError:
        return False
    return True


_MODULES: dict[int, tuple[Any, dict[str, Any]]] = {}


def _function(device_index: int, name: str) -> Any:
    """The ``CUfunction`` ``name`` in the module loaded on GPU ``device_index`` (built and
    loaded on first use, into torch's context of that device)."""
    entry = _MODULES.get(device_index)
    if entry is None:
        from ai_economist.warp_drive.cuda_compile import compile_cuda_cached, device_arch
        from ai_economist.warp_drive.driver_launch import DriverModule

        with torch.cuda.device(device_index):
            cubin = compile_cuda_cached(SOURCE, device_arch(device_index))
            entry = _MODULES[device_index] = (DriverModule(cubin), {})
    module, functions = entry
    if name not in functions:
        functions[name] = module.function(name)
    return functions[name]


def launch(
    logit_rows: torch.Tensor,
    mask_rows: torch.Tensor,
    gumbel_rows: torch.Tensor,
    value_rows: torch.Tensor,
    outputs: tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor],
    fill: float,
) -> bool:
    """Sample every row in one launch on torch's current stream; ``False`` (nothing launched)
    where the kernel has no variant for the env actions' dtype.

    Args:
        logit_rows, mask_rows, gumbel_rows: ``(rows, A)`` with unit column stride (float32 or
            bfloat16 logits; masks of any dtype, nonzero = allowed; float32 noise).
        value_rows: ``(rows,)`` value estimates, any stride.
        outputs: contiguous ``(actions int64, log_probs float32, value_buffer float32,
            env_actions)``, ``(rows,)`` each.
        fill: the masked logits' value.
    """
    from ai_economist.warp_drive.driver_launch import StreamLaunch

    actions, log_probs, value_buffer, env_actions = outputs
    if mask_rows.dtype not in MASK_CODES:
        mask_rows = (mask_rows != 0).view(torch.uint8)
    if value_rows.dtype not in (logit_rows.dtype, torch.float32):
        value_rows = value_rows.float()
    name = cuda_kernel_name(logit_rows.dtype, value_rows.dtype, mask_rows.dtype,
                            env_actions.dtype)  # fmt: skip
    if name is None:
        return False
    n_rows, width = logit_rows.shape
    index = logit_rows.device.index
    index = torch.cuda.current_device() if index is None else index
    pointer, stride = np.uintp, np.int64
    params = [
        pointer(logit_rows.data_ptr()), stride(logit_rows.stride(0)),
        pointer(mask_rows.data_ptr()), stride(mask_rows.stride(0)),
        pointer(gumbel_rows.data_ptr()), stride(gumbel_rows.stride(0)),
        pointer(value_rows.data_ptr()), stride(value_rows.stride(0)),
        *(pointer(t.data_ptr()) for t in (actions, log_probs, value_buffer, env_actions)),
        np.int32(n_rows), np.int32(width), np.float32(fill),
    ]  # fmt: skip
    grid = (-(-n_rows // THREADS_PER_BLOCK), 1, 1)
    with torch.cuda.device(index):
        StreamLaunch(_function(index, name), params, grid, (THREADS_PER_BLOCK, 1, 1), name)()
    return True

"""Masked Gumbel-max sampling of a rollout step fused into one GPU kernel (CUDA C or Triton).

Per policy and step the rollout masks the logits, adds the pre-drawn Gumbel noise, takes the
argmax, computes the log-softmax, gathers the chosen action's log-probability and copies the
values and the actions into the buffers and the env: about seven small kernels.
:func:`fused_sample` does all of it in one launch, one program per block of rows.

:func:`sample_reference` is the truth (the existing :func:`~.models.sample_masked` path); the
kernel mirrors it: the same masking rule (``MASKED_LOGIT`` for float32 logits, the dtype's most
negative finite value otherwise), ``argmax(masked + gumbel)`` in float32 with ties to the first
index, and ``log_softmax`` computed as torch does, ``(x - max) - log(sum(exp(x - max)))`` in
float32 (rounded to bfloat16 for bfloat16 logits, as torch returns it).  Only the order of the
float32 sum over the actions may differ from torch's: log-probabilities agree to about 1e-7.

Two twins of the kernel: CUDA C (``kernels/fused_sampling.cu``, :mod:`.fused_sampling_cuda`;
built by nvcc once into the cubin cache, loaded in milliseconds) and Triton (below; importing
Triton and loading its kernel cost about 0.6 s of a process's start-up on an H200).
``trainer.fused_sampling_kernel`` picks one: ``auto`` (the default) takes CUDA C where nvcc is
found, else Triton.  Both are imported only when first needed, never at import time.
"""

from __future__ import annotations

import functools
from typing import Any

import torch

from ai_economist.warp_drive.training import fused_sampling_cuda
from ai_economist.warp_drive.training.models import MASKED_LOGIT, sample_masked

ROWS_PER_PROGRAM = 16
"""Rows (agents) one Triton program samples: few programs, each a small (16, BLOCK_A) tile."""


def sample_reference(
    logits: torch.Tensor,
    masks: torch.Tensor,
    gumbel: torch.Tensor,
    values: torch.Tensor,
    out: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    env_actions: torch.Tensor,
) -> None:
    """The unfused rollout step: :func:`sample_masked` into ``out = (actions, log_probs,
    value_buffer)``, then the values and the actions copied into place."""
    actions, log_probs, value_buffer = out
    sample_masked(logits, masks, gumbel=gumbel, out=(actions, log_probs))
    value_buffer.copy_(values)
    env_actions.copy_(actions)


@functools.cache
def triton_available() -> bool:
    """Whether Triton imports (checked once; the import happens here, not at module import)."""
    try:
        import triton  # noqa: F401
        import triton.language  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means: use the torch path
        return False
    return True


KERNELS = ("auto", "cuda_c", "triton")
"""Values of ``trainer.fused_sampling_kernel``."""


def fused_sampling_kernel(kernel: str = "auto") -> str | None:
    """The twin ``kernel`` (``trainer.fused_sampling_kernel``) resolves to: ``"cuda_c"`` (nvcc
    found) or ``"triton"`` (Triton imports), ``auto`` preferring CUDA C; ``None`` where the
    asked one (for ``auto``: either) is not available."""
    if kernel not in KERNELS:
        raise ValueError(f"fused sampling kernel {kernel!r}; expected one of {KERNELS}")
    if kernel in ("auto", "cuda_c") and fused_sampling_cuda.cuda_c_available():
        return "cuda_c"
    if kernel in ("auto", "triton") and triton_available():
        return "triton"
    return None


def fused_sampling_supported(
    device: torch.device | str, enabled: bool = True, kernel: str = "auto"
) -> bool:
    """True where the rollout uses :func:`fused_sample`: ``enabled`` (``trainer.fused_sampling``),
    a CUDA device and the twin ``kernel`` available (:func:`fused_sampling_kernel`)."""
    if not enabled or torch.device(device).type != "cuda":
        return False
    return fused_sampling_kernel(kernel) is not None


def _rows(tensor: torch.Tensor, width: int, name: str) -> torch.Tensor:
    """``tensor`` (..., width) as a 2-D view (rows, width) with unit column stride."""
    if tensor.shape[-1] != width:
        raise ValueError(f"fused_sample: {name} has {tensor.shape[-1]} actions, expected {width}")
    rows = tensor.reshape(-1, width)
    return rows if width == 1 or rows.stride(1) == 1 else rows.contiguous()


def _flat(tensor: torch.Tensor, n_rows: int, name: str, writable: bool = False) -> torch.Tensor:
    """``tensor`` (...) as a 1-D view of ``n_rows`` elements (a view: writes land in place)."""
    if tensor.numel() != n_rows:
        raise ValueError(f"fused_sample: {name} has {tensor.numel()} elements, expected {n_rows}")
    if writable and not tensor.is_contiguous():
        raise ValueError(f"fused_sample: {name} must be a contiguous tensor (written in place)")
    return tensor.reshape(-1)


def fused_sample(
    logits: torch.Tensor,
    masks: torch.Tensor,
    gumbel: torch.Tensor,
    values: torch.Tensor,
    out: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
    env_actions: torch.Tensor,
    kernel: str = "auto",
) -> None:
    """One kernel doing :func:`sample_reference`, on the current CUDA stream (capturable).

    Args:
        logits: ``(..., A)`` float32 or bfloat16, column stride 1 (a view of the joint head's
            output, whose last column is the value, is fine).
        masks: ``(..., A)`` bool or numbers, nonzero = allowed.
        gumbel: ``(..., A)`` float32 noise.
        values: ``(...)`` the value estimates (any row stride).
        out: contiguous ``(actions int64, log_probs float32, value_buffer float32)``, ``(...)``.
        env_actions: contiguous ``(...)`` of the env's action dtype (e.g. int32).
        kernel: the twin (:func:`fused_sampling_kernel`); the CUDA C one covers int32 and
            int64 env actions (the Triton one, else :func:`sample_reference`, takes the rest).
    """
    if logits.dtype not in (torch.float32, torch.bfloat16):
        raise ValueError(f"fused_sample: logits must be float32 or bfloat16, got {logits.dtype}")
    width = logits.shape[-1]
    logit_rows = _rows(logits, width, "logits")
    mask_rows = _rows(masks.view(torch.uint8) if masks.dtype == torch.bool else masks, width,
                      "masks")  # fmt: skip
    gumbel_rows = _rows(gumbel.float(), width, "gumbel")
    n_rows = logit_rows.shape[0]
    value_rows = _flat(values, n_rows, "values")
    actions, log_probs, value_buffer = (
        _flat(t, n_rows, name, writable=True)
        for t, name in zip(out, ("actions", "log_probs", "value_buffer"), strict=True)
    )
    env_flat = _flat(env_actions, n_rows, "env_actions", writable=True)
    if n_rows == 0:
        return
    fill = MASKED_LOGIT if logits.dtype == torch.float32 else torch.finfo(logits.dtype).min
    chosen = fused_sampling_kernel(kernel)
    outputs = (actions, log_probs, value_buffer, env_flat)
    if chosen == "cuda_c" and fused_sampling_cuda.launch(
        logit_rows, mask_rows, gumbel_rows, value_rows, outputs, fill
    ):
        return
    if not triton_available():
        sample_reference(logits, masks, gumbel, values, out, env_actions)
        return
    grid = (-(-n_rows // ROWS_PER_PROGRAM),)
    _kernel()[grid](
        logit_rows, logit_rows.stride(0), mask_rows, mask_rows.stride(0),
        gumbel_rows, gumbel_rows.stride(0), value_rows, value_rows.stride(0),
        actions, log_probs, value_buffer, env_flat, n_rows, width, float(fill),
        BLOCK_ROWS=ROWS_PER_PROGRAM, BLOCK_A=_next_power_of_two(width),
        ROUND_BF16=logits.dtype == torch.bfloat16,
    )  # fmt: skip


def _next_power_of_two(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


@functools.cache
def _kernel() -> Any:
    """The Triton kernel, compiled on first use (imports Triton)."""
    import triton
    import triton.language as tl

    # the buffers' rows of step t move with t: one compiled kernel for every alignment, so
    # that nothing compiles while a CUDA graph is being captured
    pointers = ["logits_ptr", "masks_ptr", "gumbel_ptr", "values_ptr", "actions_ptr",
                "log_probs_ptr", "value_buffer_ptr", "env_actions_ptr"]  # fmt: skip
    try:
        jit = triton.jit(do_not_specialize=pointers, do_not_specialize_on_alignment=pointers)
    except TypeError:  # Triton < 3.2: do_not_specialize covers the alignment
        jit = triton.jit(do_not_specialize=pointers)

    @jit
    def fused_sample_kernel(
        logits_ptr, logits_stride, masks_ptr, masks_stride, gumbel_ptr, gumbel_stride,
        values_ptr, values_stride, actions_ptr, log_probs_ptr, value_buffer_ptr, env_actions_ptr,
        n_rows, n_actions, fill,
        BLOCK_ROWS: tl.constexpr, BLOCK_A: tl.constexpr, ROUND_BF16: tl.constexpr,
    ):  # fmt: skip
        rows = tl.program_id(0) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
        cols = tl.arange(0, BLOCK_A)
        row_ok = rows < n_rows
        inside = row_ok[:, None] & (cols < n_actions)[None, :]
        r = rows.to(tl.int64)[:, None]
        c = cols[None, :]
        logit = tl.load(logits_ptr + r * logits_stride + c, mask=inside, other=0.0)
        allowed = tl.load(masks_ptr + r * masks_stride + c, mask=inside, other=0) != 0
        noise = tl.load(gumbel_ptr + r * gumbel_stride + c, mask=inside, other=0.0)
        # mask_logits: masked actions get the finite fill; padding columns -inf (never drawn)
        masked = tl.where(allowed, logit.to(tl.float32), fill)
        masked = tl.where((cols < n_actions)[None, :], masked, float("-inf"))
        action = tl.argmax(masked + noise.to(tl.float32), axis=1, tie_break_left=True)
        # log_softmax as torch computes it: (x - max) - log(sum(exp(x - max)))
        top = tl.max(masked, axis=1)
        total = tl.sum(tl.exp(masked - top[:, None]), axis=1)
        chosen = tl.max(tl.where(c == action[:, None], masked, float("-inf")), axis=1)
        log_prob = (chosen - top) - tl.log(total)
        if ROUND_BF16:  # torch returns a bfloat16 log-softmax for bfloat16 logits: round
            # to the nearest bfloat16, ties to even, in integer ops (as c10::BFloat16 does)
            bits = log_prob.to(tl.uint32, bitcast=True)
            bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
            log_prob = bits.to(tl.float32, bitcast=True)
        value = tl.load(values_ptr + rows.to(tl.int64) * values_stride, mask=row_ok, other=0.0)
        tl.store(actions_ptr + rows, action.to(tl.int64), mask=row_ok)
        tl.store(log_probs_ptr + rows, log_prob, mask=row_ok)
        tl.store(value_buffer_ptr + rows, value.to(tl.float32), mask=row_ok)
        env_dtype = env_actions_ptr.dtype.element_ty
        tl.store(env_actions_ptr + rows, action.to(env_dtype), mask=row_ok)

    return fused_sample_kernel

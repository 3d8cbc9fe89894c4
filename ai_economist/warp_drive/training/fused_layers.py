"""A hidden layer's matrix product and ReLU in one GPU kernel, with its gradients.

``relu(x @ W^T + b)`` is computed by ``torch._addmm_activation``, whose ReLU runs in the GEMM's
epilogue (cuBLASLt), so the pre-activation is never written to memory nor read back; the
backward pass masks the incoming gradient with the layer's output (``out > 0``, which is
where the pre-activation is positive) and forms the three gradients with two GEMMs and a
column sum.  The values are those of ``relu(linear(x, W, b))`` up to the GEMM algorithm
cuBLAS picks.  Under bfloat16 autocast the layer runs in bfloat16 and returns the weight and
bias gradients in the parameters' float32.

:func:`linear_wide` is the heads' counterpart: ``x @ W^T + b`` of a bfloat16 ``x`` with the
weight rounded to bfloat16, accumulated and returned in float32 (``torch.mm`` with
``out_dtype``), so a bfloat16 hidden layer is never copied to float32; its input gradient
comes back in the input's bfloat16.
"""

from __future__ import annotations

import torch


class _LinearReLU(torch.autograd.Function):
    """``relu(x @ weight.T + bias)`` in ``dtype``; see the module docstring."""

    @staticmethod
    def forward(ctx, x, weight, bias, dtype):  # noqa: ANN001, ANN205 - autograd signature
        x, w, b = x.to(dtype), weight.to(dtype), bias.to(dtype)
        out = torch._addmm_activation(b, x, w.t())
        ctx.save_for_backward(x, w, out)
        ctx.param_dtype = weight.dtype
        return out

    @staticmethod
    def backward(ctx, grad):  # noqa: ANN001, ANN205 - autograd signature
        x, w, out = ctx.saved_tensors
        grad = torch.ops.aten.threshold_backward(grad.to(out.dtype), out, 0)
        grad_x = grad @ w if ctx.needs_input_grad[0] else None
        grad_w = (grad.t() @ x).to(ctx.param_dtype) if ctx.needs_input_grad[1] else None
        grad_b = grad.sum(0).to(ctx.param_dtype) if ctx.needs_input_grad[2] else None
        return grad_x, grad_w, grad_b, None


class _LinearWide(torch.autograd.Function):
    """``x @ weight.T + bias`` of ``x`` in ``dtype``, accumulated and returned in float32."""

    @staticmethod
    def forward(ctx, x, weight, bias, dtype):  # noqa: ANN001, ANN205 - autograd signature
        x, w = x.to(dtype), weight.to(dtype)
        out = torch.mm(x, w.t(), out_dtype=torch.float32) + bias.float()
        ctx.save_for_backward(x, w)
        ctx.param_dtype = weight.dtype
        return out

    @staticmethod
    def backward(ctx, grad):  # noqa: ANN001, ANN205 - autograd signature
        x, w = ctx.saved_tensors
        low = grad.to(w.dtype)
        grad_x = low @ w if ctx.needs_input_grad[0] else None
        grad_w = None
        if ctx.needs_input_grad[1]:
            grad_w = torch.mm(low.t(), x, out_dtype=torch.float32).to(ctx.param_dtype)
        grad_b = grad.sum(0).to(ctx.param_dtype) if ctx.needs_input_grad[2] else None
        return grad_x, grad_w, grad_b, None


def linear_wide(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, dtype: torch.dtype
) -> torch.Tensor:
    """``x @ weight.T + bias`` of a 2-D ``x`` on a GPU, the product's inputs in ``dtype``
    (bfloat16), accumulated and returned in float32; differentiable in all three, the
    gradient of ``x`` in ``dtype``."""
    with torch.autocast(device_type=x.device.type, enabled=False):
        return _LinearWide.apply(x, weight, bias, dtype)


def linear_relu(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, dtype: torch.dtype
) -> torch.Tensor:
    """``relu(x @ weight.T + bias)`` of a 2-D ``x`` in ``dtype``, the ReLU in the GEMM's
    epilogue, differentiable in ``x``, ``weight`` and ``bias``."""
    with torch.autocast(device_type=x.device.type, enabled=False):
        return _LinearReLU.apply(x, weight, bias, dtype)


def fused_dtype(obs: torch.Tensor) -> torch.dtype | None:
    """The dtype of fused hidden layers for ``obs`` on a GPU: bfloat16 under bfloat16
    autocast, float32 without autocast (float32 ``obs``); None where the plain layers run."""
    if not obs.is_cuda:
        return None
    if torch.is_autocast_enabled("cuda"):
        bf16 = torch.get_autocast_dtype("cuda") == torch.bfloat16
        return torch.bfloat16 if bf16 else None
    return torch.float32 if obs.dtype == torch.float32 else None


def training_dtype(obs: torch.Tensor) -> torch.dtype | None:
    """:func:`fused_dtype` in a training pass (autograd on); None without autograd."""
    return fused_dtype(obs) if torch.is_grad_enabled() else None

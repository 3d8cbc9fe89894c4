"""``trainer.fused_layers``: the hidden layer's matrix product and ReLU in one kernel, with its
gradients, against ``nn.Linear`` + ``nn.ReLU`` (on the CPU here: ``torch._addmm_activation``
runs there too; on a GPU: ``test_fused_layers_gpu.py``)."""

from __future__ import annotations

import pytest
import torch

from ai_economist.warp_drive.training.fused_layers import linear_relu, training_dtype
from ai_economist.warp_drive.training.models import FullyConnectedActorCritic
from ai_economist.warp_drive.training.schema import ConfigError, validate_config
from ai_economist.warp_drive.training.toy_env import toy_run_config


def test_forward_and_gradients_equal_linear_and_relu_by_hand():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(7, 5, generator=gen, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 5, generator=gen, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, generator=gen, dtype=torch.float64, requires_grad=True)
    out = linear_relu(x, w, b, torch.float64)
    pre = x.detach() @ w.detach().t() + b.detach()
    assert torch.equal(out.detach() > 0, pre > 0) and (out.detach() >= 0).all()
    upstream = torch.randn(7, 4, generator=gen, dtype=torch.float64)
    out.backward(upstream)
    masked = upstream * (pre > 0)  # the ReLU's gradient, by hand
    torch.testing.assert_close(x.grad, masked @ w.detach())
    torch.testing.assert_close(w.grad, masked.t() @ x.detach())
    torch.testing.assert_close(b.grad, masked.sum(0))


def test_gradcheck():
    gen = torch.Generator().manual_seed(1)
    args = [torch.randn(*s, generator=gen, dtype=torch.float64, requires_grad=True)
            for s in ((6, 3), (5, 3), (5,))]  # fmt: skip
    assert torch.autograd.gradcheck(lambda x, w, b: linear_relu(x, w, b, torch.float64), args)


def test_the_cpu_and_acting_take_the_plain_layers():
    assert training_dtype(torch.zeros(2, 3)) is None  # CPU
    model = FullyConnectedActorCritic(3, 4, [8, 8])
    model.fused_layers = True
    obs = torch.randn(5, 3)
    model.fused_layers = False
    expected = model(obs)
    model.fused_layers = True
    for got, want in zip(model(obs), expected, strict=True):  # CPU: the same layers
        assert torch.equal(got, want)


def test_the_key_is_a_bool_and_off_by_default():
    assert validate_config(toy_run_config())["trainer"]["fused_layers"] is False
    with pytest.raises(ConfigError, match="trainer.fused_layers"):
        validate_config(toy_run_config(fused_layers="yes"))

"""``trainer.fused_layers``: the hidden layer's matrix product and ReLU in one kernel, with its
gradients, against ``nn.Linear`` + ``nn.ReLU`` (on the CPU here: ``torch._addmm_activation``
runs there too; on a GPU: ``test_fused_layers_gpu.py``)."""

from __future__ import annotations

import pytest
import torch

from ai_economist.warp_drive.training import models
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


def test_the_cpu_takes_the_plain_layers():
    assert training_dtype(torch.zeros(2, 3)) is None
    model = FullyConnectedActorCritic(3, 4, [8, 8])
    obs = torch.randn(5, 3)
    model.fused_layers = False
    expected = model(obs)
    model.fused_layers = True
    for got, want in zip(model(obs), expected, strict=True):
        assert torch.equal(got, want)


def test_the_model_trains_through_the_fused_layers_where_they_apply(monkeypatch):
    # on the CPU the fused path is forced (torch._addmm_activation runs there too)
    calls = []

    def spy(x, weight, bias, dtype):
        calls.append(tuple(weight.shape))
        return linear_relu(x, weight, bias, dtype)

    monkeypatch.setattr(models, "linear_relu", spy)
    monkeypatch.setattr(models, "training_dtype", lambda obs: torch.float32)
    torch.manual_seed(0)
    model = FullyConnectedActorCritic(3, 4, [8, 6])
    obs = torch.randn(2, 5, 3)
    grads = {}
    for fused in (False, True):
        model.fused_layers = fused
        model.zero_grad(set_to_none=True)
        logits, values = model(obs)
        assert logits.shape == (2, 5, 4) and values.shape == (2, 5)
        (logits.square().sum() + values.sum()).backward()
        grads[fused] = {k: p.grad.clone() for k, p in model.named_parameters()}
    assert calls == [(8, 3), (6, 8)]  # both hidden layers, only when fused
    for name, grad in grads[False].items():
        torch.testing.assert_close(grads[True][name], grad, msg=name)


def test_the_key_is_a_bool_and_on_by_default():
    assert validate_config(toy_run_config())["trainer"]["fused_layers"] is True
    assert validate_config(toy_run_config(fused_layers=False))["trainer"]["fused_layers"] is False
    with pytest.raises(ConfigError, match="trainer.fused_layers"):
        validate_config(toy_run_config(fused_layers="yes"))

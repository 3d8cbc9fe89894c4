"""``trainer.fused_layers`` on a GPU: the fused layers' forward pass and gradients match
``nn.Linear`` + ``nn.ReLU`` in float32 and under bfloat16 autocast, compiled or not, and a
training pass on a GPU takes them.  (Whole training runs with and without them:
``benchmarks/learning_seeds.py``, ``docs/results/h200-2026-11-30-session8.md``.)"""

from __future__ import annotations

import pytest
import torch

from ai_economist.warp_drive.training.models import FullyConnectedActorCritic, autocast

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("full_float32_matmuls")]


def grads_of(model, obs, precision, fused, compiled=False):
    model.fused_layers = fused
    model.zero_grad(set_to_none=True)

    def loss_of(o):
        with autocast(o.device, precision):
            logits, values = model(o)
        return logits.float().square().mean() + values.float().square().mean()

    fn = torch.compile(loss_of, dynamic=False) if compiled else loss_of
    loss = fn(obs)
    loss.backward()
    return loss.detach(), {k: p.grad.detach().clone() for k, p in model.named_parameters()}


@needs_cuda
@pytest.mark.parametrize("precision,tol", [("fp32", 1e-4), ("bf16", 3e-2)])
@pytest.mark.parametrize("compiled", [False, True])
def test_fused_layers_match_linear_and_relu(precision, tol, compiled):
    if compiled:
        pytest.importorskip("triton")
    torch.manual_seed(0)
    model = FullyConnectedActorCritic(37, 11, [256, 256]).cuda()
    obs = torch.randn(4096, 37, device="cuda")
    loss_p, grads_p = grads_of(model, obs, precision, fused=False, compiled=compiled)
    loss_f, grads_f = grads_of(model, obs, precision, fused=True, compiled=compiled)
    torch.testing.assert_close(loss_f, loss_p, rtol=tol, atol=tol)
    assert model.fused_layers  # the second pass took the fused layers
    for name, grad in grads_p.items():
        scale = grad.abs().max().clamp_min(1e-6)
        assert (grads_f[name] - grad).abs().max() / scale < tol, name
        assert grads_f[name].dtype == torch.float32, name


@needs_cuda
def test_a_cuda_training_pass_calls_the_fused_layers(monkeypatch):
    from ai_economist.warp_drive.training import models

    calls = []
    real = models.linear_relu
    monkeypatch.setattr(models, "linear_relu", lambda *a: calls.append(1) or real(*a))
    model = FullyConnectedActorCritic(5, 3, [16, 16]).cuda()
    model.fused_layers = True
    model(torch.randn(4, 5, device="cuda"))[0].sum().backward()
    assert len(calls) == 2
    with torch.no_grad():  # acting takes its own fused path (no autograd)
        model(torch.randn(4, 5, device="cuda"))
    assert len(calls) == 2


@needs_cuda
@pytest.mark.parametrize("compiled", [False, True])
def test_bf16_heads_match_float32_heads_and_return_float32(compiled):
    if compiled:
        pytest.importorskip("triton")
    torch.manual_seed(1)
    model = FullyConnectedActorCritic(37, 11, [256, 256]).cuda()
    model.fused_layers = True
    obs = torch.randn(4096, 37, device="cuda")
    model.bf16_heads = False
    loss_p, grads_p = grads_of(model, obs, "bf16", fused=True, compiled=compiled)
    model.bf16_heads = True
    loss_h, grads_h = grads_of(model, obs, "bf16", fused=True, compiled=compiled)
    assert loss_h != loss_p  # the heads' weights were rounded to bfloat16: another path ran
    torch.testing.assert_close(loss_h, loss_p, rtol=1e-2, atol=1e-4)
    for name, grad in grads_p.items():
        scale = grad.abs().max().clamp_min(1e-6)
        assert (grads_h[name] - grad).abs().max() / scale < 3e-2, name
        assert grads_h[name].dtype == torch.float32, name
    with autocast(obs.device, "bf16"):
        logits, values = model(obs)
    assert logits.dtype == values.dtype == torch.float32
    assert logits.shape == (4096, 11) and values.shape == (4096,)


@needs_cuda
def test_bf16_heads_keep_a_batch_of_agents_shape():
    model = FullyConnectedActorCritic(5, 3, [16, 16]).cuda()
    model.fused_layers = model.bf16_heads = True
    with autocast(torch.device("cuda"), "bf16"):
        logits, values = model(torch.randn(7, 4, 5, device="cuda"))
    assert logits.shape == (7, 4, 3) and values.shape == (7, 4)
    (logits.sum() + values.sum()).backward()
    assert model.policy_head.weight.grad.dtype == torch.float32

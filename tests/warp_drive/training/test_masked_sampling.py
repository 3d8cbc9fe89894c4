"""Action masks: masked actions are never sampled and carry no probability."""

from __future__ import annotations

import torch

from ai_economist.warp_drive.training.models import (
    FullyConnectedActorCritic,
    greedy_masked,
    masked_log_prob_entropy,
    sample_masked,
)


def test_masked_actions_are_never_sampled_and_frequencies_match():
    gen = torch.Generator().manual_seed(0)
    logits = torch.tensor([[0.0, 1.0, 2.0, 3.0]]).repeat(40000, 1)
    mask = torch.tensor([[1.0, 1.0, 0.0, 1.0]]).repeat(40000, 1)
    actions, log_probs = sample_masked(logits, mask, gen)
    assert not (actions == 2).any()
    expected = torch.softmax(torch.tensor([0.0, 1.0, 3.0]), 0)
    freq = torch.bincount(actions, minlength=4).float() / len(actions)
    assert torch.allclose(freq[[0, 1, 3]], expected, atol=0.01)
    ref = torch.distributions.Categorical(logits=torch.tensor([0.0, 1.0, -1e30, 3.0]))
    assert torch.allclose(log_probs, ref.log_prob(actions), atol=1e-6)


def test_entropy_and_greedy_respect_masks():
    logits = torch.tensor([[5.0, 0.0, 9.0], [0.0, 0.0, 0.0]], requires_grad=True)
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    assert greedy_masked(logits, mask).tolist() == [0, 0]
    log_prob, entropy = masked_log_prob_entropy(logits, mask, torch.tensor([1, 0]))
    assert torch.isfinite(entropy).all() and entropy[1] == 0.0
    assert torch.allclose(log_prob[1], torch.tensor(0.0))
    (log_prob.sum() + entropy.sum()).backward()
    assert torch.isfinite(logits.grad).all() and logits.grad[0, 2] == 0.0


def test_model_shapes_over_envs_and_agents():
    model = FullyConnectedActorCritic(obs_dim=6, num_actions=4, fc_dims=[8, 8])
    logits, values = model(torch.zeros(5, 3, 6))
    assert logits.shape == (5, 3, 4) and values.shape == (5, 3)

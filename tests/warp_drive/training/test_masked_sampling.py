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


def test_sampling_into_given_tensors_equals_returned_tensors():
    gen = torch.Generator().manual_seed(3)
    logits = torch.randn(6, 5, 4, generator=gen)
    masks = torch.rand(6, 5, 4, generator=gen) > 0.3
    masks[..., 0] = True
    gumbel = -torch.empty(6, 5, 4).exponential_(generator=gen).log()
    actions, log_probs = sample_masked(logits, masks, gumbel=gumbel)
    out = (torch.full((6, 5), -1, dtype=torch.long), torch.zeros(6, 5))
    returned = sample_masked(logits, masks, gumbel=gumbel, out=out)
    assert returned[0] is out[0] and returned[1] is out[1]
    assert torch.equal(out[0], actions) and torch.equal(out[1], log_probs)
    assert masks.gather(-1, actions.unsqueeze(-1)).all()  # only allowed actions


def test_bool_and_float_masks_give_the_same_logits():
    logits = torch.tensor([[0.5, -1.0, 2.0], [3.0, 0.0, 1.0]])
    bool_mask = torch.tensor([[True, False, True], [False, False, True]])
    float_mask = bool_mask.float()
    from ai_economist.warp_drive.training.models import MASKED_LOGIT, mask_logits

    masked = mask_logits(logits, bool_mask)
    assert torch.equal(masked, mask_logits(logits, float_mask))
    assert masked[0, 1] == MASKED_LOGIT and masked[0, 2] == 2.0


def test_frozen_weights_give_the_same_outputs_and_follow_weight_changes():
    torch.manual_seed(0)
    model = FullyConnectedActorCritic(obs_dim=6, num_actions=4, fc_dims=[8, 8])
    obs = torch.randn(7, 6)
    logits, values = model(obs)
    with model.frozen_weights():
        frozen_logits, frozen_values = model(obs)
    assert torch.equal(logits, frozen_logits) and torch.equal(values, frozen_values)
    with torch.no_grad():
        model.value_head.bias += 1.0  # after the block the heads are read afresh
    assert torch.allclose(model(obs)[1], values + 1.0)

"""GAE on the device against a plain Python loop over single trajectories."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ai_economist.warp_drive.training.gae import (
    MATRIX_MAX_ELEMENTS,
    MATRIX_MAX_STEPS,
    MIN_CHUNK_STEPS,
    chunk_steps,
    compute_gae,
)


def reference_gae(rewards, values, dones, last_value, gamma, lam):
    """Textbook GAE for one agent's trajectory (lists of floats)."""
    steps = len(rewards)
    adv = [0.0] * steps
    gae = 0.0
    for t in reversed(range(steps)):
        next_value = last_value if t == steps - 1 else values[t + 1]
        nonterminal = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * nonterminal - values[t]
        gae = delta + gamma * lam * nonterminal * gae
        adv[t] = gae
    return adv, [a + v for a, v in zip(adv, values, strict=True)]


@pytest.mark.parametrize("method", ["loop", "matrix"])
@pytest.mark.parametrize("gamma,lam", [(0.98, 0.95), (0.9, 1.0), (0.99, 0.0)])
def test_gae_matches_plain_loop(gamma, lam, method):
    gen = torch.Generator().manual_seed(0)
    steps, envs, agents = 7, 3, 4
    rewards = torch.randn(steps, envs, agents, generator=gen)
    values = torch.randn(steps, envs, agents, generator=gen)
    last = torch.randn(envs, agents, generator=gen)
    dones = torch.zeros(steps, envs, dtype=torch.int32)
    dones[2, 0] = 1  # episodes end inside the rollout ...
    dones[6, 1] = 1  # ... and at its last step
    dones[[1, 4], 2] = 1
    adv, ret = compute_gae(rewards, values, dones, last, gamma, lam, method)
    for e in range(envs):
        for n in range(agents):
            ref_adv, ref_ret = reference_gae(
                rewards[:, e, n].tolist(), values[:, e, n].tolist(),
                dones[:, e].float().tolist(), float(last[e, n]), gamma, lam,
            )  # fmt: skip
            np.testing.assert_allclose(adv[:, e, n].numpy(), ref_adv, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(ret[:, e, n].numpy(), ref_ret, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("steps", [128, 129, 300])
def test_long_rollouts_in_matrix_chunks_agree_with_the_loop(steps):
    gen = torch.Generator().manual_seed(3)
    rewards, values = (
        torch.randn(steps, 2, 3, generator=gen),
        torch.randn(steps, 2, 3, generator=gen),
    )
    dones = (torch.rand(steps, 2, generator=gen) < 0.05).int()
    for t in (126, 127, 128, 255):  # episode ends on and around the chunk boundaries
        if t < steps:
            dones[t, t % 2] = 1
    last = torch.randn(2, 3, generator=gen)
    auto = compute_gae(rewards, values, dones, last, 0.99, 0.95)[0]
    loop = compute_gae(rewards, values, dones, last, 0.99, 0.95, "loop")[0]
    assert torch.allclose(auto, loop, atol=1e-4)
    dones.zero_()  # no episode end: the advantage carries across every chunk boundary
    auto = compute_gae(rewards, values, dones, last, 0.99, 0.95)[0]
    loop = compute_gae(rewards, values, dones, last, 0.99, 0.95, "loop")[0]
    assert torch.allclose(auto, loop, atol=1e-4)


def test_chunk_length_follows_the_number_of_envs():
    assert chunk_steps(1200) == MATRIX_MAX_STEPS
    assert (chunk_steps(100_000) + 1) ** 2 * 100_000 <= MATRIX_MAX_ELEMENTS
    assert chunk_steps(10**8) < MIN_CHUNK_STEPS  # so many envs that the loop is used


@pytest.mark.parametrize("method", ["loop", "matrix"])
def test_lambda_one_gives_discounted_returns(method):
    rewards = torch.tensor([1.0, 2.0, 3.0]).view(3, 1, 1)
    values = torch.zeros(3, 1, 1)
    dones = torch.tensor([0, 0, 1]).view(3, 1)
    _, ret = compute_gae(rewards, values, dones, torch.full((1, 1), 100.0), 0.5, 1.0, method)
    # the bootstrap value is ignored after the terminal step
    assert ret.flatten().tolist() == [1 + 0.5 * 2 + 0.25 * 3, 2 + 0.5 * 3, 3.0]

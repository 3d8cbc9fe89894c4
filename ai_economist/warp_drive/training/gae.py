"""Generalized Advantage Estimation (Schulman et al., 2016) on batched rollouts.

Everything stays on the rollout's device: the backward recursion is a loop over the (short)
time axis with one fused update per step, vectorised over environments and agents.
"""

from __future__ import annotations

import torch


def compute_gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    dones: torch.Tensor,
    last_values: torch.Tensor,
    gamma: float,
    gae_lambda: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Advantages and value targets of a rollout of T steps.

    Args:
        rewards: (T, E, N) reward received after the action at step t.
        values: (T, E, N) value estimate of the observation at step t.
        dones: (T, E) or (T, E, N); 1 where the episode ended with step t.  The observation
            that follows a done step belongs to a new episode, so no value is bootstrapped
            across it.
        last_values: (E, N) value of the observation that follows the last step.
        gamma: discount factor.
        gae_lambda: GAE lambda (1.0 gives discounted returns minus the baseline).

    Returns:
        ``(advantages, returns)``, both (T, E, N), with ``returns = advantages + values``.
    """
    num_steps = rewards.shape[0]
    not_done = 1.0 - dones.to(rewards.dtype)
    if not_done.dim() < rewards.dim():
        not_done = not_done.unsqueeze(-1)
    advantages = torch.empty_like(rewards)
    last_gae = torch.zeros_like(last_values)
    next_values = last_values
    for t in reversed(range(num_steps)):
        delta = rewards[t] + gamma * next_values * not_done[t] - values[t]
        last_gae = delta + gamma * gae_lambda * not_done[t] * last_gae
        advantages[t] = last_gae
        next_values = values[t]
    return advantages, advantages + values

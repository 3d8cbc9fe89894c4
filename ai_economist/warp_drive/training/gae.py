"""Generalized Advantage Estimation (Schulman et al., 2016) on batched rollouts.

Everything stays on the rollout's device.  Two equivalent forms:

* ``loop``: the textbook backward recursion, one fused update per time step;
* ``matrix``: all steps at once, ``A[t] = sum_k M[t, k] * delta[k]`` with
  ``M[t, k] = (gamma * lambda)^(k - t)`` when no episode ends in ``[t, k)`` (else 0), i.e. one
  batched matrix product instead of ~6 small kernels per step.  Used for short rollouts
  (``T <= 128``), which is where the per-step launches would dominate on a GPU.
"""

from __future__ import annotations

import torch

MATRIX_MAX_STEPS = 128
MATRIX_MAX_ELEMENTS = 1 << 27


def compute_gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    dones: torch.Tensor,
    last_values: torch.Tensor,
    gamma: float,
    gae_lambda: float,
    method: str = "auto",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Advantages and value targets of a rollout of T steps.

    Args:
        rewards: (T, E, N) reward received after the action at step t.
        values: (T, E, N) value estimate of the observation at step t.
        dones: (T, E); 1 where the episode ended with step t.  The observation that follows
            a done step belongs to a new episode, so no value is bootstrapped across it.
        last_values: (E, N) value of the observation that follows the last step.
        gamma: discount factor.
        gae_lambda: GAE lambda (1.0 gives discounted returns minus the baseline).
        method: ``"loop"``, ``"matrix"`` or ``"auto"``.

    Returns:
        ``(advantages, returns)``, both (T, E, N), with ``returns = advantages + values``.
    """
    steps, envs = dones.shape[:2]
    if method == "auto":
        small = steps <= MATRIX_MAX_STEPS and steps * steps * envs <= MATRIX_MAX_ELEMENTS
        method = "matrix" if small else "loop"
    not_done = (1.0 - dones.to(rewards.dtype)).unsqueeze(-1)  # (T, E, 1)
    if method == "loop":
        advantages = _gae_loop(rewards, values, not_done, last_values, gamma, gae_lambda)
    elif method == "matrix":
        advantages = _gae_matrix(rewards, values, dones, not_done, last_values, gamma, gae_lambda)
    else:
        raise ValueError(f"method must be 'auto', 'loop' or 'matrix', got {method!r}")
    return advantages, advantages + values


def _gae_loop(rewards, values, not_done, last_values, gamma, gae_lambda) -> torch.Tensor:
    advantages = torch.empty_like(rewards)
    last_gae = torch.zeros_like(last_values)
    next_values = last_values
    for t in reversed(range(rewards.shape[0])):
        delta = rewards[t] + gamma * next_values * not_done[t] - values[t]
        last_gae = delta + gamma * gae_lambda * not_done[t] * last_gae
        advantages[t] = last_gae
        next_values = values[t]
    return advantages


def _gae_matrix(rewards, values, dones, not_done, last_values, gamma, gae_lambda) -> torch.Tensor:
    steps = rewards.shape[0]
    next_values = torch.cat([values[1:], last_values.unsqueeze(0)], dim=0)
    delta = rewards + gamma * next_values * not_done - values  # (T, E, N)
    d = dones.to(rewards.dtype)
    ends_before = torch.cumsum(d, dim=0) - d  # episode ends strictly before step t, (T, E)
    same_episode = ends_before.unsqueeze(1) == ends_before.unsqueeze(0)  # (t, k, E)
    idx = torch.arange(steps, device=rewards.device)
    lag = (idx.unsqueeze(0) - idx.unsqueeze(1)).to(rewards.dtype)  # k - t
    decay = torch.where(lag >= 0, (gamma * gae_lambda) ** lag.clamp(min=0), 0.0)
    weights = same_episode * decay.unsqueeze(-1)  # (t, k, E)
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # keep advantages at full float32 precision
    try:
        return torch.einsum("tke,ken->ten", weights, delta)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32

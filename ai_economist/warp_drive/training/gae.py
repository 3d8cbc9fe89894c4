"""Generalized Advantage Estimation (Schulman et al., 2016) on batched rollouts.

Everything stays on the rollout's device.  Two equivalent forms:

* ``loop``: the textbook backward recursion, one fused update per time step;
* ``matrix``: all steps at once, ``A[t] = sum_k M[t, k] * delta[k]`` with
  ``M[t, k] = (gamma * lambda)^(k - t)`` when no episode ends in ``[t, k)`` (else 0), i.e. one
  batched matrix product instead of ~6 small kernels per step, in chunks of at most 128 steps
  from the last chunk backwards (a chunk adds the decayed advantage at the start of the next
  chunk as one more column).  ``auto`` uses it whenever a chunk's weights fit in memory: on a
  GPU the per-step launches of the loop would dominate (a 250-step rollout: ~4,000 kernels).
"""

from __future__ import annotations

import math

import torch

MATRIX_MAX_STEPS = 128
MATRIX_MAX_ELEMENTS = 1 << 27
MIN_CHUNK_STEPS = 8  # below this (very many envs) the loop is used


def compute_gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    dones: torch.Tensor,
    last_values: torch.Tensor,
    gamma: float | torch.Tensor,
    gae_lambda: float,
    method: str = "auto",
    decay_rate: float | torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Advantages and value targets of a rollout of T steps.

    Args:
        rewards: (T, E, N) reward received after the action at step t.
        values: (T, E, N) value estimate of the observation at step t.
        dones: (T, E); 1 where the episode ended with step t.  The observation that follows
            a done step belongs to a new episode, so no value is bootstrapped across it.
        last_values: (E, N) value of the observation that follows the last step.
        gamma: discount factor (a number, or a device scalar tensor that a CUDA graph reads).
        gae_lambda: GAE lambda (1.0 gives discounted returns minus the baseline).
        method: ``"loop"``, ``"matrix"`` or ``"auto"``.
        decay_rate: ``gamma * gae_lambda`` when given (a scalar tensor in a CUDA graph, so
            that a scheduled gamma needs no new capture); default: computed here.

    Returns:
        ``(advantages, returns)``, both (T, E, N), with ``returns = advantages + values``.
    """
    envs = dones.shape[1]
    chunk = chunk_steps(envs)
    if method == "auto":
        method = "matrix" if chunk >= MIN_CHUNK_STEPS else "loop"
    if decay_rate is None:
        decay_rate = gamma * gae_lambda
    not_done = (1.0 - dones.to(rewards.dtype)).unsqueeze(-1)  # (T, E, 1)
    if method == "loop":
        advantages = _gae_loop(rewards, values, not_done, last_values, gamma, decay_rate)
    elif method == "matrix":
        next_values = torch.cat([values[1:], last_values.unsqueeze(0)], dim=0)
        delta = rewards + gamma * next_values * not_done - values  # (T, E, N)
        advantages = _gae_chunks(delta, dones.to(rewards.dtype), decay_rate, max(chunk, 1))
    else:
        raise ValueError(f"method must be 'auto', 'loop' or 'matrix', got {method!r}")
    return advantages, advantages + values


def chunk_steps(num_envs: int) -> int:
    """Steps per chunk of the matrix form: at most ``MATRIX_MAX_STEPS``, and few enough that a
    chunk's (steps + 1)^2 x envs weights stay within ``MATRIX_MAX_ELEMENTS``."""
    return min(MATRIX_MAX_STEPS, int(math.isqrt(MATRIX_MAX_ELEMENTS // max(num_envs, 1))) - 1)


def _gae_loop(rewards, values, not_done, last_values, gamma, decay_rate) -> torch.Tensor:
    advantages = torch.empty_like(rewards)
    last_gae = torch.zeros_like(last_values)
    next_values = last_values
    for t in reversed(range(rewards.shape[0])):
        delta = rewards[t] + gamma * next_values * not_done[t] - values[t]
        last_gae = delta + decay_rate * not_done[t] * last_gae
        advantages[t] = last_gae
        next_values = values[t]
    return advantages


def _gae_chunks(delta, dones, decay_rate, chunk: int) -> torch.Tensor:
    """The matrix form over chunks of ``chunk`` steps, last chunk first."""
    steps = delta.shape[0]
    advantages = torch.empty_like(delta)
    tail = None  # advantage at the first step of the next chunk
    for end in range(steps, 0, -chunk):
        start = max(0, end - chunk)
        advantages[start:end] = _gae_matrix(delta[start:end], dones[start:end], decay_rate, tail)
        tail = advantages[start]
    return advantages


def _gae_matrix(delta, dones, decay_rate, tail=None) -> torch.Tensor:
    """``A[t] = sum_k M[t, k] delta[k]`` over the steps of ``delta`` (T, E, N); with ``tail``
    (E, N), the advantage right after the last step, as one more (never ending) step."""
    if tail is not None:
        delta = torch.cat([delta, tail.unsqueeze(0)], dim=0)
        dones = torch.cat([dones, dones.new_zeros(1, dones.shape[1])], dim=0)
    steps = delta.shape[0]
    ends_before = torch.cumsum(dones, dim=0) - dones  # episode ends strictly before step t, (T, E)
    same_episode = ends_before.unsqueeze(1) == ends_before.unsqueeze(0)  # (t, k, E)
    idx = torch.arange(steps, device=delta.device)
    lag = (idx.unsqueeze(0) - idx.unsqueeze(1)).to(delta.dtype)  # k - t
    decay = torch.where(lag >= 0, decay_rate ** lag.clamp(min=0), 0.0)
    weights = same_episode * decay.unsqueeze(-1)  # (t, k, E)
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # keep advantages at full float32 precision
    try:
        out = torch.einsum("tke,ken->ten", weights, delta)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32
    return out if tail is None else out[:-1]

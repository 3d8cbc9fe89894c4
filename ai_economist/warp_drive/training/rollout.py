"""Preallocated rollout storage, episode-return tracking and phase timing.

Nothing here talks to the host during a rollout: buffers are written in place on the env's
device, episode returns are accumulated on the device and only summarised when logged.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from ai_economist.warp_drive.env_protocol import PolicySpec


@dataclass
class RolloutBuffer:
    """One policy's samples of one iteration: T steps x E envs x N agents."""

    obs: torch.Tensor  # (T, E, N, obs_dim) float32
    masks: torch.Tensor  # (T, E, N, num_actions) bool
    actions: torch.Tensor  # (T, E, N) int64
    log_probs: torch.Tensor  # (T, E, N)
    values: torch.Tensor  # (T, E, N)
    rewards: torch.Tensor  # (T, E, N)

    @classmethod
    def allocate(
        cls, spec: PolicySpec, num_steps: int, num_envs: int, device: torch.device
    ) -> RolloutBuffer:
        shape = (num_steps, num_envs, spec.num_agents)
        return cls(
            obs=torch.zeros(*shape, spec.obs_dim, device=device),
            masks=torch.zeros(*shape, spec.num_actions, dtype=torch.bool, device=device),
            actions=torch.zeros(shape, dtype=torch.long, device=device),
            log_probs=torch.zeros(shape, device=device),
            values=torch.zeros(shape, device=device),
            rewards=torch.zeros(shape, device=device),
        )


class EpisodeTracker:
    """Per-policy episode returns (mean over a policy's agents), accumulated on the device.

    ``record`` takes a whole rollout at once (a handful of vectorised operations instead of
    bookkeeping at every step): steps that belong to an episode which ended inside the rollout
    are added to ``completed_sum``; the rest is carried into the next rollout in ``carry``.
    """

    def __init__(self, tags: list[str], num_envs: int, device: torch.device) -> None:
        self.carry = {t: torch.zeros(num_envs, device=device) for t in tags}
        self.completed_sum = {t: torch.zeros((), device=device) for t in tags}
        self.completed_count = torch.zeros((), device=device)

    def record(self, rewards: dict[str, torch.Tensor], dones: torch.Tensor) -> None:
        """Account for a rollout: ``rewards[tag]`` (T, E, N), ``dones`` (T, E)."""
        dones = dones.to(torch.float32)
        # finished[t, e]: an episode end follows (or is) step t in env e
        finished = dones.flip(0).cumsum(0).flip(0) > 0
        ended = finished[0]
        for tag, reward in rewards.items():
            per_env = reward.mean(-1)
            inside = torch.where(finished, per_env, 0.0).sum(0)
            self.completed_sum[tag] += torch.where(ended, inside + self.carry[tag], 0.0).sum()
            rest = torch.where(finished, 0.0, per_env).sum(0)
            self.carry[tag].copy_(torch.where(ended, 0.0, self.carry[tag]) + rest)
        self.completed_count += dones.sum()

    def pop(self) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        """Summed returns per policy and the number of episodes completed since the last call
        (device tensors); the counters restart from zero."""
        sums = {t: s.clone() for t, s in self.completed_sum.items()}
        count = self.completed_count.clone()
        for value in self.completed_sum.values():
            value.zero_()
        self.completed_count.zero_()
        return sums, count

    def state_dict(self) -> dict[str, torch.Tensor]:
        state = {f"carry/{t}": v.clone() for t, v in self.carry.items()}
        state.update({f"sum/{t}": v.clone() for t, v in self.completed_sum.items()})
        state["count"] = self.completed_count.clone()
        return state

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        for tag in self.carry:
            self.carry[tag].copy_(state[f"carry/{tag}"])
            self.completed_sum[tag].copy_(state[f"sum/{tag}"])
        self.completed_count.copy_(state["count"])


class PhaseTimer:
    """Wall-clock time per phase (env step, policy forward, sampling, update).

    With ``synchronize=False`` nothing waits for the GPU, so on a GPU the per-phase numbers are
    the host's launch times (their sum over an iteration still tracks the real time, because
    the host cannot run ahead of the GPU for long).  ``synchronize=True`` waits for the device
    around every phase: exact attribution, a little slower.
    """

    def __init__(self, device: torch.device, synchronize: bool = False) -> None:
        self.totals: dict[str, float] = defaultdict(float)
        self._sync = synchronize and device.type == "cuda"
        self._device = device

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        if self._sync:
            torch.cuda.synchronize(self._device)
        start = time.perf_counter()
        try:
            yield
        finally:
            if self._sync:
                torch.cuda.synchronize(self._device)
            self.totals[name] += time.perf_counter() - start

    def pop(self) -> dict[str, float]:
        out = dict(self.totals)
        self.totals.clear()
        return out

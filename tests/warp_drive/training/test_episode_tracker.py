"""Episode returns accumulated over rollouts, against a plain per-step loop."""

from __future__ import annotations

import torch

from ai_economist.warp_drive.training.rollout import EpisodeTracker


def test_vectorised_episode_returns_match_a_step_loop():
    gen = torch.Generator().manual_seed(1)
    envs, agents, steps = 3, 2, 5
    tracker = EpisodeTracker(["a"], envs, torch.device("cpu"))
    running = [0.0] * envs
    finished: list[float] = []
    for _rollout in range(4):
        rewards = torch.rand(steps, envs, agents, generator=gen)
        dones = (torch.rand(steps, envs, generator=gen) < 0.3).int()
        tracker.record({"a": rewards}, dones)
        for t in range(steps):
            for e in range(envs):
                running[e] += float(rewards[t, e].mean())
                if dones[t, e]:
                    finished.append(running[e])
                    running[e] = 0.0
    sums, count = tracker.pop()
    assert int(count) == len(finished) > 0
    assert torch.allclose(sums["a"], torch.tensor(sum(finished)), atol=1e-5)
    assert torch.allclose(tracker.carry["a"], torch.tensor(running), atol=1e-5)

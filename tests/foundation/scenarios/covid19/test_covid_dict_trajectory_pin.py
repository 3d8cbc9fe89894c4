"""Pins the COVID-19 dict-API trajectory (published training config) to hashes recorded before
the per-agent dict step was sped up (issue 25): observations, rewards, dones, infos, the
generator's state, the metrics and the previous episode's dense log of fixed-seed rollouts with
per-agent dict actions ``{"0": a0, ..., "50": a50, "p": p}`` must stay bit for bit the same."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest
from trajectory_pins import feed_canonically as _feed
from trajectory_pins import skip_unless_recording_platform

from ai_economist import foundation
from ai_economist.foundation.scenarios.covid19 import configs

pytestmark = skip_unless_recording_platform

# Recorded with the unchanged code (commit f470dc8), see _rollout_digest.
PINNED = {
    "fast_path": "837b99683da8a4a4055c0fc108f3fc2f982f8a14d59be72566d972f6c34d0a6b",
    "short_episodes": "9a9a9bb0a7688832d1a55ea5eb475428c1aba112a9f67f95eff29008d4495c0b",
    "dense_log": "8cdcdf95ccd4a456af829c1e2ac3e7f14ab48acb32cd80d07b5838b7c595147a",
}


def _actions(rng: np.random.Generator, keys: list[str]) -> dict:
    """A per-agent dict of Python ints, as the original's users send them (planner last)."""
    acts = {k: int(a) for k, a in zip(keys, rng.integers(0, 11, len(keys)))}
    acts["p"] = int(rng.integers(0, 21))
    return acts


def _rollout_digest(steps: int, dense: bool, **overrides: Any) -> str:
    """sha256 of a fixed-seed rollout of the published training env (resets when done)."""
    kwargs = configs.env_config(configs.TRAINING_ENV_CONFIG, seed=3, **overrides)
    env = foundation.make_env_instance("CovidAndEconomySimulation", **kwargs)
    keys = [str(a.idx) for a in env.world.agents]
    rng = np.random.default_rng(7)
    h = hashlib.sha256()
    _feed(h, env.reset(force_dense_logging=dense))
    for _ in range(steps):
        obs, rew, done, info = env.step(_actions(rng, keys))
        for part in (obs, rew, done, info):
            _feed(h, part)
        if done["__all__"]:
            _feed(h, env.previous_episode_dense_log)
            _feed(h, env.metrics)
            _feed(h, env.reset(force_dense_logging=dense))
    _feed(h, env.rng.bit_generator.state)
    _feed(h, env.get_agent("0").state)
    _feed(h, env.world.planner.state)
    return h.hexdigest()


CASES = {
    "fast_path": (60, False, {}),
    "short_episodes": (70, False, {"episode_length": 30}),
    "dense_log": (25, True, {"episode_length": 20}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_published_config_rollout_matches_the_pinned_hash(case: str) -> None:
    steps, dense, overrides = CASES[case]
    assert _rollout_digest(steps, dense, **overrides) == PINNED[case]


if __name__ == "__main__":
    for name, (n, d, o) in sorted(CASES.items()):
        print(name, _rollout_digest(n, d, **o))

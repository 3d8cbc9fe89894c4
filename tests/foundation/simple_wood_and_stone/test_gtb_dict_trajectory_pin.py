"""Pins gather-trade-build's dict-API trajectory (paper config) to hashes recorded before the
step was sped up (issue 25): observations, rewards, dones, infos, the generator's state and the
dense log of fixed-seed rollouts with random valid actions must stay bit for bit the same."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest
from trajectory_pins import feed_canonically as _feed
from trajectory_pins import skip_unless_recording_platform

from ai_economist import foundation
from ai_economist.foundation.scenarios.simple_wood_and_stone import configs

pytestmark = skip_unless_recording_platform

# Recorded with the unchanged code (commit 7bace5d), see _rollout_digest.
PINNED = {
    "no_dense_log": "ebd1f0e36ec4762e921bd81fc8664f99988dc9846821c95b67b56a68db782161",
    "dense_log": "df1a61b57e242ed2be80bb6cdd7a8e41accf98afce3ebf9c28213fabd31213ce",
    "short_episodes": "9a4562cf93724301e4a38afe666b891c2a7610ecf52e8beae02fc34c28c1ee70",
}


def _random_valid_action(mask: np.ndarray, rng: np.random.Generator, multi: list | None) -> Any:
    allowed = np.flatnonzero(mask)
    if multi is None:
        return int(rng.choice(allowed))
    starts = np.cumsum([0, *multi])
    return [int(rng.choice(allowed[(allowed >= lo) & (allowed < hi)]) - lo)
            for lo, hi in zip(starts[:-1], starts[1:])]  # fmt: skip


def _rollout_digest(steps: int, dense: bool, **overrides: Any) -> str:
    """sha256 of a fixed-seed rollout of the paper's phase-2 env (resets when done)."""
    kwargs = configs.env_config(configs.PHASE2_ENV_CONFIG)
    kwargs.update(dense_log_frequency=None, seed=11, **overrides)
    env = foundation.make_env_instance(configs.PHASE2_ENV_CONFIG["scenario_name"], **kwargs)
    sizes = {
        str(a.idx): (list(a.action_spaces) if a.multi_action_mode else None) for a in env.all_agents
    }
    rng = np.random.default_rng(5)
    h = hashlib.sha256()
    obs = env.reset(force_dense_logging=dense)
    _feed(h, obs)
    for _ in range(steps):
        acts = {k: _random_valid_action(obs[k]["action_mask"], rng, m) for k, m in sizes.items()}
        obs, rew, done, info = env.step(acts)
        for part in (obs, rew, done, info):
            _feed(h, part)
        if done["__all__"]:
            _feed(h, env.previous_episode_dense_log)
            obs = env.reset(force_dense_logging=dense)
            _feed(h, obs)
    _feed(h, env.rng.bit_generator.state)
    _feed(h, env.get_agent("0").state)
    _feed(h, env.metrics)
    return h.hexdigest()


CASES = {
    "no_dense_log": (210, False, {}),
    "dense_log": (120, True, {}),
    "short_episodes": (130, True, {"episode_length": 60}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_paper_config_rollout_matches_the_pinned_hash(case: str) -> None:
    steps, dense, overrides = CASES[case]
    assert _rollout_digest(steps, dense, **overrides) == PINNED[case]


if __name__ == "__main__":
    for name, (n, d, o) in sorted(CASES.items()):
        print(name, _rollout_digest(n, d, **o))

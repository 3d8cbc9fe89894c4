"""Continuous Tag's constructor arguments: defaults (rl-warp-drive 1.7's) and checks."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

import numpy as np

MAX_OBSERVED = 64
"""Nearest agents a kernel thread keeps (``TAG_MAX_OBSERVED`` in CUDA C, the same in Numba)."""
REGISTER_OBSERVED = 12
"""Longest nearest-agent list kept in registers (``TAG_REGISTER_OBSERVED`` in CUDA C)."""
STAGED_NEIGHBORS = 7168
"""Nearest-agent ids the kernels stage in shared memory (``TAG_STAGED_NEIGHBORS``)."""
SEARCH_THREADS_PER_AGENT = 4
"""Threads that share one agent's nearest-agent search in the kernels (at most; see
``search_threads_per_agent``)."""
MAX_THREADS_PER_BLOCK = 1024

DEFAULTS: dict[str, Any] = dict(
    num_taggers=1,
    num_runners=10,
    grid_length=10.0,
    episode_length=100,
    starting_location_x=None,
    starting_location_y=None,
    starting_directions=None,
    seed=None,
    max_speed=1.0,
    skill_level_runner=1.0,
    skill_level_tagger=1.0,
    max_acceleration=1.0,
    min_acceleration=-1.0,
    max_turn=np.pi / 2,
    min_turn=-np.pi / 2,
    num_acceleration_levels=10,
    num_turn_levels=10,
    edge_hit_penalty=-0.0,
    use_full_observation=True,
    num_other_agents_observed=2,
    tagging_distance=0.01,
    tag_reward_for_tagger=1.0,
    step_penalty_for_tagger=-0.0,
    tag_penalty_for_runner=-1.0,
    step_reward_for_runner=0.0,
    end_of_game_reward_for_runner=1.0,
    runner_exits_game_after_tagged=True,
    observe_own_state=False,
    egocentric_observation=False,
)

# (key, predicate, what is expected) checked in the constructor.
_CHECKS: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("num_taggers", lambda v: v >= 1, "an integer >= 1"),
    ("num_runners", lambda v: v >= 1, "an integer >= 1"),
    ("episode_length", lambda v: v >= 1, "an integer >= 1"),
    ("grid_length", lambda v: v > 0, "a number > 0"),
    ("max_speed", lambda v: v >= 0, "a number >= 0"),
    ("skill_level_runner", lambda v: v >= 0, "a number >= 0"),
    ("skill_level_tagger", lambda v: v >= 0, "a number >= 0"),
    ("num_acceleration_levels", lambda v: v >= 0, "an integer >= 0"),
    ("num_turn_levels", lambda v: v >= 0, "an integer >= 0"),
    ("num_other_agents_observed", lambda v: v >= 0, "an integer >= 0"),
    ("edge_hit_penalty", lambda v: v <= 0, "a number <= 0"),
    ("tagging_distance", lambda v: 0 <= v <= 1, "a number in [0, 1]"),
    ("tag_reward_for_tagger", lambda v: v >= 0, "a number >= 0"),
    ("step_penalty_for_tagger", lambda v: v <= 0, "a number <= 0"),
    ("tag_penalty_for_runner", lambda v: v <= 0, "a number <= 0"),
    ("step_reward_for_runner", lambda v: v >= 0, "a number >= 0"),
    ("end_of_game_reward_for_runner", lambda v: v >= 0, "a number >= 0"),
)
_INTEGER_KEYS = {
    "num_taggers", "num_runners", "episode_length", "num_acceleration_levels",
    "num_turn_levels", "num_other_agents_observed",
}  # fmt: skip


def checked_arguments(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``DEFAULTS`` updated with ``kwargs``; errors name the argument and what is expected."""
    unknown = sorted(set(kwargs) - set(DEFAULTS))
    if unknown:
        hint = difflib.get_close_matches(unknown[0], list(DEFAULTS), n=1)
        raise TypeError(
            f"TagContinuous: unknown argument {unknown[0]!r}"
            + (f" (did you mean {hint[0]!r}?)" if hint else "")
            + "; expected one of "
            + ", ".join(sorted(DEFAULTS))
        )
    cfg = {**DEFAULTS, **kwargs}
    for key in ("observe_own_state", "egocentric_observation"):
        if not isinstance(cfg[key], (bool, np.bool_)):
            raise TypeError(f"TagContinuous: {key} must be True or False, got {cfg[key]!r}.")
    for key, ok, expected in _CHECKS:
        value = cfg[key]
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise TypeError(f"TagContinuous: {key} must be {expected}, got {value!r}.")
        if (key in _INTEGER_KEYS and int(value) != value) or not ok(value):
            raise ValueError(f"TagContinuous: {key} must be {expected}, got {value!r}.")
    seed = cfg["seed"]
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise TypeError(f"TagContinuous: seed must be None or an integer, got {seed!r}.")
    num_agents = int(cfg["num_taggers"]) + int(cfg["num_runners"])
    observed = cfg["num_other_agents_observed"]
    if observed > num_agents:
        raise ValueError(
            f"TagContinuous: num_other_agents_observed must be <= num_agents ({num_agents}), "
            f"got {observed}."
        )
    if not cfg["use_full_observation"] and observed > MAX_OBSERVED:
        raise ValueError(
            f"TagContinuous: num_other_agents_observed must be <= {MAX_OBSERVED} (the nearest "
            f"agents a kernel thread keeps), got {observed}; use use_full_observation=True to "
            "observe every agent."
        )
    return cfg


def search_threads_per_agent(
    num_agents: int, use_full_observation: bool, num_observed: int, most: int | None = None
) -> int:
    """Threads per agent for the kernels' nearest-agent search: the block has this many times
    ``num_agents`` threads. ``most`` (default ``SEARCH_THREADS_PER_AGENT``) halved until the
    block fits 1,024 threads and the partial lists fit the shared staging area; 1 for the full
    observation and for lists longer than the register lists (one thread an agent there)."""
    split = SEARCH_THREADS_PER_AGENT if most is None else int(most)
    if use_full_observation or not 0 < num_observed <= REGISTER_OBSERVED:
        return 1
    while split > 1 and (
        split * num_agents > MAX_THREADS_PER_BLOCK
        or split * num_agents * num_observed > STAGED_NEIGHBORS
    ):
        split //= 2
    return max(split, 1)

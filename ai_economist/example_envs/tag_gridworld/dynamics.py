"""Grid-world Tag's dynamics in numpy, batched over envs: the truth the kernels mirror.

Every function takes arrays with any leading batch dims and agents on the last axis (the
runner last).  ``tag_gridworld_step.cu`` and ``tag_gridworld_numba.py`` compute the same values
in the same float32 order.
"""

from __future__ import annotations

import numpy as np

# (dx, dy) of each action: stay, +x, -x, +y, -y (the original's order).
ACTIONS = np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]], dtype=np.int32)
NUM_ACTIONS = len(ACTIONS)
PARTIAL_OBS_DIM = 6


def move_agents(
    loc_x: np.ndarray, loc_y: np.ndarray, actions: np.ndarray, grid_length: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions after ``actions``, clipped to ``[0, grid_length]``, and who hit a wall.

    Returns ``(x, y, hit)``: int32 positions and a bool array, all shaped like ``actions``.
    """
    move = ACTIONS[actions]
    x = loc_x + move[..., 0]
    y = loc_y + move[..., 1]
    hit = (x < 0) | (x > grid_length) | (y < 0) | (y > grid_length)
    x = np.clip(x, 0, grid_length).astype(np.int32)
    y = np.clip(y, 0, grid_length).astype(np.int32)
    return x, y, hit


def runner_tagged(loc_x: np.ndarray, loc_y: np.ndarray) -> np.ndarray:
    """Per env: does any tagger (all agents but the last) share the runner's cell?"""
    same = (loc_x[..., :-1] == loc_x[..., -1:]) & (loc_y[..., :-1] == loc_y[..., -1:])
    return same.any(axis=-1)


def tag_rewards(
    hit: np.ndarray,
    tagged: np.ndarray,
    wall_hit_penalty: float,
    tag_reward_for_tagger: float,
    tag_penalty_for_runner: float,
    step_cost_for_tagger: float,
) -> np.ndarray:
    """float32 rewards ``(..., num_agents)``: ``-wall_hit_penalty * hit`` plus, for taggers,
    ``tag_reward_for_tagger`` if tagged else ``-step_cost_for_tagger`` and, for the runner,
    ``-tag_penalty_for_runner`` if tagged else ``+step_cost_for_tagger`` (float32 sums in
    this order, as the kernels add them)."""
    f32 = np.float32
    rew = np.where(hit, -f32(wall_hit_penalty), f32(0.0)).astype(f32)
    tagger = np.where(tagged, f32(tag_reward_for_tagger), -f32(step_cost_for_tagger))
    runner = np.where(tagged, -f32(tag_penalty_for_runner), f32(step_cost_for_tagger))
    rew[..., :-1] += tagger[..., None].astype(f32)
    rew[..., -1] += runner.astype(f32)
    return rew


def nearest_tagger(loc_x: np.ndarray, loc_y: np.ndarray) -> np.ndarray:
    """Per env: index of the tagger nearest the runner (squared distance, lowest index on ties)."""
    d2 = (loc_x[..., :-1] - loc_x[..., -1:]) ** 2 + (loc_y[..., :-1] - loc_y[..., -1:]) ** 2
    return np.argmin(d2, axis=-1)


def observations(
    loc_x: np.ndarray,
    loc_y: np.ndarray,
    timestep: np.ndarray,
    grid_length: int,
    episode_length: int,
    use_full_observation: bool,
) -> np.ndarray:
    """float32 observations ``(num_envs, num_agents, obs_dim)`` (layouts in the module doc)."""
    num_envs, n = loc_x.shape
    fx = loc_x.astype(np.float32) / np.float32(grid_length)
    fy = loc_y.astype(np.float32) / np.float32(grid_length)
    time = np.asarray(timestep).astype(np.float32) / np.float32(episode_length)
    is_runner = (np.arange(n) == n - 1).astype(np.float32)
    if use_full_observation:
        obs = np.zeros((num_envs, n, 4 * n + 1), np.float32)
        obs[:, :, :n] = fx[:, None, :]
        obs[:, :, n : 2 * n] = fy[:, None, :]
        obs[:, :, 2 * n : 3 * n] = is_runner
        obs[:, :, 3 * n : 4 * n] = np.eye(n, dtype=np.float32)
        obs[:, :, 4 * n] = time[:, None]
        return obs
    obs = np.zeros((num_envs, n, PARTIAL_OBS_DIM), np.float32)
    obs[..., 0], obs[..., 1] = fx, fy
    obs[:, :-1, 2], obs[:, :-1, 3] = fx[:, -1:], fy[:, -1:]
    near = nearest_tagger(loc_x, loc_y)
    envs = np.arange(num_envs)
    obs[:, -1, 2], obs[:, -1, 3] = fx[envs, near], fy[envs, near]
    obs[..., 4] = is_runner
    obs[..., 5] = time[:, None]
    return obs

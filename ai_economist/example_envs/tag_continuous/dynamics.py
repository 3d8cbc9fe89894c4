"""Continuous Tag's dynamics in numpy, batched over environments: the truth the kernels mirror.

Every function takes arrays with a leading environment axis ``E`` and an agent axis ``N``
(agents ``0 .. num_taggers - 1`` are the taggers, the rest the runners) and computes in
float32 in the same order as ``tag_continuous_step.cu`` and ``tag_continuous_numba.py``, whose
device functions carry the same names.
"""

from __future__ import annotations

import numpy as np

TWO_PI = np.float32(2.0 * np.pi)
"""2 pi in float32 (6.2831855): directions live in ``[0, TWO_PI)``."""
EPSILON = np.float32(1e-10)
"""Added to ``max_speed`` before dividing by it (as in the original)."""
SQRT_TWO = np.float32(np.sqrt(2.0))
NUM_FEATURES = 7
"""Features per observed agent: dx, dy, dspeed, dacceleration, ddirection, type, in game."""
NUM_OWN_FEATURES = 5
"""Own-state features (``observe_own_state``): x, y, speed, cos and sin of the heading."""


def decode_actions(actions: np.ndarray, num_turn_actions: int) -> tuple[np.ndarray, np.ndarray]:
    """``a = accel_idx * num_turn_actions + turn_idx`` -> ``(accel_idx, turn_idx)``."""
    return actions // num_turn_actions, actions % num_turn_actions


def move_agents(
    loc_x: np.ndarray,
    loc_y: np.ndarray,
    speed: np.ndarray,
    direction: np.ndarray,
    acceleration: np.ndarray,
    still_in_the_game: np.ndarray,
    delta_acceleration: np.ndarray,
    delta_turn: np.ndarray,
    max_speeds: np.ndarray,
    grid_length: np.float32,
    edge_hit_penalty: np.float32,
) -> np.ndarray:
    """One movement step, in place; returns the edge-hit penalty of each agent ``(E, N)``.

    ``a += da``; ``d = fmod(d + dturn, 2 pi) * in_game`` (plus 2 pi when negative);
    ``s = min(max_speed_i, max(0, s + a)) * in_game``; ``a = 0`` when ``s <= 0`` or
    ``s >= max_speed_i``; ``(x, y) += s (cos d, sin d)``, clipped to ``[0, grid_length]``;
    an agent that crossed an edge gets ``edge_hit_penalty``.
    """
    in_game = still_in_the_game.astype(np.float32)
    acceleration += delta_acceleration
    turned = np.fmod(direction + delta_turn, TWO_PI) * in_game
    direction[...] = np.where(turned < 0, TWO_PI + turned, turned)
    new_speed = np.minimum(max_speeds, np.maximum(np.float32(0), speed + acceleration)) * in_game
    speed[...] = new_speed
    acceleration[(new_speed <= 0) | (new_speed >= max_speeds)] = 0
    loc_x += new_speed * np.cos(direction)
    loc_y += new_speed * np.sin(direction)
    crossed = (loc_x < 0) | (loc_x > grid_length) | (loc_y < 0) | (loc_y > grid_length)
    np.clip(loc_x, np.float32(0), grid_length, out=loc_x)
    np.clip(loc_y, np.float32(0), grid_length, out=loc_y)
    return np.where(crossed, edge_hit_penalty, np.float32(0)).astype(np.float32)


def squared_distances(loc_x: np.ndarray, loc_y: np.ndarray) -> np.ndarray:
    """``d2[e, i, j] = (x_j - x_i)^2 + (y_j - y_i)^2`` in float32, ``(E, N, N)``."""
    dx = loc_x[:, None, :] - loc_x[:, :, None]
    dy = loc_y[:, None, :] - loc_y[:, :, None]
    return dx * dx + dy * dy


def nearest_neighbors(d2: np.ndarray, still_in_the_game: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` nearest other agents still in the game, ``(E, N, k)``, -1 where fewer remain.

    Ordered by squared distance, ties by the lower agent id.
    """
    num_agents = d2.shape[-1]
    valid = still_in_the_game[:, None, :].astype(bool) & ~np.eye(num_agents, dtype=bool)
    # one unique int64 key per (distance, id): the bits of a float32 >= 0 sort as the float
    bits = np.where(valid, d2, np.float32(np.inf)).astype(np.float32).view(np.int32)
    key = (bits.astype(np.int64) << 32) | np.arange(num_agents, dtype=np.int64)
    if k < num_agents:
        chosen = np.argpartition(key, k, axis=-1)[:, :, :k]
        order = np.take_along_axis(
            chosen, np.argsort(np.take_along_axis(key, chosen, axis=-1), axis=-1), axis=-1
        )
    else:
        order = np.argsort(key, axis=-1)
    return np.where(np.take_along_axis(valid, order, axis=-1), order, -1).astype(np.int32)


def all_other_agents(num_envs: int, num_agents: int) -> np.ndarray:
    """Every other agent in id order (full observation), ``(E, N, N - 1)``."""
    others = np.array([[j for j in range(num_agents) if j != i] for i in range(num_agents)])
    return np.broadcast_to(
        others.reshape(1, num_agents, num_agents - 1).astype(np.int32),
        (num_envs, num_agents, num_agents - 1),
    )


def observe(
    loc_x: np.ndarray,
    loc_y: np.ndarray,
    speed: np.ndarray,
    direction: np.ndarray,
    acceleration: np.ndarray,
    agent_types: np.ndarray,
    still_in_the_game: np.ndarray,
    neighbor_ids: np.ndarray,
    timestep: np.ndarray,
    episode_length: int,
    grid_length: np.float32,
    max_speed: np.float32,
    use_full_observation: bool,
) -> np.ndarray:
    """Each agent's observation ``(E, N, 7 M + 1)`` of the agents in ``neighbor_ids`` ``(E, N, M)``.

    Feature blocks of ``M`` slots each: ``(x_j - x_i) / (sqrt 2 L)``, ``(y_j - y_i) / (sqrt 2 L)``,
    ``(s_j - s_i) / (max_speed + eps)``, ``(a_j - a_i) / (max_speed + eps)``,
    ``(d_j - d_i) / 2 pi``, type of ``j`` (1 = tagger), ``j`` in the game; then ``t / T``.
    Empty slots (id -1) are zeros. An agent out of the game sees zeros, except, with the full
    observation, the other agents' types and in-game flags.
    """
    num_envs, num_agents, slots = neighbor_ids.shape
    present = neighbor_ids >= 0
    ids = np.maximum(neighbor_ids, 0)
    me_in = still_in_the_game.astype(bool)[:, :, None]
    diagonal = grid_length * SQRT_TWO
    speed_scale = max_speed + EPSILON

    def other(values: np.ndarray) -> np.ndarray:
        return np.take_along_axis(
            np.broadcast_to(values[:, None, :], (num_envs, num_agents, num_agents)), ids, axis=-1
        )

    def relative(values: np.ndarray, scale: np.float32) -> np.ndarray:
        diff = (other(values) - values[:, :, None]) / scale
        return np.where(present & me_in, diff, np.float32(0))

    seen = present & (me_in | bool(use_full_observation))
    types = np.broadcast_to(agent_types.astype(np.float32), (num_envs, num_agents))
    blocks = [
        relative(loc_x, diagonal),
        relative(loc_y, diagonal),
        relative(speed, speed_scale),
        relative(acceleration, speed_scale),
        relative(direction, TWO_PI),
        np.where(seen, other(types), np.float32(0)),
        np.where(seen, other(still_in_the_game.astype(np.float32)), np.float32(0)),
    ]
    time = np.asarray(timestep, np.float32) / np.float32(episode_length)
    time = np.where(
        me_in[:, :, 0], np.broadcast_to(time.reshape(-1, 1), (num_envs, num_agents)), np.float32(0)
    )
    return np.concatenate([*blocks, time[:, :, None]], axis=-1).astype(np.float32)


def heading_frame(
    dx: np.ndarray, dy: np.ndarray, direction: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Relative positions ``(E, N, M)`` turned into each agent's heading frame
    (``egocentric_observation``): ``forward = dx cos d + dy sin d``, ``left = dy cos d - dx sin d``
    with ``d`` the observer's heading, each product and sum rounded to float32."""
    c = np.cos(direction).astype(np.float32)[:, :, None]
    s = np.sin(direction).astype(np.float32)[:, :, None]
    forward = (dx * c).astype(np.float32) + (dy * s).astype(np.float32)
    left = (dy * c).astype(np.float32) - (dx * s).astype(np.float32)
    return forward.astype(np.float32), left.astype(np.float32)


def own_state(
    loc_x: np.ndarray,
    loc_y: np.ndarray,
    speed: np.ndarray,
    direction: np.ndarray,
    still_in_the_game: np.ndarray,
    grid_length: np.float32,
    max_speed: np.float32,
) -> np.ndarray:
    """Each agent's own state ``(E, N, 5)``, appended to its observation with ``observe_own_state``.

    ``x / L``, ``y / L``, ``s / (max_speed + eps)``, ``cos d``, ``sin d``; zeros for an agent
    out of the game. The relative features alone do not say where an agent heads, yet its turn
    actions are relative to that heading: without these, a tagger cannot steer towards a runner.
    """
    features = np.stack(
        [
            loc_x / grid_length,
            loc_y / grid_length,
            speed / (max_speed + EPSILON),
            np.cos(direction),
            np.sin(direction),
        ],
        axis=-1,
    ).astype(np.float32)
    return np.where(still_in_the_game.astype(bool)[:, :, None], features, np.float32(0))


def tag_runners(
    d2: np.ndarray, still_in_the_game: np.ndarray, num_taggers: int, tagging_margin: np.float32
) -> np.ndarray:
    """The tagger that tags each runner this step, ``(E, N)`` int32, -1 for none.

    A runner still in the game is tagged by its nearest tagger (lowest id on ties) when their
    distance is strictly below ``tagging_margin``; taggers are never tagged.
    """
    dist = np.sqrt(d2[:, :, :num_taggers])
    nearest = np.argmin(dist, axis=-1)
    closest = np.take_along_axis(dist, nearest[:, :, None], axis=-1)[:, :, 0]
    is_runner = np.arange(d2.shape[-1]) >= num_taggers
    tagged = is_runner & still_in_the_game.astype(bool) & (closest < tagging_margin)
    return np.where(tagged, nearest, -1).astype(np.int32)


def compute_rewards(
    still_in_the_game: np.ndarray,
    edge_penalty: np.ndarray,
    step_rewards: np.ndarray,
    tagged_by: np.ndarray,
    num_taggers: int,
    tag_reward_for_tagger: np.float32,
    tag_penalty_for_runner: np.float32,
) -> np.ndarray:
    """Rewards of one step before the end-of-game bonus, ``(E, N)`` float32.

    Agents in the game (before this step's tags): ``edge penalty + step reward``; a tagged
    runner adds ``tag_penalty_for_runner``; a tagger adds ``count * tag_reward_for_tagger`` for
    the ``count`` runners it tagged.
    """
    rewards = np.where(still_in_the_game.astype(bool), edge_penalty + step_rewards, np.float32(0))
    rewards = np.where(tagged_by >= 0, rewards + tag_penalty_for_runner, rewards)
    counts = (tagged_by[:, :, None] == np.arange(num_taggers)).sum(axis=1).astype(np.float32)
    rewards[:, :num_taggers] = rewards[:, :num_taggers] + counts * tag_reward_for_tagger
    return rewards.astype(np.float32)

"""Ring chase step (Numba): mirrors ``RingChase.reference_step`` and ``ring_chase_step.cu``.

One block per environment, one thread per agent (chasers first, then runners). The kernel
takes the declared ``kernel_arg`` fields in declaration order (scalar constants by value);
sizes come from the arrays' shapes.
"""

from __future__ import annotations

from numba import cuda, float32, int32

CHASER_MOVES = (0, -1, 1, -2, 2)
RUNNER_MOVES = (0, -1, 1)


@cuda.jit(device=True)
def ring_mod(x, n):
    """``x mod n`` in ``[0, n)``."""
    r = x % n  # Python semantics: already non-negative for n > 0
    return r


@cuda.jit(device=True)
def signed_ring_distance(src, dst, n):
    """``(dst - src) mod n``, minus ``n`` above ``n // 2``."""
    d = ring_mod(dst - src, n)
    return d - n if d > n // 2 else d


@cuda.jit(device=True)
def move_of(action, is_chaser):
    """The cells an action moves a chaser or a runner by."""
    return CHASER_MOVES[action] if is_chaser else RUNNER_MOVES[action]


@cuda.jit
def ring_chase_step(
    _timestep_,
    _done_,
    positions,
    observations_chaser,
    observations_runner,
    action_mask_chaser,
    action_mask_runner,
    sampled_actions_chaser,
    sampled_actions_runner,
    rewards_chaser,
    rewards_runner,
    tags_this_episode,
    last_episode_tags,
    completed_episodes,
    ring_size,
    episode_length,
    tag_reward,
    tagged_penalty,
):
    env = cuda.blockIdx.x
    agent = cuda.threadIdx.x
    num_agents = positions.shape[1]
    num_chasers = observations_chaser.shape[1]
    t_next = _timestep_[env] + 1

    # 1. every agent moves
    if agent < num_agents:
        is_chaser = agent < num_chasers
        if is_chaser:
            action = sampled_actions_chaser[env, agent]
        else:
            action = sampled_actions_runner[env, agent - num_chasers]
        positions[env, agent] = ring_mod(
            positions[env, agent] + move_of(action, is_chaser), ring_size
        )
    cuda.syncthreads()

    # 2. rewards and observations from the new positions
    if agent < num_agents:
        is_chaser = agent < num_chasers
        first = num_chasers if is_chaser else 0
        count = num_agents - num_chasers if is_chaser else num_chasers
        me = positions[env, agent]
        best, best_abs, hit = 0, ring_size + 1, False
        for k in range(count):
            d = signed_ring_distance(me, positions[env, first + k], ring_size)
            a = -d if d < 0 else d
            if a < best_abs:
                best_abs, best = a, d
            hit = hit or d == 0
        if is_chaser:
            obs = observations_chaser[env, agent]
            rewards_chaser[env, agent] = tag_reward if hit else float32(0.0)
        else:
            obs = observations_runner[env, agent - num_chasers]
            rewards_runner[env, agent - num_chasers] = -tagged_penalty if hit else float32(0.0)
        ring = float32(ring_size)
        obs[0] = float32(me) / ring
        obs[1] = float32(t_next) / float32(episode_length)
        obs[2] = float32(best) / ring

    # 3. per-env bookkeeping (positions are final since the barrier above)
    if agent == 0:
        tagged = int32(0)
        for r in range(num_chasers, num_agents):
            for c in range(num_chasers):
                if positions[env, c] == positions[env, r]:
                    tagged += 1
                    break
        tags_this_episode[env] += tagged
        _timestep_[env] = t_next
        if t_next >= episode_length:
            _done_[env] = 1
            last_episode_tags[env] = tags_this_episode[env]
            completed_episodes[env] += 1

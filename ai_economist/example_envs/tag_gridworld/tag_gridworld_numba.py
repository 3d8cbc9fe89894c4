"""Numba twin of ``tag_gridworld_step.cu``: the kernel ``CudaTagGridWorldStep``, same parameters.

Launch with ``[num_envs, threads_per_env]``: one block per environment; by default thread ``i``
is agent ``i`` (the last one is the runner); with fewer threads than agents thread ``i`` steps
agents ``i, i + blockDim.x, ...``; extra threads only join the barriers.  Device functions carry the
names of the CUDA C ones; the numpy functions of ``dynamics.py`` are the truth they mirror.

Per thread: O(1) work and shared memory (a tag counter; for the runner's nearest tagger two
32-bit atomic-min passes, the smallest squared distance, then the lowest tagger index at that
distance, as ``np.argmin``), plus ``num_agents`` rows written by the full observation, as in
the original.
Arithmetic is float32 as in CUDA C.  Under ``NUMBA_ENABLE_CUDASIM=1`` the same code runs in
Numba's CUDA simulator on host arrays.
"""

from __future__ import annotations

import numpy as np

from ai_economist.warp_drive.errors import require_numba_cuda

cuda = require_numba_cuda()  # a module global: the simulator swaps it inside kernels

INT_MAX = np.int32(2**31 - 1)


@cuda.jit(device=True)
def axis_step(action, plus, minus):
    """+1 for the action ``plus``, -1 for ``minus``, 0 for any other."""
    if action == plus:
        return 1
    if action == minus:
        return -1
    return 0


@cuda.jit(device=True)
def action_dx(action):
    """x step of an action (stay, +x, -x, +y, -y); other values stay."""
    return axis_step(action, 1, 2)


@cuda.jit(device=True)
def action_dy(action):
    """y step of an action (stay, +x, -x, +y, -y); other values stay."""
    return axis_step(action, 3, 4)


@cuda.jit(device=True)
def clip_to_grid(value, grid_length):
    """``value`` clipped to ``[0, grid_length]``."""
    return min(max(value, 0), grid_length)


@cuda.jit(device=True)
def write_full_observation(obs, env, agent, num_agents, fx, fy, time):
    """Agent ``agent``'s column in every row of the full observation, and its own row's time."""
    n = num_agents
    is_runner = np.float32(1.0) if agent == n - 1 else np.float32(0.0)
    for row in range(n):
        obs[env, row, agent] = fx
        obs[env, row, n + agent] = fy
        obs[env, row, 2 * n + agent] = is_runner
        obs[env, row, 3 * n + agent] = np.float32(1.0) if row == agent else np.float32(0.0)
    obs[env, agent, 4 * n] = time


@cuda.jit(device=True)
def write_partial_observation(obs, env, agent, num_agents, fx, fy, tx, ty, time):
    """Own position, the target's position, own type, time."""
    obs[env, agent, 0] = fx
    obs[env, agent, 1] = fy
    obs[env, agent, 2] = tx
    obs[env, agent, 3] = ty
    obs[env, agent, 4] = np.float32(1.0) if agent == num_agents - 1 else np.float32(0.0)
    obs[env, agent, 5] = time


@cuda.jit
def CudaTagGridWorldStep(  # noqa: N802  (the CUDA C kernel's name)
    loc_x,
    loc_y,
    sampled_actions_shared,
    _done_,
    rewards_shared,
    observations_shared,
    _timestep_,
    episodes_completed,
    last_episode_tagged,
    last_episode_length,
    wall_hit_penalty,
    tag_reward_for_tagger,
    tag_penalty_for_runner,
    step_cost_for_tagger,
    use_full_observation,
    grid_length,
    episode_length,
    num_agents,
):
    env = cuda.blockIdx.x
    first = cuda.threadIdx.x  # this thread steps agents first, first + stride, ...
    stride = cuda.blockDim.x
    runner = num_agents - 1
    partial = use_full_observation == 0  # the same for the whole block
    num_tagged = cuda.shared.array(1, np.int32)
    nearest_d2 = cuda.shared.array(1, np.int32)
    nearest_tagger = cuda.shared.array(1, np.int32)
    if first == 0:
        _timestep_[env] += 1
        num_tagged[0] = 0
        nearest_d2[0] = INT_MAX
        nearest_tagger[0] = INT_MAX
    cuda.syncthreads()

    # Move, clip to the grid; the reward starts with the wall-hit penalty.
    for agent in range(first, num_agents, stride):
        action = sampled_actions_shared[env, agent]
        x = loc_x[env, agent] + action_dx(action)
        y = loc_y[env, agent] + action_dy(action)
        cx = clip_to_grid(x, grid_length)
        cy = clip_to_grid(y, grid_length)
        hit = cx != x or cy != y
        rewards_shared[env, agent] = -wall_hit_penalty if hit else np.float32(0.0)
        loc_x[env, agent] = cx
        loc_y[env, agent] = cy
    cuda.syncthreads()

    # Taggers on the runner's cell; the smallest squared distance to the runner.
    rx = loc_x[env, runner]
    ry = loc_y[env, runner]
    for agent in range(first, runner, stride):
        dx = loc_x[env, agent] - rx
        dy = loc_y[env, agent] - ry
        if dx == 0 and dy == 0:
            cuda.atomic.add(num_tagged, 0, 1)
        if partial:
            cuda.atomic.min(nearest_d2, 0, np.int32(dx * dx + dy * dy))
    cuda.syncthreads()
    if partial:
        # The lowest index among the taggers at that distance.
        for agent in range(first, runner, stride):
            dx = loc_x[env, agent] - rx
            dy = loc_y[env, agent] - ry
            if dx * dx + dy * dy == nearest_d2[0]:
                cuda.atomic.min(nearest_tagger, 0, np.int32(agent))
        cuda.syncthreads()

    # Tag or step rewards, observations.
    tagged = num_tagged[0] > 0
    t = _timestep_[env]
    time = np.float32(np.float32(t) / np.float32(episode_length))
    length = np.float32(grid_length)
    for agent in range(first, num_agents, stride):
        if agent < runner:
            term = tag_reward_for_tagger if tagged else -step_cost_for_tagger
        else:
            term = -tag_penalty_for_runner if tagged else step_cost_for_tagger
        rewards_shared[env, agent] = np.float32(rewards_shared[env, agent] + np.float32(term))
        fx = np.float32(np.float32(loc_x[env, agent]) / length)
        fy = np.float32(np.float32(loc_y[env, agent]) / length)
        if not partial:
            write_full_observation(observations_shared, env, agent, num_agents, fx, fy, time)
        else:
            target = nearest_tagger[0] if agent == runner else runner
            tx = np.float32(np.float32(loc_x[env, target]) / length)
            ty = np.float32(np.float32(loc_y[env, target]) / length)
            write_partial_observation(
                observations_shared, env, agent, num_agents, fx, fy, tx, ty, time
            )

    if first == 0 and (t >= episode_length or tagged):
        _done_[env] = 1
        episodes_completed[env] += 1
        last_episode_tagged[env] = 1 if tagged else 0
        last_episode_length[env] = t

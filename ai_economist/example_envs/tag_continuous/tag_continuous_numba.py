"""Continuous Tag's step as a Numba ``@cuda.jit`` kernel: the twin of ``tag_continuous_step.cu``.

Same kernel name (``TagContinuousStep``), same parameters (the ``kernel_arg`` fields of
``declaration.py`` in declaration order) and device functions named after the numpy functions
of ``dynamics.py``: the per-agent ones (movement, tagging, rewards) in
``tag_continuous_numba_agents.py``, the observation ones (nearest-agent search, observation
rows) in ``tag_continuous_numba_observations.py``; both are re-exported here. Launch with
``[num_envs, num_agents]``: one block per environment, one thread per agent. Arithmetic stays
in float32, so that Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) matches the numpy
reference up to the last bit of the trigonometric functions.
"""

from __future__ import annotations

import inspect

from numba import float32, int16, int32

from ai_economist.example_envs.tag_continuous.tag_continuous_numba_agents import (
    EPSILON,
    INFINITY,
    MAX_AGENTS,
    NUM_FEATURES,
    NUM_OWN_FEATURES,
    REGISTER_OBSERVED,
    SQRT_TWO,
    STAGED_NEIGHBORS,
    TWO_PI,
    ZERO,
    add_rn,
    compute_rewards,
    move_agents,
    mul_rn,
    own_state,
    squared_distance,
    tag_runners,
)
from ai_economist.example_envs.tag_continuous.tag_continuous_numba_observations import (
    heading_frame,
    nearest_list,
    nearest_list_4,
    nearest_list_8,
    nearest_list_10,
    nearest_list_r,
    nearest_lists_4,
    nearest_lists_8,
    nearest_lists_10,
    nearest_lists_r,
    nearest_neighbors,
    observe,
    observe_slot,
    observed_feature,
    staged_nearest_lists,
    write_observations,
)
from ai_economist.warp_drive.errors import cudasim_enabled, require_numba_cuda

__all__ = [
    "EPSILON",
    "INFINITY",
    "MAX_AGENTS",
    "NUM_FEATURES",
    "NUM_OWN_FEATURES",
    "REGISTER_OBSERVED",
    "SQRT_TWO",
    "STAGED_NEIGHBORS",
    "TWO_PI",
    "ZERO",
    "TagContinuousStep",
    "add_rn",
    "compute_rewards",
    "heading_frame",
    "move_agents",
    "mul_rn",
    "nearest_list",
    "nearest_list_4",
    "nearest_list_8",
    "nearest_list_10",
    "nearest_list_r",
    "nearest_lists_4",
    "nearest_lists_8",
    "nearest_lists_10",
    "nearest_lists_r",
    "nearest_neighbors",
    "observe",
    "observe_slot",
    "observed_feature",
    "own_state",
    "squared_distance",
    "staged_nearest_lists",
    "tag_runners",
    "write_observations",
]

cuda = require_numba_cuda()  # a module global: the simulator swaps it inside kernels


def _step_kernel_jit():
    """``cuda.jit`` with launch bounds of ``MAX_AGENTS`` threads where Numba has them (as CUDA
    C's ``__launch_bounds__``: at most 64 registers, so that 1,024-agent blocks launch)."""
    if not cudasim_enabled() and "launch_bounds" in inspect.signature(cuda.jit).parameters:
        return cuda.jit(launch_bounds=MAX_AGENTS)
    return cuda.jit


@_step_kernel_jit()
def TagContinuousStep(
    agent_types, skill_levels, step_rewards, acceleration_actions, turn_actions, num_agents,
    num_taggers, episode_length, num_turn_actions, num_other_agents_observed,
    use_full_observation, observe_own_state, egocentric_observation,
    runner_exits_game_after_tagged, grid_length, max_speed,
    edge_hit_penalty, tagging_margin, tag_reward_for_tagger, tag_penalty_for_runner,
    end_of_game_reward_for_runner, loc_x, loc_y, speed, direction, acceleration,
    still_in_the_game, tagged_by, runners_left, episode_tags, last_episode_tags,
    completed_episodes, observations_tagger, sampled_actions_tagger, rewards_tagger,
    observations_runner, sampled_actions_runner, rewards_runner, _timestep_, _done_,
):  # fmt: skip
    """One step of every environment (block = environment, thread = agent)."""
    moved = cuda.shared.array((5, MAX_AGENTS), float32)  # x, y, speed, acceleration, direction
    xs, ys, speeds, accelerations, directions = moved[0], moved[1], moved[2], moved[3], moved[4]
    types = cuda.shared.array(MAX_AGENTS, int32)
    ins = cuda.shared.array(MAX_AGENTS, int32)
    tag_counts = cuda.shared.array(MAX_AGENTS, int32)  # runners each tagger tagged
    tags = cuda.shared.array(1, int32)  # runners tagged this step
    neighbors = cuda.shared.array(STAGED_NEIGHBORS, int16)  # [agent][slot]: nearest lists
    env = cuda.blockIdx.x
    me = cuda.threadIdx.x
    active = me < num_agents
    is_tagger = me < num_taggers
    row = me if is_tagger else me - num_taggers
    x, y, sp = loc_x[env], loc_y[env], speed[env]
    dr, acc = direction[env], acceleration[env]
    t = _timestep_[env] + 1
    slots = num_other_agents_observed
    staged = use_full_observation == 0 and slots > 0 and num_agents * slots <= STAGED_NEIGHBORS
    # threads of one agent's nearest-agent search (KernelSpec.threads_per_env: split agents)
    threads_per_agent = cuda.blockDim.x // num_agents
    split = 1
    if (
        threads_per_agent > 1
        and slots <= REGISTER_OBSERVED
        and threads_per_agent * num_agents * slots <= STAGED_NEIGHBORS
    ):
        split = threads_per_agent
    time_fraction = float32(float32(t) / float32(episode_length))
    diagonal = mul_rn(grid_length, SQRT_TWO)
    speed_scale = float32(max_speed + EPSILON)
    in_before = 0
    edge_penalty = ZERO
    if me == 0:
        tags[0] = 0
    if active:
        in_before = still_in_the_game[env, me]
        action = sampled_actions_tagger[env, row] if is_tagger else sampled_actions_runner[env, row]
        max_speed_i = mul_rn(max_speed, skill_levels[me])
        edge_penalty = move_agents(
            x, y, sp, dr, acc, me, in_before, acceleration_actions[action // num_turn_actions],
            turn_actions[action % num_turn_actions], max_speed_i, grid_length, edge_hit_penalty,
        )  # fmt: skip
        xs[me] = x[me]
        ys[me] = y[me]
        speeds[me] = sp[me]
        directions[me] = dr[me]
        accelerations[me] = acc[me]
        if observe_own_state != 0:
            obs_row = observations_tagger[env, row] if is_tagger else observations_runner[env, row]
            own_state(
                obs_row[NUM_FEATURES * slots + 1 :], xs[me], ys[me], speeds[me], directions[me],
                in_before != 0, grid_length, speed_scale,
            )  # fmt: skip
        types[me] = agent_types[me]
        ins[me] = in_before
        tag_counts[me] = 0
    cuda.syncthreads()
    tagger = -1
    if active:
        obs = observations_tagger[env, row] if is_tagger else observations_runner[env, row]
        if staged:
            obs[NUM_FEATURES * slots] = time_fraction if in_before != 0 else ZERO
        else:
            observe(
                obs, me, num_agents, slots, use_full_observation != 0, time_fraction, xs, ys,
                speeds, directions, accelerations, types, ins, diagonal, speed_scale,
                egocentric_observation != 0,
            )  # fmt: skip
        tagger = tag_runners(xs, ys, ins, me, num_taggers, tagging_margin)
        tagged_by[env, me] = tagger
        if tagger >= 0:
            cuda.atomic.add(tag_counts, tagger, 1)
            cuda.atomic.add(tags, 0, 1)
    if staged:
        staged_nearest_lists(xs, ys, ins, num_agents, slots, split, neighbors)
    cuda.syncthreads()
    if active:
        reward = compute_rewards(
            in_before, edge_penalty, step_rewards[me], is_tagger, tagger, tag_counts[me],
            tag_reward_for_tagger, tag_penalty_for_runner,
        )  # fmt: skip
        still_in = in_before != 0 and not (tagger >= 0 and runner_exits_game_after_tagged != 0)
        if in_before != 0 and not still_in:
            still_in_the_game[env, me] = 0
        if not is_tagger and t == episode_length and still_in:
            reward = float32(reward + end_of_game_reward_for_runner)
        if is_tagger:
            rewards_tagger[env, row] = reward
        else:
            rewards_runner[env, row] = reward
    if staged:
        write_observations(
            observations_tagger[env], observations_runner[env], num_agents, num_taggers, slots,
            xs, ys, speeds, directions, accelerations, types, ins, neighbors, diagonal,
            speed_scale, egocentric_observation != 0,
        )  # fmt: skip
    if me == 0:
        episode_tags[env] += tags[0]
        if runner_exits_game_after_tagged != 0:
            runners_left[env] -= tags[0]
        if t == episode_length or runners_left[env] == 0:
            last_episode_tags[env] = episode_tags[env]
            completed_episodes[env] += 1
            _done_[env] = 1
        _timestep_[env] = t

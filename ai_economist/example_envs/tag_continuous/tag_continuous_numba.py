"""Continuous Tag's step as a Numba ``@cuda.jit`` kernel: the twin of ``tag_continuous_step.cu``.

Same kernel name (``TagContinuousStep``), same parameters (the ``kernel_arg`` fields of
``declaration.py`` in declaration order) and device functions named after the numpy functions
of ``dynamics.py``. Launch with ``[num_envs, num_agents]``: one block per environment, one
thread per agent. Arithmetic stays in float32 (explicit ``float32`` casts), so that Numba's CUDA
simulator (``NUMBA_ENABLE_CUDASIM=1``) matches the numpy reference up to the last bit of the
trigonometric functions.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
from numba import float32, int32

from ai_economist.example_envs.tag_continuous.arguments import MAX_OBSERVED
from ai_economist.warp_drive.errors import cudasim_enabled, require_numba_cuda

cuda = require_numba_cuda()  # a module global: the simulator swaps it inside kernels

if cudasim_enabled():  # the simulator runs Python: float32 ops round each result already

    def mul_rn(a, b):
        """``a * b`` rounded to float32 (never fused into a multiply-add)."""
        return float32(a * b)

    def add_rn(a, b):
        """``a + b`` rounded to float32 (never fused into a multiply-add)."""
        return float32(a + b)

else:  # on the GPU NVVM fuses a*b + c into one FMA unless told not to: CUDA C's __fmul_rn/__fadd_rn
    from numba.cuda import libdevice

    mul_rn, add_rn = libdevice.fmul_rn, libdevice.fadd_rn

TWO_PI = np.float32(2.0 * np.pi)
EPSILON = np.float32(1e-10)
SQRT_TWO = np.float32(np.sqrt(2.0))
ZERO = np.float32(0.0)
NUM_FEATURES = 7
INFINITY = np.float32(np.inf)
MAX_AGENTS = 1024
"""Agents per block (shared arrays), as ``TAG_MAX_AGENTS`` in CUDA C."""
REGISTER_OBSERVED = 12
"""Nearest agents kept in a fixed-size list (``TAG_REGISTER_OBSERVED`` in CUDA C)."""


@cuda.jit(device=True)
def squared_distance(xs, ys, a, b):
    """``(x_b - x_a)^2 + (y_b - y_a)^2`` in float32."""
    dx = float32(xs[b] - xs[a])
    dy = float32(ys[b] - ys[a])
    return add_rn(mul_rn(dx, dx), mul_rn(dy, dy))


@cuda.jit(device=True)
def move_agents(
    loc_x, loc_y, speed, direction, acceleration, me, in_game, delta_acceleration, delta_turn,
    max_speed_i, grid_length, edge_hit_penalty,
):  # fmt: skip
    """One agent's movement (row ``me`` of this env's arrays); returns its edge-hit penalty."""
    inside = float32(in_game)
    acceleration[me] = float32(acceleration[me] + delta_acceleration)
    turned = mul_rn(float32(math.fmod(float32(direction[me] + delta_turn), TWO_PI)), inside)
    direction[me] = add_rn(TWO_PI, turned) if turned < ZERO else turned
    s = mul_rn(min(max_speed_i, max(ZERO, float32(speed[me] + acceleration[me]))), inside)
    speed[me] = s
    if s <= ZERO or s >= max_speed_i:
        acceleration[me] = ZERO
    x = add_rn(loc_x[me], mul_rn(s, float32(math.cos(direction[me]))))
    y = add_rn(loc_y[me], mul_rn(s, float32(math.sin(direction[me]))))
    crossed = x < ZERO or x > grid_length or y < ZERO or y > grid_length
    loc_x[me] = min(max(x, ZERO), grid_length)
    loc_y[me] = min(max(y, ZERO), grid_length)
    return edge_hit_penalty if crossed else ZERO


@cuda.jit(device=True)
def nearest_neighbors(xs, ys, ins, me, num_agents, k, ids, d2s):
    """The ``k`` nearest other agents in the game into ``ids`` (by squared distance, then id);
    returns how many were found. The local-memory path for ``k > REGISTER_OBSERVED``."""
    found = 0
    if k <= 0:
        return 0
    for j in range(num_agents):
        if j == me or ins[j] == 0:
            continue
        d2 = squared_distance(xs, ys, me, j)
        if found == k and not d2 < d2s[k - 1]:
            continue
        pos = found if found < k else k - 1
        while pos > 0 and d2 < d2s[pos - 1]:
            d2s[pos] = d2s[pos - 1]
            ids[pos] = ids[pos - 1]
            pos -= 1
        d2s[pos] = d2
        ids[pos] = j
        if found < k:
            found += 1
    return found


@cuda.jit(device=True)
def observe_slot(
    obs, slot, slots, me, j, me_in, seen, xs, ys, speed, direction, acceleration, types, ins,
    diagonal, speed_scale,
):  # fmt: skip
    """One observed agent's 7 features in slot ``slot`` of ``obs``."""
    rel = me_in and j >= 0
    if rel:
        obs[0 * slots + slot] = float32(xs[j] - xs[me]) / diagonal
        obs[1 * slots + slot] = float32(ys[j] - ys[me]) / diagonal
        obs[2 * slots + slot] = float32(speed[j] - speed[me]) / speed_scale
        obs[3 * slots + slot] = float32(acceleration[j] - acceleration[me]) / speed_scale
        obs[4 * slots + slot] = float32(direction[j] - direction[me]) / TWO_PI
    else:
        for f in range(5):
            obs[f * slots + slot] = ZERO
    obs[5 * slots + slot] = float32(types[j]) if seen else ZERO
    obs[6 * slots + slot] = float32(ins[j]) if seen else ZERO


def _make_observe_nearest(size: int):
    """``observe_nearest`` for lists of ``size`` entries (CUDA C's ``observe_nearest<K>``): the
    nearest-``slots`` observation (``slots <= size``) with a fixed-size list that NVVM can
    unroll into registers; candidates are inserted branch-free (``insert_nearest``)."""

    @cuda.jit(device=True)
    def insert_nearest(d, ids, d2, j):
        # slot s takes slot s-1's entry if the candidate precedes it, else the candidate if it
        # precedes slot s's own entry (ties keep the earlier, lower id first)
        for s in range(size - 1, 0, -1):
            shift = d2 < d[s - 1]
            take = d2 < d[s]
            d[s] = d[s - 1] if shift else (d2 if take else d[s])
            ids[s] = ids[s - 1] if shift else (j if take else ids[s])
        take = d2 < d[0]
        d[0] = d2 if take else d[0]
        ids[0] = j if take else ids[0]

    @cuda.jit(device=True)
    def observe_nearest(
        obs, me, num_agents, slots, me_in, xs, ys, speed, direction, acceleration, types, ins,
        diagonal, speed_scale,
    ):  # fmt: skip
        d = cuda.local.array(size, float32)
        ids = cuda.local.array(size, int32)
        for s in range(size):
            d[s] = INFINITY
            ids[s] = -1
        for j in range(num_agents):
            valid = j != me and ins[j] != 0
            d2 = squared_distance(xs, ys, me, j) if valid else INFINITY
            if d2 < d[size - 1]:  # else nothing changes (a warp skips when no thread inserts)
                insert_nearest(d, ids, d2, j)
        for s in range(size):
            if s < slots:
                j = ids[s] if me_in else -1
                observe_slot(
                    obs, s, slots, me, j, me_in, j >= 0, xs, ys, speed, direction,
                    acceleration, types, ins, diagonal, speed_scale,
                )  # fmt: skip

    return observe_nearest


observe_nearest_4 = _make_observe_nearest(4)
observe_nearest_8 = _make_observe_nearest(8)
observe_nearest_10 = _make_observe_nearest(10)
observe_nearest_r = _make_observe_nearest(REGISTER_OBSERVED)


@cuda.jit(device=True)
def observe(
    obs, me, num_agents, slots, full, time_fraction, xs, ys, speed, direction, acceleration,
    types, ins, grid_length, max_speed,
):  # fmt: skip
    """Agent ``me``'s observation (see ``dynamics.observe``) from the block's shared arrays."""
    me_in = ins[me] != 0
    diagonal = mul_rn(grid_length, SQRT_TWO)
    speed_scale = float32(max_speed + EPSILON)
    if full:
        for j in range(num_agents):
            if j != me:
                slot = j if j < me else j - 1
                observe_slot(
                    obs, slot, slots, me, j, me_in, True, xs, ys, speed, direction,
                    acceleration, types, ins, diagonal, speed_scale,
                )  # fmt: skip
    elif slots <= 4:
        observe_nearest_4(
            obs, me, num_agents, slots, me_in, xs, ys, speed, direction, acceleration, types,
            ins, diagonal, speed_scale,
        )  # fmt: skip
    elif slots <= 8:
        observe_nearest_8(
            obs, me, num_agents, slots, me_in, xs, ys, speed, direction, acceleration, types,
            ins, diagonal, speed_scale,
        )  # fmt: skip
    elif slots <= 10:
        observe_nearest_10(
            obs, me, num_agents, slots, me_in, xs, ys, speed, direction, acceleration, types,
            ins, diagonal, speed_scale,
        )  # fmt: skip
    elif slots <= REGISTER_OBSERVED:
        observe_nearest_r(
            obs, me, num_agents, slots, me_in, xs, ys, speed, direction, acceleration, types,
            ins, diagonal, speed_scale,
        )  # fmt: skip
    else:
        ids = cuda.local.array(MAX_OBSERVED, int32)
        d2s = cuda.local.array(MAX_OBSERVED, float32)
        found = 0
        if me_in:
            found = nearest_neighbors(xs, ys, ins, me, num_agents, slots, ids, d2s)
        for s in range(slots):
            j = ids[s] if s < found else -1
            observe_slot(
                obs, s, slots, me, j, me_in, j >= 0, xs, ys, speed, direction, acceleration,
                types, ins, diagonal, speed_scale,
            )  # fmt: skip
    obs[NUM_FEATURES * slots] = time_fraction if me_in else ZERO


@cuda.jit(device=True)
def tag_runners(xs, ys, ins, me, num_taggers, tagging_margin):
    """The tagger that tags runner ``me`` this step, or -1 (see ``dynamics.tag_runners``)."""
    if me < num_taggers or ins[me] == 0:
        return -1
    nearest = 0
    closest = float32(math.sqrt(squared_distance(xs, ys, me, 0)))
    for k in range(1, num_taggers):
        dist = float32(math.sqrt(squared_distance(xs, ys, me, k)))
        if dist < closest:
            closest = dist
            nearest = k
    return nearest if closest < tagging_margin else -1


@cuda.jit(device=True)
def compute_rewards(
    in_game, edge_penalty, step_reward, is_tagger, tagger, tag_count, tag_reward_for_tagger,
    tag_penalty_for_runner,
):  # fmt: skip
    """Agent ``me``'s reward before the end-of-game bonus (see ``dynamics.compute_rewards``):
    a runner passes its tagger (or -1), a tagger the number of runners it tagged."""
    reward = float32(edge_penalty + step_reward) if in_game != 0 else ZERO
    if not is_tagger:
        if tagger >= 0:
            return float32(reward + tag_penalty_for_runner)
        return reward
    return add_rn(reward, mul_rn(float32(tag_count), tag_reward_for_tagger))


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
    use_full_observation, runner_exits_game_after_tagged, grid_length, max_speed,
    edge_hit_penalty, tagging_margin, tag_reward_for_tagger, tag_penalty_for_runner,
    end_of_game_reward_for_runner, loc_x, loc_y, speed, direction, acceleration,
    still_in_the_game, tagged_by, runners_left, episode_tags, last_episode_tags,
    completed_episodes, observations_tagger, sampled_actions_tagger, rewards_tagger,
    observations_runner, sampled_actions_runner, rewards_runner, _timestep_, _done_,
):  # fmt: skip
    """One step of every environment (block = environment, thread = agent)."""
    xs = cuda.shared.array(MAX_AGENTS, float32)
    ys = cuda.shared.array(MAX_AGENTS, float32)
    speeds = cuda.shared.array(MAX_AGENTS, float32)
    directions = cuda.shared.array(MAX_AGENTS, float32)
    accelerations = cuda.shared.array(MAX_AGENTS, float32)
    types = cuda.shared.array(MAX_AGENTS, int32)
    ins = cuda.shared.array(MAX_AGENTS, int32)
    tag_counts = cuda.shared.array(MAX_AGENTS, int32)  # runners each tagger tagged
    tags = cuda.shared.array(1, int32)  # runners tagged this step
    env = cuda.blockIdx.x
    me = cuda.threadIdx.x
    active = me < num_agents
    is_tagger = me < num_taggers
    row = me if is_tagger else me - num_taggers
    x, y, sp = loc_x[env], loc_y[env], speed[env]
    dr, acc = direction[env], acceleration[env]
    t = _timestep_[env] + 1
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
        types[me] = agent_types[me]
        ins[me] = in_before
        tag_counts[me] = 0
    cuda.syncthreads()
    tagger = -1
    if active:
        obs = observations_tagger[env, row] if is_tagger else observations_runner[env, row]
        time_fraction = float32(float32(t) / float32(episode_length))
        observe(
            obs, me, num_agents, num_other_agents_observed, use_full_observation != 0,
            time_fraction, xs, ys, speeds, directions, accelerations, types, ins, grid_length,
            max_speed,
        )  # fmt: skip
        tagger = tag_runners(xs, ys, ins, me, num_taggers, tagging_margin)
        tagged_by[env, me] = tagger
        if tagger >= 0:
            cuda.atomic.add(tag_counts, tagger, 1)
            cuda.atomic.add(tags, 0, 1)
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
    if me == 0:
        episode_tags[env] += tags[0]
        if runner_exits_game_after_tagged != 0:
            runners_left[env] -= tags[0]
        if t == episode_length or runners_left[env] == 0:
            last_episode_tags[env] = episode_tags[env]
            completed_episodes[env] += 1
            _done_[env] = 1
        _timestep_[env] = t

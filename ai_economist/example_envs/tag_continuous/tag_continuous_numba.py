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
from numba import float32, int16, int32

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
NUM_OWN_FEATURES = 5
INFINITY = np.float32(np.inf)
MAX_AGENTS = 1024
"""Agents per block (shared arrays), as ``TAG_MAX_AGENTS`` in CUDA C."""
REGISTER_OBSERVED = 12
"""Nearest agents kept in a fixed-size list (``TAG_REGISTER_OBSERVED`` in CUDA C)."""
STAGED_NEIGHBORS = 7168
"""Nearest-agent ids staged in shared memory (``TAG_STAGED_NEIGHBORS`` in CUDA C)."""


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
def observed_feature(
    f, me, j, me_in, seen, xs, ys, speed, direction, acceleration, types, ins, diagonal,
    speed_scale,
):  # fmt: skip
    """Feature ``f`` (0..6) of agent ``j`` as agent ``me`` observes it; ``j = -1``: empty."""
    rel = me_in and j >= 0
    if f < 5:
        if not rel:
            return ZERO
        if f == 0:
            return float32(xs[j] - xs[me]) / diagonal
        if f == 1:
            return float32(ys[j] - ys[me]) / diagonal
        if f == 2:
            return float32(speed[j] - speed[me]) / speed_scale
        if f == 3:
            return float32(acceleration[j] - acceleration[me]) / speed_scale
        return float32(direction[j] - direction[me]) / TWO_PI
    if not seen:
        return ZERO
    return float32(types[j]) if f == 5 else float32(ins[j])


@cuda.jit(device=True)
def heading_frame(dx, dy, c, s):
    """Relative position ``(dx, dy)`` turned into the observer's heading frame, ``(c, s)`` the
    cosine and sine of its heading (see ``dynamics.heading_frame``): ``(forward, left)``."""
    forward = add_rn(mul_rn(dx, c), mul_rn(dy, s))
    left = float32(mul_rn(dy, c) - mul_rn(dx, s))
    return forward, left


@cuda.jit(device=True)
def observe_slot(
    obs, slot, slots, me, j, me_in, seen, xs, ys, speed, direction, acceleration, types, ins,
    diagonal, speed_scale, egocentric, c, s,
):  # fmt: skip
    """One observed agent's 7 features in slot ``slot`` of ``obs``; with ``egocentric``, the
    position in the heading frame given by ``(c, s)``."""
    dx = observed_feature(
        0, me, j, me_in, seen, xs, ys, speed, direction, acceleration, types, ins, diagonal,
        speed_scale,
    )  # fmt: skip
    dy = observed_feature(
        1, me, j, me_in, seen, xs, ys, speed, direction, acceleration, types, ins, diagonal,
        speed_scale,
    )  # fmt: skip
    if egocentric:
        dx, dy = heading_frame(dx, dy, c, s)
    obs[slot] = dx
    obs[slots + slot] = dy
    for f in range(2, NUM_FEATURES):
        obs[f * slots + slot] = observed_feature(
            f, me, j, me_in, seen, xs, ys, speed, direction, acceleration, types, ins, diagonal,
            speed_scale,
        )  # fmt: skip


def _make_nearest_list(size: int):
    """``nearest_list_in_registers`` for lists of ``size`` entries (CUDA C's template of the
    same name): the first ``slots <= size`` ids of a fixed-size list that NVVM can unroll into
    registers; candidates are inserted branch-free (``insert_nearest``)."""

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
    def nearest_neighbors_in_registers(xs, ys, ins, me, first, last, d, ids):
        # the nearest among the candidates first .. last - 1 (all of them: nearest_neighbors)
        for s in range(size):
            d[s] = INFINITY
            ids[s] = -1
        for j in range(first, last):
            valid = j != me and ins[j] != 0
            d2 = squared_distance(xs, ys, me, j) if valid else INFINITY
            if d2 < d[size - 1]:  # else nothing changes (a warp skips when no thread inserts)
                insert_nearest(d, ids, d2, j)

    @cuda.jit(device=True)
    def nearest_list_in_registers(xs, ys, ins, me, num_agents, slots, me_in, out):
        d = cuda.local.array(size, float32)
        ids = cuda.local.array(size, int32)
        nearest_neighbors_in_registers(xs, ys, ins, me, 0, num_agents, d, ids)
        for s in range(size):
            if s < slots:
                out[s] = ids[s] if me_in else -1

    @cuda.jit(device=True)
    def nearest_lists(xs, ys, ins, num_agents, slots, split, neighbors):
        # CUDA C's nearest_lists<size>: `split` threads an agent scan contiguous chunks of the
        # candidates, then merge pairwise through shared memory (lists of higher ids into
        # lists of lower ids: ties stay in id order); (agent, r) stages its list at
        # neighbors[(r * num_agents + agent) * slots], r = 0 being the final place
        agent = cuda.threadIdx.x // split
        r = cuda.threadIdx.x % split
        in_game = agent < num_agents and ins[agent] != 0
        chunk = (num_agents + split - 1) // split
        d = cuda.local.array(size, float32)
        ids = cuda.local.array(size, int32)
        first = min(r * chunk, num_agents) if in_game else 0
        last = min((r + 1) * chunk, num_agents) if in_game else 0
        nearest_neighbors_in_registers(xs, ys, ins, agent, first, last, d, ids)
        kept = min(slots, size)
        width = 1
        while width < split:
            if in_game and r % (2 * width) == width:
                base = (r * num_agents + agent) * slots
                for s in range(kept):
                    neighbors[base + s] = ids[s]
            cuda.syncthreads()
            if in_game and r % (2 * width) == 0 and r + width < split:
                base = ((r + width) * num_agents + agent) * slots
                for s in range(kept):
                    j = neighbors[base + s]
                    if j < 0:
                        break
                    d2 = squared_distance(xs, ys, agent, j)
                    if d2 < d[size - 1]:
                        insert_nearest(d, ids, d2, j)
            width *= 2
        if agent < num_agents and r == 0:
            for s in range(size):
                if s < slots:
                    neighbors[agent * slots + s] = ids[s] if in_game else -1

    return nearest_list_in_registers, nearest_lists


nearest_list_4, nearest_lists_4 = _make_nearest_list(4)
nearest_list_8, nearest_lists_8 = _make_nearest_list(8)
nearest_list_10, nearest_lists_10 = _make_nearest_list(10)
nearest_list_r, nearest_lists_r = _make_nearest_list(REGISTER_OBSERVED)


@cuda.jit(device=True)
def nearest_list(xs, ys, ins, me, num_agents, slots, me_in, ids):
    """Agent ``me``'s ``slots`` nearest agents into ``ids[:slots]``, -1 past the last one found
    and everywhere when ``me`` is out of the game (a register list for ``slots <= 12``)."""
    if slots <= 4:
        nearest_list_4(xs, ys, ins, me, num_agents, slots, me_in, ids)
    elif slots <= 8:
        nearest_list_8(xs, ys, ins, me, num_agents, slots, me_in, ids)
    elif slots <= 10:
        nearest_list_10(xs, ys, ins, me, num_agents, slots, me_in, ids)
    elif slots <= REGISTER_OBSERVED:
        nearest_list_r(xs, ys, ins, me, num_agents, slots, me_in, ids)
    else:
        d2s = cuda.local.array(MAX_OBSERVED, float32)
        found = 0
        if me_in:
            found = nearest_neighbors(xs, ys, ins, me, num_agents, slots, ids, d2s)
        for s in range(found, slots):
            ids[s] = -1


@cuda.jit(device=True)
def staged_nearest_lists(xs, ys, ins, num_agents, slots, split, neighbors):
    """``nearest_lists`` for any ``slots`` (register lists up to ``REGISTER_OBSERVED``; longer
    lists: one thread an agent with the local-memory list). Every thread of the block calls it."""
    if slots <= 4:
        nearest_lists_4(xs, ys, ins, num_agents, slots, split, neighbors)
    elif slots <= 8:
        nearest_lists_8(xs, ys, ins, num_agents, slots, split, neighbors)
    elif slots <= 10:
        nearest_lists_10(xs, ys, ins, num_agents, slots, split, neighbors)
    elif slots <= REGISTER_OBSERVED:
        nearest_lists_r(xs, ys, ins, num_agents, slots, split, neighbors)
    elif cuda.threadIdx.x < num_agents:
        me = cuda.threadIdx.x
        own_list = neighbors[me * slots : me * slots + slots]
        nearest_list(xs, ys, ins, me, num_agents, slots, ins[me] != 0, own_list)


@cuda.jit(device=True)
def observe(
    obs, me, num_agents, slots, full, time_fraction, xs, ys, speed, direction, acceleration,
    types, ins, diagonal, speed_scale, egocentric,
):  # fmt: skip
    """Agent ``me``'s observation row (see ``dynamics.observe``), written by its own thread:
    the path for the full observation and for lists too large to stage."""
    me_in = ins[me] != 0
    c = float32(math.cos(direction[me])) if egocentric else float32(1.0)
    sn = float32(math.sin(direction[me])) if egocentric else ZERO
    if full:
        for j in range(num_agents):
            if j != me:
                slot = j if j < me else j - 1
                observe_slot(
                    obs, slot, slots, me, j, me_in, True, xs, ys, speed, direction,
                    acceleration, types, ins, diagonal, speed_scale, egocentric, c, sn,
                )  # fmt: skip
    else:
        ids = cuda.local.array(MAX_OBSERVED, int32)
        nearest_list(xs, ys, ins, me, num_agents, slots, me_in, ids)
        for s in range(slots):
            observe_slot(
                obs, s, slots, me, ids[s], me_in, ids[s] >= 0, xs, ys, speed, direction,
                acceleration, types, ins, diagonal, speed_scale, egocentric, c, sn,
            )  # fmt: skip
    obs[NUM_FEATURES * slots] = time_fraction if me_in else ZERO


@cuda.jit(device=True)
def write_observations(
    obs_taggers, obs_runners, num_agents, num_taggers, slots, xs, ys, speed, direction,
    acceleration, types, ins, neighbors, diagonal, speed_scale, egocentric,
):  # fmt: skip
    """The neighbour features of every observation row of this environment
    (``dynamics.observe``), written by the whole block after the last barrier: one (agent,
    slot) pair per thread and iteration, its observed agent from the staged lists
    ``neighbors[agent * slots + slot]``. The time and the own state are written by each
    agent's own thread."""
    pairs = num_agents * slots
    step_agents = cuda.blockDim.x // slots
    step_slots = cuda.blockDim.x % slots
    agent = cuda.threadIdx.x // slots
    slot = cuda.threadIdx.x % slots
    for p in range(cuda.threadIdx.x, pairs, cuda.blockDim.x):
        j = neighbors[p]
        present = j >= 0
        k = j if present else agent  # a valid index for the loads
        rel = present and ins[agent] != 0
        out = obs_taggers[agent] if agent < num_taggers else obs_runners[agent - num_taggers]
        dx = float32(xs[k] - xs[agent]) / diagonal
        dy = float32(ys[k] - ys[agent]) / diagonal
        if egocentric:
            dx, dy = heading_frame(
                dx, dy, float32(math.cos(direction[agent])), float32(math.sin(direction[agent]))
            )
        ds = float32(speed[k] - speed[agent]) / speed_scale
        da = float32(acceleration[k] - acceleration[agent]) / speed_scale
        dd = float32(direction[k] - direction[agent]) / TWO_PI
        out[slot] = dx if rel else ZERO
        out[slots + slot] = dy if rel else ZERO
        out[2 * slots + slot] = ds if rel else ZERO
        out[3 * slots + slot] = da if rel else ZERO
        out[4 * slots + slot] = dd if rel else ZERO
        out[5 * slots + slot] = float32(types[k]) if present else ZERO
        out[6 * slots + slot] = float32(ins[k]) if present else ZERO
        agent += step_agents
        slot += step_slots
        if slot >= slots:
            slot -= slots
            agent += 1


@cuda.jit(device=True)
def own_state(out, x, y, s, d, in_game, grid_length, speed_scale):
    """Agent's own state (see ``dynamics.own_state``) into ``out[:5]``: position over the grid
    length, speed over its scale, cosine and sine of the heading; zeros out of the game."""
    out[0] = float32(x / grid_length) if in_game else ZERO
    out[1] = float32(y / grid_length) if in_game else ZERO
    out[2] = float32(s / speed_scale) if in_game else ZERO
    out[3] = float32(math.cos(d)) if in_game else ZERO
    out[4] = float32(math.sin(d)) if in_game else ZERO


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

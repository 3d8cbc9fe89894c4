"""Observation device functions of Continuous Tag's Numba step: the nearest-agent search
(per-thread lists, fixed-size register lists and the block-wide staged lists) and the writing
of observation rows (see ``dynamics.observe``).

Twins of the ``__device__`` functions of ``tag_continuous_step.cu`` of the same names; the kernel
that calls them lives in ``tag_continuous_numba.py``.
"""

from __future__ import annotations

import math

from numba import float32, int32

from ai_economist.example_envs.tag_continuous.arguments import MAX_OBSERVED
from ai_economist.example_envs.tag_continuous.tag_continuous_numba_agents import (
    INFINITY,
    NUM_FEATURES,
    REGISTER_OBSERVED,
    TWO_PI,
    ZERO,
    add_rn,
    mul_rn,
    squared_distance,
)
from ai_economist.warp_drive.errors import require_numba_cuda

cuda = require_numba_cuda()  # a module global: the simulator swaps it inside kernels


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

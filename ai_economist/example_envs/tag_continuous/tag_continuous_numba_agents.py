"""Per-agent device functions of Continuous Tag's Numba step: movement, own state, tagging
and rewards, with the float32 arithmetic and constants that every part of the step shares.

Device functions are named after the numpy functions of ``dynamics.py`` and mirror the
``__device__`` functions of ``tag_continuous_step.cu``; the kernel lives in
``tag_continuous_numba.py``, the observation functions in ``tag_continuous_numba_observations.py``.
Arithmetic stays in float32 (explicit ``float32`` casts), so that Numba's CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``) matches the numpy reference up to the last bit of the
trigonometric functions.
"""

from __future__ import annotations

import math

import numpy as np
from numba import float32

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

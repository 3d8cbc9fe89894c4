"""Numba device functions of the COVID-19 components (twins of ``covid19_components_step.cu``).

``component_device_functions(constants)`` returns ``@cuda.jit(device=True)`` functions that
close over the compile-time constants: the numpy functions of ``dynamics.py`` under the same
names (``open_close_step``, ``open_close_action_mask``, ``subsidy_step``, ``subsidy_amounts``,
``subsidy_action_mask``, ``vaccination_step``, ``time_until_next_vaccines``) and the three
kernel bodies the kernels of ``covid19_numba`` call.  Every body is called by all threads of
the block (the subsidy body contains a barrier).

Arithmetic is float32 as in CUDA C: the float constants are ``np.float32`` values and integers
are cast with ``float32(...)`` before they meet a float (Numba promotes float32 op int64 and
float32 op a Python float to float64).
"""

from __future__ import annotations

import numpy as np
from numba import float32

from ai_economist.warp_drive.errors import require_numba_cuda

cuda = require_numba_cuda()  # a module global: the simulator swaps it inside kernels


def observation_offsets(c: dict) -> tuple[dict[str, int], dict[str, int]]:
    """``OBS_A_*`` and ``OBS_P_*`` constants by suffix (-1 = not in that policy's vector)."""
    agent = {k[6:]: int(v) for k, v in c.items() if k.startswith("OBS_A_")}
    planner = {k[6:]: int(v) for k, v in c.items() if k.startswith("OBS_P_")}
    return agent, planner


def component_device_functions(c: dict) -> dict:  # noqa: C901  (one closure per function)
    """The components' device functions and kernel bodies for the constants ``c``."""
    A, L = int(c["NUM_AGENTS"]), int(c["EPISODE_LENGTH"])
    LEVELS = int(c["NUM_STRINGENCY_LEVELS"])
    NA_A, NA_P = int(c["NUM_ACTIONS_A"]), int(c["NUM_ACTIONS_P"])
    COOLDOWN, INTERVAL = int(c["ACTION_COOLDOWN_PERIOD"]), int(c["SUBSIDY_INTERVAL"])
    SUB_LEVELS = int(c["NUM_SUBSIDY_LEVELS"])
    FIRST, DELIVERY = int(c["FIRST_DELIVERY_STEP"]), int(c["DELIVERY_INTERVAL"])
    F = np.float32
    ONE, ZERO = F(1.0), F(0.0)
    F_LEVELS, F_SUB_LEVELS = F(LEVELS), F(SUB_LEVELS)
    F_INTERVAL, F_DELIVERY = F(INTERVAL), F(DELIVERY)
    RATE = F(F(c["DAILY_VACCINES_PER_MILLION_PEOPLE"]) / F(1e6))
    REAL = bool(c["USE_REAL_WORLD_POLICIES"])
    OA, OP = observation_offsets(c)
    OA_POL, OP_POL = OA["POLICY_INDICATORS"], OP["POLICY_INDICATORS"]
    OA_SUBL, OP_SUBL = OA["CURRENT_SUBSIDY_LEVEL"], OP["CURRENT_SUBSIDY_LEVEL"]
    OA_SUBT, OP_SUBT = OA["T_UNTIL_NEXT_SUBSIDY"], OP["T_UNTIL_NEXT_SUBSIDY"]
    OA_VACT, OP_VACT = OA["T_UNTIL_NEXT_VACCINES"], OP["T_UNTIL_NEXT_VACCINES"]
    OA_VACR, OP_VACR = OA["NEXT_VACCINATION_RATE"], OP["NEXT_VACCINATION_RATE"]
    jit = cuda.jit(device=True)

    @jit
    def real_policy_row(t):
        return min(max(t, 0), L)

    @jit
    def open_close_step(action, previous_level, cooldown_until, t):
        level = action if (action >= 1 and action <= LEVELS) else previous_level
        extension = COOLDOWN if action > 0 else 1
        if t == cooldown_until + 1:
            return level, cooldown_until + extension
        return level, cooldown_until

    @jit
    def open_close_action_mask(t, cooldown_until):
        return ONE if t >= cooldown_until else ZERO

    @jit
    def subsidy_step(planner_action, previous_level, t):
        return planner_action if (t - 1) % INTERVAL == 0 else previous_level

    @jit
    def subsidy_amounts(subsidy_level, max_daily_subsidy):
        return float32(subsidy_level) / F_SUB_LEVELS * max_daily_subsidy

    @jit
    def subsidy_action_mask(t):
        return ONE if t % INTERVAL == 0 else ZERO

    @jit
    def subsidy_level_observation(level):
        return float32(level) / F_SUB_LEVELS

    @jit
    def t_until_next_subsidy(t):
        return float32(INTERVAL - t % INTERVAL) / F_INTERVAL

    @jit
    def vaccination_step(t, num_vaccines_per_delivery):
        if t >= FIRST and t % DELIVERY == 0:
            return num_vaccines_per_delivery
        return ZERO

    @jit
    def time_until_next_vaccines(t):
        if t < FIRST:
            return min(ONE, float32(FIRST - (t + 1)) / F_DELIVERY) / F_DELIVERY
        return float32(DELIVERY - (t + 1) % DELIVERY) / F_DELIVERY

    @jit
    def next_vaccination_rate(t):
        return RATE if t >= FIRST else ZERO

    @jit
    def open_close_kernel_body(env, tid, t, stringency_level, cooldown_until, sampled_actions_a,
                               real_policy_stringency, observations_a, observations_p,
                               action_mask_a):  # fmt: skip
        if tid >= A:
            return
        cooldown = cooldown_until[env, tid]
        if REAL:  # the table row t already holds the one-day-late real policy
            level = real_policy_stringency[real_policy_row(t), tid]
        else:
            level, cooldown = open_close_step(
                sampled_actions_a[env, tid], stringency_level[env, tid], cooldown, t
            )
            cooldown_until[env, tid] = cooldown
        stringency_level[env, tid] = level
        indicator = float32(level) / F_LEVELS
        if OA_POL >= 0:
            observations_a[env, tid, OA_POL] = indicator
        if OP_POL >= 0:
            observations_p[env, 0, OP_POL + tid] = indicator
        allowed = ONE if REAL else open_close_action_mask(t, cooldown)
        action_mask_a[env, tid, 0] = ONE
        for j in range(1, NA_A):
            action_mask_a[env, tid, j] = allowed

    @jit
    def subsidy_kernel_body(env, tid, t, subsidy_level, sampled_actions_p, real_subsidy_levels,
                            max_daily_subsidy_per_state, subsidy, observations_a, observations_p,
                            action_mask_p):  # fmt: skip
        if REAL:
            level = real_subsidy_levels[real_policy_row(t)]
        else:
            level = subsidy_step(sampled_actions_p[env, 0], subsidy_level[env], t)
        cuda.syncthreads()  # every thread has read the previous level before the planner writes
        level_obs = subsidy_level_observation(level)
        until_next = t_until_next_subsidy(t)
        if tid < A:
            subsidy[env, tid] = subsidy_amounts(level, max_daily_subsidy_per_state[tid])
            if OA_SUBL >= 0:
                observations_a[env, tid, OA_SUBL] = level_obs
            if OA_SUBT >= 0:
                observations_a[env, tid, OA_SUBT] = until_next
        elif tid == A:
            subsidy_level[env] = level
            if OP_SUBL >= 0:
                observations_p[env, 0, OP_SUBL] = level_obs
            if OP_SUBT >= 0:
                observations_p[env, 0, OP_SUBT] = until_next
        allowed = subsidy_action_mask(t)
        for j in range(tid, NA_P, cuda.blockDim.x):
            action_mask_p[env, 0, j] = ONE if j == 0 else allowed

    @jit
    def vaccination_kernel_body(env, tid, t, vaccines_available, num_vaccines_per_delivery,
                                observations_a, observations_p):  # fmt: skip
        until_next = time_until_next_vaccines(t)
        rate = next_vaccination_rate(t)
        if tid < A:
            vaccines_available[env, tid] += vaccination_step(t, num_vaccines_per_delivery[tid])
            if OA_VACT >= 0:
                observations_a[env, tid, OA_VACT] = until_next
            if OA_VACR >= 0:
                observations_a[env, tid, OA_VACR] = rate
        elif tid == A:
            if OP_VACT >= 0:
                observations_p[env, 0, OP_VACT] = until_next
            if OP_VACR >= 0:
                observations_p[env, 0, OP_VACR] = rate

    return {
        name: fn
        for name, fn in locals().items()
        if name.endswith(("_step", "_mask", "_amounts", "_vaccines", "_kernel_body", "_row"))
        or name in ("subsidy_level_observation", "t_until_next_subsidy", "next_vaccination_rate")
    }

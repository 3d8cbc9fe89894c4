"""The Numba fused COVID-19 step: twin of ``covid19_fused_step.cu`` (``CudaCovidStepFused``).

``fused_device_functions(constants, fns)`` returns ``fused_step_body``, the whole step of one
env (components, scenario, rewards) for a block of ``NUM_AGENTS + 1`` threads, built from the
shared device functions ``fns`` of ``covid19_components_numba`` and ``covid19_numba_scenario``
(the numpy names of ``dynamics.py``).  It follows the CUDA C fused kernel's memory schedule:

* load everything first: every global value of the step is read before anything is stored,
  so a thread's loads are in flight together instead of one round trip per component;
* store only what changes: cooldowns, levels, action masks and subsidies only when they
  change, the day's vaccines only when some were left; everything on an episode's first step;
* agent observations are staged in shared memory and stored in whole 32-byte sectors (the
  dynamic columns plus the constant one-hot ``world-agent_index`` columns sharing their
  sectors) by consecutive threads, not one 256-byte row per thread;
* the unemployment filters are copied between global and shared memory contiguously;
* float32 arithmetic throughout, as CUDA C (``float``);
* every array arrives flattened to 1-D (``covid19_numba.FLAT_KERNELS``) and is indexed with
  compile-time row lengths (``ai = env * NUM_AGENTS + i`` once, ``history_at``, ``obs_p_at``),
  as CUDA C does, instead of a 64-bit multiply by each array's runtime shape;
* unsigned array indices (``uint32``): Numba skips its negative-index wraparound for them,
  which otherwise costs a compare, a select and a 64-bit add per index; the ring-buffer
  slots are derived from today's slot without further divisions.

The planner sums over the states use warp shuffles and one barrier on a GPU (as CUDA C's
``block_sum3``); Numba's CUDA simulator has no shuffles, so there the planner thread adds the
states' values in state order. Both orders are fixed, so results are deterministic.
"""

from __future__ import annotations

import numpy as np
from numba import float32, uint32

from ai_economist.foundation.scenarios.covid19.components.covid19_components_numba import (
    observation_offsets,
)
from ai_economist.warp_drive.errors import cudasim_enabled, require_numba_cuda

cuda = require_numba_cuda()  # a module global: the simulator swaps it inside kernels

SECTOR_FLOATS = 8
"""float32 values per 32-byte memory sector."""


def sector_columns(obs_dim: int, agent_index: int, num_agents: int) -> tuple[int, int]:
    """``(head_end, tail_begin)``: a step stores agent-observation columns ``[0, head_end)``
    and ``[tail_begin, obs_dim)``, which hold every dynamic column.

    With sector-aligned rows (``obs_dim`` a multiple of 8) and a one-hot ``world-agent_index``
    block at ``agent_index``, both ranges are rounded out to whole sectors (the one-hot columns
    inside them get their constant values); otherwise they are exactly the dynamic columns.
    """
    if agent_index < 0:
        return obs_dim, obs_dim
    onehot_end = agent_index + num_agents
    if obs_dim % SECTOR_FLOATS != 0:
        return agent_index, onehot_end
    head = min(-(-agent_index // SECTOR_FLOATS) * SECTOR_FLOATS, onehot_end)
    tail = max(onehot_end // SECTOR_FLOATS * SECTOR_FLOATS, head)
    return head, tail


def fused_device_functions(c: dict, fns: dict) -> dict:  # noqa: C901  (one closure per function)
    """``{"fused_step_body": device function}`` for the constants ``c``."""
    A, K = int(c["NUM_AGENTS"]), int(c["NUM_FILTERS"])
    NT = A + 1  # launch convention: one block of NUM_AGENTS + 1 threads per env
    NA_A, NA_P = int(c["NUM_ACTIONS_A"]), int(c["NUM_ACTIONS_P"])
    BETA_DELAY, FILTER_LEN = int(c["BETA_DELAY"]), int(c["FILTER_LEN"])
    REAL = bool(c["USE_REAL_WORLD_POLICIES"])
    F = np.float32
    ONE, ZERO, F100 = F(1.0), F(0.0), F(100.0)
    F_LEVELS, F_L = F(c["NUM_STRINGENCY_LEVELS"]), F(c["EPISODE_LENGTH"])
    NORM, P_W = F(c["REWARD_NORMALIZATION_FACTOR"]), F(c["PLANNER_HEALTH_WEIGHTAGE"])
    OA, OP = observation_offsets(c)
    DIM, AI = int(c["OBS_A_DIM"]), OA["AGENT_INDEX"]
    DYN = DIM - A if AI >= 0 else DIM  # staged (dynamic) columns of a row
    HEAD, TAIL = sector_columns(DIM, AI, A)
    WRITE = HEAD + DIM - TAIL  # stored columns of a row
    N_FILTERS = A * K
    U = np.uint32  # unsigned constants keep index arithmetic unsigned (no wraparound code)
    UA, UK, UH, UHEAD = U(A), U(K), U(c["HISTORY_LEN"]), U(HEAD)
    U_SHIFT = U(TAIL - HEAD)  # stored column w >= HEAD is column w + TAIL - HEAD
    COLS_PER_PASS = min(WRITE, NT)  # observation columns and rows the block stores at once
    ROWS_PER_PASS = NT // COLS_PER_PASS

    def back(days: int) -> np.uint32:  # today's slot + back(d) (mod H) is slot of t - d
        return U((-days) % int(c["HISTORY_LEN"]))

    B_LAG, B_LAG_OBS, B_DAY = back(BETA_DELAY), back(BETA_DELAY - 1), back(1)
    B_NEW, B_OLD = back(FILTER_LEN), back(FILTER_LEN + 1)

    def dyn(col: int) -> int:  # staged index of dynamic column col; -1: not observed
        return col - A if (AI >= 0 and col > AI) else col

    S_POL, S_SUBL, S_SUBT = (
        dyn(OA["POLICY_INDICATORS"]),
        dyn(OA["CURRENT_SUBSIDY_LEVEL"]),
        dyn(OA["T_UNTIL_NEXT_SUBSIDY"]),
    )
    S_VACT, S_VACR = dyn(OA["T_UNTIL_NEXT_VACCINES"]), dyn(OA["NEXT_VACCINATION_RATE"])
    S_TIME, S_POST = dyn(OA["TIME"]), dyn(OA["POSTSUBSIDY_PRODUCTIVITY"])
    S_STATE, S_LAG = dyn(OA["AGENT_STATE"]), dyn(OA["LAGGED_STRINGENCY_LEVEL"])
    OP_POL, OP_SUBL, OP_SUBT = (
        OP["POLICY_INDICATORS"],
        OP["CURRENT_SUBSIDY_LEVEL"],
        OP["T_UNTIL_NEXT_SUBSIDY"],
    )
    OP_VACT, OP_VACR, OP_TIME = OP["T_UNTIL_NEXT_VACCINES"], OP["NEXT_VACCINATION_RATE"], OP["TIME"]
    OP_POST, OP_STATE, OP_LAG = (
        OP["POSTSUBSIDY_PRODUCTIVITY"],
        OP["AGENT_STATE"],
        OP["LAGGED_STRINGENCY_LEVEL"],
    )
    history_slot, real_policy_row = fns["history_slot"], fns["real_policy_row"]
    open_close_step, open_close_action_mask = fns["open_close_step"], fns["open_close_action_mask"]
    subsidy_step, subsidy_amounts = fns["subsidy_step"], fns["subsidy_amounts"]
    subsidy_action_mask = fns["subsidy_action_mask"]
    subsidy_level_observation = fns["subsidy_level_observation"]
    t_until_next_subsidy, vaccination_step = fns["t_until_next_subsidy"], fns["vaccination_step"]
    time_until_next_vaccines = fns["time_until_next_vaccines"]
    next_vaccination_rate = fns["next_vaccination_rate"]
    sir_step, new_deaths_step, softplus = fns["sir_step"], fns["new_deaths_step"], fns["softplus"]
    economy_step, get_rew = fns["economy_step"], fns["get_rew"]
    agent_indices, planner_indices = fns["agent_indices"], fns["planner_indices"]
    UO = {k: U(max(v, 0)) for k, v in OP.items()}  # planner columns (used where present)
    U_OP_POL, U_OP_POST, U_OP_LAG = (
        UO["POLICY_INDICATORS"],
        UO["POSTSUBSIDY_PRODUCTIVITY"],
        UO["LAGGED_STRINGENCY_LEVEL"],
    )
    U_OP_SUBL, U_OP_SUBT = UO["CURRENT_SUBSIDY_LEVEL"], UO["T_UNTIL_NEXT_SUBSIDY"]
    U_OP_VACT, U_OP_VACR, U_OP_TIME = (
        UO["T_UNTIL_NEXT_VACCINES"],
        UO["NEXT_VACCINATION_RATE"],
        UO["TIME"],
    )
    U_OP_STATE = UO["AGENT_STATE"]
    U_AI, U_AI_END = U(max(AI, 0)), U(max(AI, 0) + A)
    U_DIM, U_DIM_P = U(DIM), U(c["OBS_P_DIM"])  # row lengths of the flat arrays
    U_NA_A, U_NA_P, U_NF = U(NA_A), U(NA_P), U(N_FILTERS)
    # Planner sums: warp shuffles on a GPU (as CUDA C's block_sum3), then the warps' partial
    # sums in warp order; the simulator has no shuffles: there the planner adds the states'
    # values in state order. Both orders are fixed: deterministic.
    SHUFFLES = not cudasim_enabled()
    N_WARPS = -(-NT // 32)
    N_PARTS = N_WARPS if SHUFFLES else A
    LAST_LANES = NT - 32 * (N_WARPS - 1)
    FULL_MASK, LAST_MASK = 0xFFFFFFFF, (1 << LAST_LANES) - 1
    jit = cuda.jit(device=True)

    @jit
    def warp_sum3(tid, a, b, c):
        """a, b, c summed over the lanes of tid's warp (valid in lane 0)."""
        lane, warp = tid % 32, tid // 32
        lanes = 32 if warp < N_WARPS - 1 else LAST_LANES
        mask = FULL_MASK if warp < N_WARPS - 1 else LAST_MASK
        offset = 16
        while offset > 0:
            other_a = cuda.shfl_down_sync(mask, a, offset)
            other_b = cuda.shfl_down_sync(mask, b, offset)
            other_c = cuda.shfl_down_sync(mask, c, offset)
            if lane + offset < lanes:
                a += other_a
                b += other_b
                c += other_c
            offset //= 2
        return a, b, c

    @jit
    def slot_back(today, back_days):
        """Ring-buffer slot of day t - d from today's slot (back_days = -d mod H)."""
        slot = today + back_days
        return slot - UH if slot >= UH else slot

    @jit
    def history_at(e, slot, i):
        """Flat index of (env, ring-buffer slot, state) in stringency_history."""
        return (e * UH + slot) * UA + i

    @jit
    def obs_p_at(e, col):
        """Flat index of column col of env e's planner observation."""
        return e * U_DIM_P + col

    @jit
    def staged_unemployment_step(filters, i, new_delta, dropped_delta, filter_decay,
                                 window_decay, filter_weights, bias, modulation,
                                 population):  # fmt: skip
        """unemployment_filter_update + unemployment_step on state i's staged filters."""
        signal = ZERO
        for k in range(K):
            value = (
                filters[i * UK + uint32(k)] * filter_decay[k]
                + float32(new_delta)
                - window_decay[k] * float32(dropped_delta)
            )
            filters[i * UK + uint32(k)] = value
            signal += value * filter_weights[i * UK + uint32(k)]
        return (softplus(signal * modulation) + bias) * population / F100

    @jit
    def stage_agent_state(stage, observations_p, e, i, k, value):
        """world-agent_state column k (agent: staged; planner: stored, coalesced over i)."""
        if S_STATE >= 0:
            stage[i, S_STATE + k] = value
        if OP_STATE >= 0:
            observations_p[obs_p_at(e, U_OP_STATE + uint32(k * A) + i)] = value

    @jit
    def observation_value(stage, i, col):
        """Agent i's stored value of column col: staged, or the constant one-hot."""
        if AI >= 0 and col >= U_AI and col < U_AI_END:
            return ONE if col == i + U_AI else ZERO  # world-agent_index (np.eye)
        if AI >= 0 and col > U_AI:
            return stage[i, col - UA]
        return stage[i, col]

    @jit
    def flush_observation_sectors_a(observations_a, stage, e, tid):
        """All threads: store columns [0, HEAD) and [TAIL, DIM) of every agent's row, with
        consecutive threads on consecutive columns (whole sectors per warp); a thread keeps
        its column(s) and walks down the rows, ROWS_PER_PASS rows a pass."""
        if tid < ROWS_PER_PASS * COLS_PER_PASS:
            for w in range(tid % COLS_PER_PASS, WRITE, COLS_PER_PASS):
                uw = uint32(w)
                col = uw if uw < UHEAD else uw + U_SHIFT
                for i in range(tid // COLS_PER_PASS, A, ROWS_PER_PASS):
                    ui = uint32(i)
                    value = observation_value(stage, ui, col)
                    observations_a[(e * UA + ui) * U_DIM + col] = value

    @jit
    def fused_step_body(env, tid, t, stringency_level, cooldown_until, sampled_actions_a,
                        real_policy_stringency, subsidy_level, sampled_actions_p,
                        real_subsidy_levels, max_daily_subsidy_per_state, subsidy,
                        vaccines_available, num_vaccines_per_delivery, susceptible, infected,
                        recovered, vaccinated, deaths, new_deaths, unemployed, productivity,
                        postsubsidy_productivity, stringency_history, filter_state,
                        beta_intercept_modulation, beta_slope_modulation,
                        unemployment_modulation, population, beta_intercepts, beta_slopes,
                        filter_weights, filter_decay, window_decay, unemployment_bias,
                        maximum_productivity, health_index, economic_index, rewards_a,
                        rewards_p, planner_health_index, planner_economic_index,
                        agents_health_norm, agents_economic_norm, min_agent_health,
                        max_agent_health, min_agent_economic, max_agent_economic,
                        agent_health_weightage, observations_a, observations_p, action_mask_a,
                        action_mask_p):  # fmt: skip
        s_obs = cuda.shared.array((A, DYN), float32)
        s_filters = cuda.shared.array(N_FILTERS, float32)
        s_sums = cuda.shared.array((3, N_PARTS), float32)
        first_step = t == 1
        nd, post, amount = ZERO, ZERO, ZERO  # the planner's inputs (0 from the planner thread)
        e = uint32(env)
        i = uint32(min(tid, A - 1))  # the planner thread loads state A - 1's values, unused
        ai = e * UA + i  # flat index of (env, state)
        # ---- loads (the block's values are read by every thread: one broadcast per warp)
        previous_subsidy_level = subsidy_level[e]
        if REAL:
            level_p = real_subsidy_levels[uint32(real_policy_row(t))]
            action = real_policy_stringency[uint32(real_policy_row(t)) * UA + i]
        else:
            level_p = subsidy_step(sampled_actions_p[e], previous_subsidy_level, t)
            action = sampled_actions_a[ai]
        subsidy_changed = level_p != previous_subsidy_level
        previous_level, cooldown0 = stringency_level[ai], cooldown_until[ai]
        hist = stringency_history
        today = uint32(history_slot(t))
        lagged_level = hist[history_at(e, slot_back(today, B_LAG), i)]
        lagged_obs_level = hist[history_at(e, slot_back(today, B_LAG_OBS), i)]
        previous_day_level = hist[history_at(e, slot_back(today, B_DAY), i)]
        window_new = hist[history_at(e, slot_back(today, B_NEW), i)]
        window_old = hist[history_at(e, slot_back(today, B_OLD), i)]
        vaccines0, s, inf = vaccines_available[ai], susceptible[ai], infected[ai]
        r, v, previous_deaths = recovered[ai], vaccinated[ai], deaths[ai]
        h_index, e_index = health_index[ai], economic_index[ai]
        p_health, p_economic = planner_health_index[e], planner_economic_index[e]
        for n in range(tid, N_FILTERS, NT):
            s_filters[uint32(n)] = filter_state[e * U_NF + uint32(n)]
        cuda.syncthreads()  # the filters are in shared memory
        if tid < A:
            # ControlUSStateOpenCloseStatus
            level, cooldown = action, cooldown0
            if not REAL:
                level, cooldown = open_close_step(action, previous_level, cooldown0, t)
                if cooldown != cooldown0:
                    cooldown_until[ai] = cooldown
            if level != previous_level or first_step:
                stringency_level[ai] = level
            indicator = float32(level) / F_LEVELS
            if S_POL >= 0:
                s_obs[i, S_POL] = indicator
            if OP_POL >= 0:
                observations_p[obs_p_at(e, U_OP_POL + i)] = indicator
            allowed = ONE if REAL else open_close_action_mask(t, cooldown)
            allowed_before = ONE if REAL else open_close_action_mask(t - 1, cooldown0)
            if allowed != allowed_before or first_step:
                action_mask_a[ai * U_NA_A] = ONE
                for j in range(1, NA_A):
                    action_mask_a[ai * U_NA_A + uint32(j)] = allowed
            # FederalGovernmentSubsidy (the level is the block's; the planner stores it)
            amount = subsidy_amounts(level_p, max_daily_subsidy_per_state[i])
            if subsidy_changed or first_step:
                subsidy[ai] = amount
            if S_SUBL >= 0:
                s_obs[i, S_SUBL] = subsidy_level_observation(level_p)
            if S_SUBT >= 0:
                s_obs[i, S_SUBT] = t_until_next_subsidy(t)
            # VaccinationCampaign (the scenario uses up the day's vaccines)
            vaccines = vaccines0 + vaccination_step(t, num_vaccines_per_delivery[i])
            if S_VACT >= 0:
                s_obs[i, S_VACT] = time_until_next_vaccines(t)
            if S_VACR >= 0:
                s_obs[i, S_VACR] = next_vaccination_rate(t)
            if vaccines0 != ZERO:
                vaccines_available[ai] = ZERO
            # The scenario: SIR, unemployment, economy
            pop = population[i]
            new_s, new_i, new_r, new_v, total_deaths, beta = sir_step(
                s, inf, r, v, vaccines, float32(lagged_level), beta_intercepts[i],
                beta_slopes[i], beta_intercept_modulation[e], beta_slope_modulation[e], pop,
            )  # fmt: skip
            nd = new_deaths_step(t, inf, r, v, previous_deaths)
            new_deaths[ai] = nd
            susceptible[ai], infected[ai], recovered[ai] = new_s, new_i, new_r
            vaccinated[ai], deaths[ai] = new_v, total_deaths
            hist[history_at(e, today, i)] = level
            unemp = staged_unemployment_step(
                s_filters, i, level - previous_day_level, window_new - window_old,
                filter_decay, window_decay, filter_weights, unemployment_bias[i],
                unemployment_modulation[e], pop,
            )  # fmt: skip
            unemployed[ai] = unemp
            prod = economy_step(pop, new_i, total_deaths, unemp)
            post = prod + amount
            productivity[ai] = prod
            postsubsidy_productivity[ai] = post
            # Scenario observations (world-agent_index: constant, stored with its sectors)
            stage_agent_state(s_obs, observations_p, e, i, 0, new_s / pop)
            stage_agent_state(s_obs, observations_p, e, i, 1, new_i / pop)
            stage_agent_state(s_obs, observations_p, e, i, 2, new_r / pop)
            stage_agent_state(s_obs, observations_p, e, i, 3, total_deaths / pop)
            stage_agent_state(s_obs, observations_p, e, i, 4, new_v / pop)
            stage_agent_state(s_obs, observations_p, e, i, 5, unemp / pop)
            post_obs = post / maximum_productivity[i]
            lagged_obs = float32(lagged_obs_level if BETA_DELAY > 1 else level) / F_LEVELS
            if S_POST >= 0:
                s_obs[i, S_POST] = post_obs
            if OP_POST >= 0:
                observations_p[obs_p_at(e, U_OP_POST + i)] = post_obs
            if S_LAG >= 0:
                s_obs[i, S_LAG] = lagged_obs
            if OP_LAG >= 0:
                observations_p[obs_p_at(e, U_OP_LAG + i)] = lagged_obs
            if S_TIME >= 0:
                s_obs[i, S_TIME] = float32(t) / F_L
            # The state's reward
            health, economic = agent_indices(
                nd, post, agents_health_norm[i], agents_economic_norm[i], min_agent_health[i],
                max_agent_health[i], min_agent_economic[i], max_agent_economic[i],
            )  # fmt: skip
            health_index[ai] = h_index + health
            economic_index[ai] = e_index + economic
            rewards_a[ai] = get_rew(health, economic, agent_health_weightage[i]) / NORM
            if not SHUFFLES:
                s_sums[0, i], s_sums[1, i], s_sums[2, i] = nd, post, amount
        mask_p = subsidy_action_mask(t)
        if mask_p != subsidy_action_mask(t - 1) or first_step:
            for j in range(tid, NA_P, NT):
                action_mask_p[e * U_NA_P + uint32(j)] = ONE if j == 0 else mask_p
        if SHUFFLES:  # each warp's sums, by lane 0
            nd, post, amount = warp_sum3(tid, nd, post, amount)
            if tid % 32 == 0:
                w = uint32(tid // 32)
                s_sums[0, w], s_sums[1, w], s_sums[2, w] = nd, post, amount
        cuda.syncthreads()  # staged observations, filters and the planner's inputs are complete
        if tid == A:
            sum_deaths, sum_post, sum_subsidy = ZERO, ZERO, ZERO
            for k in range(N_PARTS):  # fixed order: deterministic
                sum_deaths += s_sums[0, k]
                sum_post += s_sums[1, k]
                sum_subsidy += s_sums[2, k]
            if subsidy_changed:
                subsidy_level[e] = level_p
            if OP_SUBL >= 0:
                observations_p[obs_p_at(e, U_OP_SUBL)] = subsidy_level_observation(level_p)
            if OP_SUBT >= 0:
                observations_p[obs_p_at(e, U_OP_SUBT)] = t_until_next_subsidy(t)
            if OP_VACT >= 0:
                observations_p[obs_p_at(e, U_OP_VACT)] = time_until_next_vaccines(t)
            if OP_VACR >= 0:
                observations_p[obs_p_at(e, U_OP_VACR)] = next_vaccination_rate(t)
            if OP_TIME >= 0:
                observations_p[obs_p_at(e, U_OP_TIME)] = float32(t) / F_L
            health, economic = planner_indices(sum_deaths, sum_post, sum_subsidy)
            planner_health_index[e] = p_health + health
            planner_economic_index[e] = p_economic + economic
            rewards_p[e] = get_rew(health, economic, P_W) / NORM
        flush_observation_sectors_a(observations_a, s_obs, e, tid)
        for n in range(tid, N_FILTERS, NT):
            filter_state[e * U_NF + uint32(n)] = s_filters[uint32(n)]

    return {"fused_step_body": fused_step_body}

"""The COVID-19 scenario's Numba device functions: twins of ``covid19_env_step.cu``.

``scenario_device_functions(constants)`` returns ``@cuda.jit(device=True)`` functions by name:
the SIR, unemployment and economy steps and the rewards (named after the numpy functions of
``dynamics.py`` and the CUDA C device functions), and the kernel bodies ``scenario_kernel_body``,
``reward_kernel_body``, ``record_episode_end`` (``record_episode_end_flat`` on 1-D arrays) and
``commit_timestep``. They close over the compile-time constants; ``covid19_numba`` assembles
them, the components' and the fused step's into kernels. Arithmetic is float32 as in CUDA C,
except the per-component reward body's planner sums (float64).
"""

from __future__ import annotations

import math

import numpy as np
from numba import float32, float64

from ai_economist.foundation.scenarios.covid19.components.covid19_components_numba import (
    observation_offsets,
)
from ai_economist.warp_drive.errors import require_numba_cuda

cuda = require_numba_cuda()  # a module global: the simulator swaps it inside kernels


def scenario_device_functions(c: dict) -> dict:  # noqa: C901  (one closure per device function)
    """The scenario's device functions and kernel bodies (SIR, unemployment, economy, rewards,
    episode end), closing over the constants ``c`` (a dict of the generated header's defines);
    the components' are in ``covid19_components_numba``."""
    A, L = int(c["NUM_AGENTS"]), int(c["EPISODE_LENGTH"])
    HISTORY_LEN, FILTER_LEN, K = int(c["HISTORY_LEN"]), int(c["FILTER_LEN"]), int(c["NUM_FILTERS"])
    BETA_DELAY, LEVELS = int(c["BETA_DELAY"]), int(c["NUM_STRINGENCY_LEVELS"])
    F = np.float32  # float32 constants keep the arithmetic in float32, as in CUDA C
    GAMMA, DEATH_RATE = F(c["GAMMA"]), F(c["DEATH_RATE"])
    SICK, P18 = F(c["INFECTION_TOO_SICK_TO_WORK_RATE"]), F(c["POP_BETWEEN_AGE_18_65"])
    DPPW, VOL = F(c["DAILY_PRODUCTION_PER_WORKER"]), F(c["VALUE_OF_LIFE"])
    ETA, RFR = F(c["ECONOMIC_REWARD_CRRA_ETA"]), F(c["RISK_FREE_INTEREST_RATE"])
    ETA_IS_ONE = bool(c["ECONOMIC_REWARD_CRRA_ETA_IS_ONE"])
    P_HN, P_EN = F(c["PLANNER_HEALTH_NORM"]), F(c["PLANNER_ECONOMIC_NORM"])
    P_MIN_H, P_MAX_H = F(c["MIN_PLANNER_HEALTH"]), F(c["MAX_PLANNER_HEALTH"])
    P_MIN_E, P_MAX_E = F(c["MIN_PLANNER_ECONOMIC"]), F(c["MAX_PLANNER_ECONOMIC"])
    P_W, NORM = F(c["PLANNER_HEALTH_WEIGHTAGE"]), F(c["REWARD_NORMALIZATION_FACTOR"])
    DAYS = F(c["NUM_DAYS_IN_AN_YEAR"])
    F_LEVELS, F_L = F(LEVELS), F(L)
    ONE, ZERO, F100 = F(1.0), F(0.0), F(100.0)
    ONE_MINUS_ETA, ONE_PLUS_RFR = F(ONE - ETA), F(ONE + RFR)
    ANNUAL_MIN, ANNUAL_MAX = F(0.1), F(3.0)
    OA, OP = observation_offsets(c)
    OA_TIME, OP_TIME = OA["TIME"], OP["TIME"]
    OA_POST, OP_POST = OA["POSTSUBSIDY_PRODUCTIVITY"], OP["POSTSUBSIDY_PRODUCTIVITY"]
    OA_STATE, OP_STATE = OA["AGENT_STATE"], OP["AGENT_STATE"]
    OA_LAG, OP_LAG = OA["LAGGED_STRINGENCY_LEVEL"], OP["LAGGED_STRINGENCY_LEVEL"]
    EPS, THRESHOLD = F(1e-10), F(20.0)
    US_POP, N_METRICS = F(c["US_POPULATION"]), int(c["NUM_EPISODE_METRICS"])
    jit = cuda.jit(device=True)

    @jit
    def history_slot(row):
        return row % HISTORY_LEN  # Python (floor) modulo: never negative

    # ---------------------------------------------------------------- scenario
    @jit
    def sir_step(susceptible, infected, recovered, vaccinated, vaccines_available,
                 lagged_stringency_level, beta_intercept, beta_slope, beta_intercept_modulation,
                 beta_slope_modulation, population):  # fmt: skip
        beta = (
            beta_intercept_modulation * beta_intercept
            + beta_slope_modulation * beta_slope * lagged_stringency_level
        )
        vaccinated_fraction = min(ONE, vaccines_available / (susceptible + EPS))
        num_vaccinated = min(vaccines_available, susceptible)
        d_s = -beta * susceptible / population * infected * (ONE - vaccinated_fraction)
        d_s -= num_vaccinated
        d_r = GAMMA * infected + num_vaccinated
        d_i = -d_s - d_r
        new_s = max(susceptible + d_s, ZERO)
        new_i = max(infected + d_i, ZERO)
        new_r = max(recovered + d_r, ZERO)
        new_v = max(vaccinated + num_vaccinated, ZERO)
        return new_s, new_i, new_r, new_v, DEATH_RATE * (new_r - new_v), beta

    @jit
    def new_deaths_step(t, infected, recovered, vaccinated, previous_deaths):
        # D_t - D_{t-1} without cancellation; see new_deaths_step in covid19_env_step.cu.
        offset = DEATH_RATE * (recovered - vaccinated) - previous_deaths if t == 1 else ZERO
        return DEATH_RATE * (GAMMA * infected) + offset

    @jit
    def softplus(x):
        return x if x > THRESHOLD else math.log1p(math.exp(min(x, THRESHOLD)))

    @jit
    def unemployment_filter_update(filter_state, env, i, new_delta, dropped_delta, filter_decay,
                                   window_decay):  # fmt: skip
        for k in range(K):
            filter_state[env, i, k] = (
                filter_state[env, i, k] * filter_decay[k]
                + float32(new_delta)
                - window_decay[k] * float32(dropped_delta)
            )

    @jit
    def unemployment_step(filter_state, env, i, filter_weights, bias, modulation, population):
        signal = ZERO
        for k in range(K):
            signal += filter_state[env, i, k] * filter_weights[i, k]
        return (softplus(signal * modulation) + bias) * population / F100

    @jit
    def economy_step(population, infected, deaths, unemployed):
        incapacitated = SICK * infected + deaths
        cant_work = incapacitated * P18 + unemployed
        return max(ZERO, population * P18 - cant_work) * DPPW

    @jit
    def write_agent_state(observations_a, observations_p, env, i, k, value):
        """world-agent_state: [S, I, R, D, V, U] / population (agent: 6; planner: (6, A))."""
        if OA_STATE >= 0:
            observations_a[env, i, OA_STATE + k] = value
        if OP_STATE >= 0:
            observations_p[env, 0, OP_STATE + k * A + i] = value

    @jit
    def scenario_kernel_body(env, tid, t, susceptible, infected, recovered, vaccinated, deaths,
                             new_deaths, unemployed, productivity, postsubsidy_productivity,
                             subsidy, vaccines_available, stringency_level, stringency_history,
                             filter_state, beta_intercept_modulation, beta_slope_modulation,
                             unemployment_modulation, population, beta_intercepts, beta_slopes,
                             filter_weights, filter_decay, window_decay, unemployment_bias,
                             maximum_productivity, observations_a, observations_p):  # fmt: skip
        if tid == A and OP_TIME >= 0:
            observations_p[env, 0, OP_TIME] = float32(t) / F_L
        if tid >= A:
            return
        i = tid
        pop = population[i]
        vaccines = vaccines_available[env, i]
        vaccines_available[env, i] = 0.0
        s, inf, r = susceptible[env, i], infected[env, i], recovered[env, i]
        v, previous_deaths = vaccinated[env, i], deaths[env, i]
        lagged = stringency_history[env, history_slot(t - BETA_DELAY), i]
        new_s, new_i, new_r, new_v, total_deaths, beta = sir_step(
            s, inf, r, v, vaccines, float32(lagged), beta_intercepts[i], beta_slopes[i],
            beta_intercept_modulation[env], beta_slope_modulation[env], pop,
        )  # fmt: skip
        new_deaths[env, i] = new_deaths_step(t, inf, r, v, previous_deaths)
        susceptible[env, i], infected[env, i], recovered[env, i] = new_s, new_i, new_r
        vaccinated[env, i], deaths[env, i] = new_v, total_deaths
        level = stringency_level[env, i]
        hist = stringency_history
        dropped = (
            hist[env, history_slot(t - FILTER_LEN), i]
            - hist[env, history_slot(t - FILTER_LEN - 1), i]
        )
        new_delta = level - hist[env, history_slot(t - 1), i]
        hist[env, history_slot(t), i] = level
        unemployment_filter_update(filter_state, env, i, new_delta, dropped, filter_decay,
                                   window_decay)  # fmt: skip
        unemp = unemployment_step(filter_state, env, i, filter_weights, unemployment_bias[i],
                                  unemployment_modulation[env], pop)  # fmt: skip
        unemployed[env, i] = unemp
        prod = economy_step(pop, new_i, total_deaths, unemp)
        post = prod + subsidy[env, i]
        productivity[env, i] = prod
        postsubsidy_productivity[env, i] = post
        # world-agent_index is constant: written by the initial values, restored by resets.
        post_obs = post / maximum_productivity[i]
        lagged_obs = float32(hist[env, history_slot(t - BETA_DELAY + 1), i]) / F_LEVELS
        for k, people in enumerate((new_s, new_i, new_r, total_deaths, new_v, unemp)):
            write_agent_state(observations_a, observations_p, env, i, k, people / pop)
        if OA_POST >= 0:
            observations_a[env, i, OA_POST] = post_obs
        if OP_POST >= 0:
            observations_p[env, 0, OP_POST + i] = post_obs
        if OA_LAG >= 0:
            observations_a[env, i, OA_LAG] = lagged_obs
        if OP_LAG >= 0:
            observations_p[env, 0, OP_LAG + i] = lagged_obs
        if OA_TIME >= 0:
            observations_a[env, i, OA_TIME] = float32(t) / F_L

    # ---------------------------------------------------------------- rewards
    @jit
    def crra_nonlinearity(x):
        annual = min(max(x * DAYS, ANNUAL_MIN), ANNUAL_MAX)
        if ETA_IS_ONE:
            utility = math.log(annual)  # the limit (the original divided by zero)
        else:
            utility = (math.pow(annual, ONE_MINUS_ETA) - ONE) / ONE_MINUS_ETA
        return (ONE + utility) / DAYS

    @jit
    def min_max_normalization(x, min_x, max_x):
        return (x - min_x) / (max_x - min_x + EPS)

    @jit
    def get_rew(health_index, economic_index, weightage_on_health):
        weightage_on_economy = ONE - weightage_on_health
        return (weightage_on_health * health_index + weightage_on_economy * economic_index) / (
            weightage_on_health + weightage_on_economy
        )

    @jit
    def agent_indices(new_deaths, postsubsidy, health_norm, economic_norm, min_h, max_h, min_e,
                      max_e):  # fmt: skip
        health = -new_deaths * VOL / health_norm
        economic = crra_nonlinearity(postsubsidy / economic_norm)
        return (
            min_max_normalization(health, min_h, max_h),
            min_max_normalization(economic, min_e, max_e),
        )

    @jit
    def planner_indices(sum_new_deaths, sum_postsubsidy, sum_subsidy):
        health = -sum_new_deaths * VOL / P_HN
        economic = crra_nonlinearity((sum_postsubsidy - ONE_PLUS_RFR * sum_subsidy) / P_EN)
        return (
            min_max_normalization(health, P_MIN_H, P_MAX_H),
            min_max_normalization(economic, P_MIN_E, P_MAX_E),
        )

    @jit
    def reward_kernel_body(env, tid, t, new_deaths, postsubsidy_productivity, subsidy,
                           health_index, economic_index, rewards_a, rewards_p,
                           planner_health_index, planner_economic_index, agents_health_norm,
                           agents_economic_norm, min_agent_health, max_agent_health,
                           min_agent_economic, max_agent_economic,
                           agent_health_weightage):  # fmt: skip
        s_deaths = cuda.shared.array(A, float64)
        s_post = cuda.shared.array(A, float64)
        s_subsidy = cuda.shared.array(A, float64)
        if tid < A:
            nd, post = new_deaths[env, tid], postsubsidy_productivity[env, tid]
            health, economic = agent_indices(
                nd, post, agents_health_norm[tid], agents_economic_norm[tid],
                min_agent_health[tid], max_agent_health[tid], min_agent_economic[tid],
                max_agent_economic[tid],
            )  # fmt: skip
            health_index[env, tid] += health
            economic_index[env, tid] += economic
            rewards_a[env, tid] = get_rew(health, economic, agent_health_weightage[tid]) / NORM
            s_deaths[tid], s_post[tid], s_subsidy[tid] = nd, post, subsidy[env, tid]
        cuda.syncthreads()
        if tid == A:
            # Fixed-order (deterministic) sums by the planner thread. The CUDA C kernel uses a
            # shared-memory tree instead; here one barrier instead of log2(A) keeps the
            # simulator fast (each barrier costs ~0.1 s there).
            sum_deaths, sum_post, sum_subsidy = 0.0, 0.0, 0.0
            for i in range(A):
                sum_deaths += s_deaths[i]
                sum_post += s_post[i]
                sum_subsidy += s_subsidy[i]
            health, economic = planner_indices(sum_deaths, sum_post, sum_subsidy)
            planner_health_index[env] += health
            planner_economic_index[env] += economic
            rewards_p[env, 0] = get_rew(health, economic, P_W) / NORM

    @jit
    def store_episode_metrics(metrics, deaths, vaccinated, health, economic):
        # one env's episode_metrics row from its states' deaths and vaccinations (1-D views)
        sum_deaths, sum_vaccinated = ZERO, ZERO
        for i in range(A):
            sum_deaths += deaths[i]
            sum_vaccinated += vaccinated[i]
        metrics[0] = sum_deaths / F(1e3)
        metrics[1] = sum_vaccinated / US_POP * F100
        metrics[2] = health
        metrics[3] = economic

    @jit
    def record_episode_end(env, tid, t, deaths, vaccinated, planner_health_index,
                           planner_economic_index, episode_metrics,
                           completed_episodes):  # fmt: skip
        # CUDA C's record_episode_end: the step that ends an episode records its metrics
        # (planner thread, after the barrier of the reward body).
        if tid == A and t == L:
            store_episode_metrics(episode_metrics[env], deaths[env], vaccinated[env],
                                  planner_health_index[env], planner_economic_index[env])  # fmt: skip
            completed_episodes[env] += 1

    @jit
    def record_episode_end_flat(env, tid, t, deaths, vaccinated, planner_health_index,
                                planner_economic_index, episode_metrics,
                                completed_episodes):  # fmt: skip
        # record_episode_end on the 1-D views of the fused kernel (FLAT_KERNELS)
        if tid == A and t == L:
            a, m = env * A, env * N_METRICS
            store_episode_metrics(episode_metrics[m:m + N_METRICS], deaths[a:a + A],
                                  vaccinated[a:a + A], planner_health_index[env],
                                  planner_economic_index[env])  # fmt: skip
            completed_episodes[env] += 1

    @jit
    def commit_timestep(env, tid, t, done, timestep):
        # Called right after reward_kernel_body, whose barrier guarantees that every thread
        # has read the time step already.
        if tid == 0:
            timestep[env] = t
            done[env] = 1 if t >= L else 0

    jitted = type(commit_timestep)
    return {name: fn for name, fn in locals().items() if isinstance(fn, jitted)}

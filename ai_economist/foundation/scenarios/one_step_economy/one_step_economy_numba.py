"""The one-step economy's step (Numba): the twin of ``kernels/one_step_economy_step.cu``.

Same kernel name and parameters (the fields of ``gpu_declaration.state_fields`` in order),
device functions named after the numpy functions they mirror (``array_model``,
``tax_brackets``, ``simple_labor``, ``rules``). One block per environment: threads
``0..N-1`` the workers, ``N..N+B-1`` the planner's bracket agents. Sizes come from the
arrays' shapes; arithmetic in float64 as in the numpy model.
"""

from __future__ import annotations

import math

from numba import cuda, float32, float64

from ai_economist.foundation.components.saez_tax import SAEZ_N_ESTIMATION_BINS
from ai_economist.foundation.components.tax_brackets import NEGATIVE_INCOME_ATOL
from ai_economist.foundation.scenarios.one_step_economy.one_step_economy_numba_saez import (
    saez_first_day,
)
from ai_economist.warp_drive.numba_float import mul_rn

MAX_WORKERS = 32
MAX_BRACKETS = 64
SAEZ_BINS = SAEZ_N_ESTIMATION_BINS
SAEZ_EDGES = SAEZ_BINS + 1  # a constant: shared-array sizes must be literals for Numba
AGENT_OWN_DIM = 4  # the entries of a worker's row after the head
STAGE_HEAD = MAX_BRACKETS + 2 + MAX_WORKERS
STAGE_AGENT = AGENT_OWN_DIM * MAX_WORKERS
STAGE_PLANNER = 4 + 3 * MAX_WORKERS


@cuda.jit(device=True)
def bracket_index(income, cutoffs):
    """``searchsorted(cutoffs, income, "right") - 1``, at least 0."""
    count = 0
    for b in range(cutoffs.shape[0]):
        if cutoffs[b] <= income:
            count += 1
    return count - 1 if count > 0 else 0


@cuda.jit(device=True)
def current_rates(b, rate_index, disc_rates, saez_rates, fixed_rates, tax_model_code):
    """Bracket ``b``'s rate: the planner-set index, the Saez rates or the fixed rates."""
    if tax_model_code == 0:
        return disc_rates[rate_index[b]]
    return saez_rates[b] if tax_model_code == 2 else fixed_rates[b]


@cuda.jit(device=True)
def taxes_due(income, cutoffs, rates):
    """``sum_b rate_b * min(size_b, max(0, income - cutoff_b))``."""
    nb = cutoffs.shape[0]
    total = 0.0
    for b in range(nb):
        past = max(0.0, income - cutoffs[b])
        in_bracket = min(cutoffs[b + 1] - cutoffs[b], past) if b + 1 < nb else past
        total += mul_rn(rates[b], in_bracket)  # unfused, as numpy rounds
    return total


@cuda.jit(device=True)
def period_income(coin_endowment, last_coin):
    """``tax_brackets.period_income``: a rounding residue as exactly 0."""
    income = coin_endowment - last_coin
    return 0.0 if abs(income) < NEGATIVE_INCOME_ATOL else income


@cuda.jit(device=True)
def marginal_rate(income, cutoffs, rates):
    """The rate of the income's bracket, 0 for negative incomes (``tax_brackets``)."""
    return 0.0 if income < -NEGATIVE_INCOME_ATOL else rates[bracket_index(income, cutoffs)]


@cuda.jit(device=True)
def labor_step(hours, skill, coin, labor, production, i):
    """``h > 0`` hours set worker ``i``'s labour to ``h`` and pay ``h * skill``."""
    if hours > 0:
        pay = float64(hours) * skill
        coin[i] += pay
        labor[i] = float64(hours)
        production[i] += pay


@cuda.jit(device=True)
def set_rates_from_actions(rate_index, action):
    """0 keeps the index, ``k`` picks rate ``k - 1``."""
    return action - 1 if action > 0 else rate_index


@cuda.jit(device=True)
def checked_action(action, mask, invalid, env):
    """``action`` inside its mask row, else NO-OP (0), counted in ``invalid[env]``."""
    if action < 0 or action >= mask.shape[0] or mask[action] <= 0.0:
        cuda.atomic.add(invalid, env, 1)
        return 0
    return action


@cuda.jit(device=True)
def agent_utilities(coin, labor, agent_reward_code, eta, labor_exponent, labor_cost):
    """Isoelastic coin minus linear labour, or coin minus convex labour."""
    if agent_reward_code == 1:
        if eta == 1.0:
            util_c = math.log(max(1.0, coin))
        else:
            util_c = (math.pow(coin, 1.0 - eta) - 1.0) / (1.0 - eta)
        return util_c - labor * labor_cost
    return coin - math.pow(labor, labor_exponent) * labor_cost


@cuda.jit(device=True)
def get_equality(x):
    """1 - Gini (the exact pairwise form, fewer than 30 agents)."""
    n = x.shape[0]
    if n == 1:
        return 1.0
    diff = 0.0
    total = 0.0
    for i in range(n):
        total += x[i]
        for j in range(n):
            diff += abs(x[i] - x[j])
    unscaled = diff / (2.0 * n * total + 1e-10)
    return 1.0 - unscaled / (float64(n - 1) / float64(n))


@cuda.jit(device=True)
def planner_welfare(coin, production, util, planner_reward_code, equality_weight, equality):
    """Inverse-pre-tax-income-weighted utility, or equality x productivity."""
    n = coin.shape[0]
    if planner_reward_code == 1:
        total = 0.0
        for i in range(n):
            total += coin[i]
        return (equality_weight * equality + (1.0 - equality_weight)) * (total / n)
    wsum = 0.0
    for i in range(n):
        wsum += 1.0 / max(production[i], 1.0)
    value = 0.0
    for i in range(n):
        value += util[i] * ((1.0 / max(production[i], 1.0)) / wsum)
    return value


@cuda.jit(device=True)
def sorted_rank(x, i, n):
    """Where ``np.sort`` puts ``x[i]`` (ties by index)."""
    rank = 0
    for j in range(n):
        if x[j] < x[i] or (x[j] == x[i] and j < i):
            rank += 1
    return rank


@cuda.jit(device=True)
def cycle_head(k, rates_obs, pos, period, sorted_income):
    """Entry ``k`` of the rates, is_first_day, is_tax_day, sorted last incomes / period."""
    nb = rates_obs.shape[0]
    if k < nb:
        return rates_obs[k]
    if k == nb:
        return 1.0 if pos == 1 else 0.0
    if k == nb + 1:
        return 1.0 if pos >= period else 0.0
    return sorted_income[k - nb - 2]


@cuda.jit(device=True)
def agent_observations(k, i, rates_obs, pos, period, sorted_income, n, marginal, skills,
                       skill_scale, t, time_scale):  # fmt: skip
    """Entry ``k`` of worker ``i``'s observation row."""
    head = rates_obs.shape[0] + 2 + n
    if k < head:
        return cycle_head(k, rates_obs, pos, period, sorted_income)
    k -= head
    if k == 0:
        return marginal[i]
    if k == 1:
        return float64(pos) / float64(period)
    if k == 2:
        return skills[i] / skill_scale
    return float64(t) / time_scale


@cuda.jit(device=True)
def planner_observations(k, bracket, rates_obs, pos, period, sorted_income, n, t, time_scale,
                         equality, coin_total, marginal, last_income, last_marginal_rate):  # fmt: skip
    """Entry ``k`` of one bracket agent's row: the planner's observation and the one-hot."""
    head = rates_obs.shape[0] + 2 + n
    if k < head:
        return cycle_head(k, rates_obs, pos, period, sorted_income)
    k -= head
    if k == 0:
        return float64(pos) / float64(period)
    if k == 1:
        return float64(t) / time_scale
    if k == 2:
        return equality
    if k == 3:
        return coin_total / n / 1000.0
    k -= 4
    if k < 3 * n:
        i = k // 3
        c = k - 3 * i
        if c == 0:
            return marginal[i]
        if c == 1:
            return last_income[i] / float64(period)
        return last_marginal_rate[i]
    return 1.0 if k - 3 * n == bracket else 0.0


@cuda.jit(device=True)
def action_masks(a, masked):
    """Entry ``a`` of a mask row: NO-OP always allowed; the other actions unless ``masked``."""
    return 1.0 if a == 0 or not masked else 0.0


@cuda.jit(device=True)
def stage_observations(s_head, s_agent, s_planner, rates_obs, pos, period, sorted_income, n,
                       marginal, skills, skill_scale, t, time_scale, equality, coin_total,
                       last_income, last_marginal_rate):  # fmt: skip
    """Step 4, first half: each distinct entry of the env's observation rows once, as float32:
    the head (every row's), each worker's own four (``s_agent[4 i + j]``), the planner's own
    four plus three per worker (every bracket row's, before its one-hot)."""
    head = rates_obs.shape[0] + 2 + n
    tid, threads = cuda.threadIdx.x, cuda.blockDim.x
    for k in range(tid, head, threads):
        s_head[k] = cycle_head(k, rates_obs, pos, period, sorted_income)
    for j in range(AGENT_OWN_DIM):  # one pass per kind: a warp's threads take one branch
        for i in range(tid, n, threads):
            s_agent[AGENT_OWN_DIM * i + j] = agent_observations(
                head + j, i, rates_obs, pos, period, sorted_income, n, marginal, skills,
                skill_scale, t, time_scale,
            )  # fmt: skip
    for k in range(tid, 4, threads):  # the day, time, equality, mean coin
        s_planner[k] = planner_observations(head + k, -1, rates_obs, pos, period, sorted_income,
                                            n, t, time_scale, equality, coin_total, marginal,
                                            last_income, last_marginal_rate)  # fmt: skip
    for c in range(3):  # per worker: marginal rate, last income, last marginal rate
        for i in range(tid, n, threads):
            k = 4 + 3 * i + c
            s_planner[k] = planner_observations(head + k, -1, rates_obs, pos, period,
                                                sorted_income, n, t, time_scale, equality,
                                                coin_total, marginal, last_income,
                                                last_marginal_rate)  # fmt: skip


@cuda.jit(device=True)
def write_observations_and_masks(env, pos, new_pos, t, s_head, s_agent, s_planner,
                                 mask_first_step, observations_a, observations_p, action_mask_a,
                                 action_mask_p):  # fmt: skip
    """Step 4, second half: env ``env``'s observations and masks from the staged entries, one
    row per thread (the CUDA C twin has the whole block write entry by entry; here the
    runtime-shaped index arithmetic of that costs more than the rows' scattered stores). Only
    the masks that change are rewritten."""
    tid = cuda.threadIdx.x
    n, nb = observations_a.shape[1], observations_p.shape[1]
    head = nb + 2 + n
    planner_shared = 4 + 3 * n
    if tid < n:
        row = observations_a[env, tid]
        for k in range(head):
            row[k] = s_head[k]
        for j in range(row.shape[0] - head):
            row[head + j] = s_agent[AGENT_OWN_DIM * tid + j]
        if mask_first_step != 0 and t == 1:  # the workers' actions open on step 1
            mask = action_mask_a[env, tid]
            for a in range(mask.shape[0]):
                mask[a] = action_masks(a, False)
    elif tid < n + nb:
        b = tid - n
        row = observations_p[env, b]
        for k in range(head):
            row[k] = s_head[k]
        for j in range(planner_shared):
            row[head + j] = s_planner[j]
        for j in range(nb):
            row[head + planner_shared + j] = 1.0 if j == b else 0.0
        if (pos == 1) != (new_pos == 1):  # the rates open on a first day only
            mask = action_mask_p[env, b]
            for a in range(mask.shape[0]):
                mask[a] = action_masks(a, new_pos != 1)


@cuda.jit
def one_step_economy_step(
    _timestep_, _done_, tax_cycle_pos, rate_index, rates_obs, coin, labor, production,
    last_coin, last_income, last_marginal_rate, utility, welfare, total_collected_taxes,
    observations_a, observations_p, action_mask_a, action_mask_p, sampled_actions_a,
    sampled_actions_p, rewards_a, rewards_p, invalid_actions, completed_episodes,
    episode_equality, episode_productivity, episode_welfare, episode_taxes, episode_coin,
    episode_labor, skills, cutoffs, disc_rates, fixed_rates, period, episode_length,
    tax_model_code, mask_first_step, agent_reward_code, planner_reward_code, isoelastic_eta,
    labor_exponent, labor_cost, equality_weight, skill_scale, time_scale, saez_buffer,
    saez_count, saez_next, saez_reached, saez_draws, saez_elas, saez_log_z0, saez_rates,
    saez_running_avg, saez_bin_edges, saez_bin_sizes, bracket_sizes, rate_min, rate_max,
    pareto_weight_code, saez_fixed_elas, rng_seed,
):  # fmt: skip
    s_rates = cuda.shared.array(MAX_BRACKETS, float64)
    s_paid = cuda.shared.array(MAX_WORKERS, float64)
    s_util = cuda.shared.array(MAX_WORKERS, float64)
    s_sorted = cuda.shared.array(MAX_WORKERS, float64)
    s_marginal = cuda.shared.array(MAX_WORKERS, float64)
    s_env = cuda.shared.array(4, float64)  # lump sum, equality, welfare, total coin
    s_head = cuda.shared.array(STAGE_HEAD, float32)  # the observations' distinct entries
    s_agent = cuda.shared.array(STAGE_AGENT, float32)
    s_planner = cuda.shared.array(STAGE_PLANNER, float32)
    # the Saez formula's scratch: one declaration a line (the simulator keys them by line)
    s_counts = cuda.shared.array(SAEZ_BINS, float64)
    s_stats = cuda.shared.array(4, float64)
    s_gz = cuda.shared.array(SAEZ_EDGES, float64)
    s_pz = cuda.shared.array(SAEZ_EDGES, float64)
    s_az = cuda.shared.array(SAEZ_EDGES, float64)
    s_taus = cuda.shared.array(SAEZ_EDGES, float64)
    env = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    n = coin.shape[1]
    nb = cutoffs.shape[0]
    is_worker = tid < n
    is_bracket = (not is_worker) and tid < n + nb
    b = tid - n
    pos = tax_cycle_pos[env]
    t = _timestep_[env] + 1
    first_day = pos == 1
    tax_day = pos >= period
    new_pos = 1 if tax_day else pos + 1
    welfare_before = welfare[env]
    e_coin, e_labor, e_production = coin[env], labor[env], production[env]
    e_last_coin, e_last_income = last_coin[env], last_income[env]
    saez = tax_model_code == 2

    # 0. the Saez model sets this period's rates on its first day
    if saez and first_day:
        if tid == 0:
            saez_first_day(
                env, saez_buffer, saez_count, saez_reached, saez_draws, saez_elas, saez_log_z0,
                saez_rates, saez_running_avg, saez_bin_edges, saez_bin_sizes, cutoffs,
                bracket_sizes, rate_min, rate_max, pareto_weight_code, saez_fixed_elas, rng_seed,
                s_counts, s_stats, s_gz, s_pz, s_az, s_taus,
            )  # fmt: skip
        cuda.syncthreads()

    # 1. actions (checked against the masks): labor_step; on a first day the planner's rates
    if is_worker:
        hours = checked_action(sampled_actions_a[env, tid], action_mask_a[env, tid],
                               invalid_actions, env)  # fmt: skip
        labor_step(hours, skills[tid], e_coin, e_labor, e_production, tid)
    elif is_bracket:
        action = checked_action(sampled_actions_p[env, b], action_mask_p[env, b],
                                invalid_actions, env)  # fmt: skip
        if first_day and tax_model_code == 0:
            rate_index[env, b] = set_rates_from_actions(rate_index[env, b], action)
        rate = current_rates(b, rate_index[env], disc_rates, saez_rates[env], fixed_rates,
                             tax_model_code)  # fmt: skip
        s_rates[b] = rate
        if first_day:
            rates_obs[env, b] = rate
    cuda.syncthreads()

    # 2. tax_step (enact_taxes): bills, the lump sum, last incomes
    if tax_day:
        income = 0.0
        if is_worker:
            income = period_income(e_coin[tid], e_last_coin[tid])
            s_paid[tid] = min(e_coin[tid], taxes_due(income, cutoffs, s_rates))
        cuda.syncthreads()
        if tid == 0:
            revenue = 0.0
            for i in range(n):
                revenue += s_paid[i]
            s_env[0] = revenue / n
            total_collected_taxes[env] += revenue
        cuda.syncthreads()
        if is_worker:
            e_coin[tid] = e_coin[tid] - s_paid[tid] + s_env[0]
            e_last_coin[tid] = e_coin[tid]
            e_last_income[tid] = income
            last_marginal_rate[env, tid] = marginal_rate(income, cutoffs, s_rates)
            if saez:  # gpu_saez.saez_record: this tax day's samples into the ring
                slot = (saez_next[env] + tid) % saez_buffer.shape[1]
                saez_buffer[env, slot, 0] = income
                saez_buffer[env, slot, 1] = last_marginal_rate[env, tid]
    cuda.syncthreads()

    # 3. optimization_metrics: utilities, the planner's welfare; sorted incomes, marginal rates
    if is_worker:
        s_util[tid] = agent_utilities(e_coin[tid], e_labor[tid], agent_reward_code,
                                      isoelastic_eta, labor_exponent, labor_cost)  # fmt: skip
        s_sorted[sorted_rank(e_last_income, tid, n)] = e_last_income[tid] / float64(period)
        s_marginal[tid] = marginal_rate(e_coin[tid] - e_last_coin[tid], cutoffs, s_rates)
    cuda.syncthreads()
    if tid == 0:
        total = 0.0
        for i in range(n):
            total += e_coin[i]
        s_env[3] = total
        s_env[1] = get_equality(e_coin)
        s_env[2] = planner_welfare(e_coin, e_production, s_util, planner_reward_code,
                                   equality_weight, s_env[1])  # fmt: skip
    cuda.syncthreads()

    # 4. rewards, then the observations and masks of the new state
    if is_worker:
        rewards_a[env, tid] = s_util[tid] - utility[env, tid]
        utility[env, tid] = s_util[tid]
    elif is_bracket:
        rewards_p[env, b] = s_env[2] - welfare_before
    stage_observations(
        s_head, s_agent, s_planner, rates_obs[env], new_pos, period, s_sorted, n, s_marginal,
        skills, skill_scale, t, time_scale, s_env[1], s_env[3], last_income[env],
        last_marginal_rate[env],
    )  # fmt: skip
    cuda.syncthreads()
    write_observations_and_masks(
        env, pos, new_pos, t, s_head, s_agent, s_planner, mask_first_step, observations_a,
        observations_p, action_mask_a, action_mask_p,
    )  # fmt: skip

    # 5. per-env bookkeeping and the metrics of an episode that ends here
    done = t >= episode_length
    if is_worker and done:
        episode_coin[env, tid] = e_coin[tid]
        episode_labor[env, tid] = e_labor[tid]
    if tid == 0:
        welfare[env] = s_env[2]
        tax_cycle_pos[env] = new_pos
        _timestep_[env] = t
        if saez and tax_day:
            saez_next[env] = (saez_next[env] + n) % saez_buffer.shape[1]
            saez_count[env] = min(saez_count[env] + n, saez_buffer.shape[1])
        if done:
            _done_[env] = 1
            episode_equality[env] = s_env[1]
            episode_productivity[env] = s_env[3]
            episode_welfare[env] = s_env[2]
            episode_taxes[env] = total_collected_taxes[env]
            completed_episodes[env] += 1

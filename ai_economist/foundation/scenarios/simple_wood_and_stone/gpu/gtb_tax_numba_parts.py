"""The GPU tax's device functions (Numba): the twins of ``kernels/gtb_tax.cuh`` and of
:mod:`.tax_reference` (``array_tax``), named after the numpy functions.

Per bracket (threads ``0..B-1``: the rates), per agent (threads ``0..A-1``: income, tax,
observations) or per planner agent (the bracket agents' picks, their rows and masks); the
sum of the taxes on one thread in numpy's order (:func:`numpy_sum`). The bracket arithmetic
(``taxes_due``, ``marginal_rate``) and the Saez model (``saez_first_day``) are the one-step
economy's device functions, imported, not copied.
"""

from __future__ import annotations

from numba import float32, float64

from ai_economist.foundation.scenarios.one_step_economy.one_step_economy_numba import (
    marginal_rate,
    period_income,
    taxes_due,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import tax_state as ts
from ai_economist.warp_drive.numba_loops import device_jit

TP_RATE_MAX, TP_WARMUP, TP_SLOPE = (ts.TP[k] for k in ("rate_max", "anneal_warmup", "anneal_slope"))
TI_MODEL, TI_PLANNER, TI_PERIOD, TI_N_RATES, TI_ANNEALING = (
    ts.TI[k] for k in ("tax_model_code", "planner_sets_rates", "period", "n_rates", "annealing")
)
TI_OBS_A, TI_OBS_P, TI_OBS_PA, TI_STRIDE_PA = (
    ts.TI[k] for k in ("obs_offset_a", "obs_offset_p", "obs_offset_pa", "obs_stride_pa")
)
COIN = 0


@device_jit
def annealed_tax_limit(completions, warmup, slope, final_max):
    """``clip(slope * (completions - warmup), 0, 1) * final_max`` (``utils``)."""
    v = slope * (float64(completions) - warmup)
    v = 0.0 if v < 0.0 else (1.0 if v > 1.0 else v)
    return v * final_max


@device_jit
def rate_limit(completions, params, iparams):
    """``array_tax.rate_limit``: the highest rate after ``completions`` episodes."""
    if iparams[TI_ANNEALING] == 0:
        return params[TP_RATE_MAX]
    return annealed_tax_limit(completions, params[TP_WARMUP], params[TP_SLOPE],
                              params[TP_RATE_MAX])  # fmt: skip


@device_jit
def current_rates(e, b, tax_rate_index, disc_rates, fixed_rates, saez_rates, limit, iparams):
    """``array_tax.current_rates`` of bracket ``b``: the planner's pick, or the fixed / Saez
    schedule capped at ``limit``."""
    model = iparams[TI_MODEL]
    if model == 0:
        return disc_rates[tax_rate_index[e, b]]
    r = saez_rates[e, b] if model == 2 else fixed_rates[b]
    return min(r, limit)


@device_jit
def numpy_sum(x, n):
    """``np.sum`` of ``x[:n]`` in numpy's order (pairwise: 8 accumulators from 8 values on,
    ``n <= 128``)."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += x[i]
        return res
    r0, r1, r2, r3 = x[0], x[1], x[2], x[3]
    r4, r5, r6, r7 = x[4], x[5], x[6], x[7]
    i = 8
    while i < n - n % 8:
        r0 += x[i]
        r1 += x[i + 1]
        r2 += x[i + 2]
        r3 += x[i + 3]
        r4 += x[i + 4]
        r5 += x[i + 5]
        r6 += x[i + 6]
        r7 += x[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += x[i]
        i += 1
    return res


@device_jit
def tax_reset(e, tid, tax_cycle_pos, tax_rate_index, tax_rates_obs, tax_rate_completions,
              last_coin, last_income, last_marginal_rate, total_collected, last_lump_sum,
              saez_rates, saez_running_avg, inventory, escrow, disc_rates, fixed_rates, params,
              iparams):  # fmt: skip
    """``array_tax.reset_envs`` of env ``e`` (agent ``tid``'s records, bracket ``tid``'s rate;
    ``tax_rate_completions`` set before): a new cycle, coin endowments as ``last_coin``."""
    n, nb = last_coin.shape[1], tax_rates_obs.shape[1]
    if tid < n:
        last_coin[e, tid] = inventory[e, tid, COIN] + escrow[e, tid, COIN]
        last_income[e, tid] = 0.0
        last_marginal_rate[e, tid] = 0.0
    if tid < nb:
        tax_rate_index[e, tid] = 0
        if iparams[TI_MODEL] == 2:
            saez_rates[e, tid] = saez_running_avg[e, tid]
        limit = rate_limit(tax_rate_completions[e], params, iparams)
        tax_rates_obs[e, tid] = current_rates(e, tid, tax_rate_index, disc_rates, fixed_rates,
                                              saez_rates, limit, iparams)  # fmt: skip
    if tid == 0:
        tax_cycle_pos[e] = 1
        total_collected[e] = 0.0
        last_lump_sum[e] = 0.0


@device_jit
def fill_rates(e, tid, tax_rate_index, tax_rate_completions, saez_rates, disc_rates,
               fixed_rates, s_rates, params, iparams):  # fmt: skip
    """``array_tax.current_rates`` of bracket ``tid`` into ``s_rates[tid]``."""
    if tid < s_rates.shape[0] and tid < tax_rate_index.shape[1]:
        limit = rate_limit(tax_rate_completions[e], params, iparams)
        s_rates[tid] = current_rates(e, tid, tax_rate_index, disc_rates, fixed_rates,
                                     saez_rates, limit, iparams)  # fmt: skip


@device_jit
def set_rates(e, tid, planner_actions, tax_cycle_pos, tax_rate_index, tax_rates_obs,
              tax_rate_completions, saez_rates, disc_rates, fixed_rates, s_rates, params,
              iparams):  # fmt: skip
    """The first half of ``array_tax.tax_step`` for bracket ``tid``: on a period's first step
    the planner's pick (``k > 0`` sets rate ``k - 1``), then the bracket's rate into
    ``s_rates`` (and ``tax_rates_obs`` on a first step)."""
    if tid < tax_rates_obs.shape[1]:
        first = tax_cycle_pos[e] == 1
        if first and iparams[TI_PLANNER] == 1 and planner_actions[e, tid] > 0:
            tax_rate_index[e, tid] = planner_actions[e, tid] - 1
        fill_rates(e, tid, tax_rate_index, tax_rate_completions, saez_rates, disc_rates,
                   fixed_rates, s_rates, params, iparams)  # fmt: skip
        if first:
            tax_rates_obs[e, tid] = s_rates[tid]


@device_jit
def enact_taxes(e, tid, tax_cycle_pos, inventory, escrow, last_coin, last_income,
                last_marginal_rate, cutoffs, s_rates, s_paid, iparams):  # fmt: skip
    """``tax_brackets.enact_taxes`` of agent ``tid`` on a tax day: its income since the last
    tax day, the tax paid (at most its inventory coin) into ``s_paid``, its marginal rate."""
    if tid < last_coin.shape[1] and tax_cycle_pos[e] >= iparams[TI_PERIOD]:
        inv = inventory[e, tid, COIN]
        income = period_income(inv + escrow[e, tid, COIN], last_coin[e, tid])
        s_paid[tid] = min(inv, taxes_due(income, cutoffs, s_rates))
        last_income[e, tid] = income
        last_marginal_rate[e, tid] = marginal_rate(income, cutoffs, s_rates)


@device_jit
def redistribute(e, tid, tax_cycle_pos, inventory, escrow, last_coin, s_paid, s_lump, iparams):
    """The rest of ``enact_taxes`` on a tax day (thread 0 first: the revenue in numpy's order
    into ``s_lump[0]`` after a barrier): agent ``tid`` pays and receives the lump sum."""
    n = last_coin.shape[1]
    if tid < n and tax_cycle_pos[e] >= iparams[TI_PERIOD]:
        lump = s_lump[0]
        inv = inventory[e, tid, COIN] - s_paid[tid] + lump
        inventory[e, tid, COIN] = inv
        last_coin[e, tid] = inv + escrow[e, tid, COIN]


@device_jit
def collect_revenue(e, tax_cycle_pos, total_collected, last_lump_sum, s_paid, s_lump, n, iparams):
    """Thread 0 on a tax day: the revenue (``paid.sum()``), its lump sum and the total."""
    if tax_cycle_pos[e] >= iparams[TI_PERIOD]:
        revenue = numpy_sum(s_paid, n)
        s_lump[0] = revenue / n
        total_collected[e] += revenue
        last_lump_sum[e] = revenue / n


@device_jit
def saez_record(e, tid, tax_cycle_pos, last_income, last_marginal_rate, saez_buffer, saez_next,
                iparams):  # fmt: skip
    """``gpu_saez.saez_record`` of agent ``tid`` on a tax day (its sample into the ring; thread
    0 moves the ring's index after a barrier: :func:`advance_cycle`)."""
    if tid < last_income.shape[1] and tax_cycle_pos[e] >= iparams[TI_PERIOD]:
        slot = (saez_next[e] + tid) % saez_buffer.shape[1]
        saez_buffer[e, slot, 0] = last_income[e, tid]
        saez_buffer[e, slot, 1] = last_marginal_rate[e, tid]


@device_jit
def advance_cycle(e, tax_cycle_pos, saez_buffer, saez_next, saez_count, n, iparams):
    """Thread 0 at the end of ``tax_step``: the next cycle position (1 after a tax day); the
    Saez ring's index and count after a tax day's samples."""
    if tax_cycle_pos[e] >= iparams[TI_PERIOD]:
        tax_cycle_pos[e] = 1
        if iparams[TI_MODEL] == 2:
            size = saez_buffer.shape[1]
            saez_next[e] = (saez_next[e] + n) % size
            saez_count[e] = min(saez_count[e] + n, size)
    else:
        tax_cycle_pos[e] += 1


@device_jit
def tax_sorted_rank(x, e, i, n):
    """Where ``np.sort`` puts ``x[e, i]`` among ``x[e, :n]`` (ties by index)."""
    rank = 0
    for j in range(n):
        if x[e, j] < x[e, i] or (x[e, j] == x[e, i] and j < i):
            rank += 1
    return rank


@device_jit
def common_block(obs, e, row, off, tax_cycle_pos, tax_rates_obs, last_income, period):
    """``curr_rates``, ``is_first_day``, ``is_tax_day``, ``last_incomes`` (sorted, / period)
    at ``obs[e, row, off:]``; returns the next offset."""
    nb, n = tax_rates_obs.shape[1], last_income.shape[1]
    pos = tax_cycle_pos[e]
    for b in range(nb):
        obs[e, row, off + b] = float32(tax_rates_obs[e, b])
    k = off + nb
    obs[e, row, k] = float32(1.0 if pos == 1 else 0.0)
    obs[e, row, k + 1] = float32(1.0 if pos >= period else 0.0)
    k += 2
    for i in range(n):
        obs[e, row, k + tax_sorted_rank(last_income, e, i, n)] = float32(last_income[e, i] / period)
    return k + n


@device_jit
def income_so_far(e, i, inventory, escrow, last_coin):
    """Agent ``i``'s income since the last tax day (its coin endowment minus ``last_coin``)."""
    return inventory[e, i, COIN] + escrow[e, i, COIN] - last_coin[e, i]


@device_jit
def agent_observations(e, tid, obs, tax_cycle_pos, tax_rates_obs, last_income, last_coin,
                       inventory, escrow, cutoffs, s_rates, iparams):  # fmt: skip
    """Agent ``tid``'s block (``AGENT_FIELDS``: the common fields, its ``marginal_rate``
    on its income so far, ``tax_phase``) at ``obs_offset_a`` of its row."""
    if tid < last_coin.shape[1]:
        period = iparams[TI_PERIOD]
        k = common_block(obs, e, tid, iparams[TI_OBS_A], tax_cycle_pos, tax_rates_obs,
                         last_income, period)  # fmt: skip
        income = income_so_far(e, tid, inventory, escrow, last_coin)
        obs[e, tid, k] = float32(marginal_rate(income, cutoffs, s_rates))
        obs[e, tid, k + 1] = float32(float64(tax_cycle_pos[e]) / float64(period))


@device_jit
def planner_observations(e, row, obs, tax_cycle_pos, tax_rates_obs, last_income,
                         last_marginal_rate, last_coin, inventory, escrow, cutoffs, s_rates,
                         iparams):  # fmt: skip
    """Planner row ``row``: its flat block (``PLANNER_FIELDS``) at ``obs_offset_p`` and every
    agent's ``p<i>`` fields (``PLANNER_AGENT_FIELDS``) at ``obs_offset_pa + i * stride``."""
    period = iparams[TI_PERIOD]
    k = common_block(obs, e, row, iparams[TI_OBS_P], tax_cycle_pos, tax_rates_obs, last_income,
                     period)  # fmt: skip
    obs[e, row, k] = float32(float64(tax_cycle_pos[e]) / float64(period))
    for i in range(last_coin.shape[1]):
        off = iparams[TI_OBS_PA] + i * iparams[TI_STRIDE_PA]
        income = income_so_far(e, i, inventory, escrow, last_coin)
        obs[e, row, off] = float32(marginal_rate(income, cutoffs, s_rates))
        obs[e, row, off + 1] = float32(last_income[e, i] / period)
        obs[e, row, off + 2] = float32(last_marginal_rate[e, i])


@device_jit
def planner_masks(e, row, mask, tax_cycle_pos, completions, disc_rates, params, iparams):
    """``array_tax.planner_masks`` of bracket agent ``row``: NO-OP, then the rates allowed on
    a period's first step under the annealed limit (1 for a planner that sets no rates)."""
    mask[e, row, 0] = float32(1.0)
    if iparams[TI_PLANNER] == 0:
        return
    first = tax_cycle_pos[e] == 1
    nr = iparams[TI_N_RATES]
    top = 0.0
    for r in range(nr):
        top = max(top, abs(disc_rates[r]))
    limit = top
    if iparams[TI_ANNEALING] == 1:
        limit = annealed_tax_limit(completions, params[TP_WARMUP], params[TP_SLOPE], top)
    for r in range(nr):
        mask[e, row, 1 + r] = float32(1.0 if first and abs(disc_rates[r]) <= limit else 0.0)

"""The GPU tax's step phase (Numba), one device function that both ``gtb_tax_step``
(:mod:`.gtb_tax_numba`) and ``gtb_economy_step`` (:mod:`.gtb_economy_numba`) run: the Saez
rates of a period's first step, then ``array_tax.tax_step`` (the planner's picks, a tax day's
taxes, revenue and lump sums, the Saez buffer, the cycle), behind barriers.
"""

from __future__ import annotations

from numba import cuda, float64

from ai_economist.foundation.components.saez_tax import SAEZ_N_ESTIMATION_BINS
from ai_economist.foundation.scenarios.one_step_economy.one_step_economy_numba_saez import (
    saez_first_day,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_tax_numba_parts import (
    TI_MODEL,
    advance_cycle,
    collect_revenue,
    enact_taxes,
    fill_rates,
    rate_limit,
    redistribute,
    saez_record,
    set_rates,
    tax_reset,
)
from ai_economist.warp_drive.numba_loops import device_jit

MAX_AGENTS = 32
SAEZ_BINS = SAEZ_N_ESTIMATION_BINS
SAEZ_EDGES = SAEZ_BINS + 1  # shared-array sizes must be literals for Numba
N_EDGE_ROWS = 4  # the Saez formula's per-edge scratch: g(z), p(z), a(z), the taus


@device_jit
def reset_rates(e, tid, tax_cycle_pos, tax_rate_index, tax_rates_obs, tax_rate_completions,
                last_coin, last_income, last_marginal_rate, total_collected, last_lump_sum,
                saez_rates, saez_running_avg, inventory, escrow, tax_disc_rates, tax_fixed_rates,
                s_rates, tax_params, tax_iparams):  # fmt: skip
    """The tax's reset of one env (``tax_reset``; ``tax_rate_completions`` as the caller
    left it) and this period's rates in ``s_rates`` (``fill_rates``), then a barrier."""
    tax_reset(e, tid, tax_cycle_pos, tax_rate_index, tax_rates_obs, tax_rate_completions,
              last_coin, last_income, last_marginal_rate, total_collected, last_lump_sum,
              saez_rates, saez_running_avg, inventory, escrow, tax_disc_rates, tax_fixed_rates,
              tax_params, tax_iparams)  # fmt: skip
    fill_rates(e, tid, tax_rate_index, tax_rate_completions, saez_rates, tax_disc_rates,
               tax_fixed_rates, s_rates, tax_params, tax_iparams)  # fmt: skip
    cuda.syncthreads()


@device_jit
def saez_rates_of_period(e, tid, tax_cycle_pos, tax_rate_completions, saez_buffer, saez_count,
                         saez_reached, saez_draws, saez_elas, saez_log_z0, saez_rates,
                         saez_running_avg, tax_cutoffs, tax_params, tax_iparams, saez_bin_edges,
                         saez_bin_sizes, bracket_sizes, rate_min, pareto_weight_code,
                         saez_fixed_elas, rng_seed):  # fmt: skip
    """``array_tax.saez_between``: the Saez model's rates on a period's first step (thread
    0, then a barrier; nothing otherwise)."""
    s_counts = cuda.shared.array(SAEZ_BINS, float64)
    s_stats = cuda.shared.array(4, float64)
    s_edges = cuda.shared.array((N_EDGE_ROWS, SAEZ_EDGES), float64)
    if tax_iparams[TI_MODEL] == 2 and tax_cycle_pos[e] == 1:
        if tid == 0:
            limit = rate_limit(tax_rate_completions[e], tax_params, tax_iparams)
            saez_first_day(e, saez_buffer, saez_count, saez_reached, saez_draws, saez_elas,
                           saez_log_z0, saez_rates, saez_running_avg, saez_bin_edges,
                           saez_bin_sizes, tax_cutoffs, bracket_sizes, rate_min, limit,
                           pareto_weight_code, saez_fixed_elas, rng_seed, s_counts, s_stats,
                           s_edges[0], s_edges[1], s_edges[2], s_edges[3])  # fmt: skip
        cuda.syncthreads()


@device_jit
def tax_phase(e, tid, sampled_actions_p, tax_cycle_pos, tax_rate_index, tax_rates_obs,
              tax_rate_completions, last_coin, last_income, last_marginal_rate, total_collected,
              last_lump_sum, inventory, escrow, tax_cutoffs, tax_disc_rates, tax_fixed_rates,
              tax_params, tax_iparams, saez, s_rates):  # fmt: skip
    """The tax's step of one env (all threads; the caller's barrier precedes it, none follows
    ``advance_cycle`` on thread 0); fills ``s_rates``. ``saez``: the Saez model's fields in
    the kernels' order (``saez_buffer`` .. ``saez_running_avg``, ``saez_bin_edges`` ..
    ``rng_seed``, without ``rate_max``)."""
    (saez_buffer, saez_count, saez_next, saez_reached, saez_draws, saez_elas, saez_log_z0,
     saez_rates, saez_running_avg, saez_bin_edges, saez_bin_sizes, bracket_sizes, rate_min,
     pareto_weight_code, saez_fixed_elas, rng_seed) = saez  # fmt: skip
    s_paid = cuda.shared.array(MAX_AGENTS, float64)
    s_lump = cuda.shared.array(1, float64)
    n = last_coin.shape[1]
    saez_rates_of_period(e, tid, tax_cycle_pos, tax_rate_completions, saez_buffer, saez_count,
                         saez_reached, saez_draws, saez_elas, saez_log_z0, saez_rates,
                         saez_running_avg, tax_cutoffs, tax_params, tax_iparams, saez_bin_edges,
                         saez_bin_sizes, bracket_sizes, rate_min, pareto_weight_code,
                         saez_fixed_elas, rng_seed)  # fmt: skip
    set_rates(e, tid, sampled_actions_p, tax_cycle_pos, tax_rate_index, tax_rates_obs,
              tax_rate_completions, saez_rates, tax_disc_rates, tax_fixed_rates, s_rates,
              tax_params, tax_iparams)  # fmt: skip
    cuda.syncthreads()
    enact_taxes(e, tid, tax_cycle_pos, inventory, escrow, last_coin, last_income,
                last_marginal_rate, tax_cutoffs, s_rates, s_paid, tax_iparams)  # fmt: skip
    cuda.syncthreads()
    if tid == 0:
        collect_revenue(e, tax_cycle_pos, total_collected, last_lump_sum, s_paid, s_lump, n,
                        tax_iparams)  # fmt: skip
    cuda.syncthreads()
    redistribute(e, tid, tax_cycle_pos, inventory, escrow, last_coin, s_paid, s_lump,
                 tax_iparams)  # fmt: skip
    if tax_iparams[TI_MODEL] == 2:
        saez_record(e, tid, tax_cycle_pos, last_income, last_marginal_rate, saez_buffer,
                    saez_next, tax_iparams)  # fmt: skip
    cuda.syncthreads()
    if tid == 0:
        advance_cycle(e, tax_cycle_pos, saez_buffer, saez_next, saez_count, n, tax_iparams)

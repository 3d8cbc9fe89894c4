"""The GPU tax as Numba ``@cuda.jit`` kernels: the twins of ``kernels/gtb_tax_step.cu`` and of
``GatherTradeBuildTaxGpu.reference_step`` / ``reference_reset`` (:mod:`.tax_env`), device
functions in :mod:`.gtb_tax_numba_parts` and the one-step economy's Saez model.

One block per env: threads ``0..A-1`` the agents, ``A..A+P-1`` the planner's agents (its
rows and masks), threads ``0..B-1`` also the brackets' rates; thread 0 the Saez formula and
the revenue. Both kernels take the fields of ``GatherTradeBuildTaxGpu`` in declaration order.
"""

from __future__ import annotations

from numba import cuda, float32, float64

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import tax_state as ts
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_tax_numba_parts import (
    COIN,
    agent_observations,
    planner_masks,
    planner_observations,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_tax_numba_phase import (
    MAX_AGENTS,
    SAEZ_BINS,
    SAEZ_EDGES,
    reset_rates,
    tax_phase,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.numba_kernels import (
    RESET,
    STEP,
    field_kernel,
)
from ai_economist.warp_drive.numba_float import mul_rn
from ai_economist.warp_drive.numba_loops import device_jit

MAX_BRACKETS = ts.MAX_BRACKETS
__all__ = ["MAX_AGENTS", "MAX_BRACKETS", "SAEZ_BINS", "SAEZ_EDGES", "gtb_tax_reset", "gtb_tax_step"]
INCOME_LEVELS = 4  # tax_env.INCOME_LEVELS


@device_jit
def observe(e, tid, n_hot, completions, tax_cycle_pos, tax_rates_obs, last_coin, last_income,
            last_marginal_rate, inventory, escrow, observations_a, observations_p,
            action_mask_a, action_mask_p, tax_cutoffs, tax_disc_rates, s_rates, params,
            iparams):  # fmt: skip
    """``GatherTradeBuildTaxGpu._observe`` of one env (after ``s_rates`` were filled)."""
    n = last_coin.shape[1]
    agent_observations(e, tid, observations_a, tax_cycle_pos, tax_rates_obs, last_income,
                       last_coin, inventory, escrow, tax_cutoffs, s_rates, iparams)  # fmt: skip
    if tid < n:
        for k in range(action_mask_a.shape[2]):
            action_mask_a[e, tid, k] = float32(1.0)
    row = tid - n
    if 0 <= row < observations_p.shape[1]:
        planner_observations(e, row, observations_p, tax_cycle_pos, tax_rates_obs, last_income,
                             last_marginal_rate, last_coin, inventory, escrow, tax_cutoffs,
                             s_rates, iparams)  # fmt: skip
        planner_masks(e, row, action_mask_p, tax_cycle_pos, completions[e], tax_disc_rates,
                      params, iparams)  # fmt: skip
        width = observations_p.shape[2]
        for j in range(n_hot):
            observations_p[e, row, width - n_hot + j] = float32(1.0 if j == row else 0.0)


@device_jit
def income_step(e, tid, action, inventory, escrow, income_unit):
    """``GatherTradeBuildTaxGpu.income_step`` of agent ``tid``."""
    if 1 <= action <= INCOME_LEVELS:
        inventory[e, tid, COIN] += mul_rn(float64(action), income_unit[tid])  # unfused
    elif action == INCOME_LEVELS + 1:
        half = 0.5 * inventory[e, tid, COIN]
        inventory[e, tid, COIN] -= half
        escrow[e, tid, COIN] += half
    elif action == INCOME_LEVELS + 2:
        inventory[e, tid, COIN] += escrow[e, tid, COIN]
        escrow[e, tid, COIN] = 0.0


@device_jit
def tax_kernel(mode, _timestep_, _done_, completions, tax_cycle_pos, tax_rate_index, tax_rates_obs,
               tax_rate_completions, last_coin, last_income, last_marginal_rate, total_collected,
               last_lump_sum, saez_buffer, saez_count, saez_next, saez_reached, saez_draws,
               saez_elas, saez_log_z0, saez_rates, saez_running_avg, inventory, escrow,
               observations_a, observations_p, action_mask_a, action_mask_p, sampled_actions_a,
               sampled_actions_p, rewards_a, rewards_p, start_coin, income_unit, episode_length,
               tax_cutoffs, tax_disc_rates, tax_fixed_rates, tax_params, tax_iparams,
               saez_bin_edges, saez_bin_sizes, bracket_sizes, rate_min, rate_max,
               pareto_weight_code, saez_fixed_elas, rng_seed):  # fmt: skip
    """The tax's kernels (``mode`` 0: ``gtb_tax_reset``, 1: ``gtb_tax_step``; see the module
    docstring)."""
    s_rates = cuda.shared.array(MAX_BRACKETS, float64)
    e, tid = cuda.blockIdx.x, cuda.threadIdx.x
    if mode == RESET:  # gtb_tax_reset
        if _timestep_[e] != 0:
            return
        n = last_coin.shape[1]
        if tid < n:
            for g in range(inventory.shape[2]):
                inventory[e, tid, g] = 0.0
                escrow[e, tid, g] = 0.0
            inventory[e, tid, COIN] = start_coin[tid]
        if tid == 0:
            tax_rate_completions[e] = completions[e]
        cuda.syncthreads()
        reset_rates(e, tid, tax_cycle_pos, tax_rate_index, tax_rates_obs, tax_rate_completions,
                    last_coin, last_income, last_marginal_rate, total_collected, last_lump_sum,
                    saez_rates, saez_running_avg, inventory, escrow, tax_disc_rates,
                    tax_fixed_rates, s_rates, tax_params, tax_iparams)  # fmt: skip
    else:  # gtb_tax_step
        saez = (saez_buffer, saez_count, saez_next, saez_reached, saez_draws, saez_elas, saez_log_z0,
                saez_rates, saez_running_avg, saez_bin_edges, saez_bin_sizes, bracket_sizes,
                rate_min, pareto_weight_code, saez_fixed_elas, rng_seed)  # fmt: skip
        n = last_coin.shape[1]
        if tid == 0:
            tax_rate_completions[e] = completions[e]
        if tid < n:
            income_step(e, tid, sampled_actions_a[e, tid], inventory, escrow, income_unit)
        cuda.syncthreads()
        tax_phase(e, tid, sampled_actions_p, tax_cycle_pos, tax_rate_index, tax_rates_obs,
                  tax_rate_completions, last_coin, last_income, last_marginal_rate, total_collected,
                  last_lump_sum, inventory, escrow, tax_cutoffs, tax_disc_rates, tax_fixed_rates,
                  tax_params, tax_iparams, saez, s_rates)  # fmt: skip
        if tid == 0:
            t = _timestep_[e] + 1
            _timestep_[e] = t
            if t >= episode_length:
                _done_[e] = 1
                completions[e] += 1
        cuda.syncthreads()
    n_hot = observations_p.shape[1] if observations_p.shape[1] > 1 else 0
    observe(e, tid, n_hot, completions, tax_cycle_pos, tax_rates_obs, last_coin, last_income,
            last_marginal_rate, inventory, escrow, observations_a, observations_p,
            action_mask_a, action_mask_p, tax_cutoffs, tax_disc_rates, s_rates, tax_params,
            tax_iparams)  # fmt: skip


gtb_tax_reset = field_kernel("gtb_tax_reset", tax_kernel, RESET)
gtb_tax_step = field_kernel("gtb_tax_step", tax_kernel, STEP)

"""The full gather-trade-build economy as Numba ``@cuda.jit`` kernels: the twins of
``kernels/gtb_economy_step.cu`` and of :mod:`.economy_reference`.

``gtb_economy_reset`` is the world with the market's reset (``reset_market_world``) with
the tax's (``tax_reset``, ``fill_rates``); ``gtb_economy_step`` is the world with the
market's step up to the regrowth (``market_world_to_regrow``), then the tax as
``gtb_tax_step`` runs it (the Saez rates of a first day, ``set_rates``, ``enact_taxes``,
``collect_revenue``, ``redistribute``, ``saez_record``, ``advance_cycle``, behind
barriers), the coin utility of every agent whose coin endowment changed, the rewards (the
planner's in every bracket agent's row) and the observations (:func:`observe_economy`).
Both take the declared fields (``economy_state.state_fields()``) in declaration order. One
block per env: threads ``0..A-1`` the agents, ``A..A+P-1`` the planner's agents, threads
``0..B-1`` also the brackets.

The module's two kernels take every dimension at run time; :func:`make_numba_kernels`
(the env's ``KernelSpec.numba_factory``) builds them for one env's declared shapes, every
dimension past an array's first a compile-time constant as in CUDA C's generated header
(``numba_kernels.shaped_field_kernel``): the same code, one build per distinct shapes.
"""

from __future__ import annotations

from typing import Any

from numba import cuda, float32, float64

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import economy_state as es
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_market_numba import (
    observe_market,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_market_world_numba import (
    market_world_to_regrow,
    reset_market_world,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_tax_numba import (
    MAX_BRACKETS,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_tax_numba_parts import (
    TI_OBS_A,
    TI_OBS_PA,
    TI_STRIDE_PA,
    agent_observations,
    planner_masks,
    planner_observations,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_tax_numba_phase import (
    reset_rates,
    tax_phase,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_world_numba import (
    finish_step,
    observe_world,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_world_numba_parts import (
    I_RANGE,
    N_FLAT,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.numba_kernels import (
    RESET,
    STEP,
    declared_trailing_shapes,
    field_kernel,
    shaped_field_kernel,
)
from ai_economist.warp_drive.numba_index import hw_index, index_divmod
from ai_economist.warp_drive.numba_loops import device_jit

N_TAX_P_AGENT = 3  # the tax's fields at the start of each p<i> (tax_state.PLANNER_AGENT_FIELDS)


@device_jit
def observe_economy(e, tid, nt, t, mask_completions, observations_a, observations_p,
                    action_mask_a, action_mask_p, locs, inventory, escrow, build_payment,
                    build_skill, bonus, resource_maps, house_owner, layout_maps, water,
                    landmarks, n_orders, books, price_history, tax_cycle_pos, tax_rates_obs,
                    last_coin, last_income, last_marginal_rate, tax_cutoffs, tax_disc_rates,
                    s_rates, world_params, world_iparams, market_params, market_iparams,
                    tax_params, tax_iparams):  # fmt: skip
    """``economy_reference.observe`` of one env (all threads; ``s_rates`` filled): the
    world's parts at the economy's positions (from the tax's offsets), the market's and the
    tax's blocks, the masks; then every planner row gets row 0's shared part and its
    bracket's one-hot."""
    n = locs.shape[1]
    side = 2 * world_iparams[I_RANGE] + 1
    mk = tax_iparams[TI_OBS_A] - 3  # Build's 2 and Gather's 1 features before the tax
    tx = observations_a.shape[2] - N_FLAT - 9 * side * side - mk
    stride = tax_iparams[TI_STRIDE_PA]
    mp = tax_iparams[TI_OBS_PA] - 4  # the planner's time, its inventory, then the p<i>
    observe_world(e, tid, nt, t, mk, tx, mp, stride, N_TAX_P_AGENT,
                  action_mask_a.shape[2] - 4, observations_a, observations_p, action_mask_a,
                  locs, inventory, build_payment, build_skill, bonus, resource_maps,
                  house_owner, layout_maps, water, landmarks, world_params, world_iparams)  # fmt: skip
    observe_market(e, tid, observations_a, observations_p, action_mask_a, n_orders, books,
                   price_history, inventory, market_params, market_iparams)  # fmt: skip
    agent_observations(e, tid, observations_a, tax_cycle_pos, tax_rates_obs, last_income,
                       last_coin, inventory, escrow, tax_cutoffs, s_rates, tax_iparams)  # fmt: skip
    rows = observations_p.shape[1]
    row = tid - n
    if 0 <= row < rows:
        planner_observations(e, row, observations_p, tax_cycle_pos, tax_rates_obs, last_income,
                             last_marginal_rate, last_coin, inventory, escrow, tax_cutoffs,
                             s_rates, tax_iparams)  # fmt: skip
        planner_masks(e, row, action_mask_p, tax_cycle_pos, mask_completions, tax_disc_rates,
                      tax_params, tax_iparams)  # fmt: skip
    cuda.syncthreads()
    if rows > 1:
        shared = tax_iparams[TI_OBS_PA] + stride * n  # where the one-hot starts
        for p in range(tid, (rows - 1) * shared, nt):
            r, k = index_divmod(p, shared)
            r += 1
            observations_p[e, r, k] = observations_p[e, 0, k]
        if 0 <= row < rows:
            for j in range(rows):
                observations_p[e, row, shared + j] = float32(1.0 if j == row else 0.0)


@device_jit
def economy_kernel(mode, _timestep_, _done_, env_seed, completions, auto_integrator,
                   resource_maps, house_owner, locs, inventory, escrow, labor,
                   build_payment, build_skill, bonus_gather_prob, coin_utility, utility,
                   welfare, move_order, episode_coin, episode_labor, episode_utility,
                   observations_a, observations_p, action_mask_a, action_mask_p,
                   sampled_actions_a, sampled_actions_p, rewards_a, rewards_p, market_clock,
                   bid_price, bid_created, ask_price, ask_created, n_orders, books,
                   price_history, trade_count, trade_value, n_trades, market_bids,
                   market_asks, tax_cycle_pos, tax_rate_index, tax_rates_obs,
                   tax_rate_completions, last_coin, last_income, last_marginal_rate,
                   total_collected, last_lump_sum, saez_buffer, saez_count, saez_next,
                   saez_reached, saez_draws, saez_elas, saez_log_z0, saez_rates,
                   saez_running_avg, layout_maps, water, landmarks, regrow_cells,
                   ranked_payments, ranked_locs, world_params, world_iparams, market_params,
                   market_iparams, tax_cutoffs, tax_disc_rates, tax_fixed_rates, tax_params,
                   tax_iparams, saez_bin_edges, saez_bin_sizes, bracket_sizes, rate_min,
                   rate_max, pareto_weight_code, saez_fixed_elas, rng_seed):  # fmt: skip
    """The economy's kernels (``mode`` 0: ``gtb_economy_reset``, 1: ``gtb_economy_step``)."""
    world = (env_seed, completions, auto_integrator, resource_maps, house_owner, locs, inventory,
             escrow, labor, build_payment, build_skill, bonus_gather_prob, coin_utility,
             utility, welfare, move_order)  # fmt: skip
    market = (market_clock, bid_price, bid_created, ask_price, ask_created, n_orders, books,
              price_history, trade_count, trade_value, n_trades, market_bids, market_asks)  # fmt: skip
    s_rates = cuda.shared.array(MAX_BRACKETS, float64)
    e, tid, nt = hw_index(cuda.blockIdx.x), hw_index(cuda.threadIdx.x), hw_index(cuda.blockDim.x)
    if mode == RESET:  # gtb_economy_reset
        if _timestep_[e] != 0:
            return
        reset_market_world(e, tid, nt, world, market, layout_maps, water,
                           ranked_payments, ranked_locs, world_params, world_iparams)  # fmt: skip
        # the rates' annealed limit: tax_rate_completions as the last step left it
        reset_rates(e, tid, tax_cycle_pos, tax_rate_index, tax_rates_obs, tax_rate_completions,
                    last_coin, last_income, last_marginal_rate, total_collected, last_lump_sum,
                    saez_rates, saez_running_avg, inventory, escrow, tax_disc_rates,
                    tax_fixed_rates, s_rates, tax_params, tax_iparams)  # fmt: skip
        t, mask_completions = 0, completions[e]
    else:  # gtb_economy_step
        saez = (saez_buffer, saez_count, saez_next, saez_reached, saez_draws, saez_elas, saez_log_z0,
                saez_rates, saez_running_avg, saez_bin_edges, saez_bin_sizes, bracket_sizes,
                rate_min, pareto_weight_code, saez_fixed_elas, rng_seed)  # fmt: skip
        n = locs.shape[1]
        t = _timestep_[e] + 1
        if tid == 0:
            tax_rate_completions[e] = completions[e]  # the episodes at the step's start
        coin_before = market_world_to_regrow(e, tid, nt, t, world, action_mask_a,
                                             sampled_actions_a, market, layout_maps,
                                             water, landmarks, regrow_cells,
                                             world_params, market_params,
                                             market_iparams)  # fmt: skip
        cuda.syncthreads()
        tax_phase(e, tid, sampled_actions_p, tax_cycle_pos, tax_rate_index, tax_rates_obs,
                  tax_rate_completions, last_coin, last_income, last_marginal_rate, total_collected,
                  last_lump_sum, inventory, escrow, tax_cutoffs, tax_disc_rates, tax_fixed_rates,
                  tax_params, tax_iparams, saez, s_rates)  # fmt: skip
        changed = tid < n and inventory[e, tid, 0] + escrow[e, tid, 0] != coin_before
        finish_step(e, tid, t, changed, _timestep_, _done_, completions, auto_integrator, inventory,
                    escrow, labor, coin_utility, utility, welfare, rewards_a, rewards_p, episode_coin,
                    episode_labor, episode_utility, world_params, world_iparams)  # fmt: skip
        row = tid - n
        if 0 < row < rewards_p.shape[1]:  # every bracket agent gets the planner's reward
            rewards_p[e, row] = rewards_p[e, 0]
        mask_completions = tax_rate_completions[e]
    observe_economy(e, tid, nt, t, mask_completions, observations_a, observations_p,
                    action_mask_a, action_mask_p, locs, inventory, escrow, build_payment,
                    build_skill, bonus_gather_prob, resource_maps, house_owner, layout_maps,
                    water, landmarks, n_orders, books, price_history, tax_cycle_pos,
                    tax_rates_obs, last_coin, last_income, last_marginal_rate, tax_cutoffs,
                    tax_disc_rates, s_rates, world_params, world_iparams, market_params,
                    market_iparams, tax_params, tax_iparams)  # fmt: skip


gtb_economy_reset = field_kernel("gtb_economy_reset", economy_kernel, RESET)
gtb_economy_step = field_kernel("gtb_economy_step", economy_kernel, STEP)


_SHAPED: dict[tuple, dict[str, Any]] = {}  # make_numba_kernels' builds, by shapes and cap


def make_numba_kernels(constants: dict[str, Any],
                       max_registers: int | None = None) -> dict[str, Any]:  # fmt: skip
    """``{"gtb_economy_reset": ..., "gtb_economy_step": ...}`` for the declared fields'
    shapes under ``constants`` (the backend's ``kernel_constants``), with every array's
    dimensions past the first as compile-time constants; built once per distinct shapes
    (and step register cap ``max_registers``, as :func:`field_kernel` takes it)."""
    shapes = declared_trailing_shapes(es.state_fields(), constants)
    key = (tuple(sorted(shapes.items())), max_registers)
    if key not in _SHAPED:
        _SHAPED[key] = {
            "gtb_economy_reset": shaped_field_kernel("gtb_economy_reset", economy_kernel,
                                                     RESET, shapes),
            "gtb_economy_step": shaped_field_kernel("gtb_economy_step", economy_kernel, STEP,
                                                    shapes, max_registers),
        }  # fmt: skip
    return dict(_SHAPED[key])

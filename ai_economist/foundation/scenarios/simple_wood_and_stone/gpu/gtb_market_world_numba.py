"""Gather-trade-build's world with the market as Numba ``@cuda.jit`` kernels: the twins of
``kernels/gtb_market_world_step.cu`` and of :mod:`.reference` with a market.

``gtb_market_world_reset`` is ``gtb_world_reset`` with ``market_reset``;
``gtb_market_world_step`` runs the market between Build and Gather, as the array economy
does: ``split_actions`` (orders at action offset 2), ``decay_history``, ``place_orders``,
``match_orders`` (one thread), ``expire_orders``, each behind a barrier; then the moves (from
``2 + 2 C P``), collections, regrowth, the coin utility of every agent whose coin endowment
changed, the rewards and the observations (the world's parts around the market's blocks).
Both take the declared fields (``state.state_fields(market=True)``) in declaration order.
"""

from __future__ import annotations

from numba import cuda

from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_market_numba import (
    market_step,
    observe_market,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_market_numba_parts import (
    market_reset,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_world_numba import (
    build_and_order,
    finish_step,
    move_gather_regrow,
    observe,
    reset_world,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.numba_kernels import (
    RESET,
    STEP,
    field_kernel,
)
from ai_economist.warp_drive.numba_loops import device_jit


@device_jit
def reset_market_world(env, tid, nt, world, market, layout_maps, water,
                       ranked_payments, ranked_locs, world_params, world_iparams):  # fmt: skip
    """The world's reset with an empty market of one env (all threads; no observations):
    layout, agents, skills, coin, the market's slots, books and histories, the baselines."""
    (env_seed, completions, auto_integrator, resource_maps, house_owner, locs, inventory, escrow,
     labor, build_payment, build_skill, bonus_gather_prob, coin_utility, utility, welfare,
     move_order) = world  # fmt: skip
    (market_clock, bid_price, bid_created, ask_price, ask_created, n_orders, books, price_history,
     trade_count, trade_value, n_trades, market_bids, market_asks) = market  # fmt: skip
    n = locs.shape[1]
    if tid < n:
        market_reset(env, tid, bid_price, bid_created, ask_price, ask_created, n_orders, books,
                     price_history, trade_count, trade_value, market_bids, market_asks)  # fmt: skip
    if tid == n:
        market_clock[env] = 0
        for c in range(n_trades.shape[1]):
            n_trades[env, c] = 0
    reset_world(env, tid, nt, env_seed[env], completions[env], completions, auto_integrator,
                resource_maps, house_owner, locs, inventory, escrow, labor, build_payment,
                build_skill, bonus_gather_prob, coin_utility, utility, welfare, move_order,
                layout_maps, water, ranked_payments, ranked_locs, world_params, world_iparams)  # fmt: skip


@device_jit
def market_world_to_regrow(env, tid, nt, t, world, action_mask_a, sampled_actions_a,
                           market, layout_maps, water, landmarks, regrow_cells,
                           world_params, market_params, market_iparams):  # fmt: skip
    """Step ``t`` of one env up to the regrowth (all threads): Build, the market, the moves,
    the collections, the regrowth; returns the thread's agent's coin endowment before."""
    (market_clock, bid_price, bid_created, ask_price, ask_created, n_orders, books, price_history,
     trade_count, trade_value, n_trades, market_bids, market_asks) = market  # fmt: skip
    (env_seed, completions, auto_integrator, resource_maps, house_owner, locs, inventory, escrow,
     labor, build_payment, build_skill, bonus_gather_prob, coin_utility, utility, welfare,
     move_order) = world  # fmt: skip
    n = locs.shape[1]
    clock = market_clock[env]
    seed, ep = env_seed[env], completions[env]
    start = action_mask_a.shape[2] - 4  # the first move action
    coin_before = 0.0
    if tid < n:
        coin_before = inventory[env, tid, 0] + escrow[env, tid, 0]
    build_and_order(env, tid, seed, ep, t, sampled_actions_a, inventory, labor, resource_maps,
                    house_owner, landmarks, locs, build_payment, move_order, world_params)  # fmt: skip
    cuda.syncthreads()
    market_step(True, env, tid, nt, clock, sampled_actions_a, market_bids, market_asks, bid_price,
                bid_created, ask_price, ask_created, n_orders, books, price_history, trade_count,
                trade_value, n_trades, inventory, escrow, labor, market_params, market_iparams)  # fmt: skip
    if tid == 0:
        market_clock[env] = clock + 1
    move_gather_regrow(env, tid, nt, seed, ep, t, start, sampled_actions_a, locs, inventory,
                       labor, house_owner, water, resource_maps, bonus_gather_prob, move_order,
                       layout_maps, regrow_cells, world_params)  # fmt: skip
    return coin_before


@device_jit
def market_world_kernel(mode, _timestep_, _done_, env_seed, completions, auto_integrator,
                        resource_maps, house_owner, locs, inventory, escrow, labor, build_payment,
                        build_skill, bonus_gather_prob, coin_utility, utility, welfare, move_order,
                        episode_coin, episode_labor, episode_utility, observations_a,
                        observations_p, action_mask_a, action_mask_p, sampled_actions_a,
                        sampled_actions_p, rewards_a, rewards_p, market_clock, bid_price,
                        bid_created, ask_price, ask_created, n_orders, books, price_history,
                        trade_count, trade_value, n_trades, market_bids, market_asks, layout_maps,
                        water, landmarks, regrow_cells, ranked_payments, ranked_locs, world_params,
                        world_iparams, market_params, market_iparams):  # fmt: skip
    """The kernels of the world with the market (``mode`` 0: ``gtb_market_world_reset``, 1:
    ``gtb_market_world_step``)."""
    env, tid, nt = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    world = (env_seed, completions, auto_integrator, resource_maps, house_owner, locs, inventory,
             escrow, labor, build_payment, build_skill, bonus_gather_prob, coin_utility,
             utility, welfare, move_order)  # fmt: skip
    market = (market_clock, bid_price, bid_created, ask_price, ask_created, n_orders, books,
              price_history, trade_count, trade_value, n_trades, market_bids, market_asks)  # fmt: skip
    if mode == RESET:  # gtb_market_world_reset
        if _timestep_[env] != 0:
            return
        reset_market_world(env, tid, nt, world, market, layout_maps, water,
                           ranked_payments, ranked_locs, world_params, world_iparams)  # fmt: skip
        t = 0
    else:  # gtb_market_world_step
        n = locs.shape[1]
        t = _timestep_[env] + 1
        coin_before = market_world_to_regrow(env, tid, nt, t, world, action_mask_a,
                                             sampled_actions_a, market, layout_maps,
                                             water, landmarks, regrow_cells,
                                             world_params, market_params,
                                             market_iparams)  # fmt: skip
        changed = tid < n and inventory[env, tid, 0] + escrow[env, tid, 0] != coin_before
        finish_step(env, tid, t, changed, _timestep_, _done_, completions, auto_integrator, inventory,
                    escrow, labor, coin_utility, utility, welfare, rewards_a, rewards_p, episode_coin,
                    episode_labor, episode_utility, world_params, world_iparams)  # fmt: skip
    observe(env, tid, nt, t, observations_a, observations_p, action_mask_a, action_mask_p, locs,
            inventory, build_payment, build_skill, bonus_gather_prob, resource_maps, house_owner,
            layout_maps, water, landmarks, world_params, world_iparams)  # fmt: skip
    observe_market(env, tid, observations_a, observations_p, action_mask_a, n_orders, books,
                   price_history, inventory, market_params, market_iparams)  # fmt: skip


gtb_market_world_reset = field_kernel("gtb_market_world_reset", market_world_kernel, RESET)
gtb_market_world_step = field_kernel("gtb_market_world_step", market_world_kernel, STEP)

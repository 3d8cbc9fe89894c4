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

from ai_economist.foundation.components.continuous_double_auction import PRICE_DECAY
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_market_numba import (
    observe_market,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_market_numba_parts import (
    MI_ACTION,
    decay_history,
    expire_orders,
    market_reset,
    match_orders,
    place_orders,
    split_actions,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_world_numba import (
    I_FIXED,
    S_MOVE,
    apply_gathers,
    baselines,
    build_step,
    coin_utility_of,
    move_agent_slot,
    observe,
    place_agents,
    rank_of,
    regrow_step,
    reset_agent,
    step_rewards,
)


@cuda.jit(device=True)
def market_step(env, tid, nt, clock, sampled_actions_a, market_bids, market_asks, bid_price,
                bid_created, ask_price, ask_created, n_orders, books, price_history, trade_count,
                trade_value, n_trades, inventory, escrow, labor, params, iparams):  # fmt: skip
    """``market_reference.split_actions`` and ``market_step`` of one env (all threads; the
    caller's barrier precedes it, so Build's goods are in)."""
    n = inventory.shape[1]
    if tid < n:
        split_actions(env, tid, sampled_actions_a[env, tid], iparams[MI_ACTION], books.shape[4],
                      market_bids, market_asks)  # fmt: skip
    decay_history(env, tid, nt, price_history, PRICE_DECAY)
    cuda.syncthreads()
    if tid < n:
        place_orders(env, tid, clock, market_bids, market_asks, bid_price, bid_created, ask_price,
                     ask_created, n_orders, books, inventory, escrow, labor, params, iparams)  # fmt: skip
    cuda.syncthreads()
    if tid == 0:
        match_orders(env, clock, bid_price, bid_created, ask_price, ask_created, n_orders, books,
                     price_history, trade_count, trade_value, n_trades, inventory, escrow,
                     iparams)  # fmt: skip
    cuda.syncthreads()
    if tid < n:
        expire_orders(env, tid, clock, bid_price, bid_created, ask_price, ask_created, n_orders,
                      books, inventory, escrow, iparams)  # fmt: skip
    cuda.syncthreads()


@cuda.jit(device=True)
def reset_market_world(env, tid, nt, completions, auto_integrator, resource_maps, house_owner,
                       locs, inventory, escrow, labor, build_payment, build_skill,
                       bonus_gather_prob, coin_utility, utility, welfare, move_order,
                       market_clock, bid_price, bid_created, ask_price, ask_created, n_orders,
                       books, price_history, trade_count, trade_value, n_trades, market_bids,
                       market_asks, layout_maps, water, ranked_payments, ranked_locs,
                       world_params, world_iparams, env_seed):  # fmt: skip
    """The world's reset with an empty market of one env (all threads; no observations):
    layout, agents, skills, coin, the market's slots, books and histories, the baselines."""
    n, h, w = locs.shape[1], water.shape[0], water.shape[1]
    seed, ep = env_seed[env], completions[env]
    for p in range(tid, h * w, nt):
        r, c = p // w, p % w
        house_owner[env, r, c] = -1
        for j in range(resource_maps.shape[1]):
            resource_maps[env, j, r, c] = layout_maps[j, r, c]
    if tid < n:
        reset_agent(env, tid, seed, ep, locs, inventory, escrow, labor, build_payment, build_skill,
                    bonus_gather_prob, move_order, ranked_payments, ranked_locs, world_params,
                    world_iparams)  # fmt: skip
        coin_utility[env, tid] = coin_utility_of(env, tid, inventory, escrow, world_params)
        market_reset(env, tid, bid_price, bid_created, ask_price, ask_created, n_orders, books,
                     price_history, trade_count, trade_value, market_bids, market_asks)  # fmt: skip
    if tid == n:
        market_clock[env] = 0
        for c in range(n_trades.shape[1]):
            n_trades[env, c] = 0
    cuda.syncthreads()
    if tid == 0:
        if world_iparams[I_FIXED] == 0:
            place_agents(env, seed, ep, locs, water)
        welfare[env] = baselines(env, completions, auto_integrator, inventory, escrow, labor,
                                 coin_utility, utility, world_params, world_iparams)  # fmt: skip
    cuda.syncthreads()


@cuda.jit(device=True)
def market_world_to_regrow(env, tid, nt, t, env_seed, completions, resource_maps, house_owner,
                           locs, inventory, escrow, labor, build_payment, bonus_gather_prob,
                           move_order, action_mask_a, sampled_actions_a, market_clock,
                           bid_price, bid_created, ask_price, ask_created, n_orders, books,
                           price_history, trade_count, trade_value, n_trades, market_bids,
                           market_asks, layout_maps, water, landmarks, regrow_cells,
                           world_params, market_params, market_iparams):  # fmt: skip
    """Step ``t`` of one env up to the regrowth (all threads): Build, the market, the moves,
    the collections, the regrowth; returns the thread's agent's coin endowment before."""
    n = locs.shape[1]
    clock = market_clock[env]
    seed, ep = env_seed[env], completions[env]
    start = action_mask_a.shape[2] - 4  # the first move action
    coin_before = 0.0
    if tid < n:
        coin_before = inventory[env, tid, 0] + escrow[env, tid, 0]
        build_step(env, tid, sampled_actions_a[env, tid], inventory, labor, resource_maps,
                   house_owner, landmarks, locs, build_payment, world_params)  # fmt: skip
        move_order[env, rank_of(seed, ep, t, S_MOVE, tid, n)] = tid
    cuda.syncthreads()
    market_step(env, tid, nt, clock, sampled_actions_a, market_bids, market_asks, bid_price,
                bid_created, ask_price, ask_created, n_orders, books, price_history, trade_count,
                trade_value, n_trades, inventory, escrow, labor, market_params, market_iparams)  # fmt: skip
    if tid == 0:
        market_clock[env] = clock + 1
    for slot in range(n):  # the order's slots one after the other
        if tid == move_order[env, slot]:
            move_agent_slot(env, tid, sampled_actions_a[env, tid], start, locs, labor,
                            house_owner, water, world_params)  # fmt: skip
        cuda.syncthreads()
    if tid < n:
        apply_gathers(env, tid, seed, ep, t, locs, inventory, labor, resource_maps,
                      bonus_gather_prob, world_params)  # fmt: skip
    cuda.syncthreads()
    regrow_step(env, tid, nt, seed, ep, t, resource_maps, layout_maps, regrow_cells, world_params)
    return coin_before


@cuda.jit
def gtb_market_world_reset(_timestep_, _done_, env_seed, completions, auto_integrator,
                           resource_maps, house_owner, locs, inventory, escrow, labor,
                           build_payment, build_skill, bonus_gather_prob, coin_utility, utility,
                           welfare, move_order, episode_coin, episode_labor, episode_utility,
                           observations_a, observations_p, action_mask_a, action_mask_p,
                           sampled_actions_a, sampled_actions_p, rewards_a, rewards_p,
                           market_clock, bid_price, bid_created, ask_price, ask_created,
                           n_orders, books, price_history, trade_count, trade_value, n_trades,
                           market_bids, market_asks, layout_maps, water, landmarks, regrow_cells,
                           ranked_payments, ranked_locs, world_params, world_iparams,
                           market_params, market_iparams):  # fmt: skip
    env, tid, nt = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    if _timestep_[env] != 0:
        return
    reset_market_world(env, tid, nt, completions, auto_integrator, resource_maps, house_owner,
                       locs, inventory, escrow, labor, build_payment, build_skill,
                       bonus_gather_prob, coin_utility, utility, welfare, move_order,
                       market_clock, bid_price, bid_created, ask_price, ask_created, n_orders,
                       books, price_history, trade_count, trade_value, n_trades, market_bids,
                       market_asks, layout_maps, water, ranked_payments, ranked_locs,
                       world_params, world_iparams, env_seed)  # fmt: skip
    observe(env, tid, nt, 0, observations_a, observations_p, action_mask_a, action_mask_p, locs,
            inventory, build_payment, build_skill, bonus_gather_prob, resource_maps, house_owner,
            layout_maps, water, landmarks, world_params, world_iparams)  # fmt: skip
    observe_market(env, tid, observations_a, observations_p, action_mask_a, n_orders, books,
                   price_history, inventory, market_params, market_iparams)  # fmt: skip


@cuda.jit
def gtb_market_world_step(_timestep_, _done_, env_seed, completions, auto_integrator,
                          resource_maps, house_owner, locs, inventory, escrow, labor,
                          build_payment, build_skill, bonus_gather_prob, coin_utility, utility,
                          welfare, move_order, episode_coin, episode_labor, episode_utility,
                          observations_a, observations_p, action_mask_a, action_mask_p,
                          sampled_actions_a, sampled_actions_p, rewards_a, rewards_p,
                          market_clock, bid_price, bid_created, ask_price, ask_created,
                          n_orders, books, price_history, trade_count, trade_value, n_trades,
                          market_bids, market_asks, layout_maps, water, landmarks, regrow_cells,
                          ranked_payments, ranked_locs, world_params, world_iparams,
                          market_params, market_iparams):  # fmt: skip
    env, tid, nt = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    n = locs.shape[1]
    t = _timestep_[env] + 1
    coin_before = market_world_to_regrow(
        env, tid, nt, t, env_seed, completions, resource_maps, house_owner, locs, inventory,
        escrow, labor, build_payment, bonus_gather_prob, move_order, action_mask_a,
        sampled_actions_a, market_clock, bid_price, bid_created, ask_price, ask_created,
        n_orders, books, price_history, trade_count, trade_value, n_trades, market_bids,
        market_asks, layout_maps, water, landmarks, regrow_cells, world_params, market_params,
        market_iparams,
    )  # fmt: skip
    if tid < n and inventory[env, tid, 0] + escrow[env, tid, 0] != coin_before:
        coin_utility[env, tid] = coin_utility_of(env, tid, inventory, escrow, world_params)
    cuda.syncthreads()
    if tid == 0:
        step_rewards(env, t, completions, auto_integrator, inventory, escrow, labor, coin_utility,
                     utility, welfare, rewards_a, rewards_p, episode_coin, episode_labor,
                     episode_utility, _done_, world_params, world_iparams)  # fmt: skip
        _timestep_[env] = t
    cuda.syncthreads()
    observe(env, tid, nt, t, observations_a, observations_p, action_mask_a, action_mask_p, locs,
            inventory, build_payment, build_skill, bonus_gather_prob, resource_maps, house_owner,
            layout_maps, water, landmarks, world_params, world_iparams)  # fmt: skip
    observe_market(env, tid, observations_a, observations_p, action_mask_a, n_orders, books,
                   price_history, inventory, market_params, market_iparams)  # fmt: skip

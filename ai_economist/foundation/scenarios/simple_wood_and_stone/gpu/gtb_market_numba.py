"""The GPU market as Numba ``@cuda.jit`` kernels: the twins of ``kernels/gtb_market_step.cu``
and of :mod:`.market_reference` (``cda_batched``), device functions in
:mod:`.gtb_market_numba_parts`.

``gtb_market_reset`` re-initialises every env whose ``_timestep_`` is 0 (start goods, empty
books; idempotent); ``gtb_market_step`` advances every env one market step. One block per
env: threads ``0..A-1`` are the agents, thread ``A`` the planner. Both take the fields of
``GatherTradeBuildMarketGpu`` in declaration order.
"""

from __future__ import annotations

from numba import cuda

from ai_economist.foundation.components.continuous_double_auction import PRICE_DECAY
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.gtb_market_numba_parts import (
    MI_ACTION,
    MI_OBS_A,
    MI_OBS_P,
    action_masks,
    decay_history,
    expire_orders,
    market_observations,
    market_reset,
    match_orders,
    place_orders,
    planner_market_observations,
    split_actions,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.numba_kernels import (
    ORDERS_STEP,
    RESET,
    STEP,
    field_kernel,
)
from ai_economist.warp_drive.numba_loops import device_jit


@device_jit
def observe_market(e, tid, observations_a, observations_p, action_mask_a, n_orders, books,
                   price_history, inventory, params, iparams):  # fmt: skip
    """``market_reference.observe_market`` of one env: agent ``tid``'s block and masks, the
    planner's block (thread ``A``)."""
    n = inventory.shape[1]
    if tid < n:
        market_observations(e, tid, observations_a, iparams[MI_OBS_A], books, price_history,
                            params)  # fmt: skip
        action_masks(e, tid, action_mask_a, iparams[MI_ACTION], n_orders, inventory, iparams)
    if tid == n:
        planner_market_observations(e, observations_p, iparams[MI_OBS_P], books, price_history,
                                    params)  # fmt: skip


@device_jit
def market_step(split, env, tid, nt, clock, sampled_actions_a, market_bids, market_asks,
                bid_price, bid_created, ask_price, ask_created, n_orders, books, price_history,
                trade_count, trade_value, n_trades, inventory, escrow, labor, params, iparams):  # fmt: skip
    """``market_reference.split_actions`` (when ``split``) and ``market_step`` of one env
    (all threads, a barrier after each phase; the caller's barrier precedes it)."""
    n = inventory.shape[1]
    if split and tid < n:
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


@device_jit
def market_env_step(split, _timestep_, _done_, market_clock, bid_price, bid_created, ask_price,
                    ask_created, n_orders, books, price_history, trade_count, trade_value,
                    n_trades, market_bids, market_asks, inventory, escrow, labor,
                    observations_a, observations_p, action_mask_a, sampled_actions_a,
                    episode_length, market_params, market_iparams):  # fmt: skip
    """``GatherTradeBuildMarketGpu.reference_step`` of one env (``split``: the orders from
    the agents' actions; else as ``market_bids`` / ``market_asks`` hold them)."""
    e, tid, nt = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    t, clock = _timestep_[e] + 1, market_clock[e]
    market_step(split, e, tid, nt, clock, sampled_actions_a, market_bids, market_asks, bid_price,
                bid_created, ask_price, ask_created, n_orders, books, price_history, trade_count,
                trade_value, n_trades, inventory, escrow, labor, market_params, market_iparams)  # fmt: skip
    if tid == 0:
        market_clock[e] = clock + 1
        _timestep_[e] = t
        if t >= episode_length:
            _done_[e] = 1
    cuda.syncthreads()
    observe_market(e, tid, observations_a, observations_p, action_mask_a, n_orders, books,
                   price_history, inventory, market_params, market_iparams)  # fmt: skip


@device_jit
def market_kernel(mode, _timestep_, _done_, market_clock, bid_price, bid_created, ask_price,
                  ask_created, n_orders, books, price_history, trade_count, trade_value, n_trades,
                  market_bids, market_asks, inventory, escrow, labor, observations_a,
                  observations_p, action_mask_a, action_mask_p, sampled_actions_a,
                  sampled_actions_p, rewards_a, rewards_p, start_goods, episode_length,
                  market_params, market_iparams):  # fmt: skip
    """The market's kernels (``mode`` 0: ``gtb_market_reset``; 1: ``gtb_market_step``, the
    orders from the agents' actions (``split_actions``); 2: ``gtb_market_orders_step``, the
    orders already in ``market_bids`` / ``market_asks``: bids and asks on every commodity at
    once, as the multi-action mode places them)."""
    if mode != RESET:
        market_env_step(mode == STEP, _timestep_, _done_, market_clock, bid_price, bid_created,
                        ask_price, ask_created, n_orders, books, price_history, trade_count,
                        trade_value, n_trades, market_bids, market_asks, inventory, escrow, labor,
                        observations_a, observations_p, action_mask_a, sampled_actions_a,
                        episode_length, market_params, market_iparams)  # fmt: skip
        return
    e, tid = cuda.blockIdx.x, cuda.threadIdx.x
    if _timestep_[e] != 0:
        return
    n = inventory.shape[1]
    if tid < n:
        for g in range(inventory.shape[2]):
            inventory[e, tid, g] = start_goods[tid, g]
            escrow[e, tid, g] = 0.0
        labor[e, tid] = 0.0
        market_reset(e, tid, bid_price, bid_created, ask_price, ask_created, n_orders, books,
                     price_history, trade_count, trade_value, market_bids, market_asks)  # fmt: skip
        action_mask_a[e, tid, 0] = 1.0
    if tid == n:
        market_clock[e] = 0
        for c in range(n_trades.shape[1]):
            n_trades[e, c] = 0
        action_mask_p[e, 0, 0] = 1.0
    cuda.syncthreads()
    observe_market(e, tid, observations_a, observations_p, action_mask_a, n_orders, books,
                   price_history, inventory, market_params, market_iparams)  # fmt: skip


gtb_market_reset = field_kernel("gtb_market_reset", market_kernel, RESET)
gtb_market_step = field_kernel("gtb_market_step", market_kernel, STEP)
gtb_market_orders_step = field_kernel("gtb_market_orders_step", market_kernel, ORDERS_STEP)

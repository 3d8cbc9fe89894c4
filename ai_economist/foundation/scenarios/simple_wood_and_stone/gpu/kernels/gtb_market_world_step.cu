// Gather-trade-build's world with the market (CUDA C): the twin of
// gpu/gtb_market_world_numba.py and of gpu/reference.py with a market. gtb_market_world_reset is
// gtb_world_reset with market_reset; gtb_market_world_step runs the market between Build and
// Gather as the array economy does (split_actions at action offset 2, decay_history,
// place_orders, match_orders in one thread, expire_orders, each behind a barrier), then the
// moves (from MOVE_START = 2 + 2 C P), collections, regrowth, the coin utility of every agent
// whose coin endowment changed, the rewards and the observations (the world's parts around the
// market's blocks). gather_trade_build_market_world_state.h is generated from the declaration
// (gpu/state.py with the market): the world's sizes and indices, the market's (N_COMMODITIES,
// MAX_NUM_ORDERS, N_PRICES, MP_* / MI_*, MARKET_EMPTY) and the kernel parameter list. The
// device functions of the world with the market are in gtb_market_world.cuh.
#include "gather_trade_build_market_world_state.h"
#include "gtb_world.cuh"
#include "gtb_market.cuh"
#include "gtb_market_world.cuh"

extern "C" __global__ void gtb_market_world_reset(GATHER_TRADE_BUILD_MARKET_WORLD_STATE_PARAMS) {
  const int env = blockIdx.x, tid = threadIdx.x;
  if (_timestep_[env] != 0) return;
  const GtbEnv e = GTB_SLICES;
  const MarketEnv m = MARKET_SLICES(env);
  reset_market_world(e, m, env, tid, env_seed[env], completions[env], auto_integrator, welfare,
                     market_clock, move_order, layout_maps, water, ranked_payments, ranked_locs,
                     world_params, world_iparams);
  observe(e, env, 0, observations_a, observations_p, action_mask_a, action_mask_p, layout_maps,
          water, landmarks, world_params, world_iparams);
  observe_market(m, env, tid, observations_a, observations_p, action_mask_a, market_params,
                 market_iparams);
}

extern "C" __global__ void gtb_market_world_step(GATHER_TRADE_BUILD_MARKET_WORLD_STATE_PARAMS) {
  const int env = blockIdx.x, tid = threadIdx.x;
  const GtbEnv e = GTB_SLICES;
  const MarketEnv m = MARKET_SLICES(env);
  const int t = _timestep_[env] + 1;
  const int action = tid < N_AGENTS ? sampled_actions_a[env * N_AGENTS + tid] : 0;
  const double coin_before = market_world_to_regrow(
      e, m, env, tid, t, env_seed[env], completions[env], action, market_clock, move_order,
      layout_maps, water, landmarks, regrow_cells, world_params, market_params, market_iparams);
  if (tid < N_AGENTS && e.inv[tid * N_GOODS] + e.esc[tid * N_GOODS] != coin_before) {
    e.coin_util[tid] = coin_utility_of(e, tid, world_params);
  }
  __syncthreads();
  if (tid == 0) {
    step_rewards(e, env, t, completions, auto_integrator, welfare, rewards_a, rewards_p,
                 episode_coin, episode_labor, episode_utility, _done_, world_params,
                 world_iparams);
    _timestep_[env] = t;
  }
  __syncthreads();
  observe(e, env, t, observations_a, observations_p, action_mask_a, action_mask_p, layout_maps,
          water, landmarks, world_params, world_iparams);
  observe_market(m, env, tid, observations_a, observations_p, action_mask_a, market_params,
                 market_iparams);
}

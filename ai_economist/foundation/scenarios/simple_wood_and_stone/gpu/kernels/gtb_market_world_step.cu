// Gather-trade-build's world with the market (CUDA C): the twin of
// gpu/gtb_market_world_numba.py and of gpu/reference.py with a market. gtb_market_world_reset is
// gtb_world_reset with market_reset; gtb_market_world_step runs the market between Build and
// Gather as the array economy does (split_actions at action offset 2, decay_history,
// place_orders, match_orders in one thread, expire_orders, each behind a barrier), then the
// moves (from MOVE_START = 2 + 2 C P), collections, regrowth, the coin utility of every agent
// whose coin endowment changed, the rewards and the observations (the world's parts around the
// market's blocks). gather_trade_build_market_world_state.h is generated from the declaration
// (gpu/state.py with the market): the world's sizes and indices, the market's (N_COMMODITIES,
// MAX_NUM_ORDERS, N_PRICES, MP_* / MI_*, MARKET_EMPTY) and the kernel parameter list.
#include "gather_trade_build_market_world_state.h"
#include "gtb_world.cuh"
#include "gtb_market.cuh"

// market_reference.observe_market in the world's vectors: agent tid's block and masks, the
// planner's block (thread N_AGENTS)
__device__ void observe_market(const MarketEnv& m, int env, int tid, float* observations_a,
                               float* observations_p, float* action_mask_a,
                               const double* params, const int* iparams) {
  if (tid < N_AGENTS) {
    const int row = env * N_AGENTS + tid;
    market_observations(m, tid, observations_a + row * OBS_DIM_A + iparams[MI_OBS_OFFSET_A],
                        params);
    action_masks(m, tid, action_mask_a + row * N_ACTIONS_A + iparams[MI_ACTION_OFFSET], iparams);
  }
  if (tid == N_AGENTS) {
    planner_market_observations(m, observations_p + env * OBS_DIM_P + iparams[MI_OBS_OFFSET_P],
                                params);
  }
}

// market_reference.split_actions and market_step of one env (all threads; the caller's
// barrier precedes it, so Build's goods are in)
__device__ void market_step(const MarketEnv& m, int tid, int clock, int action,
                            const double* params, const int* iparams) {
  if (tid < N_AGENTS) split_actions(m, tid, action, iparams[MI_ACTION_OFFSET]);
  decay_history(m, tid, blockDim.x);
  __syncthreads();
  if (tid < N_AGENTS) place_orders(m, tid, clock, params, iparams);
  __syncthreads();
  if (tid == 0) match_orders(m, clock, iparams);
  __syncthreads();
  if (tid < N_AGENTS) expire_orders(m, tid, clock, iparams);
  __syncthreads();
}

extern "C" __global__ void gtb_market_world_reset(GATHER_TRADE_BUILD_MARKET_WORLD_STATE_PARAMS) {
  const int env = blockIdx.x, tid = threadIdx.x;
  if (_timestep_[env] != 0) return;
  const GtbEnv e = GTB_SLICES;
  const MarketEnv m = MARKET_SLICES(env);
  const int seed = env_seed[env], ep = completions[env];
  for (int p = tid; p < HW; p += blockDim.x) {
    e.owner[p] = -1;
    for (int j = 0; j < N_RESOURCES; j++) e.maps[j * HW + p] = layout_maps[j * HW + p];
  }
  if (tid < N_AGENTS) {
    reset_agent(e, tid, seed, ep, move_order + env * N_AGENTS, ranked_payments, ranked_locs,
                world_params, world_iparams);
    e.coin_util[tid] = coin_utility_of(e, tid, world_params);
    market_reset(m, tid);
  }
  if (tid == N_AGENTS) {
    market_clock[env] = 0;
    for (int c = 0; c < N_COMMODITIES; c++) m.n_trades[c] = 0;
  }
  __syncthreads();
  if (tid == 0) {
    if (world_iparams[I_FIXED_FOUR] == 0) place_agents(e, seed, ep, water);
    const double k = energy_weight(ep, auto_integrator[env], world_params, world_iparams) *
                     world_params[P_ENERGY_COST];
    for (int i = 0; i < N_AGENTS; i++) e.util[i] = e.coin_util[i] - e.labor[i] * k;
    welfare[env] = welfare_of(e, world_params);
  }
  __syncthreads();
  observe(e, env, 0, observations_a, observations_p, action_mask_a, action_mask_p, layout_maps,
          water, landmarks, world_params, world_iparams);
  observe_market(m, env, tid, observations_a, observations_p, action_mask_a, market_params,
                 market_iparams);
}

extern "C" __global__ void gtb_market_world_step(GATHER_TRADE_BUILD_MARKET_WORLD_STATE_PARAMS) {
  const int env = blockIdx.x, tid = threadIdx.x;
  const GtbEnv e = GTB_SLICES;
  const MarketEnv m = MARKET_SLICES(env);
  const int t = _timestep_[env] + 1, seed = env_seed[env], ep = completions[env];
  const int clock = market_clock[env];
  int* order = move_order + env * N_AGENTS;
  const int action = tid < N_AGENTS ? sampled_actions_a[env * N_AGENTS + tid] : 0;
  double coin_before = 0.0;
  if (tid < N_AGENTS) {
    coin_before = e.inv[tid * N_GOODS] + e.esc[tid * N_GOODS];
    build_step(e, tid, action, landmarks, world_params);
    order[rank_of(seed, ep, t, STREAM_MOVE_ORDER, tid)] = tid;
  }
  __syncthreads();
  market_step(m, tid, clock, action, market_params, market_iparams);
  if (tid == 0) market_clock[env] = clock + 1;
  for (int slot = 0; slot < N_AGENTS; slot++) {  // the order's slots one after the other
    if (tid == order[slot]) move_agent_slot(e, tid, action, water, world_params);
    __syncthreads();
  }
  if (tid < N_AGENTS) apply_gathers(e, tid, seed, ep, t, world_params);
  __syncthreads();
  regrow_step(e, seed, ep, t, layout_maps, regrow_cells, world_params);
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

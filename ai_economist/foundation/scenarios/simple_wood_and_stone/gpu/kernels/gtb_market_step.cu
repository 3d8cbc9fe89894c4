// The GPU market on its own (CUDA C): the twin of gpu/gtb_market_numba.py and of
// GatherTradeBuildMarketGpu.reference_step / reference_reset (gpu/market_env.py), to test the
// market's device functions (gtb_market.cuh) standalone. gtb_market_reset re-initialises
// every env whose _timestep_ is 0 (start goods, empty books; idempotent); gtb_market_step
// advances every env one market step. One block per env: threads 0..N_AGENTS-1 are the
// agents, thread N_AGENTS the planner. gather_trade_build_market_state.h is generated from the
// declaration (sizes, MP_* / MI_* indices, the kernel parameter list).
#include "gather_trade_build_market_state.h"
#include "gtb_market.cuh"

// market_reference.observe_market of one env: agent tid's block and masks, the planner's block
__device__ void observe_market(const MarketEnv& m, int env, int tid, float* observations_a,
                               float* observations_p, float* action_mask_a,
                               const double* params, const int* iparams) {
  if (tid < N_AGENTS) {
    const int row = env * N_AGENTS + tid;
    market_observations(m, tid, observations_a + row * OBS_DIM_MARKET_A + iparams[MI_OBS_OFFSET_A],
                        params);
    action_masks(m, tid, action_mask_a + row * N_ACTIONS_A + iparams[MI_ACTION_OFFSET], iparams);
  }
  if (tid == N_AGENTS) {
    planner_market_observations(m, observations_p + env * OBS_DIM_MARKET_P +
                                       iparams[MI_OBS_OFFSET_P], params);
  }
}

extern "C" __global__ void gtb_market_reset(GATHER_TRADE_BUILD_MARKET_STATE_PARAMS) {
  const int env = blockIdx.x, tid = threadIdx.x;
  if (_timestep_[env] != 0) return;
  const MarketEnv m = MARKET_SLICES(env);
  if (tid < N_AGENTS) {
    for (int g = 0; g < N_GOODS; g++) {
      m.inv[tid * N_GOODS + g] = start_goods[tid * N_GOODS + g];
      m.esc[tid * N_GOODS + g] = 0.0;
    }
    m.labor[tid] = 0.0;
    market_reset(m, tid);
    action_mask_a[(env * N_AGENTS + tid) * N_ACTIONS_A] = 1.0f;
  }
  if (tid == N_AGENTS) {
    market_clock[env] = 0;
    for (int c = 0; c < N_COMMODITIES; c++) m.n_trades[c] = 0;
    action_mask_p[env] = 1.0f;
  }
  __syncthreads();
  observe_market(m, env, tid, observations_a, observations_p, action_mask_a, market_params,
                 market_iparams);
}

// GatherTradeBuildMarketGpu.reference_step of one env (split: the orders from the agents'
// actions; else as market_bids / market_asks hold them)
__device__ void market_env_step(bool split, GATHER_TRADE_BUILD_MARKET_STATE_PARAMS) {
  const int env = blockIdx.x, tid = threadIdx.x;
  const MarketEnv m = MARKET_SLICES(env);
  const int t = _timestep_[env] + 1, clock = market_clock[env];
  if (split && tid < N_AGENTS) {
    split_actions(m, tid, sampled_actions_a[env * N_AGENTS + tid],
                  market_iparams[MI_ACTION_OFFSET]);
  }
  decay_history(m, tid, blockDim.x);
  __syncthreads();
  if (tid < N_AGENTS) place_orders(m, tid, clock, market_params, market_iparams);
  __syncthreads();
  if (tid == 0) match_orders(m, clock, market_iparams);
  __syncthreads();
  if (tid < N_AGENTS) expire_orders(m, tid, clock, market_iparams);
  __syncthreads();
  if (tid == 0) {
    market_clock[env] = clock + 1;
    _timestep_[env] = t;
    if (t >= episode_length) _done_[env] = 1;
  }
  __syncthreads();
  observe_market(m, env, tid, observations_a, observations_p, action_mask_a, market_params,
                 market_iparams);
}

#define MARKET_ARGS                                                                             \
  _timestep_, _done_, market_clock, bid_price, bid_created, ask_price, ask_created, n_orders,   \
      books, price_history, trade_count, trade_value, n_trades, market_bids, market_asks,       \
      inventory, escrow, labor, observations_a, observations_p, action_mask_a, action_mask_p,   \
      sampled_actions_a, sampled_actions_p, rewards_a, rewards_p, start_goods, episode_length,  \
      market_params, market_iparams

// one market step, the orders from the agents' actions (split_actions)
extern "C" __global__ void gtb_market_step(GATHER_TRADE_BUILD_MARKET_STATE_PARAMS) {
  market_env_step(true, MARKET_ARGS);
}

// one market step with the orders already in market_bids / market_asks (bids and asks on
// every commodity at once, as the multi-action mode places them)
extern "C" __global__ void gtb_market_orders_step(GATHER_TRADE_BUILD_MARKET_STATE_PARAMS) {
  market_env_step(false, MARKET_ARGS);
}

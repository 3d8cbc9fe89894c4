// The world with the market's device functions (CUDA C): the twins of market_step,
// reset_market_world and market_world_to_regrow in gpu/gtb_market_world_numba.py and
// observe_market in gpu/gtb_market_numba.py. Include after gtb_world.cuh and gtb_market.cuh;
// shared by gtb_market_world_step.cu and the full economy's gtb_economy_step.cu (whose
// planner has N_PLANNER rows: the market's planner block goes into row 0).
#ifndef AI_ECONOMIST_GTB_MARKET_WORLD_CUH_
#define AI_ECONOMIST_GTB_MARKET_WORLD_CUH_

// market_reference.observe_market in the world's vectors: agent tid's block and masks, the
// planner's block (thread N_AGENTS, row 0)
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
    planner_market_observations(
        m, observations_p + env * N_PLANNER * OBS_DIM_P + iparams[MI_OBS_OFFSET_P], params);
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

// The world's reset with an empty market of one env (all threads; no observations): layout,
// agents, skills, coin, the market's slots, books and histories, the baselines.
__device__ void reset_market_world(const GtbEnv& e, const MarketEnv& m, int env, int tid,
                                   int seed, int ep, int* auto_integrator, double* welfare,
                                   int* market_clock, int* move_order, const float* layout_maps,
                                   const int* water, const double* ranked_payments,
                                   const int* ranked_locs, const double* world_params,
                                   const int* world_iparams) {
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
}

// Step t of one env up to the regrowth (all threads): Build, the market, the moves, the
// collections, the regrowth; returns the thread's agent's coin endowment before.
__device__ double market_world_to_regrow(const GtbEnv& e, const MarketEnv& m, int env, int tid,
                                         int t, int seed, int ep, int action, int* market_clock,
                                         int* move_order, const float* layout_maps,
                                         const int* water, const int* landmarks,
                                         const int* regrow_cells, const double* world_params,
                                         const double* market_params,
                                         const int* market_iparams) {
  const int clock = market_clock[env];
  int* order = move_order + env * N_AGENTS;
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
  return coin_before;
}

#endif  // AI_ECONOMIST_GTB_MARKET_WORLD_CUH_

// The two kernels of gtb_world_step.cu (included after the device functions, gtb_world.cuh):
// the twins of gtb_world_reset / gtb_world_step in gpu/gtb_world_numba.py.
#ifndef AI_ECONOMIST_GTB_WORLD_KERNELS_CUH_
#define AI_ECONOMIST_GTB_WORLD_KERNELS_CUH_

extern "C" __global__ void gtb_world_reset(GATHER_TRADE_BUILD_WORLD_STATE_PARAMS) {
  const int env = blockIdx.x, tid = threadIdx.x;
  if (_timestep_[env] != 0) return;
  const GtbEnv e = GTB_SLICES;
  const int seed = env_seed[env], ep = completions[env];
  for (int p = tid; p < HW; p += blockDim.x) {
    e.owner[p] = -1;
    for (int j = 0; j < N_RESOURCES; j++) e.maps[j * HW + p] = layout_maps[j * HW + p];
  }
  if (tid < N_AGENTS) {
    reset_agent(e, tid, seed, ep, move_order + env * N_AGENTS, ranked_payments, ranked_locs,
                world_params, world_iparams);
    e.coin_util[tid] = coin_utility_of(e, tid, world_params);
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
}

extern "C" __global__ void gtb_world_step(GATHER_TRADE_BUILD_WORLD_STATE_PARAMS) {
  const int env = blockIdx.x, tid = threadIdx.x;
  const GtbEnv e = GTB_SLICES;
  const int t = _timestep_[env] + 1, seed = env_seed[env], ep = completions[env];
  int* order = move_order + env * N_AGENTS;
  bool built = false;
  if (tid < N_AGENTS) {
    built = build_step(e, tid, sampled_actions_a[env * N_AGENTS + tid], landmarks, world_params);
    order[rank_of(seed, ep, t, STREAM_MOVE_ORDER, tid)] = tid;
  }
  __syncthreads();
  for (int slot = 0; slot < N_AGENTS; slot++) {  // the order's slots one after the other
    if (tid == order[slot]) {
      move_agent_slot(e, tid, sampled_actions_a[env * N_AGENTS + tid], water, world_params);
    }
    __syncthreads();
  }
  if (tid < N_AGENTS) apply_gathers(e, tid, seed, ep, t, world_params);
  __syncthreads();
  regrow_step(e, seed, ep, t, layout_maps, regrow_cells, world_params);
  if (built) e.coin_util[tid] = coin_utility_of(e, tid, world_params);
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
}

#endif  // AI_ECONOMIST_GTB_WORLD_KERNELS_CUH_

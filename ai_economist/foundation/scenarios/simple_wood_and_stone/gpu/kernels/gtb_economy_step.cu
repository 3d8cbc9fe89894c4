// The full gather-trade-build economy (CUDA C): Build, ContinuousDoubleAuction, Gather and
// PeriodicBracketTax, the twin of gpu/gtb_economy_numba.py and of gpu/economy_reference.py.
// gtb_economy_reset is the world with the market's reset (reset_market_world) with the tax's
// (tax_reset, fill_rates); gtb_economy_step is the world with the market's step up to the
// regrowth (market_world_to_regrow), then the tax as gtb_tax_step.cu runs it (the Saez rates of
// a first day, set_rates, enact_taxes, collect_revenue, redistribute, saez_record,
// advance_cycle, behind barriers), the coin utility of every agent whose coin endowment
// changed, the rewards (the planner's in every bracket agent's row) and the observations
// (observe_economy). One block per env: threads 0..N_AGENTS-1 the agents, the next N_PLANNER
// the planner's agents, threads 0..N_BRACKETS-1 also the brackets. The generated
// gather_trade_build_economy_state.h (gpu/economy_state.py) holds the world's positions
// shifted by the market's and the tax's blocks (OBS_*, OBS_FLAT_A, OBS_P_TIME, OBS_FLAT_P,
// OBS_STRIDE_P, OBS_P_INV_IN_STRIDE), the market's and the tax's indices and the parameters.
#include "gather_trade_build_economy_state.h"
#include "gtb_world.cuh"
#include "gtb_market.cuh"
#include "gtb_market_world.cuh"
#include "../../../one_step_economy/kernels/bracket_tax.cuh"
#include "../../../one_step_economy/kernels/saez_tax.cuh"
#include "gtb_tax.cuh"

// economy_reference.observe of one env (all threads; s_rates filled): the world's parts at the
// economy's positions, the market's and the tax's blocks, the masks; then every planner row
// gets row 0's shared part and its bracket's one-hot.
__device__ void observe_economy(const GtbEnv& e, const MarketEnv& m, const TaxEnv& x, int env,
                                int tid, int t, int mask_completions, float* observations_a,
                                float* observations_p, float* action_mask_a,
                                float* action_mask_p, const float* layout_maps,
                                const int* water, const int* landmarks,
                                const double* tax_cutoffs, const double* tax_disc_rates,
                                const double* s_rates, const double* world_params,
                                const int* world_iparams, const double* market_params,
                                const int* market_iparams, const double* tax_params,
                                const int* tax_iparams) {
  observe(e, env, t, observations_a, observations_p, action_mask_a, action_mask_p, layout_maps,
          water, landmarks, world_params, world_iparams);
  observe_market(m, env, tid, observations_a, observations_p, action_mask_a, market_params,
                 market_iparams);
  if (tid < N_AGENTS) {
    agent_observations(x, tid, observations_a + (env * N_AGENTS + tid) * OBS_DIM_A +
                                   tax_iparams[TI_OBS_OFFSET_A], tax_cutoffs, s_rates,
                       tax_iparams);
  }
  const int p = tid - N_AGENTS;
  float* rows = observations_p + env * N_PLANNER * OBS_DIM_P;
  if (p >= 0 && p < N_PLANNER) {
    planner_observations(x, rows + p * OBS_DIM_P, tax_cutoffs, s_rates, tax_iparams);
    planner_masks(x, action_mask_p + (env * N_PLANNER + p) * N_ACTIONS_P, mask_completions,
                  tax_disc_rates, tax_params, tax_iparams);
  }
  __syncthreads();
  if (N_PLANNER > 1) {
    for (int q = tid; q < (N_PLANNER - 1) * OBS_ONE_HOT_P; q += blockDim.x) {
      rows[(1 + q / OBS_ONE_HOT_P) * OBS_DIM_P + q % OBS_ONE_HOT_P] = rows[q % OBS_ONE_HOT_P];
    }
    if (p >= 0 && p < N_PLANNER) {
      for (int j = 0; j < N_PLANNER; j++) rows[p * OBS_DIM_P + OBS_ONE_HOT_P + j] = j == p ? 1.0f : 0.0f;
    }
  }
}

extern "C" __global__ void gtb_economy_reset(GATHER_TRADE_BUILD_ECONOMY_STATE_PARAMS) {
  __shared__ double s_rates[N_BRACKETS];
  const int env = blockIdx.x, tid = threadIdx.x;
  if (_timestep_[env] != 0) return;
  const GtbEnv e = GTB_SLICES;
  const MarketEnv m = MARKET_SLICES(env);
  const TaxEnv x = TAX_SLICES(env);
  reset_market_world(e, m, env, tid, env_seed[env], completions[env], auto_integrator, welfare,
                     market_clock, move_order, layout_maps, water, ranked_payments, ranked_locs,
                     world_params, world_iparams);
  // the rates' annealed limit: tax_rate_completions as the last step left it
  tax_reset(x, tid, tax_disc_rates, tax_fixed_rates, tax_params, tax_iparams);
  fill_rates(x, tid, tax_disc_rates, tax_fixed_rates, s_rates, tax_params, tax_iparams);
  __syncthreads();
  observe_economy(e, m, x, env, tid, 0, completions[env], observations_a, observations_p,
                  action_mask_a, action_mask_p, layout_maps, water, landmarks, tax_cutoffs,
                  tax_disc_rates, s_rates, world_params, world_iparams, market_params,
                  market_iparams, tax_params, tax_iparams);
}

// The tax's part of the step (all threads; after the regrowth): array_tax.saez_between's rates
// on a first day, then array_tax.tax_step.
__device__ void economy_tax_step(const TaxEnv& x, int env, int tid, const int* planner_actions,
                                 double* s_rates, double* s_paid, double* s_lump,
                                 SaezScratch* s_saez, double* saez_buffer, int* saez_count,
                                 int* saez_next, int* saez_reached, int* saez_draws,
                                 double* saez_elas, double* saez_log_z0,
                                 const double* saez_bin_edges, const double* saez_bin_sizes,
                                 const double* tax_cutoffs, const double* bracket_sizes,
                                 double rate_min, int pareto_weight_code, double saez_fixed_elas,
                                 int rng_seed, const double* tax_disc_rates,
                                 const double* tax_fixed_rates, const double* tax_params,
                                 const int* tax_iparams) {
  if (tax_iparams[TI_TAX_MODEL_CODE] == 2 && *x.cycle_pos == 1) {
    if (tid == 0) {
      const double limit = rate_limit(*x.rate_completions, tax_params, tax_iparams);
      saez_first_day(env, saez_buffer + env * SAEZ_BUFFER_SIZE * 2, saez_count + env,
                     saez_reached + env, saez_draws + env, saez_elas + env, saez_log_z0 + env,
                     x.saez_rates, x.saez_running_avg, saez_bin_edges, saez_bin_sizes,
                     tax_cutoffs, bracket_sizes, rate_min, limit, pareto_weight_code,
                     saez_fixed_elas, rng_seed, s_saez);
    }
    __syncthreads();
  }
  set_rates(x, tid, planner_actions, tax_disc_rates, tax_fixed_rates, s_rates, tax_params,
            tax_iparams);
  __syncthreads();
  enact_taxes(x, tid, tax_cutoffs, s_rates, s_paid, tax_iparams);
  __syncthreads();
  if (tid == 0) collect_revenue(x, s_paid, s_lump, tax_iparams);
  __syncthreads();
  redistribute(x, tid, s_paid, *s_lump, tax_iparams);
  if (tax_iparams[TI_TAX_MODEL_CODE] == 2) {
    saez_record(x, tid, saez_buffer + env * SAEZ_BUFFER_SIZE * 2, saez_next[env], tax_iparams);
  }
  __syncthreads();
  if (tid == 0) advance_cycle(x, saez_next + env, saez_count + env, tax_iparams);
}

extern "C" __global__ void gtb_economy_step(GATHER_TRADE_BUILD_ECONOMY_STATE_PARAMS) {
  __shared__ double s_rates[N_BRACKETS];
  __shared__ double s_paid[N_AGENTS];
  __shared__ double s_lump;
  __shared__ SaezScratch s_saez;
  const int env = blockIdx.x, tid = threadIdx.x;
  const GtbEnv e = GTB_SLICES;
  const MarketEnv m = MARKET_SLICES(env);
  const TaxEnv x = TAX_SLICES(env);
  const int t = _timestep_[env] + 1;
  if (tid == 0) *x.rate_completions = completions[env];  // the episodes at the step's start
  const int action = tid < N_AGENTS ? sampled_actions_a[env * N_AGENTS + tid] : 0;
  const double coin_before = market_world_to_regrow(
      e, m, env, tid, t, env_seed[env], completions[env], action, market_clock, move_order,
      layout_maps, water, landmarks, regrow_cells, world_params, market_params, market_iparams);
  __syncthreads();
  economy_tax_step(x, env, tid, sampled_actions_p + env * N_PLANNER, s_rates, s_paid, &s_lump,
                   &s_saez, saez_buffer, saez_count, saez_next, saez_reached, saez_draws,
                   saez_elas, saez_log_z0, saez_bin_edges, saez_bin_sizes, tax_cutoffs,
                   bracket_sizes, rate_min, pareto_weight_code, saez_fixed_elas, rng_seed,
                   tax_disc_rates, tax_fixed_rates, tax_params, tax_iparams);
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
  const int p = tid - N_AGENTS;
  if (p > 0 && p < N_PLANNER) rewards_p[env * N_PLANNER + p] = rewards_p[env * N_PLANNER];
  observe_economy(e, m, x, env, tid, t, *x.rate_completions, observations_a, observations_p,
                  action_mask_a, action_mask_p, layout_maps, water, landmarks, tax_cutoffs,
                  tax_disc_rates, s_rates, world_params, world_iparams, market_params,
                  market_iparams, tax_params, tax_iparams);
}

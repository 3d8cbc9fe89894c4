// The GPU tax on its own (CUDA C): the twin of gpu/gtb_tax_numba.py and of
// GatherTradeBuildTaxGpu.reference_step / reference_reset (gpu/tax_env.py), to test the tax's
// device functions (gtb_tax.cuh, and the one-step economy's bracket_tax.cuh / saez_tax.cuh)
// standalone. One block per env: threads 0..N_AGENTS-1 the agents, the next N_PLANNER the
// planner's agents, threads 0..N_BRACKETS-1 also the brackets' rates; thread 0 the Saez
// formula and the revenue. gather_trade_build_tax_state.h is generated from the declaration.
#include "gather_trade_build_tax_state.h"
#include "../../../one_step_economy/kernels/bracket_tax.cuh"
#include "../../../one_step_economy/kernels/saez_tax.cuh"
#include "gtb_tax.cuh"

#define INCOME_LEVELS 4  // tax_env.INCOME_LEVELS

// GatherTradeBuildTaxGpu._observe of one env (after s_rates were filled).
__device__ void observe(const TaxEnv& t, int env, int tid, int completions, float* observations_a,
                        float* observations_p, float* action_mask_a, float* action_mask_p,
                        const double* cutoffs, const double* disc_rates, const double* s_rates,
                        const double* params, const int* iparams) {
  if (tid < N_AGENTS) {
    const int row = env * N_AGENTS + tid;
    agent_observations(t, tid, observations_a + row * OBS_DIM_TAX_A + iparams[TI_OBS_OFFSET_A],
                       cutoffs, s_rates, iparams);
    for (int k = 0; k < N_ACTIONS_A; k++) action_mask_a[row * N_ACTIONS_A + k] = 1.0f;
  }
  const int p = tid - N_AGENTS;
  if (p >= 0 && p < N_PLANNER) {
    float* row = observations_p + (env * N_PLANNER + p) * OBS_DIM_P;
    planner_observations(t, row, cutoffs, s_rates, iparams);
    planner_masks(t, action_mask_p + (env * N_PLANNER + p) * N_ACTIONS_P, completions,
                  disc_rates, params, iparams);
    const int n_hot = N_PLANNER > 1 ? N_PLANNER : 0;
    for (int j = 0; j < n_hot; j++) row[OBS_DIM_P - n_hot + j] = j == p ? 1.0f : 0.0f;
  }
}

extern "C" __global__ void gtb_tax_reset(GATHER_TRADE_BUILD_TAX_STATE_PARAMS) {
  __shared__ double s_rates[N_BRACKETS];
  const int env = blockIdx.x, tid = threadIdx.x;
  if (_timestep_[env] != 0) return;
  const TaxEnv t = TAX_SLICES(env);
  if (tid < N_AGENTS) {
    for (int g = 0; g < N_GOODS; g++) {
      t.inv[tid * N_GOODS + g] = 0.0;
      t.esc[tid * N_GOODS + g] = 0.0;
    }
    t.inv[tid * N_GOODS + TAX_COIN] = start_coin[tid];
  }
  if (tid == 0) *t.rate_completions = completions[env];
  __syncthreads();
  tax_reset(t, tid, tax_disc_rates, tax_fixed_rates, tax_params, tax_iparams);
  fill_rates(t, tid, tax_disc_rates, tax_fixed_rates, s_rates, tax_params, tax_iparams);
  __syncthreads();
  observe(t, env, tid, completions[env], observations_a, observations_p, action_mask_a,
          action_mask_p, tax_cutoffs, tax_disc_rates, s_rates, tax_params, tax_iparams);
}

// GatherTradeBuildTaxGpu.income_step of agent a.
__device__ void income_step(const TaxEnv& t, int a, int action, const double* income_unit) {
  double* inv = t.inv + a * N_GOODS + TAX_COIN;
  double* esc = t.esc + a * N_GOODS + TAX_COIN;
  if (action >= 1 && action <= INCOME_LEVELS) {
    *inv += __dmul_rn((double)action, income_unit[a]);  // unfused: rounds as numpy does
  } else if (action == INCOME_LEVELS + 1) {
    const double half = 0.5 * *inv;
    *inv -= half;
    *esc += half;
  } else if (action == INCOME_LEVELS + 2) {
    *inv += *esc;
    *esc = 0.0;
  }
}

extern "C" __global__ void gtb_tax_step(GATHER_TRADE_BUILD_TAX_STATE_PARAMS) {
  __shared__ double s_rates[N_BRACKETS];
  __shared__ double s_paid[N_AGENTS];
  __shared__ double s_lump;
  __shared__ SaezScratch s_saez;
  const int env = blockIdx.x, tid = threadIdx.x;
  const TaxEnv t = TAX_SLICES(env);
  if (tid == 0) *t.rate_completions = completions[env];
  if (tid < N_AGENTS) income_step(t, tid, sampled_actions_a[env * N_AGENTS + tid], income_unit);
  __syncthreads();
  // the Saez model's rates on a period's first step (array_tax.saez_between)
  if (tax_iparams[TI_TAX_MODEL_CODE] == 2 && *t.cycle_pos == 1) {
    if (tid == 0) {
      const double limit = rate_limit(*t.rate_completions, tax_params, tax_iparams);
      saez_first_day(env, saez_buffer + env * SAEZ_BUFFER_SIZE * 2, saez_count + env,
                     saez_reached + env, saez_draws + env, saez_elas + env, saez_log_z0 + env,
                     t.saez_rates, t.saez_running_avg, saez_bin_edges, saez_bin_sizes,
                     tax_cutoffs, bracket_sizes, rate_min, limit, pareto_weight_code,
                     saez_fixed_elas, rng_seed, &s_saez);
    }
    __syncthreads();
  }
  // array_tax.tax_step
  set_rates(t, tid, sampled_actions_p + env * N_PLANNER, tax_disc_rates, tax_fixed_rates,
            s_rates, tax_params, tax_iparams);
  __syncthreads();
  enact_taxes(t, tid, tax_cutoffs, s_rates, s_paid, tax_iparams);
  __syncthreads();
  if (tid == 0) collect_revenue(t, s_paid, &s_lump, tax_iparams);
  __syncthreads();
  redistribute(t, tid, s_paid, s_lump, tax_iparams);
  if (tax_iparams[TI_TAX_MODEL_CODE] == 2) {
    saez_record(t, tid, saez_buffer + env * SAEZ_BUFFER_SIZE * 2, saez_next[env], tax_iparams);
  }
  __syncthreads();
  if (tid == 0) {
    advance_cycle(t, saez_next + env, saez_count + env, tax_iparams);
    const int step = _timestep_[env] + 1;
    _timestep_[env] = step;
    if (step >= episode_length) {
      _done_[env] = 1;
      completions[env] += 1;
    }
  }
  __syncthreads();
  observe(t, env, tid, completions[env], observations_a, observations_p, action_mask_a,
          action_mask_p, tax_cutoffs, tax_disc_rates, s_rates, tax_params, tax_iparams);
}

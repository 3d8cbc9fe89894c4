// The one-step economy's step (CUDA C): mirrors OneStepEconomyGpu.reference_step, i.e. the
// numpy array model (one_step_economy/array_model.py, components/tax_brackets.py,
// components/simple_labor.py, one_step_economy/rules.py), device function for function.
// One block per environment; threads 0..N_WORKERS-1 are the workers (policy "a"), threads
// N_WORKERS..N_WORKERS+N_BRACKETS-1 the planner's bracket agents (policy "p").
// one_step_economy_state.h is generated from gpu_declaration.py: N_WORKERS, N_BRACKETS,
// N_RATES, AGENT_OBS_DIM, PLANNER_OBS_DIM, AGENT_ACTIONS, PLANNER_ACTIONS and
// ONE_STEP_ECONOMY_STATE_PARAMS (the declared fields in order, scalar constants by value).
#include "one_step_economy_state.h"
#include "bracket_tax.cuh"
#include "saez_tax.cuh"

// Environments per block, at most (KernelSpec.envs_per_block: the block is threads x k, k =
// blockDim.y <= ENVS_PER_BLOCK): one env's agents are a row of threadIdx.x.
#ifndef ENVS_PER_BLOCK
#define ENVS_PER_BLOCK 1
#endif

// array_model.current_rates: bracket b's rate (planner-set index, Saez rates or fixed rates).
__device__ double current_rates(int b, const int* rate_index, const double* disc_rates,
                                const double* saez_rates, const double* fixed_rates,
                                int tax_model_code) {
  if (tax_model_code == 0) return disc_rates[rate_index[b]];
  return tax_model_code == 2 ? saez_rates[b] : fixed_rates[b];
}

// simple_labor.labor_step: h > 0 hours set the labour to h and pay h * skill.
__device__ void labor_step(int hours, double skill, double* coin, double* labor,
                           double* production) {
  if (hours > 0) {
    const double pay = (double)hours * skill;
    *coin += pay;
    *labor = (double)hours;
    *production += pay;
  }
}

// array_model.set_rates_from_actions: 0 keeps the index, k picks rate k - 1.
__device__ int set_rates_from_actions(int rate_index, int action) {
  return action > 0 ? action - 1 : rate_index;
}

// An action inside its mask, else NO-OP (0), counted in *invalid.
__device__ int checked_action(int action, const float* mask, int num_actions, int* invalid) {
  if (action < 0 || action >= num_actions || mask[action] <= 0.0f) {
    atomicAdd(invalid, 1);
    return 0;
  }
  return action;
}

// rules.agent_utilities (rewards.isoelastic_coin_minus_labor / coin_minus_labor_cost).
__device__ double agent_utilities(double coin, double labor, int agent_reward_code,
                                  double eta, double labor_exponent, double labor_cost) {
  if (agent_reward_code == 1) {
    const double util_c = eta == 1.0 ? log(fmax(1.0, coin)) : (pow(coin, 1.0 - eta) - 1.0) / (1.0 - eta);
    return util_c - labor * labor_cost;
  }
  return coin - pow(labor, labor_exponent) * labor_cost;
}

// social_metrics.get_equality: 1 - Gini (the exact pairwise form, fewer than 30 agents).
__device__ double get_equality(const double* x) {
  if (N_WORKERS == 1) return 1.0;
  double diff = 0.0, total = 0.0;
  for (int i = 0; i < N_WORKERS; i++) {
    total += x[i];
    for (int j = 0; j < N_WORKERS; j++) diff += fabs(x[i] - x[j]);
  }
  const double unscaled = diff / (2.0 * N_WORKERS * total + 1e-10);
  return 1.0 - unscaled / ((double)(N_WORKERS - 1) / (double)N_WORKERS);
}

// rules.planner_welfare: inverse-pre-tax-income-weighted utility, or equality x productivity.
__device__ double planner_welfare(const double* coin, const double* production,
                                  const double* util, int planner_reward_code,
                                  double equality_weight, double equality) {
  if (planner_reward_code == 1) {
    double total = 0.0;
    for (int i = 0; i < N_WORKERS; i++) total += coin[i];
    return (equality_weight * equality + (1.0 - equality_weight)) * (total / N_WORKERS);
  }
  double wsum = 0.0, value = 0.0;
  for (int i = 0; i < N_WORKERS; i++) wsum += 1.0 / fmax(production[i], 1.0);
  for (int i = 0; i < N_WORKERS; i++) value += util[i] * ((1.0 / fmax(production[i], 1.0)) / wsum);
  return value;
}

// The rank of x[i] in ascending order (ties by index): where np.sort puts it.
__device__ int sorted_rank(const double* x, int i) {
  int rank = 0;
  for (int j = 0; j < N_WORKERS; j++) rank += (x[j] < x[i] || (x[j] == x[i] && j < i)) ? 1 : 0;
  return rank;
}

// The shared head of array_model.agent_observations / planner_observations, entry k: rates,
// is_first_day, is_tax_day, sorted last incomes / period.
__device__ float cycle_head(int k, const double* rates_obs, int pos, int period,
                            const double* sorted_income) {
  if (k < N_BRACKETS) return (float)rates_obs[k];
  if (k == N_BRACKETS) return pos == 1 ? 1.0f : 0.0f;
  if (k == N_BRACKETS + 1) return pos >= period ? 1.0f : 0.0f;
  return (float)sorted_income[k - N_BRACKETS - 2];
}

// The head's length: rates, the two day flags, the sorted incomes.
#define CYCLE_HEAD_DIM (N_BRACKETS + 2 + N_WORKERS)

// array_model.agent_observations, entry k of worker i's row: the head, then the marginal
// rate, the day of the period, the skill and the time.
__device__ float agent_observations(int k, int i, const double* rates_obs, int pos, int period,
                                    const double* sorted_income, const double* marginal,
                                    const double* skills, double skill_scale, int t,
                                    double time_scale) {
  if (k < CYCLE_HEAD_DIM) return cycle_head(k, rates_obs, pos, period, sorted_income);
  k -= CYCLE_HEAD_DIM;
  if (k == 0) return (float)marginal[i];
  if (k == 1) return (float)((double)pos / (double)period);
  if (k == 2) return (float)(skills[i] / skill_scale);
  return (float)((double)t / time_scale);
}

// array_model.planner_observations + the bracket one-hot, entry k of bracket agent b's row:
// the head, the day of the period, the time, equality, mean coin / 1000, then per worker its
// marginal rate, last income / period and last marginal rate, then the one-hot.
__device__ float planner_observations(int k, int bracket, const double* rates_obs, int pos,
                                      int period, const double* sorted_income, int t,
                                      double time_scale, double equality, double coin_total,
                                      const double* marginal, const double* last_income,
                                      const double* last_marginal_rate) {
  if (k < CYCLE_HEAD_DIM) return cycle_head(k, rates_obs, pos, period, sorted_income);
  k -= CYCLE_HEAD_DIM;
  if (k == 0) return (float)((double)pos / (double)period);
  if (k == 1) return (float)((double)t / time_scale);
  if (k == 2) return (float)equality;
  if (k == 3) return (float)(coin_total / N_WORKERS / 1000.0);
  k -= 4;
  if (k < 3 * N_WORKERS) {
    const int i = k / 3;
    const int c = k - 3 * i;
    if (c == 0) return (float)marginal[i];
    if (c == 1) return (float)(last_income[i] / (double)period);
    return (float)last_marginal_rate[i];
  }
  return k - 3 * N_WORKERS == bracket ? 1.0f : 0.0f;
}

// array_model.action_masks, entry a of a row: NO-OP always; the rest unless masked.
__device__ float action_masks(int a, bool masked) { return a == 0 || !masked ? 1.0f : 0.0f; }

// The entries of one env's observation rows that its rows share, as floats: the head (every
// row's), each worker's own four, and the planner's own four plus three per worker (every
// bracket row's, before its one-hot).
#define AGENT_OWN_DIM 4
#define PLANNER_SHARED_DIM (4 + 3 * N_WORKERS)
struct ObsStage {
  float head[CYCLE_HEAD_DIM];
  float agent[N_WORKERS][AGENT_OWN_DIM];
  float planner[PLANNER_SHARED_DIM];
};

// Step 4, first half: the env's threads compute each distinct entry once, into `stage`
// (agent_observations / planner_observations entry by entry; the bracket one-hot is left to
// the writes). One pass per kind of entry, one thread per worker: a warp's threads then take the
// same branch (one float64 division per pass, not every kind's in every pass: in divergent
// warps they made step 4 three times as slow as the stores it feeds).
__device__ void stage_observations(ObsStage* stage, const double* rates_obs, int pos, int period,
                                   const double* sorted_income, const double* marginal,
                                   const double* skills, double skill_scale, int t,
                                   double time_scale, double equality, double coin_total,
                                   const double* last_income, const double* last_marginal_rate) {
  for (int k = threadIdx.x; k < CYCLE_HEAD_DIM; k += blockDim.x) {
    stage->head[k] = cycle_head(k, rates_obs, pos, period, sorted_income);
  }
  for (int j = 0; j < AGENT_OWN_DIM; j++) {
    for (int i = threadIdx.x; i < N_WORKERS; i += blockDim.x) {
      stage->agent[i][j] = agent_observations(CYCLE_HEAD_DIM + j, i, rates_obs, pos, period,
                                              sorted_income, marginal, skills, skill_scale, t,
                                              time_scale);
    }
  }
  for (int k = threadIdx.x; k < 4; k += blockDim.x) {  // the day, time, equality, mean coin
    stage->planner[k] = planner_observations(CYCLE_HEAD_DIM + k, -1, rates_obs, pos, period,
                                             sorted_income, t, time_scale, equality, coin_total,
                                             marginal, last_income, last_marginal_rate);
  }
  for (int c = 0; c < 3; c++) {  // per worker: marginal rate, last income, last marginal rate
    for (int i = threadIdx.x; i < N_WORKERS; i += blockDim.x) {
      const int k = 4 + 3 * i + c;
      stage->planner[k] = planner_observations(CYCLE_HEAD_DIM + k, -1, rates_obs, pos, period,
                                               sorted_income, t, time_scale, equality,
                                               coin_total, marginal, last_income,
                                               last_marginal_rate);
    }
  }
}

// Step 4, second half: the block's observations and masks, written by the whole block at
// once from the staged entries. The block's envs are consecutive, so their rows of each array
// form one span, and consecutive threads write consecutive entries of it (coalesced stores;
// one row per thread would scatter every store instruction over as many rows as the warp has
// threads). The masks before this step were those of step t - 1: only what changes is
// rewritten.
__device__ void write_observations_and_masks(int first_env, int envs, const int (*cycle)[3],
                                             const ObsStage* stage, int mask_first_step,
                                             float* observations_a, float* observations_p,
                                             float* action_mask_a, float* action_mask_p) {
  const int lane = threadIdx.y * blockDim.x + threadIdx.x;
  const int threads = blockDim.x * blockDim.y;
  const long long first = first_env;
  const int a_len = N_WORKERS * AGENT_OBS_DIM;  // one env's entries of observations_a
  float* obs_a = observations_a + first * a_len;
  for (int idx = lane; idx < envs * a_len; idx += threads) {
    const int e = idx / a_len, r = idx - e * a_len;
    const int i = r / AGENT_OBS_DIM, k = r - i * AGENT_OBS_DIM;
    obs_a[idx] = k < CYCLE_HEAD_DIM ? stage[e].head[k] : stage[e].agent[i][k - CYCLE_HEAD_DIM];
  }
  const int p_len = N_BRACKETS * PLANNER_OBS_DIM;
  float* obs_p = observations_p + first * p_len;
  for (int idx = lane; idx < envs * p_len; idx += threads) {
    const int e = idx / p_len, r = idx - e * p_len;
    const int b = r / PLANNER_OBS_DIM, k = r - b * PLANNER_OBS_DIM;
    float value;
    if (k < CYCLE_HEAD_DIM) {
      value = stage[e].head[k];
    } else if (k < CYCLE_HEAD_DIM + PLANNER_SHARED_DIM) {
      value = stage[e].planner[k - CYCLE_HEAD_DIM];
    } else {
      value = k - CYCLE_HEAD_DIM - PLANNER_SHARED_DIM == b ? 1.0f : 0.0f;
    }
    obs_p[idx] = value;
  }
  if (mask_first_step) {  // the workers' actions open on step 1
    const int m_len = N_WORKERS * AGENT_ACTIONS;
    float* mask_a = action_mask_a + first * m_len;
    for (int idx = lane; idx < envs * m_len; idx += threads) {
      if (cycle[idx / m_len][2] == 1) mask_a[idx] = action_masks(idx % AGENT_ACTIONS, false);
    }
  }
  const int q_len = N_BRACKETS * PLANNER_ACTIONS;  // the rates open on a first day only
  float* mask_p = action_mask_p + first * q_len;
  for (int idx = lane; idx < envs * q_len; idx += threads) {
    const int e = idx / q_len;
    const bool was_open = cycle[e][0] == 1, opens = cycle[e][1] == 1;
    if (was_open != opens) mask_p[idx] = action_masks(idx % PLANNER_ACTIONS, !opens);
  }
}

extern "C" __global__ void one_step_economy_step(ONE_STEP_ECONOMY_STATE_PARAMS) {
  // one row per env of the block; one Saez scratch for the block (its envs take turns)
  __shared__ double s_rates_[ENVS_PER_BLOCK][N_BRACKETS];
  __shared__ double s_paid_[ENVS_PER_BLOCK][N_WORKERS];
  __shared__ double s_util_[ENVS_PER_BLOCK][N_WORKERS];
  __shared__ double s_sorted_[ENVS_PER_BLOCK][N_WORKERS];
  __shared__ double s_marginal_[ENVS_PER_BLOCK][N_WORKERS];
  __shared__ double s_env_[ENVS_PER_BLOCK][4];  // lump sum, equality, welfare, total coin
  __shared__ int s_cycle_[ENVS_PER_BLOCK][3];      // pos, new pos, t (for the block's writes)
  __shared__ ObsStage s_stage_[ENVS_PER_BLOCK];    // the observations' distinct entries
  __shared__ SaezScratch s_saez;
  const int slot = threadIdx.y;  // the env's row of the block
  const int env = blockIdx.x * blockDim.y + slot;
  const int tid = threadIdx.x;
  double* s_rates = s_rates_[slot];
  double* s_paid = s_paid_[slot];
  double* s_util = s_util_[slot];
  double* s_sorted = s_sorted_[slot];
  double* s_marginal = s_marginal_[slot];
  double& s_lump = s_env_[slot][0];
  double& s_equality = s_env_[slot][1];
  double& s_welfare = s_env_[slot][2];
  double& s_coin_total = s_env_[slot][3];
  const bool is_worker = tid < N_WORKERS;
  const bool is_bracket = !is_worker && tid < N_WORKERS + N_BRACKETS;
  const int b = tid - N_WORKERS;
  const int pos = tax_cycle_pos[env];
  const int t = _timestep_[env] + 1;
  const bool first_day = pos == 1;
  const bool tax_day = pos >= period;
  const int new_pos = tax_day ? 1 : pos + 1;
  const double welfare_before = welfare[env];
  if (tid == 0) {
    s_cycle_[slot][0] = pos;
    s_cycle_[slot][1] = new_pos;
    s_cycle_[slot][2] = t;
  }
  double* e_coin = coin + env * N_WORKERS;
  double* e_labor = labor + env * N_WORKERS;
  double* e_production = production + env * N_WORKERS;
  double* e_last_coin = last_coin + env * N_WORKERS;
  double* e_last_income = last_income + env * N_WORKERS;
  double* e_last_marginal = last_marginal_rate + env * N_WORKERS;
  int* e_rate_index = rate_index + env * N_BRACKETS;
  double* e_saez_rates = saez_rates + env * N_BRACKETS;
  const bool saez = tax_model_code == 2;

  // 0. the Saez model sets this period's rates on its first day (the block's envs in turn:
  // they share the scratch; every barrier is reached by the whole block)
  if (saez) {
    for (int turn = 0; turn < (int)blockDim.y; turn++) {
      if (turn == slot && first_day && tid == 0) {
        saez_first_day(env, saez_buffer + env * SAEZ_BUFFER_SIZE * 2, saez_count + env,
                       saez_reached + env, saez_draws + env, saez_elas + env,
                       saez_log_z0 + env, e_saez_rates, saez_running_avg + env * N_BRACKETS,
                       saez_bin_edges, saez_bin_sizes, cutoffs, bracket_sizes, rate_min,
                       rate_max, pareto_weight_code, saez_fixed_elas, rng_seed, &s_saez);
      }
      __syncthreads();
    }
  }

  // 1. actions (checked against the masks): labor_step; on a first day the planner's rates
  if (is_worker) {
    const int hours = checked_action(sampled_actions_a[env * N_WORKERS + tid],
                                     action_mask_a + (env * N_WORKERS + tid) * AGENT_ACTIONS,
                                     AGENT_ACTIONS, invalid_actions + env);
    labor_step(hours, skills[tid], e_coin + tid, e_labor + tid, e_production + tid);
  } else if (is_bracket) {
    const int action = checked_action(sampled_actions_p[env * N_BRACKETS + b],
                                      action_mask_p + (env * N_BRACKETS + b) * PLANNER_ACTIONS,
                                      PLANNER_ACTIONS, invalid_actions + env);
    if (first_day && tax_model_code == 0) {
      e_rate_index[b] = set_rates_from_actions(e_rate_index[b], action);
    }
    const double rate = current_rates(b, e_rate_index, disc_rates, e_saez_rates, fixed_rates,
                                      tax_model_code);
    s_rates[b] = rate;
    if (first_day) rates_obs[env * N_BRACKETS + b] = rate;
  }
  __syncthreads();

  // 2. tax_step (tax_brackets.enact_taxes): bills, the lump sum, last incomes (the barriers
  // outside the condition: the block's envs need not share their tax day)
  double income = 0.0;
  if (tax_day && is_worker) {
    income = period_income(e_coin[tid], e_last_coin[tid]);
    s_paid[tid] = fmin(e_coin[tid], taxes_due(income, cutoffs, s_rates));
  }
  __syncthreads();
  if (tax_day && tid == 0) {
    double revenue = 0.0;
    for (int i = 0; i < N_WORKERS; i++) revenue += s_paid[i];
    s_lump = revenue / N_WORKERS;
    total_collected_taxes[env] += revenue;
  }
  __syncthreads();
  if (tax_day) {
    if (is_worker) {
      e_coin[tid] = e_coin[tid] - s_paid[tid] + s_lump;
      e_last_coin[tid] = e_coin[tid];
      e_last_income[tid] = income;
      e_last_marginal[tid] = marginal_rate(income, cutoffs, s_rates);
      if (saez) {  // gpu_saez.saez_record: this tax day's samples into the ring
        double* sample = saez_buffer + (env * SAEZ_BUFFER_SIZE + (saez_next[env] + tid) % SAEZ_BUFFER_SIZE) * 2;
        sample[0] = income;
        sample[1] = e_last_marginal[tid];
      }
    }
  }
  __syncthreads();

  // 3. optimization_metrics: utilities, the planner's welfare; sorted incomes, marginal rates
  if (is_worker) {
    s_util[tid] = agent_utilities(e_coin[tid], e_labor[tid], agent_reward_code, isoelastic_eta,
                                  labor_exponent, labor_cost);
    s_sorted[sorted_rank(e_last_income, tid)] = e_last_income[tid] / (double)period;
    s_marginal[tid] = marginal_rate(e_coin[tid] - e_last_coin[tid], cutoffs, s_rates);
  }
  __syncthreads();
  if (tid == 0) {
    double total = 0.0;
    for (int i = 0; i < N_WORKERS; i++) total += e_coin[i];
    s_coin_total = total;
    s_equality = get_equality(e_coin);
    s_welfare = planner_welfare(e_coin, e_production, s_util, planner_reward_code,
                                equality_weight, s_equality);
  }
  __syncthreads();

  // 4. rewards, then the observations and masks of the new state
  if (is_worker) {
    const int row = env * N_WORKERS + tid;
    rewards_a[row] = (float)(s_util[tid] - utility[row]);
    utility[row] = s_util[tid];
  } else if (is_bracket) {
    rewards_p[env * N_BRACKETS + b] = (float)(s_welfare - welfare_before);
  }
  stage_observations(s_stage_ + slot, rates_obs + env * N_BRACKETS, new_pos, period, s_sorted,
                     s_marginal, skills, skill_scale, t, time_scale, s_equality, s_coin_total,
                     e_last_income, e_last_marginal);
  __syncthreads();
  write_observations_and_masks(blockIdx.x * blockDim.y, blockDim.y, s_cycle_, s_stage_,
                               mask_first_step, observations_a, observations_p, action_mask_a,
                               action_mask_p);

  // 5. per-env bookkeeping and the metrics of an episode that ends here
  const bool done = t >= episode_length;
  if (is_worker && done) {
    episode_coin[env * N_WORKERS + tid] = e_coin[tid];
    episode_labor[env * N_WORKERS + tid] = e_labor[tid];
  }
  if (tid == 0) {
    welfare[env] = s_welfare;
    tax_cycle_pos[env] = new_pos;
    _timestep_[env] = t;
    if (saez && tax_day) {
      saez_next[env] = (saez_next[env] + N_WORKERS) % SAEZ_BUFFER_SIZE;
      saez_count[env] = min(saez_count[env] + N_WORKERS, SAEZ_BUFFER_SIZE);
    }
    if (done) {
      _done_[env] = 1;
      episode_equality[env] = s_equality;
      episode_productivity[env] = s_coin_total;
      episode_welfare[env] = s_welfare;
      episode_taxes[env] = total_collected_taxes[env];
      completed_episodes[env] += 1;
    }
  }
}

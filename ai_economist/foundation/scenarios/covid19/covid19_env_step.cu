// COVID-19 & economy scenario on the GPU: SIR with vaccination, unemployment, economy, rewards.
// Each device function mirrors the numpy function of the same name in dynamics.py; the kernel
// bodies mirror CovidSimulation.step_scenario and CovidSimulation.compute_rewards plus the
// scenario observations (observations.scenario_observation_fields).
//
// Every *_kernel_body is called by ALL threads of the block (some contain __syncthreads()).
// The planner-side sums over states use a fixed-order reduction (block_sum3), so repeated
// runs give bit-identical results.
#ifndef AI_ECONOMIST_COVID19_ENV_STEP_CU_
#define AI_ECONOMIST_COVID19_ENV_STEP_CU_

#include "kernels/covid19_common.cuh"

// ------------------------------------------------------------------ SIR
// beta = m_i * intercept + m_s * slope * stringency_{t - delay}; vaccines move people from S
// to R (at most S of them) and shield the vaccinated fraction; deaths = rate * (R - V).
__device__ __forceinline__ void sir_step(float susceptible, float infected, float recovered,
                                         float vaccinated, float vaccines_available,
                                         float lagged_stringency_level, float beta_intercept,
                                         float beta_slope, float beta_intercept_modulation,
                                         float beta_slope_modulation, float population,
                                         float* new_s, float* new_i, float* new_r, float* new_v,
                                         float* deaths, float* beta) {
  *beta = beta_intercept_modulation * beta_intercept +
          beta_slope_modulation * beta_slope * lagged_stringency_level;
  const float vaccinated_fraction = fminf(1.0f, vaccines_available / (susceptible + COVID_EPSILON));
  const float num_vaccinated = fminf(vaccines_available, susceptible);
  const float d_susceptible =
      -*beta * susceptible / population * infected * (1.0f - vaccinated_fraction) - num_vaccinated;
  const float d_recovered = GAMMA * infected + num_vaccinated;
  const float d_infected = -d_susceptible - d_recovered;
  *new_s = fmaxf(susceptible + d_susceptible, 0.0f);
  *new_i = fmaxf(infected + d_infected, 0.0f);
  *new_r = fmaxf(recovered + d_recovered, 0.0f);
  *new_v = fmaxf(vaccinated + num_vaccinated, 0.0f);
  *deaths = DEATH_RATE * (*new_r - *new_v);
}

// D_t - D_{t-1}, computed without float32 cancellation. R and V only grow (R' = R + gamma*I +
// vac, V' = V + vac, no clamp can bite), so D_t - D_{t-1} = rate*gamma*I_{t-1} + offset with
// offset = rate*(R_{t-1} - V_{t-1}) - D_{t-1}, which is exactly 0 except on the first step
// after reset (the reset sets D_0 = rate * R_0). The numpy model subtracts the two totals in
// float64; doing that in float32 would lose ~0.02 people per step in the largest states.
__device__ __forceinline__ float new_deaths_step(int t, float infected, float recovered,
                                                 float vaccinated, float previous_deaths) {
  const float offset = (t == 1) ? DEATH_RATE * (recovered - vaccinated) - previous_deaths : 0.0f;
  return DEATH_RATE * (GAMMA * infected) + offset;
}

// ------------------------------------------------------------------ unemployment
__device__ __forceinline__ float softplus(float x) {
  return x > COVID_SOFTPLUS_THRESHOLD ? x : log1pf(expf(fminf(x, COVID_SOFTPLUS_THRESHOLD)));
}

// F' = F * exp(-1/lambda) + d_new - exp(-filter_len/lambda) * d_dropped (exact sliding window).
__device__ __forceinline__ void unemployment_filter_update(float* filter_state, int new_delta,
                                                           int dropped_delta,
                                                           const float* __restrict__ filter_decay,
                                                           const float* __restrict__ window_decay) {
#pragma unroll
  for (int k = 0; k < NUM_FILTERS; ++k) {
    filter_state[k] = filter_state[k] * filter_decay[k] + (float)new_delta -
                      window_decay[k] * (float)dropped_delta;
  }
}

__device__ __forceinline__ float unemployment_step(const float* filter_state,
                                                   const float* __restrict__ filter_weights,
                                                   float unemployment_bias,
                                                   float unemployment_modulation,
                                                   float population) {
  float signal = 0.0f;
#pragma unroll
  for (int k = 0; k < NUM_FILTERS; ++k) signal += filter_state[k] * filter_weights[k];
  const float rate_percent = softplus(signal * unemployment_modulation) + unemployment_bias;
  return rate_percent * population / 100.0f;
}

// ------------------------------------------------------------------ economy
// Float worker counts (the original GPU code truncated population * p18_65 to int).
__device__ __forceinline__ float economy_step(float population, float infected, float deaths,
                                              float unemployed) {
  const float incapacitated = INFECTION_TOO_SICK_TO_WORK_RATE * infected + deaths;
  const float cant_work = incapacitated * POP_BETWEEN_AGE_18_65 + unemployed;
  const float can_work = fmaxf(0.0f, population * POP_BETWEEN_AGE_18_65 - cant_work);
  return can_work * DAILY_PRODUCTION_PER_WORKER;
}

// ------------------------------------------------------------------ rewards
__device__ __forceinline__ float crra_nonlinearity(float x) {
  const float annual = fminf(fmaxf(x * NUM_DAYS_IN_AN_YEAR, 0.1f), 3.0f);
#if ECONOMIC_REWARD_CRRA_ETA_IS_ONE
  const float utility = logf(annual);  // eta == 1: the limit (the original divided by zero)
#else
  const float utility = (powf(annual, 1.0f - ECONOMIC_REWARD_CRRA_ETA) - 1.0f) /
                        (1.0f - ECONOMIC_REWARD_CRRA_ETA);
#endif
  return (1.0f + utility) / NUM_DAYS_IN_AN_YEAR;
}

__device__ __forceinline__ float min_max_normalization(float x, float min_x, float max_x) {
  return (x - min_x) / (max_x - min_x + COVID_EPSILON);
}

__device__ __forceinline__ float get_rew(float health_index, float economic_index,
                                         float weightage_on_health) {
  const float weightage_on_economy = 1.0f - weightage_on_health;
  return (weightage_on_health * health_index + weightage_on_economy * economic_index) /
         (weightage_on_health + weightage_on_economy);
}

__device__ __forceinline__ void agent_indices(const CovidData* __restrict__ d, int i,
                                              float new_deaths, float postsubsidy_productivity,
                                              float* health, float* economic) {
  const float h = -new_deaths * VALUE_OF_LIFE / d->agents_health_norm[i];
  const float e = crra_nonlinearity(postsubsidy_productivity / d->agents_economic_norm[i]);
  *health = min_max_normalization(h, d->min_agent_health[i], d->max_agent_health[i]);
  *economic = min_max_normalization(e, d->min_agent_economic[i], d->max_agent_economic[i]);
}

// The planner pays for the subsidies with interest.
__device__ __forceinline__ void planner_indices(float sum_new_deaths, float sum_postsubsidy,
                                                float sum_subsidy, float* health,
                                                float* economic) {
  const float h = -sum_new_deaths * VALUE_OF_LIFE / PLANNER_HEALTH_NORM;
  const float net_output = sum_postsubsidy - (1.0f + RISK_FREE_INTEREST_RATE) * sum_subsidy;
  const float e = crra_nonlinearity(net_output / PLANNER_ECONOMIC_NORM);
  *health = min_max_normalization(h, MIN_PLANNER_HEALTH, MAX_PLANNER_HEALTH);
  *economic = min_max_normalization(e, MIN_PLANNER_ECONOMIC, MAX_PLANNER_ECONOMIC);
}

// ------------------------------------------------------------------ shared step parts
// The pieces of one state's step that the per-component kernels and the fused kernel share
// (same operations on the same values, so both paths stay bit-identical).

// Stores today's SIR outputs of state ai.
__device__ __forceinline__ void store_sir_state(const CovidData* __restrict__ d, long long ai,
                                                float new_deaths, float new_s, float new_i,
                                                float new_r, float new_v, float deaths) {
  d->new_deaths[ai] = new_deaths;
  d->susceptible[ai] = new_s;
  d->infected[ai] = new_i;
  d->recovered[ai] = new_r;
  d->vaccinated[ai] = new_v;
  d->deaths[ai] = deaths;
}

// Updates state i's filters, staged in shared memory (filters_stage: the env's
// (NUM_AGENTS, NUM_FILTERS) block), and returns the unemployed count.
__device__ __forceinline__ float staged_unemployment_step(const CovidData* __restrict__ d,
                                                          float* filters_stage, int env, int i,
                                                          int new_delta, int dropped_delta,
                                                          float population) {
  float filters[NUM_FILTERS];
  float* state = filters_stage + i * NUM_FILTERS;
#pragma unroll
  for (int k = 0; k < NUM_FILTERS; ++k) filters[k] = state[k];
  unemployment_filter_update(filters, new_delta, dropped_delta, d->filter_decay, d->window_decay);
#pragma unroll
  for (int k = 0; k < NUM_FILTERS; ++k) state[k] = filters[k];
  return unemployment_step(filters, d->filter_weights + i * NUM_FILTERS, d->unemployment_bias[i],
                           d->unemployment_modulation[env], population);
}

// State i's scenario observations (world-agent_index, a constant one-hot, is written by the
// initial values and every reset, never by a step). obs_stage: see put_obs_a.
__device__ __forceinline__ void put_scenario_observations(
    const CovidData* __restrict__ d, float* obs_stage, int env, int i, int t, float population,
    float new_s, float new_i, float new_r, float deaths, float new_v, float unemployed,
    float postsubsidy, int lagged_obs_level) {
  const float post_obs = postsubsidy / d->maximum_productivity[i];
  const float lagged_obs = (float)lagged_obs_level / NUM_STRINGENCY_LEVELS;
  const float state6[6] = {new_s, new_i, new_r, deaths, new_v, unemployed};
  if (OBS_A_AGENT_STATE >= 0) {
#pragma unroll
    for (int k = 0; k < 6; ++k) put_obs_a(d, obs_stage, env, i, OBS_A_AGENT_STATE + k, state6[k] / population);
  }
  if (OBS_P_AGENT_STATE >= 0) {
#pragma unroll
    for (int k = 0; k < 6; ++k) d->observations_p[obs_p_at(env, OBS_P_AGENT_STATE + k * NUM_AGENTS + i)] = state6[k] / population;
  }
  if (OBS_A_POSTSUBSIDY_PRODUCTIVITY >= 0) put_obs_a(d, obs_stage, env, i, OBS_A_POSTSUBSIDY_PRODUCTIVITY, post_obs);
  if (OBS_P_POSTSUBSIDY_PRODUCTIVITY >= 0) d->observations_p[obs_p_at(env, OBS_P_POSTSUBSIDY_PRODUCTIVITY + i)] = post_obs;
  if (OBS_A_LAGGED_STRINGENCY_LEVEL >= 0) put_obs_a(d, obs_stage, env, i, OBS_A_LAGGED_STRINGENCY_LEVEL, lagged_obs);
  if (OBS_P_LAGGED_STRINGENCY_LEVEL >= 0) d->observations_p[obs_p_at(env, OBS_P_LAGGED_STRINGENCY_LEVEL + i)] = lagged_obs;
  if (OBS_A_TIME >= 0) put_obs_a(d, obs_stage, env, i, OBS_A_TIME, (float)t / EPISODE_LENGTH);
}

__device__ __forceinline__ void put_planner_time_observation(const CovidData* __restrict__ d,
                                                             int env, int t) {
  if (OBS_P_TIME >= 0) d->observations_p[obs_p_at(env, OBS_P_TIME)] = (float)t / EPISODE_LENGTH;
}

// State i's reward of today; health_index/economic_index: the sums before today.
__device__ __forceinline__ void store_agent_reward(const CovidData* __restrict__ d, long long ai,
                                                   int i, float health_index,
                                                   float economic_index, float new_deaths,
                                                   float postsubsidy) {
  float health, economic;
  agent_indices(d, i, new_deaths, postsubsidy, &health, &economic);
  d->health_index[ai] = health_index + health;
  d->economic_index[ai] = economic_index + economic;
  d->rewards_a[ai] =
      get_rew(health, economic, d->agent_health_weightage[i]) / REWARD_NORMALIZATION_FACTOR;
}

// The planner's reward of today from the sums over the states.
__device__ __forceinline__ void store_planner_reward(const CovidData* __restrict__ d, int env,
                                                     float health_index, float economic_index,
                                                     float sum_new_deaths, float sum_postsubsidy,
                                                     float sum_subsidy) {
  float health, economic;
  planner_indices(sum_new_deaths, sum_postsubsidy, sum_subsidy, &health, &economic);
  d->planner_health_index[env] = health_index + health;
  d->planner_economic_index[env] = economic_index + economic;
  d->rewards_p[env] = get_rew(health, economic, PLANNER_HEALTH_WEIGHTAGE) / REWARD_NORMALIZATION_FACTOR;
}

// The step that ends an episode (t == EPISODE_LENGTH) records its end-of-episode metrics
// (metrics.EPISODE_METRIC_NAMES, the host definition episode_metric_values) and counts the
// episode; run by the planner thread right after store_planner_reward (the states' deaths
// and vaccinations of today are written: by an earlier kernel, or before a block barrier).
// Resets never touch these fields (reset "none").
__device__ __forceinline__ void record_episode_end(const CovidData* __restrict__ d, int env,
                                                   int t) {
  if (t != EPISODE_LENGTH) return;
  float deaths = 0.0f, vaccinated = 0.0f;
  for (int i = 0; i < NUM_AGENTS; ++i) {
    deaths += d->deaths[agent_at(env, i)];
    vaccinated += d->vaccinated[agent_at(env, i)];
  }
  float* metrics = d->episode_metrics + (long long)env * NUM_EPISODE_METRICS;
  metrics[0] = deaths / 1e3f;
  metrics[1] = vaccinated / US_POPULATION * 100.0f;
  metrics[2] = d->planner_health_index[env];
  metrics[3] = d->planner_economic_index[env];
  d->completed_episodes[env] += 1;
}

// ------------------------------------------------------------------ kernel bodies
// filters_stage: the env's filter states in shared memory (load_filter_state before,
// store_filter_state after, each behind a __syncthreads()). Agent threads return today's new
// deaths, post-subsidy productivity and subsidy (the reward's inputs) through *out_new_deaths,
// *out_postsubsidy, *out_subsidy.
__device__ void scenario_kernel_body(const CovidData* __restrict__ d, int env, int tid, int t,
                                     float* filters_stage, float* out_new_deaths,
                                     float* out_postsubsidy, float* out_subsidy) {
  if (tid == COVID_PLANNER) put_planner_time_observation(d, env, t);
  if (tid >= NUM_AGENTS) return;  // no __syncthreads() in this body
  const int i = tid;
  const long long ai = agent_at(env, i);
  const float population = d->population[i];
  const float vaccines = d->vaccines_available[ai];
  d->vaccines_available[ai] = 0.0f;
  const float s = d->susceptible[ai], inf = d->infected[ai], r = d->recovered[ai];
  const float v = d->vaccinated[ai], previous_deaths = d->deaths[ai];
  float new_s, new_i, new_r, new_v, deaths, beta;
  sir_step(s, inf, r, v, vaccines, (float)history_row(d, env, i, t - BETA_DELAY),
           d->beta_intercepts[i], d->beta_slopes[i], d->beta_intercept_modulation[env],
           d->beta_slope_modulation[env], population, &new_s, &new_i, &new_r, &new_v, &deaths,
           &beta);
  const float new_deaths = new_deaths_step(t, inf, r, v, previous_deaths);
  store_sir_state(d, ai, new_deaths, new_s, new_i, new_r, new_v, deaths);

  // Stringency history (ring buffer) and the recursive unemployment filters.
  const int level = d->stringency_level[ai];
  const int dropped = history_row(d, env, i, t - FILTER_LEN) - history_row(d, env, i, t - FILTER_LEN - 1);
  const int new_delta = level - history_row(d, env, i, t - 1);
  d->stringency_history[history_at(env, t, i)] = (signed char)level;
  const float unemployed =
      staged_unemployment_step(d, filters_stage, env, i, new_delta, dropped, population);
  d->unemployed[ai] = unemployed;
  const float productivity = economy_step(population, new_i, deaths, unemployed);
  const float subsidy = d->subsidy[ai];
  const float postsubsidy = productivity + subsidy;
  d->productivity[ai] = productivity;
  d->postsubsidy_productivity[ai] = postsubsidy;
  *out_new_deaths = new_deaths;
  *out_postsubsidy = postsubsidy;
  *out_subsidy = subsidy;
  put_scenario_observations(d, nullptr, env, i, t, population, new_s, new_i, new_r, deaths, new_v,
                            unemployed, postsubsidy, history_row(d, env, i, t - BETA_DELAY + 1));
}

// Sums *a, *b, *c over the block's threads in a fixed order: a shuffle tree inside each warp,
// then the warps' partial sums in warp order. The sums are valid in thread COVID_PLANNER.
// Every thread of the block must call it; it contains one __syncthreads(), at its end for the
// other threads (so shared-memory writes made before the call are visible after it).
__device__ __forceinline__ void block_sum3(int tid, float* a, float* b, float* c) {
  constexpr int kWarps = (NUM_THREADS + 31) / 32;
  __shared__ float s_partial[3][kWarps];
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int lanes = (NUM_THREADS - warp * 32) < 32 ? (NUM_THREADS - warp * 32) : 32;
  const unsigned mask = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u);
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float other_a = __shfl_down_sync(mask, *a, offset);
    const float other_b = __shfl_down_sync(mask, *b, offset);
    const float other_c = __shfl_down_sync(mask, *c, offset);
    if (lane + offset < lanes) {
      *a += other_a;
      *b += other_b;
      *c += other_c;
    }
  }
  if (lane == 0) {
    s_partial[0][warp] = *a;
    s_partial[1][warp] = *b;
    s_partial[2][warp] = *c;
  }
  __syncthreads();
  if (tid == COVID_PLANNER) {
    float sum_a = 0.0f, sum_b = 0.0f, sum_c = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      sum_a += s_partial[0][w];
      sum_b += s_partial[1][w];
      sum_c += s_partial[2][w];
    }
    *a = sum_a;
    *b = sum_b;
    *c = sum_c;
  }
}

// Agent threads pass today's new_deaths, postsubsidy_productivity and subsidy of their state
// (the other threads pass zeros).
__device__ void reward_kernel_body(const CovidData* __restrict__ d, int env, int tid, int t,
                                   float new_deaths, float postsubsidy, float subsidy) {
  if (tid < NUM_AGENTS) {
    const long long ai = agent_at(env, tid);
    store_agent_reward(d, ai, tid, d->health_index[ai], d->economic_index[ai], new_deaths,
                       postsubsidy);
  }
  block_sum3(tid, &new_deaths, &postsubsidy, &subsidy);
  if (tid == COVID_PLANNER) {
    store_planner_reward(d, env, d->planner_health_index[env], d->planner_economic_index[env],
                         new_deaths, postsubsidy, subsidy);
    record_episode_end(d, env, t);
  }
}

// The only place time advances: after every thread of the block has read _timestep_.
__device__ void commit_timestep(const CovidData* __restrict__ d, int env, int tid, int t) {
  __syncthreads();
  if (tid == 0) {
    d->timestep[env] = t;
    d->done[env] = (t >= EPISODE_LENGTH) ? 1 : 0;
  }
}

// ------------------------------------------------------------------ kernels
extern "C" __global__ void CudaCovidAndEconomySimulationStep(const CovidData* __restrict__ d) {
  const int env = blockIdx.x;
  const int tid = threadIdx.x;
  __shared__ float s_filters[NUM_AGENTS * NUM_FILTERS];
  load_filter_state(d, s_filters, env, tid);
  __syncthreads();
  float new_deaths, postsubsidy, subsidy;
  scenario_kernel_body(d, env, tid, step_being_computed(d, env), s_filters, &new_deaths,
                       &postsubsidy, &subsidy);
  __syncthreads();
  store_filter_state(d, s_filters, env, tid);
}

extern "C" __global__ void CudaComputeReward(const CovidData* __restrict__ d) {
  const int env = blockIdx.x;
  const int tid = threadIdx.x;
  const int t = step_being_computed(d, env);
  float new_deaths = 0.0f, postsubsidy = 0.0f, subsidy = 0.0f;
  if (tid < NUM_AGENTS) {
    const long long ai = agent_at(env, tid);
    new_deaths = d->new_deaths[ai];
    postsubsidy = d->postsubsidy_productivity[ai];
    subsidy = d->subsidy[ai];
  }
  reward_kernel_body(d, env, tid, t, new_deaths, postsubsidy, subsidy);
  commit_timestep(d, env, tid, t);
}

#endif  // AI_ECONOMIST_COVID19_ENV_STEP_CU_

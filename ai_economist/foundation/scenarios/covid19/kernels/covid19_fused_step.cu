// The fused COVID-19 step: the three components, the scenario and the rewards of one env in
// one launch (grid = num_envs, block = NUM_THREADS = NUM_AGENTS + 1).
//
// It calls the same device functions as the per-component kernels (the model functions
// open_close_step ... get_rew, and the shared step parts: the put_*_observations writers,
// store_sir_state, staged_unemployment_step, store_agent_reward, store_planner_reward,
// block_sum3), in the same order on the same values, so both paths give bit-identical results
// (tested). What differs is only the memory schedule:
//
// * load everything first: every global value the step reads is loaded before anything is
//   stored, so all loads of a thread are in flight together (two dependent rounds: the
//   timestep, then everything else) instead of one round per component;
// * store only what changes: the action masks are rewritten only when an agent's "allowed"
//   flag (or the planner's) flips, subsidies only on a new subsidy level, the day's vaccines
//   only when some were left (the step uses them all up); always on the first step of an
//   episode;
// * store whole 32-byte sectors of the agent observations: the staged dynamic columns plus
//   the constant one-hot columns sharing their sectors, so no sector is written in part;
// * block sums by warp shuffles (block_sum3) with one barrier.
#ifndef AI_ECONOMIST_COVID19_FUSED_STEP_CU_
#define AI_ECONOMIST_COVID19_FUSED_STEP_CU_

#include "../../../components/covid19_components_step.cu"
#include "../covid19_env_step.cu"

static_assert(BETA_DELAY >= 1 && BETA_DELAY < HISTORY_LEN, "infection lag outside the history");
static_assert(FILTER_LEN + 1 <= HISTORY_LEN, "the history must hold the filter window");

// ------------------------------------------------------------------ sector-complete obs stores
// Agent observation rows are written in whole 8-float (32-byte) sectors when rows are
// sector-aligned: columns [0, OBS_A_HEAD_END) and [OBS_A_TAIL_BEGIN, OBS_A_DIM), which cover
// every dynamic column; one-hot columns inside them get their constant value. Otherwise the
// two ranges are exactly the dynamic columns before and after the one-hot block.
#define COVID_SECTOR_FLOATS 8
#if OBS_A_AGENT_INDEX >= 0 && OBS_A_DIM % COVID_SECTOR_FLOATS == 0
#define OBS_A_ONEHOT_END (OBS_A_AGENT_INDEX + NUM_AGENTS)
#define OBS_A_HEAD_END_RAW \
  ((OBS_A_AGENT_INDEX + COVID_SECTOR_FLOATS - 1) / COVID_SECTOR_FLOATS * COVID_SECTOR_FLOATS)
#define OBS_A_HEAD_END (OBS_A_HEAD_END_RAW < OBS_A_ONEHOT_END ? OBS_A_HEAD_END_RAW : OBS_A_ONEHOT_END)
#define OBS_A_TAIL_BEGIN_RAW (OBS_A_ONEHOT_END / COVID_SECTOR_FLOATS * COVID_SECTOR_FLOATS)
#define OBS_A_TAIL_BEGIN \
  (OBS_A_TAIL_BEGIN_RAW > OBS_A_HEAD_END ? OBS_A_TAIL_BEGIN_RAW : OBS_A_HEAD_END)
#elif OBS_A_AGENT_INDEX >= 0  // unaligned rows: exactly the dynamic columns around the one-hot
#define OBS_A_HEAD_END OBS_A_AGENT_INDEX
#define OBS_A_TAIL_BEGIN (OBS_A_AGENT_INDEX + NUM_AGENTS)
#else  // no one-hot block: the whole row is dynamic
#define OBS_A_HEAD_END OBS_A_DIM
#define OBS_A_TAIL_BEGIN OBS_A_DIM
#endif
#define OBS_A_WRITE_DIM (OBS_A_HEAD_END + OBS_A_DIM - OBS_A_TAIL_BEGIN)

// All threads: store columns [0, HEAD_END) and [TAIL_BEGIN, DIM) of every agent's row.
__device__ __forceinline__ void flush_observation_sectors_a(const CovidData* __restrict__ d,
                                                            const float* stage, int env, int tid) {
  float* out = d->observations_a + (long long)env * NUM_AGENTS * OBS_A_DIM;
  for (int e = tid; e < NUM_AGENTS * OBS_A_WRITE_DIM; e += NUM_THREADS) {
    const int i = e / OBS_A_WRITE_DIM;
    const int w = e - i * OBS_A_WRITE_DIM;
    const int col = w < OBS_A_HEAD_END ? w : w - OBS_A_HEAD_END + OBS_A_TAIL_BEGIN;
    float value;
    if (OBS_A_AGENT_INDEX >= 0 && col >= OBS_A_AGENT_INDEX && col < OBS_A_AGENT_INDEX + NUM_AGENTS) {
      value = (col - OBS_A_AGENT_INDEX == i) ? 1.0f : 0.0f;  // world-agent_index (np.eye)
    } else {
      value = stage[i * OBS_A_DYN_DIM + obs_a_dyn_index(col)];
    }
    out[i * OBS_A_DIM + col] = value;
  }
}

// ------------------------------------------------------------------ loads
// Everything an agent thread reads from global memory in one step.
struct FusedAgentInputs {
  int action, previous_level, cooldown_until;
  int lagged_level, lagged_obs_level, previous_day_level, window_new, window_old;
  float vaccines, susceptible, infected, recovered, vaccinated, previous_deaths;
  float health_index, economic_index;
};

__device__ __forceinline__ void load_agent_inputs(const CovidData* __restrict__ d, int env, int i,
                                                  int t, FusedAgentInputs* in) {
  const long long ai = agent_at(env, i);
  if (USE_REAL_WORLD_POLICIES) {
    // The original applies the real policy one day late; the table row t already holds it.
    in->action = d->real_policy_stringency[(long long)real_policy_row(t) * NUM_AGENTS + i];
  } else {
    in->action = d->sampled_actions_a[ai];
  }
  in->previous_level = d->stringency_level[ai];
  in->cooldown_until = d->cooldown_until[ai];
  in->lagged_level = history_row(d, env, i, t - BETA_DELAY);
  in->lagged_obs_level = BETA_DELAY > 1 ? history_row(d, env, i, t - BETA_DELAY + 1) : 0;
  in->previous_day_level = history_row(d, env, i, t - 1);
  in->window_new = history_row(d, env, i, t - FILTER_LEN);
  in->window_old = history_row(d, env, i, t - FILTER_LEN - 1);
  in->vaccines = d->vaccines_available[ai];
  in->susceptible = d->susceptible[ai];
  in->infected = d->infected[ai];
  in->recovered = d->recovered[ai];
  in->vaccinated = d->vaccinated[ai];
  in->previous_deaths = d->deaths[ai];
  in->health_index = d->health_index[ai];
  in->economic_index = d->economic_index[ai];
}

// ------------------------------------------------------------------ one agent's step
// Components, scenario and reward of state i; stores its outputs; stages its observation
// columns in obs_stage and its filters in filters_stage; returns the reward's block-sum inputs.
__device__ void fused_agent_step(const CovidData* __restrict__ d, int env, int i, int t,
                                 int subsidy_level, bool subsidy_changed,
                                 const FusedAgentInputs& in, float* filters_stage,
                                 float* obs_stage, float* new_deaths_out, float* postsubsidy_out,
                                 float* subsidy_out) {
  const long long ai = agent_at(env, i);
  const bool first_step = t == 1;
  // ControlUSStateOpenCloseStatus
  int level = in.action, cooldown = in.cooldown_until;
  if (!USE_REAL_WORLD_POLICIES) {
    open_close_step(in.action, in.previous_level, in.cooldown_until, t, &level, &cooldown);
    if (cooldown != in.cooldown_until) d->cooldown_until[ai] = cooldown;
  }
  if (level != in.previous_level || first_step) d->stringency_level[ai] = level;
  put_open_close_observations(d, obs_stage, env, i, level);
  const float allowed = USE_REAL_WORLD_POLICIES ? 1.0f : open_close_action_mask(t, cooldown);
  const float allowed_before =
      USE_REAL_WORLD_POLICIES ? 1.0f : open_close_action_mask(t - 1, in.cooldown_until);
  if (allowed != allowed_before || first_step) {
    float* mask = d->action_mask_a + ai * NUM_ACTIONS_A;
    mask[0] = 1.0f;
#pragma unroll
    for (int j = 1; j < NUM_ACTIONS_A; ++j) mask[j] = allowed;
  }
  // FederalGovernmentSubsidy (the level is the block's; the planner thread stores it)
  const float subsidy = subsidy_amounts(subsidy_level, d->max_daily_subsidy_per_state[i]);
  if (subsidy_changed || first_step) d->subsidy[ai] = subsidy;
  put_subsidy_agent_observations(d, obs_stage, env, i, t, subsidy_level);
  // VaccinationCampaign
  const float vaccines = in.vaccines + vaccination_step(t, d->num_vaccines_per_delivery[i]);
  put_vaccination_agent_observations(d, obs_stage, env, i, t);
  // The scenario: SIR, unemployment, economy (the step uses up the day's vaccines)
  if (in.vaccines != 0.0f) d->vaccines_available[ai] = 0.0f;
  const float population = d->population[i];
  float new_s, new_i, new_r, new_v, deaths, beta;
  sir_step(in.susceptible, in.infected, in.recovered, in.vaccinated, vaccines,
           (float)in.lagged_level, d->beta_intercepts[i], d->beta_slopes[i],
           d->beta_intercept_modulation[env], d->beta_slope_modulation[env], population, &new_s,
           &new_i, &new_r, &new_v, &deaths, &beta);
  const float new_deaths =
      new_deaths_step(t, in.infected, in.recovered, in.vaccinated, in.previous_deaths);
  store_sir_state(d, ai, new_deaths, new_s, new_i, new_r, new_v, deaths);
  d->stringency_history[history_at(env, t, i)] = (signed char)level;
  const float unemployed =
      staged_unemployment_step(d, filters_stage, env, i, level - in.previous_day_level,
                               in.window_new - in.window_old, population);
  d->unemployed[ai] = unemployed;
  const float productivity = economy_step(population, new_i, deaths, unemployed);
  const float postsubsidy = productivity + subsidy;
  d->productivity[ai] = productivity;
  d->postsubsidy_productivity[ai] = postsubsidy;
  // Scenario observations and the agent's reward
  const int lagged_obs_level = BETA_DELAY > 1 ? in.lagged_obs_level : level;
  put_scenario_observations(d, obs_stage, env, i, t, population, new_s, new_i, new_r, deaths,
                            new_v, unemployed, postsubsidy, lagged_obs_level);
  store_agent_reward(d, ai, i, in.health_index, in.economic_index, new_deaths, postsubsidy);
  *new_deaths_out = new_deaths;
  *postsubsidy_out = postsubsidy;
  *subsidy_out = subsidy;
}

// ------------------------------------------------------------------ the planner's step
__device__ void fused_planner_step(const CovidData* __restrict__ d, int env, int t,
                                   int subsidy_level, bool subsidy_changed, float health_index,
                                   float economic_index, float sum_new_deaths,
                                   float sum_postsubsidy, float sum_subsidy) {
  if (subsidy_changed) d->subsidy_level[env] = subsidy_level;
  put_subsidy_planner_observations(d, env, t, subsidy_level);
  put_vaccination_planner_observations(d, env, t);
  put_planner_time_observation(d, env, t);
  store_planner_reward(d, env, health_index, economic_index, sum_new_deaths, sum_postsubsidy,
                       sum_subsidy);
  record_episode_end(d, env, t);  // after block_sum3's barrier: every state's deaths are in
}

// ------------------------------------------------------------------ the kernel
extern "C" __global__ void __launch_bounds__(NUM_THREADS, COVID_FUSED_MIN_BLOCKS)
CudaCovidStepFused(const CovidData* __restrict__ d) {
  __shared__ float s_obs_a[NUM_AGENTS * OBS_A_DYN_DIM];
  __shared__ float s_filters[NUM_AGENTS * NUM_FILTERS];
  const int env = blockIdx.x;
  const int tid = threadIdx.x;
  const int t = step_being_computed(d, env);
  // Loads (the block's values are read by every thread: one broadcast transaction per warp).
  const int previous_subsidy_level = d->subsidy_level[env];
  const int subsidy_level = USE_REAL_WORLD_POLICIES
                                ? d->real_subsidy_levels[real_policy_row(t)]
                                : subsidy_step(d->sampled_actions_p[env], previous_subsidy_level, t);
  const bool subsidy_changed = subsidy_level != previous_subsidy_level;
  FusedAgentInputs in;
  float planner_health_index = 0.0f, planner_economic_index = 0.0f;
  if (tid < NUM_AGENTS) {
    load_agent_inputs(d, env, tid, t, &in);
  } else if (tid == COVID_PLANNER) {
    planner_health_index = d->planner_health_index[env];
    planner_economic_index = d->planner_economic_index[env];
  }
  load_filter_state(d, s_filters, env, tid);
  __syncthreads();  // the filters are in shared memory
  float new_deaths = 0.0f, postsubsidy = 0.0f, subsidy = 0.0f;
  if (tid < NUM_AGENTS) {
    fused_agent_step(d, env, tid, t, subsidy_level, subsidy_changed, in, s_filters, s_obs_a,
                     &new_deaths, &postsubsidy, &subsidy);
  }
  const float mask_p = subsidy_action_mask(t);
  if (mask_p != subsidy_action_mask(t - 1) || t == 1) {
    for (int j = tid; j < NUM_ACTIONS_P; j += NUM_THREADS) {
      d->action_mask_p[(long long)env * NUM_ACTIONS_P + j] = (j == 0) ? 1.0f : mask_p;
    }
  }
  // block_sum3 ends with a barrier: the staged observations and filters are complete after it.
  block_sum3(tid, &new_deaths, &postsubsidy, &subsidy);
  if (tid == COVID_PLANNER) {
    fused_planner_step(d, env, t, subsidy_level, subsidy_changed, planner_health_index,
                       planner_economic_index, new_deaths, postsubsidy, subsidy);
  }
  flush_observation_sectors_a(d, s_obs_a, env, tid);
  store_filter_state(d, s_filters, env, tid);
  if (tid == 0) {  // every thread read _timestep_ before block_sum3's barrier
    d->timestep[env] = t;
    d->done[env] = (t >= EPISODE_LENGTH) ? 1 : 0;
  }
}

#endif  // AI_ECONOMIST_COVID19_FUSED_STEP_CU_

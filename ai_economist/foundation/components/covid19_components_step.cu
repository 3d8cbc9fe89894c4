// COVID-19 components on the GPU: ControlUSStateOpenCloseStatus, FederalGovernmentSubsidy,
// VaccinationCampaign. Each device function mirrors the numpy function of the same name in
// ai_economist/foundation/scenarios/covid19/model/dynamics.py; each *_kernel_body mirrors the
// matching CovidSimulation.step_* method plus the component's observations and masks.
//
// Every body is called by ALL threads of the block (some contain __syncthreads()).
#ifndef AI_ECONOMIST_COVID19_COMPONENTS_STEP_CU_
#define AI_ECONOMIST_COVID19_COMPONENTS_STEP_CU_

#include "../scenarios/covid19/kernels/covid19_common.cuh"

// ------------------------------------------------------------------ ControlUSStateOpenCloseStatus
// Action 0 keeps the previous level, action j in 1..levels sets level j. On the step right
// after a cooldown ends (t == cooldown_until + 1) a non-zero action starts a new cooldown of
// ACTION_COOLDOWN_PERIOD days and a NO-OP extends it by one day.
__device__ __forceinline__ void open_close_step(int action, int previous_level, int cooldown_until,
                                                int t, int* level, int* new_cooldown_until) {
  const bool valid = action >= 1 && action <= NUM_STRINGENCY_LEVELS;
  *level = valid ? action : previous_level;
  const int extension = action > 0 ? ACTION_COOLDOWN_PERIOD : 1;
  *new_cooldown_until = (t == cooldown_until + 1) ? cooldown_until + extension : cooldown_until;
}

__device__ __forceinline__ float open_close_action_mask(int t, int cooldown_until) {
  return t >= cooldown_until ? 1.0f : 0.0f;
}

// State i's policy indicator in the agent and planner observations.
__device__ __forceinline__ void put_open_close_observations(const CovidData* __restrict__ d,
                                                            float* obs_stage, int env, int i,
                                                            int level) {
  const float indicator = (float)level / NUM_STRINGENCY_LEVELS;
  if (OBS_A_POLICY_INDICATORS >= 0) put_obs_a(d, obs_stage, env, i, OBS_A_POLICY_INDICATORS, indicator);
  if (OBS_P_POLICY_INDICATORS >= 0) d->observations_p[obs_p_at(env, OBS_P_POLICY_INDICATORS + i)] = indicator;
}

// Writes agent i's "non-NO-OP actions allowed" flag to allowed[i] (shared memory); the
// caller stores the whole mask with flush_action_mask_a after a __syncthreads().
__device__ void open_close_kernel_body(const CovidData* __restrict__ d, int env, int tid, int t,
                                       float* allowed) {
  if (tid >= NUM_AGENTS) return;  // no __syncthreads() in this body
  const long long ai = agent_at(env, tid);
  int level;
  int cooldown = d->cooldown_until[ai];
  if (USE_REAL_WORLD_POLICIES) {
    // The original applies the real policy one day late; the table row t already holds it.
    level = d->real_policy_stringency[(long long)real_policy_row(t) * NUM_AGENTS + tid];
  } else {
    open_close_step(d->sampled_actions_a[ai], d->stringency_level[ai], cooldown, t, &level,
                    &cooldown);
    d->cooldown_until[ai] = cooldown;
  }
  d->stringency_level[ai] = level;
  put_open_close_observations(d, nullptr, env, tid, level);
  allowed[tid] = USE_REAL_WORLD_POLICIES ? 1.0f : open_close_action_mask(t, cooldown);
}

// ------------------------------------------------------------------ FederalGovernmentSubsidy
// A decision is read on the first day of each interval; the action IS the level (NO-OP = 0).
__device__ __forceinline__ int subsidy_step(int planner_action, int previous_level, int t) {
  return ((t - 1) % SUBSIDY_INTERVAL == 0) ? planner_action : previous_level;
}

__device__ __forceinline__ float subsidy_amounts(int subsidy_level, float max_daily_subsidy) {
  return (float)subsidy_level / NUM_SUBSIDY_LEVELS * max_daily_subsidy;
}

__device__ __forceinline__ float subsidy_action_mask(int t) {
  return (t % SUBSIDY_INTERVAL == 0) ? 1.0f : 0.0f;
}

// The subsidy level and the time until the next decision, in agent i's / the planner's
// observations.
__device__ __forceinline__ float subsidy_level_observation(int level) {
  return (float)level / NUM_SUBSIDY_LEVELS;
}

__device__ __forceinline__ float t_until_next_subsidy(int t) {
  return (float)(SUBSIDY_INTERVAL - t % SUBSIDY_INTERVAL) / SUBSIDY_INTERVAL;
}

__device__ __forceinline__ void put_subsidy_agent_observations(const CovidData* __restrict__ d,
                                                               float* obs_stage, int env, int i,
                                                               int t, int level) {
  if (OBS_A_CURRENT_SUBSIDY_LEVEL >= 0) put_obs_a(d, obs_stage, env, i, OBS_A_CURRENT_SUBSIDY_LEVEL, subsidy_level_observation(level));
  if (OBS_A_T_UNTIL_NEXT_SUBSIDY >= 0) put_obs_a(d, obs_stage, env, i, OBS_A_T_UNTIL_NEXT_SUBSIDY, t_until_next_subsidy(t));
}

__device__ __forceinline__ void put_subsidy_planner_observations(const CovidData* __restrict__ d,
                                                                 int env, int t, int level) {
  if (OBS_P_CURRENT_SUBSIDY_LEVEL >= 0) d->observations_p[obs_p_at(env, OBS_P_CURRENT_SUBSIDY_LEVEL)] = subsidy_level_observation(level);
  if (OBS_P_T_UNTIL_NEXT_SUBSIDY >= 0) d->observations_p[obs_p_at(env, OBS_P_T_UNTIL_NEXT_SUBSIDY)] = t_until_next_subsidy(t);
}

__device__ void subsidy_kernel_body(const CovidData* __restrict__ d, int env, int tid, int t) {
  const int level = USE_REAL_WORLD_POLICIES
                        ? d->real_subsidy_levels[real_policy_row(t)]
                        : subsidy_step(d->sampled_actions_p[env], d->subsidy_level[env], t);
  __syncthreads();  // every thread has read the previous level before the planner writes
  if (tid < NUM_AGENTS) {
    d->subsidy[agent_at(env, tid)] = subsidy_amounts(level, d->max_daily_subsidy_per_state[tid]);
    put_subsidy_agent_observations(d, nullptr, env, tid, t, level);
  } else if (tid == COVID_PLANNER) {
    d->subsidy_level[env] = level;
    put_subsidy_planner_observations(d, env, t, level);
  }
  const float allowed = subsidy_action_mask(t);
  for (int j = tid; j < NUM_ACTIONS_P; j += blockDim.x) {
    d->action_mask_p[(long long)env * NUM_ACTIONS_P + j] = (j == 0) ? 1.0f : allowed;
  }
}

// ------------------------------------------------------------------ VaccinationCampaign
__device__ __forceinline__ float vaccination_step(int t, float num_vaccines_per_delivery) {
  const bool deliver = t >= FIRST_DELIVERY_STEP && t % DELIVERY_INTERVAL == 0;
  return deliver ? num_vaccines_per_delivery : 0.0f;
}

// The original's CPU formula, in float (not the original GPU's integer division).
__device__ __forceinline__ float time_until_next_vaccines(int t) {
  if (t < FIRST_DELIVERY_STEP) {
    const float steps = (float)(FIRST_DELIVERY_STEP - (t + 1)) / DELIVERY_INTERVAL;
    return fminf(1.0f, steps) / DELIVERY_INTERVAL;
  }
  return (float)(DELIVERY_INTERVAL - (t + 1) % DELIVERY_INTERVAL) / DELIVERY_INTERVAL;
}

__device__ __forceinline__ float next_vaccination_rate(int t) {
  return t >= FIRST_DELIVERY_STEP ? DAILY_VACCINES_PER_MILLION_PEOPLE / 1e6f : 0.0f;
}

__device__ __forceinline__ void put_vaccination_agent_observations(
    const CovidData* __restrict__ d, float* obs_stage, int env, int i, int t) {
  if (OBS_A_T_UNTIL_NEXT_VACCINES >= 0) put_obs_a(d, obs_stage, env, i, OBS_A_T_UNTIL_NEXT_VACCINES, time_until_next_vaccines(t));
  if (OBS_A_NEXT_VACCINATION_RATE >= 0) put_obs_a(d, obs_stage, env, i, OBS_A_NEXT_VACCINATION_RATE, next_vaccination_rate(t));
}

__device__ __forceinline__ void put_vaccination_planner_observations(
    const CovidData* __restrict__ d, int env, int t) {
  if (OBS_P_T_UNTIL_NEXT_VACCINES >= 0) d->observations_p[obs_p_at(env, OBS_P_T_UNTIL_NEXT_VACCINES)] = time_until_next_vaccines(t);
  if (OBS_P_NEXT_VACCINATION_RATE >= 0) d->observations_p[obs_p_at(env, OBS_P_NEXT_VACCINATION_RATE)] = next_vaccination_rate(t);
}

__device__ void vaccination_kernel_body(const CovidData* __restrict__ d, int env, int tid, int t) {
  if (tid < NUM_AGENTS) {
    const long long ai = agent_at(env, tid);
    d->vaccines_available[ai] += vaccination_step(t, d->num_vaccines_per_delivery[tid]);
    put_vaccination_agent_observations(d, nullptr, env, tid, t);
  } else if (tid == COVID_PLANNER) {
    put_vaccination_planner_observations(d, env, t);
  }
}

// ------------------------------------------------------------------ kernels
extern "C" __global__ void CudaControlUSStateOpenCloseStatusStep(const CovidData* __restrict__ d) {
  const int env = blockIdx.x;
  __shared__ float s_allowed[NUM_AGENTS];
  open_close_kernel_body(d, env, threadIdx.x, step_being_computed(d, env), s_allowed);
  __syncthreads();
  flush_action_mask_a(d, s_allowed, env, threadIdx.x);
}

extern "C" __global__ void CudaFederalGovernmentSubsidyStep(const CovidData* __restrict__ d) {
  const int env = blockIdx.x;
  subsidy_kernel_body(d, env, threadIdx.x, step_being_computed(d, env));
}

extern "C" __global__ void CudaVaccinationCampaignStep(const CovidData* __restrict__ d) {
  const int env = blockIdx.x;
  vaccination_kernel_body(d, env, threadIdx.x, step_being_computed(d, env));
}

#endif  // AI_ECONOMIST_COVID19_COMPONENTS_STEP_CU_

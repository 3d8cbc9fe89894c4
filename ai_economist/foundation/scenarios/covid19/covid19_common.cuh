// Shared by the COVID-19 CUDA kernels: the generated state declaration and index helpers.
//
// Launch convention: grid = num_envs blocks, block = NUM_THREADS = NUM_AGENTS + 1 threads.
// Thread i < NUM_AGENTS is US state i; thread NUM_AGENTS is the federal planner.
//
// Time convention (removes the original's hidden ordering coupling): every kernel of a step
// computes on t = _timestep_[env] + 1 and only the LAST kernel of the step
// (CudaComputeReward, or CudaCovidStepFused) commits _timestep_ = t and _done_ = (t >= L).
// The component kernels and the scenario kernel therefore never depend on which of them
// runs first, and launching a kernel twice by mistake does not advance time.
#ifndef AI_ECONOMIST_COVID19_COMMON_CUH_
#define AI_ECONOMIST_COVID19_COMMON_CUH_

#include "covid19_generated.h"

#define COVID_EPSILON 1e-10f
#define COVID_SOFTPLUS_THRESHOLD 20.0f
#define COVID_PLANNER NUM_AGENTS

// Flat index of (env, agent) in a per-env (NUM_AGENTS,) array.
__device__ __forceinline__ long long agent_at(int env, int i) {
  return (long long)env * NUM_AGENTS + i;
}

// Ring-buffer slot of global day `row` (negative rows are the pre-episode real policy).
__device__ __forceinline__ int history_slot(int row) {
  const int slot = row % HISTORY_LEN;
  return slot < 0 ? slot + HISTORY_LEN : slot;
}

__device__ __forceinline__ long long history_at(int env, int row, int i) {
  return ((long long)env * HISTORY_LEN + history_slot(row)) * NUM_AGENTS + i;
}

__device__ __forceinline__ int history_row(const CovidData* __restrict__ d, int env, int i, int row) {
  return (int)d->stringency_history[history_at(env, row, i)];
}

// Flat index of element `offset` of agent i's observation vector.
__device__ __forceinline__ long long obs_a_at(int env, int i, int offset) {
  return ((long long)env * NUM_AGENTS + i) * OBS_A_DIM + offset;
}

__device__ __forceinline__ long long obs_p_at(int env, int offset) {
  return (long long)env * OBS_P_DIM + offset;
}

// The step this launch computes (see the time convention above).
__device__ __forceinline__ int step_being_computed(const CovidData* __restrict__ d, int env) {
  return d->timestep[env] + 1;
}

// Row of the (EPISODE_LENGTH + 1)-row real-policy tables for step t (clamped).
__device__ __forceinline__ int real_policy_row(int t) {
  return t < 0 ? 0 : (t > EPISODE_LENGTH ? EPISODE_LENGTH : t);
}

#endif  // AI_ECONOMIST_COVID19_COMMON_CUH_

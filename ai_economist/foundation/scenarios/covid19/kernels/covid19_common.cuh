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

// ------------------------------------------------------------------ coalesced observation stores
// A step writes every agent-observation column except the constant one-hot world-agent_index
// (restored by resets, never written by a step). The fused kernel stages those "dynamic"
// columns of all agents in shared memory (row i = agent i, OBS_A_DYN_DIM floats) and the whole
// block then stores them with consecutive threads on consecutive addresses
// (flush_observations_a), instead of each thread storing into its own 256-byte row (one cache
// line per thread and store instruction). The per-component kernels write straight to global
// memory (stage == nullptr): same values, same addresses.
#if OBS_A_AGENT_INDEX >= 0
#define OBS_A_DYN_DIM (OBS_A_DIM - NUM_AGENTS)
#else
#define OBS_A_DYN_DIM OBS_A_DIM
#endif

// Staged index of dynamic column `col` and back.
__device__ __forceinline__ int obs_a_dyn_index(int col) {
  return (OBS_A_AGENT_INDEX >= 0 && col > OBS_A_AGENT_INDEX) ? col - NUM_AGENTS : col;
}

__device__ __forceinline__ int obs_a_dyn_column(int c) {
  return (OBS_A_AGENT_INDEX >= 0 && c >= OBS_A_AGENT_INDEX) ? c + NUM_AGENTS : c;
}

__device__ __forceinline__ void put_obs_a(const CovidData* __restrict__ d, float* stage, int env,
                                          int i, int col, float value) {
  if (stage != nullptr) {
    stage[i * OBS_A_DYN_DIM + obs_a_dyn_index(col)] = value;
  } else {
    d->observations_a[obs_a_at(env, i, col)] = value;
  }
}

// All threads: store the staged dynamic columns of every agent (after a __syncthreads()).
__device__ __forceinline__ void flush_observations_a(const CovidData* __restrict__ d,
                                                     const float* stage, int env, int tid) {
  float* out = d->observations_a + (long long)env * NUM_AGENTS * OBS_A_DIM;
  for (int e = tid; e < NUM_AGENTS * OBS_A_DYN_DIM; e += NUM_THREADS) {
    const int i = e / OBS_A_DYN_DIM;
    out[i * OBS_A_DIM + obs_a_dyn_column(e - i * OBS_A_DYN_DIM)] = stage[e];
  }
}

// All threads: the (NUM_AGENTS, NUM_ACTIONS_A) action mask of an env from the per-agent
// "non-NO-OP actions allowed" values (1 or 0) in shared memory, stored contiguously.
__device__ __forceinline__ void flush_action_mask_a(const CovidData* __restrict__ d,
                                                    const float* allowed, int env, int tid) {
  float* out = d->action_mask_a + (long long)env * NUM_AGENTS * NUM_ACTIONS_A;
  for (int e = tid; e < NUM_AGENTS * NUM_ACTIONS_A; e += NUM_THREADS) {
    const int i = e / NUM_ACTIONS_A;
    out[e] = (e - i * NUM_ACTIONS_A == 0) ? 1.0f : allowed[i];
  }
}

// All threads: copy an env's (NUM_AGENTS, NUM_FILTERS) unemployment filters between global
// and shared memory with contiguous accesses (a __syncthreads() must follow / precede).
__device__ __forceinline__ void load_filter_state(const CovidData* __restrict__ d, float* stage,
                                                  int env, int tid) {
  const float* in = d->filter_state + (long long)env * NUM_AGENTS * NUM_FILTERS;
  for (int e = tid; e < NUM_AGENTS * NUM_FILTERS; e += NUM_THREADS) stage[e] = in[e];
}

__device__ __forceinline__ void store_filter_state(const CovidData* __restrict__ d,
                                                   const float* stage, int env, int tid) {
  float* out = d->filter_state + (long long)env * NUM_AGENTS * NUM_FILTERS;
  for (int e = tid; e < NUM_AGENTS * NUM_FILTERS; e += NUM_THREADS) out[e] = stage[e];
}

// Occupancy of the fused kernel: ask ptxas for registers that let COVID_FUSED_TARGET_WARPS
// warps share an SM (blocks of COVID_WARPS_PER_BLOCK warps) instead of what its unconstrained
// register count allows. -DCOVID_FUSED_TARGET_WARPS=N overrides the default (benchmarks).
#ifndef COVID_FUSED_TARGET_WARPS
#define COVID_FUSED_TARGET_WARPS 32
#endif
#define COVID_WARPS_PER_BLOCK ((NUM_THREADS + 31) / 32)
#define COVID_FUSED_MIN_BLOCKS                                            \
  (COVID_FUSED_TARGET_WARPS / COVID_WARPS_PER_BLOCK > 0                   \
       ? COVID_FUSED_TARGET_WARPS / COVID_WARPS_PER_BLOCK                 \
       : 1)

// The step this launch computes (see the time convention above).
__device__ __forceinline__ int step_being_computed(const CovidData* __restrict__ d, int env) {
  return d->timestep[env] + 1;
}

// Row of the (EPISODE_LENGTH + 1)-row real-policy tables for step t (clamped).
__device__ __forceinline__ int real_policy_row(int t) {
  return t < 0 ? 0 : (t > EPISODE_LENGTH ? EPISODE_LENGTH : t);
}

#endif  // AI_ECONOMIST_COVID19_COMMON_CUH_

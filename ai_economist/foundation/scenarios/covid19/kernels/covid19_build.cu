// Build entry of the COVID-19 CUDA kernels: compile with -I <folder of covid19_generated.h>.
//
// Kernels (all extern "C", grid = num_envs, block = NUM_THREADS = NUM_AGENTS + 1, each takes
// one `const CovidData* d`, a device table of pointers in declaration order):
//   CudaControlUSStateOpenCloseStatusStep, CudaFederalGovernmentSubsidyStep,
//   CudaVaccinationCampaignStep, CudaCovidAndEconomySimulationStep, CudaComputeReward
//     -- the WarpDrive-style per-component step, launched in this order;
//   CudaCovidStepFused -- the same device functions in one launch (the fast path,
//     covid19_fused_step.cu);
//   CudaCovidResetEnvs(d, snapshot, force) -- device reset of done (or all) envs.
#ifndef AI_ECONOMIST_COVID19_BUILD_CU_
#define AI_ECONOMIST_COVID19_BUILD_CU_

#include "../components/covid19_components_step.cu"
#include "covid19_env_step.cu"
#include "covid19_fused_step.cu"

// Restores the snapshot of every `reset snapshot` field and zeroes every `reset zeros` field
// (lists generated from the declaration) of each env whose _done_ flag is set, or of every env
// when `force` is non-zero; then clears _done_ and _timestep_. Before resetting a done env it
// records its end-of-episode metrics (see gpu_state.EPISODE_METRIC_NAMES).
extern "C" __global__ void CudaCovidResetEnvs(const CovidData* __restrict__ d,
                                              const CovidData* __restrict__ snapshot, int force) {
  const int env = blockIdx.x;
  const int tid = threadIdx.x;
  const bool done = d->done[env] != 0;
  __syncthreads();  // every thread has read _done_ before thread 0 clears it
  if (!force && !done) return;  // uniform over the block
  if (done && !force && tid == 0) {
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
  __syncthreads();  // metrics read the state before it is restored
#define COVID_RESTORE(name, n)                                        \
  for (int k = tid; k < (n); k += blockDim.x) {                       \
    d->name[(long long)env * (n) + k] = snapshot->name[(long long)env * (n) + k]; \
  }
#define COVID_ZERO(name, n) \
  for (int k = tid; k < (n); k += blockDim.x) d->name[(long long)env * (n) + k] = 0;
  COVID_SNAPSHOT_FIELDS(COVID_RESTORE)
  COVID_ZERO_FIELDS(COVID_ZERO)
#undef COVID_RESTORE
#undef COVID_ZERO
  if (tid == 0) {
    d->done[env] = 0;
    d->timestep[env] = 0;
  }
}

#endif  // AI_ECONOMIST_COVID19_BUILD_CU_

// Build entry of the COVID-19 CUDA kernels: compile with -I <folder of the generated header
// CovidAndEconomySimulation_state.h, written by the generic backend from the declaration>.
//
// Kernels (all extern "C", grid = num_envs, block = NUM_THREADS = NUM_AGENTS + 1, each takes
// one `const CovidData* d`, a device table of pointers in declaration order):
//   CudaControlUSStateOpenCloseStatusStep, CudaFederalGovernmentSubsidyStep,
//   CudaVaccinationCampaignStep, CudaCovidAndEconomySimulationStep, CudaComputeReward
//     -- the WarpDrive-style per-component step, launched in this order;
//   CudaCovidStepFused -- the same device functions in one launch (the fast path,
//     kernels/covid19_fused_step.cu).
// Done envs are reset by the generic one-launch reset (ai_economist/warp_drive/fused_reset.py);
// the step that ends an episode records its metrics first (record_episode_end).
#ifndef AI_ECONOMIST_COVID19_BUILD_CU_
#define AI_ECONOMIST_COVID19_BUILD_CU_

#include "../../components/covid19_components_step.cu"
#include "covid19_env_step.cu"
#include "kernels/covid19_fused_step.cu"

#endif  // AI_ECONOMIST_COVID19_BUILD_CU_

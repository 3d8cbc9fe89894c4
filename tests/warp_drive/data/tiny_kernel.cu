// A tiny one-block-per-env kernel used by the warp_drive runtime tests.
// state[env, agent] += SCALE * weights[agent]; thread 0 advances the env's timestep and sets
// done when it reaches kEpisodeLength (a -D constant).
#include "tiny_helpers.cuh"

#ifndef kEpisodeLength
#define kEpisodeLength 3
#endif

extern "C" {
__global__ void CudaTinyStep(float* state,
                             const float* weights,
                             const int kNumAgents,
                             int* done,
                             int* timestep) {
  const int env = blockIdx.x;
  const int agent = threadIdx.x;
  if (agent < kNumAgents) {
    const int idx = env * kNumAgents + agent;
    state[idx] = add_scaled(state[idx], weights[agent], SCALE);
  }
  __syncthreads();
  if (agent == 0) {
    timestep[env] += 1;
    if (timestep[env] >= kEpisodeLength) {
      done[env] = 1;
    }
  }
}
}

// Device reset of done environments in one launch (ai_economist/warp_drive/fused_reset.py).
//
// Block `env` (grid = num_envs) does nothing unless _done_[env] is set; otherwise its threads
// copy row `env` of every snapshot array over the live array, zero row `env` of every
// zero-at-reset array, and then clear _timestep_[env] and _done_[env]. The arrays come as a
// table of int64 quadruples (live pointer, snapshot pointer or 0 to zero, units per env, unit
// size: 4 = 32-bit words, 1 = bytes for rows that are not whole words).
// Mirrored by reset_numba.ResetDoneEnvs; the torch reference is CUDAEnvironmentReset.
#ifndef AI_ECONOMIST_RESET_DONE_ENVS_CU_
#define AI_ECONOMIST_RESET_DONE_ENVS_CU_

extern "C" __global__ void ResetDoneEnvs(const long long* table, const int num_arrays,
                                         int* _done_, int* _timestep_) {
  const int env = blockIdx.x;
  if (_done_[env] == 0) return;  // the same for every thread of the block
  for (int a = 0; a < num_arrays; a++) {
    const long long n = table[4 * a + 2];
    if (table[4 * a + 3] == 4) {
      unsigned int* live = reinterpret_cast<unsigned int*>(table[4 * a]) + env * n;
      const unsigned int* snap = reinterpret_cast<const unsigned int*>(table[4 * a + 1]);
      if (snap != nullptr) {
        snap += env * n;
        for (long long i = threadIdx.x; i < n; i += blockDim.x) live[i] = snap[i];
      } else {
        for (long long i = threadIdx.x; i < n; i += blockDim.x) live[i] = 0u;
      }
    } else {
      unsigned char* live = reinterpret_cast<unsigned char*>(table[4 * a]) + env * n;
      const unsigned char* snap = reinterpret_cast<const unsigned char*>(table[4 * a + 1]);
      if (snap != nullptr) {
        snap += env * n;
        for (long long i = threadIdx.x; i < n; i += blockDim.x) live[i] = snap[i];
      } else {
        for (long long i = threadIdx.x; i < n; i += blockDim.x) live[i] = 0;
      }
    }
  }
  __syncthreads();  // every thread has read _done_[env] before it is cleared
  if (threadIdx.x == 0) {
    _timestep_[env] = 0;
    _done_[env] = 0;
  }
}

#endif  // AI_ECONOMIST_RESET_DONE_ENVS_CU_

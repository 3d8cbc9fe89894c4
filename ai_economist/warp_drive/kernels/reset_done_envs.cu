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

// row `env` (n units of type T) of the live array at `live_ptr`: a copy of the snapshot's row
// (`snap_ptr`), or zeros where `snap_ptr` is 0; the block's threads stride the row
template <typename T>
__device__ void reset_done_row(long long live_ptr, long long snap_ptr, long long n, int env) {
  T* live = reinterpret_cast<T*>(live_ptr) + env * n;
  const T* snap = reinterpret_cast<const T*>(snap_ptr);
  if (snap != nullptr) {
    snap += env * n;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) live[i] = snap[i];
  } else {
    for (long long i = threadIdx.x; i < n; i += blockDim.x) live[i] = T(0);
  }
}

extern "C" __global__ void ResetDoneEnvs(const long long* table, const int num_arrays,
                                         int* _done_, int* _timestep_) {
  const int env = blockIdx.x;
  if (_done_[env] == 0) return;  // the same for every thread of the block
  for (int a = 0; a < num_arrays; a++) {
    const long long* row = table + 4 * a;  // live, snapshot (0: zero), units per env, unit size
    if (row[3] == 4) {
      reset_done_row<unsigned int>(row[0], row[1], row[2], env);
    } else {
      reset_done_row<unsigned char>(row[0], row[1], row[2], env);
    }
  }
  __syncthreads();  // every thread has read _done_[env] before it is cleared
  if (threadIdx.x == 0) {
    _timestep_[env] = 0;
    _done_[env] = 0;
  }
}

#endif  // AI_ECONOMIST_RESET_DONE_ENVS_CU_

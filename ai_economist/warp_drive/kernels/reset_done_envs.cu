// Device reset of done environments in one launch (ai_economist/warp_drive/fused_reset.py).
//
// Block b owns envs [b * envs_per_block, min((b + 1) * envs_per_block, num_envs)). It does
// nothing unless one of them is done; otherwise its threads copy the done envs' rows of every
// snapshot array over the live array, zero their rows of every zero-at-reset array, and then
// clear their _timestep_ and _done_. The block's envs' rows of one array are contiguous, so
// consecutive threads touch consecutive units (coalesced), whatever the row length. The arrays
// come as a table of int64 rows of five (live pointer, snapshot pointer or 0 to zero, units per
// env, unit size: 4 = 32-bit words, 1 = bytes for rows that are not whole words, 1 if the
// snapshot is one row shared by every env, else 0).
// Mirrored by reset_numba.ResetDoneEnvs; the torch reference is CUDAEnvironmentReset.
#ifndef AI_ECONOMIST_RESET_DONE_ENVS_CU_
#define AI_ECONOMIST_RESET_DONE_ENVS_CU_

// the rows of envs [first, first + envs) (n units of type T each) of the live array at
// `live_ptr`: where the env is done, a copy of the snapshot's rows (`snap_ptr`; its one row
// for every env if `shared`), or zeros where `snap_ptr` is 0; the block's threads stride the
// envs' units (fused_reset.py keeps n * envs below 2^31)
template <typename T>
__device__ void reset_done_rows(long long live_ptr, long long snap_ptr, int n, bool shared,
                                int first, int envs, const int* done) {
  T* live = reinterpret_cast<T*>(live_ptr) + (long long)first * n;
  const T* snap = reinterpret_cast<const T*>(snap_ptr);
  if (snap != nullptr && !shared) snap += (long long)first * n;
  const int units = n * envs;
  for (int i = threadIdx.x; i < units; i += blockDim.x) {
    const int e = i / n;
    if (done[first + e] == 0) continue;
    live[i] = snap == nullptr ? T(0) : snap[shared ? i - e * n : i];
  }
}

extern "C" __global__ void ResetDoneEnvs(const long long* table, const int num_arrays,
                                         const int num_envs, const int envs_per_block,
                                         int* _done_, int* _timestep_) {
  const int first = blockIdx.x * envs_per_block;
  const int envs = min(envs_per_block, num_envs - first);
  const int mine = threadIdx.x < envs ? _done_[first + threadIdx.x] : 0;  // blockDim >= envs
  if (!__syncthreads_or(mine)) return;  // the same for every thread of the block
  for (int a = 0; a < num_arrays; a++) {
    // live, snapshot (0: zero), units per env, unit size, shared snapshot
    const long long* row = table + 5 * a;
    if (row[3] == 4) {
      reset_done_rows<unsigned int>(row[0], row[1], (int)row[2], row[4] != 0, first, envs, _done_);
    } else {
      reset_done_rows<unsigned char>(row[0], row[1], (int)row[2], row[4] != 0, first, envs,
                                     _done_);
    }
  }
  __syncthreads();  // every thread has read _done_ of the block's envs before it is cleared
  if (mine) {
    _timestep_[first + threadIdx.x] = 0;
    _done_[first + threadIdx.x] = 0;
  }
}

#endif  // AI_ECONOMIST_RESET_DONE_ENVS_CU_

// Runs the one-launch reset kernel (ai_economist/warp_drive/kernels/reset_done_envs.cu) on the
// CPU (tests only), with the CUDA shim of tests/foundation/scenarios/covid19/cuda_emulation
// (one std::thread per CUDA thread, __syncthreads = std::barrier, blocks one after another):
//   g++ -std=c++20 -O2 -shared -fPIC -pthread -I <shim dir>
//       -DRESET_SOURCE='"/path/to/reset_done_envs.cu"' reset_emu.cpp
#include <thread>
#include <vector>

#include "cuda_emu.h"

inline int min(int a, int b) { return a < b ? a : b; }

// __syncthreads_or: a barrier that returns, to every thread of the block, whether any of them
// passed a non-zero predicate (through a block-wide buffer between two barriers).
inline int __syncthreads_or(int predicate) {
  static int buffer[1024];
  buffer[threadIdx.x] = predicate;
  __syncthreads();
  int any = 0;
  for (unsigned int i = 0; i < blockDim.x; ++i) any |= buffer[i] != 0;
  __syncthreads();
  return any;
}

#include RESET_SOURCE

thread_local dim3 threadIdx;
thread_local dim3 blockIdx;
dim3 blockDim;
dim3 gridDim;
std::barrier<>* emu_block_barrier = nullptr;

// ResetDoneEnvs on `grid` blocks of `threads` threads, as FusedReset launches it.
extern "C" void emu_reset(const long long* table, int num_arrays, int num_envs,
                          int envs_per_block, int* done, int* timestep, int grid, int threads) {
  blockDim.x = threads;
  blockDim.y = 1;
  blockDim.z = 1;
  gridDim.x = grid;
  for (int block = 0; block < grid; ++block) {
    std::barrier<> barrier(threads);
    emu_block_barrier = &barrier;
    std::vector<std::thread> workers;
    for (int tid = 0; tid < threads; ++tid) {
      workers.emplace_back([&, tid] {
        blockIdx.x = block;
        threadIdx.x = tid;
        ResetDoneEnvs(table, num_arrays, num_envs, envs_per_block, done, timestep);
      });
    }
    for (auto& t : workers) t.join();
    emu_block_barrier = nullptr;
  }
}

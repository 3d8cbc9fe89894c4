// Runs the one-step economy's CUDA C step on the CPU (tests only), with the CUDA shim of
// tests/foundation/scenarios/covid19/cuda_emulation/cuda_emu.h (one std::thread per CUDA
// thread, __syncthreads = std::barrier, __shared__ = static, blocks one after another):
//   g++ -std=c++20 -O2 -shared -fPIC -pthread -I <generated header dir> -I <shim dir>
//       -DONE_STEP_SOURCE='"/path/to/one_step_economy_step.cu"' one_step_emu.cpp
// <generated header dir> also holds one_step_args.h: ONE_STEP_ECONOMY_ARGS, the parameter
// names of ONE_STEP_ECONOMY_STATE_PARAMS.
#include <thread>
#include <vector>

#include "cuda_emu.h"

inline int atomicAdd(int* address, int value) {
  return __atomic_fetch_add(address, value, __ATOMIC_SEQ_CST);
}
inline int min(int a, int b) { return a < b ? a : b; }

#include ONE_STEP_SOURCE
#include "one_step_args.h"

thread_local dim3 threadIdx;
thread_local dim3 blockIdx;
dim3 blockDim;
dim3 gridDim;
std::barrier<>* emu_block_barrier = nullptr;

// The step kernel on grid = num_envs / envs_per_block blocks of num_threads x envs_per_block
// threads (KernelSpec.envs_per_block: blockDim.y envs share a block).
extern "C" void emu_step(int num_envs, int num_threads, int envs_per_block,
                         ONE_STEP_ECONOMY_STATE_PARAMS) {
  blockDim.x = num_threads;
  blockDim.y = envs_per_block;
  blockDim.z = 1;
  gridDim.x = num_envs / envs_per_block;
  for (int block = 0; block < num_envs / envs_per_block; ++block) {
    std::barrier<> barrier(num_threads * envs_per_block);
    emu_block_barrier = &barrier;
    std::vector<std::thread> threads;
    for (int slot = 0; slot < envs_per_block; ++slot) {
      for (int tid = 0; tid < num_threads; ++tid) {
        threads.emplace_back([&, tid, slot] {
          blockIdx.x = block;
          threadIdx.x = tid;
          threadIdx.y = slot;
          one_step_economy_step(ONE_STEP_ECONOMY_ARGS);
        });
      }
    }
    for (auto& t : threads) t.join();
    emu_block_barrier = nullptr;
  }
}

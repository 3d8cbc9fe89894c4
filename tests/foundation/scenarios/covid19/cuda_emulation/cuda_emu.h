// Minimal CUDA emulation for running the COVID-19 .cu kernels on the CPU (tests only).
//
// One std::thread per CUDA thread, blocks run one after another, __syncthreads() is a
// std::barrier over the threads of the block, and __shared__ variables become function-level
// statics (shared by the threads of the one block that runs at a time).
#ifndef AI_ECONOMIST_CUDA_EMU_H_
#define AI_ECONOMIST_CUDA_EMU_H_

#include <math.h>

#include <barrier>

#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)  // a compiler hint only

struct dim3 {
  unsigned int x = 0, y = 0, z = 0;
};

extern thread_local dim3 threadIdx;
extern thread_local dim3 blockIdx;
extern dim3 blockDim;
extern dim3 gridDim;
extern std::barrier<>* emu_block_barrier;

inline void __syncthreads() { emu_block_barrier->arrive_and_wait(); }

#endif  // AI_ECONOMIST_CUDA_EMU_H_

// Minimal CUDA emulation for running the COVID-19 .cu kernels on the CPU (tests only).
//
// One std::thread per CUDA thread, blocks run one after another, __syncthreads() is a
// std::barrier over the threads of the block, __shared__ variables become function-level
// statics (shared by the threads of the one block that runs at a time), and warp shuffles go
// through a block-wide buffer.
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
// __dmul_rn: the product rounded on its own (baseline x86-64 g++, no -mfma, never fuses).
inline double __dmul_rn(double a, double b) { return a * b; }

// Warp shuffle down. Every thread of the block must call it together (block_sum3 does): the
// values pass through a block-wide buffer between two barriers. A source lane outside the
// warp or the block returns the caller's own value (callers ignore those lanes).
inline float __shfl_down_sync(unsigned /*mask*/, float value, int offset) {
  static float buffer[1024];
  buffer[threadIdx.x] = value;
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int source = static_cast<int>(threadIdx.x) + offset;
  const bool inside = lane + offset < 32 && source < static_cast<int>(blockDim.x);
  const float out = inside ? buffer[source] : value;
  __syncthreads();
  return out;
}

#endif  // AI_ECONOMIST_CUDA_EMU_H_

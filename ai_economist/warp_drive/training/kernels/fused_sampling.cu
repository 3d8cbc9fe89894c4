// Masked Gumbel-max sampling of one rollout step, fused into one kernel (CUDA C).
//
// The CUDA C twin of the Triton kernel in ``fused_sampling.py``; both mirror
// ``fused_sampling.sample_reference`` (torch).  One thread per row (an agent of an env): mask
// the logits (``fill`` where the mask is 0), add the pre-drawn Gumbel noise, take the argmax
// (ties to the first index), compute the chosen action's log-softmax as torch does,
// ``(x - max) - log(sum(exp(x - max)))`` in float32 (rounded to bfloat16 for bfloat16 logits,
// ties to even, as torch returns it), and write the action (int64 and the env's dtype), its
// log-probability and the value estimate (float32).  Only the order of the float32 sum over
// the actions may differ from torch's.
//
// One ``extern "C"`` kernel per (logit, value, mask, env action) type combination, named
// ``fused_sample_<logit><value>_<mask>_<env>`` (``fused_sampling.cuda_kernel_name``).
// Compiled without fast math: expf and logf are the accurate ones.

#include <cuda_bf16.h>
#include <stdint.h>

namespace fused_sampling {

__device__ __forceinline__ float as_float(float x) { return x; }
__device__ __forceinline__ float as_float(__nv_bfloat16 x) { return __bfloat162float(x); }

__device__ __forceinline__ bool is_allowed(uint8_t m) { return m != 0; }
__device__ __forceinline__ bool is_allowed(int32_t m) { return m != 0; }
__device__ __forceinline__ bool is_allowed(float m) { return m != 0.0f; }

// torch's log-softmax of bfloat16 logits is bfloat16: round the float32 result to the
// nearest bfloat16, ties to even, in integer ops (as c10::BFloat16 does)
__device__ __forceinline__ float round_like(float x, float) { return x; }
__device__ __forceinline__ float round_like(float x, __nv_bfloat16) {
    uint32_t bits = __float_as_uint(x);
    bits = ((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16) << 16;
    return __uint_as_float(bits);
}

template <typename Logit, typename Value, typename Mask, typename EnvAction>
__device__ __forceinline__ void sample_row(
    const Logit* __restrict__ logits, long long logits_stride,
    const Mask* __restrict__ masks, long long masks_stride,
    const float* __restrict__ gumbel, long long gumbel_stride,
    const Value* __restrict__ values, long long values_stride,
    long long* __restrict__ actions, float* __restrict__ log_probs,
    float* __restrict__ value_buffer, EnvAction* __restrict__ env_actions,
    int n_rows, int n_actions, float fill) {
    const long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n_rows) return;
    const Logit* logit = logits + row * logits_stride;
    const Mask* mask = masks + row * masks_stride;
    const float* noise = gumbel + row * gumbel_stride;
    // pass 1: the masked maximum and the argmax of masked + noise (first index on ties)
    int action = 0;
    float best = 0.0f;
    float top = 0.0f;
    for (int a = 0; a < n_actions; ++a) {
        const float x = is_allowed(mask[a]) ? as_float(logit[a]) : fill;
        const float score = x + noise[a];
        if (a == 0 || score > best) {
            action = a;
            best = score;
        }
        top = (a == 0 || x > top) ? x : top;
    }
    // pass 2: sum(exp(x - max)) and the chosen action's log-softmax
    float total = 0.0f;
    float chosen = 0.0f;
    for (int a = 0; a < n_actions; ++a) {
        const float x = is_allowed(mask[a]) ? as_float(logit[a]) : fill;
        total += expf(x - top);
        if (a == action) chosen = x;
    }
    const float log_prob = round_like((chosen - top) - logf(total), Logit());
    actions[row] = action;
    log_probs[row] = log_prob;
    value_buffer[row] = as_float(values[row * values_stride]);
    env_actions[row] = (EnvAction)action;
}

}  // namespace fused_sampling

#define FUSED_SAMPLE_KERNEL(NAME, LOGIT, VALUE, MASK, ENV)                                  \
    extern "C" __global__ void NAME(                                                        \
        const LOGIT* logits, long long logits_stride, const MASK* masks,                   \
        long long masks_stride, const float* gumbel, long long gumbel_stride,              \
        const VALUE* values, long long values_stride, long long* actions, float* log_probs, \
        float* value_buffer, ENV* env_actions, int n_rows, int n_actions, float fill) {    \
        fused_sampling::sample_row<LOGIT, VALUE, MASK, ENV>(                               \
            logits, logits_stride, masks, masks_stride, gumbel, gumbel_stride, values,     \
            values_stride, actions, log_probs, value_buffer, env_actions, n_rows,          \
            n_actions, fill);                                                              \
    }

#define FUSED_SAMPLE_ENV_TYPES(PREFIX, LOGIT, VALUE, MASK)                  \
    FUSED_SAMPLE_KERNEL(PREFIX##_i32, LOGIT, VALUE, MASK, int32_t)           \
    FUSED_SAMPLE_KERNEL(PREFIX##_i64, LOGIT, VALUE, MASK, long long)

#define FUSED_SAMPLE_MASK_TYPES(PREFIX, LOGIT, VALUE)                        \
    FUSED_SAMPLE_ENV_TYPES(PREFIX##_u8, LOGIT, VALUE, uint8_t)               \
    FUSED_SAMPLE_ENV_TYPES(PREFIX##_i32, LOGIT, VALUE, int32_t)              \
    FUSED_SAMPLE_ENV_TYPES(PREFIX##_f32, LOGIT, VALUE, float)

FUSED_SAMPLE_MASK_TYPES(fused_sample_f32f32, float, float)
FUSED_SAMPLE_MASK_TYPES(fused_sample_bf16bf16, __nv_bfloat16, __nv_bfloat16)
FUSED_SAMPLE_MASK_TYPES(fused_sample_bf16f32, __nv_bfloat16, float)

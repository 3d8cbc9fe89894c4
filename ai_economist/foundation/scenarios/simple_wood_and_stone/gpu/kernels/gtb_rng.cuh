// Counter-based draws of the gather-trade-build GPU env: the twin of gpu/rng.py (numpy) and
// of the draw functions of gtb_world_numba_parts.py. Every draw is a pure function of
// (env seed, episode, step, stream, index): lowbias32 chained over the words; a uniform keeps
// the top 24 bits (k / 2^24, exact in float and double). Host and device code alike.
#ifndef AI_ECONOMIST_GTB_RNG_CUH_
#define AI_ECONOMIST_GTB_RNG_CUH_

#define GTB_SEED_SALT 0x9E3779B9U

__host__ __device__ inline unsigned int gtb_hash32(unsigned int x) {
  x ^= x >> 16;
  x *= 0x7FEB352DU;
  x ^= x >> 15;
  x *= 0x846CA68BU;
  x ^= x >> 16;
  return x;
}

__host__ __device__ inline unsigned int gtb_draw_bits(int seed, int episode, int step, int stream,
                                                      int index) {
  unsigned int h = gtb_hash32((unsigned int)seed ^ GTB_SEED_SALT);
  h = gtb_hash32(h ^ (unsigned int)episode);
  h = gtb_hash32(h ^ (unsigned int)step);
  return gtb_hash32(h ^ ((((unsigned int)stream & 0xFFU) << 24) | ((unsigned int)index & 0xFFFFFFU)));
}

__host__ __device__ inline double gtb_uniform(int seed, int episode, int step, int stream,
                                              int index) {
  return (double)(gtb_draw_bits(seed, episode, step, stream, index) >> 8) * (1.0 / 16777216.0);
}

// An integer in [0, n) from 32 random bits.
__host__ __device__ inline int gtb_below(unsigned int bits, int n) {
  return (int)(((unsigned long long)(bits >> 8) * (unsigned long long)n) >> 24);
}

#endif  // AI_ECONOMIST_GTB_RNG_CUH_

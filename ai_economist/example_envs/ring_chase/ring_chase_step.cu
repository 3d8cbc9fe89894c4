// Ring chase step (CUDA C): mirrors RingChase.reference_step in env.py.
// One block per environment, one thread per agent (chasers first, then runners).
// ring_chase_state.h is generated from the declaration (ai_economist/warp_drive/codegen.py):
// NUM_AGENTS, NUM_CHASERS, NUM_RUNNERS, OBS_DIM and RING_CHASE_STATE_PARAMS, the kernel
// parameters (the declared fields in declaration order, scalar constants by value).
#include "ring_chase_state.h"

__device__ __forceinline__ int ring_mod(int x, int n) {
  int r = x % n;
  return r < 0 ? r + n : r;
}

// (dst - src) mod n, minus n above n / 2.
__device__ __forceinline__ int signed_ring_distance(int src, int dst, int n) {
  int d = ring_mod(dst - src, n);
  return d > n / 2 ? d - n : d;
}

__device__ __forceinline__ int chaser_move(int action) {
  const int moves[5] = {0, -1, 1, -2, 2};
  return moves[action];
}

__device__ __forceinline__ int runner_move(int action) {
  const int moves[3] = {0, -1, 1};
  return moves[action];
}

extern "C" __global__ void ring_chase_step(RING_CHASE_STATE_PARAMS) {
  const int env = blockIdx.x;
  const int agent = threadIdx.x;
  const int t_next = _timestep_[env] + 1;
  int* pos = positions + env * NUM_AGENTS;

  // 1. every agent moves
  if (agent < NUM_AGENTS) {
    const int move = agent < NUM_CHASERS
        ? chaser_move(sampled_actions_chaser[env * NUM_CHASERS + agent])
        : runner_move(sampled_actions_runner[env * NUM_RUNNERS + agent - NUM_CHASERS]);
    pos[agent] = ring_mod(pos[agent] + move, ring_size);
  }
  __syncthreads();

  // 2. rewards and observations from the new positions
  if (agent < NUM_AGENTS) {
    const bool is_chaser = agent < NUM_CHASERS;
    const int first = is_chaser ? NUM_CHASERS : 0;
    const int count = is_chaser ? NUM_RUNNERS : NUM_CHASERS;
    const int me = pos[agent];
    int best = 0, best_abs = ring_size + 1;
    bool hit = false;
    for (int k = 0; k < count; k++) {
      const int d = signed_ring_distance(me, pos[first + k], ring_size);
      const int a = d < 0 ? -d : d;
      if (a < best_abs) {
        best_abs = a;
        best = d;
      }
      hit = hit || d == 0;
    }
    float* obs;
    if (is_chaser) {
      obs = observations_chaser + (env * NUM_CHASERS + agent) * OBS_DIM;
      rewards_chaser[env * NUM_CHASERS + agent] = hit ? tag_reward : 0.0f;
    } else {
      obs = observations_runner + (env * NUM_RUNNERS + agent - NUM_CHASERS) * OBS_DIM;
      rewards_runner[env * NUM_RUNNERS + agent - NUM_CHASERS] = hit ? -tagged_penalty : 0.0f;
    }
    obs[0] = (float)me / (float)ring_size;
    obs[1] = (float)t_next / (float)episode_length;
    obs[2] = (float)best / (float)ring_size;
  }

  // 3. per-env bookkeeping (positions are final since the barrier above)
  if (agent == 0) {
    int tagged = 0;
    for (int r = NUM_CHASERS; r < NUM_AGENTS; r++) {
      for (int c = 0; c < NUM_CHASERS; c++) {
        if (pos[c] == pos[r]) {
          tagged++;
          break;
        }
      }
    }
    tags_this_episode[env] += tagged;
    _timestep_[env] = t_next;
    if (t_next >= episode_length) {
      _done_[env] = 1;
      last_episode_tags[env] = tags_this_episode[env];
      completed_episodes[env] += 1;
    }
  }
}

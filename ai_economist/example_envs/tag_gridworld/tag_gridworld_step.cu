// Grid-world Tag: one step of every environment (the CUDA C mirror of dynamics.py, env.py's step).
//
// Launch: grid = num_envs blocks (one per environment), block = threads_per_env threads (default
// num_agents: thread i is agent i; the last agent is the runner). With fewer threads than agents
// (more than 1,024 agents) thread i steps agents i, i + blockDim.x, ...; threads beyond
// num_agents only join the barriers.
// tag_gridworld_state.h is generated from the declaration (ai_economist/warp_drive/codegen.py):
// TAG_GRIDWORLD_STATE_PARAMS is the kernel parameter list (the declared kernel_arg fields in
// declaration order, scalar constants by value).
// Per thread: O(1) work and shared memory (a tag counter; for the runner's nearest tagger two
// 32-bit atomicMin passes, the smallest squared distance, then the lowest tagger index at that
// distance, as np.argmin), plus num_agents rows written by the full observation, as in the
// original.
// Device functions carry the names of the Numba twin (tag_gridworld_numba.py).
#ifndef AI_ECONOMIST_TAG_GRIDWORLD_STEP_CU
#define AI_ECONOMIST_TAG_GRIDWORLD_STEP_CU

#include <climits>

#include "tag_gridworld_state.h"

extern "C" {

// x step of an action (stay, +x, -x, +y, -y); other values stay.
__device__ __forceinline__ int action_dx(int action) {
  return action == 1 ? 1 : (action == 2 ? -1 : 0);
}

// y step of an action (stay, +x, -x, +y, -y); other values stay.
__device__ __forceinline__ int action_dy(int action) {
  return action == 3 ? 1 : (action == 4 ? -1 : 0);
}

// value clipped to [0, grid_length].
__device__ __forceinline__ int clip_to_grid(int value, int grid_length) {
  return min(max(value, 0), grid_length);
}

// Agent `agent`'s column in every row of the full observation, and its own row's time.
__device__ void write_full_observation(float* obs, int env, int agent, int num_agents,
                                       float fx, float fy, float time) {
  const int n = num_agents;
  const long long obs_dim = 4LL * n + 1;
  float* env_obs = obs + static_cast<long long>(env) * n * obs_dim;
  const float is_runner = agent == n - 1 ? 1.0f : 0.0f;
  for (int row = 0; row < n; row++) {
    float* r = env_obs + row * obs_dim;
    r[agent] = fx;
    r[n + agent] = fy;
    r[2 * n + agent] = is_runner;
    r[3 * n + agent] = row == agent ? 1.0f : 0.0f;
  }
  env_obs[agent * obs_dim + 4 * n] = time;
}

// Own position, the target's position, own type, time.
__device__ void write_partial_observation(float* obs, int env, int agent, int num_agents,
                                          float fx, float fy, float tx, float ty, float time) {
  float* r = obs + (static_cast<long long>(env) * num_agents + agent) * 6;
  r[0] = fx;
  r[1] = fy;
  r[2] = tx;
  r[3] = ty;
  r[4] = agent == num_agents - 1 ? 1.0f : 0.0f;
  r[5] = time;
}

// Parameters (TAG_GRIDWORLD_STATE_PARAMS, generated from TagGridWorld.state_fields()):
// loc_x, loc_y, sampled_actions_shared, _done_, rewards_shared, observations_shared,
// _timestep_, episodes_completed, last_episode_tagged, last_episode_length (per-env arrays),
// then by value wall_hit_penalty, tag_reward_for_tagger, tag_penalty_for_runner,
// step_cost_for_tagger, use_full_observation, grid_length, episode_length, num_agents.
__global__ void CudaTagGridWorldStep(TAG_GRIDWORLD_STATE_PARAMS) {
  __shared__ int num_tagged;
  __shared__ int nearest_d2;
  __shared__ int nearest_tagger;
  const int env = blockIdx.x;
  const int first = threadIdx.x;  // this thread steps agents first, first + stride, ...
  const int stride = blockDim.x;
  const int runner = num_agents - 1;
  const bool partial = use_full_observation == 0;  // the same for the whole block
  const long long base = static_cast<long long>(env) * num_agents;
  if (first == 0) {
    _timestep_[env] += 1;
    num_tagged = 0;
    nearest_d2 = INT_MAX;
    nearest_tagger = INT_MAX;
  }
  __syncthreads();

  // Move, clip to the grid; the reward starts with the wall-hit penalty.
  for (int agent = first; agent < num_agents; agent += stride) {
    const int action = sampled_actions_shared[base + agent];
    const int x = loc_x[base + agent] + action_dx(action);
    const int y = loc_y[base + agent] + action_dy(action);
    const int cx = clip_to_grid(x, grid_length);
    const int cy = clip_to_grid(y, grid_length);
    rewards_shared[base + agent] = (cx != x || cy != y) ? -wall_hit_penalty : 0.0f;
    loc_x[base + agent] = cx;
    loc_y[base + agent] = cy;
  }
  __syncthreads();

  // Taggers on the runner's cell; the smallest squared distance to the runner.
  const int rx = loc_x[base + runner];
  const int ry = loc_y[base + runner];
  for (int agent = first; agent < runner; agent += stride) {
    const int dx = loc_x[base + agent] - rx;
    const int dy = loc_y[base + agent] - ry;
    if (dx == 0 && dy == 0) atomicAdd(&num_tagged, 1);
    if (partial) atomicMin(&nearest_d2, dx * dx + dy * dy);
  }
  __syncthreads();
  if (partial) {
    // The lowest index among the taggers at that distance.
    for (int agent = first; agent < runner; agent += stride) {
      const int dx = loc_x[base + agent] - rx;
      const int dy = loc_y[base + agent] - ry;
      if (dx * dx + dy * dy == nearest_d2) atomicMin(&nearest_tagger, agent);
    }
    __syncthreads();
  }

  // Tag or step rewards, observations.
  const bool tagged = num_tagged > 0;
  const int t = _timestep_[env];
  const float time = static_cast<float>(t) / static_cast<float>(episode_length);
  const float length = static_cast<float>(grid_length);
  for (int agent = first; agent < num_agents; agent += stride) {
    float term;
    if (agent < runner) {
      term = tagged ? tag_reward_for_tagger : -step_cost_for_tagger;
    } else {
      term = tagged ? -tag_penalty_for_runner : step_cost_for_tagger;
    }
    rewards_shared[base + agent] = rewards_shared[base + agent] + term;
    const float fx = static_cast<float>(loc_x[base + agent]) / length;
    const float fy = static_cast<float>(loc_y[base + agent]) / length;
    if (!partial) {
      write_full_observation(observations_shared, env, agent, num_agents, fx, fy, time);
    } else {
      const int target = agent == runner ? nearest_tagger : runner;
      const float tx = static_cast<float>(loc_x[base + target]) / length;
      const float ty = static_cast<float>(loc_y[base + target]) / length;
      write_partial_observation(observations_shared, env, agent, num_agents, fx, fy, tx, ty, time);
    }
  }

  if (first == 0 && (t >= episode_length || tagged)) {
    _done_[env] = 1;
    episodes_completed[env] += 1;
    last_episode_tagged[env] = tagged ? 1 : 0;
    last_episode_length[env] = t;
  }
}

}  // extern "C"

#endif  // AI_ECONOMIST_TAG_GRIDWORLD_STEP_CU

// Continuous Tag's step in CUDA C: one block per environment, one thread per agent.
//
// Mirrors ai_economist/example_envs/tag_continuous/dynamics.py function for function (same
// names). Products that numpy rounds separately are written with __fmul_rn / __fadd_rn so
// that nvcc does not fuse them into FMAs. The parameters are the kernel_arg fields of
// declaration.py in declaration order (tests check it).
#ifndef AI_ECONOMIST_TAG_CONTINUOUS_STEP_CU_
#define AI_ECONOMIST_TAG_CONTINUOUS_STEP_CU_

#define TAG_TWO_PI 6.28318530717958647692f
#define TAG_EPSILON 1e-10f
#define TAG_SQRT_TWO 1.41421356237309504880f
#define TAG_NUM_FEATURES 7
// Agents per block (shared position arrays) and nearest agents kept per thread.
#define TAG_MAX_AGENTS 1024
#define TAG_MAX_OBSERVED 64

// (x_b - x_a)^2 + (y_b - y_a)^2 without FMA contraction.
__device__ float squared_distance(const float* xs, const float* ys, int a, int b) {
  const float dx = __fsub_rn(xs[b], xs[a]);
  const float dy = __fsub_rn(ys[b], ys[a]);
  return __fadd_rn(__fmul_rn(dx, dx), __fmul_rn(dy, dy));
}

// One agent's movement (pointers to its own entries); returns its edge-hit penalty.
__device__ float move_agents(float* loc_x, float* loc_y, float* speed, float* direction,
                             float* acceleration, int in_game, float delta_acceleration,
                             float delta_turn, float max_speed_i, float grid_length,
                             float edge_hit_penalty) {
  const float in = static_cast<float>(in_game);
  *acceleration = __fadd_rn(*acceleration, delta_acceleration);
  const float turned = __fmul_rn(fmodf(__fadd_rn(*direction, delta_turn), TAG_TWO_PI), in);
  *direction = turned < 0.0f ? __fadd_rn(TAG_TWO_PI, turned) : turned;
  const float s =
      __fmul_rn(fminf(max_speed_i, fmaxf(0.0f, __fadd_rn(*speed, *acceleration))), in);
  *speed = s;
  if (s <= 0.0f || s >= max_speed_i) *acceleration = 0.0f;
  const float x = __fadd_rn(*loc_x, __fmul_rn(s, cosf(*direction)));
  const float y = __fadd_rn(*loc_y, __fmul_rn(s, sinf(*direction)));
  const bool crossed = x < 0.0f || x > grid_length || y < 0.0f || y > grid_length;
  *loc_x = fminf(fmaxf(x, 0.0f), grid_length);
  *loc_y = fminf(fmaxf(y, 0.0f), grid_length);
  return crossed ? edge_hit_penalty : 0.0f;
}

// The k nearest other agents in the game, ordered by (squared distance, id); returns how
// many were found (<= k). Insertion into a sorted list while scanning ids upwards.
__device__ int nearest_neighbors(const float* xs, const float* ys, const int* still_in, int me,
                                 int num_agents, int k, int* ids, float* d2s) {
  int found = 0;
  if (k <= 0) return 0;
  for (int j = 0; j < num_agents; j++) {
    if (j == me || !still_in[j]) continue;
    const float d2 = squared_distance(xs, ys, me, j);
    if (found == k && !(d2 < d2s[k - 1])) continue;
    int pos = found < k ? found : k - 1;
    while (pos > 0 && d2 < d2s[pos - 1]) {
      d2s[pos] = d2s[pos - 1];
      ids[pos] = ids[pos - 1];
      pos--;
    }
    d2s[pos] = d2;
    ids[pos] = j;
    if (found < k) found++;
  }
  return found;
}

// One observed agent's 7 features in slot `slot` of `obs` (`slots` slots per feature).
__device__ void observe_slot(float* obs, int slot, int slots, int me, int j, bool me_in,
                             bool seen, const float* xs, const float* ys, const float* speed,
                             const float* direction, const float* acceleration,
                             const int* agent_types, const int* still_in, float diagonal,
                             float speed_scale) {
  const bool rel = me_in && j >= 0;
  obs[0 * slots + slot] = rel ? __fsub_rn(xs[j], xs[me]) / diagonal : 0.0f;
  obs[1 * slots + slot] = rel ? __fsub_rn(ys[j], ys[me]) / diagonal : 0.0f;
  obs[2 * slots + slot] = rel ? __fsub_rn(speed[j], speed[me]) / speed_scale : 0.0f;
  obs[3 * slots + slot] = rel ? __fsub_rn(acceleration[j], acceleration[me]) / speed_scale : 0.0f;
  obs[4 * slots + slot] = rel ? __fsub_rn(direction[j], direction[me]) / TAG_TWO_PI : 0.0f;
  obs[5 * slots + slot] = seen ? static_cast<float>(agent_types[j]) : 0.0f;
  obs[6 * slots + slot] = seen ? static_cast<float>(still_in[j]) : 0.0f;
}

// Agent `me`'s observation (see dynamics.observe); arrays are this environment's.
__device__ void observe(float* obs, int me, int num_agents, int slots, bool full,
                        float time_fraction, const float* xs, const float* ys,
                        const float* speed, const float* direction, const float* acceleration,
                        const int* agent_types, const int* still_in, float grid_length,
                        float max_speed) {
  const bool me_in = still_in[me] != 0;
  const float diagonal = __fmul_rn(grid_length, TAG_SQRT_TWO);
  const float speed_scale = __fadd_rn(max_speed, TAG_EPSILON);
  if (full) {
    for (int j = 0; j < num_agents; j++) {
      if (j == me) continue;
      observe_slot(obs, j < me ? j : j - 1, slots, me, j, me_in, true, xs, ys, speed,
                   direction, acceleration, agent_types, still_in, diagonal, speed_scale);
    }
  } else {
    int ids[TAG_MAX_OBSERVED];
    float d2s[TAG_MAX_OBSERVED];
    const int found =
        me_in ? nearest_neighbors(xs, ys, still_in, me, num_agents, slots, ids, d2s) : 0;
    for (int s = 0; s < slots; s++) {
      const int j = s < found ? ids[s] : -1;
      observe_slot(obs, s, slots, me, j, me_in, j >= 0, xs, ys, speed, direction,
                   acceleration, agent_types, still_in, diagonal, speed_scale);
    }
  }
  obs[TAG_NUM_FEATURES * slots] = me_in ? time_fraction : 0.0f;
}

// The tagger that tags runner `me` this step, or -1 (see dynamics.tag_runners).
__device__ int tag_runners(const float* xs, const float* ys, const int* still_in, int me,
                           int num_taggers, float tagging_margin) {
  if (me < num_taggers || !still_in[me]) return -1;
  int nearest = 0;
  float closest = sqrtf(squared_distance(xs, ys, me, 0));
  for (int k = 1; k < num_taggers; k++) {
    const float dist = sqrtf(squared_distance(xs, ys, me, k));
    if (dist < closest) {
      closest = dist;
      nearest = k;
    }
  }
  return closest < tagging_margin ? nearest : -1;
}

// Agent `me`'s reward before the end-of-game bonus (see dynamics.compute_rewards).
__device__ float compute_rewards(int in_game, float edge_penalty, float step_reward,
                                 const int* tagged_by, int me, int num_agents, int num_taggers,
                                 float tag_reward_for_tagger, float tag_penalty_for_runner) {
  float reward = in_game ? __fadd_rn(edge_penalty, step_reward) : 0.0f;
  if (me >= num_taggers) {
    return tagged_by[me] >= 0 ? __fadd_rn(reward, tag_penalty_for_runner) : reward;
  }
  int count = 0;
  for (int j = num_taggers; j < num_agents; j++) count += tagged_by[j] == me;
  return __fadd_rn(reward, __fmul_rn(static_cast<float>(count), tag_reward_for_tagger));
}

extern "C" __global__ void TagContinuousStep(
    const int* agent_types, const float* skill_levels, const float* step_rewards,
    const float* acceleration_actions, const float* turn_actions, const int num_agents,
    const int num_taggers, const int episode_length, const int num_turn_actions,
    const int num_other_agents_observed, const int use_full_observation,
    const int runner_exits_game_after_tagged, const float grid_length, const float max_speed,
    const float edge_hit_penalty, const float tagging_margin, const float tag_reward_for_tagger,
    const float tag_penalty_for_runner, const float end_of_game_reward_for_runner,
    float* loc_x, float* loc_y, float* speed, float* direction, float* acceleration,
    int* still_in_the_game, int* tagged_by, int* runners_left, int* episode_tags,
    int* last_episode_tags, int* completed_episodes, float* observations_tagger,
    int* sampled_actions_tagger, float* rewards_tagger, float* observations_runner,
    int* sampled_actions_runner, float* rewards_runner, int* _timestep_, int* _done_) {
  __shared__ float xs[TAG_MAX_AGENTS];
  __shared__ float ys[TAG_MAX_AGENTS];
  const int env = blockIdx.x;
  const int me = threadIdx.x;
  const int num_runners = num_agents - num_taggers;
  const bool active = me < num_agents;
  const bool is_tagger = me < num_taggers;
  const size_t offset = static_cast<size_t>(env) * num_agents;
  float* x = loc_x + offset;
  float* y = loc_y + offset;
  float* sp = speed + offset;
  float* dir = direction + offset;
  float* acc = acceleration + offset;
  int* still_in = still_in_the_game + offset;
  int* tagged = tagged_by + offset;
  const int t = _timestep_[env] + 1;
  const int obs_dim = TAG_NUM_FEATURES * num_other_agents_observed + 1;
  const size_t row = is_tagger ? static_cast<size_t>(env) * num_taggers + me
                               : static_cast<size_t>(env) * num_runners + (me - num_taggers);
  int in_before = 0;
  float edge_penalty = 0.0f;
  if (active) {
    in_before = still_in[me];
    const int action = is_tagger ? sampled_actions_tagger[row] : sampled_actions_runner[row];
    const float max_speed_i = __fmul_rn(max_speed, skill_levels[me]);
    edge_penalty = move_agents(
        x + me, y + me, sp + me, dir + me, acc + me, in_before,
        acceleration_actions[action / num_turn_actions],
        turn_actions[action % num_turn_actions], max_speed_i, grid_length, edge_hit_penalty);
    xs[me] = x[me];
    ys[me] = y[me];
  }
  __syncthreads();
  if (active) {
    float* obs = (is_tagger ? observations_tagger : observations_runner) + row * obs_dim;
    const float time_fraction =
        static_cast<float>(t) / static_cast<float>(episode_length);
    observe(obs, me, num_agents, num_other_agents_observed, use_full_observation != 0,
            time_fraction, xs, ys, sp, dir, acc, agent_types, still_in, grid_length, max_speed);
    tagged[me] = tag_runners(xs, ys, still_in, me, num_taggers, tagging_margin);
  }
  __syncthreads();
  if (active) {
    float reward = compute_rewards(in_before, edge_penalty, step_rewards[me], tagged, me,
                                   num_agents, num_taggers, tag_reward_for_tagger,
                                   tag_penalty_for_runner);
    if (tagged[me] >= 0 && runner_exits_game_after_tagged) still_in[me] = 0;
    if (!is_tagger && t == episode_length && still_in[me]) {
      reward = __fadd_rn(reward, end_of_game_reward_for_runner);
    }
    (is_tagger ? rewards_tagger : rewards_runner)[row] = reward;
  }
  if (me == 0) {
    int tags = 0;
    for (int j = num_taggers; j < num_agents; j++) tags += tagged[j] >= 0;
    episode_tags[env] += tags;
    if (runner_exits_game_after_tagged) runners_left[env] -= tags;
    const bool done = t == episode_length || runners_left[env] == 0;
    if (done) {
      last_episode_tags[env] = episode_tags[env];
      completed_episodes[env] += 1;
      _done_[env] = 1;
    }
    _timestep_[env] = t;
  }
}

#endif  // AI_ECONOMIST_TAG_CONTINUOUS_STEP_CU_

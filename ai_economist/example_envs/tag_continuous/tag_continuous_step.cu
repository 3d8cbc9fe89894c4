// Continuous Tag's step in CUDA C: one block per environment, one thread per agent for the
// agent's own work (threads past num_agents help with the nearest-agent search and the
// observation writes: the block has KernelSpec.threads_per_env threads).
//
// Mirrors ai_economist/example_envs/tag_continuous/dynamics.py function for function (same
// names). Products that numpy rounds separately are written with __fmul_rn / __fadd_rn so
// that nvcc does not fuse them into FMAs. The parameters are the kernel_arg fields of
// declaration.py in declaration order (tests check it).
//
// Speed (a block of ~100 agents per environment is latency-bound, so the serial chain of
// one thread is what counts): the moved agents are staged once in shared memory (TagAgents)
// and every later read comes from there; each agent's nearest-N search is shared by
// blockDim.x / num_agents threads (4 at the published size: each scans a quarter of the
// candidates into a register list, N <= TAG_REGISTER_OBSERVED, branch-free insertion, then
// the lists are merged pairwise through shared memory); after the last barrier the block
// writes the observations one (agent, slot) pair per thread and iteration: one id load, then
// the 7 features of the pair as independent loads and divisions; tags are counted with
// shared-memory integer atomics (exact in any order); 2 + log2(threads an agent) barriers.
#ifndef AI_ECONOMIST_TAG_CONTINUOUS_STEP_CU_
#define AI_ECONOMIST_TAG_CONTINUOUS_STEP_CU_

#define TAG_TWO_PI 6.28318530717958647692f
#define TAG_EPSILON 1e-10f
#define TAG_SQRT_TWO 1.41421356237309504880f
#define TAG_INFINITY __int_as_float(0x7f800000)
#define TAG_NUM_FEATURES 7
#define TAG_NUM_OWN_FEATURES 5
// Agents per block (shared arrays) and nearest agents kept per thread.
#define TAG_MAX_AGENTS 1024
#define TAG_MAX_OBSERVED 64
// Nearest agents kept in registers (more use the local-memory list).
#define TAG_REGISTER_OBSERVED 12
// Nearest-agent ids staged in shared memory for the block's observation writes (more, or
// the full observation: every thread writes its own row).
#define TAG_STAGED_NEIGHBORS 7168

// This environment's agents after the move, in shared memory: `moved` holds the rows of the
// relative features 0..4 (x, y, speed, acceleration, direction), TAG_MAX_AGENTS apart.
struct TagAgents {
  const float* moved;
  const float* x;
  const float* y;
  const float* speed;
  const float* acceleration;
  const float* direction;
  const int* types;
  const int* still_in;
};

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
// many were found (<= k). Insertion into a sorted list (local memory) while scanning ids
// upwards: the path for k > TAG_REGISTER_OBSERVED.
__device__ int nearest_neighbors(const TagAgents& a, int me, int num_agents, int k, int* ids,
                                 float* d2s) {
  int found = 0;
  if (k <= 0) return 0;
  for (int j = 0; j < num_agents; j++) {
    if (j == me || !a.still_in[j]) continue;
    const float d2 = squared_distance(a.x, a.y, me, j);
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

// Candidate (d2, j) into the sorted list (d, ids) of K entries (ascending d; equal d keep the
// earlier, lower id first), dropping the last. Branch-free and fully unrolled, so the list
// stays in registers and the threads of a warp never diverge: slot s takes slot s-1's entry
// if the candidate precedes it, else the candidate if it precedes slot s's own entry.
template <int K>
__device__ __forceinline__ void insert_nearest(float (&d)[K], int (&ids)[K], float d2, int j) {
#pragma unroll
  for (int s = K - 1; s > 0; s--) {
    const bool shift = d2 < d[s - 1];
    const bool take = d2 < d[s];
    d[s] = shift ? d[s - 1] : (take ? d2 : d[s]);
    ids[s] = shift ? ids[s - 1] : (take ? j : ids[s]);
  }
  const bool take = d2 < d[0];
  d[0] = take ? d2 : d[0];
  ids[0] = take ? j : ids[0];
}

// The K nearest other agents in the game among the candidates first .. last - 1, in registers
// (ids -1 past the last one found): for 0 .. num_agents - 1 the same list as
// nearest_neighbors. Agents out of the game or `me` count as infinitely far. A candidate not
// nearer than the last entry changes nothing: a warp skips the insertion when none of its
// threads has such a candidate (frequent with many agents per environment).
template <int K>
__device__ __forceinline__ void nearest_neighbors_in_registers(const TagAgents& a, int me,
                                                               int first, int last,
                                                               float (&d)[K], int (&ids)[K]) {
#pragma unroll
  for (int s = 0; s < K; s++) {
    d[s] = TAG_INFINITY;
    ids[s] = -1;
  }
#pragma unroll 4
  for (int j = first; j < last; j++) {
    const bool valid = j != me && a.still_in[j] != 0;
    const float d2 = valid ? squared_distance(a.x, a.y, me, j) : TAG_INFINITY;
    if (d2 < d[K - 1]) insert_nearest<K>(d, ids, d2, j);
  }
}

// Feature `f` (0..6) of agent `j` as agent `me` observes it (see dynamics.observe); j = -1:
// an empty slot.
__device__ __forceinline__ float observed_feature(int f, int me, int j, bool me_in, bool seen,
                                                  const TagAgents& a, float diagonal,
                                                  float speed_scale) {
  const bool rel = me_in && j >= 0;
  switch (f) {
    case 0:
      return rel ? __fsub_rn(a.x[j], a.x[me]) / diagonal : 0.0f;
    case 1:
      return rel ? __fsub_rn(a.y[j], a.y[me]) / diagonal : 0.0f;
    case 2:
      return rel ? __fsub_rn(a.speed[j], a.speed[me]) / speed_scale : 0.0f;
    case 3:
      return rel ? __fsub_rn(a.acceleration[j], a.acceleration[me]) / speed_scale : 0.0f;
    case 4:
      return rel ? __fsub_rn(a.direction[j], a.direction[me]) / TAG_TWO_PI : 0.0f;
    case 5:
      return seen ? static_cast<float>(a.types[j]) : 0.0f;
    default:
      return seen ? static_cast<float>(a.still_in[j]) : 0.0f;
  }
}

// Relative position (dx, dy) turned into the observer's heading frame, (cos, sin) of its
// heading (see dynamics.heading_frame): forward = dx c + dy s, left = dy c - dx s.
__device__ __forceinline__ void heading_frame(float& dx, float& dy, float c, float s) {
  const float forward = __fadd_rn(__fmul_rn(dx, c), __fmul_rn(dy, s));
  const float left = __fsub_rn(__fmul_rn(dy, c), __fmul_rn(dx, s));
  dx = forward;
  dy = left;
}

// One observed agent's 7 features in slot `slot` of `obs` (`slots` slots per feature); with
// `egocentric`, the position in the heading frame given by (c, s).
__device__ __forceinline__ void observe_slot(float* obs, int slot, int slots, int me, int j,
                                             bool me_in, bool seen, const TagAgents& a,
                                             float diagonal, float speed_scale,
                                             bool egocentric, float c, float s) {
  float dx = observed_feature(0, me, j, me_in, seen, a, diagonal, speed_scale);
  float dy = observed_feature(1, me, j, me_in, seen, a, diagonal, speed_scale);
  if (egocentric) heading_frame(dx, dy, c, s);
  obs[slot] = dx;
  obs[slots + slot] = dy;
#pragma unroll
  for (int f = 2; f < TAG_NUM_FEATURES; f++) {
    obs[f * slots + slot] = observed_feature(f, me, j, me_in, seen, a, diagonal, speed_scale);
  }
}

// The register list of K >= slots entries, its first `slots` ids copied to `out`.
template <int K, typename T>
__device__ void nearest_list_in_registers(const TagAgents& a, int me, int num_agents,
                                          int slots, bool me_in, T* out) {
  float d[K];
  int ids[K];
  nearest_neighbors_in_registers<K>(a, me, 0, num_agents, d, ids);
#pragma unroll
  for (int s = 0; s < K; s++) {
    if (s < slots) out[s] = static_cast<T>(me_in ? ids[s] : -1);
  }
}

// Agent `me`'s `slots` nearest agents into ids[0 .. slots), -1 past the last one found and
// everywhere when `me` is out of the game (a register list for slots <= 12). T: int (a
// thread's own list) or short (the lists staged in shared memory).
template <typename T>
__device__ void nearest_list(const TagAgents& a, int me, int num_agents, int slots, bool me_in,
                             T* ids) {
  if (slots <= 4) {
    nearest_list_in_registers<4>(a, me, num_agents, slots, me_in, ids);
  } else if (slots <= 8) {
    nearest_list_in_registers<8>(a, me, num_agents, slots, me_in, ids);
  } else if (slots <= 10) {
    nearest_list_in_registers<10>(a, me, num_agents, slots, me_in, ids);
  } else if (slots <= TAG_REGISTER_OBSERVED) {
    nearest_list_in_registers<TAG_REGISTER_OBSERVED>(a, me, num_agents, slots, me_in, ids);
  } else {
    int found_ids[TAG_MAX_OBSERVED];
    float d2s[TAG_MAX_OBSERVED];
    const int found = me_in ? nearest_neighbors(a, me, num_agents, slots, found_ids, d2s) : 0;
    for (int s = 0; s < slots; s++) ids[s] = static_cast<T>(s < found ? found_ids[s] : -1);
  }
}

// Every agent's `slots` nearest agents into neighbors[agent * slots + s], by the whole block,
// `split` threads an agent (thread agent * split + r): thread r scans the r-th contiguous
// chunk of candidate ids into a register list, then the lists are merged pairwise in
// log2(split) rounds through shared memory (ids only: distances are recomputed, the same
// floats). Merging a list of higher ids into one of lower ids with insert_nearest keeps equal
// distances in id order, so the result is nearest_neighbors' list. The partial list of
// (agent, r) is staged at neighbors[(r * num_agents + agent) * slots]: r = 0 is the final place.
template <int K>
__device__ void nearest_lists(const TagAgents& a, int num_agents, int slots, int split,
                              short* neighbors) {
  const int agent = threadIdx.x / split;
  const int r = threadIdx.x % split;
  const bool in_game = agent < num_agents && a.still_in[agent] != 0;
  const int chunk = (num_agents + split - 1) / split;
  float d[K];
  int ids[K];
  nearest_neighbors_in_registers<K>(a, agent, in_game ? min(r * chunk, num_agents) : 0,
                                    in_game ? min((r + 1) * chunk, num_agents) : 0, d, ids);
  for (int width = 1; width < split; width *= 2) {
    if (in_game && r % (2 * width) == width) {
      short* mine = neighbors + (r * num_agents + agent) * slots;
      for (int s = 0; s < slots && s < K; s++) mine[s] = static_cast<short>(ids[s]);
    }
    __syncthreads();
    if (in_game && r % (2 * width) == 0 && r + width < split) {
      const short* other = neighbors + ((r + width) * num_agents + agent) * slots;
      for (int s = 0; s < slots && s < K; s++) {
        const int j = other[s];
        if (j < 0) break;
        const float d2 = squared_distance(a.x, a.y, agent, j);
        if (d2 < d[K - 1]) insert_nearest<K>(d, ids, d2, j);
      }
    }
  }
  if (agent < num_agents && r == 0) {
#pragma unroll
    for (int s = 0; s < K; s++) {
      if (s < slots) neighbors[agent * slots + s] = static_cast<short>(in_game ? ids[s] : -1);
    }
  }
}

// nearest_lists for any `slots` (register lists up to TAG_REGISTER_OBSERVED; longer lists:
// one thread an agent with the local-memory list). Every thread of the block calls it.
__device__ void staged_nearest_lists(const TagAgents& a, int num_agents, int slots, int split,
                                     short* neighbors) {
  if (slots <= 4) {
    nearest_lists<4>(a, num_agents, slots, split, neighbors);
  } else if (slots <= 8) {
    nearest_lists<8>(a, num_agents, slots, split, neighbors);
  } else if (slots <= 10) {
    nearest_lists<10>(a, num_agents, slots, split, neighbors);
  } else if (slots <= TAG_REGISTER_OBSERVED) {
    nearest_lists<TAG_REGISTER_OBSERVED>(a, num_agents, slots, split, neighbors);
  } else if (threadIdx.x < num_agents) {
    const int me = threadIdx.x;
    nearest_list(a, me, num_agents, slots, a.still_in[me] != 0, neighbors + me * slots);
  }
}

// Agent `me`'s observation row (see dynamics.observe), written by its own thread: the path for
// the full observation and for lists too large to stage (see write_observations).
__device__ void observe(float* obs, int me, int num_agents, int slots, bool full,
                        float time_fraction, const TagAgents& a, float diagonal,
                        float speed_scale, bool egocentric) {
  const bool me_in = a.still_in[me] != 0;
  const float c = egocentric ? cosf(a.direction[me]) : 1.0f;
  const float sn = egocentric ? sinf(a.direction[me]) : 0.0f;
  if (full) {
    for (int j = 0; j < num_agents; j++) {
      if (j == me) continue;
      observe_slot(obs, j < me ? j : j - 1, slots, me, j, me_in, true, a, diagonal,
                   speed_scale, egocentric, c, sn);
    }
  } else {
    int ids[TAG_MAX_OBSERVED];
    nearest_list(a, me, num_agents, slots, me_in, ids);
    for (int s = 0; s < slots; s++) {
      observe_slot(obs, s, slots, me, ids[s], me_in, ids[s] >= 0, a, diagonal, speed_scale,
                   egocentric, c, sn);
    }
  }
  obs[TAG_NUM_FEATURES * slots] = me_in ? time_fraction : 0.0f;
}

// The neighbour features of every observation row of this environment (dynamics.observe;
// with `egocentric`, positions in the observer's heading frame),
// written by the whole block after the last barrier: one (agent, slot) pair per thread and
// iteration, its observed agent from the staged lists neighbors[agent * slots + slot]. The
// time and the own state are written by each agent's own thread. `obs_dim`: the row stride.
__device__ void write_observations(float* obs_taggers, float* obs_runners, int num_agents,
                                   int num_taggers, int slots, int obs_dim, const TagAgents& a,
                                   const short* neighbors, float diagonal, float speed_scale,
                                   bool egocentric) {
  const int pairs = num_agents * slots;
  const int step_agents = blockDim.x / slots;
  const int step_slots = blockDim.x % slots;
  int agent = threadIdx.x / slots;
  int slot = threadIdx.x % slots;
  for (int p = threadIdx.x; p < pairs; p += blockDim.x) {
    const int j = neighbors[p];
    const bool present = j >= 0;
    const int k = present ? j : agent;  // a valid index for the loads
    const bool rel = present && a.still_in[agent] != 0;
    float* out = (agent < num_taggers ? obs_taggers + agent * obs_dim
                                      : obs_runners + (agent - num_taggers) * obs_dim) +
                 slot;
    float dx = __fsub_rn(a.x[k], a.x[agent]) / diagonal;
    float dy = __fsub_rn(a.y[k], a.y[agent]) / diagonal;
    if (egocentric) heading_frame(dx, dy, cosf(a.direction[agent]), sinf(a.direction[agent]));
    const float ds = __fsub_rn(a.speed[k], a.speed[agent]) / speed_scale;
    const float da = __fsub_rn(a.acceleration[k], a.acceleration[agent]) / speed_scale;
    const float dd = __fsub_rn(a.direction[k], a.direction[agent]) / TAG_TWO_PI;
    out[0] = rel ? dx : 0.0f;
    out[slots] = rel ? dy : 0.0f;
    out[2 * slots] = rel ? ds : 0.0f;
    out[3 * slots] = rel ? da : 0.0f;
    out[4 * slots] = rel ? dd : 0.0f;
    out[5 * slots] = present ? static_cast<float>(a.types[k]) : 0.0f;
    out[6 * slots] = present ? static_cast<float>(a.still_in[k]) : 0.0f;
    agent += step_agents;
    slot += step_slots;
    if (slot >= slots) {
      slot -= slots;
      agent += 1;
    }
  }
}

// Agent's own state (see dynamics.own_state) into out[0 .. 5): position over the grid length,
// speed over its scale, cosine and sine of the heading; zeros out of the game.
__device__ void own_state(float* out, float x, float y, float s, float d, bool in_game,
                          float grid_length, float speed_scale) {
  out[0] = in_game ? x / grid_length : 0.0f;
  out[1] = in_game ? y / grid_length : 0.0f;
  out[2] = in_game ? s / speed_scale : 0.0f;
  out[3] = in_game ? cosf(d) : 0.0f;
  out[4] = in_game ? sinf(d) : 0.0f;
}

// The tagger that tags runner `me` this step, or -1 (see dynamics.tag_runners).
__device__ int tag_runners(const TagAgents& a, int me, int num_taggers, float tagging_margin) {
  if (me < num_taggers || !a.still_in[me]) return -1;
  int nearest = 0;
  float closest = sqrtf(squared_distance(a.x, a.y, me, 0));
  for (int k = 1; k < num_taggers; k++) {
    const float dist = sqrtf(squared_distance(a.x, a.y, me, k));
    if (dist < closest) {
      closest = dist;
      nearest = k;
    }
  }
  return closest < tagging_margin ? nearest : -1;
}

// Agent `me`'s reward before the end-of-game bonus (see dynamics.compute_rewards): a runner
// passes its tagger (or -1), a tagger the number of runners it tagged (`tag_count`).
__device__ float compute_rewards(int in_game, float edge_penalty, float step_reward,
                                 bool is_tagger, int tagger, int tag_count,
                                 float tag_reward_for_tagger, float tag_penalty_for_runner) {
  const float reward = in_game ? __fadd_rn(edge_penalty, step_reward) : 0.0f;
  if (!is_tagger) return tagger >= 0 ? __fadd_rn(reward, tag_penalty_for_runner) : reward;
  return __fadd_rn(reward, __fmul_rn(static_cast<float>(tag_count), tag_reward_for_tagger));
}

extern "C" __launch_bounds__(TAG_MAX_AGENTS) __global__ void TagContinuousStep(
    const int* agent_types, const float* skill_levels, const float* step_rewards,
    const float* acceleration_actions, const float* turn_actions, const int num_agents,
    const int num_taggers, const int episode_length, const int num_turn_actions,
    const int num_other_agents_observed, const int use_full_observation,
    const int observe_own_state, const int egocentric_observation,
    const int runner_exits_game_after_tagged, const float grid_length, const float max_speed,
    const float edge_hit_penalty, const float tagging_margin, const float tag_reward_for_tagger,
    const float tag_penalty_for_runner, const float end_of_game_reward_for_runner,
    float* loc_x, float* loc_y, float* speed, float* direction, float* acceleration,
    int* still_in_the_game, int* tagged_by, int* runners_left, int* episode_tags,
    int* last_episode_tags, int* completed_episodes, float* observations_tagger,
    int* sampled_actions_tagger, float* rewards_tagger, float* observations_runner,
    int* sampled_actions_runner, float* rewards_runner, int* _timestep_, int* _done_) {
  __shared__ float moved[5 * TAG_MAX_AGENTS];  // x, y, speed, acceleration, direction
  float* xs = moved;
  float* ys = moved + TAG_MAX_AGENTS;
  float* speeds = moved + 2 * TAG_MAX_AGENTS;
  float* accelerations = moved + 3 * TAG_MAX_AGENTS;
  float* directions = moved + 4 * TAG_MAX_AGENTS;
  __shared__ int types[TAG_MAX_AGENTS];
  __shared__ int ins[TAG_MAX_AGENTS];
  __shared__ int tag_counts[TAG_MAX_AGENTS];  // runners each tagger tagged this step
  __shared__ int tags;                        // runners tagged this step
  __shared__ short neighbors[TAG_STAGED_NEIGHBORS];  // [agent][slot]: the nearest lists
  const TagAgents agents = {moved, xs, ys, speeds, accelerations, directions, types, ins};
  const int env = blockIdx.x;
  const int me = threadIdx.x;
  const int num_runners = num_agents - num_taggers;
  const bool active = me < num_agents;
  const bool is_tagger = me < num_taggers;
  const size_t offset = static_cast<size_t>(env) * num_agents + me;
  const int t = _timestep_[env] + 1;
  const int obs_dim = TAG_NUM_FEATURES * num_other_agents_observed + 1 +
                      (observe_own_state ? TAG_NUM_OWN_FEATURES : 0);
  const size_t row = is_tagger ? static_cast<size_t>(env) * num_taggers + me
                               : static_cast<size_t>(env) * num_runners + (me - num_taggers);
  const int slots = num_other_agents_observed;
  const bool staged =
      !use_full_observation && slots > 0 && num_agents * slots <= TAG_STAGED_NEIGHBORS;
  // threads of one agent's nearest-agent search (KernelSpec.threads_per_env: split agents)
  const int threads_per_agent = static_cast<int>(blockDim.x) / num_agents;
  const int split = threads_per_agent > 1 && slots <= TAG_REGISTER_OBSERVED &&
                            threads_per_agent * num_agents * slots <= TAG_STAGED_NEIGHBORS
                        ? threads_per_agent
                        : 1;
  const float time_fraction = static_cast<float>(t) / static_cast<float>(episode_length);
  const float diagonal = __fmul_rn(grid_length, TAG_SQRT_TWO);
  const float speed_scale = __fadd_rn(max_speed, TAG_EPSILON);
  int in_before = 0;
  float edge_penalty = 0.0f;
  float* const obs_row = (is_tagger ? observations_tagger : observations_runner) + row * obs_dim;
  if (me == 0) tags = 0;
  if (active) {
    in_before = still_in_the_game[offset];
    const int action = is_tagger ? sampled_actions_tagger[row] : sampled_actions_runner[row];
    const float max_speed_i = __fmul_rn(max_speed, skill_levels[me]);
    edge_penalty = move_agents(
        loc_x + offset, loc_y + offset, speed + offset, direction + offset,
        acceleration + offset, in_before, acceleration_actions[action / num_turn_actions],
        turn_actions[action % num_turn_actions], max_speed_i, grid_length, edge_hit_penalty);
    xs[me] = loc_x[offset];
    ys[me] = loc_y[offset];
    speeds[me] = speed[offset];
    directions[me] = direction[offset];
    accelerations[me] = acceleration[offset];
    if (observe_own_state) {
      own_state(obs_row + TAG_NUM_FEATURES * slots + 1, xs[me], ys[me], speeds[me],
                directions[me], in_before != 0, grid_length, speed_scale);
    }
    types[me] = agent_types[me];
    ins[me] = in_before;
    tag_counts[me] = 0;
  }
  __syncthreads();
  int tagger = -1;
  if (active) {
    if (staged) {
      obs_row[TAG_NUM_FEATURES * slots] = in_before ? time_fraction : 0.0f;
    } else {
      observe(obs_row, me, num_agents, slots, use_full_observation != 0, time_fraction, agents,
              diagonal, speed_scale, egocentric_observation != 0);
    }
    tagger = tag_runners(agents, me, num_taggers, tagging_margin);
    tagged_by[offset] = tagger;
    if (tagger >= 0) {
      atomicAdd(&tag_counts[tagger], 1);
      atomicAdd(&tags, 1);
    }
  }
  if (staged) staged_nearest_lists(agents, num_agents, slots, split, neighbors);
  __syncthreads();
  if (active) {
    float reward = compute_rewards(in_before, edge_penalty, step_rewards[me], is_tagger, tagger,
                                   tag_counts[me], tag_reward_for_tagger,
                                   tag_penalty_for_runner);
    const bool still_in = in_before && !(tagger >= 0 && runner_exits_game_after_tagged);
    if (!still_in && in_before) still_in_the_game[offset] = 0;
    if (!is_tagger && t == episode_length && still_in) {
      reward = __fadd_rn(reward, end_of_game_reward_for_runner);
    }
    (is_tagger ? rewards_tagger : rewards_runner)[row] = reward;
  }
  if (staged) {
    write_observations(observations_tagger + static_cast<size_t>(env) * num_taggers * obs_dim,
                       observations_runner + static_cast<size_t>(env) * num_runners * obs_dim,
                       num_agents, num_taggers, slots, obs_dim, agents, neighbors, diagonal,
                       speed_scale, egocentric_observation != 0);
  }
  if (me == 0) {
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

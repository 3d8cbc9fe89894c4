// Gather-trade-build's world as CUDA C device functions: the twins of gpu/reference.py (numpy,
// the truth) and of gpu/gtb_world_numba*.py, device function for device function. Include
// after a generated state header (gpu/state.py) that defines the sizes (N_AGENTS, WORLD_H,
// WORLD_W, N_RESOURCES, N_GOODS, N_REGROW, WINDOW, OBS_DIM_A, OBS_DIM_P, N_ACTIONS_A), the
// parameter indices P_* / I_*, the flat-feature positions OBS_* (behind the market's block in
// a world with a market), OBS_FLAT_A (the first map cell), OBS_P_TIME / OBS_FLAT_P (the
// planner's time and first p<i>), MOVE_START (the first move action) and the draw streams.
#ifndef AI_ECONOMIST_GTB_WORLD_CUH_
#define AI_ECONOMIST_GTB_WORLD_CUH_
#include "gtb_rng.cuh"

#ifndef N_PLANNER
#define N_PLANNER 1  // the planner's rows (one per tax bracket in the full economy)
#endif
#ifndef OBS_STRIDE_P
#define OBS_STRIDE_P N_GOODS    // floats of a p<i> (the full economy: the tax's 3 fields first)
#define OBS_P_INV_IN_STRIDE 0  // where the agent's inventory starts in its p<i>
#endif

#define HW (WORLD_H * WORLD_W)
#define CELLS (WINDOW * WINDOW)

// Per-env slices of the declared arrays.
struct GtbEnv {
  float* maps;
  int* owner;
  int* loc;
  double* inv;
  double* esc;
  double* labor;
  double* payment;
  double* skill;
  double* bonus;
  double* coin_util;
  double* util;
};

__device__ __forceinline__ int move_dr(int m) { return m == 3 ? -1 : (m == 4 ? 1 : 0); }
__device__ __forceinline__ int move_dc(int m) { return m == 1 ? -1 : (m == 2 ? 1 : 0); }

__device__ bool occupied(const int* loc, int count, int r, int c) {
  for (int j = 0; j < count; j++) {
    if (loc[2 * j] == r && loc[2 * j + 1] == c) return true;
  }
  return false;
}

// array_rules.build_masks of agent a
__device__ bool build_masks(const GtbEnv& e, int a, const int* landmarks) {
  const int r = e.loc[2 * a], c = e.loc[2 * a + 1];
  if (!(e.inv[a * N_GOODS + 2] >= 1 && e.inv[a * N_GOODS + 1] >= 1)) return false;
  for (int j = 0; j < N_RESOURCES; j++) {
    if (e.maps[j * HW + r * WORLD_W + c] > 0) return false;
  }
  return e.owner[r * WORLD_W + c] < 0 && landmarks[r * WORLD_W + c] == 0;
}

// array_rules.move_masks of agent a's move m (1..4)
__device__ bool move_masks(const GtbEnv& e, int a, int m, const int* water) {
  const int r = e.loc[2 * a] + move_dr(m), c = e.loc[2 * a + 1] + move_dc(m);
  if (r < 0 || r >= WORLD_H || c < 0 || c >= WORLD_W || water[r * WORLD_W + c] != 0) return false;
  const int owner = e.owner[r * WORLD_W + c];
  return (owner < 0 || owner == a) && !occupied(e.loc, N_AGENTS, r, c);
}

// array_rules.build_step of agent a (each agent builds on its own cell, so all at once)
__device__ bool build_step(const GtbEnv& e, int a, int action, const int* landmarks,
                           const double* params) {
  if (action != 1 || !build_masks(e, a, landmarks)) return false;
  double* inv = e.inv + a * N_GOODS;
  inv[2] -= 1;
  inv[1] -= 1;
  inv[0] += e.payment[a];
  e.labor[a] += params[P_BUILD_LABOR];
  e.owner[e.loc[2 * a] * WORLD_W + e.loc[2 * a + 1]] = a;
  return true;
}

// array_rules.move_agent_slot for agent a, whose slot of the order it is
__device__ void move_agent_slot(const GtbEnv& e, int a, int action, const int* water,
                                const double* params) {
  const int m = action >= MOVE_START ? action - MOVE_START + 1 : 0;
  if (m > 0 && move_masks(e, a, m, water)) {
    e.loc[2 * a] += move_dr(m);
    e.loc[2 * a + 1] += move_dc(m);
    e.labor[a] += params[P_MOVE_LABOR];
  }
}

// array_rules.gather_events + apply_gathers of agent a (agents stand on distinct cells)
__device__ void apply_gathers(const GtbEnv& e, int a, int seed, int ep, int t,
                              const double* params) {
  const int at = e.loc[2 * a] * WORLD_W + e.loc[2 * a + 1];
  for (int j = 0; j < N_RESOURCES; j++) {
    float* cell = e.maps + j * HW + at;
    if (*cell >= 1) {
      const double u = gtb_uniform(seed, ep, t, STREAM_GATHER, 2 * a + j);
      e.inv[a * N_GOODS + 1 + j] += u < e.bonus[a] ? 2.0 : 1.0;
      e.labor[a] += params[P_COLLECT_LABOR];
      *cell = fmaxf(*cell - 1.0f, 0.0f);
    }
  }
}

// array_rules.regrow_step: the threads stride over the source cells
__device__ void regrow_step(const GtbEnv& e, int seed, int ep, int t, const float* layout,
                            const int* regrow_cells, const double* params) {
  for (int k = threadIdx.x; k < N_REGROW; k += blockDim.x) {
    const int i = regrow_cells[k];
    const double before = (double)e.maps[i];
    const double p = fmax(before, (double)layout[i]) * params[P_REGEN_WEIGHT];
    if (gtb_uniform(seed, ep, t, STREAM_REGROW, i) < p) {
      e.maps[i] = (float)fmin(before + 1.0, params[P_MAX_HEALTH]);
    }
  }
}

// array_rewards.coin_utilities of agent a's coin endowment
__device__ double coin_utility_of(const GtbEnv& e, int a, const double* params) {
  const double e1 = 1.0 - params[P_ISOELASTIC_ETA];
  return (pow(e.inv[a * N_GOODS] + e.esc[a * N_GOODS], e1) - 1.0) / e1;
}

// array_rewards.energy_weight
__device__ double energy_weight(int completions, int integrator, const double* params,
                                const int* iparams) {
  const double c = params[P_ENERGY_WARMUP_CONSTANT];
  if (c <= 0.0) return 1.0;
  const int progress = iparams[I_ENERGY_WARMUP_AUTO] == 1 ? integrator : completions;
  return 1.0 - exp(-(double)progress / c);
}

// coin_eq_times_productivity, summed as array_rewards.optimization_metrics
__device__ double welfare_of(const GtbEnv& e, const double* params) {
  double total = 0.0, diff = 0.0;
  for (int i = 0; i < N_AGENTS; i++) {
    const double ci = e.inv[i * N_GOODS] + e.esc[i * N_GOODS];
    total = total + ci;
    for (int j = 0; j < N_AGENTS; j++) diff = diff + fabs(ci - (e.inv[j * N_GOODS] + e.esc[j * N_GOODS]));
  }
  const double n = (double)N_AGENTS;
  const double gini = diff / (2 * N_AGENTS * total + 1e-10) / ((n - 1) / n);
  const double w = 1.0 - params[P_MIXING_WEIGHT_GINI_VS_COIN];
  return (w * (1.0 - gini) + 1.0 - w) * (total / n);
}

// reference.skill_draws of one agent (dist 1 Pareto, 2 lognormal)
__device__ double skill_draw(int seed, int ep, int stream, int a, int dist, double shape,
                             double mean, double sigma) {
  const double u1 = gtb_uniform(seed, ep, 0, stream, 2 * a);
  if (dist == 1) return expm1(-log1p(-u1) / shape);
  const double u2 = gtb_uniform(seed, ep, 0, stream, 2 * a + 1);
  const double z = sqrt(-2.0 * log1p(-u1)) * cos(2.0 * 3.141592653589793 * u2);
  return exp(mean + sigma * z);
}

// position of agent a when the agents' keys are sorted (ties to the lower agent)
__device__ int rank_of(int seed, int ep, int step, int stream, int a) {
  const unsigned int key = gtb_draw_bits(seed, ep, step, stream, a);
  int rank = 0;
  for (int j = 0; j < N_AGENTS; j++) {
    const unsigned int other = gtb_draw_bits(seed, ep, step, stream, j);
    if (other < key || (other == key && j < a)) rank++;
  }
  return rank;
}

// reference.place_agents (one thread)
__device__ void place_agents(const GtbEnv& e, int seed, int ep, const int* water) {
  for (int i = 0; i < N_AGENTS; i++) {
    bool placed = false;
    for (int k = 0; k < PLACEMENT_TRIES && !placed; k++) {
      const int index = 2 * (i * PLACEMENT_TRIES + k);
      const int r = gtb_below(gtb_draw_bits(seed, ep, 0, STREAM_PLACE, index), WORLD_H);
      const int c = gtb_below(gtb_draw_bits(seed, ep, 0, STREAM_PLACE, index + 1), WORLD_W);
      if (water[r * WORLD_W + c] == 0 && !occupied(e.loc, i, r, c)) {
        e.loc[2 * i] = r;
        e.loc[2 * i + 1] = c;
        placed = true;
      }
    }
    for (int cell = 0; cell < HW && !placed; cell++) {  // reference.first_free_cell
      const int r = cell / WORLD_W, c = cell % WORLD_W;
      if (water[cell] == 0 && !occupied(e.loc, i, r, c)) {
        e.loc[2 * i] = r;
        e.loc[2 * i + 1] = c;
        placed = true;
      }
    }
  }
}

// reference.reset_envs for agent a: inventory, skills, the fixed-four slot
__device__ void reset_agent(const GtbEnv& e, int a, int seed, int ep, int* move_order,
                            const double* ranked_payments, const int* ranked_locs,
                            const double* params, const int* iparams) {
  for (int k = 0; k < N_GOODS; k++) {
    e.inv[a * N_GOODS + k] = 0.0;
    e.esc[a * N_GOODS + k] = 0.0;
  }
  e.inv[a * N_GOODS] = params[P_STARTING_AGENT_COIN];
  e.labor[a] = 0.0;
  move_order[a] = a;
  const double pmsm = params[P_PAYMENT_MAX_SKILL_MULTIPLIER];
  double skill = 1.0, rate = 1.0;
  if (iparams[I_BUILD_SKILL_DIST] != 0) {
    skill = skill_draw(seed, ep, STREAM_BUILD_SKILL, a, iparams[I_BUILD_SKILL_DIST], 4.0, -1.0, 0.5);
    rate = fmin(pmsm, (pmsm - 1) * skill + 1);
  }
  e.skill[a] = skill;
  e.payment[a] = rate * params[P_PAYMENT];
  e.bonus[a] = 0.0;
  if (iparams[I_GATHER_SKILL_DIST] != 0) {
    const double x = skill_draw(seed, ep, STREAM_GATHER_SKILL, a, iparams[I_GATHER_SKILL_DIST],
                                3.0, -2.022, 0.938);
    e.bonus[a] = fmin(2.0, x) / 2;
  }
  if (iparams[I_FIXED_FOUR] == 1) {
    const int rank = rank_of(seed, ep, 0, STREAM_RANK, a);
    e.loc[2 * a] = ranked_locs[2 * rank];
    e.loc[2 * a + 1] = ranked_locs[2 * rank + 1];
    e.payment[a] = ranked_payments[rank];
  }
}

// array_obs.egocentric_maps: window cell p (agent-major) of the 7 map and 2 index channels
__device__ void write_window_cell(const GtbEnv& e, int p, float* obs_a, const float* layout,
                                  const int* water, int range) {
  const int a = p / CELLS, cell = p % CELLS;
  const int r = e.loc[2 * a] - range + cell / WINDOW, c = e.loc[2 * a + 1] - range + cell % WINDOW;
  float* out = obs_a + a * OBS_DIM_A + OBS_FLAT_A + cell;
  float* idx = out + 7 * CELLS;
  if (r < 0 || r >= WORLD_H || c < 0 || c >= WORLD_W) {
    for (int ch = 0; ch < 7; ch++) out[ch * CELLS] = 0.0f;
    idx[0] = 0.0f;
    idx[CELLS] = 0.0f;
    return;
  }
  const int at = r * WORLD_W + c, owner = e.owner[at];
  out[0] = e.maps[at];
  out[CELLS] = e.maps[HW + at];
  out[2 * CELLS] = owner >= 0 ? 1.0f : 0.0f;
  out[3 * CELLS] = (float)water[at];
  out[4 * CELLS] = layout[at] > 0 ? 1.0f : 0.0f;
  out[5 * CELLS] = layout[HW + at] > 0 ? 1.0f : 0.0f;
  out[6 * CELLS] = 1.0f;
  idx[0] = (float)(owner < 0 ? 0 : (owner == a ? 1 : owner + 2));
  int code = 0;
  for (int j = 0; j < N_AGENTS; j++) {
    if (e.loc[2 * j] == r && e.loc[2 * j + 1] == c) code = j == a ? 1 : j + 2;
  }
  idx[CELLS] = (float)code;
}

// reference.observe of one env (all threads)
__device__ void observe(const GtbEnv& e, int env, int t, float* observations_a,
                        float* observations_p, float* action_mask_a, float* action_mask_p,
                        const float* layout, const int* water, const int* landmarks,
                        const double* params, const int* iparams) {
  float* obs_a = observations_a + env * N_AGENTS * OBS_DIM_A;
  for (int p = threadIdx.x; p < N_AGENTS * CELLS; p += blockDim.x) {
    write_window_cell(e, p, obs_a, layout, water, iparams[I_OBSERVATION_RANGE]);
  }
  const int a = threadIdx.x;
  const double inv_scale = params[P_INV_SCALE];
  if (a < N_AGENTS) {
    float* flat = obs_a + a * OBS_DIM_A;
    const double pay = params[P_PAYMENT], scale = pay > 0 ? pay : 1.0;
    flat[OBS_BUILD_BUILD_PAYMENT] = (float)(e.payment[a] / scale);
    flat[OBS_BUILD_BUILD_SKILL] = (float)e.skill[a];
    flat[OBS_GATHER_BONUS_GATHER_PROB] = (float)e.bonus[a];
    flat[OBS_TIME] = (float)((double)t / params[P_TIME_SCALE]);
    flat[OBS_WORLD_INVENTORY_COIN] = (float)(e.inv[a * N_GOODS] * inv_scale);
    flat[OBS_WORLD_INVENTORY_STONE] = (float)(e.inv[a * N_GOODS + 1] * inv_scale);
    flat[OBS_WORLD_INVENTORY_WOOD] = (float)(e.inv[a * N_GOODS + 2] * inv_scale);
    flat[OBS_WORLD_LOC_COL] = (float)((double)e.loc[2 * a + 1] / WORLD_W);
    flat[OBS_WORLD_LOC_ROW] = (float)((double)e.loc[2 * a] / WORLD_H);
    float* mask = action_mask_a + (env * N_AGENTS + a) * N_ACTIONS_A;
    mask[0] = 1.0f;
    mask[1] = build_masks(e, a, landmarks) ? 1.0f : 0.0f;
    for (int m = 1; m <= 4; m++) mask[MOVE_START - 1 + m] = move_masks(e, a, m, water) ? 1.0f : 0.0f;
  }
  if (a == N_AGENTS) {
    float* obs_p = observations_p + env * N_PLANNER * OBS_DIM_P;  // row 0
    obs_p[OBS_P_TIME] = (float)((double)t / params[P_TIME_SCALE]);
    for (int k = OBS_P_TIME + 1; k < OBS_FLAT_P; k++) obs_p[k] = 0.0f;
    for (int i = 0; i < N_AGENTS; i++) {
      for (int k = 0; k < N_GOODS; k++) {
        obs_p[OBS_FLAT_P + i * OBS_STRIDE_P + OBS_P_INV_IN_STRIDE + k] =
            (float)(e.inv[i * N_GOODS + k] * inv_scale);
      }
    }
    action_mask_p[env * N_PLANNER * N_ACTIONS_P] = 1.0f;
  }
}

__device__ GtbEnv env_slices(int env, float* resource_maps, int* house_owner, int* locs,
                             double* inventory, double* escrow, double* labor,
                             double* build_payment, double* build_skill, double* bonus,
                             double* coin_utility, double* utility) {
  GtbEnv e;
  e.maps = resource_maps + env * N_RESOURCES * HW;
  e.owner = house_owner + env * HW;
  e.loc = locs + env * N_AGENTS * 2;
  e.inv = inventory + env * N_AGENTS * N_GOODS;
  e.esc = escrow + env * N_AGENTS * N_GOODS;
  e.labor = labor + env * N_AGENTS;
  e.payment = build_payment + env * N_AGENTS;
  e.skill = build_skill + env * N_AGENTS;
  e.bonus = bonus + env * N_AGENTS;
  e.coin_util = coin_utility + env * N_AGENTS;
  e.util = utility + env * N_AGENTS;
  return e;
}

#define GTB_SLICES                                                                          \
  env_slices(blockIdx.x, resource_maps, house_owner, locs, inventory, escrow, labor,        \
             build_payment, build_skill, bonus_gather_prob, coin_utility, utility)


// array_rewards.step_rewards of one env (one thread)
__device__ void step_rewards(const GtbEnv& e, int env, int t, int* completions,
                             int* auto_integrator, double* welfare, float* rewards_a,
                             float* rewards_p, double* episode_coin, double* episode_labor,
                             double* episode_utility, int* done, const double* params,
                             const int* iparams) {
  const double k = energy_weight(completions[env], auto_integrator[env], params, iparams) *
                   params[P_ENERGY_COST];
  double total = 0.0;
  for (int i = 0; i < N_AGENTS; i++) {
    const double fresh = e.coin_util[i] - e.labor[i] * k;
    const double diff = fresh - e.util[i];
    rewards_a[env * N_AGENTS + i] = (float)diff;
    e.util[i] = fresh;
    total = total + diff;
  }
  const double fresh_welfare = welfare_of(e, params);
  rewards_p[env * N_PLANNER] = (float)(fresh_welfare - welfare[env]);  // row 0
  welfare[env] = fresh_welfare;
  if (total > 0) auto_integrator[env] += 1;
  if (t >= iparams[I_EPISODE_LENGTH]) {
    completions[env] += 1;
    done[env] = 1;
    for (int i = 0; i < N_AGENTS; i++) {
      episode_coin[env * N_AGENTS + i] = e.inv[i * N_GOODS] + e.esc[i * N_GOODS];
      episode_labor[env * N_AGENTS + i] = e.labor[i];
      episode_utility[env * N_AGENTS + i] = e.util[i];
    }
  }
}

#endif  // AI_ECONOMIST_GTB_WORLD_CUH_

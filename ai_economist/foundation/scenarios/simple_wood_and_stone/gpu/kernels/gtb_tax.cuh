// Gather-trade-build's tax (PeriodicBracketTax) as CUDA C device functions: the twins of
// gpu/gtb_tax_numba_parts.py and of gpu/tax_reference.py (array_tax), function for function.
// Include after a generated state header that defines N_AGENTS, N_BRACKETS, N_RATES, N_GOODS
// and the TP_* / TI_* indices of tax_params / tax_iparams (gpu/tax_state.py), and after the
// one-step economy's bracket_tax.cuh (taxes_due, marginal_rate). Coin is good 0 of the host
// env's inventory / escrow [A][N_GOODS]. Per-agent and per-bracket functions run in parallel;
// the revenue is summed on one thread in numpy's order (numpy_sum).
#ifndef AI_ECONOMIST_GTB_TAX_CUH_
#define AI_ECONOMIST_GTB_TAX_CUH_

#define TAX_COIN 0

// One env's slices of the tax's arrays and of the host env's goods.
struct TaxEnv {
  int* cycle_pos;
  int* rate_index;          // [B]
  double* rates_obs;        // [B]
  int* rate_completions;
  double* last_coin;        // [A]
  double* last_income;
  double* last_marginal_rate;
  double* total_collected;
  double* last_lump_sum;
  double* saez_rates;       // [B]
  double* saez_running_avg; // [B]
  double* inv;              // [A][N_GOODS]
  double* esc;
};

#define TAX_SLICES(env)                                                                         \
  {tax_cycle_pos + (env), tax_rate_index + (env) * N_BRACKETS, tax_rates_obs + (env) * N_BRACKETS, \
   tax_rate_completions + (env), last_coin + (env) * N_AGENTS, last_income + (env) * N_AGENTS,  \
   last_marginal_rate + (env) * N_AGENTS, total_collected + (env), last_lump_sum + (env),      \
   saez_rates + (env) * N_BRACKETS, saez_running_avg + (env) * N_BRACKETS,                     \
   inventory + (env) * N_AGENTS * N_GOODS, escrow + (env) * N_AGENTS * N_GOODS}

// utils.annealed_tax_limit: clip(slope * (completions - warmup), 0, 1) * final_max.
__device__ double annealed_tax_limit(int completions, double warmup, double slope,
                                     double final_max) {
  double v = slope * ((double)completions - warmup);
  v = v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v);
  return v * final_max;
}

// array_tax.rate_limit: the highest rate after `completions` episodes.
__device__ double rate_limit(int completions, const double* params, const int* iparams) {
  if (iparams[TI_ANNEALING] == 0) return params[TP_RATE_MAX];
  return annealed_tax_limit(completions, params[TP_ANNEAL_WARMUP], params[TP_ANNEAL_SLOPE],
                            params[TP_RATE_MAX]);
}

// array_tax.current_rates of bracket b: the planner's pick, or the schedule capped at limit.
__device__ double current_rates(const TaxEnv& t, int b, const double* disc_rates,
                                const double* fixed_rates, double limit, const int* iparams) {
  const int model = iparams[TI_TAX_MODEL_CODE];
  if (model == 0) return disc_rates[t.rate_index[b]];
  const double r = model == 2 ? t.saez_rates[b] : fixed_rates[b];
  return fmin(r, limit);
}

// np.sum of x[:n] in numpy's order (pairwise: 8 accumulators from 8 values on, n <= 128).
__device__ double numpy_sum(const double* x, int n) {
  if (n < 8) {
    double res = 0.0;
    for (int i = 0; i < n; i++) res += x[i];
    return res;
  }
  double r[8];
  for (int j = 0; j < 8; j++) r[j] = x[j];
  int i = 8;
  for (; i < n - n % 8; i += 8) {
    for (int j = 0; j < 8; j++) r[j] += x[i + j];
  }
  double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
  for (; i < n; i++) res += x[i];
  return res;
}

// array_tax.current_rates of bracket tid into s_rates[tid].
__device__ void fill_rates(const TaxEnv& t, int tid, const double* disc_rates,
                           const double* fixed_rates, double* s_rates, const double* params,
                           const int* iparams) {
  if (tid < N_BRACKETS) {
    const double limit = rate_limit(*t.rate_completions, params, iparams);
    s_rates[tid] = current_rates(t, tid, disc_rates, fixed_rates, limit, iparams);
  }
}

// array_tax.reset_envs of one env (rate completions set before): a new cycle, coin endowments
// as last_coin, the Saez rates from their running average.
__device__ void tax_reset(const TaxEnv& t, int tid, const double* disc_rates,
                          const double* fixed_rates, const double* params, const int* iparams) {
  if (tid < N_AGENTS) {
    t.last_coin[tid] = t.inv[tid * N_GOODS + TAX_COIN] + t.esc[tid * N_GOODS + TAX_COIN];
    t.last_income[tid] = 0.0;
    t.last_marginal_rate[tid] = 0.0;
  }
  if (tid < N_BRACKETS) {
    t.rate_index[tid] = 0;
    if (iparams[TI_TAX_MODEL_CODE] == 2) t.saez_rates[tid] = t.saez_running_avg[tid];
    const double limit = rate_limit(*t.rate_completions, params, iparams);
    t.rates_obs[tid] = current_rates(t, tid, disc_rates, fixed_rates, limit, iparams);
  }
  if (tid == 0) {
    *t.cycle_pos = 1;
    *t.total_collected = 0.0;
    *t.last_lump_sum = 0.0;
  }
}

// The first half of array_tax.tax_step for bracket tid: the planner's pick on a first step
// (k > 0 sets rate k - 1), the rate into s_rates (and rates_obs on a first step).
__device__ void set_rates(const TaxEnv& t, int tid, const int* planner_actions,
                          const double* disc_rates, const double* fixed_rates, double* s_rates,
                          const double* params, const int* iparams) {
  if (tid >= N_BRACKETS) return;
  const bool first = *t.cycle_pos == 1;
  if (first && iparams[TI_PLANNER_SETS_RATES] == 1 && planner_actions[tid] > 0) {
    t.rate_index[tid] = planner_actions[tid] - 1;
  }
  fill_rates(t, tid, disc_rates, fixed_rates, s_rates, params, iparams);
  if (first) t.rates_obs[tid] = s_rates[tid];
}

// tax_brackets.enact_taxes of agent tid on a tax day: income, tax paid (at most its
// inventory coin) into s_paid, marginal rate.
__device__ void enact_taxes(const TaxEnv& t, int tid, const double* cutoffs,
                            const double* s_rates, double* s_paid, const int* iparams) {
  if (tid >= N_AGENTS || *t.cycle_pos < iparams[TI_PERIOD]) return;
  const double inv = t.inv[tid * N_GOODS + TAX_COIN];
  const double income = period_income(inv + t.esc[tid * N_GOODS + TAX_COIN], t.last_coin[tid]);
  s_paid[tid] = fmin(inv, taxes_due(income, cutoffs, s_rates));
  t.last_income[tid] = income;
  t.last_marginal_rate[tid] = marginal_rate(income, cutoffs, s_rates);
}

// Thread 0 on a tax day: the revenue (paid.sum()), its lump sum and the total.
__device__ void collect_revenue(const TaxEnv& t, const double* s_paid, double* s_lump,
                                const int* iparams) {
  if (*t.cycle_pos < iparams[TI_PERIOD]) return;
  const double revenue = numpy_sum(s_paid, N_AGENTS);
  *s_lump = revenue / N_AGENTS;
  *t.total_collected += revenue;
  *t.last_lump_sum = revenue / N_AGENTS;
}

// The rest of enact_taxes (after collect_revenue and a barrier): agent tid pays and receives.
__device__ void redistribute(const TaxEnv& t, int tid, const double* s_paid, double lump,
                             const int* iparams) {
  if (tid >= N_AGENTS || *t.cycle_pos < iparams[TI_PERIOD]) return;
  const double inv = t.inv[tid * N_GOODS + TAX_COIN] - s_paid[tid] + lump;
  t.inv[tid * N_GOODS + TAX_COIN] = inv;
  t.last_coin[tid] = inv + t.esc[tid * N_GOODS + TAX_COIN];
}

// gpu_saez.saez_record of agent tid on a tax day (its sample into the env's ring).
__device__ void saez_record(const TaxEnv& t, int tid, double* buffer, int next,
                            const int* iparams) {
  if (tid >= N_AGENTS || *t.cycle_pos < iparams[TI_PERIOD]) return;
  const int slot = (next + tid) % SAEZ_BUFFER_SIZE;
  buffer[2 * slot] = t.last_income[tid];
  buffer[2 * slot + 1] = t.last_marginal_rate[tid];
}

// Thread 0 at the end of tax_step: the next cycle position; the Saez ring's index and count.
__device__ void advance_cycle(const TaxEnv& t, int* saez_next, int* saez_count,
                              const int* iparams) {
  if (*t.cycle_pos >= iparams[TI_PERIOD]) {
    *t.cycle_pos = 1;
    if (iparams[TI_TAX_MODEL_CODE] == 2) {
      *saez_next = (*saez_next + N_AGENTS) % SAEZ_BUFFER_SIZE;
      *saez_count = min(*saez_count + N_AGENTS, SAEZ_BUFFER_SIZE);
    }
  } else {
    *t.cycle_pos += 1;
  }
}

// Where np.sort puts x[i] among x[:N_AGENTS] (ties by index).
__device__ int tax_sorted_rank(const double* x, int i) {
  int rank = 0;
  for (int j = 0; j < N_AGENTS; j++) rank += (x[j] < x[i] || (x[j] == x[i] && j < i)) ? 1 : 0;
  return rank;
}

// curr_rates, is_first_day, is_tax_day, last_incomes (sorted, / period) at obs; the next index.
__device__ int common_block(const TaxEnv& t, float* obs, int period) {
  const int pos = *t.cycle_pos;
  for (int b = 0; b < N_BRACKETS; b++) obs[b] = (float)t.rates_obs[b];
  int k = N_BRACKETS;
  obs[k] = pos == 1 ? 1.0f : 0.0f;
  obs[k + 1] = pos >= period ? 1.0f : 0.0f;
  k += 2;
  for (int i = 0; i < N_AGENTS; i++) {
    obs[k + tax_sorted_rank(t.last_income, i)] = (float)(t.last_income[i] / period);
  }
  return k + N_AGENTS;
}

__device__ double income_so_far(const TaxEnv& t, int i) {
  return t.inv[i * N_GOODS + TAX_COIN] + t.esc[i * N_GOODS + TAX_COIN] - t.last_coin[i];
}

// Agent tid's block (AGENT_FIELDS) at obs (its row + obs_offset_a).
__device__ void agent_observations(const TaxEnv& t, int tid, float* obs, const double* cutoffs,
                                   const double* s_rates, const int* iparams) {
  const int period = iparams[TI_PERIOD];
  const int k = common_block(t, obs, period);
  obs[k] = (float)marginal_rate(income_so_far(t, tid), cutoffs, s_rates);
  obs[k + 1] = (float)((double)*t.cycle_pos / (double)period);
}

// A planner row (its start): the flat block (PLANNER_FIELDS) at obs_offset_p and every agent's
// p<i> fields (PLANNER_AGENT_FIELDS) at obs_offset_pa + i * obs_stride_pa.
__device__ void planner_observations(const TaxEnv& t, float* row, const double* cutoffs,
                                     const double* s_rates, const int* iparams) {
  const int period = iparams[TI_PERIOD];
  const int k = common_block(t, row + iparams[TI_OBS_OFFSET_P], period);
  row[iparams[TI_OBS_OFFSET_P] + k] = (float)((double)*t.cycle_pos / (double)period);
  for (int i = 0; i < N_AGENTS; i++) {
    float* o = row + iparams[TI_OBS_OFFSET_PA] + i * iparams[TI_OBS_STRIDE_PA];
    o[0] = (float)marginal_rate(income_so_far(t, i), cutoffs, s_rates);
    o[1] = (float)(t.last_income[i] / period);
    o[2] = (float)t.last_marginal_rate[i];
  }
}

// array_tax.planner_masks of one bracket agent's mask row: NO-OP, then the rates allowed on
// a period's first step under the annealed limit (1 for a planner that sets no rates).
__device__ void planner_masks(const TaxEnv& t, float* mask, int completions,
                              const double* disc_rates, const double* params,
                              const int* iparams) {
  mask[0] = 1.0f;
  if (iparams[TI_PLANNER_SETS_RATES] == 0) return;
  const bool first = *t.cycle_pos == 1;
  const int nr = iparams[TI_N_RATES];
  double top = 0.0;
  for (int r = 0; r < nr; r++) top = fmax(top, fabs(disc_rates[r]));
  double limit = top;
  if (iparams[TI_ANNEALING] == 1) {
    limit = annealed_tax_limit(completions, params[TP_ANNEAL_WARMUP], params[TP_ANNEAL_SLOPE], top);
  }
  for (int r = 0; r < nr; r++) mask[1 + r] = first && fabs(disc_rates[r]) <= limit ? 1.0f : 0.0f;
}

#endif  // AI_ECONOMIST_GTB_TAX_CUH_

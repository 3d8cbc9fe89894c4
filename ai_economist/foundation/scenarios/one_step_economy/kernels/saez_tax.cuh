// The Saez tax model on the device: mirrors one_step_economy/gpu_saez.py and
// components/saez.py function for function (shared by the one-step economy and
// gather-trade-build's tax). One environment's formula runs on its block's thread 0 (a
// period's first day only); the scratch arrays live in shared memory (SaezScratch). Needs
// N_BRACKETS, SAEZ_BINS and SAEZ_BUFFER_SIZE.
#pragma once

#define SAEZ_EDGES (SAEZ_BINS + 1)

// gpu_saez.mix32: a 32-bit integer hash (xor-shift-multiply, "lowbias32").
__device__ unsigned int mix32(unsigned int x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  return x ^ (x >> 16);
}

// gpu_saez.uniform_draws: a float in [0, 1) from (seed, env, counter).
__device__ double uniform_draws(int seed, int env, int counter) {
  unsigned int x = mix32((unsigned int)counter ^ 0x9E3779B9u);
  x = mix32(x ^ (unsigned int)env);
  x = mix32(x ^ (unsigned int)seed);
  return (double)(x >> 8) * (1.0 / 16777216.0);
}

// saez.pareto_weights: 1 / max(1, z) ("inverse_income", code 0) or 1 ("uniform").
__device__ double pareto_weights(double z, int pareto_weight_code) {
  return pareto_weight_code == 1 ? 1.0 : 1.0 / fmax(1.0, z);
}

// saez.estimate_uniform_income_elasticity: OLS of log z on log(1 - tau), smoothed.
__device__ void estimate_uniform_income_elasticity(const double* buffer, int count,
                                                   double* elas, double* log_z0) {
  int n = 0;
  double mean_tau = 0.0;
  for (int k = 0; k < count; k++) {
    if (buffer[2 * k] > 0.0 && buffer[2 * k + 1] < 1.0) {
      n++;
      mean_tau += buffer[2 * k + 1];
    }
  }
  if (n < 10) return;
  mean_tau /= n;
  double var = 0.0, sx = 0.0, sxx = 0.0, sy = 0.0, sxy = 0.0;
  for (int k = 0; k < count; k++) {
    const double z = buffer[2 * k], tau = buffer[2 * k + 1];
    if (!(z > 0.0 && tau < 1.0)) continue;
    var += (tau - mean_tau) * (tau - mean_tau);
    const double x = log(fmax(1.0 - tau, 1e-9)), y = log(fmax(z, 1e-9));
    sx += x;
    sxx += x * x;
    sy += y;
    sxy += x * y;
  }
  if (sqrt(var / n) < 1e-6) return;
  const double det = sxx * n - sx * sx;
  const double slope = (n * sxy - sx * sy) / det;
  const double intercept = (sxx * sy - sx * sxy) / det;
  *elas = (1.0 - 0.98) * fmax(slope, 0.0) + 0.98 * *elas;
  *log_z0 = intercept;
}

// np.histogram(incomes, bins=edges): [e_i, e_i+1), the last bin closed; counts outside.
__device__ void histogram(const double* buffer, int count, const double* edges, double* counts,
                          int* n_below, int* n_above, double* weight_above, double* sum_above,
                          int pareto_weight_code) {
  for (int i = 0; i < SAEZ_BINS; i++) counts[i] = 0.0;
  *n_below = 0;
  *n_above = 0;
  *weight_above = 0.0;
  *sum_above = 0.0;
  for (int k = 0; k < count; k++) {
    const double z = buffer[2 * k];
    if (z < edges[0]) {
      (*n_below)++;
    } else if (z > edges[SAEZ_BINS]) {
      (*n_above)++;
      *weight_above += pareto_weights(z, pareto_weight_code);
      *sum_above += z;
    } else {
      int lo = 0, hi = SAEZ_BINS;  // the last edge <= z, at most bin SAEZ_BINS - 1
      while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (edges[mid] <= z) lo = mid; else hi = mid;
      }
      counts[lo] += 1.0;
    }
  }
}

// saez.binned_welfare_weights (gz) and saez.binned_pareto_params (az), bins + the top bin.
__device__ void binned_welfare_weights(const double* counts, int n_below, int n_above,
                                       double weight_above, const double* edges,
                                       int pareto_weight_code, double* gz, double* pz) {
  double total = 0.0, weight = 0.0;
  for (int i = 0; i < SAEZ_BINS; i++) {
    total += counts[i];
    weight += counts[i] * pareto_weights(0.5 * (edges[i] + edges[i + 1]), pareto_weight_code);
  }
  const double n_total = total + n_below + n_above;
  const double norm = weight + (double)n_below + weight_above + 1e-9;
  double density_geq = 0.0, prob_geq = 0.0;
  for (int i = SAEZ_BINS; i >= 0; i--) {  // reversed cumulative sums
    const double w = i == SAEZ_BINS ? weight_above
        : counts[i] * pareto_weights(0.5 * (edges[i] + edges[i + 1]), pareto_weight_code);
    pz[i] = (i == SAEZ_BINS ? (double)n_above : counts[i]) / n_total;
    density_geq += w / norm;
    prob_geq += pz[i];
    gz[i] = density_geq / (prob_geq + 1e-9);
  }
  for (int i = 0; i < SAEZ_BINS; i++) gz[i] = 0.5 * (gz[i] + gz[i + 1]);
}

__device__ void binned_pareto_params(const double* pz, int n_below, double n_total, int n_above,
                                     double sum_above, const double* edges, double* az) {
  double cum = 0.0;
  for (int i = 0; i < SAEZ_BINS; i++) {
    cum += pz[i];
    const double cum_pz = fmin(cum + n_below / n_total, 1.0);
    const double p_geq = fmin(fmax(1.0 - cum_pz + 0.5 * pz[i], 0.0), 1.0);
    const double mid = 0.5 * (edges[i] + edges[i + 1]);
    az[i] = pz[i] == 0.0 ? nan("") : mid * pz[i] / (p_geq + 1e-9) / (edges[i + 1] - edges[i]);
  }
  if (n_above > 0) {
    const double mean_above = sum_above / n_above;
    az[SAEZ_BINS] = mean_above / (mean_above - edges[SAEZ_BINS] + 1e-9);
  } else {
    az[SAEZ_BINS] = 0.0;
  }
}

// saez.saez_marginal_rates: tau = (1 - G) / (1 - G + A e), NaN gaps interpolated.
__device__ void saez_marginal_rates(const double* gz, const double* az, double elas,
                                    double* taus) {
  for (int i = 0; i < SAEZ_EDGES; i++) {
    taus[i] = (1.0 - gz[i]) / (1.0 - gz[i] + az[i] * elas + 1e-9);
  }
  double last_rate = 0.0;
  int last_idx = -1;
  for (int i = 0; i < SAEZ_EDGES; i++) {
    if (isnan(taus[i])) continue;
    const int div = i - last_idx;
    if (div > 1) {  // np.linspace(last_rate, taus[i], div + 1)[1:-1]
      const double delta = taus[i] - last_rate, step = delta / div;
      for (int k = 1; k < div; k++) {
        taus[last_idx + k] = step == 0.0 ? ((double)k / div) * delta + last_rate
                                         : (double)k * step + last_rate;
      }
    }
    last_rate = taus[i];
    last_idx = i;
  }
}

// saez.bracketize_schedule: the binned schedule's tax on each bracket / the bracket size.
__device__ void bracketize_schedule(const double* taus, const double* edges, const double* sizes,
                                    const double* cutoffs, const double* bracket_sizes,
                                    double* rates) {
  double last_total = 0.0;
  for (int b = 0; b + 1 < N_BRACKETS; b++) {
    double total = 0.0;
    for (int i = 0; i < SAEZ_EDGES; i++) {
      total += taus[i] * fmin(sizes[i], fmax(0.0, cutoffs[b + 1] - edges[i]));
    }
    total = total > 0.0 ? total : 0.0;  // Python's max(0.0, nan) is 0.0
    rates[b] = (total - last_total) / bracket_sizes[b];
    last_total = total;
  }
  rates[N_BRACKETS - 1] = taus[SAEZ_BINS];
}

// Scratch of the Saez formula (shared memory of the block).
struct SaezScratch {
  double counts[SAEZ_BINS];
  double gz[SAEZ_EDGES];
  double pz[SAEZ_EDGES];
  double az[SAEZ_EDGES];
  double taus[SAEZ_EDGES];
};

// gpu_saez.saez_first_day (one env, thread 0): this period's rates into rates[]: uniform
// draws until the buffer has filled, then gpu_saez.saez_formula_rates.
__device__ void saez_first_day(int env, const double* buffer, const int* count, int* reached,
                               int* draws, double* elas, double* log_z0, double* rates,
                               double* running_avg, const double* edges, const double* sizes,
                               const double* cutoffs, const double* bracket_sizes,
                               double rate_min, double rate_max, int pareto_weight_code,
                               double fixed_elas, int seed, SaezScratch* s) {
  if (!*reached && *count >= SAEZ_BUFFER_SIZE) *reached = 1;
  if (!*reached) {
    for (int b = 0; b < N_BRACKETS; b++) {
      rates[b] = rate_min + (rate_max - rate_min) * uniform_draws(seed, env, *draws + b);
    }
    *draws += N_BRACKETS;
    return;
  }
  estimate_uniform_income_elasticity(buffer, *count, elas, log_z0);
  const double e = fixed_elas >= 0.0 ? fixed_elas : *elas;
  int n_below, n_above;
  double weight_above, sum_above;
  histogram(buffer, *count, edges, s->counts, &n_below, &n_above, &weight_above, &sum_above,
            pareto_weight_code);
  binned_welfare_weights(s->counts, n_below, n_above, weight_above, edges, pareto_weight_code,
                         s->gz, s->pz);
  binned_pareto_params(s->pz, n_below, (double)(*count), n_above, sum_above, edges, s->az);
  saez_marginal_rates(s->gz, s->az, e, s->taus);
  bracketize_schedule(s->taus, edges, sizes, cutoffs, bracket_sizes, rates);
  for (int b = 0; b < N_BRACKETS; b++) {
    const double r = rates[b];
    rates[b] = r < rate_min ? rate_min : (r > rate_max ? rate_max : r);  // np.clip keeps NaN
    running_avg[b] = 0.99 * running_avg[b] + 0.01 * rates[b];
  }
}

"""The Saez tax model's device functions (Numba): the twins of ``kernels/saez_tax.cuh``.

Named after the numpy functions of ``gpu_saez`` and ``components/saez.py``; one env's formula
runs on its block's thread 0 with shared scratch arrays. Integer hashing stays below 2**63
(``mul32``), so the CUDA simulator's Python integers and the device's int64 agree.
"""

from __future__ import annotations

import math

from numba import cuda, float64, int64

MASK32 = 0xFFFFFFFF


@cuda.jit(device=True)
def mul32(a, b):
    """``a * b mod 2**32`` for ints in ``[0, 2**32)``."""
    return ((a & 0xFFFF) * b + (((a >> 16) * (b & 0xFFFF)) & 0xFFFF) * 65536) & MASK32


@cuda.jit(device=True)
def mix32(x):
    """A 32-bit integer hash (xor-shift-multiply, "lowbias32")."""
    x = x ^ (x >> 16)
    x = mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


@cuda.jit(device=True)
def uniform_draws(seed, env, counter):
    """A float in ``[0, 1)`` from (seed, env, counter)."""
    x = mix32((int64(counter) & MASK32) ^ 0x9E3779B9)
    x = mix32(x ^ (int64(env) & MASK32))
    x = mix32(x ^ (int64(seed) & MASK32))
    return float64(x >> 8) * (1.0 / 16777216.0)


@cuda.jit(device=True)
def pareto_weights(z, pareto_weight_code):
    """``1 / max(1, z)`` (inverse income, code 0) or 1 (uniform)."""
    return 1.0 if pareto_weight_code == 1 else 1.0 / max(1.0, z)


@cuda.jit(device=True)
def estimate_uniform_income_elasticity(buffer, count, elas, log_z0, env):
    """OLS of ``log z`` on ``log(1 - tau)``, smoothed; ``elas[env]``, ``log_z0[env]`` in place."""
    n = 0
    mean_tau = 0.0
    for k in range(count):
        if buffer[k, 0] > 0.0 and buffer[k, 1] < 1.0:
            n += 1
            mean_tau += buffer[k, 1]
    if n < 10:
        return
    mean_tau /= n
    var = 0.0
    sx = 0.0
    sxx = 0.0
    sy = 0.0
    sxy = 0.0
    for k in range(count):
        z = buffer[k, 0]
        tau = buffer[k, 1]
        if not (z > 0.0 and tau < 1.0):
            continue
        var += (tau - mean_tau) * (tau - mean_tau)
        x = math.log(max(1.0 - tau, 1e-9))
        y = math.log(max(z, 1e-9))
        sx += x
        sxx += x * x
        sy += y
        sxy += x * y
    if math.sqrt(var / n) < 1e-6:
        return
    det = sxx * n - sx * sx
    slope = (n * sxy - sx * sy) / det
    elas[env] = (1.0 - 0.98) * max(slope, 0.0) + 0.98 * elas[env]
    log_z0[env] = (sxx * sy - sx * sxy) / det


@cuda.jit(device=True)
def histogram(buffer, count, edges, counts, stats, pareto_weight_code):
    """``np.histogram`` counts; ``stats`` = n_below, n_above, weight above, sum above."""
    nbins = counts.shape[0]
    for i in range(nbins):
        counts[i] = 0.0
    for i in range(4):
        stats[i] = 0.0
    for k in range(count):
        z = buffer[k, 0]
        if z < edges[0]:
            stats[0] += 1.0
        elif z > edges[nbins]:
            stats[1] += 1.0
            stats[2] += pareto_weights(z, pareto_weight_code)
            stats[3] += z
        else:
            lo = 0
            hi = nbins
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if edges[mid] <= z:
                    lo = mid
                else:
                    hi = mid
            counts[lo] += 1.0


@cuda.jit(device=True)
def binned_welfare_weights(counts, stats, edges, pareto_weight_code, gz, pz):
    """``G(z)`` per bin plus the top bin (and ``p(z)``)."""
    nbins = counts.shape[0]
    total = 0.0
    weight = 0.0
    for i in range(nbins):
        total += counts[i]
        weight += counts[i] * pareto_weights(0.5 * (edges[i] + edges[i + 1]), pareto_weight_code)
    n_total = total + stats[0] + stats[1]
    norm = weight + stats[0] + stats[2] + 1e-9
    density_geq = 0.0
    prob_geq = 0.0
    for j in range(nbins + 1):
        i = nbins - j
        if i == nbins:
            w = stats[2]
            pz[i] = stats[1] / n_total
        else:
            w = counts[i] * pareto_weights(0.5 * (edges[i] + edges[i + 1]), pareto_weight_code)
            pz[i] = counts[i] / n_total
        density_geq += w / norm
        prob_geq += pz[i]
        gz[i] = density_geq / (prob_geq + 1e-9)
    for i in range(nbins):
        gz[i] = 0.5 * (gz[i] + gz[i + 1])


@cuda.jit(device=True)
def binned_pareto_params(pz, stats, n_total, edges, az):
    """``A(z)`` per bin (NaN where empty) plus the top bin."""
    nbins = pz.shape[0] - 1
    cum = 0.0
    for i in range(nbins):
        cum += pz[i]
        cum_pz = min(cum + stats[0] / n_total, 1.0)
        p_geq = min(max(1.0 - cum_pz + 0.5 * pz[i], 0.0), 1.0)
        mid = 0.5 * (edges[i] + edges[i + 1])
        az[i] = (
            math.nan if pz[i] == 0.0 else mid * pz[i] / (p_geq + 1e-9) / (edges[i + 1] - edges[i])
        )
    if stats[1] > 0.0:
        mean_above = stats[3] / stats[1]
        az[nbins] = mean_above / (mean_above - edges[nbins] + 1e-9)
    else:
        az[nbins] = 0.0


@cuda.jit(device=True)
def saez_marginal_rates(gz, az, elas, taus):
    """``tau = (1 - G) / (1 - G + A e)``; NaN gaps interpolated as ``np.linspace``."""
    n = gz.shape[0]
    for i in range(n):
        taus[i] = (1.0 - gz[i]) / (1.0 - gz[i] + az[i] * elas + 1e-9)
    last_rate = 0.0
    last_idx = -1
    for i in range(n):
        if math.isnan(taus[i]):
            continue
        div = i - last_idx
        if div > 1:
            delta = taus[i] - last_rate
            step = delta / div
            for k in range(1, div):
                if step == 0.0:
                    taus[last_idx + k] = (float64(k) / div) * delta + last_rate
                else:
                    taus[last_idx + k] = float64(k) * step + last_rate
        last_rate = taus[i]
        last_idx = i


@cuda.jit(device=True)
def bracketize_schedule(taus, edges, sizes, cutoffs, bracket_sizes, rates):
    """The binned schedule's tax on each bracket / the bracket size; the top bin's rate."""
    nb = cutoffs.shape[0]
    last_total = 0.0
    for b in range(nb - 1):
        total = 0.0
        for i in range(taus.shape[0]):
            total += taus[i] * min(sizes[i], max(0.0, cutoffs[b + 1] - edges[i]))
        total = total if total > 0.0 else 0.0  # Python's max(0.0, nan) is 0.0
        rates[b] = (total - last_total) / bracket_sizes[b]
        last_total = total
    rates[nb - 1] = taus[taus.shape[0] - 1]


@cuda.jit(device=True)
def saez_first_day(env, buffer, count, reached, draws, elas, log_z0, rates, running_avg, edges,
                   sizes, cutoffs, bracket_sizes, rate_min, rate_max, pareto_weight_code,
                   fixed_elas, seed, counts, stats, gz, pz, az, taus):  # fmt: skip
    """One env's rates for this period (thread 0): draws until its buffer has filled, then
    the Saez formula over the buffer (``gpu_saez.saez_first_day``)."""
    nb = cutoffs.shape[0]
    if reached[env] == 0 and count[env] >= buffer.shape[1]:
        reached[env] = 1
    if reached[env] == 0:
        for b in range(nb):
            u = uniform_draws(seed, env, draws[env] + b)
            rates[env, b] = rate_min + (rate_max - rate_min) * u
        draws[env] += nb
        return
    n = count[env]
    estimate_uniform_income_elasticity(buffer[env], n, elas, log_z0, env)
    e = fixed_elas if fixed_elas >= 0.0 else elas[env]
    histogram(buffer[env], n, edges, counts, stats, pareto_weight_code)
    binned_welfare_weights(counts, stats, edges, pareto_weight_code, gz, pz)
    binned_pareto_params(pz, stats, float64(n), edges, az)
    saez_marginal_rates(gz, az, e, taus)
    bracketize_schedule(taus, edges, sizes, cutoffs, bracket_sizes, rates[env])
    for b in range(nb):
        r = rates[env, b]
        rates[env, b] = rate_min if r < rate_min else (rate_max if r > rate_max else r)
        running_avg[env, b] = 0.99 * running_avg[env, b] + 0.01 * rates[env, b]

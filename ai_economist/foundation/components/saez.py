"""The Saez optimal-income-tax formula, adapted to periodic, bracketed taxes (plain numpy).

Saez (2001), https://www.nber.org/papers/w7628: the optimal marginal rate at income ``z`` is

    tau(z) = (1 - G(z)) / (1 - G(z) + A(z) * e)

with ``G(z)`` the average Pareto (welfare) weight of earners at or above ``z``, ``A(z)`` the
local Pareto parameter of the income distribution and ``e`` the income elasticity. Incomes
are binned on ``[0, top cutoff]``; the open top bin uses ``A = mean / (mean - cutoff)``.
The binned rates are then averaged over each tax bracket (:func:`bracketize_schedule`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.components.tax_brackets import PARETO_WEIGHT_TYPES, check_choice


def estimate_uniform_income_elasticity(
    observed_incomes_and_marginal_rates: Any,
    elas_df: float = 0.98,
    elas_tm1: float = 0.5,
    log_z0_tm1: float = 0.5,
) -> tuple[float, float]:
    """Smoothed OLS estimate of the income elasticity from ``[income, marginal rate]`` rows.

    Regresses ``log z`` on ``log(1 - tau)`` (with a bias) over rows with ``z > 0`` and
    ``tau < 1``. Returns ``(elas_t, log_z0)`` with ``elas_t = (1 - elas_df) * max(0, slope)
    + elas_df * elas_tm1``; with fewer than 10 usable rows or ``std(tau) < 1e-6`` the previous
    ``(elas_tm1, log_z0_tm1)`` is returned unchanged.
    """
    rows = np.asarray(observed_incomes_and_marginal_rates, dtype=np.float64).reshape(-1, 2)
    keep = (rows[:, 0] > 0) & (rows[:, 1] < 1)
    zs, taus = rows[keep, 0], rows[keep, 1]
    if zs.size < 10 or np.std(taus) < 1e-6:
        return float(elas_tm1), float(log_z0_tm1)
    x = np.log(np.maximum(1 - taus, 1e-9))
    design = np.stack([x, np.ones_like(x)], axis=1)
    target = np.log(np.maximum(zs, 1e-9))
    elas, log_z0 = np.linalg.solve(design.T @ design, design.T @ target)
    elas_t = (1 - elas_df) * max(float(elas), 0.0) + elas_df * elas_tm1
    return float(elas_t), float(log_z0)


def pareto_weights(incomes: np.ndarray, pareto_weight_type: str) -> np.ndarray:
    """Welfare weight per income: ``1 / max(1, z)`` ("inverse_income") or 1 ("uniform")."""
    kind = check_choice("pareto_weight_type", pareto_weight_type, PARETO_WEIGHT_TYPES)
    if kind == "uniform":
        return np.ones_like(incomes)
    return 1.0 / np.maximum(1.0, incomes)


def _bin_probabilities(
    counts: np.ndarray, n_below: int, n_above: int
) -> tuple[np.ndarray, np.ndarray]:
    """``p(z' in bin)`` for every bin plus the open top bin, and ``P(z' <= bin)`` (clipped)."""
    n_total = counts.sum() + n_below + n_above
    pz = np.concatenate([counts, [n_above]]) / n_total
    cum_pz = np.minimum(np.cumsum(pz) + n_below / n_total, 1.0)
    return pz, cum_pz


def binned_welfare_weights(
    incomes: np.ndarray, bin_edges: np.ndarray, pareto_weight_type: str
) -> np.ndarray:
    """``G(z)`` per income bin plus the top bin (length ``n_bins + 1``).

    G = Pareto weight of earners at or above the bin / their share, each bin's weight taken
    at its midpoint; the per-bin values are averaged between adjacent edges.
    """
    counts, _ = np.histogram(incomes, bins=bin_edges)
    below = incomes[incomes < bin_edges[0]]
    above = incomes[incomes > bin_edges[-1]]
    weight_below = pareto_weights(np.maximum(below, 0), pareto_weight_type).sum()
    weight_above = pareto_weights(above, pareto_weight_type).sum()
    mids = 0.5 * (bin_edges[:-1] + bin_edges[1:])
    weight_per_bin = counts * pareto_weights(mids, pareto_weight_type)
    norm = weight_per_bin.sum() + weight_below + weight_above + 1e-9
    density = np.concatenate([weight_per_bin, [weight_above]]) / norm
    density_geq_z = np.cumsum(density[::-1])[::-1]
    pz, _ = _bin_probabilities(counts, below.size, above.size)
    prob_geq_z = np.cumsum(pz[::-1])[::-1]
    gz = density_geq_z / (prob_geq_z + 1e-9)
    return np.concatenate([0.5 * (gz[:-1] + gz[1:]), [gz[-1]]])


def binned_pareto_params(incomes: np.ndarray, bin_edges: np.ndarray) -> np.ndarray:
    """``A(z)`` per income bin plus the top bin (NaN where a bin holds no income).

    ``A = z p(z) / P(z' >= z) / bin width`` at the bin midpoint, with
    ``P(z' >= z) = 1 - P(z' <= z) + p(z) / 2``; the top bin uses ``mean / (mean - cutoff)``.
    """
    counts, _ = np.histogram(incomes, bins=bin_edges)
    below = incomes[incomes < bin_edges[0]]
    above = incomes[incomes > bin_edges[-1]]
    pz, cum_pz = _bin_probabilities(counts, below.size, above.size)
    p_geq_z = np.clip(1 - cum_pz + 0.5 * pz, 0, 1)
    mids = 0.5 * (bin_edges[:-1] + bin_edges[1:])
    widths = bin_edges[1:] - bin_edges[:-1]
    n_bins = counts.size
    with np.errstate(divide="ignore", invalid="ignore"):
        az = mids * pz[:n_bins] / (p_geq_z[:n_bins] + 1e-9) / widths
    az = np.where(pz[:n_bins] == 0, np.nan, az)
    if above.size:
        mean_above = above.mean()
        az_top = mean_above / (mean_above - bin_edges[-1] + 1e-9)
    else:
        az_top = 0.0
    return np.concatenate([az, [az_top]])


def saez_marginal_rates(
    binned_gz: np.ndarray, binned_az: np.ndarray, elas: float, interpolate: bool = True
) -> np.ndarray:
    """``tau = (1 - G) / (1 - G + A e + 1e-9)`` per bin; NaN gaps linearly interpolated.

    A gap is filled on a straight line from the last real rate (0 before the first) to the
    next real rate; trailing NaNs stay NaN.
    """
    taus = (1.0 - binned_gz) / (1.0 - binned_gz + binned_az * elas + 1e-9)
    if not interpolate:
        return taus
    taus = np.array(taus, dtype=np.float64)
    last_rate, last_idx = 0.0, -1
    for i in np.flatnonzero(~np.isnan(taus)):
        if i - last_idx > 1:
            taus[last_idx + 1 : i] = np.linspace(last_rate, taus[i], i - last_idx + 1)[1:-1]
        last_rate, last_idx = float(taus[i]), int(i)
    return taus


def bracketize_schedule(
    bin_marginal_rates: np.ndarray,
    bin_edges: np.ndarray,
    bin_sizes: np.ndarray,
    bracket_cutoffs: np.ndarray,
    bracket_sizes: np.ndarray,
) -> np.ndarray:
    """Average binned marginal rates over each tax bracket.

    For each bracket the tax the binned schedule collects on the bracket's income, divided
    by the bracket size; the open top bracket takes the top bin's rate.
    """
    rates = []
    last_total = 0.0
    for b, income in enumerate(bracket_cutoffs[1:]):
        bin_income = np.minimum(bin_sizes, np.maximum(0, income - bin_edges))
        total = max(0.0, float(np.sum(bin_marginal_rates * bin_income)))
        rates.append((total - last_total) / bracket_sizes[b])
        last_total = total
    rates.append(bin_marginal_rates[-1])
    return np.array(rates, dtype=np.float64)

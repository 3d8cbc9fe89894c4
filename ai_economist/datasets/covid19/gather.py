"""The processing steps of the original ``gather_real_world_data.ipynb``, as pure functions.

No network: the readers in :mod:`~ai_economist.datasets.covid19.gather_sources` read local
CSV files in the public sources' layouts; these functions turn the series into the arrays of
``real_world_data.npz`` (rows = days, columns = states):

* :func:`discretize_stringency`: the OxCGRT StringencyIndex (0..100) to levels 1..10;
* :func:`gaussian_smooth`: cumulative deaths smoothed with a Gaussian of std 10 days (taps
  over +-3 std, NaN bookends, normalised convolution);
* :func:`infer_sir`: R, I, S and beta from smoothed deaths and vaccinations;
* :func:`monthly_to_daily`: monthly unemployment rates to a daily series.
"""

from __future__ import annotations

from datetime import date

import numpy as np

SIR_MORTALITY = 0.02
SIR_GAMMA = 1.0 / 14.0
SIR_SMOOTHING_STD = 10
NDD_CUTOFF = 1e-8  # normalised daily deaths below this make beta unknown


def forward_fill(values: np.ndarray) -> np.ndarray:
    """NaN entries take the last earlier finite value along axis 0 (leading NaN stay NaN)."""
    values = np.asarray(values, dtype=np.float64)
    rows = np.arange(len(values)).reshape(-1, *([1] * (values.ndim - 1)))
    last = np.maximum.accumulate(np.where(np.isfinite(values), rows, 0), axis=0)  # (days, ...)
    return np.take_along_axis(values, last, axis=0)


def discretize_stringency(index: np.ndarray, num_levels: int = 10) -> np.ndarray:
    """Levels 1..num_levels: the nearer of the two edges of linspace(0, 100, num_levels)
    around each value (a tie goes to the lower level), as the original's ``discretize``."""
    index = np.asarray(index, dtype=np.float64)
    if not np.all(np.isfinite(index)):
        raise ValueError("discretize_stringency: the index has NaN values; forward_fill it first")
    if index.min() < 0 or index.max() > 100:
        raise ValueError(
            f"discretize_stringency: the index must be in [0, 100], got {index.min()}..{index.max()}"
        )
    edges = np.linspace(0.0, 100.0, num_levels)
    upper = np.digitize(index, edges, right=True)  # edges[upper-1] < x <= edges[upper]
    left = edges[np.maximum(upper - 1, 0)]
    right = edges[upper]
    nearer_right = np.abs(index - right) < np.abs(index - left)
    return np.where(upper == 0, 1, upper + nearer_right).astype(np.int64)


def gaussian_kernel(std: int) -> np.ndarray:
    """Normal pdf of std ``std`` at the integers -3 std .. 3 std."""
    taps = np.linspace(-3 * std, 3 * std, 1 + 6 * std)
    return np.exp(-0.5 * (taps / std) ** 2) / (std * np.sqrt(2 * np.pi))


def gaussian_smooth(series: np.ndarray, std: int = SIR_SMOOTHING_STD) -> np.ndarray:
    """Smooth each column of a (days, states) series; days within 3 std of a NaN (or of
    either end) become NaN."""
    series = np.asarray(series, dtype=np.float64)
    if std <= 0:
        return series.copy()
    kernel = gaussian_kernel(std)
    out = np.empty_like(series)
    for i in range(series.shape[1]):
        padded = np.concatenate([[np.nan], series[:, i], [np.nan]])
        total = np.convolve(padded, kernel, mode="same")
        weight = np.convolve(np.ones_like(padded), kernel, mode="same")
        out[:, i] = (total / weight)[1:-1]
    return out


def infer_sir(
    smoothed_deaths: np.ndarray,
    vaccinated: np.ndarray,
    population: np.ndarray,
    mortality: float = SIR_MORTALITY,
    gamma: float = SIR_GAMMA,
    smoothing_std: int = SIR_SMOOTHING_STD,
) -> dict[str, np.ndarray]:
    """Susceptible, infected, recovered (people) and beta from deaths and vaccinations.

    In population shares: R = D/mortality + V; I_t = ((R_t+1 - R_t) - (V_t+1 - V_t))/gamma;
    S = 1 - I - R; new infections = I_t+1 - I_t + gamma I_t; beta_t = new/(I_t S_t + 1e-6)
    clipped to [0, 1], and NaN where the daily deaths 3 std days earlier are <= 1e-8 (and on
    the last day).
    """
    population = np.asarray(population, dtype=np.float64)
    dead = np.asarray(smoothed_deaths, dtype=np.float64) / population
    vacc = np.asarray(vaccinated, dtype=np.float64) / population
    recovered = dead / mortality + vacc
    infected = np.full_like(dead, np.nan)
    infected[:-1] = (np.diff(recovered, axis=0) - np.diff(vacc, axis=0)) / gamma
    susceptible = 1.0 - infected - recovered
    new_infections = np.diff(infected, axis=0) + gamma * infected[:-1]
    with np.errstate(invalid="ignore"):
        beta_now = np.clip(new_infections / (infected[:-1] * susceptible[:-1] + 1e-6), 0.0, 1.0)
    lookback = 3 * smoothing_std
    daily_deaths = np.diff(dead, axis=0)
    earlier = np.zeros_like(new_infections)
    earlier[lookback:] = daily_deaths[:-lookback]
    with np.errstate(invalid="ignore"):
        beta_now[~(earlier > NDD_CUTOFF)] = np.nan
    beta = np.full_like(dead, np.nan)
    beta[:-1] = beta_now
    return {
        "susceptible": susceptible * population,
        "infected": infected * population,
        "recovered": recovered * population,
        "beta": beta,
    }


def monthly_to_daily(monthly: dict[tuple[int, int], float], days: list[date]) -> np.ndarray:
    """The rate of each day's month (NaN for a month without a value)."""
    return np.array([monthly.get((d.year, d.month), np.nan) for d in days], dtype=np.float64)

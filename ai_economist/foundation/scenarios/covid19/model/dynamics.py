"""COVID-19 & economy dynamics as plain numpy functions: the one model every backend mirrors.

Every function works on arrays whose last axis is the agent (US state) axis and accepts any
leading batch dimensions, so the same code steps one environment (shape ``(51,)``) or a batch
(shape ``(num_envs, 51)``).  The CUDA C kernels (``covid19_env_step.cu``,
``covid19_components_step.cu``) and the Numba kernels (``covid19_numba.py``) implement these
functions one for one, under the same names; ``tests/foundation/scenarios/covid19`` holds
them together.

Notation: t is the step (day) being computed, A the number of US states, K the number of
unemployment filters.
"""

from __future__ import annotations

import numpy as np

EPSILON = 1e-10
SOFTPLUS_THRESHOLD = 20.0


_FLOAT64 = np.dtype(np.float64)


def _f64(value: float) -> np.ndarray:
    """A read-only 0-d float64 array: as a numpy operand it costs less than a Python number
    and, with float64 arrays, gives the same results."""
    constant = np.array(value, dtype=np.float64)
    constant.flags.writeable = False
    return constant


# Literals as 0-d float64 arrays, used where every result they enter is float64.
_EPSILON64, _ZERO64, _ONE64, _HUNDRED64 = _f64(EPSILON), _f64(0.0), _f64(1.0), _f64(100.0)
_THRESHOLD64, _LOW64, _HIGH64, _DAYS64 = _f64(SOFTPLUS_THRESHOLD), _f64(0.1), _f64(3.0), _f64(365)


def _ndim(x) -> int:
    """``np.ndim(x)``, without its overhead for arrays and Python/numpy scalars."""
    if isinstance(x, np.ndarray):
        return x.ndim
    if isinstance(x, (int, float, np.generic)):
        return 0
    return np.ndim(x)


# --------------------------------------------------------------------------------------
# Components
# --------------------------------------------------------------------------------------
def open_close_step(
    actions: np.ndarray,
    previous_level: np.ndarray,
    cooldown_until: np.ndarray,
    timestep: int | np.ndarray,
    action_cooldown_period: int,
    num_stringency_levels: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Apply the states' open/close actions (``ControlUSStateOpenCloseStatus``).

    Action 0 is NO-OP (keep the previous level); action j in 1..num_levels sets level j.
    On the step right after a cooldown ends (``t == cooldown_until + 1``) a non-zero action
    starts a new cooldown of ``action_cooldown_period`` days and a NO-OP extends it by one day.

    Returns:
        (stringency_level, cooldown_until), each shaped like ``actions``.
    """
    actions = np.asarray(actions)
    valid = (actions >= 1) & (actions <= num_stringency_levels)
    level = np.where(valid, actions, previous_level)
    timestep = np.asarray(timestep)[..., None] if _ndim(timestep) else timestep
    at_decision = timestep == cooldown_until + 1
    extension = np.where(actions > 0, action_cooldown_period, 1)
    return level, np.where(at_decision, cooldown_until + extension, cooldown_until)


def open_close_action_mask(timestep: int | np.ndarray, cooldown_until: np.ndarray) -> np.ndarray:
    """1 where a state may change its stringency level (its cooldown is over), else 0."""
    timestep = np.asarray(timestep)[..., None] if _ndim(timestep) else timestep
    return (timestep >= cooldown_until).astype(np.float32)


def subsidy_step(
    planner_action: np.ndarray | int,
    previous_level: np.ndarray | int,
    timestep: int | np.ndarray,
    subsidy_interval: int,
) -> np.ndarray:
    """The planner's subsidy level (``FederalGovernmentSubsidy``).

    A decision is read only on the first day of each subsidy interval
    (``(t - 1) % interval == 0``); the action *is* the level, so NO-OP means level 0.
    """
    decide = (np.asarray(timestep) - 1) % subsidy_interval == 0
    return np.where(decide, planner_action, previous_level)


def subsidy_amounts(
    subsidy_level: np.ndarray | int,
    num_subsidy_levels: int,
    max_daily_subsidy_per_state: np.ndarray,
) -> np.ndarray:
    """Daily subsidy paid to each state ($): level / num_levels * max daily subsidy of the state."""
    level = np.asarray(subsidy_level, dtype=np.float64)
    if level.ndim:
        level = level[..., None]
    return level / num_subsidy_levels * max_daily_subsidy_per_state


def subsidy_action_mask(timestep: int | np.ndarray, subsidy_interval: int) -> np.ndarray:
    """1 for every subsidy level when the next step reads a decision (``t % interval == 0``)."""
    return (np.asarray(timestep) % subsidy_interval == 0).astype(np.float32)


def vaccination_step(
    timestep: int | np.ndarray,
    first_delivery_step: int,
    delivery_interval: int,
    num_vaccines_per_delivery: np.ndarray,
) -> np.ndarray:
    """Vaccines delivered to each state on step t (``VaccinationCampaign``)."""
    t = np.asarray(timestep)
    deliver = (t >= first_delivery_step) & (t % delivery_interval == 0)
    if deliver.ndim:
        deliver = deliver[..., None]
    return np.where(deliver, num_vaccines_per_delivery, 0.0)


def time_until_next_vaccines(
    timestep: int | np.ndarray, first_delivery_step: int, delivery_interval: int
) -> np.ndarray:
    """The ``t_until_next_vaccines`` observation, as the original computes it on the CPU."""
    t = np.asarray(timestep, dtype=np.float64)
    before = (
        np.minimum(1.0, (first_delivery_step - (t + 1)) / delivery_interval) / delivery_interval
    )
    after = (delivery_interval - (t + 1) % delivery_interval) / delivery_interval
    return np.where(t < first_delivery_step, before, after)


# --------------------------------------------------------------------------------------
# Scenario: SIR, unemployment, economy
# --------------------------------------------------------------------------------------
def sir_step(
    susceptible: np.ndarray,
    infected: np.ndarray,
    recovered: np.ndarray,
    vaccinated: np.ndarray,
    vaccines_available: np.ndarray,
    lagged_stringency_level: np.ndarray,
    beta_intercepts: np.ndarray,
    beta_slopes: np.ndarray,
    beta_intercept_modulation: float | np.ndarray,
    beta_slope_modulation: float | np.ndarray,
    population: np.ndarray,
    gamma: float,
    death_rate: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One day of the SIR model with vaccination.

    beta = m_i * intercept + m_s * slope * stringency_{t - delay}; vaccines move people from
    S to R (at most S of them) and shield the vaccinated fraction from infection;
    deaths = death_rate * (R - V).

    Returns:
        (susceptible, infected, recovered, vaccinated, deaths, beta).
    """
    beta = (
        beta_intercept_modulation * beta_intercepts
        + beta_slope_modulation * beta_slopes * lagged_stringency_level
    )
    eps, one, zero = EPSILON, 1.0, 0.0
    if type(susceptible) is np.ndarray and susceptible.dtype is _FLOAT64:
        eps, one, zero = _EPSILON64, _ONE64, _ZERO64  # S enters every result below
    vaccinated_fraction = np.minimum(one, vaccines_available / (susceptible + eps))
    num_vaccinated = np.minimum(vaccines_available, susceptible)
    # dS = -beta * S / N * I * (1 - f) - V, computed as its negation (negating is exact, so
    # S + dS == S - leaving and dI = -dS - dR == leaving - dR, bit for bit).
    leaving_susceptible = (
        beta * susceptible / population * infected * (one - vaccinated_fraction) + num_vaccinated
    )
    d_recovered = gamma * infected + num_vaccinated
    new_s = np.maximum(susceptible - leaving_susceptible, zero)
    new_i = np.maximum(infected + (leaving_susceptible - d_recovered), zero)
    new_r = np.maximum(recovered + d_recovered, zero)
    new_v = np.maximum(vaccinated + num_vaccinated, zero)
    deaths = death_rate * (new_r - new_v)
    return new_s, new_i, new_r, new_v, deaths, beta


def softplus(x: np.ndarray, threshold: float = SOFTPLUS_THRESHOLD) -> np.ndarray:
    """log(1 + exp(x)), linear above ``threshold`` (as torch's softplus with beta=1)."""
    x = np.asarray(x, dtype=np.float64)
    if type(threshold) is float and threshold == SOFTPLUS_THRESHOLD:
        threshold = _THRESHOLD64
    return np.where(x > threshold, x, np.log1p(np.exp(np.minimum(x, threshold))))


def unemployment_filter_update(
    filter_state: np.ndarray,
    new_delta: np.ndarray,
    dropped_delta: np.ndarray,
    filter_decay: np.ndarray,
    window_decay: np.ndarray,
) -> np.ndarray:
    """Advance the exponential unemployment filters by one day, recursively.

    ``filter_state[..., a, k]`` = sum over the last ``filter_len`` daily stringency changes
    d_tau of d_tau * exp(-age_tau / lambda_k).  Appending today's change and dropping the one
    that leaves the window gives exactly the original 600-day convolution with O(K) work:
    F' = F * exp(-1/lambda) + d_new - exp(-filter_len/lambda) * d_dropped.
    """
    return (
        filter_state * filter_decay + new_delta[..., None] - window_decay * dropped_delta[..., None]
    )


def unemployment_step(
    filter_state: np.ndarray,
    filter_weights: np.ndarray,
    unemployment_bias: np.ndarray,
    unemployment_modulation: float | np.ndarray,
    population: np.ndarray,
) -> np.ndarray:
    """Unemployed people per state: (softplus(sum_k w_k * F_k * modulation) + bias)% of N."""
    signal = _sum_last_axis(filter_state * filter_weights) * unemployment_modulation
    rate_percent = softplus(signal) + unemployment_bias
    hundred = _HUNDRED64 if rate_percent.dtype is _FLOAT64 else 100.0
    return rate_percent * population / hundred


def _sum_last_axis(x: np.ndarray) -> np.ndarray:
    """``x.sum(axis=-1)``.  numpy adds fewer than 8 terms one after the other (checked at
    import); for large arrays with such a short last axis its reduction is slow, and adding
    the columns gives the same sum several times faster."""
    k = x.shape[-1] if isinstance(x, np.ndarray) and x.ndim else 0
    if not 1 < k < 8 or x.size < _SEQUENTIAL_SUM_MIN_SIZE:
        return x.sum(axis=-1)
    total = x[..., 0] + x[..., 1]
    for i in range(2, k):
        total += x[..., i]
    return total


def _numpy_sums_short_axes_in_order() -> bool:
    rng = np.random.default_rng(0)
    for k in range(2, 8):
        x = rng.standard_normal((64, k)) * 10.0 ** rng.integers(-8, 9, (64, k))
        total = x[:, 0] + x[:, 1]
        for i in range(2, k):
            total += x[:, i]
        if not np.array_equal(x.sum(axis=-1), total):
            return False
    return True


# Column sums only where they are exactly numpy's sums, and only for large arrays (for one
# env's (51, 5) filters the reduction's fixed cost is lower).
_SEQUENTIAL_SUM_MIN_SIZE = 2048 if _numpy_sums_short_axes_in_order() else np.inf


def economy_step(
    population: np.ndarray,
    infected: np.ndarray,
    deaths: np.ndarray,
    unemployed: np.ndarray,
    infection_too_sick_to_work_rate: float,
    population_between_age_18_65: float,
    daily_production_per_worker: float,
) -> np.ndarray:
    """Daily production of each state ($) from the people who can work."""
    incapacitated = infection_too_sick_to_work_rate * infected + deaths
    cant_work = incapacitated * population_between_age_18_65 + unemployed
    workers = population * population_between_age_18_65 - cant_work
    zero = _ZERO64 if type(workers) is np.ndarray and workers.dtype is _FLOAT64 else 0.0
    can_work = np.maximum(zero, workers)
    return can_work * daily_production_per_worker


# --------------------------------------------------------------------------------------
# Rewards
# --------------------------------------------------------------------------------------
def crra_nonlinearity(x: np.ndarray, eta: float, num_days_in_an_year: int = 365) -> np.ndarray:
    """Annualised CRRA utility of a daily economic index (clipped to [0.1, 3] times a year).

    For eta == 1 the limit log(.) is used (the original divided by zero).  A scalar ``x``
    gives the same value as the same ``x`` in an array: the power is always an ndarray power
    (for eta == 2 numpy computes ``a ** -1.0`` as ``1 / a``, the scalar power may differ).
    """
    x = np.asarray(x, dtype=np.float64)
    # Everything is float64, so 0-d float64 constants give the same values as Python numbers
    # and are cheaper numpy operands; after the power a scalar x has become a numpy scalar,
    # for which Python numbers are the cheap operands.
    days = num_days_in_an_year
    if type(days) is int and days == 365:
        days = _DAYS64
    annual = np.minimum(np.maximum(x * days, _LOW64), _HIGH64)
    one = _ONE64
    if not x.ndim:
        days, one = num_days_in_an_year, 1.0
    if eta == 1:
        utility = np.log(annual)
    else:
        utility = (np.asarray(annual) ** (1.0 - eta) - one) / (1.0 - eta)
    return (one + utility) / days


def min_max_normalization(x: np.ndarray, min_x: np.ndarray, max_x: np.ndarray) -> np.ndarray:
    """(x - min) / (max - min + 1e-10)."""
    span = max_x - min_x
    eps = _EPSILON64 if type(span) is np.ndarray and span.dtype is _FLOAT64 else EPSILON
    return (x - min_x) / (span + eps)


def get_rew(
    health_index: np.ndarray, economic_index: np.ndarray, weightage_on_health: np.ndarray
) -> np.ndarray:
    """Weighted average of the two normalised indices."""
    one = 1.0
    if type(weightage_on_health) is np.ndarray and weightage_on_health.dtype is _FLOAT64:
        one = _ONE64
    weightage_on_economy = one - weightage_on_health
    return (weightage_on_health * health_index + weightage_on_economy * economic_index) / (
        weightage_on_health + weightage_on_economy
    )


def agent_indices(
    new_deaths: np.ndarray,
    postsubsidy_productivity: np.ndarray,
    value_of_life: float,
    health_norm: np.ndarray,
    economic_norm: np.ndarray,
    eta: float,
    min_health: np.ndarray,
    max_health: np.ndarray,
    min_economic: np.ndarray,
    max_economic: np.ndarray,
    num_days_in_an_year: int = 365,
) -> tuple[np.ndarray, np.ndarray]:
    """Normalised marginal health and economic indices of each state for one day."""
    health = -new_deaths * value_of_life / health_norm
    economic = crra_nonlinearity(postsubsidy_productivity / economic_norm, eta, num_days_in_an_year)
    return (
        min_max_normalization(health, min_health, max_health),
        min_max_normalization(economic, min_economic, max_economic),
    )


def planner_indices(
    new_deaths: np.ndarray,
    postsubsidy_productivity: np.ndarray,
    subsidy: np.ndarray,
    value_of_life: float,
    risk_free_interest_rate: float,
    health_norm: float,
    economic_norm: float,
    eta: float,
    min_health: float,
    max_health: float,
    min_economic: float,
    max_economic: float,
    num_days_in_an_year: int = 365,
) -> tuple[np.ndarray, np.ndarray]:
    """Normalised marginal health and economic indices of the federal planner for one day.

    The planner pays for the subsidies with interest: its economic input is
    sum(postsubsidy productivity) - (1 + r) * sum(subsidy).
    """
    total = np.add.reduce  # sum over the states (the sum method without its Python wrapper)
    health = -total(new_deaths, axis=-1) * value_of_life / health_norm
    net_output = total(postsubsidy_productivity, axis=-1) - (1.0 + risk_free_interest_rate) * total(
        subsidy, axis=-1
    )
    economic = crra_nonlinearity(net_output / economic_norm, eta, num_days_in_an_year)
    return (
        min_max_normalization(health, min_health, max_health),
        min_max_normalization(economic, min_economic, max_economic),
    )


def scale_health_priority(weightage_on_health: np.ndarray, priority_scaling: float) -> np.ndarray:
    """alpha' = m z / (1 + m z) with z = alpha / (1 - alpha): rescale the odds of health vs economy."""
    odds = np.asarray(weightage_on_health, dtype=np.float64)
    odds = odds / (1.0 - odds)
    return priority_scaling * odds / (1.0 + priority_scaling * odds)

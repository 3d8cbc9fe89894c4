"""Constants of the three COVID-19 components as the batched simulator takes them.

``component_params_from_config`` derives them from the component arguments exactly as the
Foundation components do (``scenarios/covid19/components/covid19_components.py``);
``real_world_subsidy_levels`` gives the real-world-policy mode's subsidy level per step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ai_economist.foundation.scenarios.covid19.model.params import CovidParams


@dataclass
class ComponentParams:
    """Constants of the three COVID-19 components (see ``covid19_components.py``)."""

    action_cooldown_period: int = 28
    num_subsidy_levels: int = 20
    subsidy_interval: int = 90
    max_daily_subsidy_per_state: np.ndarray | None = None  # (A,) $
    first_delivery_step: int = 0
    delivery_interval: int = 1
    num_vaccines_per_delivery: np.ndarray | None = None  # (A,)
    daily_vaccines_per_million_people: float = 4500.0
    observe_rate: bool = False


_DEFAULTS = ComponentParams()
"""The components' defaults (those that :class:`ComponentParams` holds as given)."""


def component_params_from_config(
    params: CovidParams,
    *,
    action_cooldown_period: int = _DEFAULTS.action_cooldown_period,
    num_subsidy_levels: int = _DEFAULTS.num_subsidy_levels,
    subsidy_interval: int = _DEFAULTS.subsidy_interval,
    max_annual_subsidy_per_person: float = 20000.0,
    daily_vaccines_per_million_people: float = _DEFAULTS.daily_vaccines_per_million_people,
    delivery_interval: int = _DEFAULTS.delivery_interval,
    vaccine_delivery_start_date: str = "2020-12-22",
    observe_rate: bool = _DEFAULTS.observe_rate,
) -> ComponentParams:
    """Derive the component constants the same way the Foundation components do (the
    defaults they share with :class:`ComponentParams` are its defaults)."""
    from ai_economist.foundation.scenarios.covid19.model.params import parse_date

    start = parse_date(vaccine_delivery_start_date, "%Y-%m-%d", "vaccine_delivery_start_date")
    return ComponentParams(
        action_cooldown_period=action_cooldown_period,
        num_subsidy_levels=num_subsidy_levels,
        subsidy_interval=subsidy_interval,
        max_daily_subsidy_per_state=params.population * max_annual_subsidy_per_person / 365.0,
        first_delivery_step=(start - params.start_date).days,
        delivery_interval=delivery_interval,
        num_vaccines_per_delivery=np.floor(
            delivery_interval * params.population / 1e6 * daily_vaccines_per_million_people
        ),
        daily_vaccines_per_million_people=daily_vaccines_per_million_people,
        observe_rate=observe_rate,
    )


def real_world_subsidy_levels(
    params: CovidParams,
    num_subsidy_levels: int,
    subsidy_interval: int,
    max_annual_subsidy_per_person: float,
) -> np.ndarray:
    """Subsidy level of every step 0..episode_length in real-world-policy mode.

    Each real payment becomes round(amount / amount_per_level) levels, applied with the
    original's one-day lag and spread over the next ``subsidy_interval`` days; overlapping
    payments add up.
    """
    amount_per_level = (
        params.us_population
        * max_annual_subsidy_per_person
        / num_subsidy_levels
        * subsidy_interval
        / 365.0
    )
    levels = np.zeros(params.episode_length + 1, dtype=np.int64)
    for row in np.nonzero(params.real_subsidy)[0]:
        first_step = row - params.start_date_index + 1
        lo, hi = max(first_step, 1), min(first_step + subsidy_interval, params.episode_length + 1)
        if lo < hi:
            levels[lo:hi] += int(np.round(params.real_subsidy[row] / amount_per_level))
    return levels

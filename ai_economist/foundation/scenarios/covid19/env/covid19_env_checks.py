"""Argument checks of ``CovidAndEconomyEnvironment``: each error names the argument, its value
and what was expected."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ai_economist.foundation.scenarios.covid19.model.params import CovidParams


def check_fraction(name: str, value: float) -> float:
    """``value`` as a float in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number in [0, 1], got {value!r}")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return float(value)


def check_non_negative(name: str, value: float, upper: float | None = None) -> float:
    """``value`` as a float >= 0 (and < ``upper`` when given)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    if value < 0 or (upper is not None and value >= upper):
        bound = ">= 0" if upper is None else f"in [0, {upper})"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return float(value)


def check_normalization(value: float) -> float:
    """``reward_normalization_factor`` as a float > 0."""
    value = check_non_negative("reward_normalization_factor", value)
    if value == 0:
        raise ValueError("reward_normalization_factor must be > 0, got 0")
    return value


_SCENARIO_CHECKS: dict[str, Callable[[str, Any], Any]] = {
    "pop_between_age_18_65": check_fraction,
    "infection_too_sick_to_work_rate": check_fraction,
    "risk_free_interest_rate": check_non_negative,
    "economic_reward_crra_eta": lambda name, value: check_non_negative(name, value, 20),
    "health_priority_scaling_agents": check_non_negative,
    "health_priority_scaling_planner": check_non_negative,
    "reward_normalization_factor": lambda _, value: check_normalization(value),
}


def check_scenario_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario arguments of ``build_params``, each checked in their order (``start_date``
    is left to ``build_params``, which parses it)."""
    return {
        name: _SCENARIO_CHECKS[name](name, value) if name in _SCENARIO_CHECKS else value
        for name, value in arguments.items()
    }


def check_real_world_lengths(
    params: CovidParams,
    episode_length: int,
    use_real_world_policies: bool,
    use_real_world_data: bool,
) -> None:
    """Real-world policies and data must cover the whole episode from ``start_date``."""
    days_left = len(params.real_policy) - params.start_date_index
    if use_real_world_policies and episode_length > days_left:
        raise ValueError(
            f"use_real_world_policies needs episode_length <= {days_left} (real policies end "
            f"{days_left} days after start_date), got {episode_length}"
        )
    if use_real_world_data:
        keys = ("susceptible", "infected", "recovered", "deaths", "vaccinated", "unemployed")
        rows = np.stack([params.real_world_data[k] for k in keys])
        finite = np.all(np.isfinite(rows), axis=(0, 2))[params.start_date_index :]
        valid = int(np.argmin(finite)) if not finite.all() else len(finite)
        if episode_length > valid - 1:
            raise ValueError(
                f"use_real_world_data needs episode_length <= {valid - 1} from start_date "
                f"(the real data has gaps after that), got {episode_length}"
            )


def check_components(components: dict, params: CovidParams) -> None:
    """The open/close component's number of levels must match the calibration."""
    open_close = components.get("ControlUSStateOpenCloseStatus")
    if open_close is not None and open_close.num_stringency_levels != params.num_stringency_levels:
        raise ValueError(
            "ControlUSStateOpenCloseStatus: n_stringency_levels must equal the calibration's "
            f"NUM_STRINGENCY_LEVELS={params.num_stringency_levels}, got "
            f"{open_close.num_stringency_levels}"
        )

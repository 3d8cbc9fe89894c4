"""The COVID-19 model a group of runs shares: scenario configs and the constants derived from
them and from the sweep's group parameters (health priorities, subsidy budget, vaccine rate).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import lru_cache

from ai_economist.foundation.scenarios.covid19.configs import (
    TRAINING_ENV_CONFIG,
    TUTORIAL_ENV_CONFIG,
)
from ai_economist.simulate.errors import SimulateError
from ai_economist.warp_drive.data_manager import close_matches_message

SCENARIOS = {"training": TRAINING_ENV_CONFIG, "tutorial": TUTORIAL_ENV_CONFIG}
"""Scenario configs by name: the published training run (540 days, m_a 0.3, m_p 0.45) and the
covid tutorial (405 days, m_a 1, m_p 1)."""


@dataclass(frozen=True)
class ModelKey:
    """Everything the model constants of a group of runs depend on (hashable, picklable)."""

    scenario: str
    days: int
    health_priority: float
    health_priority_agents: float
    subsidy_budget: float
    vaccine_rate: float


def scenario_config(name: str) -> dict:
    """A copy of the env config of scenario ``name`` (close matches when unknown)."""
    if name not in SCENARIOS:
        raise SimulateError(close_matches_message(name, SCENARIOS, "scenario"))
    return copy.deepcopy(SCENARIOS[name])


def scenario_defaults(name: str, days: int | None) -> dict:
    """The group parameters' values in scenario ``name`` (and its episode length)."""
    config = scenario_config(name)
    return {
        "days": int(config["episode_length"] if days is None else days),
        "health_priority": float(config["health_priority_scaling_planner"]),
        "health_priority_agents": float(config["health_priority_scaling_agents"]),
    }


def component_kwargs(config: dict) -> dict:
    """The component arguments of an env config, merged into one dict."""
    kwargs = {}
    for entry in config["components"]:
        for args in entry.values():
            kwargs.update(args)
    return kwargs


@lru_cache(maxsize=64)
def build_model(key: ModelKey, real_world: bool = False):
    """``(CovidParams, ComponentParams, real-world subsidy levels)`` of a group (cached per
    process)."""
    from ai_economist.datasets.covid19 import load_calibration
    from ai_economist.foundation.scenarios.covid19.model.params import build_params
    from ai_economist.foundation.scenarios.covid19.model.simulation import (
        component_params_from_config,
        real_world_subsidy_levels,
    )

    config = scenario_config(key.scenario)
    params = build_params(
        load_calibration(config["path_to_data_and_fitted_params"]),
        episode_length=key.days,
        start_date=config["start_date"],
        pop_between_age_18_65=config["pop_between_age_18_65"],
        infection_too_sick_to_work_rate=config["infection_too_sick_to_work_rate"],
        risk_free_interest_rate=config["risk_free_interest_rate"],
        economic_reward_crra_eta=config["economic_reward_crra_eta"],
        health_priority_scaling_agents=key.health_priority_agents,
        health_priority_scaling_planner=key.health_priority,
    )
    kwargs = component_kwargs(config)
    kwargs["max_annual_subsidy_per_person"] = key.subsidy_budget
    kwargs["daily_vaccines_per_million_people"] = key.vaccine_rate
    comps = component_params_from_config(params, **kwargs)
    levels = real_world_subsidy_levels(
        params,
        kwargs["num_subsidy_levels"],
        kwargs["subsidy_interval"],
        kwargs["max_annual_subsidy_per_person"],
    )
    if real_world:
        days_left = len(params.real_policy) - params.start_date_index
        if key.days > days_left:
            raise SimulateError(
                f"policy 'real-world' needs an episode of at most {days_left} days (the real "
                f"policies end {days_left} days after the start date), got {key.days}; use "
                "--scenario tutorial (405 days) or --days"
            )
    return params, comps, levels


def env_kwargs(key: ModelKey) -> dict:
    """Foundation env kwargs of a group (for checkpoint policies, which need observations)."""
    config = scenario_config(key.scenario)
    config.pop("scenario_name", None)
    config["episode_length"] = key.days
    config["health_priority_scaling_planner"] = key.health_priority
    config["health_priority_scaling_agents"] = key.health_priority_agents
    for entry in config["components"]:
        args = entry.get("FederalGovernmentSubsidy")
        if args is not None:
            args["max_annual_subsidy_per_person"] = key.subsidy_budget
        args = entry.get("VaccinationCampaign")
        if args is not None:
            args["daily_vaccines_per_million_people"] = key.vaccine_rate
    return config


def state_names() -> list[str]:
    """The 51 states' names (column names of a per-state schedule CSV)."""
    from ai_economist.datasets.covid19 import load_calibration

    return list(load_calibration("").state_names)

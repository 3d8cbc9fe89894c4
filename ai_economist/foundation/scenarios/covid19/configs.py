"""Published COVID-19 configurations (as dicts of env kwargs)."""

from __future__ import annotations

import copy

PUBLISHED_COMPONENTS = [
    {"ControlUSStateOpenCloseStatus": {"action_cooldown_period": 28}},
    {
        "FederalGovernmentSubsidy": {
            "num_subsidy_levels": 20,
            "subsidy_interval": 90,
            "max_annual_subsidy_per_person": 20000,
        }
    },
    {
        "VaccinationCampaign": {
            "daily_vaccines_per_million_people": 3000,
            "delivery_interval": 1,
            "vaccine_delivery_start_date": "2021-01-12",
        }
    },
]

TRAINING_ENV_CONFIG = {
    "scenario_name": "CovidAndEconomySimulation",
    "components": PUBLISHED_COMPONENTS,
    "economic_reward_crra_eta": 2,
    "episode_length": 540,
    "flatten_masks": True,
    "flatten_observations": False,
    "health_priority_scaling_agents": 0.3,
    "health_priority_scaling_planner": 0.45,
    "infection_too_sick_to_work_rate": 0.1,
    "multi_action_mode_agents": False,
    "multi_action_mode_planner": False,
    "n_agents": 51,
    "path_to_data_and_fitted_params": "",
    "pop_between_age_18_65": 0.6,
    "risk_free_interest_rate": 0.03,
    "world_size": [1, 1],
    "start_date": "2020-03-22",
    "use_real_world_data": False,
    "use_real_world_policies": False,
    "collate_agent_step_and_reset_data": True,
}
"""The env block of the published training run (540 days, m_a 0.3, m_p 0.45)."""

TUTORIAL_ENV_CONFIG = {
    **TRAINING_ENV_CONFIG,
    "episode_length": 405,
    "health_priority_scaling_agents": 1,
    "health_priority_scaling_planner": 1,
}
"""The covid tutorial configuration (405 days, scalings 1 and 1), where the golden values come from."""


def env_config(base: dict = TRAINING_ENV_CONFIG, **overrides) -> dict:
    """A deep copy of ``base`` with ``overrides`` applied (without ``scenario_name``)."""
    config = copy.deepcopy(base)
    config.pop("scenario_name", None)
    config.update(overrides)
    return config


def published_model(episode_length: int = 540, m_a: float = 0.3, m_p: float = 0.45):
    """``(CovidParams, ComponentParams)`` of the array model for the published components and
    the packaged calibration: ``episode_length`` days, health priority scalings ``m_a`` (states)
    and ``m_p`` (planner). The training run uses the defaults; the tutorial 405, 1 and 1."""
    from ai_economist.datasets.covid19 import load_calibration
    from ai_economist.foundation.scenarios.covid19.model.params import build_params
    from ai_economist.foundation.scenarios.covid19.model.simulation import (
        component_params_from_config,
    )

    params = build_params(
        load_calibration(),
        episode_length=episode_length,
        health_priority_scaling_agents=m_a,
        health_priority_scaling_planner=m_p,
    )
    vaccination = PUBLISHED_COMPONENTS[2]["VaccinationCampaign"]
    comps = component_params_from_config(
        params,
        daily_vaccines_per_million_people=vaccination["daily_vaccines_per_million_people"],
        vaccine_delivery_start_date=vaccination["vaccine_delivery_start_date"],
    )
    return params, comps

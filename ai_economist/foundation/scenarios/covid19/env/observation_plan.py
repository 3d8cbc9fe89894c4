"""The COVID-19 env's direct observation assembly (``CovidAndEconomyEnvironment._generate_observations``).

With the three COVID-19 components (and nothing overridden), collated ``{"a", "p"}``
observations and flattened masks, the env builds exactly what the base env builds (same keys,
order, values and dtypes) from the same ``generate_observations``/mask methods, without the
generic merging and mask collation; any other configuration takes the base env's path.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.base.base_component import BaseComponent
from ai_economist.foundation.base.observations import filled
from ai_economist.foundation.scenarios.covid19.components import (
    ControlUSStateOpenCloseStatus,
    FederalGovernmentSubsidy,
    VaccinationCampaign,
)

_KINDS = (ControlUSStateOpenCloseStatus, FederalGovernmentSubsidy, VaccinationCampaign)


def make_observation_plan(env: Any, scenario_class: type) -> tuple | bool:
    """(sources, open/close component, subsidy component) of ``env``, or False for the base
    path (``scenario_class``: the class whose observation methods the plan stands for)."""
    components = env._components
    cls = type(env)
    if (
        env._flatten_observations
        or not env._flatten_masks
        or not env.collate_agent_step_and_reset_data
        or sorted(type(c).__name__ for c in components) != sorted(k.__name__ for k in _KINDS)
        or any(type(c) not in _KINDS for c in components)
        or cls.generate_observations is not scenario_class.generate_observations
        or cls._generate_observations is not scenario_class._generate_observations
        or any(type(c).obs is not BaseComponent.obs for c in components)
    ):
        return False
    by_type = {type(c): c for c in components}
    open_close = by_type[ControlUSStateOpenCloseStatus]
    subsidy = by_type[FederalGovernmentSubsidy]
    agent, planner = env.world.agents[0], env.world.planner
    if (
        agent.action_names != [open_close.name]
        or agent.subspace_sizes != [open_close.num_stringency_levels]
        or planner.action_names != [subsidy.name]
        or planner.subspace_sizes != [subsidy.num_subsidy_levels]
    ):
        return False
    sources = [("world-", env.generate_observations)]
    sources += [(c.name + "-", c.generate_observations) for c in components]
    return sources, open_close, subsidy


def planned_observations(env: Any, plan: tuple) -> dict[str, dict[str, Any]]:
    """The observations of ``env`` from its plan (see the module docstring)."""
    sources, open_close, subsidy = plan
    t, n = env.world.timestep, env.n_agents
    time_value = t / (env.episode_length if env._allow_observation_scaling else 1)
    obs_a, obs_p = {"time": filled(n, time_value)}, {"time": filled(1, time_value)}
    for prefix, generate in sources:
        fields = generate()
        for key, value in fields["a"].items():
            obs_a[prefix + key] = value
        for key, value in fields["p"].items():
            obs_p[prefix + key] = value
    mask_a = np.empty((1 + open_close.num_stringency_levels, n), dtype=np.float32)
    mask_a[...] = open_close.allowed_agents()  # then the NO-OP row
    mask_a[0] = 1.0
    mask_p = np.empty(1 + subsidy.num_subsidy_levels, dtype=np.float32)
    mask_p.fill(subsidy.allowed_now())
    mask_p[0] = 1.0
    obs_a["action_mask"], obs_p["action_mask"] = mask_a, mask_p
    return {"a": obs_a, "p": obs_p}

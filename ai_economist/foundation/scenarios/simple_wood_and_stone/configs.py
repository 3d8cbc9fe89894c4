"""The published gather-trade-build environment configurations (AI Economist 1.7.1,
``tutorials/rllib/phase{1,2}/config.yaml``, ``env`` block), as dicts of env kwargs.

Phase 1 trains the agents in a free market (taxes disabled, labour cost annealed in);
phase 2 adds the planner's taxes. Both keep ``PeriodicBracketTax`` so the agents'
observation space is the same in both phases.
"""

from __future__ import annotations

import copy
from typing import Any

SCENARIO_NAME = "layout_from_file/simple_wood_and_stone"

_COMPONENTS: list[dict[str, Any]] = [
    {
        "Build": {
            "build_labor": 10,
            "payment": 10,
            "payment_max_skill_multiplier": 3,
            "skill_dist": "pareto",
        }
    },
    {
        "ContinuousDoubleAuction": {
            "max_bid_ask": 10,
            "max_num_orders": 5,
            "order_duration": 50,
            "order_labor": 0.25,
        }
    },
    {"Gather": {"collect_labor": 1, "move_labor": 1, "skill_dist": "pareto"}},
]

_COMMON: dict[str, Any] = {
    "scenario_name": SCENARIO_NAME,
    "dense_log_frequency": 20,
    "energy_cost": 0.21,
    "env_layout_file": "quadrant_25x25_20each_30clump.txt",
    "episode_length": 1000,
    "fixed_four_skill_and_loc": True,
    "flatten_masks": True,
    "flatten_observations": True,
    "isoelastic_eta": 0.23,
    "multi_action_mode_agents": False,
    "multi_action_mode_planner": True,
    "n_agents": 4,
    "planner_gets_spatial_info": False,
    "planner_reward_type": "coin_eq_times_productivity",
    "starting_agent_coin": 0,
    "world_size": [25, 25],
}

PHASE1_ENV_CONFIG: dict[str, Any] = {
    **_COMMON,
    "components": _COMPONENTS
    + [
        {
            "PeriodicBracketTax": {
                "bracket_spacing": "us-federal",
                "disable_taxes": True,
                "period": 100,
                "tax_annealing_schedule": [-100, 0.001],
                "usd_scaling": 1000,
            }
        }
    ],
    "energy_warmup_constant": 10000,
    "energy_warmup_method": "auto",
}

PHASE2_ENV_CONFIG: dict[str, Any] = {
    **_COMMON,
    "components": _COMPONENTS
    + [
        {
            "PeriodicBracketTax": {
                "bracket_spacing": "us-federal",
                "disable_taxes": False,
                "period": 100,
                "rate_disc": 0.05,
                "tax_annealing_schedule": [-100, 0.001],
                "tax_model": "model_wrapper",
                "usd_scaling": 1000,
            }
        }
    ],
    "energy_warmup_constant": 0,
}


def env_config(config: dict[str, Any], without_tax: bool = False) -> dict[str, Any]:
    """A deep copy of ``config`` without ``scenario_name`` (the kwargs of the scenario class);
    ``without_tax`` drops the ``PeriodicBracketTax`` component."""
    kwargs = copy.deepcopy(config)
    kwargs.pop("scenario_name", None)
    if without_tax:
        kwargs["components"] = [c for c in kwargs["components"] if "PeriodicBracketTax" not in c]
    return kwargs

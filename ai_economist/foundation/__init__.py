"""Foundation: the generic multi-agent economic simulation framework.

Registries (case-insensitive ``get``/``has``/``entries``): ``scenarios``, ``components``,
``agents``, ``resources``, ``landmarks``, ``endogenous``. ``make_env_instance(name, **kw)``
builds a registered scenario. ``utils`` holds the episode-log helpers.
"""

from __future__ import annotations

from typing import Any

from ai_economist.foundation import utils
from ai_economist.foundation.agents import agent_registry as agents
from ai_economist.foundation.base.base_env import BaseEnvironment
from ai_economist.foundation.components import component_registry as components
from ai_economist.foundation.entities import endogenous_registry as endogenous
from ai_economist.foundation.entities import landmark_registry as landmarks
from ai_economist.foundation.entities import resource_registry as resources
from ai_economist.foundation.scenarios import scenario_registry as scenarios

__all__ = [
    "agents",
    "components",
    "endogenous",
    "landmarks",
    "make_env_instance",
    "resources",
    "scenarios",
    "utils",
]


def make_env_instance(scenario_name: str, **kwargs: Any) -> BaseEnvironment:
    """Instantiate the scenario registered as ``scenario_name`` with ``kwargs``."""
    scenario_class = scenarios.get(scenario_name)
    return scenario_class(**kwargs)

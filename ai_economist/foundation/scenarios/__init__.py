"""Scenario registry. Importing this package registers every available scenario."""

from __future__ import annotations

import importlib.util

from ai_economist.foundation.base.base_env import BaseEnvironment, scenario_registry

__all__ = ["BaseEnvironment", "scenario_registry"]


def _module_exists(module_name: str) -> bool:
    try:
        return importlib.util.find_spec(module_name) is not None
    except ModuleNotFoundError:
        return False


if _module_exists("ai_economist.foundation.scenarios.covid19") and _module_exists(
    "ai_economist.foundation.scenarios.covid19.covid19_env"
):
    # Scenario modules register themselves on import.
    from ai_economist.foundation.scenarios.covid19 import covid19_env  # noqa: E402,F401

# The one-step economy (taxes, then labour) and the gather-trade-build scenarios;
# importing registers them.
from ai_economist.foundation.scenarios import simple_wood_and_stone as _gtb  # noqa: E402,F401
from ai_economist.foundation.scenarios.one_step_economy import one_step_economy  # noqa: E402,F401

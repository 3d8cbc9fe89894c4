"""Gymnasium adapters, generic over the registered environments.

* :class:`~ai_economist.adapters.vector.BatchedVectorEnv`: a ``gymnasium.vector.VectorEnv`` over
  any ``BatchedPolicyEnv``; :func:`~ai_economist.adapters.vector.make_vector_env` builds one
  over a registered environment by name::

      from ai_economist.adapters.gymnasium import make_vector_env

      venv = make_vector_env("covid_and_economy_environment", num_envs=100, env_backend="numpy")

* Gymnasium ids: importing this module imports every registered environment package
  (:func:`ai_economist.warp_drive.registry.env_names`); a package registers its own
  Gymnasium ids when its registration module is imported (the COVID-19 scenario registers
  ``ai_economist/CovidPlanner-v0`` that way, from
  ``ai_economist.foundation.scenarios.covid19.adapters``).

The names this module held before (``CovidPlannerEnv``, ``CovidVectorEnv``, ``ENV_ID``, ...)
moved beside their scenario; they work from here for one release with a DeprecationWarning
that names the new path.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from ai_economist.adapters.vector import BatchedVectorEnv, make_vector_env
from ai_economist.warp_drive.registry import env_names

__all__ = ["BatchedVectorEnv", "make_vector_env", "register_gymnasium_ids"]

_MOVED = {  # deprecated in 2.0: removed in the next release
    "ENV_ID": "ai_economist.foundation.scenarios.covid19.adapters",
    "SCENARIO": "ai_economist.foundation.scenarios.covid19.adapters.planner_env",
    "StatesPolicy": "ai_economist.foundation.scenarios.covid19.adapters.planner_env",
    "covid_config": "ai_economist.foundation.scenarios.covid19.adapters.planner_env",
    "CovidPlannerEnv": "ai_economist.foundation.scenarios.covid19.adapters.planner_env",
    "CovidVectorEnv": "ai_economist.foundation.scenarios.covid19.adapters.vector_env",
}


def register_gymnasium_ids() -> list[str]:
    """Import every registered environment package, so that each registers its Gymnasium
    ids; returns the environment names (a package that fails to import is skipped with a
    warning, as the registry does)."""
    return env_names()


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        warnings.warn(
            f"ai_economist.adapters.gymnasium.{name} moved to {_MOVED[name]}.{name}; the old "
            "path is removed in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


register_gymnasium_ids()

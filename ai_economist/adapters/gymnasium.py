"""Gymnasium adapters, generic over the registered environments.

* :class:`~ai_economist.adapters.vector.BatchedVectorEnv`: a ``gymnasium.vector.VectorEnv`` over
  any ``BatchedPolicyEnv``; :func:`~ai_economist.adapters.vector.make_vector_env` builds one
  over a registered environment by name::

      from ai_economist.adapters.gymnasium import make_vector_env

      venv = make_vector_env("covid_and_economy_environment", num_envs=100, env_backend="numpy")

* Gymnasium ids: importing this module calls :func:`register_gymnasium_ids`: every
  registration module of the entry-point group ``ai_economist.environments`` that defines a
  function ``register_gymnasium_ids()`` has it called, to register its package's Gymnasium
  ids (the COVID-19 scenario registers ``ai_economist/CovidPlanner-v0`` so). The registration
  modules themselves need not import Gymnasium.

The names this module held before (``CovidPlannerEnv``, ``CovidVectorEnv``, ``ENV_ID``, ...)
moved beside their scenario; they work from here for one release with a DeprecationWarning
that names the new path.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from typing import Any

from ai_economist.adapters.vector import BatchedVectorEnv, make_vector_env
from ai_economist.warp_drive.registry import ENTRY_POINT_GROUP, entry_points_of, env_names

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
    """Call ``register_gymnasium_ids()`` of every registration module of the entry-point group
    that defines one; returns those modules' names. A module that failed to import is skipped
    (the registry warns about it)."""
    env_names()  # imports every registration module once
    called = []
    for entry_point, _ in entry_points_of(ENTRY_POINT_GROUP):
        hook = getattr(sys.modules.get(entry_point.value), "register_gymnasium_ids", None)
        if callable(hook):
            hook()
            called.append(entry_point.value)
    return called


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

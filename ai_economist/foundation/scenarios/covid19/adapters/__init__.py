"""Gymnasium adapters of COVID-19 and the economy, and the hook that registers their ids.

Importing this package registers ``ai_economist/CovidPlanner-v0`` (it imports Gymnasium's
registry only; the env itself is imported when ``gymnasium.make`` builds it). Three ways in,
all offline:

* ``gymnasium.make("ai_economist.foundation.scenarios.covid19.adapters:ai_economist/CovidPlanner-v0")``:
  Gymnasium's own ``"module:id"`` form imports this package first;
* ``import ai_economist.adapters.gymnasium``: the generic adapter registers the Gymnasium ids of
  every registered environment package (this scenario's registration module imports this
  package);
* ``import ai_economist.foundation.scenarios.covid19.adapters``.

The envs: :class:`~.planner_env.CovidPlannerEnv` (the federal planner facing scripted states) and
:class:`~.vector_env.CovidVectorEnv` (``num_envs`` whole scenarios on the batched numpy model).
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

ENV_ID = "ai_economist/CovidPlanner-v0"
"""The Gymnasium id of :class:`~.planner_env.CovidPlannerEnv`."""

PLANNER_ENTRY_POINT = f"{__name__}.planner_env:CovidPlannerEnv"


def register_gymnasium_ids() -> None:
    """Register :data:`ENV_ID` with Gymnasium (once; later calls do nothing)."""
    if ENV_ID not in registry:
        register(id=ENV_ID, entry_point=PLANNER_ENTRY_POINT)


register_gymnasium_ids()

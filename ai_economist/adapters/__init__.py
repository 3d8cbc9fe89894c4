"""Adapters from Foundation scenarios to the standard RL interfaces.

* :mod:`ai_economist.adapters.pettingzoo`: ``parallel_env(scenario_name, **env_config)``, a
  PettingZoo ``ParallelEnv`` for any Foundation scenario;
* :mod:`ai_economist.adapters.gymnasium`: ``CovidVectorEnv`` (a Gymnasium ``VectorEnv`` over the
  batched numpy model of COVID-19) and ``CovidPlannerEnv``, registered as
  ``ai_economist/CovidPlanner-v0`` when the module is imported;
* :mod:`ai_economist.adapters.rllib`: ``FoundationMultiAgentEnv``, an RLlib ``MultiAgentEnv``
  (extra ``rllib``).

Nothing is imported here: each adapter imports its own library (``pettingzoo``,
``gymnasium``, ``ray``) only when its module is imported.
"""

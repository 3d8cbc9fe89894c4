"""Adapters from Foundation scenarios to the standard RL interfaces.

* :mod:`ai_economist.adapters.pettingzoo`: ``parallel_env(scenario_name, **env_config)``, a
  PettingZoo ``ParallelEnv`` for any Foundation scenario;
* :mod:`ai_economist.adapters.gymnasium` (:mod:`~ai_economist.adapters.vector`):
  ``BatchedVectorEnv``, a Gymnasium ``VectorEnv`` over any batched env, and
  ``make_vector_env(env_name, num_envs)`` over a registered one; importing it registers the
  Gymnasium ids of the registered environment packages;
* :mod:`ai_economist.adapters.planner`: ``PlannerEnv``, the planner of any Foundation scenario
  as a single-agent Gymnasium env facing scripted mobile agents;
* :mod:`ai_economist.adapters.rllib`: ``FoundationMultiAgentEnv``, an RLlib ``MultiAgentEnv``
  (extra ``rllib``).

Nothing is imported here: each adapter imports its own library (``pettingzoo``,
``gymnasium``, ``ray``) only when its module is imported. The adapters name no scenario: a
scenario's own Gymnasium envs live with it (COVID-19's in
``ai_economist.foundation.scenarios.covid19.adapters``).
"""

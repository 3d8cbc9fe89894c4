"""The federal planner of COVID-19 alone, as a single-agent ``gymnasium.Env``, facing states
that follow a fixed or scripted policy; registered as ``ai_economist/CovidPlanner-v0`` by this
package (see its docstring)::

    import gymnasium
    import ai_economist.foundation.scenarios.covid19.adapters  # registers the id

    env = gymnasium.make("ai_economist/CovidPlanner-v0", states_policy=1, episode_length=60)

It takes the published training configuration (``configs.TRAINING_ENV_CONFIG``) with keyword
overrides, and ends every episode after ``episode_length`` days with ``terminated`` True.
"""

from __future__ import annotations

from typing import Any

from ai_economist.adapters.planner import AgentsPolicy, PlannerEnv
from ai_economist.foundation.scenarios.covid19.adapters import ENV_ID

__all__ = ["ENV_ID", "SCENARIO", "CovidPlannerEnv", "StatesPolicy", "covid_config"]

SCENARIO = "CovidAndEconomySimulation"

StatesPolicy = AgentsPolicy


def covid_config(**overrides: Any) -> dict[str, Any]:
    """The published COVID-19 training env config with ``overrides`` applied."""
    from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG, env_config

    return env_config(TRAINING_ENV_CONFIG, **overrides)


class CovidPlannerEnv(PlannerEnv):
    """The federal planner of COVID-19 and the economy as a single-agent Gymnasium env (the
    generic :class:`~ai_economist.adapters.planner.PlannerEnv` over the published config).

    Observation: the planner's Foundation observation as one float32 vector (layout in
    :mod:`ai_economist.adapters.core`). Action: ``Discrete(1 + subsidy levels)``, 0 = NO-OP.
    Reward: the planner's reward (social welfare). ``info["action_mask"]`` is the planner's
    int8 mask: subsidy levels are read only on the first day of each subsidy interval; on other
    days an action the mask forbids is the NO-OP (``masked_actions="noop"``, the default, so
    unmasked samplers such as Gymnasium's checker work) or an ``ActionMaskError`` (``"raise"``).

    Args:
        states_policy: what the 51 states do each day: an int (that action for every state
            whenever its mask allows, else the NO-OP; 0 = keep the current stringency, 1..10
            = that stringency level), an int array ``(episode_length, 51)`` of scripted
            actions (masked entries become the NO-OP), or a callable
            ``(timestep, obs_states (51, obs_dim)) -> 51 actions``.
        masked_actions: ``"noop"`` or ``"raise"`` for the planner's masked actions.
        **env_config: overrides of the published training config (e.g. ``episode_length``).
    """

    policy_name = "states_policy"

    def __init__(
        self, states_policy: StatesPolicy = 0, masked_actions: str = "noop", **env_config: Any
    ) -> None:
        super().__init__(SCENARIO, covid_config(**env_config), states_policy, masked_actions)
        self.states = self.mobile_agents

    @property
    def states_policy(self) -> StatesPolicy:
        """The states' policy (the generic ``agents_policy``)."""
        return self.agents_policy

    @states_policy.setter
    def states_policy(self, policy: StatesPolicy) -> None:
        self.agents_policy = policy

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """One day: the planner's ``action``, the states' scripted actions
        (``info["states_actions"]``)."""
        obs, reward, terminated, truncated, info = super().step(action)
        info["states_actions"] = info["agents_actions"]
        return obs, reward, terminated, truncated, info

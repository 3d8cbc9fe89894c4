"""``num_envs`` COVID-19 scenarios on the batched numpy model, as a Gymnasium ``VectorEnv``."""

from __future__ import annotations

from typing import Any

from ai_economist.adapters.core import make_scenario
from ai_economist.adapters.vector import BatchedVectorEnv
from ai_economist.foundation.scenarios.covid19.adapters.planner_env import SCENARIO, covid_config


class CovidVectorEnv(BatchedVectorEnv):
    """``num_envs`` COVID-19 scenarios on the batched numpy model, as a Gymnasium ``VectorEnv``.

    The generic :class:`~ai_economist.adapters.vector.BatchedVectorEnv` over
    ``FoundationEnvWrapper(..., env_backend="numpy")``: observation
    ``{"a": (51, obs_dim_a), "p": (obs_dim_p,)}`` float32 (the batched model's observation
    layout, as the trainer sees it), action ``{"a": MultiDiscrete([11] * 51), "p": Discrete(21)}``,
    reward the planner's reward; ``infos`` holds ``rewards_a`` ``(num_envs, 51)`` and the int8
    masks ``action_mask_a`` ``(num_envs, 51, 11)`` and ``action_mask_p`` ``(num_envs, 21)``.
    Every env ends its episode on the same step; the next ``step`` resets them all
    (``AutoresetMode.NEXT_STEP``: its actions are ignored, its rewards are 0).

    Args:
        num_envs: number of scenarios stepped together.
        masked_actions: ``"raise"`` (``ActionMaskError``) or ``"noop"`` for masked actions.
        **env_config: overrides of the published training config.
    """

    def __init__(self, num_envs: int = 1, masked_actions: str = "raise", **env_config: Any):
        from ai_economist.foundation.env_wrapper import FoundationEnvWrapper

        self.wrapper = FoundationEnvWrapper(
            make_scenario(SCENARIO, covid_config(**env_config)),
            num_envs=num_envs,
            env_backend="numpy",
        )
        super().__init__(self.wrapper, masked_actions=masked_actions, reward_tag="p")

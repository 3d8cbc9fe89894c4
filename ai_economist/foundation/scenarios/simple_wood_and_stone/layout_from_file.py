"""Scenario ``layout_from_file/simple_wood_and_stone``: the layout is read from a map file.

``env_layout_file`` is a bare name of a packaged map (``map_txt/``, see its README) or a
path. Each step every empty source cell regrows one unit with probability
``resource_regen_prob``.

``fixed_four_skill_and_loc`` (the paper's phase-1/2 setting; 4 agents and ``Build`` with
``skill_dist="pareto"``): the four build payments are the means of the sorted skill
multipliers over 100,000 draws of 4 Pareto(4) skills (from ``np.random.default_rng(1)``),
times ``payment``. At each reset a random permutation assigns the agents to the slots
(worst: top right, then bottom left, top left, best: bottom right).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.base.base_env import scenario_registry
from ai_economist.foundation.components.param_checks import check_number
from ai_economist.foundation.scenarios.simple_wood_and_stone.base import WoodAndStoneBase
from ai_economist.foundation.scenarios.simple_wood_and_stone.layout_file import load_layout

FIXED_SKILL_SEED = 1
FIXED_SKILL_SAMPLES = 100_000


def fixed_four_build_payments(payment: float, pmsm: int) -> np.ndarray:
    """Mean sorted build payments of 4 agents (ascending), as ``fixed_four_skill_and_loc`` uses."""
    rng = np.random.default_rng(FIXED_SKILL_SEED)
    skills = np.minimum(pmsm, (pmsm - 1) * rng.pareto(4, size=(FIXED_SKILL_SAMPLES, 4)) + 1)
    return np.sort(skills, axis=1).mean(axis=0) * payment


@scenario_registry.add
class LayoutFromFile(WoodAndStoneBase):
    """Gather-trade-build on a fixed layout (see the module docstring and ``WoodAndStoneBase``).

    Args (besides ``WoodAndStoneBase``'s):
        env_layout_file: packaged map name or path; its shape must equal ``world_size``.
        resource_regen_prob: regrowth probability per step of an empty source cell, in [0, 1].
        fixed_four_skill_and_loc: fixed skills and corner starting cells for 4 agents.
    """

    name = "layout_from_file/simple_wood_and_stone"
    required_entities = ["Wood", "Stone", "Water"]

    def __init__(
        self,
        *base_env_args: Any,
        env_layout_file: str = "quadrant_25x25_20each_30clump.txt",
        resource_regen_prob: float = 0.01,
        fixed_four_skill_and_loc: bool = False,
        **base_env_kwargs: Any,
    ) -> None:
        super().__init__(*base_env_args, **base_env_kwargs)
        layout = load_layout(env_layout_file)
        if list(layout.shape) != list(self.world_size):
            raise ValueError(
                f"{self.name}: env_layout_file {layout.path} is {layout.shape[0]}x"
                f"{layout.shape[1]} but world_size is {self.world_size}; pass "
                f"world_size={list(layout.shape)}"
            )
        self.env_layout_file = str(env_layout_file)
        self._source_maps = {k: v.astype(np.float64) for k, v in layout.maps.items()}
        prob = check_number(self.name, "resource_regen_prob", resource_regen_prob, 0.0, 1.0)
        self.layout_specs = {
            r: {"regen_weight": prob, "regen_halfwidth": 0, "max_health": 1}
            for r in ("Wood", "Stone")
        }
        self._check_regen_specs()
        self.fixed_four_skill_and_loc = bool(fixed_four_skill_and_loc)
        if self.fixed_four_skill_and_loc:
            self._init_fixed_four()

    def _init_fixed_four(self) -> None:
        if self.n_agents != 4:
            raise ValueError(
                f"{self.name}: fixed_four_skill_and_loc needs n_agents=4, got {self.n_agents}"
            )
        try:
            build = self.get_component("Build")
        except KeyError:
            raise ValueError(
                f"{self.name}: fixed_four_skill_and_loc needs the Build component"
            ) from None
        if build.skill_dist != "pareto":
            raise ValueError(
                f"{self.name}: fixed_four_skill_and_loc needs Build(skill_dist='pareto'), "
                f"got {build.skill_dist!r}"
            )
        self._avg_ranked_skill = fixed_four_build_payments(
            build.payment, build.payment_max_skill_multiplier
        )
        h, w = self.world_size
        # Worst agent top right, then bottom left, top left; best bottom right.
        # (1.7.1 used world_size[1] for the bottom row: wrong for non-square maps.)
        self._ranked_locs = [(0, w - 1), (h - 1, 0), (0, 0), (h - 1, w - 1)]

    def reset_starting_layout(self) -> None:
        """Put the file's water, sources and first resources on cleared maps."""
        maps = self.world.maps
        maps.clear()
        for entity, layer in self._source_maps.items():
            maps.set(entity, layer)
            if entity in ("Wood", "Stone"):
                maps.set(entity + "SourceBlock", layer)

    def additional_reset_steps(self) -> None:
        """Fixed skills and corners (if enabled), then the reward bookkeeping."""
        if self.fixed_four_skill_and_loc:
            self.world.clear_agent_locs()
            for i, agent in enumerate(self.world.get_random_order_agents()):
                self.world.set_agent_loc(agent, *self._ranked_locs[i])
                agent.state["build_payment"] = float(self._avg_ranked_skill[i])
        super().additional_reset_steps()

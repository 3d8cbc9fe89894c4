"""Scenario ``uniform/simple_wood_and_stone``: a random layout at every reset.

Wood sources are likelier towards the bottom rows and stone towards the top
(probability ~ row^gradient_steepness); ``clumpiness`` in [0, 1] trades scattered single
sources for clumps grown with random 7x7 kernels. A layout is accepted when each resource's
coverage is within a factor 1.4 of its target (at most 100 attempts).

Difference from 1.7.1: the stone probability map used the *wood* coverage; here each
resource uses its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.base.base_env import scenario_registry
from ai_economist.foundation.components.param_checks import check_integer, check_number
from ai_economist.foundation.scenarios.simple_wood_and_stone.base import RESOURCES, WoodAndStoneBase
from ai_economist.foundation.scenarios.simple_wood_and_stone.dynamics import convolve_same

MAX_LAYOUT_ATTEMPTS = 100
COVERAGE_BOUND = 0.4


@scenario_registry.add
class Uniform(WoodAndStoneBase):
    """Gather-trade-build on a random layout (see the module docstring and ``WoodAndStoneBase``).

    Args (besides ``WoodAndStoneBase``'s), per resource R in wood, stone:
        starting_R_coverage: target fraction of source cells (a value >= 1 is a cell count);
            wood + stone must be < 0.5.
        R_regen_halfwidth: regrowth kernel half-width (0..3).
        R_regen_weight: regrowth probability weight, in [0, 1].
        R_max_health: units a source cell can hold (>= 1).
        R_clumpiness: in [0, 1].
        gradient_steepness: >= 1.
        checker_source_blocks: keep only the sources on a checkerboard (coverage doubled first).
    """

    name = "uniform/simple_wood_and_stone"
    required_entities = ["Wood", "Stone"]

    def __init__(
        self,
        *base_env_args: Any,
        starting_wood_coverage: float = 0.025,
        wood_regen_halfwidth: int = 0,
        wood_regen_weight: float = 0.01,
        wood_max_health: int = 1,
        starting_stone_coverage: float = 0.025,
        stone_regen_halfwidth: int = 0,
        stone_regen_weight: float = 0.01,
        stone_max_health: int = 1,
        wood_clumpiness: float = 0.35,
        stone_clumpiness: float = 0.5,
        gradient_steepness: float = 8,
        checker_source_blocks: bool = False,
        **base_env_kwargs: Any,
    ) -> None:
        super().__init__(*base_env_args, **base_env_kwargs)
        n_cells = float(np.prod(self.world_size))
        coverage = {}
        for r, value in (("Wood", starting_wood_coverage), ("Stone", starting_stone_coverage)):
            value = check_number(self.name, f"starting_{r.lower()}_coverage", value, 0.0)
            coverage[r] = value / n_cells if value >= 1 else value
        if coverage["Wood"] + coverage["Stone"] >= 0.5:
            raise ValueError(
                f"{self.name}: starting wood + stone coverage must be < 0.5 of the map, got "
                f"{coverage['Wood']:.3f} + {coverage['Stone']:.3f}"
            )
        self._checker_source_blocks = bool(checker_source_blocks)
        rows, cols = np.indices(self.world_size)
        self._checker_mask = (rows % 2 + cols % 2) == 1
        m = 2 if self._checker_source_blocks else 1
        args = {
            "Wood": (wood_regen_halfwidth, wood_regen_weight, wood_max_health, wood_clumpiness),
            "Stone": (
                stone_regen_halfwidth,
                stone_regen_weight,
                stone_max_health,
                stone_clumpiness,
            ),
        }
        self.layout_specs, self.clumpiness = {}, {}
        for r, (halfwidth, weight, health, clump) in args.items():
            self.layout_specs[r] = {
                "starting_coverage": coverage[r] * m,
                "regen_halfwidth": check_integer(
                    self.name, f"{r.lower()}_regen_halfwidth", halfwidth, 0, 3
                ),
                "regen_weight": check_number(
                    self.name, f"{r.lower()}_regen_weight", weight, 0.0, 1.0
                ),
                "max_health": check_integer(self.name, f"{r.lower()}_max_health", health, 1),
            }
            if not 0 < self.layout_specs[r]["starting_coverage"] < 1:
                raise ValueError(
                    f"{self.name}: starting_{r.lower()}_coverage must give a fraction in (0, 1)"
                )
            self.clumpiness[r] = check_number(self.name, f"{r.lower()}_clumpiness", clump, 0.0, 1.0)
        self._check_regen_specs()
        self.gradient_steepness = check_number(
            self.name, "gradient_steepness", gradient_steepness, 1.0
        )
        self.source_prob_maps = self.make_source_prob_maps()
        self.source_maps = {k: np.zeros_like(v) for k, v in self.source_prob_maps.items()}

    def make_source_prob_maps(self) -> dict[str, np.ndarray]:
        """Per resource, how likely each cell is to become a source (wood bottom, stone top)."""
        h, w = self.world_size
        gradient = np.repeat(
            np.arange(h, dtype=np.float64)[:, None] ** self.gradient_steepness, w, axis=1
        )
        gradient = gradient / np.mean(gradient) if np.mean(gradient) > 0 else np.ones((h, w))
        return {
            "Wood": gradient * self.layout_specs["Wood"]["starting_coverage"],
            "Stone": gradient[::-1] * self.layout_specs["Stone"]["starting_coverage"],
        }

    def _grow_sources(self, resource: str, empty: np.ndarray) -> np.ndarray:
        rng = self.world.rng
        target = self.layout_specs[resource]["starting_coverage"]
        clump = 1 - np.clip(self.clumpiness[resource], 0.0, 0.99)
        prob = self.source_prob_maps[resource] * 0.1 * clump
        draws = rng.random(prob.shape)
        sources = (draws < prob) & empty
        for _ in range(201):
            if np.mean(sources) >= target * clump:
                break
            draws *= 0.9
            sources = (draws < prob) & empty
        while np.mean(sources) < target:
            kernel = (rng.standard_normal((7, 7)) > 0).astype(np.float64)
            noisy = sources + 0.2 * rng.standard_normal(sources.shape) - 0.25
            sources = ((convolve_same(noisy, kernel) > 0) | sources) & empty
        return sources.astype(np.float64)

    def reset_starting_layout(self) -> None:
        """Draw source layouts until both coverages are within a factor 1.4 of their targets."""
        maps = self.world.maps
        for _ in range(MAX_LAYOUT_ATTEMPTS):
            maps.clear()
            for resource in RESOURCES:
                sources = self._grow_sources(resource, maps.empty)
                self.source_maps[resource] = sources
                maps.set(resource, sources)
                maps.set(resource + "SourceBlock", sources)
            quotients = [
                np.mean(self.source_maps[r]) / self.layout_specs[r]["starting_coverage"]
                for r in RESOURCES
            ]
            if all(1 / (1 + COVERAGE_BOUND) <= q <= 1 + COVERAGE_BOUND for q in quotients):
                break
        if self._checker_source_blocks:
            for resource in RESOURCES:
                sources = self.source_maps[resource] * self._checker_mask
                self.source_maps[resource] = sources
                maps.set(resource, sources)
                maps.set(resource + "SourceBlock", sources)

"""The parameters and the per-env state of the gather-trade-build array world.

Data only, shared by the world's rules (:mod:`.array_world`) and its rewards
(:mod:`.array_rewards`), so neither imports the other.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rules as rules

COMPONENTS = ("Build", "Gather")
REGROW_ORDER = (1, 0)  # regrowth draws for wood, then stone (indices into COLLECTIBLE)


@dataclasses.dataclass(frozen=True)
class GTBWorldParams:
    """Constants of the batched world (read from a dict env by :meth:`from_env`). The
    layout's water and source maps never change and are the same in every env: they live
    here, not in the state."""

    n_agents: int
    world_size: tuple[int, int]
    episode_length: int
    water: np.ndarray  # bool (H, W)
    sources: np.ndarray  # float (2, H, W) in COLLECTIBLE order: the layout's first resources
    landmarks: np.ndarray  # bool (H, W): water or a source block (no build there)
    regen_weight: float
    max_health: float
    starting_agent_coin: float
    payment: int
    payment_max_skill_multiplier: int
    build_skill_dist: str
    build_labor: float
    gather_skill_dist: str
    move_labor: float
    collect_labor: float
    fixed_four: bool
    ranked_payments: np.ndarray  # (A,) fixed_four_skill_and_loc's payments, worst first
    ranked_locs: np.ndarray  # (A, 2) their corners
    isoelastic_eta: float
    energy_cost: float
    energy_warmup_constant: float
    energy_warmup_method: str
    mixing_weight_gini_vs_coin: float
    inv_scale: float
    time_scale: float
    observation_range: int

    @classmethod
    def from_env(cls, env: Any, components: tuple[str, ...] = COMPONENTS) -> GTBWorldParams:
        """Parameters of a ``layout_from_file/simple_wood_and_stone`` env built with the
        components ``components`` in that order (default ``Build`` then ``Gather``; the
        batched economy passes its longer list, which must hold ``Build`` and ``Gather``).

        Raises:
            ValueError: another scenario or component list, or settings the array model does
                not cover (planner reward other than ``coin_eq_times_productivity``,
                ``isoelastic_eta`` >= 1, 30 agents or more, full observability or a
                planner with spatial observations).
        """
        names = tuple(c.name for c in env.components)
        if env.name != "layout_from_file/simple_wood_and_stone" or names != tuple(components):
            raise ValueError(
                "the gather-trade-build array model needs layout_from_file/simple_wood_and_stone "
                f"with components {list(components)} in that order; got {env.name!r} with "
                f"{list(names)}"
            )
        problems = []
        if env.planner_reward_type != "coin_eq_times_productivity":
            problems.append(
                f"planner_reward_type={env.planner_reward_type!r} "
                "(needs coin_eq_times_productivity)"
            )
        if env.isoelastic_eta >= 1:
            problems.append(f"isoelastic_eta={env.isoelastic_eta} (needs < 1)")
        if env.n_agents >= 30:
            problems.append(f"n_agents={env.n_agents} (needs < 30)")
        if env._full_observability or env._planner_gets_spatial_info:
            problems.append("full_observability or planner_gets_spatial_info (needs both False)")
        if problems:
            raise ValueError(
                "the gather-trade-build array world does not support " + "; ".join(problems)
            )
        build, gather = env.get_component("Build"), env.get_component("Gather")
        layout = env._source_maps
        water = layout["Water"] > 0
        sources = np.stack([layout[name] for name in rules.COLLECTIBLE]).astype(np.float64)
        n = env.n_agents
        fixed = env.fixed_four_skill_and_loc
        ranked_locs = np.array(env._ranked_locs if fixed else np.zeros((n, 2)), dtype=np.int64)
        if fixed and water[ranked_locs[:, 0], ranked_locs[:, 1]].any():
            raise ValueError("fixed_four_skill_and_loc: a corner of the layout is water")
        spec = env.layout_specs["Wood"]
        return cls(
            n_agents=n,
            world_size=(int(env.world_size[0]), int(env.world_size[1])),
            episode_length=env.episode_length,
            water=water,
            sources=sources,
            landmarks=water | (sources > 0).any(axis=0),
            regen_weight=float(spec["regen_weight"]),
            max_health=float(spec["max_health"]),
            starting_agent_coin=float(env.starting_agent_coin),
            payment=build.payment,
            payment_max_skill_multiplier=build.payment_max_skill_multiplier,
            build_skill_dist=build.skill_dist,
            build_labor=float(build.build_labor),
            gather_skill_dist=gather.skill_dist,
            move_labor=float(gather.move_labor),
            collect_labor=float(gather.collect_labor),
            fixed_four=fixed,
            ranked_payments=np.array(env._avg_ranked_skill if fixed else np.zeros(n)),
            ranked_locs=ranked_locs,
            isoelastic_eta=float(env.isoelastic_eta),
            energy_cost=float(env.energy_cost),
            energy_warmup_constant=float(env.energy_warmup_constant),
            energy_warmup_method=env.energy_warmup_method,
            mixing_weight_gini_vs_coin=float(env.mixing_weight_gini_vs_coin),
            inv_scale=float(env.inv_scale),
            time_scale=float(env.episode_length if env._allow_observation_scaling else 1),
            observation_range=int(env._mobile_agent_observation_range),
        )

    @functools.cached_property
    def source_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """Flat indices of the wood, then the stone source cells (regrowth's draw order)."""
        return tuple(np.flatnonzero(self.sources[j]) for j in REGROW_ORDER)  # type: ignore[return-value]

    @functools.cached_property
    def source_values(self) -> tuple[np.ndarray, np.ndarray]:
        """The source maps at :attr:`source_cells`."""
        return tuple(  # type: ignore[return-value]
            self.sources[j].ravel()[c] for j, c in zip(REGROW_ORDER, self.source_cells)
        )


@dataclasses.dataclass
class GTBWorldState:
    """Per-env state: ``(E,)``, ``(E, A)`` agents, ``(E, A, 3)`` inventories (Coin, Stone,
    Wood), ``(E, 2, H, W)`` resources (Stone, Wood), ``(E, H, W)`` houses."""

    rngs: list[np.random.Generator]
    timestep: np.ndarray
    resource_maps: np.ndarray
    house_owner: np.ndarray  # int16, -1: no house
    locs: np.ndarray  # int64 (E, A, 2) row, column
    inventory: np.ndarray
    escrow: np.ndarray
    labor: np.ndarray
    build_payment: np.ndarray
    build_skill: np.ndarray
    bonus_gather_prob: np.ndarray
    coin_utility: np.ndarray  # (c^(1-eta) - 1) / (1-eta) of each agent's coin endowment
    utility: np.ndarray  # (E, A) at the last step (reward baseline)
    welfare: np.ndarray  # (E,)
    completions: np.ndarray  # (E,) finished episodes
    auto_integrator: np.ndarray  # (E,) steps whose agents' rewards summed > 0

    @property
    def num_envs(self) -> int:
        """Number of envs."""
        return self.timestep.shape[0]

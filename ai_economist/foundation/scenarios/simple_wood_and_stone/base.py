"""What the gather-trade-build ("simple_wood_and_stone") scenarios share.

Agents gather wood and stone (``Gather``), trade them (``ContinuousDoubleAuction``) and build
houses for coin (``Build``); a planner may tax them. This base class holds the scenario
parameters, agent reset, resource regeneration, observations, rewards and metrics; the
subclasses only make the starting layout (:mod:`.dynamic_layout`, :mod:`.layout_from_file`).

* Agent utility: ``isoelastic_coin_minus_labor(coin endowment, labour, eta,
  energy_weight * energy_cost)``; reward = change in utility since the last step.
* Planner reward: change in the social welfare ``planner_reward_type``.
* ``energy_weight`` = 1 when ``energy_warmup_constant`` <= 0, else
  1 - exp(-completions / c) (``"decay"``) or 1 - exp(-integrator / c) (``"auto"``, counting
  steps whose mean agent reward was positive).
"""

from __future__ import annotations

import itertools
import operator
from typing import Any

import numpy as np

from ai_economist.foundation.base.base_env import BaseEnvironment
from ai_economist.foundation.components.param_checks import (
    check_choice,
    check_integer,
    check_number,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone import dynamics, writers
from ai_economist.foundation.scenarios.simple_wood_and_stone.action_checks import MaskedActionCheck
from ai_economist.foundation.scenarios.simple_wood_and_stone.map_cache import MapCache
from ai_economist.foundation.scenarios.utils import rewards, social_metrics

PLANNER_REWARD_TYPES = (
    "coin_eq_times_productivity",
    "inv_income_weighted_coin_endowments",
    "inv_income_weighted_utility",
)
WARMUP_METHODS = ("decay", "auto")
RESOURCES = ("Wood", "Stone")
_SOURCE_NAMES = tuple(r + "SourceBlock" for r in RESOURCES)  # their source maps
MAX_PLACEMENT_TRIES = 200


class WoodAndStoneBase(MaskedActionCheck, BaseEnvironment):
    """Shared behaviour of the simple_wood_and_stone scenarios (not registered itself).

    Args (besides BaseEnvironment's):
        planner_gets_spatial_info: the planner observes the full map and the agents' locations.
        full_observability: agents observe the full map instead of an egocentric window.
        mobile_agent_observation_range: half-width w of the window ((2w+1)^2 cells).
        starting_agent_coin: coin each agent holds at reset (>= 0).
        isoelastic_eta: curvature of the utility of coin, in [0, 1].
        energy_cost: labour cost coefficient (>= 0).
        energy_warmup_constant: annealing constant of the labour cost (0: none).
        energy_warmup_method: ``"decay"`` (completed episodes) or ``"auto"``.
        planner_reward_type: one of :data:`PLANNER_REWARD_TYPES`.
        mixing_weight_gini_vs_coin: 1 - equality weight of ``coin_eq_times_productivity``.
        check_action_masks: reject actions that the last observation's mask disallows.
    """

    agent_subclasses = ["BasicMobileAgent", "BasicPlanner"]
    layout_specs: dict[str, dict[str, float]]

    def __init__(
        self,
        *base_env_args: Any,
        planner_gets_spatial_info: bool = True,
        full_observability: bool = False,
        mobile_agent_observation_range: int = 5,
        starting_agent_coin: float = 0,
        isoelastic_eta: float = 0.23,
        energy_cost: float = 0.21,
        energy_warmup_constant: float = 0,
        energy_warmup_method: str = "decay",
        planner_reward_type: str = "coin_eq_times_productivity",
        mixing_weight_gini_vs_coin: float = 0.0,
        check_action_masks: bool = True,
        **base_env_kwargs: Any,
    ) -> None:
        super().__init__(*base_env_args, **base_env_kwargs)
        who = self.name
        self._planner_gets_spatial_info = bool(planner_gets_spatial_info)
        self._full_observability = bool(full_observability)
        self._mobile_agent_observation_range = check_integer(
            who, "mobile_agent_observation_range", mobile_agent_observation_range, 0
        )
        self.starting_agent_coin = check_number(
            who, "starting_agent_coin", starting_agent_coin, 0.0
        )
        self.isoelastic_eta = check_number(who, "isoelastic_eta", isoelastic_eta, 0.0, 1.0)
        self.energy_cost = check_number(who, "energy_cost", energy_cost, 0.0)
        self.energy_warmup_method = check_choice(
            who, "energy_warmup_method", energy_warmup_method, WARMUP_METHODS
        )
        self.energy_warmup_constant = check_number(
            who, "energy_warmup_constant", energy_warmup_constant, 0.0
        )
        self._auto_warmup_integrator = 0
        if str(planner_reward_type).lower() == "inv_income_weighted_coin_endowment":
            planner_reward_type = "inv_income_weighted_coin_endowments"  # 1.7.1's docstring
        self.planner_reward_type = check_choice(
            who, "planner_reward_type", planner_reward_type, PLANNER_REWARD_TYPES
        )
        self.mixing_weight_gini_vs_coin = check_number(
            who, "mixing_weight_gini_vs_coin", mixing_weight_gini_vs_coin, 0.0, 1.0
        )
        self.check_action_masks = bool(check_action_masks)
        self._source_cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._regrow_cache: dict[str, tuple[tuple, tuple[np.ndarray, np.ndarray]]] = {}
        self._map_cache = MapCache()
        self._table_cache: tuple[list, dynamics.RegrowTable | None, list, list] | None = None
        self._inventory_names = {r: "inventory-" + r for r in self.resources}
        zero = {agent.idx: 0.0 for agent in self.all_agents}
        self.init_optimization_metric = dict(zero)
        self.prev_optimization_metric = dict(zero)
        self.curr_optimization_metric = dict(zero)

    def _check_regen_specs(self) -> None:
        for resource, spec in self.layout_specs.items():
            check_number(self.name, f"{resource} regen weight", spec["regen_weight"], 0.0, 1.0)
            check_integer(self.name, f"{resource} regen halfwidth", spec["regen_halfwidth"], 0, 3)
            check_number(self.name, f"{resource} max health", spec["max_health"], 1e-12)

    # ---------------------------------------------------------------- utility
    @property
    def energy_weight(self) -> float:
        """Annealing progress of the labour cost (multiply with ``energy_cost``)."""
        if self.energy_warmup_constant <= 0.0:
            return 1.0
        progress = (
            self._completions
            if self.energy_warmup_method == "decay"
            else self._auto_warmup_integrator
        )
        return float(1.0 - np.exp(-progress / self.energy_warmup_constant))

    def coin_endowments(self) -> np.ndarray:
        """float64 (n_agents,): inventory + escrow coin of each mobile agent."""
        return np.array(
            [a.state["inventory"]["Coin"] + a.state["escrow"]["Coin"] for a in self.world.agents],
            dtype=np.float64,
        )

    def get_current_optimization_metrics(self) -> dict[Any, float]:
        """Each agent's utility and the planner's social welfare, now."""
        agents = self.world.agents
        coins, labors = [], []  # one pass over the agents
        for a in agents:
            state = a.state
            coins.append(state["inventory"]["Coin"] + state["escrow"]["Coin"])
            labors.append(state["endogenous"]["Labor"])
        k = self.energy_weight * self.energy_cost
        fast = self.isoelastic_eta < 1 and min(coins) >= 0
        if fast and self.planner_reward_type == "coin_eq_times_productivity":
            return self._fast_metrics(agents, coins, labors, k)
        coin, labor = np.array(coins, dtype=np.float64), np.array(labors, dtype=np.float64)
        utilities = rewards.isoelastic_coin_minus_labor(coin, labor, self.isoelastic_eta, k)
        metric: dict[Any, float] = {a.idx: float(u) for a, u in zip(agents, utilities)}
        if self.planner_reward_type == "coin_eq_times_productivity":
            swf = rewards.coin_eq_times_productivity(coin, 1 - self.mixing_weight_gini_vs_coin)
        elif self.planner_reward_type == "inv_income_weighted_coin_endowments":
            swf = rewards.inv_income_weighted_coin_endowments(coin)
        else:
            swf = rewards.inv_income_weighted_utility(coin, utilities)
        metric[self.world.planner.idx] = float(swf)
        return metric

    def _fast_metrics(
        self, agents: list, coins: list[float], labors: list[float], k: float
    ) -> dict[Any, float]:
        """The same formulas as ``rewards.isoelastic_coin_minus_labor`` (eta < 1) and
        ``rewards.coin_eq_times_productivity`` (exact Gini, n < 30) in plain Python floats,
        for the few agents of these scenarios (tests hold them equal to the helpers)."""
        n = len(coins)
        if n >= 30:
            swf = rewards.coin_eq_times_productivity(
                np.array(coins, dtype=np.float64), 1 - self.mixing_weight_gini_vs_coin
            )
        else:
            total = float(sum(coins))
            # every |x - y| in the nested loops' order (x outer), iterated in C
            diff = sum(map(abs, itertools.starmap(operator.sub, itertools.product(coins, coins))))
            gini = diff / (2 * n * total + 1e-10) / ((n - 1) / n)
            w = 1 - self.mixing_weight_gini_vs_coin
            swf = (w * (1 - gini) + 1 - w) * (total / n)
        e1 = 1 - self.isoelastic_eta
        metric: dict[Any, float] = {
            a.idx: float((c**e1 - 1) / e1 - labor * k) for a, c, labor in zip(agents, coins, labors)
        }
        metric[self.world.planner.idx] = float(swf)
        return metric

    # ------------------------------------------------------------------ reset
    def reset_agent_states(self) -> None:
        """Empty inventories, escrow and labour; give the starting coin; place the agents at
        random cells they may occupy (TimeoutError after 200 failed tries for one agent)."""
        world = self.world
        world.clear_agent_locs()
        for agent in world.agents:
            agent.state["inventory"] = dict.fromkeys(agent.inventory, 0)
            agent.state["escrow"] = dict.fromkeys(agent.inventory, 0)
            agent.state["endogenous"] = dict.fromkeys(agent.endogenous, 0)
            agent.state["inventory"]["Coin"] = float(self.starting_agent_coin)
        world.planner.state["inventory"] = dict.fromkeys(world.planner.inventory, 0)
        world.planner.state["escrow"] = dict.fromkeys(world.planner.escrow, 0)
        h, w = self.world_size
        rng = world.rng
        for agent in world.get_random_order_agents():
            for _ in range(MAX_PLACEMENT_TRIES + 2):
                r, c = int(rng.integers(h)), int(rng.integers(w))
                if world.can_agent_occupy(r, c, agent):
                    world.set_agent_loc(agent, r, c)
                    break
            else:
                raise TimeoutError(
                    f"{self.name}: no free accessible cell found for agent {agent.idx} after "
                    f"{MAX_PLACEMENT_TRIES} random tries; the map is too crowded"
                )

    def additional_reset_steps(self) -> None:
        """Start the reward bookkeeping from the reset state."""
        metric = self.get_current_optimization_metrics()
        self.curr_optimization_metric = dict(metric)
        self.init_optimization_metric = dict(metric)
        self.prev_optimization_metric = dict(metric)

    # ------------------------------------------------------------------- step
    def scenario_step(self) -> None:
        """Regrow wood and stone on their source cells (:func:`dynamics.regrow`)."""
        maps = self.world.maps
        table = self._regrow_table()
        if table is not None:
            current = [maps.get(r) for r in RESOURCES]
            grown = dynamics.regrow_from_table(current, table, self.world.rng)
            if grown is not current:
                for resource, before, after in zip(RESOURCES, current, grown):
                    if after is not before:
                        maps.set(resource, after)
            return
        specs = [self.layout_specs[r] for r in RESOURCES]
        if all(int(spec["regen_halfwidth"]) == 0 for spec in specs):
            current = [maps.get(r) for r in RESOURCES]
            cells = [self._source_cells(r) for r in RESOURCES]
            inputs = [self._regrow_inputs(r, spec) for r, spec in zip(RESOURCES, specs)]
            grown = dynamics.regrow_all(
                current, cells, inputs, [s["max_health"] for s in specs], self.world.rng
            )
            for resource, before, after in zip(RESOURCES, current, grown):
                if after is not before:
                    maps.set(resource, after)
            return
        for resource in RESOURCES:
            spec = self.layout_specs[resource]
            current = maps.get(resource)
            grown = dynamics.regrow(
                current,
                maps.get(resource + "SourceBlock"),
                spec["regen_weight"],
                int(spec["regen_halfwidth"]),
                spec["max_health"],
                self.world.rng,
                self._source_cells(resource),
            )
            if grown is not current:
                maps.set(resource, grown)

    def _regrow_table(self) -> dynamics.RegrowTable | None:
        """:func:`dynamics.regrow_table` of wood and stone, kept while neither map, source map
        nor spec changed; None where a ``regen_halfwidth`` is not 0 or the table does not
        apply (the general path then regrows). While no map was written (``Maps.version``)
        and the specs are the same, the maps are not looked at."""
        maps, specs = self.world.maps, self.layout_specs
        quick = [maps.version]
        for r in RESOURCES:
            spec = specs[r]
            quick += [spec["regen_weight"], spec["max_health"], spec["regen_halfwidth"]]
        cached = self._table_cache
        if cached is not None and cached[3] == quick:
            return cached[1]
        key, sources = [], []
        for r, source_name in zip(RESOURCES, _SOURCE_NAMES):
            spec = specs[r]
            sources.append(maps.get(source_name))
            key += [maps.layer_stamp(r), spec["regen_weight"], spec["max_health"]]
            key.append(spec["regen_halfwidth"])
        stale = cached is None or cached[0] != key
        if not stale:  # the same source maps (a loop: no generator frame per step)
            for before, now in zip(cached[2], sources):
                if before is not now:
                    stale = True
                    break
        if stale:
            table = None
            if all(int(specs[r]["regen_halfwidth"]) == 0 for r in RESOURCES):
                cells = [self._source_cells(r) for r in RESOURCES]
                inputs = [self._regrow_inputs(r, specs[r]) for r in RESOURCES]
                table = dynamics.regrow_table(
                    cells, inputs, [specs[r]["max_health"] for r in RESOURCES]
                )
            cached = (key, table, sources)
        else:
            cached = cached[:3]
        self._table_cache = (*cached, quick)
        return cached[1]

    def _source_cells(self, resource: str) -> np.ndarray:
        """Flat indices of the resource's source cells (cached while its map is unchanged)."""
        source = self.world.maps.get(resource + "SourceBlock")
        cached = self._source_cache.get(resource)
        if cached is None or cached[0] is not source:
            cached = (source, np.flatnonzero(source))
            self._source_cache[resource] = cached
        return cached[1]

    def _regrow_inputs(self, resource: str, spec: dict) -> tuple[np.ndarray, np.ndarray]:
        """:func:`dynamics.regrow_inputs` of ``resource``, kept while neither its map
        (``Maps.layer_stamp``), its source cells nor its weight changed."""
        maps = self.world.maps
        source, cells = self._source_cache[resource]
        key = (maps.layer_stamp(resource), cells, spec["regen_weight"])
        cached = self._regrow_cache.get(resource)
        if (
            cached is None
            or cached[0][0] != key[0]
            or cached[0][1] is not cells
            or cached[0][2] != key[2]
        ):
            inputs = dynamics.regrow_inputs(
                maps.get(resource), source.take(cells), cells, spec["regen_weight"]
            )
            cached = self._regrow_cache[resource] = (key, inputs)
        return cached[1]

    def compute_reward(self) -> dict[Any, float]:
        """Change in each agent's utility and in the planner's social welfare."""
        previous = self.curr_optimization_metric
        self.curr_optimization_metric = self.get_current_optimization_metrics()
        rew = {k: float(v - previous[k]) for k, v in self.curr_optimization_metric.items()}
        self.prev_optimization_metric.update(previous)
        if sum([rew[a.idx] for a in self.world.agents]) > 0:  # mean agent reward > 0
            self._auto_warmup_integrator += 1
        return rew

    # ----------------------------------------------------------- observations
    def generate_observations(self) -> dict[str, dict[str, Any]]:
        """Agents: ``map``/``idx_map`` windows (or the full map), ``loc-row``/``loc-col``,
        scaled inventories. Planner: its inventory (and the full maps when spatial);
        ``p<i>``: agent i's inventory (and location when spatial); none with full observability."""
        world = self.world
        maps = world.maps
        scale = self.inv_scale
        agents = world.agents
        names = self._inventory_names
        invs = {
            str(a.idx): {names[k]: v * scale for k, v in a.state["inventory"].items()}
            for a in agents
        }
        planner = {names[k]: v * scale for k, v in world.planner.state["inventory"].items()}
        obs: dict[str, dict[str, Any]] = {world.planner.idx: planner}
        if self._planner_gets_spatial_info or self._full_observability:
            idx_maps = dynamics.agent_idx_maps(maps.owner_state, world.loc_map)
            if self._planner_gets_spatial_info:
                planner["map"] = maps.state
                planner["idx_map"] = idx_maps
        if self._full_observability:
            state = maps.state
            h, w = self.world_size
            for a in agents:
                key = str(a.idx)
                own = np.where(idx_maps == a.idx + 2, np.int16(1), idx_maps)
                obs[key] = {"map": state, "idx_map": own, **invs[key]}
                # 1.7.1 gave the planner no per-agent entries here (reference §10)
                loc = {"loc-row": a.state["loc"][0] / h, "loc-col": a.state["loc"][1] / w}
                obs["p" + key] = (
                    dict(invs[key], **loc) if self._planner_gets_spatial_info else invs[key]
                )
            return obs
        h, w = self.world_size
        r = self._mobile_agent_observation_range
        padded, padded_idx = self._padded_maps(r)
        locs = [a.state["loc"] for a in agents]
        loc_channel = padded_idx[-1]
        for a, (row, col) in zip(agents, locs):
            loc_channel[row + r, col + r] = a.idx + 2
        views = dynamics.egocentric_views(padded, padded_idx, locs, r)
        spatial = self._planner_gets_spatial_info
        for a, (row, col), (view, idx) in zip(agents, locs, views):
            key = str(a.idx)
            loc = {"loc-row": row / h, "loc-col": col / w}
            obs[key] = {"map": view, "idx_map": idx, **loc, **invs[key]}
            obs["p" + key] = dict(invs[key], **loc) if spatial else invs[key]
        return obs

    def observation_writer(self, slots: Any) -> Any:
        """Direct-path writer of :meth:`generate_observations` (``base/direct_obs.py``),
        for egocentric windows (None with full observability)."""
        return writers.scenario_observation_writer(self, slots)

    def _map_state(self) -> np.ndarray:
        """A fresh copy of ``maps.state`` (:class:`MapCache`)."""
        return self._map_cache.state(self.world.maps)

    def _padded_maps(self, w: int) -> tuple[np.ndarray, np.ndarray]:
        """:func:`dynamics.padded_views` of the maps (cached, :class:`MapCache`) and a fresh
        padded index array whose location channel is still empty."""
        return self._map_cache.padded(self.world.maps, w)

    # ---------------------------------------------------------------- metrics
    def scenario_metrics(self) -> dict[str, Any]:
        """Productivity, equality, three social welfares, endowments, labour, utilities."""
        coin = self.coin_endowments()
        utilities = np.array([self.curr_optimization_metric[a.idx] for a in self.world.agents])
        metrics: dict[str, Any] = {
            "social/productivity": float(social_metrics.get_productivity(coin)),
            "social/equality": float(social_metrics.get_equality(coin)),
            "social_welfare/coin_eq_times_productivity": float(
                rewards.coin_eq_times_productivity(coin, 1.0)
            ),
            "social_welfare/inv_income_weighted_coin_endow": float(
                rewards.inv_income_weighted_coin_endowments(coin)
            ),
            "social_welfare/inv_income_weighted_utility": float(
                rewards.inv_income_weighted_utility(coin, utilities)
            ),
        }
        for agent in self.all_agents:
            for resource in agent.inventory:
                metrics[f"endow/{agent.idx}/{resource}"] = agent.total_endowment(resource)
            for name, quantity in agent.endogenous.items():
                metrics[f"endogenous/{agent.idx}/{name}"] = quantity
            metrics[f"util/{agent.idx}"] = self.curr_optimization_metric[agent.idx]
        metrics["labor/weighted_cost"] = self.energy_cost * self.energy_weight
        metrics["labor/warmup_integrator"] = int(self._auto_warmup_integrator)
        return metrics

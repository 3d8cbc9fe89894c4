"""``env.step`` of one COVID-19 env in one pass: the dict API's fast path.

``BaseEnvironment.step`` is general: it checks and parses any action dict, runs every
component's ``component_step``, merges every observation source and collates masks and
rewards.  For the standard configuration (the three COVID-19 components, collated
observations, flattened masks, simulated policies) and the common call (``{"a": int64 (51,),
"p": int}``, no ``seed_state``, an episode that is not dense-logged) :class:`OneEnvStep`
does the same work with the generic bookkeeping left out: the same numpy operations in the
same order on the same operands (so the same bits), the same replay log entry, the same
agent states, observations (keys, order, dtypes), masks, rewards, dones, infos and episode
metrics.  Anything else returns None and the env takes the general path.
``tests/foundation/scenarios/covid19/test_one_env_step.py`` holds the two paths together.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np

from ai_economist.foundation.base.observations import filled
from ai_economist.foundation.scenarios.covid19.env.one_env_model import OneEnvModel
from ai_economist.foundation.scenarios.covid19.model.observations import (
    _AGENT_STATE,
    _one_env_divisors,
)

_INT64 = np.dtype(np.int64)
_ONE_DAY = timedelta(days=1)
_STR_ONLY, _INT_ONLY = {str}, {int}


class OneEnvStep:
    """The one-pass ``step`` of a :class:`CovidAndEconomyEnvironment` (see the module doc).

    Build it with :meth:`build`, which returns None for configurations it does not cover.
    """

    def __init__(
        self, env: Any, open_close: Any, subsidy: Any, vaccination: Any, global_values: Any
    ) -> None:
        self.env, self.world, self.sim = env, env.world, env.world.simulation
        self.model = OneEnvModel(self.sim)
        self.global_values = global_values
        self.open_close, self.subsidy, self.vaccination = open_close, subsidy, vaccination
        self.n_agents = env.n_agents
        self.agent_keys = list(env._agent_keys)
        self.agent_position = {str(a.idx): i for i, a in enumerate(env.world.agents)}
        self.ordered_keys = (*self.agent_position, "p")  # the full form in the usual order
        self.action_name = open_close.name
        planner = env.world.planner
        self.planner, self.planner_noop = planner, planner._noop_action_dict
        self.planner_actions = dict(planner.single_action_map)
        self.num_planner_actions = len(planner.single_action_map)
        self.layout = env._collated_layout
        self.num_agent_actions = len(self.layout.single_map)
        self.agent_values = frozenset(range(self.num_agent_actions + 1))  # the ints allowed
        self.indicators_key = open_close.name + "-agent_policy_indicators"
        self.until_key = subsidy.name + "-t_until_next_subsidy"
        self.level_key = subsidy.name + "-current_subsidy_level"
        self.vaccination_prefix = vaccination.name + "-"
        self._vaccination_table: tuple | None = None
        self._constants_of_value: tuple | None = None
        self._planner_masks: dict[tuple, np.ndarray] = {}

    @classmethod
    def build(cls, env: Any, global_state_values: Any) -> OneEnvStep | None:
        """The fast step of ``env`` (exactly a ``CovidAndEconomyEnvironment``, checked by the
        caller), or None where the general path is needed: other components (or methods
        overridden on the instance), other observation or mask settings, real-world policies
        or data, or agents in multi-action mode.  ``global_state_values(sim)`` returns the
        simulation arrays of one ``global_state`` row, in order."""
        if env._collated_actions_to_agent_dicts():
            return None  # (True: no direct observation plan)
        if env.use_real_world_policies or env.use_real_world_data:
            return None
        if env.world.simulation.num_envs != 1 or env._collated_layout is None:
            return None
        layout, planner = env._collated_layout, env.world.planner
        _, open_close, subsidy = env._fast_observation_plan
        if layout.multi or layout._identity_name != open_close.name or planner.multi_action_mode:
            return None
        overridden = {"step", "scenario_step", "compute_reward", "_generate_observations"}
        if overridden & set(vars(env)) or any(
            {"component_step", "generate_observations"} & set(vars(c)) for c in env._components
        ):
            return None
        vaccination = next(c for c in env._components if c not in (open_close, subsidy))
        if list(env._components) != [open_close, subsidy, vaccination]:
            return None  # the observations' key order follows the published component order
        return cls(env, open_close, subsidy, vaccination, global_state_values)

    # ------------------------------------------------------------------ actions
    def _checked_actions(self, actions: Any) -> tuple[np.ndarray, int, dict] | None:
        """(states' actions, planner's action, the replay log's copy of ``actions``) for the
        two common forms, else None: ``{"a": int64 (A,) in 0..levels, "p": int in 0..levels}``
        (either order), or per-agent ints ``{"0": a0, ..., "p": p}`` as the original's users
        send them (any order, missing agents take the NO-OP, as on the general path)."""
        if type(actions) is not dict:
            return None
        if "a" not in actions:
            return self._per_agent_actions(actions)
        if len(actions) != 2:
            return None
        agent, planner = actions.get("a"), actions.get("p")
        if (
            type(agent) is not np.ndarray
            or agent.dtype is not _INT64
            or agent.shape != (self.n_agents,)
            or type(planner) is not int
            or not 0 <= planner <= self.num_planner_actions
            or np.count_nonzero(agent.view(np.uint64) > self.num_agent_actions)  # (< 0: huge)
        ):
            return None
        if next(iter(actions)) == "a":  # episode_logs.copy_actions, in the caller's order
            return agent, planner, {"a": agent.copy(), "p": planner}
        return agent, planner, {"p": planner, "a": agent.copy()}

    def _per_agent_actions(self, actions: dict) -> tuple[np.ndarray, int, dict] | None:
        """``{str(idx): int, ..., "p": int}`` (Python ints in range, the agents' own string
        keys) as the collated form, or None for anything else (the general path decides).
        Every agent's key in position order, then ``"p"``, is checked with a few C-level
        passes; other orders and subsets go through the loop (the same result)."""
        if tuple(actions) == self.ordered_keys and {*map(type, actions)} == _STR_ONLY:
            values = list(actions.values())  # the agents' in position order, then the planner's
            if {*map(type, values)} == _INT_ONLY:
                planner = values.pop()
                if 0 <= planner <= self.num_planner_actions and {*values} <= self.agent_values:
                    return np.array(values, dtype=np.int64), planner, dict(actions)
        position, limit = self.agent_position, self.num_agent_actions
        values, planner = [0] * self.n_agents, 0
        for key, value in actions.items():
            if type(value) is not int or value < 0:
                return None
            if key == "p":
                if value > self.num_planner_actions:
                    return None
                planner = value
            else:
                i = position.get(key) if type(key) is str else None
                if i is None or value > limit:
                    return None
                values[i] = value
        # copy_actions of a dict of ints: a new dict with the same items, in the same order
        return np.array(values, dtype=np.int64), planner, dict(actions)

    # --------------------------------------------------------------------- step
    def step(self, actions: Any) -> tuple[dict, dict, dict, dict] | None:
        """``env.step(actions)``, or None (nothing changed) where the general path is needed."""
        env, world = self.env, self.world
        if (
            not env._episode_started
            or world.timestep >= env.episode_length
            or env._logger.dense_this_episode
            or self.sim is not world.simulation
            or not self.model.usable()
        ):
            return None
        checked = self._checked_actions(actions)
        if checked is None:
            return None
        agent_actions, planner_action, copied = checked
        # As BaseEnvironment._apply_actions: the states' actions stay out of their dicts.
        self.layout.parsed = parsed = {self.action_name: agent_actions}
        planner = self.planner
        if planner_action:
            name, local = self.planner_actions[planner_action]
            planner.action[name] = local
        world.step_collated_actions = parsed
        env._logger.replay_log["step"].append(
            {"actions": copied, "seed_state": world.rng.bit_generator.state}
        )
        world.timestep = t = world.timestep + 1
        self._component_steps(t, agent_actions)
        self._scenario_step(t)
        obs = self._observations(t)
        agent_rewards, planner_reward = self.model.rewards()
        rew = {"a": agent_rewards[0], "p": planner_reward}
        done = {"__all__": t >= env.episode_length}
        info = {"a": {k: {} for k in self.agent_keys}, "p": {}}
        world.step_collated_actions = None
        planner.action.update(self.planner_noop)
        if done["__all__"]:
            env._logger.finalize(world, env.all_agents, env._components, env.metrics)
            env._completions += 1
        return obs, rew, done, info

    def _component_steps(self, t: int, agent_actions: np.ndarray) -> None:
        """The three components' ``component_step`` (in the published order; they touch
        different state, so the order does not change any value)."""
        sim = self.sim
        sim.timestep.fill(t)
        self.model.open_close(t, agent_actions, self.open_close.action_cooldown_period)
        subsidy = self.subsidy
        interval, max_daily = subsidy.subsidy_interval, subsidy.max_daily_subsidy_per_state
        cached = sim._subsidy_cache  # see ComponentSteps.step_subsidy
        if (
            (t - 1) % interval == 0  # a decision day: the planner's action is read
            or cached is None
            or sim.subsidy is not cached[3]
            or cached[2] is not max_daily
            or cached[1] != subsidy.num_subsidy_levels
            or cached[0] != int(sim.subsidy_level[0])
        ):
            action = self.planner.get_component_action(subsidy.name) or 0
            sim.step_subsidy(np.array([action]), interval, subsidy.num_subsidy_levels, max_daily)
        # else: step_subsidy keeps the level (a new array of the same value) and the amounts
        subsidy.record_planner_state()
        vaccination = self.vaccination
        first, every = vaccination.first_delivery_step, vaccination.delivery_interval
        per_delivery, cached = vaccination._per_delivery, sim._delivery_cache
        if (
            cached is not None
            and cached[1] is per_delivery
            and not per_delivery.flags.writeable
            and cached[0] == (first, every)
        ):
            # ComponentSteps._delivery_table's row of step t (0 <= t <= episode_length here)
            sim.vaccines_available = sim.vaccines_available + cached[2][t]
        else:
            sim.step_vaccination(first, every, per_delivery)

    def _scenario_step(self, t: int) -> None:
        """``CovidAndEconomyEnvironment.scenario_step`` without real-world data."""
        env, sim = self.env, self.sim
        infected_before = sim.infected
        self.model.scenario_step(t)
        env.current_date += _ONE_DAY
        env._infected_pair = (infected_before, sim.infected)
        env._new_deaths = sim.new_deaths[0]
        # CovidAndEconomyEnvironment._record_global_state
        np.concatenate(self.global_values(sim), out=env._global_block[t], casting="same_kind")
        self.world.global_state["Subsidy Level"][t] = sim.subsidy_level[0]

    # ------------------------------------------------------------- observations
    def _observations(self, t: int) -> dict[str, dict[str, Any]]:
        """The observations of ``CovidAndEconomyEnvironment._generate_observations`` (the
        scenario's, then the three components' in the published order, then the masks)."""
        env, sim, n = self.env, self.sim, self.n_agents
        time_value = t / (env.episode_length if env._allow_observation_scaling else 1)
        # one_env_scenario_fields
        p = sim.params
        population, productivity_max, levels = _one_env_divisors(sim)
        state = np.concatenate(_AGENT_STATE(sim), axis=0) / population
        output = sim.postsubsidy_productivity[0] / productivity_max
        lagged = sim.history[0, (t - p.beta_delay + 1) % p.history_len].astype(np.float64) / levels
        agent_index = getattr(env, "_agent_index", None)
        if agent_index is None:
            agent_index = env._agent_index = np.eye(n, dtype=np.float32)
        # the components' generate_observations
        open_close, subsidy = self.open_close, self.subsidy
        indicators = sim.stringency_level[0].astype(np.float64) / open_close._levels_divisor
        interval = subsidy.subsidy_interval
        until = (interval - t % interval) / interval  # observations.t_until_next_subsidy
        level_a, level_p = self._constant_arrays(
            int(sim.subsidy_level[0]) / subsidy.num_subsidy_levels  # as int64 / int
        )
        obs_a = {
            "time": filled(n, time_value),
            "world-agent_index": agent_index.copy(),
            "world-agent_state": state,
            "world-agent_postsubsidy_productivity": output,
            "world-lagged_stringency_level": lagged,
            self.indicators_key: indicators,
            self.until_key: filled(n, until),
            self.level_key: level_a,
        }
        obs_p = {
            "time": filled(1, time_value),
            "world-agent_state": state,
            "world-agent_postsubsidy_productivity": output,
            "world-lagged_stringency_level": lagged,
            self.indicators_key: indicators,
            self.until_key: filled(1, until),
            self.level_key: level_p,
        }
        columns = self._vaccination_columns(t)
        if columns is None:
            prefix = self.vaccination_prefix
            columns = [(prefix + k, {t: v}) for k, v in self.vaccination.observation_values(t)]
        for key, column in columns:
            obs_a[key] = filled(n, column[t])
        for key, column in columns:
            obs_p[key] = filled(1, column[t])
        # the masks, NO-OP first
        mask_a = np.empty((1 + open_close.num_stringency_levels, n), dtype=np.float32)
        mask_a[1:] = t >= sim.cooldown_until[0]  # dynamics.open_close_action_mask
        mask_a[0] = 1.0
        mask_p = self._planner_mask(subsidy.num_subsidy_levels, subsidy.allowed_now())
        obs_a["action_mask"], obs_p["action_mask"] = mask_a, mask_p
        return {"a": obs_a, "p": obs_p}

    def _constant_arrays(self, value: float) -> tuple[np.ndarray, np.ndarray]:
        """New ``filled(n_agents, value)`` and ``filled(1, value)`` arrays, copied from
        templates kept for the last value (one call each instead of two)."""
        cached = self._constants_of_value
        if cached is None or cached[0] != value or value != value:
            cached = (value, filled(self.n_agents, value), filled(1, value))
            self._constants_of_value = cached
        return cached[1].copy(), cached[2].copy()

    def _planner_mask(self, levels: int, allowed: float) -> np.ndarray:
        """``FederalGovernmentSubsidy.generate_masks`` with the NO-OP entry first: a copy of
        the template for these values."""
        key = (levels, allowed)
        template = self._planner_masks.get(key)
        if template is None:
            template = np.empty(1 + levels, dtype=np.float32)
            template.fill(allowed)
            template[0] = 1.0
            if allowed == allowed:  # (a NaN key would never be found again)
                self._planner_masks[key] = template
        return template.copy()

    def _vaccination_columns(self, t: int) -> list[tuple[str, list]] | None:
        """``[(observation key, value of every step)]`` from the component's table while
        ``VaccinationCampaign.observation_values`` would read it, else None."""
        vaccination = self.vaccination
        table = getattr(vaccination, "_observation_table", None)
        if table is None:
            return None
        key = vaccination._table_key()
        if t >= len(table[1][0][1]) or table[0][:-1] != key[:-1] or table[0][-1] is not key[-1]:
            return None
        cached = self._vaccination_table
        if cached is None or cached[0] is not table:
            prefix = self.vaccination_prefix
            cached = self._vaccination_table = (table, [(prefix + k, c) for k, c in table[1]])
        return cached[1]

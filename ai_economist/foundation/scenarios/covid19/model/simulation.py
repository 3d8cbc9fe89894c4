"""Batched numpy COVID-19 & economy simulator: ``num_envs`` environments stepped at once.

This is the array-level model that the Foundation env (``covid19_env.py``), the CPU backend
of ``FoundationEnvWrapper`` and the benchmarks use; the GPU kernels mirror its ``step``
function by function.  All state arrays have shape ``(num_envs, num_agents)`` (or a trailing
axis more); ``step`` takes integer actions and returns the rewards.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ai_economist.foundation.scenarios.covid19.declaration.gpu_state import simulation_state_attrs
from ai_economist.foundation.scenarios.covid19.model import dynamics, observations
from ai_economist.foundation.scenarios.covid19.model.component_params import (  # noqa: F401 (re-exported)
    ComponentParams,
    component_params_from_config,
    real_world_subsidy_levels,
)
from ai_economist.foundation.scenarios.covid19.model.params import CovidParams
from ai_economist.foundation.scenarios.covid19.model.simulation_components import ComponentSteps


class CovidSimulation(ComponentSteps):
    """``num_envs`` COVID-19 & economy environments with the agent axis last."""

    # Every per-env state array (leading axis = env); ``reset_envs`` restores these. Derived
    # from the GPU state declaration (its model state and the step counter).
    STATE_ATTRS = simulation_state_attrs()

    def __init__(
        self,
        params: CovidParams,
        components: ComponentParams,
        num_envs: int = 1,
        use_real_world_policies: bool = False,
        real_world_subsidy_levels: np.ndarray | None = None,  # noqa: F811 (the function is re-exported)
    ) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.params, self.components, self.num_envs = params, components, num_envs
        self._env_index = np.arange(num_envs)
        self.use_real_world_policies = use_real_world_policies
        self.real_subsidy_levels = real_world_subsidy_levels
        self.beta_intercept_modulation = np.ones((num_envs, 1))
        self.beta_slope_modulation = np.ones((num_envs, 1))
        self.unemployment_modulation = np.ones((num_envs, 1))
        self._initial_history: np.ndarray | None = None
        self._initial_filter: np.ndarray | None = None
        self._fresh: CovidSimulation | None = None  # one freshly reset env, for reset_envs
        self._operands_cache: SimpleNamespace | None = None
        self._subsidy_cache: tuple | None = None
        self._delivery_cache: tuple | None = None
        self._modulation_views: tuple | None = None
        self.reset()

    # ------------------------------------------------------------------ reset
    def reset(self) -> None:
        """Every env back to the real-world state of ``start_date``."""
        p, e, a = self.params, self.num_envs, self.params.num_agents
        row = p.start_date_index
        real = p.real_world_data

        def from_data(key: str) -> np.ndarray:
            return np.broadcast_to(np.asarray(real[key][row], dtype=np.float64), (e, a)).copy()

        if self._initial_history is None:  # rows start-filter_len .. start, and their filters
            self._initial_history = p.initial_stringency_history()
            self._initial_filter = dynamics_filter(self._initial_history, p.conv_lambdas)
        history = self._initial_history
        self.timestep = np.zeros(e, dtype=np.int64)
        self.susceptible, self.infected = from_data("susceptible"), from_data("infected")
        self.recovered, self.vaccinated = from_data("recovered"), from_data("vaccinated")
        self.unemployed = from_data("unemployed")
        self.deaths = p.death_rate * self.recovered
        # (E, history_len, A) view of (history_len, E, A) memory: a step reads and writes
        # whole contiguous (E, A) slots
        self.history = np.zeros((p.history_len, e, a), dtype=np.int64).swapaxes(0, 1)
        slots = np.arange(-p.filter_len, 1) % p.history_len
        self.history[:, slots] = history
        self.filter_state = np.broadcast_to(self._initial_filter, (e, a, p.num_filters)).copy()
        self.stringency_level = np.broadcast_to(history[-1], (e, a)).copy()
        self.cooldown_until = np.zeros((e, a), dtype=np.int64)
        self.subsidy_level = np.zeros(e, dtype=np.int64)
        self.subsidy = np.zeros((e, a))
        self.vaccines_available = np.zeros((e, a))
        self.new_deaths = np.zeros((e, a))
        self.productivity = np.zeros((e, a))
        self.postsubsidy_productivity = np.zeros((e, a))
        self.health_index = np.zeros((e, a))
        self.economic_index = np.zeros((e, a))
        self.planner_health_index = np.zeros(e)
        self.planner_economic_index = np.zeros(e)
        self.beta_intercept_modulation[:] = 1.0
        self.beta_slope_modulation[:] = 1.0
        self.unemployment_modulation[:] = 1.0

    def reset_envs(self, env_mask: np.ndarray) -> None:
        """Reset only the envs where ``env_mask`` is true (the others keep their state)."""
        env_mask = np.asarray(env_mask, dtype=bool)
        if env_mask.all():
            self.reset()
            return
        if not env_mask.any():
            return
        if self._fresh is None:  # one freshly reset env, never stepped
            self._fresh = CovidSimulation(
                self.params,
                self.components,
                1,
                self.use_real_world_policies,
                self.real_subsidy_levels,
            )
        for attr in self.STATE_ATTRS:
            value = np.array(getattr(self, attr), copy=True)
            value[env_mask] = getattr(self._fresh, attr)[0]
            setattr(self, attr, value)

    def history_row(self, row: np.ndarray) -> np.ndarray:
        """Stringency levels (E, A) of global row ``row`` (per env) from the ring buffer."""
        slot = np.asarray(row) % self.params.history_len
        return self.history[self._env_index, slot]

    # ------------------------------------------------------------------ step
    # The step functions call the numpy model (``dynamics``) with the cheapest argument forms.
    # When every env is on the same step (always, unless ``reset_envs`` reset some), the step
    # is a Python int and the stringency history rows are plain slices, not gathers.  The
    # model's constants come from ``_operands``: for a single env, (1, A) arrays (the shape of
    # the state, so no op broadcasts) and 0-d arrays for the scalars multiplying arrays (a
    # Python float operand costs numpy more than an array); for a batch, the parameters as
    # they are.  Every elementwise operation is the same, so the results are bitwise equal.
    def _clock(self) -> int | np.ndarray:
        """The step as an int when every env is on the same step, else the (E,) array."""
        t = self.timestep
        t0 = int(t[0])
        if self.num_envs == 1 or (t == t0).all():
            return t0
        return t  # envs on different steps (after reset_envs)

    def _operands(self) -> SimpleNamespace:
        """The model's constants in the shapes that make the ufunc calls cheapest (cached)."""
        p = self.params
        ops = self._operands_cache
        if ops is not None and ops.params is p:
            return ops
        names = (
            "population", "beta_intercepts", "beta_slopes", "unemployment_bias",
            "agents_health_norm", "agents_economic_norm", "min_agent_health",
            "max_agent_health", "min_agent_economic", "max_agent_economic",
            "agent_health_weightage", "maximum_productivity",
        )  # fmt: skip
        scalars = (
            "gamma", "death_rate", "value_of_life", "infection_too_sick_to_work_rate",
            "pop_between_age_18_65", "daily_production_per_worker",
        )  # fmt: skip
        ops = SimpleNamespace(params=p)
        single = self.num_envs == 1
        for name in names:
            value = np.asarray(getattr(p, name))
            setattr(ops, name, value.reshape(1, -1) if single and value.ndim == 1 else value)
        for name in scalars:
            setattr(ops, name, np.array(getattr(p, name), dtype=np.float64))
        # (A, K) decays: with the filters' (E, A, K) layout numpy then loops over A * K
        # contiguous values instead of K = 5 at a time
        shape = (p.num_agents, p.num_filters)
        ops.filter_decay = np.broadcast_to(p.filter_decay, shape).copy()
        ops.filter_weights = p.filter_weights
        if single:
            shape = (1, *shape)
            ops.filter_decay = np.broadcast_to(p.filter_decay, shape).copy()
            ops.filter_weights = np.broadcast_to(p.filter_weights, shape).copy()
        self._operands_cache = ops
        return ops

    def _modulations(self) -> tuple:
        """(beta intercept, beta slope, unemployment) modulations: 0-d views for one env."""
        mods = (
            self.beta_intercept_modulation,
            self.beta_slope_modulation,
            self.unemployment_modulation,
        )
        if self.num_envs != 1:
            return mods
        cached = self._modulation_views
        if (
            cached is None
            or cached[0][0] is not mods[0]
            or cached[0][1] is not mods[1]
            or cached[0][2] is not mods[2]
        ):
            cached = self._modulation_views = (mods, tuple(m.reshape(()) for m in mods))
        return cached[1]

    def step_scenario(self) -> None:
        """SIR, unemployment and economy for step ``self.timestep`` (uses up the vaccines)."""
        p, t, c = self.params, self._clock(), self._operands()
        length = p.history_len
        if isinstance(t, int):  # (E, A) slices of the ring buffer (contiguous, see reset)
            by_slot = self.history.swapaxes(0, 1)
            lagged = by_slot[(t - p.beta_delay) % length]
            dropped = (
                by_slot[(t - p.filter_len) % length] - by_slot[(t - p.filter_len - 1) % length]
            )
            previous = by_slot[(t - 1) % length]
        else:
            lagged = self.history_row(t - p.beta_delay)
            dropped = self.history_row(t - p.filter_len) - self.history_row(t - p.filter_len - 1)
            previous = self.history_row(t - 1)
        # The integer levels enter float64 ops: cast them once here (exact) rather than in
        # numpy's buffered casting of broadcast operands, which goes value by value (the
        # (E, A, K) filter update); for one env only the cheap cast of ``lagged`` pays off.
        lagged = lagged.astype(np.float64)
        batched = self.num_envs > 1
        if batched:
            dropped = dropped.astype(np.float64)
        beta_intercept_modulation, beta_slope_modulation, unemployment_modulation = (
            self._modulations()
        )
        vaccines_available = self.vaccines_available
        self.vaccines_available = np.zeros(vaccines_available.shape)
        (
            self.susceptible,
            self.infected,
            self.recovered,
            self.vaccinated,
            new_deaths_total,
            self.beta,
        ) = dynamics.sir_step(
            self.susceptible,
            self.infected,
            self.recovered,
            self.vaccinated,
            vaccines_available,
            lagged,
            c.beta_intercepts,
            c.beta_slopes,
            beta_intercept_modulation,
            beta_slope_modulation,
            c.population,
            c.gamma,
            c.death_rate,
        )
        self.new_deaths = new_deaths_total - self.deaths
        self.deaths = new_deaths_total
        new_delta = self.stringency_level - previous
        if batched:
            new_delta = new_delta.astype(np.float64)
        if isinstance(t, int):
            by_slot[t % length] = self.stringency_level
        else:
            self.history[self._env_index, t % length] = self.stringency_level
        self.filter_state = dynamics.unemployment_filter_update(
            self.filter_state, new_delta, dropped, c.filter_decay, p.window_decay
        )
        self.unemployed = dynamics.unemployment_step(
            self.filter_state,
            c.filter_weights,
            c.unemployment_bias,
            unemployment_modulation,
            c.population,
        )
        self.productivity = dynamics.economy_step(
            c.population,
            self.infected,
            self.deaths,
            self.unemployed,
            c.infection_too_sick_to_work_rate,
            c.pop_between_age_18_65,
            c.daily_production_per_worker,
        )
        self.postsubsidy_productivity = self.productivity + self.subsidy

    def compute_rewards(self) -> tuple[np.ndarray, np.ndarray]:
        """Agent rewards (E, A) and planner rewards (E,) of the step just taken."""
        p, c = self.params, self._operands()
        new_deaths, postsubsidy_productivity = self.new_deaths, self.postsubsidy_productivity
        single = self.num_envs == 1
        health, economic = dynamics.agent_indices(
            new_deaths,
            postsubsidy_productivity,
            c.value_of_life,
            c.agents_health_norm,
            c.agents_economic_norm,
            p.economic_reward_crra_eta,
            c.min_agent_health,
            c.max_agent_health,
            c.min_agent_economic,
            c.max_agent_economic,
        )
        subsidy = self.subsidy
        if single:  # the planner's indices as np.float64 scalars: cheaper than (1,) arrays
            new_deaths, postsubsidy_productivity, subsidy = (
                new_deaths[0],
                postsubsidy_productivity[0],
                subsidy[0],
            )
        planner_health, planner_economic = dynamics.planner_indices(
            new_deaths,
            postsubsidy_productivity,
            subsidy,
            p.value_of_life,
            p.risk_free_interest_rate,
            p.planner_health_norm,
            p.planner_economic_norm,
            p.economic_reward_crra_eta,
            p.min_planner_health,
            p.max_planner_health,
            p.min_planner_economic,
            p.max_planner_economic,
        )
        self.health_index += health
        self.economic_index += economic
        if single:  # item arithmetic on np.float64 is cheaper than a (1,) ufunc
            self.planner_health_index[0] += planner_health
            self.planner_economic_index[0] += planner_economic
        else:
            self.planner_health_index += planner_health
            self.planner_economic_index += planner_economic
        agent_rewards = dynamics.get_rew(health, economic, c.agent_health_weightage)
        planner_rewards = dynamics.get_rew(
            planner_health, planner_economic, p.planner_health_weightage
        )
        if p.reward_normalization_factor != 1.0:  # x / 1.0 == x: skip the two divisions
            agent_rewards = agent_rewards / p.reward_normalization_factor
            planner_rewards = planner_rewards / p.reward_normalization_factor
        if single:
            planner = np.empty(1)
            planner[0] = planner_rewards
            return agent_rewards, planner
        return agent_rewards, planner_rewards

    def step(
        self, agent_actions: np.ndarray, planner_actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Advance every env by one day. Returns (agent_rewards (E, A), planner_rewards (E,))."""
        self.timestep = self.timestep + 1
        self.step_components(agent_actions, planner_actions)
        self.step_scenario()
        return self.compute_rewards()

    # ------------------------------------------------------------------ observations
    def observation_fields(self) -> dict[str, np.ndarray]:
        """Every observation field of the published configuration, batched over envs."""
        c = self.components
        fields = observations.scenario_observation_fields(self)
        fields.update(observations.open_close_observation_fields(self))
        fields.update(
            observations.subsidy_observation_fields(self, c.subsidy_interval, c.num_subsidy_levels)
        )
        fields.update(
            observations.vaccination_observation_fields(
                self,
                c.first_delivery_step,
                c.delivery_interval,
                c.daily_vaccines_per_million_people,
                c.observe_rate,
            )
        )
        return fields

    def action_masks(self) -> tuple[np.ndarray, np.ndarray]:
        """Flat action masks with the NO-OP column first: agents (E, A, 1 + levels), planner (E, 1, 1 + levels)."""
        p, c, t = self.params, self.components, self.timestep
        e, a = self.num_envs, p.num_agents
        agent = np.ones((e, a, 1 + p.num_stringency_levels), dtype=np.float32)
        if not self.use_real_world_policies:
            agent[:, :, 1:] = dynamics.open_close_action_mask(t, self.cooldown_until)[..., None]
        planner = np.ones((e, 1, 1 + c.num_subsidy_levels), dtype=np.float32)
        planner[:, 0, 1:] = dynamics.subsidy_action_mask(t, c.subsidy_interval)[:, None]
        return agent, planner


def dynamics_filter(history: np.ndarray, conv_lambdas: np.ndarray) -> np.ndarray:
    from ai_economist.foundation.scenarios.covid19.model.params import exact_filter_state

    return exact_filter_state(history, conv_lambdas)

"""COVID-19 and the economy: 51 US states (50 states + DC) and a federal planner, one step a day.

Registered as ``CovidAndEconomySimulation``; the class is ``CovidAndEconomyEnvironment`` (as in
AI Economist 1.7.1, without the activation code).  The dynamics live in ``dynamics.py`` and
are stepped through a one-env :class:`CovidSimulation` held on ``world.simulation``; this
class adapts it to the Foundation API (agents' states, collated observations, rewards,
metrics, dense logs).  Deliberate differences from the original are listed in
``docs/differences.md``.
"""

from __future__ import annotations

import inspect
import operator
from datetime import timedelta

import numpy as np

from ai_economist.datasets.covid19 import load_calibration
from ai_economist.foundation.base.base_env import BaseEnvironment, scenario_registry
from ai_economist.foundation.base.validation import with_keywords
from ai_economist.foundation.scenarios.covid19.env import evaluation_plots
from ai_economist.foundation.scenarios.covid19.env.covid19_env_checks import (
    check_components,
    check_non_negative,
    check_real_world_lengths,
    check_scenario_arguments,
)
from ai_economist.foundation.scenarios.covid19.env.observation_plan import (  # registers the components
    make_observation_plan,
    planned_observations,
)
from ai_economist.foundation.scenarios.covid19.env.one_env_step import OneEnvStep
from ai_economist.foundation.scenarios.covid19.model import metrics as covid_metrics
from ai_economist.foundation.scenarios.covid19.model.observations import one_env_scenario_fields
from ai_economist.foundation.scenarios.covid19.model.params import build_params
from ai_economist.foundation.scenarios.covid19.model.simulation import (
    ComponentParams,
    CovidSimulation,
    real_world_subsidy_levels,
)

GLOBAL_STATE_KEYS = (
    "Susceptible",
    "Infected",
    "Recovered",
    "Deaths",
    "Unemployed",
    "Vaccinated",
    "Stringency Level",
    "Subsidy Level",
    "Subsidy",
    "Postsubsidy Productivity",
)
_GLOBAL_STATE_ATTRS = (  # (key, simulation attribute) of the float32 block in global_state
    ("Susceptible", "susceptible"),
    ("Infected", "infected"),
    ("Recovered", "recovered"),
    ("Deaths", "deaths"),
    ("Unemployed", "unemployed"),
    ("Vaccinated", "vaccinated"),
    ("Stringency Level", "stringency_level"),
    ("Subsidy", "subsidy"),
    ("Postsubsidy Productivity", "postsubsidy_productivity"),
)
_GLOBAL_STATE_VALUES = operator.attrgetter(*(attr for _, attr in _GLOBAL_STATE_ATTRS))
_ONE_DAY = timedelta(days=1)
COMPONENT_NAMES = (
    "ControlUSStateOpenCloseStatus",
    "FederalGovernmentSubsidy",
    "VaccinationCampaign",
)
_COMPONENT_FIELDS = (
    ("action_cooldown_period",),
    ("num_subsidy_levels", "subsidy_interval", "max_daily_subsidy_per_state"),
    ("first_delivery_step", "delivery_interval", "num_vaccines_per_delivery",
     "daily_vaccines_per_million_people", "observe_rate"),
)  # fmt: skip
"""The :class:`ComponentParams` fields each of ``COMPONENT_NAMES`` holds, under the same name."""

SCENARIO_PARAMETERS = tuple(
    p for p in inspect.signature(build_params).parameters.values() if p.default is not p.empty
)
"""The scenario arguments (``start_date`` ...) with their defaults, as ``build_params`` lists
them; ``CovidAndEconomyEnvironment`` takes them through ``**base_env_kwargs``."""


@scenario_registry.add
class CovidAndEconomyEnvironment(BaseEnvironment):
    """The COVID-19 & economy scenario (see the module docstring and spec §4).

    Args (besides the BaseEnvironment arguments):
        use_real_world_data: replay the real S/I/R/D/V and unemployment (needs
            ``use_real_world_policies``).
        use_real_world_policies: ignore actions; apply the real stringency and subsidies.
        path_to_data_and_fitted_params: calibration directory or file ("" = packaged default).
        start_date: first day of the episode (YYYY-MM-DD).
        pop_between_age_18_65: working-age fraction of the population.
        infection_too_sick_to_work_rate: fraction of the infected who cannot work.
        risk_free_interest_rate: the planner repays subsidies with this interest.
        economic_reward_crra_eta: CRRA eta of the economic index (eta == 1 uses the log).
        health_priority_scaling_agents: m_a, rescales the states' fitted health weights.
        health_priority_scaling_planner: m_p, the same for the planner.
        reward_normalization_factor: rewards are divided by it.
    """

    name = "CovidAndEconomySimulation"
    agent_subclasses = ["BasicMobileAgent", "BasicPlanner"]
    required_entities: list[str] = []

    def __init__(
        self,
        *base_env_args,
        use_real_world_data: bool = False,
        use_real_world_policies: bool = False,
        path_to_data_and_fitted_params: str = "",
        **base_env_kwargs,
    ):
        scenario = {p.name: base_env_kwargs.pop(p.name, p.default) for p in SCENARIO_PARAMETERS}
        if base_env_kwargs.get("collate_agent_step_and_reset_data") is False:
            raise ValueError(
                "CovidAndEconomySimulation needs collate_agent_step_and_reset_data=True "
                "(observations, masks and rewards of the 51 states are collated under 'a')"
            )
        base_env_kwargs["collate_agent_step_and_reset_data"] = True
        if use_real_world_data and not use_real_world_policies:
            raise ValueError("use_real_world_data=True needs use_real_world_policies=True")
        self.use_real_world_data = bool(use_real_world_data)
        self.use_real_world_policies = bool(use_real_world_policies)
        self.calibration = load_calibration(path_to_data_and_fitted_params)
        num_states = len(self.calibration.model_constants["US_STATE_POPULATION"])
        n_agents = base_env_kwargs.get("n_agents")
        if n_agents != num_states:
            raise ValueError(
                f"n_agents must be {num_states} (one per US state and DC), got {n_agents!r}"
            )
        super().__init__(*base_env_args, **base_env_kwargs)
        self.params = build_params(
            self.calibration,
            episode_length=self.episode_length,
            **check_scenario_arguments(scenario),
        )
        check_real_world_lengths(
            self.params, self.episode_length, self.use_real_world_policies, self.use_real_world_data
        )
        check_components(self._components_dict, self.params)
        self.world.covid_params = self.params
        self.world.use_real_world_policies = self.use_real_world_policies
        self.world.simulation = CovidSimulation(
            self.params,
            ComponentParams(),
            num_envs=1,
            use_real_world_policies=self.use_real_world_policies,
            real_world_subsidy_levels=self._real_subsidy_levels(),
        )
        self.us_state_population = self.params.population.astype(np.int64)
        self.us_population = self.params.us_population

    def _real_subsidy_levels(self) -> np.ndarray | None:
        subsidy = self._components_dict.get("FederalGovernmentSubsidy")
        if subsidy is None:
            return np.zeros(self.episode_length + 1, dtype=np.int64)
        return real_world_subsidy_levels(
            self.params,
            subsidy.num_subsidy_levels,
            subsidy.subsidy_interval,
            subsidy.max_annual_subsidy_per_person,
        )

    # ------------------------------------------------------------ GPU backends
    def component_params(self) -> ComponentParams:
        """Constants of the three components, for the batched and GPU backends."""
        missing = [name for name in COMPONENT_NAMES if name not in self._components_dict]
        if missing:
            raise ValueError(
                f"batched/GPU backends need the components {list(COMPONENT_NAMES)}; missing {missing}"
            )
        return ComponentParams(
            **{
                field: getattr(self._components_dict[name], field)
                for name, fields in zip(COMPONENT_NAMES, _COMPONENT_FIELDS)
                for field in fields
            }
        )

    def set_parameter_modulations(
        self, beta_intercept=None, beta_slope=None, unemployment=None
    ) -> None:
        """Scale the infection-rate intercepts/slopes and the unemployment response until the next reset."""
        sim = self.world.simulation
        for name, value, target in (
            ("beta_intercept", beta_intercept, sim.beta_intercept_modulation),
            ("beta_slope", beta_slope, sim.beta_slope_modulation),
            ("unemployment", unemployment, sim.unemployment_modulation),
        ):
            if value is not None:
                target[:] = check_non_negative(name, value)

    # ------------------------------------------------------------------ reset
    def reset_starting_layout(self):
        """The map is irrelevant here (world_size is [1, 1])."""

    def reset_agent_states(self):
        """Agents have no location in this scenario."""
        for agent in self.world.agents:
            agent.state["loc"] = [0, 0]

    def additional_reset_steps(self):
        sim, p = self.world.simulation, self.params
        sim.reset()
        self.current_date = p.start_date
        if len(getattr(self, "date_strings", ())) != self.episode_length + 1:
            self.date_strings = [
                (p.start_date + timedelta(days=t)).strftime("%Y-%m-%d")
                for t in range(self.episode_length + 1)
            ]
        # One (steps, keys, A) block, recorded with one copy per step; global_state holds
        # (steps, A) views of it, plus "Subsidy Level" on its own.
        self._global_block = np.zeros(
            (self.episode_length + 1, len(_GLOBAL_STATE_ATTRS), p.num_agents), dtype=np.float32
        )
        self.world.global_state = {
            key: self._global_block[:, k] for k, (key, _) in enumerate(_GLOBAL_STATE_ATTRS)
        }
        self.world.global_state["Subsidy Level"] = np.zeros(
            (self.episode_length + 1, p.num_agents), dtype=np.float32
        )
        self.world.global_state = {key: self.world.global_state[key] for key in GLOBAL_STATE_KEYS}
        self._record_global_state(0)
        previous = p.start_date_index - 1
        real = p.real_world_data
        self._new_infections = sim.infected[0] - (
            real["infected"][previous] if previous >= 0 else 0
        )
        self._new_deaths = sim.deaths[0] - (
            p.death_rate * real["recovered"][previous] if previous >= 0 else 0
        )
        covid_metrics.install_live_states(self)

    # ------------------------------------------------------------------- step
    def step(self, actions=None, seed_state=None):
        """``BaseEnvironment.step``; the common call of the standard configuration takes the
        one-pass path of ``one_env_step.py`` (the same results, bit for bit)."""
        if seed_state is None:
            fast = self._one_env_step
            if fast is None:
                exact = type(self) is CovidAndEconomyEnvironment  # not a subclass
                built = exact and OneEnvStep.build(self, _GLOBAL_STATE_VALUES)
                fast = self._one_env_step = built or False
            if fast:
                out = fast.step(actions)
                if out is not None:
                    return out
        return super().step(actions, seed_state)

    _one_env_step = None  # OneEnvStep (None: not built yet, False: the general path only)

    def scenario_step(self):
        sim, t = self.world.simulation, self.world.timestep
        sim.timestep[:] = t
        infected_before = sim.infected  # the simulation replaces (never mutates) its state
        sim.step_scenario()
        if self.use_real_world_data:
            self._override_with_real_data(t)
        self.current_date += _ONE_DAY
        self._infected_pair = (infected_before, sim.infected)
        self._new_deaths = sim.new_deaths[0]
        self._record_global_state(t)

    @property
    def _new_infections(self) -> np.ndarray:
        """New infections (A,) of the last step (computed when first read)."""
        pair = self._infected_pair
        if isinstance(pair, tuple):
            self._infected_pair = pair = pair[1][0] - pair[0][0]
        return pair

    @_new_infections.setter
    def _new_infections(self, value: np.ndarray) -> None:
        self._infected_pair = value

    def _override_with_real_data(self, t: int) -> None:
        sim, p = self.world.simulation, self.params
        row = p.start_date_index + t
        real = p.real_world_data
        deaths_before = sim.deaths - sim.new_deaths  # D_{t-1}
        for attr, key in (
            ("susceptible", "susceptible"),
            ("infected", "infected"),
            ("recovered", "recovered"),
            ("vaccinated", "vaccinated"),
            ("deaths", "deaths"),
            ("unemployed", "unemployed"),
        ):
            setattr(sim, attr, np.maximum(real[key][row][None].astype(np.float64), 0.0))
        sim.new_deaths = sim.deaths - deaths_before
        sim.productivity = self._economy(sim)
        sim.postsubsidy_productivity = sim.productivity + sim.subsidy

    def _economy(self, sim) -> np.ndarray:
        from ai_economist.foundation.scenarios.covid19.model import dynamics

        p = self.params
        return dynamics.economy_step(
            p.population,
            sim.infected,
            sim.deaths,
            sim.unemployed,
            p.infection_too_sick_to_work_rate,
            p.pop_between_age_18_65,
            p.daily_production_per_worker,
        )

    def _record_global_state(self, t: int) -> None:
        sim = self.world.simulation
        np.concatenate(_GLOBAL_STATE_VALUES(sim), out=self._global_block[t], casting="same_kind")
        self.world.global_state["Subsidy Level"][t] = sim.subsidy_level[0]

    # ------------------------------------------------------------ observations
    def _generate_observations(self):
        """The base env's observations, assembled directly for the standard configuration
        (``observation_plan.py``); any other configuration takes the base env's path."""
        plan = self._fast_observation_plan
        if plan is None:
            plan = self._fast_observation_plan = self._make_fast_observation_plan()
        if plan is False:
            return super()._generate_observations()
        return planned_observations(self, plan)

    _fast_observation_plan = None

    def _collated_actions_to_agent_dicts(self) -> bool:
        """With the standard components (see ``_generate_observations``), the states' actions
        are read from the collated array only, so ``step`` does not write them into (and
        reset) the 51 agents' dicts, except in dense-logged episodes."""
        plan = self._fast_observation_plan
        if plan is None:
            plan = self._fast_observation_plan = self._make_fast_observation_plan()
        return plan is False

    def _make_fast_observation_plan(self):
        """(sources, open/close component, subsidy component), or False for the base path."""
        return make_observation_plan(self, CovidAndEconomyEnvironment)

    def generate_observations(self):
        state, productivity, lagged = one_env_scenario_fields(self.world.simulation)
        agent_index = getattr(self, "_agent_index", None)
        if agent_index is None:
            agent_index = self._agent_index = np.eye(self.n_agents, dtype=np.float32)
        return {
            "a": {
                "agent_index": agent_index.copy(),
                "agent_state": state,
                "agent_postsubsidy_productivity": productivity,
                "lagged_stringency_level": lagged,
            },
            "p": {
                "agent_state": state,
                "agent_postsubsidy_productivity": productivity,
                "lagged_stringency_level": lagged,
            },
        }

    # ----------------------------------------------------------------- reward
    def compute_reward(self):
        agent_rewards, planner_rewards = self.world.simulation.compute_rewards()
        return {"a": agent_rewards[0], "p": float(planner_rewards[0])}

    def scenario_metrics(self):
        return covid_metrics.scenario_metrics(self)

    def batched_backend(self, env_backend, num_envs: int, **options):
        """This scenario's backend for ``FoundationEnvWrapper`` (``backends.build_batched_backend``)."""
        from ai_economist.foundation.scenarios.covid19.backends import build_batched_backend

        return build_batched_backend(self, env_backend, num_envs, **options)

    # ----------------------------------------------------------------- evaluation hooks
    def evaluation_snapshot(self):
        """The episode's per-day global state, for ``evaluate``'s plots (``evaluation_plots``)."""
        return evaluation_plots.scenario_global_state(self)

    def evaluation_level_plots(self, snapshot):
        """Stringency and subsidy levels each day, plotted instead of action indices."""
        return evaluation_plots.covid_level_plots(self, snapshot)

    def write_evaluation_plots(self, snapshot, out_dir):
        """``covid_state.png``: US totals of the episode's state."""
        return evaluation_plots.write_state_plots(snapshot, out_dir)


def _register_kernel_sources() -> None:
    """Tell WarpDrive's default registrar where this scenario's kernels are (no imports of GPU libraries)."""
    from ai_economist.foundation.scenarios.covid19.declaration.gpu_state import (
        BUILD_SOURCE,
        NUMBA_SOURCE,
    )
    from ai_economist.warp_drive.backend_names import EnvBackend
    from ai_economist.warp_drive.registrar import default_registrar

    name = CovidAndEconomyEnvironment.name
    default_registrar.add_cuda_env_src_path(name, BUILD_SOURCE, EnvBackend.PYCUDA.value)
    default_registrar.add_cuda_env_src_path(name, NUMBA_SOURCE, EnvBackend.NUMBA.value)


_register_kernel_sources()


# The scenario keywords are build_params's, defaults included (listed there only).
CovidAndEconomyEnvironment.__init__.__signature__ = with_keywords(
    CovidAndEconomyEnvironment.__init__, SCENARIO_PARAMETERS
)

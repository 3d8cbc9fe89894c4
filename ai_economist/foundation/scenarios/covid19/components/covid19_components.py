"""The three COVID-19 components: state open/close stringency, federal subsidy, vaccination.

Each component is a thin Foundation adapter over the array model in
``ai_economist/foundation/scenarios/covid19``: it reads the agents' actions, calls the matching
``CovidSimulation.step_*`` method (which calls the numpy functions in ``dynamics.py``), and
publishes observations and masks in collated form (``"a"`` arrays with the agent axis last,
``"p"`` for the planner).  The simulation object lives on ``world.simulation`` and is created
by the scenario (``CovidAndEconomyEnvironment``).
"""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace
from typing import Any

import numpy as np

from ai_economist.foundation.base.base_component import BaseComponent, component_registry
from ai_economist.foundation.base.observations import filled
from ai_economist.foundation.scenarios.covid19.model import dynamics, observations


def _check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return int(value)


def _check_number(name: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low}, {high}], got {value}")
    return float(value)


@component_registry.add
class ControlUSStateOpenCloseStatus(BaseComponent):
    """Each US state chooses a stringency level 1..n (0 = keep the current level).

    After a change, the state's actions are masked for ``action_cooldown_period`` days.

    Args:
        n_stringency_levels: number of levels (must match the calibration's, 10).
        action_cooldown_period: days a state must wait between two changes.
    """

    name = "ControlUSStateOpenCloseStatus"
    required_entities: list[str] = []
    agent_subclasses = ["BasicMobileAgent"]

    def __init__(
        self, *base_component_args, n_stringency_levels=10, action_cooldown_period=28, **kwargs
    ):
        super().__init__(*base_component_args, **kwargs)
        self.num_stringency_levels = _check_int("n_stringency_levels", n_stringency_levels, 2)
        self.action_cooldown_period = _check_int(
            "action_cooldown_period", action_cooldown_period, 1
        )

    @property
    def _levels_divisor(self) -> np.ndarray:
        """``num_stringency_levels`` as a 0-d float64 array (the cheapest divisor for numpy)."""
        cached = getattr(self, "_levels_divisor_cache", None)
        if cached is None or cached[0] != self.num_stringency_levels:
            n = self.num_stringency_levels
            self._levels_divisor_cache = cached = (n, np.array(n, dtype=np.float64))
        return cached[1]

    def get_n_actions(self, agent_cls_name):
        return self.num_stringency_levels if agent_cls_name == "BasicMobileAgent" else None

    def get_additional_state_fields(self, agent_cls_name):
        return {}

    def component_step(self):
        sim = self._world.simulation
        sim.timestep.fill(self._world.timestep)
        sim.step_open_close(self.get_agent_actions(), self.action_cooldown_period)

    def generate_observations(self):
        levels = self._world.simulation.stringency_level[0]
        indicators = levels.astype(np.float64) / self._levels_divisor  # as int / int does
        return {
            "a": {"agent_policy_indicators": indicators},
            "p": {"agent_policy_indicators": indicators},
        }

    def generate_masks(self, completions=0):
        mask = np.empty((self.num_stringency_levels, self.n_agents), dtype=np.float32)
        mask[...] = self.allowed_agents()
        return {"a": mask}

    def allowed_agents(self) -> np.ndarray | float:
        """1 for each state that may change its level now (every level alike), else 0:
        a float32 (A,) row, or 1.0 for every state when the real-world policies are applied."""
        sim = self._world.simulation
        if sim.use_real_world_policies:
            return 1.0
        return dynamics.open_close_action_mask(self._world.timestep, sim.cooldown_until[0])

    def get_data_dictionary(self):
        """Constants of this component for GPU backends (see ``covid19/gpu_state.py``)."""
        return {
            "action_cooldown_period": self.action_cooldown_period,
            "num_stringency_levels": self.num_stringency_levels,
        }


@component_registry.add
class FederalGovernmentSubsidy(BaseComponent):
    """The federal planner chooses a subsidy level every ``subsidy_interval`` days.

    The level chosen on the first day of an interval holds for the whole interval
    (the action is the level, so NO-OP means level 0). State i receives
    level / num_subsidy_levels * population_i * max_annual_subsidy_per_person / 365 per day.
    """

    name = "FederalGovernmentSubsidy"
    required_entities: list[str] = []
    agent_subclasses = ["BasicPlanner"]

    def __init__(
        self,
        *base_component_args,
        subsidy_interval=90,
        num_subsidy_levels=20,
        max_annual_subsidy_per_person=20000,
        **kwargs,
    ):
        super().__init__(*base_component_args, **kwargs)
        self.subsidy_interval = _check_int("subsidy_interval", subsidy_interval, 1)
        self.num_subsidy_levels = _check_int("num_subsidy_levels", num_subsidy_levels, 1)
        self.max_annual_subsidy_per_person = _check_number(
            "max_annual_subsidy_per_person", max_annual_subsidy_per_person, 0.0, 1e9
        )

    @property
    def max_daily_subsidy_per_state(self) -> np.ndarray:
        """population * max_annual_subsidy_per_person / 365 per state (read-only, cached)."""
        params, per_person = self.world.covid_params, self.max_annual_subsidy_per_person
        cached = getattr(self, "_max_daily_cache", None)
        if cached is None or cached[0] is not params or cached[1] != per_person:
            value = params.population * per_person / 365.0
            value.flags.writeable = False
            self._max_daily_cache = cached = (params, per_person, value)
        return cached[2]

    def get_n_actions(self, agent_cls_name):
        return self.num_subsidy_levels if agent_cls_name == "BasicPlanner" else None

    def get_additional_state_fields(self, agent_cls_name):
        if agent_cls_name == "BasicPlanner":
            return {"Total Subsidy": 0.0, "Current Subsidy Level": 0}
        return {}

    def component_step(self):
        world = self._world
        sim, planner = world.simulation, world.planner
        sim.timestep.fill(world.timestep)
        action = planner.get_component_action(self.name) or 0
        sim.step_subsidy(
            np.array([action]),
            self.subsidy_interval,
            self.num_subsidy_levels,
            self.max_daily_subsidy_per_state,
        )
        self.record_planner_state()

    def record_planner_state(self) -> None:
        """The planner's "Current Subsidy Level" and "Total Subsidy" after this step's subsidy."""
        sim, state = self._world.simulation, self._world.planner.state
        state["Current Subsidy Level"] = int(sim.subsidy_level[0])
        subsidy, cached = sim.subsidy, getattr(self, "_subsidy_sum", None)
        if cached is None or cached[0] is not subsidy or subsidy.flags.writeable:
            cached = self._subsidy_sum = (subsidy, float(subsidy.sum()))
        state["Total Subsidy"] += cached[1]

    def generate_observations(self):
        world, n = self._world, self.n_agents
        until = float(observations.t_until_next_subsidy(world.timestep, self.subsidy_interval))
        level = float(
            observations.current_subsidy_level(
                world.simulation.subsidy_level[0], self.num_subsidy_levels
            )
        )
        return {
            "a": {
                "t_until_next_subsidy": filled(n, until),
                "current_subsidy_level": filled(n, level),
            },
            "p": {
                "t_until_next_subsidy": filled(1, until),
                "current_subsidy_level": filled(1, level),
            },
        }

    def generate_masks(self, completions=0):
        mask = np.empty(self.num_subsidy_levels, dtype=np.float32)
        mask.fill(self.allowed_now())
        return {"p": mask}

    def allowed_now(self) -> float:
        """1.0 when the planner's next action is read (every level alike), else 0.0."""
        t = self._world.timestep
        table = getattr(self, "_mask_table", None)  # the mask of every step, built at reset
        if table is not None and t < len(table[1]) and table[0] == self.subsidy_interval:
            return table[1][t]
        return float(dynamics.subsidy_action_mask(t, self.subsidy_interval))

    def additional_reset_steps(self):
        steps = np.arange(self.episode_length + 1)
        self._mask_table = (
            self.subsidy_interval,
            dynamics.subsidy_action_mask(steps, self.subsidy_interval).tolist(),
        )

    def get_data_dictionary(self):
        """Constants of this component for GPU backends."""
        return {
            "subsidy_interval": self.subsidy_interval,
            "num_subsidy_levels": self.num_subsidy_levels,
            "max_daily_subsidy_per_state": self.max_daily_subsidy_per_state,
        }


@component_registry.add
class VaccinationCampaign(BaseComponent):
    """Vaccines delivered to every state from ``vaccine_delivery_start_date`` on (passive).

    Every ``delivery_interval`` days each state receives
    floor(delivery_interval * population / 1e6 * daily_vaccines_per_million_people) doses.
    """

    name = "VaccinationCampaign"
    required_entities: list[str] = []
    agent_subclasses = ["BasicMobileAgent"]

    def __init__(
        self,
        *base_component_args,
        daily_vaccines_per_million_people=4500,
        delivery_interval=1,
        vaccine_delivery_start_date="2020-12-22",
        observe_rate=False,
        **kwargs,
    ):
        super().__init__(*base_component_args, **kwargs)
        self.daily_vaccines_per_million_people = _check_number(
            "daily_vaccines_per_million_people", daily_vaccines_per_million_people, 0.0, 1e6
        )
        self.delivery_interval = _check_int("delivery_interval", delivery_interval, 1, 5000)
        try:
            self.vaccine_delivery_start_date = datetime.strptime(
                vaccine_delivery_start_date, "%Y-%m-%d"
            )
        except (TypeError, ValueError):
            raise ValueError(
                f"vaccine_delivery_start_date={vaccine_delivery_start_date!r} is not a YYYY-MM-DD date"
            ) from None
        self.observe_rate = bool(observe_rate)

    @property
    def first_delivery_step(self) -> int:
        params, start = self.world.covid_params, self.vaccine_delivery_start_date
        cached = getattr(self, "_first_delivery_cache", None)
        if cached is None or cached[0] is not params or cached[1] != start:
            self._first_delivery_cache = cached = (params, start, (start - params.start_date).days)
        return cached[2]

    @property
    def num_vaccines_per_delivery(self) -> np.ndarray:
        return np.floor(
            self.delivery_interval
            * self.world.covid_params.population
            / 1e6
            * self.daily_vaccines_per_million_people
        )

    def get_n_actions(self, agent_cls_name):
        return None

    def get_additional_state_fields(self, agent_cls_name):
        # "Total Vaccinated" and "Vaccines Available" are live keys of the scenario's agent states.
        return {}

    def additional_reset_steps(self):
        self._per_delivery = self.num_vaccines_per_delivery
        self._per_delivery.flags.writeable = False  # constant: the simulation may tabulate it
        # The observations depend on the step only: evaluate them for every step at once.
        steps = np.arange(self.episode_length + 1)
        fields = observations.vaccination_observation_fields(
            SimpleNamespace(timestep=steps),
            self.first_delivery_step,
            self.delivery_interval,
            self.daily_vaccines_per_million_people,
            self.observe_rate,
        )
        self._observation_table = (
            self._table_key(),
            [
                (k.split("-", 1)[1], np.broadcast_to(v, steps.shape).tolist())
                for k, v in fields.items()
            ],
        )

    def _table_key(self) -> tuple:
        """What the observation table depends on (besides the step)."""
        return (
            self.vaccine_delivery_start_date,
            self.delivery_interval,
            self.daily_vaccines_per_million_people,
            self.observe_rate,
            self._world.covid_params,  # compared by identity (dataclass ==)
        )

    def component_step(self):
        world = self._world
        sim = world.simulation
        sim.timestep.fill(world.timestep)
        sim.step_vaccination(self.first_delivery_step, self.delivery_interval, self._per_delivery)

    def generate_observations(self):
        n, values = self.n_agents, self.observation_values(self._world.timestep)
        return {
            "a": {k: filled(n, v) for k, v in values},
            "p": {k: filled(1, v) for k, v in values},
        }

    def observation_values(self, t: int) -> list[tuple[str, float]]:
        """``[(key, value)]`` of the observations at step ``t`` (the same for every agent),
        from the table built at reset while it is valid."""
        table = getattr(self, "_observation_table", None)
        if table is not None:
            key = self._table_key()
            if (
                t < len(table[1][0][1])
                and table[0][:-1] == key[:-1]
                and table[0][-1] is key[-1]  # the params by identity
            ):
                return [(k, column[t]) for k, column in table[1]]
        fields = observations.vaccination_observation_fields(
            SimpleNamespace(timestep=np.array([t])),
            self.first_delivery_step,
            self.delivery_interval,
            self.daily_vaccines_per_million_people,
            self.observe_rate,
        )
        return [(k.split("-", 1)[1], float(np.reshape(v, -1)[0])) for k, v in fields.items()]

    def generate_masks(self, completions=0):
        return {}  # no actions

    def get_data_dictionary(self):
        """Constants of this component for GPU backends."""
        return {
            "num_vaccines_per_delivery": self.num_vaccines_per_delivery,
            "delivery_interval": self.delivery_interval,
            "time_when_vaccine_delivery_begins": self.first_delivery_step,
        }

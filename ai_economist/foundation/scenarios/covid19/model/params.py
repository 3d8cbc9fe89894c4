"""Parameters of the COVID-19 & economy model, derived once from a calibration and the env config.

``CovidParams`` is shared by every backend: the Foundation env (dict API), the batched numpy
simulator and the GPU kernels (through the data dictionary), so each derived constant
(daily production per worker, maximum productivity, reward norms, priority-scaled weights,
filter decays) is computed in exactly one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from ai_economist.datasets.covid19 import CalibrationError, CovidCalibration
from ai_economist.datasets.covid19.physical import check_start_state
from ai_economist.foundation.scenarios.covid19.model import dynamics

NUM_DAYS_IN_AN_YEAR = 365


def parse_date(value: str, date_format: str, name: str) -> datetime:
    try:
        return datetime.strptime(value, date_format)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={value!r} is not a date in the format {date_format!r}") from None


@dataclass
class CovidParams:
    """Scenario constants (arrays have the agent axis last; A = number of US states)."""

    num_agents: int
    episode_length: int
    start_date: datetime
    start_date_index: int
    state_names: list[str]
    population: np.ndarray  # (A,)
    us_population: int
    gamma: float
    death_rate: float
    num_stringency_levels: int
    beta_delay: int
    beta_slopes: np.ndarray  # (A,)
    beta_intercepts: np.ndarray  # (A,)
    filter_len: int
    conv_lambdas: np.ndarray  # (K,)
    filter_weights: np.ndarray  # (A, K)
    filter_decay: np.ndarray  # (K,) exp(-1/lambda)
    window_decay: np.ndarray  # (K,) exp(-filter_len/lambda)
    unemployment_bias: np.ndarray  # (A,)
    infection_too_sick_to_work_rate: float
    pop_between_age_18_65: float
    daily_production_per_worker: float
    maximum_productivity: np.ndarray  # (A,)
    value_of_life: float
    economic_reward_crra_eta: float
    risk_free_interest_rate: float
    agents_health_norm: np.ndarray  # (A,)
    agents_economic_norm: np.ndarray  # (A,)
    planner_health_norm: float
    planner_economic_norm: float
    min_agent_health: np.ndarray
    max_agent_health: np.ndarray
    min_agent_economic: np.ndarray
    max_agent_economic: np.ndarray
    min_planner_health: float
    max_planner_health: float
    min_planner_economic: float
    max_planner_economic: float
    agent_health_weightage: np.ndarray  # (A,) alpha' after priority scaling
    planner_health_weightage: float
    reward_normalization_factor: float
    # Real-world data, rows = days since POLICY_START_DATE.
    real_policy: np.ndarray  # (days, A) int
    real_subsidy: np.ndarray  # (days,)
    real_world_data: dict

    @property
    def num_filters(self) -> int:
        return len(self.conv_lambdas)

    @property
    def history_len(self) -> int:
        """Rows of stringency history kept: filter_len + 1 (the filter needs filter_len deltas)."""
        return self.filter_len + 1

    def real_policy_row(self, index: np.ndarray | int) -> np.ndarray:
        """Real stringency level at policy row ``index`` (all ones before the first row)."""
        index = np.asarray(index)
        clipped = np.clip(index, 0, len(self.real_policy) - 1)
        rows = self.real_policy[clipped]
        return np.where((index < 0)[..., None] if index.ndim else index < 0, 1, rows)

    def initial_stringency_history(self) -> np.ndarray:
        """(history_len, A): the real policy of the rows start-filter_len .. start (padded with 1s)."""
        rows = np.arange(self.start_date_index - self.filter_len, self.start_date_index + 1)
        return self.real_policy_row(rows).astype(np.int64)


def exact_filter_state(history: np.ndarray, conv_lambdas: np.ndarray) -> np.ndarray:
    """Filter state (A, K) of a (filter_len + 1, A) stringency history by direct convolution."""
    deltas = np.diff(history.astype(np.float64), axis=0)  # (filter_len, A), oldest first
    ages = np.arange(len(deltas))[::-1].astype(np.float64)  # newest delta has age 0
    weights = np.exp(-ages[:, None] / conv_lambdas[None, :])  # (filter_len, K)
    return deltas.T @ weights


def build_params(
    calibration: CovidCalibration,
    *,
    episode_length: int,
    start_date: str = "2020-03-22",
    pop_between_age_18_65: float = 0.6,
    infection_too_sick_to_work_rate: float = 0.1,
    risk_free_interest_rate: float = 0.03,
    economic_reward_crra_eta: float = 2.0,
    health_priority_scaling_agents: float = 1.0,
    health_priority_scaling_planner: float = 1.0,
    reward_normalization_factor: float = 1.0,
) -> CovidParams:
    """Derive every model constant from a calibration and the scenario arguments."""
    mc, fp = calibration.model_constants, calibration.fitted_params
    date_format = mc["DATE_FORMAT"]
    start = parse_date(start_date, date_format, "start_date")
    policy_start = parse_date(fp["POLICY_START_DATE"], date_format, "POLICY_START_DATE")
    if start < policy_start:
        raise ValueError(
            f"start_date={start_date!r} is before the data's POLICY_START_DATE {fp['POLICY_START_DATE']}"
        )
    start_index = (start - policy_start).days
    real = calibration.real_world_data
    if start_index >= len(real["policy"]):
        raise ValueError(
            f"start_date={start_date!r} is after the last day of the real-world data "
            f"({len(real['policy'])} days from {fp['POLICY_START_DATE']})"
        )
    check_start_state(
        CalibrationError,
        calibration.source,
        real,
        start_index,
        start_date,
        lambda day: (policy_start + timedelta(days=day)).strftime(date_format),
        calibration.state_names,
    )

    population = np.asarray(mc["US_STATE_POPULATION"], dtype=np.float64)
    us_population = int(mc["US_POPULATION"])
    lambdas = np.asarray(fp["CONV_LAMBDAS"], dtype=np.float64)
    num_agents = len(population)
    weights = np.asarray(fp["GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS"], dtype=np.float64).reshape(
        num_agents, len(lambdas)
    )
    bias = np.asarray(fp["UNEMPLOYMENT_BIAS"], dtype=np.float64)
    filter_len = int(fp["FILTER_LEN"])

    # Baseline unemployment (no stringency change at all) defines the workforce and the
    # productivity of a fully open economy.
    baseline_unemployed = dynamics.unemployment_step(
        np.zeros((num_agents, len(lambdas))), weights, bias, 1.0, population
    )
    workforce = int(us_population * pop_between_age_18_65 - baseline_unemployed.sum())
    daily_production_per_worker = (
        float(mc["GDP_PER_CAPITA"]) / (workforce / us_population) / NUM_DAYS_IN_AN_YEAR
    )
    zeros = np.zeros(num_agents)
    maximum_productivity = dynamics.economy_step(
        population,
        zeros,
        zeros,
        baseline_unemployed,
        infection_too_sick_to_work_rate,
        pop_between_age_18_65,
        daily_production_per_worker,
    )
    agents_norm = maximum_productivity * NUM_DAYS_IN_AN_YEAR
    return CovidParams(
        num_agents=num_agents,
        episode_length=int(episode_length),
        start_date=start,
        start_date_index=start_index,
        state_names=calibration.state_names,
        population=population,
        us_population=us_population,
        gamma=float(mc["SIR_GAMMA"]),
        death_rate=float(mc["SIR_MORTALITY"]),
        num_stringency_levels=int(mc["NUM_STRINGENCY_LEVELS"]),
        beta_delay=int(fp["BETA_DELAY"]),
        beta_slopes=np.asarray(fp["BETA_SLOPES"], dtype=np.float64),
        beta_intercepts=np.asarray(fp["BETA_INTERCEPTS"], dtype=np.float64),
        filter_len=filter_len,
        conv_lambdas=lambdas,
        filter_weights=weights,
        filter_decay=np.exp(-1.0 / lambdas),
        window_decay=np.exp(-filter_len / lambdas),
        unemployment_bias=bias,
        infection_too_sick_to_work_rate=float(infection_too_sick_to_work_rate),
        pop_between_age_18_65=float(pop_between_age_18_65),
        daily_production_per_worker=daily_production_per_worker,
        maximum_productivity=maximum_productivity,
        value_of_life=float(fp["VALUE_OF_LIFE"]),
        economic_reward_crra_eta=float(economic_reward_crra_eta),
        risk_free_interest_rate=float(risk_free_interest_rate),
        agents_health_norm=agents_norm,
        agents_economic_norm=agents_norm.copy(),
        planner_health_norm=float(agents_norm.sum()),
        planner_economic_norm=float(agents_norm.sum()),
        min_agent_health=np.asarray(fp["MIN_MARGINAL_AGENT_HEALTH_INDEX"], dtype=np.float64),
        max_agent_health=np.asarray(fp["MAX_MARGINAL_AGENT_HEALTH_INDEX"], dtype=np.float64),
        min_agent_economic=np.asarray(fp["MIN_MARGINAL_AGENT_ECONOMIC_INDEX"], dtype=np.float64),
        max_agent_economic=np.asarray(fp["MAX_MARGINAL_AGENT_ECONOMIC_INDEX"], dtype=np.float64),
        min_planner_health=float(fp["MIN_MARGINAL_PLANNER_HEALTH_INDEX"]),
        max_planner_health=float(fp["MAX_MARGINAL_PLANNER_HEALTH_INDEX"]),
        min_planner_economic=float(fp["MIN_MARGINAL_PLANNER_ECONOMIC_INDEX"]),
        max_planner_economic=float(fp["MAX_MARGINAL_PLANNER_ECONOMIC_INDEX"]),
        agent_health_weightage=dynamics.scale_health_priority(
            fp["INFERRED_WEIGHTAGE_ON_AGENT_HEALTH_INDEX"], health_priority_scaling_agents
        ),
        planner_health_weightage=float(
            dynamics.scale_health_priority(
                fp["INFERRED_WEIGHTAGE_ON_PLANNER_HEALTH_INDEX"], health_priority_scaling_planner
            )
        ),
        reward_normalization_factor=float(reward_normalization_factor),
        real_policy=np.asarray(real["policy"]).astype(np.int64),
        real_subsidy=np.asarray(real["subsidy"], dtype=np.float64).reshape(-1),
        real_world_data=real,
    )

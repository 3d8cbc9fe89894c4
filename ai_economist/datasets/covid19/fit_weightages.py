"""The health/economic weightages (alpha) and the index normalisation constants.

The original notebook's section 3: the simulator, with the newly fitted beta and unemployment
parameters and placeholder normalisation (min 0, max 1, alpha 0.5), runs three policies from
``start_date`` to the last validation day: every state fully open (level 1), fully closed
(the top level) and the actual policy (taken as the states' actions; the planner takes no
action, so there is no subsidy). The per-day mean Health and Economic Index of each state and
of the planner give

* MAX economic = open, MIN economic = closed, MAX health = closed, MIN health = open;
* alpha: with the three points normalised by these, the frontier ``e = (1 - h^p)^(1/p)``
  (``p >= 1.001``) through them, and the alpha in 0, 0.001, ..., 1 whose optimum of
  ``alpha h + (1 - alpha) e`` on that frontier is nearest the actual point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ai_economist.datasets.covid19.fit_data import FitError
from ai_economist.datasets.covid19.loader import CovidCalibration

# The component settings of the original's calibration environment.
CALIBRATION_COMPONENTS = {
    "action_cooldown_period": 28,
    "num_subsidy_levels": 20,
    "subsidy_interval": 90,
    "max_annual_subsidy_per_person": 20000.0,
    "daily_vaccines_per_million_people": 3000.0,
    "delivery_interval": 1,
    "vaccine_delivery_start_date": "2021-01-12",
}
# The scenario settings the calibration depends on (``settings.env`` of fitted_params.json).
DEFAULT_ENV_SETTINGS = {
    "economic_reward_crra_eta": 2,
    "start_date": "2020-03-22",
    "infection_too_sick_to_work_rate": 0.1,
    "pop_between_age_18_65": 0.6,
    "risk_free_interest_rate": 0.03,
}
PLACEHOLDERS = {
    "VALUE_OF_LIFE": 10000000,
    "INFERRED_WEIGHTAGE_ON_AGENT_HEALTH_INDEX": 0.5,
    "INFERRED_WEIGHTAGE_ON_PLANNER_HEALTH_INDEX": 0.5,
    "MAX_MARGINAL_AGENT_ECONOMIC_INDEX": 1.0,
    "MAX_MARGINAL_PLANNER_ECONOMIC_INDEX": 1.0,
    "MAX_MARGINAL_AGENT_HEALTH_INDEX": 1.0,
    "MAX_MARGINAL_PLANNER_HEALTH_INDEX": 1.0,
    "MIN_MARGINAL_AGENT_ECONOMIC_INDEX": 0.0,
    "MIN_MARGINAL_PLANNER_ECONOMIC_INDEX": 0.0,
    "MIN_MARGINAL_AGENT_HEALTH_INDEX": 0.0,
    "MIN_MARGINAL_PLANNER_HEALTH_INDEX": 0.0,
}
POLICIES = ("open", "closed", "actual")


def with_placeholders(fitted: dict, num_states: int) -> dict:
    """``fitted`` plus the placeholder weightages/normalisation (per-state keys as arrays)."""
    out = dict(fitted)
    for key, value in PLACEHOLDERS.items():
        per_state = "AGENT" in key
        out[key] = np.full(num_states, float(value)) if per_state else value
    return out


def run_policies(
    calibration: CovidCalibration, env: dict, last_day_row: int
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Mean daily (health, economic) index per state and planner (last entry) per policy."""
    from ai_economist.foundation.scenarios.covid19.model.component_params import (
        component_params_from_config,
    )
    from ai_economist.foundation.scenarios.covid19.model.params import build_params, parse_date
    from ai_economist.foundation.scenarios.covid19.model.simulation import CovidSimulation

    date_format = calibration.model_constants["DATE_FORMAT"]
    start = parse_date(env["start_date"], date_format, "settings.env.start_date")
    policy_start = parse_date(
        calibration.fitted_params["POLICY_START_DATE"], date_format, "POLICY_START_DATE"
    )
    start_row = (start - policy_start).days
    length = last_day_row - start_row
    if length < 1:
        raise FitError(
            f"the alpha calibration runs from settings.env.start_date={env['start_date']} to the "
            f"last validation day; expected a start date before it (got {length} days)"
        )
    params = build_params(calibration, episode_length=length, **env)
    components = component_params_from_config(params, **CALIBRATION_COMPONENTS)
    sim = CovidSimulation(params, components, num_envs=len(POLICIES))
    top = params.num_stringency_levels
    for t in range(1, length + 1):
        actual = params.real_policy_row(start_row + t - 1)
        actions = np.stack([np.ones_like(actual), np.full_like(actual, top), actual])
        sim.step(actions.astype(np.int64), np.zeros(len(POLICIES), dtype=np.int64))
    results = {}
    for e, name in enumerate(POLICIES):
        health = np.append(sim.health_index[e], sim.planner_health_index[e]) / length
        economic = np.append(sim.economic_index[e], sim.planner_economic_index[e]) / length
        results[name] = (health, economic)
    return results


def fit_frontier_power(nh: float, ne: float, low: float = 1.001, high: float = 1000.0) -> float:
    """The p >= 1.001 minimising ((1 - nh^p)^(1/p) - ne)^2 (the frontier through the point)."""
    grid = np.geomspace(low, high, 2001)

    def loss(p: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            value = ((1.0 - nh**p) ** (1.0 / p) - ne) ** 2
        return np.where(np.isfinite(value), value, np.inf)

    values = loss(grid)
    best = int(np.argmin(values))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    for _ in range(80):  # golden-section refinement inside the bracketing grid cells
        a, b = lo + 0.382 * (hi - lo), lo + 0.618 * (hi - lo)
        if loss(np.array(a)) <= loss(np.array(b)):
            hi = b
        else:
            lo = a
    return float(0.5 * (lo + hi))


def infer_alpha(actual: tuple, closed: tuple, opened: tuple) -> float:
    """The weight on health that best rationalises the actual (health, economic) outcome."""
    max_h, min_e = closed
    min_h, max_e = opened
    if not (max_h > min_h and max_e > min_e):
        raise FitError(
            f"the fully closed policy must give more health and less economy than the fully "
            f"open one; got health {max_h:.6g} vs {min_h:.6g}, economy {min_e:.6g} vs {max_e:.6g}"
        )
    nh = (actual[0] - min_h) / (max_h - min_h)
    ne = (actual[1] - min_e) / (max_e - min_e)
    power = fit_frontier_power(nh, ne)
    share = np.linspace(0.0, 1.0, 1001)
    hs, es = share ** (1.0 / power), (1.0 - share) ** (1.0 / power)
    alphas = np.linspace(0.0, 1.0, 1001)
    best = np.argmax(alphas[:, None] * hs[None] + (1.0 - alphas[:, None]) * es[None], axis=1)
    distance = np.hypot(nh - hs[best], ne - es[best])
    return float(alphas[int(np.argmin(distance))])


@dataclass
class WeightageFit:
    """Inferred weightages and the normalisation constants (planner = the scalars)."""

    values: dict
    indices: dict[str, tuple[np.ndarray, np.ndarray]]


def fit_weightages(calibration: CovidCalibration, env: dict, last_day_row: int) -> WeightageFit:
    """Run the three policies and derive the eight min/max constants and the alphas."""
    results = run_policies(calibration, env, last_day_row)
    (open_h, open_e), (closed_h, closed_e) = results["open"], results["closed"]
    actual_h, actual_e = results["actual"]
    names = calibration.state_names + ["planner"]
    alphas = []
    for i, name in enumerate(names):
        try:
            alphas.append(
                infer_alpha(
                    (actual_h[i], actual_e[i]), (closed_h[i], closed_e[i]), (open_h[i], open_e[i])
                )
            )
        except FitError as err:
            raise FitError(f"alpha calibration for {name}: {err}") from None
    values = {
        "MAX_MARGINAL_AGENT_ECONOMIC_INDEX": open_e[:-1].tolist(),
        "MAX_MARGINAL_PLANNER_ECONOMIC_INDEX": float(open_e[-1]),
        "MAX_MARGINAL_AGENT_HEALTH_INDEX": closed_h[:-1].tolist(),
        "MAX_MARGINAL_PLANNER_HEALTH_INDEX": float(closed_h[-1]),
        "MIN_MARGINAL_AGENT_ECONOMIC_INDEX": closed_e[:-1].tolist(),
        "MIN_MARGINAL_PLANNER_ECONOMIC_INDEX": float(closed_e[-1]),
        "MIN_MARGINAL_AGENT_HEALTH_INDEX": open_h[:-1].tolist(),
        "MIN_MARGINAL_PLANNER_HEALTH_INDEX": float(open_h[-1]),
        "INFERRED_WEIGHTAGE_ON_AGENT_HEALTH_INDEX": alphas[:-1],
        "INFERRED_WEIGHTAGE_ON_PLANNER_HEALTH_INDEX": alphas[-1],
    }
    return WeightageFit(values, results)

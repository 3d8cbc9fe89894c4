"""Compare calibrations: one episode of a policy, day by day, under each.

:func:`policy_episode` runs the batched numpy simulator from ``start_date`` with the
real-world stringency policy (or every state at one fixed level) and returns the daily
US-wide deaths and unemployment, so two calibrations (the packaged one and a re-fit) can be
compared on the same policy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ai_economist.datasets.covid19.loader import CovidCalibration


@dataclass
class EpisodeOutcome:
    """Daily outcomes (row 0 = the start date), summed over the states."""

    deaths: np.ndarray  # (days + 1,) cumulative deaths
    unemployed: np.ndarray  # (days + 1,) unemployed people
    infected: np.ndarray  # (days + 1,)


def policy_episode(
    calibration: CovidCalibration,
    episode_length: int,
    start_date: str = "2020-03-22",
    level: int | None = None,
) -> EpisodeOutcome:
    """Simulate ``episode_length`` days; ``level=None`` replays the real-world stringency."""
    from ai_economist.foundation.scenarios.covid19.model.component_params import (
        component_params_from_config,
    )
    from ai_economist.foundation.scenarios.covid19.model.params import build_params
    from ai_economist.foundation.scenarios.covid19.model.simulation import CovidSimulation

    params = build_params(calibration, episode_length=episode_length, start_date=start_date)
    sim = CovidSimulation(params, component_params_from_config(params), num_envs=1)
    rows = {"deaths": [], "unemployed": [], "infected": []}

    def record() -> None:
        rows["deaths"].append(float(sim.deaths.sum()))
        rows["unemployed"].append(float(sim.unemployed.sum()))
        rows["infected"].append(float(sim.infected.sum()))

    record()
    for t in range(1, episode_length + 1):
        if level is None:
            actions = params.real_policy_row(params.start_date_index + t - 1)
        else:
            actions = np.full(params.num_agents, int(level))
        sim.step(actions[None].astype(np.int64), np.zeros(1, dtype=np.int64))
        record()
    return EpisodeOutcome(**{k: np.asarray(v) for k, v in rows.items()})


def relative_gap(a: np.ndarray, b: np.ndarray) -> float:
    """max_t |a_t - b_t| / max(|b_t|, 1): the largest day-by-day relative difference."""
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1.0)))

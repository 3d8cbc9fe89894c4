"""Fixed COVID-19 policies to measure trained ones against (the learning check's baselines).

A fixed policy is a schedule ``(close, days, open, subsidy)``: every state keeps stringency
level ``close`` for the first ``days`` days, then level ``open``; the planner keeps subsidy
level ``subsidy`` throughout.  Stringency levels run from 1 (open) to 10 (closed), subsidy
levels from 0 to ``num_subsidy_levels`` (20 in the published config); action 0 of the states
is the NO-OP (keep the current level).  All schedules run side by side as one batch of the
float64 array model, so the three baselines of a 540-day episode take well under a second.
"""

from __future__ import annotations

from typing import Any

import numpy as np

FIXED_POLICIES: dict[str, tuple[int, int, int, int]] = {
    "all open, no subsidy": (1, 0, 1, 0),
    "all closed, full subsidy": (10, 540, 10, 20),
    "closed 180 days, then open, no subsidy": (10, 180, 1, 0),
}
"""The three fixed policies of ``benchmarks/learning_vs_fixed_policies.py`` (on 540 days)."""


def schedule_returns(
    env: Any, schedules: np.ndarray, discount: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Planner and mean-state episode reward sums of ``(close, days, open, subsidy)`` rows.

    Args:
        env: a ``CovidAndEconomyEnvironment`` (its parameters and components are used).
        schedules: (S, 4) integer rows.
        discount: with ``discount < 1``, the returns from day 1 discounted per day.

    Returns:
        ``(planner (S,), states (S,))``: the planner's sum and the states' mean sum.
    """
    from ai_economist.foundation.scenarios.covid19.simulation import CovidSimulation

    schedules = np.asarray(schedules, dtype=np.int64).reshape(-1, 4)
    sim = CovidSimulation(env.params, env.component_params(), len(schedules))
    close, days, open_, subsidy = (schedules[:, k] for k in range(4))
    planner = np.zeros(len(schedules))
    states = np.zeros(len(schedules))
    for t in range(1, env.episode_length + 1):
        level = np.where(t <= days, close, open_)
        agent_rewards, planner_rewards = sim.step(
            np.repeat(level[:, None], env.params.num_agents, axis=1), subsidy.copy()
        )
        weight = discount ** (t - 1)
        planner += weight * planner_rewards
        states += weight * agent_rewards.mean(axis=1)
    return planner, states


def fixed_policy_returns(env: Any) -> dict[str, tuple[float, float]]:
    """``{name: (planner sum, states' mean sum)}`` of :data:`FIXED_POLICIES` on ``env``."""
    planner, states = schedule_returns(env, np.array(list(FIXED_POLICIES.values())))
    return {
        name: (float(p), float(s))
        for name, p, s in zip(FIXED_POLICIES, planner, states, strict=True)
    }

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

from ai_economist.simulate.policies import FIXED

DISPLAY_NAMES = {
    "open": "all open, no subsidy",
    "closed": "all closed, full subsidy",
    "closed-180-then-open": "closed 180 days, then open, no subsidy",
}
"""The learning check's names of the simulator's named fixed policies (``simulate.policies``)."""

WHOLE_EPISODE = 540
"""``days`` of a policy that keeps its first level all episode: the published episode length."""

FIXED_POLICIES: dict[str, tuple[int, int, int, int]] = {
    DISPLAY_NAMES[name]: (close, WHOLE_EPISODE if days is None else days, open_, subsidy)
    for name, (close, days, open_, subsidy) in FIXED.items()
}
"""The three fixed policies of ``benchmarks/learning_vs_fixed_policies.py``, defined once in
:data:`ai_economist.simulate.policies.FIXED`."""


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
    from ai_economist.foundation.scenarios.covid19.model.simulation import CovidSimulation

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

"""Evaluate a trained one-step-economy planner against the fixed schedules of its economy.

Every schedule is scored the same way (:func:`.schedules.evaluate_schedule`): the workers
play their best responses to the rates (the labour step's Nash equilibrium, i.e. workers
fully re-trained under each schedule). The schedules: the trained planner's greedy rates
(``ai-planner``; also with the run's own trained workers, ``ai-planner+trained-workers``), the
free market, US federal 2018, Saez **settled** (the Saez model run for ``saez_episodes``
episodes with best-responding workers, its running-average rates) and ``grid-optimum``.

``grid-optimum``: this economy (integer hours, seven brackets, Pareto skills, an
inverse-income-weighted planner) has no closed-form optimal schedule, so the reference is
numerical: coordinate ascent over the planner's own rate grid (each bracket's ``K`` rates in
turn, the others fixed, best-responding workers), started from the best of the other
schedules rounded to the grid, until a sweep changes nothing (or ``optimum_sweeps`` sweeps).
It is a local optimum on the grid, the rates the trained planner can pick, and depends on
where it starts; an off-grid schedule (Saez's, US federal's) may score higher (seed 0: Saez
5.189; the grid optimum 5.120 from one trained planner's start, 6.163 from another's).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.foundation.components.tax_brackets import US_FEDERAL_2018_RATES


def trained_rates(train_dir: str | Path) -> tuple[dict, np.ndarray, np.ndarray]:
    """(env block, greedy bracket rates, greedy hours) of the run's newest checkpoint."""
    from ai_economist.training import evaluate
    from ai_economist.warp_drive.training.checkpoint import find_checkpoint, load_checkpoint

    state = load_checkpoint(find_checkpoint(train_dir))
    env, _ = evaluate.build_eval_env(state["config"])
    models = evaluate.load_policy_models(state, env.policy_specs)
    log = evaluate.run_episode(env, models, greedy=True)
    rate_actions = np.array(log["steps"][0]["actions"]["p"])
    hours = np.array(log["steps"][1]["actions"]["a"])
    rates = env.params.disc_rates[np.maximum(rate_actions - 1, 0)]
    return state["config"]["env"], rates, hours


def grid_optimum(params: Any, starts: list[np.ndarray], max_sweeps: int) -> np.ndarray:
    """Coordinate ascent of the planner's welfare over the rate grid (see the module doc)."""
    from ai_economist.foundation.scenarios.one_step_economy.schedules import evaluate_schedule

    grid = np.asarray(params.disc_rates, dtype=np.float64)

    def welfare(rates: np.ndarray) -> float:
        return evaluate_schedule(params, rates)["welfare"]

    snapped = [grid[np.abs(grid[None, :] - np.asarray(s)[:, None]).argmin(axis=1)] for s in starts]
    best = max(snapped, key=welfare).copy()
    best_value = welfare(best)
    for _ in range(max_sweeps):
        changed = False
        for b in range(len(best)):
            for rate in grid:
                if rate == best[b]:
                    continue
                trial = best.copy()
                trial[b] = rate
                value = welfare(trial)
                if value > best_value + 1e-12:
                    best, best_value, changed = trial, value, True
        if not changed:
            break
    return best


def evaluate_one_step_run(
    train_dir: str | Path, saez_episodes: int, optimum_sweeps: int
) -> dict[str, dict[str, Any]]:
    """``{schedule: metrics}`` for every schedule of the module docstring (``grid-optimum``
    only with ``optimum_sweeps`` > 0)."""
    from ai_economist.foundation.scenarios.one_step_economy import array_model as am
    from ai_economist.foundation.scenarios.one_step_economy import schedules
    from ai_economist.foundation.scenarios.one_step_economy.one_step_economy import OneStepEconomy

    env_block, rates, hours = trained_rates(train_dir)
    params = am.OneStepParams.from_env(OneStepEconomy(**env_block))
    fixed = {
        "free-market": np.zeros(params.n_brackets),
        "us-federal": np.asarray(US_FEDERAL_2018_RATES, dtype=np.float64),
        "saez": schedules.saez_rates(env_block, saez_episodes),
    }
    out = {"ai-planner": schedules.evaluate_schedule(params, rates),
           "ai-planner+trained-workers": schedules.evaluate_schedule(params, rates, hours)}  # fmt: skip
    out.update({name: schedules.evaluate_schedule(params, r) for name, r in fixed.items()})
    if optimum_sweeps > 0:
        best = grid_optimum(params, [rates, *fixed.values()], optimum_sweeps)
        out["grid-optimum"] = schedules.evaluate_schedule(params, best)
    cutoffs = [f"{int(c):03d}" for c in params.cutoffs]
    return {name: metrics(r, cutoffs) for name, r in out.items()}


def metrics(result: dict[str, Any], cutoffs: list[str]) -> dict[str, Any]:
    """The protocol's columns of one :func:`evaluate_schedule` result."""
    return {
        "equality": result["equality"],
        "productivity": result["productivity"],
        "equality_x_productivity": result["equality"] * result["productivity"],
        "welfare": result["welfare"],
        "taxes_collected": result["taxes"],
        "rates": dict(zip(cutoffs, (float(r) for r in result["rates"]), strict=True)),
        "hours": result["hours"],
    }

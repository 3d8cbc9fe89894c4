"""One-step economy: a trained planner's taxes against no taxes, US federal and Saez.

    python benchmarks/one_step_tax_schedules.py --device cpu            # trains, then compares
    python benchmarks/one_step_tax_schedules.py --run_dir runs/one_step_economy/default/<run>

Without ``--run_dir`` it first trains ``run_configs/one_step_economy.yaml`` (overrides as
``key.path=value``) into a temporary folder. The trained planner's greedy bracket rates are
then scored with the same agents as every other schedule: best-responding workers (each
picks its utility-maximising hours given the rates and the others' hours, until no one
changes; ``schedules.best_response_hours``). The table also shows the trained workers' own
greedy hours under the trained rates. Welfare is the planner's objective of the run config.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

from ai_economist.foundation.components.tax_brackets import US_FEDERAL_2018_RATES
from ai_economist.foundation.scenarios.one_step_economy import array_model as am
from ai_economist.foundation.scenarios.one_step_economy import schedules
from ai_economist.training import evaluate, training_script
from ai_economist.training.config import packaged_config_path
from ai_economist.warp_drive.training.checkpoint import find_checkpoint, load_checkpoint

CONFIG = packaged_config_path("one_step_economy")


def trained_policies(run_dir: str) -> tuple[dict, np.ndarray, np.ndarray]:
    """(env block, greedy bracket rates, greedy hours) of a run's newest checkpoint."""
    state = load_checkpoint(find_checkpoint(run_dir))
    env, _ = evaluate.build_eval_env(state["config"])
    models = evaluate.load_policy_models(state, env.policy_specs)
    log = evaluate.run_episode(env, models, greedy=True)
    rate_actions = np.array(log["steps"][0]["actions"]["p"])
    hours = np.array(log["steps"][1]["actions"]["a"])
    rates = env.params.disc_rates[np.maximum(rate_actions - 1, 0)]
    return state["config"]["env"], rates, hours


def compare_schedules(run_dir: str, saez_episodes: int = 300) -> list[tuple[str, dict]]:
    """``(name, evaluate_schedule result)`` for no taxes, US federal, Saez, the trained planner
    (best-responding workers) and the trained planner with the run's own trained workers."""
    from ai_economist.foundation.scenarios.one_step_economy.one_step_economy import OneStepEconomy

    env_block, rates, hours = trained_policies(run_dir)
    params = am.OneStepParams.from_env(OneStepEconomy(**env_block))
    saez = schedules.saez_rates(env_block, saez_episodes)
    return [
        ("no taxes", schedules.evaluate_schedule(params, np.zeros(params.n_brackets))),
        ("US federal 2018", schedules.evaluate_schedule(params, US_FEDERAL_2018_RATES)),
        ("Saez", schedules.evaluate_schedule(params, saez)),
        ("trained planner", schedules.evaluate_schedule(params, rates)),
        ("trained planner + trained workers", schedules.evaluate_schedule(params, rates, hours)),
    ]


def print_table(run_dir: str, rows: list[tuple[str, dict]]) -> None:
    """One line per schedule: welfare, productivity, equality and the bracket rates."""
    objective = load_checkpoint(find_checkpoint(run_dir))["config"]["env"]["planner_reward_type"]
    print(f"run: {run_dir}   planner objective: {objective}")
    print(f"{'schedule':36s} {'welfare':>8s} {'product.':>9s} {'equality':>8s}  rates")
    for name, r in rows:
        rates_txt = " ".join(f"{x:.2f}" for x in r["rates"])
        print(
            f"{name:36s} {r['welfare']:8.3f} {r['productivity']:9.1f} {r['equality']:8.3f}  {rates_txt}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run_dir", help="a finished training run (default: train one now)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--saez_episodes", type=int, default=300)  # 100: Saez not yet settled
    parser.add_argument("overrides", nargs="*", help="run-config overrides for the training")
    args = parser.parse_args(argv)
    run_dir = args.run_dir
    if run_dir is None:
        run_dir = str(Path(tempfile.mkdtemp(prefix="one_step_")) / "run")
        code = training_script.main(["--config", str(CONFIG), "--device", args.device, "--quiet",
                                     "--results_dir", run_dir, *args.overrides])  # fmt: skip
        if code:
            return code
    rows = compare_schedules(run_dir, args.saez_episodes)
    print_table(run_dir, rows)
    return 0


if __name__ == "__main__":
    torch.set_num_threads(max(1, torch.get_num_threads()))
    sys.exit(main())

"""The learning curve of a one-step-economy run: every checkpoint's greedy planner, scored.

For each checkpoint of a run directory (``--every`` picks every k-th; the last is always
shown): the greedy planner's bracket rates, the welfare with best-responding workers (what
the tax protocol's ``ai-planner`` row scores), the welfare with the run's own greedy workers
(``ai-planner+trained-workers``: what the planner was trained on), and both sets of hours.
Save checkpoints while training with ``saving.model_params_save_freq=10``:

    python -m ai_economist.training.training_script --env one_step_economy --device cpu \\
        --quiet --results_dir /tmp/run saving.model_params_save_freq=10
    python benchmarks/one_step_learning_curve.py /tmp/run --every 2
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def checkpoint_row(checkpoint: Path) -> dict:
    """Greedy rates, welfare with best responses and with the trained workers, and hours."""
    from ai_economist.foundation.scenarios.one_step_economy import array_model as am
    from ai_economist.foundation.scenarios.one_step_economy import schedules
    from ai_economist.foundation.scenarios.one_step_economy.one_step_economy import (
        OneStepEconomy,
    )
    from ai_economist.training import evaluate
    from ai_economist.warp_drive.training.checkpoint import load_checkpoint

    state = load_checkpoint(checkpoint)
    env, _ = evaluate.build_eval_env(state["config"])
    models = evaluate.load_policy_models(state, env.policy_specs)
    log = evaluate.run_episode(env, models, greedy=True)
    actions = np.array(log["steps"][0]["actions"]["p"])
    rates = env.params.disc_rates[np.maximum(actions - 1, 0)]  # 0: NO-OP keeps rate 0
    hours = np.array(log["steps"][1]["actions"]["a"])
    params = am.OneStepParams.from_env(OneStepEconomy(**state["config"]["env"]))
    best = schedules.evaluate_schedule(params, rates)
    trained = schedules.evaluate_schedule(params, rates, hours)
    return {"name": checkpoint.name, "rates": rates, "welfare_br": best["welfare"],
            "welfare_trained": trained["welfare"], "hours": hours.tolist(),
            "hours_br": best["hours"]}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Print one line per checkpoint."""
    from ai_economist.warp_drive.training.checkpoint import list_checkpoints

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--every", type=int, default=1, help="every k-th checkpoint")
    args = parser.parse_args(argv)
    found = list_checkpoints(args.run_dir)
    if not found:
        parser.error(f"{args.run_dir}: no checkpoints (train with saving.model_params_save_freq)")
    print(
        "checkpoint        W_best_resp W_trained  rates (lowest bracket first) | hours, best-resp"
    )
    for i, checkpoint in enumerate(found):
        if i % max(args.every, 1) and i != len(found) - 1:
            continue
        row = checkpoint_row(checkpoint)
        rates = " ".join(f"{r:.2f}" for r in row["rates"])
        print(f"{row['name']:17s} {row['welfare_br']:11.3f} {row['welfare_trained']:9.3f}  "
              f"{rates} | {row['hours']} {row['hours_br']}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

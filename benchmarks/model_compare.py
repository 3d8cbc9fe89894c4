"""Which agent model learns gather-trade-build phase 1 better: ``fully_connected`` or
``conv_lstm``? Both trained for the same env-step budget, same seeds, same env settings.

    python benchmarks/model_compare.py --env_steps 24000 --num_envs 4 --batch 400 \\
        --episode_length 200                                    # CPU, minutes
    python benchmarks/model_compare.py --device cuda --env_steps 2000000 --num_envs 60 \\
        --batch 12000 --seeds 0 1 2                              # GPU, longer

Each run is the packaged ``gather_trade_build_phase1`` run config with ``policy.a.model.type``
set to the model under test (conv_lstm: ``fc_dims [128, 128]``, ``lstm_size 128`` as the
original's phase 1, ``seq_len`` ``--seq_len``), ``trainer.num_envs``, ``train_batch_size``,
``env.episode_length``, ``trainer.seed`` and ``trainer.num_threads`` (default 1: on a shared
CPU, small models run faster on one thread) from the arguments. ``--max_minutes`` caps each
run's wall clock (the iteration running at the deadline finishes; the table says how many
env-steps each run got). Printed per model and seed, from the run's ``metrics.jsonl``: the
agents' mean reward per step in the first and the last quarter of the iterations, the last
logged episode metrics (productivity, equality, equality x productivity, mean over the
episodes that ended in the logging window) and the speed; then the means over seeds.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ai_economist.training.config import default_config_path, load_run_config
from ai_economist.training.training_script import build_trainer

ENV = "gather_trade_build_phase1"
MODELS = ("fully_connected", "conv_lstm")
EPISODE_KEYS = {
    "productivity": "env/social/productivity",
    "equality": "env/social/equality",
    "eq x prod": "env/social_welfare/coin_eq_times_productivity",
}


def overrides(args: argparse.Namespace, model: str, seed: int) -> list[str]:
    """The run-config overrides of one run."""
    episodes = max(1, math.ceil(args.env_steps / args.episode_length))
    out = [
        f"trainer.device={args.device}",
        f"trainer.env_backend={args.backend}",
        f"trainer.num_envs={args.num_envs}",
        f"trainer.train_batch_size={args.batch}",
        f"trainer.num_episodes={episodes}",
        f"trainer.seed={seed}",
        f"env.episode_length={args.episode_length}",
        "env.dense_log_frequency=null",
        "saving.tensorboard=false",
        "trainer.progress_bar=false",
        "saving.metrics_log_freq=1",
        "saving.model_params_save_freq=1000000",
        f"policy.a.model.type={model}",
        f"trainer.num_threads={args.num_threads}",
    ]
    if model == "conv_lstm":
        out += ["policy.a.model.lstm_size=128", f"policy.a.model.seq_len={args.seq_len}"]
    return out


def train_one(args: argparse.Namespace, model: str, seed: int, out: Path) -> dict[str, Any]:
    """Train one model with one seed; the summary of its metrics."""
    config = load_run_config(default_config_path(ENV), overrides(args, model, seed))
    device = torch.device(args.device)
    run_dir = out / f"{model}-seed{seed}"
    trainer = build_trainer(config, device, results_directory=str(run_dir), verbose=False)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trainer.train(max_seconds=args.max_minutes * 60 if args.max_minutes else None)
    finally:
        trainer.graceful_close()
    seconds = time.perf_counter() - start
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return summarize(rows, seconds, trainer.env_steps)


def summarize(rows: list[dict[str, Any]], seconds: float, env_steps: int) -> dict[str, Any]:
    """Reward per step over the first and last quarter of iterations, last episode metrics."""
    reward = [r["a/reward_per_step"] for r in rows]
    quarter = max(1, len(reward) // 4)
    ended = [r for r in rows if r.get(EPISODE_KEYS["productivity"]) is not None]
    last = ended[-1] if ended else {}
    summary = {
        "iterations": len(rows),
        "env_steps": env_steps,
        "seconds": seconds,
        "reward first 1/4": float(np.mean(reward[:quarter])),
        "reward last 1/4": float(np.mean(reward[-quarter:])),
    }
    summary.update({k: last.get(key, float("nan")) for k, key in EPISODE_KEYS.items()})
    summary["curve"] = [round(float(r), 5) for r in reward]
    return summary


COLUMNS = ("env_steps", "seconds", "reward first 1/4", "reward last 1/4", *EPISODE_KEYS)


def print_table(results: dict[str, dict[int, dict[str, Any]]]) -> None:
    """One row per model and seed, then each model's means over its seeds."""
    print("model            seed " + " ".join(f"{c:>16}" for c in COLUMNS))
    for model, by_seed in results.items():
        for seed, s in by_seed.items():
            print(f"{model:<16} {seed:>4} " + " ".join(f"{s[c]:>16.4g}" for c in COLUMNS))
    print("means over seeds:")
    for model, by_seed in results.items():
        means = {c: float(np.nanmean([s[c] for s in by_seed.values()])) for c in COLUMNS}
        print(f"{model:<16} {'all':>4} " + " ".join(f"{means[c]:>16.4g}" for c in COLUMNS))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--env_steps", type=int, default=24000, help="budget per run")
    parser.add_argument("--max_minutes", type=float, default=0.0, help="wall cap per run")
    parser.add_argument("--num_envs", type=int, default=4)
    parser.add_argument("--batch", type=int, default=400, help="env-steps per iteration")
    parser.add_argument("--episode_length", type=int, default=200)
    parser.add_argument("--seq_len", type=int, default=25, help="conv_lstm's model.seq_len")
    parser.add_argument(
        "--num_threads", type=int, default=1, help="trainer.num_threads (0: the cores)"
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--backend", default="numpy", help="trainer.env_backend")
    parser.add_argument("--results_dir", default=None, help="keep the runs here")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(
        f"{ENV}: {args.env_steps} env-steps per run, {args.num_envs} envs, {args.batch} "
        f"env-steps per iteration, {args.episode_length}-step episodes, device {args.device}, "
        f"env backend {args.backend}, seeds {args.seeds}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.results_dir or tmp)
        results: dict[str, dict[int, dict[str, Any]]] = {}
        for model in args.models:
            for seed in args.seeds:
                results.setdefault(model, {})[seed] = train_one(args, model, seed, out)
                s = results[model][seed]
                print(f"  {model} seed {seed}: reward/step curve {s['curve']}", flush=True)
    print_table(results)
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

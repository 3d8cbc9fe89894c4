"""Do continuous Tag's taggers learn to tag? (issue 9: learning benchmark)

    python benchmarks/tag_learning.py --device cuda --minutes 4 [--config FILE] [key.path=value ...]

Trains a continuous Tag run config (default ``run_configs/tag_continuous_learning.yaml``: the
published config with the agents' own state observed and the neighbours' positions in the
heading frame; the original: ``--config tag_continuous``; overrides as ``key.path=value``) for
``--minutes`` of wall-clock time (``trainer.num_episodes`` is raised to 10^8 first, as the
published 500 episodes are only 10 iterations; an override can set it again). Before training
and at ``--checkpoints`` evenly spaced points of it, plays ``--eval_envs`` episodes each (one
per environment, same starting states) with

* the trained taggers against the trained runners (actions sampled from the policies, as in
  training; ``--greedy``: the taggers' most likely actions),
* random taggers (uniform over the actions) against the same trained runners,

and prints, per checkpoint, the fraction of runners each tags in the first ``--window`` steps
and their ratio (the learning curve); then the end-to-end training throughput (env-steps/s over
the training wall clock, evaluations excluded, as a ratio to ``--peer``: rl-warp-drive 1.7.0
trains the published config at 13,500 env-steps/s on one H200, issue 9), the tag rates by
steps 10 ... 500 of the last checkpoint, and a verdict: PASS when at the last checkpoint the
trained taggers tag at least ``--min_ratio`` times as many runners as random taggers in the
first ``--window`` steps. (Whole episodes do not separate them: with the published 10 taggers,
100 runners and 500 steps on a 20 x 20 grid, random taggers already tag about 94% of the
runners.)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from ai_economist.training.config import find_run_config, load_run_config  # noqa: E402
from ai_economist.training.environments import get_training_env  # noqa: E402
from ai_economist.training.training_script import build_trainer  # noqa: E402
from ai_economist.warp_drive.training.models import greedy_masked, sample_masked  # noqa: E402

ENV = "tag_continuous"
LEARNING_CONFIG = "tag_continuous_learning"
"""The default run config: the published one with ``observe_own_state`` (docs/differences.md)."""


@torch.no_grad()
def tag_rate(
    models: dict, config: dict, device, num_envs: int, random_tags=(), seed=0, greedy_tags=()
) -> dict:
    """Tags over one episode of ``num_envs`` environments: the mean number of runners tagged
    by each step (``curve``), per episode, and the mean steps a runner stays untagged.

    Args:
        models: policy tag -> model (on ``device``).
        random_tags: policy tags that act uniformly at random instead.
        greedy_tags: policy tags that take their most likely action instead of sampling.
    """
    run = {**config, "trainer": {**config["trainer"], "num_envs": num_envs, "seed": seed + 1}}
    wrapper = get_training_env(ENV).make(run, device)
    wrapper.reset_all_envs()
    gen = torch.Generator(device=wrapper.device).manual_seed(seed)
    length = wrapper.episode_length
    frozen = np.zeros(num_envs, bool)  # the episode ended: its count no longer changes
    tags = np.zeros(num_envs)
    curve = np.zeros(length)
    for step in range(length):
        for tag, model in models.items():
            masks = wrapper.action_masks(tag)
            if tag in random_tags:
                logits = torch.zeros(masks.shape, device=masks.device)
            else:
                logits, _ = model(wrapper.observations(tag))
            if tag in greedy_tags:
                actions = greedy_masked(logits, masks)
            else:
                actions, _ = sample_masked(logits, masks, gen)
            wrapper.actions(tag).copy_(actions.to(torch.int32))
        wrapper.step_all_envs()
        live = ~frozen
        tags[live] = wrapper.pull("episode_tags")[live]
        frozen |= wrapper.done().cpu().numpy() > 0
        curve[step] = tags.mean()
        if frozen.all():
            curve[step + 1 :] = tags.mean()
            break
    num_runners = wrapper.policy_specs["runner"].num_agents
    return {
        "tags per episode": float(tags.mean()),
        "fraction of runners tagged": float(tags.mean()) / num_runners,
        "curve": curve / num_runners,  # fraction of the runners tagged by step s + 1
        "mean steps untagged": float(np.sum(1.0 - curve / num_runners)),
    }


def window_rates(models: dict, config: dict, device, args) -> dict:
    """Trained and random taggers (both against the trained runners) at one checkpoint: the
    fraction of runners tagged by step ``window`` and their ratio."""
    for model in models.values():
        model.eval()
    greedy = ("tagger",) if args.greedy else ()
    trained = tag_rate(models, config, device, args.eval_envs, greedy_tags=greedy)
    random = tag_rate(models, config, device, args.eval_envs, random_tags=("tagger",))
    for model in models.values():
        model.train()
    window = min(args.window, len(trained["curve"]))
    ratio = trained["curve"][window - 1] / max(random["curve"][window - 1], 1e-9)
    return {"trained": trained, "random": random, "window": window, "ratio": float(ratio)}


def print_curves(rows: list[tuple[str, dict]]) -> None:
    """The fraction of runners tagged by steps 10 ... 500 of each evaluation."""
    curve = rows[0][1]["curve"]
    marks = [m for m in (10, 25, 50, 100, 250, 500) if m <= len(curve)]
    print(f"{'fraction of runners tagged by step':<40} " + " ".join(f"{m:>6}" for m in marks)
          + "   per episode   mean steps untagged")  # fmt: skip
    for label, tagged in rows:
        cells = " ".join(f"{tagged['curve'][m - 1]:6.1%}" for m in marks)
        print(f"{label:<40} {cells}   {tagged['tags per episode']:7.2f} tags"
              f"   {tagged['mean steps untagged']:8.1f}")  # fmt: skip


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="wall-clock training budget")
    parser.add_argument("--device", default="cuda")
    parser.add_argument(
        "--config", default="",
        help="run config (default: tag_continuous_learning.yaml, the published config with the "
        "agents' own state observed; the original: --config tag_continuous)",
    )  # fmt: skip
    parser.add_argument("--eval_envs", type=int, default=100, help="episodes per evaluation")
    parser.add_argument(
        "--checkpoints", type=int, default=4,
        help="evaluations during training (after each equal share of --minutes)",
    )  # fmt: skip
    parser.add_argument("--min_ratio", type=float, default=2.0, help="verdict threshold")
    parser.add_argument(
        "--greedy", action="store_true",
        help="trained taggers take their most likely action in the evaluations (default: they "
        "sample, as in training)",
    )  # fmt: skip
    parser.add_argument(
        "--window", type=int, default=50,
        help="steps from the episode start in which tag rates are compared (random taggers "
        "tag nearly every runner by the end of the published 500-step episode)",
    )  # fmt: skip
    parser.add_argument(
        "--peer", type=float, default=13500.0,
        help="peer end-to-end env-steps/s (rl-warp-drive 1.7.0, published config, one H200)",
    )  # fmt: skip
    parser.add_argument("--results_dir", default="/tmp/tag_learning_run", help="run directory")
    parser.add_argument("overrides", nargs="*", help="run-config overrides, key.path=value")
    args = parser.parse_args(argv)
    path = find_run_config(args.config or LEARNING_CONFIG)
    config = load_run_config(
        path, ["trainer.num_episodes=100000000", f"trainer.device={args.device}", *args.overrides]
    )
    device = torch.device(args.device)
    trainer = build_trainer(config, device, results_directory=args.results_dir, verbose=False)
    hardware = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"training {ENV} on {hardware}: {config['trainer']['num_envs']} envs, "
          f"up to {args.minutes} min; run config {path}; overrides: "
          f"{' '.join(args.overrides) or '(none)'}", flush=True)  # fmt: skip
    models = {tag: p.model for tag, p in trainer.policies.items()}
    before = tag_rate(models, config, device, args.eval_envs)
    seconds, checkpoints = 0.0, []
    print(f"{'minutes':>8} {'iterations':>10} {'env-steps':>12}   runners tagged by step "
          f"{min(args.window, len(before['curve']))}: trained  random  ratio", flush=True)  # fmt: skip
    for _ in range(max(args.checkpoints, 1)):
        start = time.perf_counter()
        trainer.train(max_seconds=args.minutes * 60 / max(args.checkpoints, 1))
        seconds += time.perf_counter() - start
        point = window_rates(models, config, device, args)
        point.update(
            minutes=seconds / 60, iterations=trainer.iteration, env_steps=trainer.env_steps
        )
        checkpoints.append(point)
        w = point["window"] - 1
        print(f"{point['minutes']:8.2f} {trainer.iteration:10,} {trainer.env_steps:12,}   "
              f"{'':>24}{point['trained']['curve'][w]:7.1%} {point['random']['curve'][w]:7.1%} "
              f"{point['ratio']:6.2f}x", flush=True)  # fmt: skip
    rate = trainer.env_steps / max(seconds, 1e-9)
    trainer.graceful_close()
    peer = f", {rate / args.peer:.2f}x the peer ({args.peer:,.0f})" if args.peer else ""
    print(f"trained {trainer.iteration} iterations, {trainer.env_steps:,} env-steps in "
          f"{seconds / 60:.1f} min: {rate:,.0f} env-steps/s end to end{peer}", flush=True)  # fmt: skip
    last = checkpoints[-1]
    trained, random = last["trained"], last["random"]
    print_curves([("untrained taggers vs untrained runners", before),
                  ("trained taggers vs trained runners", trained),
                  ("random taggers vs trained runners", random)])  # fmt: skip
    ratio, window = last["ratio"], last["window"]
    verdict = "PASS" if ratio >= args.min_ratio else "FAIL"
    trend = " -> ".join(f"{p['ratio']:.2f}x" for p in checkpoints)
    print(f"verdict: {verdict}: in the first {window} steps trained taggers tag {ratio:.2f}x as "
          f"many runners as random taggers (threshold {args.min_ratio:.1f}x; at the checkpoints "
          f"{trend}); over whole episodes "
          f"{trained['tags per episode'] / max(random['tags per episode'], 1e-9):.2f}x")  # fmt: skip
    return {"trained": trained, "random": random, "untrained": before, "ratio": ratio,
            "verdict": verdict, "iterations": trainer.iteration, "env_steps_per_s": rate,
            "checkpoints": checkpoints}  # fmt: skip


if __name__ == "__main__":
    main()

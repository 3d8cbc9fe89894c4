"""Do continuous Tag's taggers learn to tag? (issue 9: learning benchmark)

    python benchmarks/tag_learning.py --device cuda --minutes 10 [--config FILE] [key.path=value ...]

Trains a continuous Tag run config (default: the published
``ai_economist/training/run_configs/tag_continuous.yaml``, overrides as ``key.path=value``)
for ``--minutes`` of wall-clock time (``trainer.num_episodes`` is raised to 10^8 first, as the
published 500 episodes are only 10 iterations; an override can set it again). Then plays
``--eval_envs`` episodes each (one per environment, same starting states) with

* the trained taggers against the trained runners (actions sampled from the policies, as in
  training),
* random taggers (uniform over the actions) against the same trained runners,

and prints the end-to-end training throughput (env-steps/s over the training wall clock, as
a ratio to ``--peer``: rl-warp-drive 1.7.0 trains the published config at 13,500 env-steps/s
on one H200, issue 9), the taggers' tag rate (tags per episode and the fraction of runners
tagged) of both, their ratio and a verdict: the trained taggers should tag at least
``--min_ratio`` times as many runners as random taggers do.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from ai_economist.training.config import default_config_path, load_run_config  # noqa: E402
from ai_economist.training.environments import get_training_env  # noqa: E402
from ai_economist.training.training_script import policy_tag_to_agent_id_map  # noqa: E402
from ai_economist.warp_drive.training.models import sample_masked  # noqa: E402
from ai_economist.warp_drive.training.trainer import Trainer  # noqa: E402

ENV = "tag_continuous"


@torch.no_grad()
def tag_rate(models: dict, config: dict, device, num_envs: int, random_tags=(), seed=0) -> dict:
    """Mean tags per episode over one episode of ``num_envs`` environments.

    Args:
        models: policy tag -> model (on ``device``).
        random_tags: policy tags that act uniformly at random instead.
    """
    run = {**config, "trainer": {**config["trainer"], "num_envs": num_envs, "seed": seed + 1}}
    wrapper = get_training_env(ENV).build(run, device, None)
    wrapper.reset_all_envs()
    gen = torch.Generator(device=wrapper.device).manual_seed(seed)
    tags = np.full(num_envs, -1.0)
    for _ in range(wrapper.episode_length):
        for tag, model in models.items():
            masks = wrapper.action_masks(tag)
            if tag in random_tags:
                logits = torch.zeros(masks.shape, device=masks.device)
            else:
                logits, _ = model(wrapper.observations(tag))
            actions, _ = sample_masked(logits, masks, gen)
            wrapper.actions(tag).copy_(actions.to(torch.int32))
        wrapper.step_all_envs()
        done = wrapper.done().cpu().numpy() > 0
        first = done & (tags < 0)
        if first.any():
            tags[first] = wrapper.pull("episode_tags")[first]
        if (tags >= 0).all():
            break
    num_runners = wrapper.policy_specs["runner"].num_agents
    mean = float(tags.mean())
    return {"tags per episode": mean, "fraction of runners tagged": mean / num_runners}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="wall-clock training budget")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--config", default="", help="run config (default: the published one)")
    parser.add_argument("--eval_envs", type=int, default=100, help="episodes per evaluation")
    parser.add_argument("--min_ratio", type=float, default=2.0, help="verdict threshold")
    parser.add_argument(
        "--peer", type=float, default=13500.0,
        help="peer end-to-end env-steps/s (rl-warp-drive 1.7.0, published config, one H200)",
    )  # fmt: skip
    parser.add_argument("--results_dir", default="/tmp/tag_learning_run", help="run directory")
    parser.add_argument("overrides", nargs="*", help="run-config overrides, key.path=value")
    args = parser.parse_args(argv)
    path = args.config or default_config_path(ENV)
    config = load_run_config(
        path, ["trainer.num_episodes=100000000", f"trainer.device={args.device}", *args.overrides]
    )
    device = torch.device(args.device)
    wrapper = get_training_env(ENV).build(config, device, None)
    trainer = Trainer(
        wrapper, config, policy_tag_to_agent_id_map(wrapper), True, "first",
        results_directory=args.results_dir, verbose=False,
    )  # fmt: skip
    hardware = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"training {ENV} on {hardware}: {config['trainer']['num_envs']} envs, "
          f"up to {args.minutes} min; run config {path}; overrides: "
          f"{' '.join(args.overrides) or '(none)'}", flush=True)  # fmt: skip
    models = {tag: p.model for tag, p in trainer.policies.items()}
    before = tag_rate(models, config, device, args.eval_envs)
    start = time.perf_counter()
    trainer.train(max_seconds=args.minutes * 60)
    minutes = (time.perf_counter() - start) / 60
    rate = trainer.env_steps / max(minutes * 60, 1e-9)
    peer = f", {rate / args.peer:.2f}x the peer ({args.peer:,.0f})" if args.peer else ""
    print(f"trained {trainer.iteration} iterations, {trainer.env_steps:,} env-steps in "
          f"{minutes:.1f} min: {rate:,.0f} env-steps/s end to end{peer}", flush=True)  # fmt: skip
    for model in models.values():
        model.eval()
    trained = tag_rate(models, config, device, args.eval_envs)
    random = tag_rate(models, config, device, args.eval_envs, random_tags=("tagger",))
    trainer.graceful_close()
    rows = [("untrained taggers vs untrained runners", before),
            ("trained taggers vs trained runners", trained),
            ("random taggers vs trained runners", random)]  # fmt: skip
    for label, tagged in rows:
        print(f"{label:<40} {tagged['tags per episode']:8.2f} tags per episode "
              f"({tagged['fraction of runners tagged']:.1%} of the runners)")  # fmt: skip
    ratio = trained["tags per episode"] / max(random["tags per episode"], 1e-9)
    verdict = "PASS" if ratio >= args.min_ratio else "FAIL"
    print(f"verdict: {verdict}: trained taggers tag {ratio:.2f}x as many runners as random "
          f"taggers (threshold {args.min_ratio:.1f}x)")  # fmt: skip
    return {"trained": trained, "random": random, "untrained": before, "ratio": ratio,
            "verdict": verdict, "iterations": trainer.iteration,
            "env_steps_per_s": rate}  # fmt: skip


if __name__ == "__main__":
    main()

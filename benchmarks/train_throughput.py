"""End-to-end training throughput of the GPU-resident trainer (rollout + update).

    python benchmarks/train_throughput.py [--env covid_and_economy_environment|toy]
        [--device auto|cpu|cuda] [--num_envs 60 1200 10000] [--rollout_length 90]
        [--iterations 5] [--env_backend auto|numpy|pycuda|numba|cpu] [--compile]

For each number of envs it runs the published COVID-19 training setup (PPO for "a" and "p",
one epoch, fully connected [256, 256] models, ``train_batch_size = num_envs * rollout_length``;
the published run is 60 envs x 90 steps = 5400; minibatches of at most ``--max_minibatch``
agent-steps bound the activation memory) and prints:

* end-to-end env-steps/s over ``--iterations`` timed iterations (after ``--warmup``), with
  nothing synchronised inside an iteration, exactly as in training;
* per-phase times of one more profiled iteration that waits for the device around every
  phase: env step (+ reset), policy forward, sampling (or the replayed CUDA graph of both,
  with ``--cuda_graphs``), update (GAE + PPO).

The hardware (GPU name, or CPU model) is named in the output.  The original trainer ran
12,300 env-steps/s at 60 envs (A100).  ``--env toy`` runs the same loop and models on the toy
env shaped like the COVID-19 policies (51 agents with 11 actions and 64 observations, a
planner with 21 actions), whose own step is heavier than the COVID-19 GPU kernels.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ai_economist.training.config import default_config_path, load_run_config, load_yaml  # noqa: E402
from ai_economist.training.training_script import (  # noqa: E402
    ENVIRONMENTS,
    policy_tag_to_agent_id_map,
    resolve_device,
)
from ai_economist.warp_drive.training.rollout import PhaseTimer  # noqa: E402
from ai_economist.warp_drive.training.trainer import Trainer  # noqa: E402


def hardware_name(device: str) -> str:
    if device == "cuda":
        return (
            f"{torch.cuda.get_device_name()} (torch {torch.__version__}, CUDA {torch.version.cuda})"
        )
    try:
        with open("/proc/cpuinfo") as f:
            model = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        model = platform.processor() or platform.machine()
    return f"{model}, {torch.get_num_threads()} torch thread(s) (torch {torch.__version__})"


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def measure(args: argparse.Namespace, num_envs: int, device: str, run_dir: str) -> dict:
    overrides = [
        f"trainer.num_envs={num_envs}",
        f"trainer.train_batch_size={num_envs * args.rollout_length}",
        "trainer.num_episodes=1000000",
        f"trainer.device={device}",
        f"trainer.env_backend={args.env_backend}",
        f"trainer.compile={str(args.compile).lower()}",
        f"trainer.cuda_graphs={str(args.cuda_graphs).lower()}",
        f"trainer.num_threads={args.num_threads}",
        "trainer.progress_bar=false",
        "saving.tensorboard=false",
    ]
    for tag in ("a", "p"):
        overrides += [f"policy.{tag}.model.fc_dims={args.fc_dims}"]
    if args.env == "toy":  # shaped like the COVID-19 policies: 51 agents, 11/21 actions, obs 64
        overrides += ["env.num_agents=51", "env.num_actions_agents=11", "env.num_actions_planner=21",
                      "env.num_noise_features=52", "env.episode_length=540"]  # fmt: skip
    # the published trainer and policy settings (PPO, 1 epoch) for every env
    base = load_yaml(default_config_path("covid_and_economy_environment"))
    if args.env != base["name"]:
        base = {**base, "name": args.env, "env": load_yaml(default_config_path(args.env))["env"]}
    config = load_run_config(base=base, overrides=overrides, source=f"{args.env} benchmark")
    torch_device = torch.device(device)
    env = ENVIRONMENTS[args.env].build(config, torch_device, None)
    for tag, spec in env.policy_specs.items():  # bound the minibatch size (activation memory)
        samples = num_envs * args.rollout_length * spec.num_agents
        auto = -(-samples // args.max_minibatch)
        config["policy"][tag]["num_mini_batches"] = args.num_mini_batches or auto
    trainer = Trainer(env, config, policy_tag_to_agent_id_map(env), True, "last",
                      results_directory=run_dir, verbose=False)  # fmt: skip
    for _ in range(args.warmup):
        trainer.train_iteration()
    sync(device)
    start = time.perf_counter()
    for _ in range(args.iterations):
        trainer.train_iteration()
    sync(device)
    elapsed = time.perf_counter() - start
    env_steps = args.iterations * config["trainer"]["train_batch_size"]
    trainer.timer = PhaseTimer(torch_device, synchronize=True)
    trainer.train_iteration()
    phases = {k: v * 1e3 for k, v in trainer.timer.pop().items()}
    trainer.graceful_close()
    return {
        "num_envs": num_envs,
        "train_batch_size": config["trainer"]["train_batch_size"],
        "env_steps_per_s": env_steps / elapsed,
        "iteration_ms": elapsed / args.iterations * 1e3,
        "phases_ms": phases,
        "num_mini_batches": {t: c["num_mini_batches"] for t, c in config["policy"].items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--env", default="covid_and_economy_environment", choices=sorted(ENVIRONMENTS)
    )
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--num_envs", type=int, nargs="+", default=[60, 1200, 10000])
    parser.add_argument(
        "--rollout_length", type=int, default=90, help="steps per env per iteration"
    )
    parser.add_argument("--iterations", type=int, default=5, help="timed iterations")
    parser.add_argument("--warmup", type=int, default=2, help="untimed iterations first")
    parser.add_argument(
        "--fc_dims", default="[256,256]", help="hidden sizes (published: [256,256])"
    )
    parser.add_argument("--num_mini_batches", type=int, default=0, help="0: auto, see below")
    parser.add_argument("--max_minibatch", type=int, default=1 << 21,
                        help="auto minibatches: at most this many agent-steps each")  # fmt: skip
    parser.add_argument("--env_backend", default="auto")
    parser.add_argument("--num_threads", type=int, default=1, help="torch CPU threads (0: default)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the models")
    parser.add_argument(
        "--cuda_graphs", action="store_true", help="replay policy steps as CUDA graphs"
    )
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        if device == "cpu" and args.num_threads > 0:
            torch.set_num_threads(args.num_threads)
        print(f"env {args.env} on {device}: {hardware_name(device)}")
        print(
            f"{'num_envs':>9} {'batch':>9} {'env-steps/s':>12} {'iter ms':>9} | profiled iteration (ms)"
        )
        for num_envs in args.num_envs:
            r = measure(args, num_envs, device, f"{tmp}/{num_envs}")
            phases = "  ".join(f"{k} {v:.1f}" for k, v in r["phases_ms"].items() if k != "rollout")
            print(f"{num_envs:>9} {r['train_batch_size']:>9} {r['env_steps_per_s']:>12,.0f} "
                  f"{r['iteration_ms']:>9.1f} | {phases}", flush=True)  # fmt: skip
            results.append(r)
    if args.json:
        meta = {
            "env": args.env,
            "device": device,
            "hardware": hardware_name(device),
            "args": vars(args),
        }
        Path(args.json).write_text(json.dumps({**meta, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""End-to-end training throughput of the GPU-resident trainer (rollout + update).

    python benchmarks/train_throughput.py [--env covid_and_economy_environment|toy]
        [--device auto|cpu|cuda] [--num_envs 60 1200 10000] [--num_gpus 1 2]
        [--rollout_length 90] [--iterations 5] [--env_backend auto|numpy|pycuda|numba|cpu]
        [--compile] [--compile_update] [--cuda_graphs] [--update_graph on|off]
        [--fused_sampling on off] [--config RUN_CONFIG] [--json PATH]

For each number of envs it runs the published COVID-19 training setup (PPO for "a" and "p",
one epoch, fully connected [256, 256] models, ``train_batch_size = num_envs * rollout_length``;
the published run is 60 envs x 90 steps = 5400; minibatches of at most ``--max_minibatch``
agent-steps bound the activation memory) and prints:

* end-to-end env-steps/s over ``--iterations`` timed iterations (after ``--warmup``), with
  nothing synchronised inside an iteration, exactly as in training;
* per-phase times of one more profiled iteration that waits for the device around every
  phase: env step (+ reset), policy forward, sampling (or the replayed CUDA graph of both,
  with ``--cuda_graphs``), update (GAE + PPO).  With ``--cuda_graphs`` and ``--update_graph on``
  (the default) the whole iteration is one graph (column ``graphs``: ``iter``) and shows as one
  phase; ``profile_iteration.py`` splits its GPU time by kernel.

``--config NAME`` times a packaged run config as it is (e.g. ``tag_continuous``: its envs,
batch, algorithms and models) with only the trainer flags above changed.

``--fused_sampling on off`` times each setting with the fused sampling kernel
(``trainer.fused_sampling``) and without it, one after the other; ``cuda_c`` and ``triton``
name the kernel's twin (``trainer.fused_sampling_kernel``; ``on`` is ``auto``).

Multi-GPU data parallelism (``--num_gpus 1 2``): for every N > 1 the benchmark launches N
processes exactly as ``training_script.py --num_gpus N`` does (one per GPU ``cuda:rank`` with
NCCL; with ``--device cpu`` N CPU processes with gloo, to test the code path), each stepping
``num_envs`` envs (the trainer settings are per GPU), so every optimizer step averages the
gradients of all the processes (the trainer's own all-reduce, inside the timed iterations).
A barrier starts and ends the timed region on every rank; the aggregate throughput is the sum
over the ranks of their env-steps divided by the longest rank's time, and the scaling is the
aggregate over the 1-GPU throughput at the same envs per GPU (target: >= 0.9 N, i.e. 1.8x on
2 GPUs).  After timing, the ranks' parameters are compared (0: the replicas stayed identical,
as they only do when the gradients are all-reduced, since every rank samples differently).
N = 1 runs in this process without ``torch.distributed``, like single-GPU training.

The hardware (GPU name and count, or CPU model) is named in the output.  The original
trainer ran 12,300 env-steps/s at 60 envs (A100).  ``--env toy`` runs the same loop and models
on the toy env shaped like the COVID-19 policies (51 agents with 11 actions and 64
observations, a planner with 21 actions), whose own step is heavier than the COVID-19 GPU
kernels.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ai_economist.training.config import (  # noqa: E402
    default_config_path,
    find_run_config,
    load_run_config,
    load_yaml,
)
from ai_economist.training.training_script import (  # noqa: E402
    ENVIRONMENTS,
    policy_tag_to_agent_id_map,
    resolve_device,
)
from ai_economist.training.training_script import build_trainer as build_registered  # noqa: E402
from ai_economist.warp_drive.training.distributed import DistributedContext, launch  # noqa: E402
from ai_economist.warp_drive.training.fused_sampling import fused_sampling_kernel  # noqa: E402
from ai_economist.warp_drive.training.rollout import PhaseTimer  # noqa: E402
from ai_economist.warp_drive.training.trainer import Trainer  # noqa: E402

ORIGINAL_H200 = "60:16900,1200:134600"
"""The original COVID-19 pipeline (ai-economist 1.7.1 + rl-warp-drive) measured on one H200:
env-steps/s at 60 and 1,200 envs (the developers' reference figures)."""
SCALING_TARGET_PER_GPU = 0.9  # N GPUs should give at least 0.9 N times one GPU (1.8x on 2)
IN_SYNC = 1e-6  # replicas whose parameters differ by at most this much are in sync


def hardware_name(device: str, num_gpus: int = 1) -> str:
    """The GPU(s) used (name and count), or the CPU model and threads."""
    if device == "cuda":
        visible = torch.cuda.device_count()
        names = [torch.cuda.get_device_name(i) for i in range(min(max(num_gpus, 1), visible))]
        gpus = " + ".join(f"{names.count(n)}x {n}" for n in dict.fromkeys(names))
        return f"{gpus} of {visible} visible (torch {torch.__version__}, CUDA {torch.version.cuda})"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        model = platform.processor() or platform.machine()
    procs = f"up to {num_gpus} gloo processes x " if num_gpus > 1 else ""
    return (
        f"{model}, {os.cpu_count()} core(s), {procs}{torch.get_num_threads()} torch thread(s) "
        f"(torch {torch.__version__})"
    )


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def trainer_flags(args: argparse.Namespace, device: str) -> list[str]:
    """The run-config overrides of the command line's trainer flags."""
    return [
        "trainer.num_episodes=1000000",
        f"trainer.device={device}",
        f"trainer.env_backend={args.env_backend}",
        f"trainer.compile={str(args.compile).lower()}",
        f"trainer.compile_update={str(args.compile_update).lower()}",
        f"trainer.cuda_graphs={str(args.cuda_graphs).lower()}",
        f"trainer.cuda_graph_update={str(args.update_graph == 'on').lower()}",
        f"trainer.precision={args.precision}",
        f"trainer.acting_precision={args.acting_precision}",
        f"trainer.fused_sampling={str(args.fused != 'off').lower()}",
        f"trainer.fused_sampling_kernel={'auto' if args.fused in ('on', 'off') else args.fused}",
        f"trainer.fused_layers={str(args.fused_layers == 'on').lower()}",
        f"trainer.bf16_heads={str(args.bf16_heads == 'on').lower()}",
        f"trainer.num_threads={args.num_threads}",
        "trainer.progress_bar=false",
        "saving.tensorboard=false",
    ]


def build_from_run_config(
    args: argparse.Namespace, device: str, run_dir: str, ctx: DistributedContext
) -> tuple[Trainer, dict]:
    """``--config``: the packaged run config as it is (its env, envs, batch, algorithms and
    models), with only the command line's trainer flags changed."""
    config = load_run_config(find_run_config(args.config), trainer_flags(args, device))
    torch_device = torch.device("cuda", ctx.rank) if device == "cuda" else torch.device("cpu")
    trainer = build_registered(config, torch_device, num_devices=ctx.world_size,
                               device_id=ctx.rank, results_directory=run_dir, verbose=False)  # fmt: skip
    return trainer, config


def build_trainer(
    args: argparse.Namespace, num_envs: int, device: str, run_dir: str, ctx: DistributedContext
) -> tuple[Trainer, dict]:
    """The env and trainer of one process (rank ``ctx.rank`` of ``ctx.world_size``)."""
    if args.config:
        return build_from_run_config(args, device, run_dir, ctx)
    overrides = [
        f"trainer.num_envs={num_envs}",
        f"trainer.train_batch_size={num_envs * args.rollout_length}",
        *trainer_flags(args, device),
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
    if device == "cpu" and isinstance(config["env"].get("seed"), int):
        config["env"]["seed"] += ctx.rank  # as GPU ``i`` does for the toy env
    torch_device = torch.device("cuda", ctx.rank) if device == "cuda" else torch.device("cpu")
    env = ENVIRONMENTS[args.env].make(config, torch_device)
    for tag, spec in env.policy_specs.items():  # bound the minibatch size (activation memory)
        samples = num_envs * args.rollout_length * spec.num_agents
        auto = -(-samples // args.max_minibatch)
        config["policy"][tag]["num_mini_batches"] = args.num_mini_batches or auto
    trainer = Trainer(env, config, policy_tag_to_agent_id_map(env), True,
                      ENVIRONMENTS[args.env].obs_dim_corresponding_to_num_agents,
                      num_devices=ctx.world_size, device_id=ctx.rank, results_directory=run_dir,
                      verbose=False)  # fmt: skip
    return trainer, config


def replica_spread(trainer: Trainer, ctx: DistributedContext) -> float:
    """The largest difference of any parameter between the processes (0: identical replicas)."""
    flat = torch.cat(
        [
            p.detach().reshape(-1)
            for pol in trainer.policies.values()
            for p in pol.model.parameters()
        ]
    )
    return (-ctx.min(-flat) - ctx.min(flat)).max().item()


def measure(
    args: argparse.Namespace,
    num_envs: int,
    device: str,
    run_dir: str,
    ctx: DistributedContext | None = None,
) -> dict:
    """Time ``args.iterations`` training iterations in this process (every rank calls this)."""
    ctx = ctx or DistributedContext()
    if device == "cuda":
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    trainer, config = build_trainer(args, num_envs, device, run_dir, ctx)
    for _ in range(args.warmup):
        trainer.train_iteration()
    sync(device)
    ctx.barrier()  # every rank starts the clock together
    start = time.perf_counter()
    for _ in range(args.iterations):
        trainer.train_iteration()
    sync(device)
    elapsed = time.perf_counter() - start
    ctx.barrier()
    batch = config["trainer"]["train_batch_size"]  # per process
    shards = ctx.gather({"elapsed_s": elapsed, "env_steps": args.iterations * batch})
    spread = replica_spread(trainer, ctx) if ctx.enabled else 0.0
    peak = torch.cuda.max_memory_allocated(trainer.device) if device == "cuda" else 0
    trainer.timer = PhaseTimer(trainer.device, synchronize=True)
    trainer.train_iteration()
    phases = {k: v * 1e3 for k, v in trainer.timer.pop().items()}
    trainer.graceful_close()
    longest = max(s["elapsed_s"] for s in shards)
    aggregate = sum(s["env_steps"] for s in shards) / longest
    return {
        "num_gpus": ctx.world_size,
        "num_envs": num_envs,  # per GPU (process)
        "train_batch_size": batch,  # per GPU (process)
        "env_steps_per_s": aggregate,  # all GPUs together
        "env_steps_per_s_per_gpu": aggregate / ctx.world_size,
        "iteration_ms": longest / args.iterations * 1e3,
        "elapsed_s_per_rank": [s["elapsed_s"] for s in shards],
        "replica_max_param_diff": spread,
        "phases_ms": phases,  # rank 0's profiled iteration
        "graph_mode": graph_mode(trainer),  # off | policy | rollout | iter
        "precision": config["trainer"]["precision"],
        "fused_sampling": config["trainer"]["fused_sampling"],  # asked for
        "fused_sampling_kernel": config["trainer"]["fused_sampling_kernel"],  # asked for
        "fused_kernel": (  # asked for and supported: the twin that ran, or ""
            fused_sampling_kernel(config["trainer"]["fused_sampling_kernel"])
            if trainer.rollout.fused_sampling
            else ""
        ),
        "fused_layers": config["trainer"]["fused_layers"],
        "bf16_heads": config["trainer"]["bf16_heads"],
        "gpu_peak_mib_per_env": peak / 2**20 / num_envs,  # models, buffers, env state, update
        "num_mini_batches": {t: c["num_mini_batches"] for t, c in config["policy"].items()},
    }


def _rank_worker(ctx: DistributedContext, args: argparse.Namespace, num_envs: int, device: str,
                 run_dir: str, out_path: str) -> None:  # fmt: skip
    """One process of a multi-GPU measurement; rank 0 writes the result to ``out_path``."""
    if device == "cpu" and args.num_threads > 0:
        torch.set_num_threads(args.num_threads)
    result = measure(args, num_envs, device, run_dir, ctx)
    if ctx.is_main:
        Path(out_path).write_text(json.dumps(result))


def start_method(args: argparse.Namespace, device: str) -> str:
    """``spawn`` (as ``training_script.py``; the only choice with CUDA), or ``fork`` on the CPU
    when every process uses one torch thread (a fork after OpenMP ran with more threads can hang
    the child)."""
    if args.start_method != "auto":
        return args.start_method
    return "fork" if device == "cpu" and args.num_threads == 1 else "spawn"


def measure_distributed(
    args: argparse.Namespace, num_envs: int, num_gpus: int, device: str, run_dir: str
) -> dict:
    """Launch ``num_gpus`` processes (NCCL on GPUs, gloo on the CPU) and time them together."""
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()  # leave GPU 0 to rank 0
    out_path = f"{run_dir}.rank0.json"
    backend = "nccl" if device == "cuda" else "gloo"
    launch(_rank_worker, num_gpus, (args, num_envs, device, run_dir, out_path), backend=backend,
           start_method=start_method(args, device))  # fmt: skip
    return json.loads(Path(out_path).read_text())


def parse_peers(text: str) -> dict[int, float]:
    """``"60:16900,1200:134600"`` -> {60: 16900.0, 1200: 134600.0} (envs: env-steps/s)."""
    peers = {}
    for item in filter(None, text.split(",")):
        envs, _, rate = item.partition(":")
        try:
            peers[int(envs)] = float(rate)
        except ValueError:
            raise SystemExit(f"--peer: {item!r} is not ENVS:ENV_STEPS_PER_S") from None
    return peers


def graph_mode(trainer: Trainer) -> str:
    """What replays from CUDA graphs: ``iter`` (the whole iteration), else the rollout's
    mode (``rollout``, ``policy`` or ``off``)."""
    graph = trainer.iteration_graph
    if graph is not None and graph.graph is not None:
        return "iter"
    return trainer.rollout.graph_mode


def format_row(r: dict, base: dict | None, peer: float | None = None) -> str:
    scaling = f"{r['env_steps_per_s'] / base['env_steps_per_s']:>8.2f}x" if base else f"{'-':>9}"
    ratio = f"{r['env_steps_per_s'] / peer:>7.1f}x" if peer else f"{'-':>8}"
    phases = "  ".join(f"{k} {v:.1f}" for k, v in r["phases_ms"].items() if k != "rollout")
    return (
        f"{r['num_gpus']:>4} {r['num_envs']:>9} {r['train_batch_size']:>9} "
        f"{r['env_steps_per_s']:>14,.0f} {r['env_steps_per_s_per_gpu']:>12,.0f} "
        f"{r['iteration_ms']:>9.1f} {scaling} {ratio} {r['gpu_peak_mib_per_env']:>8.2f} "
        f"{r['graph_mode']:>7} {r['precision']:>5} {r['fused_kernel'] or 'no':>6} "
        f"{'yes' if r['fused_layers'] else 'no':>5} {'yes' if r['bf16_heads'] else 'no':>5} "
        f"| {phases}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--env", default="covid_and_economy_environment", choices=sorted(ENVIRONMENTS)
    )
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument(
        "--num_envs", type=int, nargs="+", default=[60, 1200, 10000], help="envs per GPU"
    )
    parser.add_argument("--num_gpus", type=int, nargs="+", default=[1],
                        help="data-parallel processes (GPUs; gloo processes with --device cpu), "
                             "e.g. 1 2 for the scaling over one GPU")  # fmt: skip
    parser.add_argument("--start_method", default="auto", choices=("auto", "spawn", "fork"),
                        help="how N > 1 processes start; auto: spawn, or fork on the CPU with "
                             "--num_threads 1 (faster)")  # fmt: skip
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
    parser.add_argument("--num_threads", type=int, default=0,
                        help="trainer.num_threads (0: the cores shared out among processes)")  # fmt: skip
    parser.add_argument("--compile", action="store_true", help="torch.compile the models")
    parser.add_argument("--compile_update", action="store_true",
                        help="trainer.compile_update: torch.compile the update's loss")  # fmt: skip
    parser.add_argument(
        "--cuda_graphs",
        action="store_true",
        help="trainer.cuda_graphs: the rollout from CUDA graphs (whole rollout when the env's "
        "step can be captured)",
    )
    parser.add_argument("--update_graph", default="on", choices=("on", "off"),
                        help="trainer.cuda_graph_update: with --cuda_graphs, the whole iteration "
                             "(rollout and update) as one CUDA graph")  # fmt: skip
    parser.add_argument("--fused_layers", default="on", choices=("on", "off"),
                        help="trainer.fused_layers: matmul and ReLU in one kernel in the update")  # fmt: skip
    parser.add_argument("--bf16_heads", default="on", choices=("on", "off"),
                        help="trainer.bf16_heads: bf16 heads with float32 output in a bf16 update")  # fmt: skip
    parser.add_argument("--precision", default="fp32", choices=("fp32", "bf16"),
                        help="trainer.precision (bf16: autocast of the hidden layers)")  # fmt: skip
    parser.add_argument("--acting_precision", default="", choices=("", "fp32", "bf16"),
                        help="trainer.acting_precision (default: as --precision)")  # fmt: skip
    parser.add_argument("--fused_sampling", nargs="+", default=["on"],
                        choices=("on", "off", "cuda_c", "triton"),
                        help="trainer.fused_sampling; 'on off' times both, one after the "
                             "other; cuda_c / triton: on, with that twin of the kernel")  # fmt: skip
    parser.add_argument("--peer", default=None,
                        help="peer figures to print ratios against, ENVS:ENV_STEPS_PER_S,...; "
                             "default for COVID-19: the original pipeline on one H200, "
                             f"{ORIGINAL_H200}")  # fmt: skip
    parser.add_argument("--config", default="",
                        help="time this packaged run config as it is (e.g. tag_continuous: its "
                             "envs, batch, algorithms and models; --env, --num_envs, "
                             "--rollout_length, --fc_dims and minibatches are ignored)")  # fmt: skip
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    if args.config:
        packaged = load_run_config(find_run_config(args.config))
        args.env, args.num_envs = packaged["name"], [packaged["trainer"]["num_envs"]]
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # no NVLink multicast (NVLS) for NCCL
    device = resolve_device(args.device)
    num_gpus = sorted(set(args.num_gpus))
    if num_gpus[0] < 1:
        parser.error("--num_gpus: every value must be at least 1")
    if device == "cuda" and num_gpus[-1] > torch.cuda.device_count():
        parser.error(f"--num_gpus {num_gpus[-1]}: only {torch.cuda.device_count()} GPU(s) visible")
    if device == "cuda" and args.start_method == "fork":
        parser.error("--start_method fork: CUDA processes must be spawned")
    default_peer = ORIGINAL_H200 if args.env == "covid_and_economy_environment" else ""
    peers = parse_peers(default_peer if args.peer is None else args.peer)
    results, scaling = [], []
    hardware = hardware_name(device, num_gpus[-1])
    with tempfile.TemporaryDirectory() as tmp:
        if device == "cpu" and args.num_threads > 0:
            torch.set_num_threads(args.num_threads)
            hardware = hardware_name(device, num_gpus[-1])
        print(f"env {args.env} on {device}: {hardware}")
        print(f"{'gpus':>4} {'envs/gpu':>9} {'batch/gpu':>9} {'env-steps/s':>14} "
              f"{'per GPU':>12} {'iter ms':>9} {'vs 1 GPU':>9} {'vs peer':>8} {'MiB/env':>8} "
              f"{'graphs':>7} {'prec':>5} {'fused':>6} {'f-lay':>5} {'b-hd':>5} | profiled iteration (ms, rank 0)")  # fmt: skip
        for num_envs, fused in itertools.product(args.num_envs, args.fused_sampling):
            args.fused = fused  # read by build_trainer (also in the spawned ranks)
            base = None
            for n in num_gpus:
                run_dir = f"{tmp}/{num_envs}x{n}{args.fused}"
                if n == 1:
                    r = measure(args, num_envs, device, run_dir)
                else:
                    r = measure_distributed(args, num_envs, n, device, run_dir)
                if n == 1:
                    base = r
                elif base is not None:
                    scaling.append({
                        "num_envs": num_envs, "num_gpus": n,
                        "scaling": r["env_steps_per_s"] / base["env_steps_per_s"],
                        "target": SCALING_TARGET_PER_GPU * n,
                        "replica_max_param_diff": r["replica_max_param_diff"],
                    })  # fmt: skip
                peer = peers.get(num_envs) if n == 1 else None
                print(format_row(r, base if n > 1 else None, peer), flush=True)
                results.append(r)
    for s in scaling:
        verdict = "meets" if s["scaling"] >= s["target"] else "BELOW"
        sync_note = "in sync" if s["replica_max_param_diff"] <= IN_SYNC else "DIFFER"
        print(f"{s['num_envs']} envs/GPU, {s['num_gpus']} GPUs: scaling vs 1 GPU: "
              f"{s['scaling']:.2f}x (target >= {s['target']:.1f}x: {verdict}); replicas "
              f"{sync_note} (max |param diff| {s['replica_max_param_diff']:.3g})")  # fmt: skip
    if args.json:
        meta = {"env": args.env, "device": device, "hardware": hardware, "args": vars(args)}
        out = {**meta, "results": results, "scaling": scaling}
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

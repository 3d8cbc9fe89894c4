"""Where the GPU time of one training iteration goes: the top kernels of a rollout and of an
update, from ``torch.profiler``.

    python benchmarks/profile_iteration.py --num_envs 1200 [--precision bf16] [--rows 20]
        [--env covid_and_economy_environment] [--cuda_graphs] [--config RUN_CONFIG]
        [--compile_update] [--acting_precision fp32] [--fused_sampling on] [--fused_layers on] [--bf16_heads on]

It builds the trainer exactly as ``train_throughput.py`` does (published models, one epoch,
minibatches of at most ``--max_minibatch`` agent-steps), runs ``--warmup`` iterations, then
times each phase's host enqueue time against its completion (``--host_repeats`` iterations:
where the two are close the phase is bound by host launches), then
profiles one rollout and one update separately and prints, for each, the kernels sorted by
their total GPU time (with ``--cuda_graphs`` a replayed rollout shows as one graph launch;
leave it off to see its kernels; the update is never captured here, since the phases run one
by one: ``trainer.cuda_graph_update`` is off).  ``--config NAME`` profiles a packaged run config as it is
(its own trainer and policies, e.g. ``tag_continuous``) instead.  It measures; it changes
nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_throughput import build_trainer  # noqa: E402

from ai_economist.training.config import find_run_config, load_run_config  # noqa: E402
from ai_economist.training.training_script import build_trainer as build_registered  # noqa: E402
from ai_economist.warp_drive.training.distributed import DistributedContext  # noqa: E402


def build_from_run_config(args: argparse.Namespace, run_dir: str) -> Any:
    """The trainer of a packaged run config, on the GPU, with only the device settings changed."""
    overrides = ["trainer.device=cuda", "trainer.num_episodes=100000000",
                 f"trainer.precision={args.precision}", "trainer.progress_bar=false",
                 f"trainer.cuda_graphs={str(args.cuda_graphs).lower()}", "saving.tensorboard=false",
                 "trainer.cuda_graph_update=false",
                 f"trainer.compile_update={str(args.compile_update).lower()}",
                 f"trainer.acting_precision={args.acting_precision}",
                 f"trainer.fused_sampling={str(args.fused == 'on').lower()}",
                 f"trainer.fused_layers={str(args.fused_layers == 'on').lower()}",
                 f"trainer.bf16_heads={str(args.bf16_heads == 'on').lower()}"]  # fmt: skip
    config = load_run_config(find_run_config(args.config), overrides)
    return build_registered(config, torch.device("cuda"), results_directory=run_dir, verbose=False)


def host_and_device_ms(trainer: Any, repeats: int) -> dict[str, tuple[float, float]]:
    """Per phase, the median over ``repeats`` iterations of (the host's time to enqueue the
    phase, without waiting for the GPU; the time until the GPU finished it), in ms.  Where the
    two are close, the phase is bound by the host's launches."""
    times: dict[str, list[tuple[float, float]]] = {"rollout": [], "update": []}
    for _ in range(repeats):
        for name, phase in (("rollout", trainer._collect_rollout), ("update", trainer._update)):
            torch.cuda.synchronize()
            start = time.perf_counter()
            phase()
            queued = time.perf_counter()
            torch.cuda.synchronize()
            times[name].append(((queued - start) * 1e3, (time.perf_counter() - start) * 1e3))
    return {
        name: (statistics.median(h for h, _ in pairs), statistics.median(d for _, d in pairs))
        for name, pairs in times.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="covid_and_economy_environment")
    parser.add_argument("--num_envs", type=int, default=1200)
    parser.add_argument("--rollout_length", type=int, default=90)
    parser.add_argument("--precision", default="fp32", choices=("fp32", "bf16"))
    parser.add_argument(
        "--acting_precision",
        default="",
        choices=("", "fp32", "bf16"),
        help="rollout precision ('' = --precision)",
    )
    parser.add_argument("--cuda_graphs", action="store_true")
    parser.add_argument(
        "--compile_update",
        action="store_true",
        help="torch.compile the PPO loss (trainer.compile_update)",
    )
    parser.add_argument("--fused_sampling", dest="fused", default="on", choices=("on", "off"))
    parser.add_argument("--fused_layers", default="on", choices=("on", "off"))
    parser.add_argument("--bf16_heads", default="on", choices=("on", "off"))
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--sort", default="device", choices=("device", "cpu"),
                        help="order of the kernel/op tables: GPU time, or host (CPU) time")  # fmt: skip
    parser.add_argument("--host_repeats", type=int, default=10,
                        help="iterations timed for the host-vs-GPU split of each phase")  # fmt: skip
    parser.add_argument("--rows", type=int, default=20, help="kernels listed per phase")
    parser.add_argument("--max_minibatch", type=int, default=1 << 21)
    parser.add_argument("--config", default="", help="profile this packaged run config as it is")
    args = parser.parse_args(argv)
    args.update_graph = "off"  # the phases one by one: the rollout graph alone
    if not torch.cuda.is_available():
        parser.error("needs a CUDA GPU")
    defaults = {"device": "cuda", "env_backend": "auto", "compile": False, "num_threads": 1,
                "fc_dims": "[256,256]", "num_mini_batches": 0}  # fmt: skip
    for key, value in defaults.items():
        setattr(args, key, value)
    with tempfile.TemporaryDirectory() as tmp:
        if args.config:
            trainer = build_from_run_config(args, tmp)
        else:
            trainer, _ = build_trainer(args, args.num_envs, "cuda", tmp, DistributedContext())
        for _ in range(args.warmup):
            trainer.train_iteration()
        torch.cuda.synchronize()
        print(f"host vs GPU, median of {args.host_repeats} iterations ({args.num_envs} envs):")
        for name, (host, done) in host_and_device_ms(trainer, args.host_repeats).items():
            print(
                f"  {name}: host enqueues it in {host:.2f} ms, the GPU finishes it at {done:.2f} ms"
            )
        for name, phase in (("rollout", trainer._collect_rollout), ("update", trainer._update)):
            with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
                phase()
                torch.cuda.synchronize()
            events = prof.key_averages()
            gpu_total = sum(e.self_device_time_total for e in events) / 1e3
            print(f"\n== {name}: {gpu_total:.2f} ms of GPU kernel time, "
                  f"{sum(e.count for e in events if e.self_device_time_total > 0)} GPU ops "
                  f"({args.num_envs} envs, {args.precision})")  # fmt: skip
            key = "self_device_time_total" if args.sort == "device" else "self_cpu_time_total"
            print(events.table(sort_by=key, row_limit=args.rows,
                               max_name_column_width=60))  # fmt: skip
        trainer.graceful_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The learning check over several seeds at once: robust, or lucky?

    python benchmarks/learning_seeds.py --device cuda --seeds 0 1 2 3 4 --minutes 6 \\
        --config covid_and_economy_gpu_learning \\
        --results_dir runs/seeds [--gpus 0 1] [key.path=value ...]

Starts one ``learning_vs_fixed_policies.py`` process per seed, all at once (on one GPU unless
``--gpus`` spreads them round-robin over several), each training for at most ``--minutes`` of
wall clock with ``trainer.seed=<seed>`` and its own results folder ``<results_dir>/seed_<S>``
(log, metrics, last checkpoint, ``models.pt``, ``result.json``, policy-response plots).  When
all are done (or ``--timeout_minutes`` have passed: the late ones are stopped and reported
as missing), it prints per seed: wall clock, iterations, env-steps, the greedy and sampled
planner sums, the verdict against every fixed policy of the learning check, whether the
greedy policy is a constant, and the trained planner against the real-world policies on the
tutorial configuration; then a summary row (mean, worst and best greedy sum, seeds beating
every fixed policy, seeds per GPU-hour) and writes all of it to ``<results_dir>/summary.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from learning_report import write_json  # noqa: E402

SHORT_NAMES = {
    "all open, no subsidy": "open",
    "all closed, full subsidy": "closed",
    "closed 180 days, then open, no subsidy": "180-open",
}


def child_command(args: argparse.Namespace, seed: int, run_dir: Path) -> list[str]:
    """The command line of one seed's ``learning_vs_fixed_policies.py`` process."""
    command = [
        sys.executable, str(HERE / "learning_vs_fixed_policies.py"),
        "--device", args.device, "--minutes", str(args.minutes),
        "--eval_every_minutes", str(args.eval_every_minutes),
        "--results_dir", str(run_dir), "--json", str(run_dir / "result.json"),
        "--save_models", str(run_dir / "models.pt"),
        "--sampled_episodes", str(args.sampled_episodes),
    ]  # fmt: skip
    if args.config:
        command += ["--config", args.config]
    if args.no_real_world:
        command.append("--no_real_world")
    return command + [
        *args.overrides,
        f"trainer.seed={seed}",
        "trainer.progress_bar=false",
        "saving.keep_checkpoints=1",
    ]


def launch(args: argparse.Namespace, results_dir: Path) -> dict[int, subprocess.Popen]:
    """Start one process per seed; its output goes to ``seed_<S>/log.txt``."""
    threads = max(1, (os.cpu_count() or 1) // len(args.seeds))
    processes = {}
    for k, seed in enumerate(args.seeds):
        run_dir = results_dir / f"seed_{seed}"
        run_dir.mkdir(parents=True, exist_ok=True)
        path = os.pathsep.join(p for p in (str(HERE.parent), os.environ.get("PYTHONPATH")) if p)
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), PYTHONPATH=path)
        if args.gpus:
            env["CUDA_VISIBLE_DEVICES"] = str(args.gpus[k % len(args.gpus)])
        with open(run_dir / "log.txt", "w") as log:
            processes[seed] = subprocess.Popen(
                child_command(args, seed, run_dir), stdout=log, stderr=subprocess.STDOUT, env=env
            )
    return processes


def wait(processes: dict[int, subprocess.Popen], timeout_s: float) -> dict[int, int | None]:
    """Exit status per seed; processes still running after ``timeout_s`` are stopped (None)."""
    deadline = time.perf_counter() + timeout_s
    while any(p.poll() is None for p in processes.values()):
        if time.perf_counter() >= deadline:
            for p in processes.values():
                if p.poll() is None:
                    p.terminate()
            for p in processes.values():
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
            return {s: None if p.returncode and p.returncode < 0 else p.returncode
                    for s, p in processes.items()}  # fmt: skip
        time.sleep(1.0)
    return {seed: p.returncode for seed, p in processes.items()}


def read_results(results_dir: Path, seeds: list[int]) -> dict[int, dict | None]:
    """Each seed's ``result.json`` (None when absent or unreadable)."""
    results = {}
    for seed in seeds:
        path = results_dir / f"seed_{seed}" / "result.json"
        try:
            results[seed] = json.loads(path.read_text())
        except (OSError, ValueError):
            results[seed] = None
    return results


def summarise(results: dict[int, dict | None], elapsed_s: float, gpus: int) -> dict[str, Any]:
    """The summary row: greedy planner sums' mean, worst and best over the seeds with a
    result, seeds beating every fixed policy, and finished seeds per GPU-hour (``elapsed_s``
    of ``gpus`` GPUs, start-up and evaluations included)."""
    done = {s: r for s, r in results.items() if r and "greedy_planner_sum" in r}
    greedy = [r["greedy_planner_sum"] for r in done.values()]
    hours = elapsed_s / 3600 * max(gpus, 1)
    return {
        "seeds": len(results),
        "seeds_with_result": len(done),
        "greedy_mean": float(np.mean(greedy)) if greedy else None,
        "greedy_worst": float(min(greedy)) if greedy else None,
        "greedy_best": float(max(greedy)) if greedy else None,
        "seeds_beating_all_fixed": sum(bool(r["beats_all_fixed"]) for r in done.values()),
        "seeds_beating_real_world": sum(
            bool(r.get("real_world", {}).get("beats_real_world")) for r in done.values()
        ),
        "constant_policies": sum(
            bool(r["policy_response"]["constancy"]["is_constant"]) for r in done.values()
        ),
        "elapsed_s": elapsed_s,
        "gpus": gpus,
        "seeds_per_gpu_hour": len(done) / hours if hours > 0 else None,
    }


def _cell(value: Any, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def format_table(results: dict[int, dict | None], summary: dict[str, Any]) -> str:
    """Per-seed rows and the summary row, as text."""
    head = (f"{'seed':>4} {'wall s':>7} {'iters':>6} {'env-steps':>12} {'greedy':>7} "
            f"{'sampled':>7} {'s.train':>7} | " + " ".join(f"{n:>8}" for n in SHORT_NAMES.values())
            + f" {'all?':>4} | {'constant':>8} {'chg/st':>6} | {'real wld':>8}")  # fmt: skip
    lines = [head]
    for seed, r in results.items():
        if not r:
            lines.append(f"{seed:>4} (no result: see seed_{seed}/log.txt)")
            continue
        v = r.get("verdicts", {})
        margins = " ".join(_cell(v.get(n, {}).get("margin"), "+8.2f") for n in SHORT_NAMES)
        c = r.get("policy_response", {}).get("constancy", {})
        rw = r.get("real_world", {}).get("margin")
        lines.append(
            f"{seed:>4} {_cell(r.get('wall_clock_s'), '7.1f')} {_cell(r.get('iterations'), '6d')} "
            f"{_cell(r.get('env_steps'), '12,d')} {_cell(r.get('greedy_planner_sum'), '7.2f')} "
            f"{_cell(r.get('sampled_planner_sum'), '7.2f')} "
            f"{_cell(r.get('sampled_training_planner_sum'), '7.2f')} | {margins} "
            f"{('yes' if r.get('beats_all_fixed') else 'NO'):>4} | "
            f"{('YES' if c.get('is_constant') else 'no') if c else '-':>8} "
            f"{_cell(c.get('mean_changes'), '6.2f')} | {_cell(rw, '+8.2f')}"
        )
    s = summary
    lines.append(
        f"summary: greedy planner sum mean {_cell(s['greedy_mean'], '.2f')}, worst "
        f"{_cell(s['greedy_worst'], '.2f')}, best {_cell(s['greedy_best'], '.2f')}; "
        f"{s['seeds_beating_all_fixed']} of {s['seeds']} seeds beat every fixed policy, "
        f"{s['seeds_beating_real_world']} beat the real-world policies, "
        f"{s['constant_policies']} are constants; {s['seeds_with_result']} seeds in "
        f"{s['elapsed_s'] / 60:.1f} min on "
        + (
            f"{s['gpus']} GPU(s): {_cell(s['seeds_per_gpu_hour'], '.1f')} seeds per GPU-hour"
            if s["gpus"]
            else f"the CPU: {_cell(s['seeds_per_gpu_hour'], '.1f')} seeds per hour"
        )
    )
    lines.append("(fixed-policy columns: greedy sum minus the fixed policy's; real wld: minus "
                 "the real-world policies' on the tutorial config)")  # fmt: skip
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--minutes", type=float, default=6.0, help="training budget per seed")
    parser.add_argument("--timeout_minutes", type=float, default=0.0,
                        help="stop seeds still running after this (default minutes + 3)")  # fmt: skip
    parser.add_argument("--eval_every_minutes", type=float, default=1.0)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--gpus", nargs="*", default=[], help="GPU ids to spread seeds over")
    parser.add_argument("--config", default="", help="run config (default: the published one)")
    parser.add_argument("--results_dir", default="runs/learning_seeds")
    parser.add_argument("--sampled_episodes", type=int, default=4)
    parser.add_argument("--no_real_world", action="store_true")
    parser.add_argument("overrides", nargs="*", help="run-config overrides, key.path=value")
    args = parser.parse_args(argv)
    if len(set(args.seeds)) != len(args.seeds):
        parser.error(f"--seeds {args.seeds}: each seed once")
    bad = [o for o in args.overrides if "=" not in o or o.startswith("trainer.seed=")]
    if bad:
        parser.error(f"overrides {bad}: expected key.path=value (the seed comes from --seeds)")
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    results_dir = Path(args.results_dir)
    results_dir.mkdir(parents=True, exist_ok=True)
    timeout = (args.timeout_minutes or args.minutes + 3) * 60
    print(f"{len(args.seeds)} seeds {args.seeds}, {args.minutes} min each, side by side on "
          f"{args.device} {'GPUs ' + ' '.join(args.gpus) if args.gpus else ''}; "
          f"logs in {results_dir}/seed_<S>/log.txt", flush=True)  # fmt: skip
    start = time.perf_counter()
    status = wait(launch(args, results_dir), timeout)
    elapsed = time.perf_counter() - start
    results = read_results(results_dir, args.seeds)
    gpus = len(args.gpus) if args.gpus else (1 if args.device.startswith("cuda") else 0)
    summary = summarise(results, elapsed, gpus)
    print(format_table(results, summary))
    for seed, code in status.items():
        if code != 0:
            print(f"seed {seed}: exit status {code} (None: stopped at the timeout)")
    out = {"command": sys.argv, "args": vars(args), "exit_status": status,
           "summary": summary, "seeds": results}  # fmt: skip
    print(f"summary written to {write_json(results_dir / 'summary.json', out)}")
    return out


if __name__ == "__main__":
    main()

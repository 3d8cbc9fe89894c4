"""GPU stepping speed of the COVID-19 & economy simulator (environment only, no policy).

    python benchmarks/gpu_env_step.py [--num_envs 60 1200 10000 100000]
        [--backends pycuda numba] [--modes fused per_component] [--steps 540] [--episode]
        [--actions fixed_random|noop] [--define COVID_FUSED_TARGET_WARPS=32]

For each backend, step mode and number of envs: builds ``CovidGpuBackend`` with the published
configuration, warms up (compilation, caches), resets, then times ``--steps`` consecutive
``step()`` calls (one 540-day episode by default) and prints env-steps/s and agent-steps/s
(x52: 51 states + the planner), from the wall clock around the loop (torch.cuda.synchronize
before and after) and from CUDA events (GPU time).  ``--episode`` also calls
``reset_done()`` after every step, as a training loop does, and times whole episodes.

Actions: by default every state asks for its own random level (drawn once), so each state
changes level at every cooldown end and the action masks flip as in training; ``--actions
noop`` keeps every level.  ``--define`` passes nvcc defines to the CUDA C kernels (pycuda).

Targets on one H200 (pycuda backend): >= 1.2e7 env-steps/s at 1,200 envs and >= 1e8
env-steps/s at 100,000 envs.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

TARGETS = {1200: 1.2e7, 100_000: 1e8}  # env-steps/s, pycuda backend


def time_steps(backend, steps: int, with_reset: bool) -> tuple[float, float]:
    """(wall seconds, GPU seconds) of ``steps`` steps (plus ``reset_done`` after each)."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    step, reset = backend.step, backend.reset_done
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    start.record()
    if with_reset:
        for _ in range(steps):
            step()
            reset()
    else:
        for _ in range(steps):
            step()
    end.record()
    torch.cuda.synchronize()
    return time.perf_counter() - t0, start.elapsed_time(end) / 1e3


def run_one(name: str, mode: str, num_envs: int, args, params, comps) -> dict:
    import torch

    from ai_economist.foundation.scenarios.covid19.backends.gpu_backend import CovidGpuBackend

    t0 = time.perf_counter()
    defines = dict(d.split("=", 1) for d in args.define)
    backend = CovidGpuBackend(
        params,
        comps,
        num_envs,
        backend=name,
        fused_step=(mode == "fused"),
        kernel_defines={k: int(v) for k, v in defines.items()},
    )
    setup = time.perf_counter() - t0
    if args.actions == "noop":  # the states keep their level, the planner subsidy level 0
        backend.tensor("sampled_actions_a").zero_()
        backend.tensor("sampled_actions_p").zero_()
    else:  # each state asks for its own random level whenever its cooldown allows a change
        gen = torch.Generator(device="cuda").manual_seed(0)
        backend.tensor("sampled_actions_a").random_(
            1, params.num_stringency_levels + 1, generator=gen
        )
        backend.tensor("sampled_actions_p").random_(0, 21, generator=gen)
    time_steps(backend, args.warmup, with_reset=args.episode)  # compile, caches, clocks
    backend.reset_all()
    wall, gpu = time_steps(backend, args.steps, with_reset=args.episode)
    assert int(backend.tensor("_timestep_")[0]) in (args.steps % params.episode_length, args.steps)
    result = {
        "backend": name,
        "mode": mode,
        "num_envs": num_envs,
        "setup_s": setup,
        "us_per_step": wall / args.steps * 1e6,
        "gpu_us_per_step": gpu / args.steps * 1e6,
        "env_steps_per_s": num_envs * args.steps / wall,
        "memory_gib": backend.memory_bytes() / 2**30,
    }
    del backend
    gc.collect()
    torch.cuda.empty_cache()
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--num_envs", type=int, nargs="+", default=[60, 1200, 10_000, 100_000])
    parser.add_argument("--backends", nargs="+", default=["pycuda", "numba"])
    parser.add_argument("--modes", nargs="+", default=["fused", "per_component"])
    parser.add_argument("--steps", type=int, default=540, help="timed steps (one episode)")
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument(
        "--episode", action="store_true", help="call reset_done() after every step (whole episodes)"
    )
    parser.add_argument(
        "--actions",
        choices=("fixed_random", "noop"),
        default="fixed_random",
        help="fixed_random: a random level per state (changes at every cooldown end, so masks "
        "flip as in training); noop: nothing ever changes",
    )
    parser.add_argument(
        "--define",
        action="append",
        default=[],
        metavar="NAME=INT",
        help="extra nvcc define for the CUDA C kernels, e.g. COVID_FUSED_TARGET_WARPS=48 (which "
        "also gives the Numba fused kernel launch bounds for that many warps per SM)",
    )
    args = parser.parse_args(argv)

    import torch

    from ai_economist.foundation.scenarios.covid19.configs import published_model

    if not torch.cuda.is_available():
        raise SystemExit("no CUDA GPU visible to torch: this benchmark needs one")
    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    params, comps = published_model()
    print(
        f"published config: {params.num_agents} states + planner, episode {params.episode_length}"
        f" days; timed {args.steps} steps after {args.warmup} warm-up steps; actions {args.actions}"
        + (", reset_done() after every step" if args.episode else "")
        + (f"; nvcc defines {' '.join(args.define)}" if args.define else "")
    )
    header = (
        f"{'backend':8s} {'mode':14s} {'envs':>8s} {'us/step':>9s} {'GPU us':>9s} "
        f"{'env-steps/s':>12s} {'agent-steps/s':>14s} {'GiB':>6s} {'setup s':>8s}"
    )
    print(header)
    results = []
    for name in args.backends:
        for mode in args.modes:
            for num_envs in args.num_envs:
                try:
                    r = run_one(name, mode, num_envs, args, params, comps)
                except Exception as exc:  # report and go on with the other settings
                    print(f"{name:8s} {mode:14s} {num_envs:8d} FAILED: {type(exc).__name__}: {exc}")
                    continue
                results.append(r)
                print(
                    f"{name:8s} {mode:14s} {num_envs:8d} {r['us_per_step']:9.1f} "
                    f"{r['gpu_us_per_step']:9.1f} {r['env_steps_per_s']:12.3e} "
                    f"{r['env_steps_per_s'] * (params.num_agents + 1):14.3e} "
                    f"{r['memory_gib']:6.2f} {r['setup_s']:8.1f}",
                    flush=True,
                )
    for num_envs, target in TARGETS.items():
        best = [r for r in results if r["backend"] == "pycuda" and r["num_envs"] == num_envs]
        if best:
            top = max(best, key=lambda r: r["env_steps_per_s"])
            verdict = "met" if top["env_steps_per_s"] >= target else "NOT met"
            print(
                f"target {target:.1e} env-steps/s at {num_envs} envs (pycuda): {verdict} "
                f"({top['env_steps_per_s']:.3e}, {top['mode']})"
            )


if __name__ == "__main__":
    main()

"""CPU stepping speed of the COVID-19 & economy simulator, on one core.

    python benchmarks/cpu_step.py [--steps 1080] [--batch_envs 1 100 1000 4000]

Prints env-steps/s for one env through the Foundation dict API (``env.step``), and for a
batch of envs stepped together through the array model (``CovidSimulation.step``), with the
CPU named.  Targets (issue 2): >= 3,000 env-steps/s for one env, >= 50,000 batched.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from ai_economist import foundation  # noqa: E402
from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG, env_config  # noqa: E402
from ai_economist.foundation.scenarios.covid19.simulation import CovidSimulation  # noqa: E402


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def pin_to_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        core = sorted(os.sched_getaffinity(0))[0]
        os.sched_setaffinity(0, {core})
        return f"pinned to core {core}"
    return "not pinned"


def bench_dict_api(steps: int, repeats: int) -> float:
    env = foundation.make_env_instance(
        "CovidAndEconomySimulation", **env_config(TRAINING_ENV_CONFIG)
    )
    rng = np.random.default_rng(0)
    actions = [{"a": rng.integers(0, 11, 51), "p": int(rng.integers(0, 21))} for _ in range(64)]
    best = 0.0
    for _ in range(repeats):
        env.reset()
        done_steps, start = 0, time.perf_counter()
        while done_steps < steps:
            _, _, done, _ = env.step(actions[done_steps % 64])
            done_steps += 1
            if done["__all__"]:
                env.reset()
        best = max(best, done_steps / (time.perf_counter() - start))
    return best


def bench_batched(num_envs: int, steps: int, repeats: int) -> float:
    env = foundation.make_env_instance(
        "CovidAndEconomySimulation", **env_config(TRAINING_ENV_CONFIG)
    )
    sim = CovidSimulation(env.params, env.component_params(), num_envs)
    rng = np.random.default_rng(0)
    agent_actions = rng.integers(0, 11, (num_envs, 51))
    planner_actions = rng.integers(0, 21, num_envs)
    best = 0.0
    for _ in range(repeats):
        sim.reset()
        start = time.perf_counter()
        for _ in range(steps):
            sim.step(agent_actions, planner_actions)
        best = max(best, num_envs * steps / (time.perf_counter() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1080, help="steps per timed run (dict API)")
    parser.add_argument("--batch_envs", type=int, nargs="+", default=[1, 100, 1000, 4000])
    parser.add_argument("--batch_steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3, help="best of N runs")
    args = parser.parse_args()
    print(
        f"CPU: {cpu_name()} ({pin_to_one_core()}), numpy {np.__version__}, Python {platform.python_version()}"
    )
    rate = bench_dict_api(args.steps, args.repeats)
    print(
        f"dict API, 1 env (env.step, 51 states + planner): {rate:,.0f} env-steps/s  (target 3,000)"
    )
    for n in args.batch_envs:
        rate = bench_batched(n, args.batch_steps, args.repeats)
        print(
            f"array model, {n:>5} envs (CovidSimulation.step): {rate:,.0f} env-steps/s  (target 50,000)"
        )


if __name__ == "__main__":
    main()

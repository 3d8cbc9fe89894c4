"""CPU stepping speed of the Foundation simulators, on one core.

    python benchmarks/cpu_step.py [--steps 1080] [--batch_envs 1 100 1000 4000]
    python benchmarks/cpu_step.py --env layout_from_file/simple_wood_and_stone [--steps 3000]

COVID-19 (default): env-steps/s for one env through the Foundation dict API (``env.step``,
wall clock, then CPU time), and for a batch of envs stepped together through the array model
(``CovidSimulation.step``), with the CPU named.  Targets: >= 3,000 env-steps/s for one env
(issue 2) and 20x AI Economist 1.7.1's 205-357 (issue 10: >= 7,200), >= 50,000 batched.

Gather-trade-build (``--env layout_from_file/simple_wood_and_stone`` or
``uniform/simple_wood_and_stone``): the dict API of one env with the paper's phase-2 config
(4 agents, 25x25 ``quadrant_25x25_20each_30clump``, ``PeriodicBracketTax``; the tax-free
phase-1 components when that component is not installed), dense logging off, every agent
and the planner taking a uniformly random action among those its mask allows (the sampling
is timed too). Target (issue 10): >= 2,500 env-steps/s, 5x the ~480-500 of AI Economist
1.7.1 on the same machine. The headline rate includes the sampling, as the peer figure did;
a last line gives ``env.step`` alone (the sampling costs the same ~30 us here as under
1.7.1, which is a larger share of our step: see docs/results/cpu-dict-api-speed-2026-11-30.md).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from cpu_machine import cpu_name, pin_to_one_core  # noqa: E402

from ai_economist import foundation  # noqa: E402
from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG, env_config  # noqa: E402
from ai_economist.foundation.scenarios.covid19.model.simulation import CovidSimulation  # noqa: E402


def bench_dict_api(steps: int, repeats: int, clock=time.perf_counter) -> float:
    """Best env-steps/s of the COVID-19 dict API over ``repeats`` runs (``clock``: wall or CPU time)."""
    env = foundation.make_env_instance(
        "CovidAndEconomySimulation", **env_config(TRAINING_ENV_CONFIG)
    )
    rng = np.random.default_rng(0)
    actions = [{"a": rng.integers(0, 11, 51), "p": int(rng.integers(0, 21))} for _ in range(64)]
    best = 0.0
    for _ in range(repeats):
        env.reset()
        done_steps, start = 0, clock()
        while done_steps < steps:
            _, _, done, _ = env.step(actions[done_steps % 64])
            done_steps += 1
            if done["__all__"]:
                env.reset()
        best = max(best, done_steps / max(clock() - start, 1e-9))
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


GTB_ENVS = ("layout_from_file/simple_wood_and_stone", "uniform/simple_wood_and_stone")


def gtb_env(name: str) -> tuple[object, str]:
    """A gather-trade-build env with the phase-2 config (phase-1 components if no tax)."""
    from ai_economist.foundation.scenarios.simple_wood_and_stone import configs

    has_tax = foundation.components.has("PeriodicBracketTax")
    kwargs = configs.env_config(configs.PHASE2_ENV_CONFIG, without_tax=not has_tax)
    kwargs["dense_log_frequency"] = None
    if name.startswith("uniform/"):
        for key in ("env_layout_file", "fixed_four_skill_and_loc"):
            kwargs.pop(key)
    what = "phase-2 config" if has_tax else "phase-2 config without PeriodicBracketTax"
    return foundation.make_env_instance(name, seed=0, **kwargs), what


def random_valid_action(mask: np.ndarray, rng: np.random.Generator, multi: list[int] | None):
    """A uniformly random action allowed by a flattened ``mask`` (one per sub-space if ``multi``)."""
    allowed = np.flatnonzero(mask)
    if multi is None:
        return int(allowed[int(rng.random() * allowed.size)])
    starts = np.cumsum([0] + multi)
    bounds = np.searchsorted(allowed, starts).tolist()
    picks = rng.random(len(multi)).tolist()
    local = (allowed - np.repeat(starts[:-1], np.diff(bounds))).tolist()
    return [local[lo + int(u * (hi - lo))] for lo, hi, u in zip(bounds, bounds[1:], picks)]


def bench_gtb(
    name: str, steps: int, repeats: int, clock=time.perf_counter, env_only: bool = False
) -> tuple[float, str]:
    """Best env-steps/s over ``repeats`` runs of ``steps`` steps (``clock``: wall or CPU
    time), and the scenario. ``env_only``: leave the time spent sampling the random actions
    out (two more clock reads a step; the headline rate is measured without them)."""
    env, what = gtb_env(name)
    rng = np.random.default_rng(0)
    sizes = {
        str(a.idx): (list(a.action_spaces) if a.multi_action_mode else None) for a in env.all_agents
    }
    best = 0.0
    for _ in range(repeats):
        obs = env.reset()
        done_steps, sampling, start = 0, 0.0, clock()
        while done_steps < steps:
            if env_only:
                sampled = clock()
            actions = {
                k: random_valid_action(obs[k]["action_mask"], rng, multi)
                for k, multi in sizes.items()
            }
            if env_only:
                sampling += clock() - sampled
            obs, _, done, _ = env.step(actions)
            done_steps += 1
            if done["__all__"]:
                obs = env.reset()
        best = max(best, done_steps / max(clock() - start - sampling, 1e-9))
    return best, what


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--env",
        default="CovidAndEconomySimulation",
        choices=("CovidAndEconomySimulation",) + GTB_ENVS,
        help="scenario to time (gather-trade-build: dict API only)",
    )
    parser.add_argument("--steps", type=int, default=1080, help="steps per timed run (dict API)")
    parser.add_argument("--batch_envs", type=int, nargs="+", default=[1, 100, 1000, 4000])
    parser.add_argument("--batch_steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3, help="best of N runs")
    args = parser.parse_args()
    print(
        f"CPU: {cpu_name()} ({pin_to_one_core()}), numpy {np.__version__}, Python {platform.python_version()}"
    )
    if args.env in GTB_ENVS:
        for label, clock in (("wall clock", time.perf_counter), ("CPU time", time.process_time)):
            rate, what = bench_gtb(args.env, args.steps, args.repeats, clock)
            print(
                f"dict API, 1 env ({args.env}, {what}, random valid actions), {label}: "
                f"{rate:,.0f} env-steps/s  (target 2,500 = 5x AI Economist 1.7.1's ~480-500 "
                f"measured here; ratio to 490: {rate / 490:.1f}x)"
            )
        rate, _ = bench_gtb(args.env, args.steps, args.repeats, time.process_time, True)
        print(f"  env.step alone (sampling left out), CPU time: {rate:,.0f} env-steps/s")
        if hasattr(os, "getloadavg"):
            print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}")
        return
    rate = bench_dict_api(args.steps, args.repeats)
    print(
        f"dict API, 1 env (env.step, 51 states + planner): {rate:,.0f} env-steps/s  (target "
        f"7,200 = 20x AI Economist 1.7.1's 205-357 quoted in issue 10; ratio to 357: "
        f"{rate / 357:.1f}x)"
    )
    rate = bench_dict_api(args.steps, args.repeats, time.process_time)
    print(f"  the same, CPU time: {rate:,.0f} env-steps/s  (ratio to 357: {rate / 357:.1f}x)")
    if hasattr(os, "getloadavg"):
        print(f"load average (1 min): {os.getloadavg()[0]:.1f}")
    for n in args.batch_envs:
        rate = bench_batched(n, args.batch_steps, args.repeats)
        print(
            f"array model, {n:>5} envs (CovidSimulation.step): {rate:,.0f} env-steps/s  (target 50,000)"
        )


if __name__ == "__main__":
    main()

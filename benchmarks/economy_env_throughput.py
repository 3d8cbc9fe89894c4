"""Env-only stepping speed of the one-step economy on the generic path, against its CPU models.

    python benchmarks/economy_env_throughput.py --backends numpy numba pycuda \\
        --num_envs 1000 10000 100000 [--steps 200] [--baseline_envs 10000] [key=value ...]

For each backend and number of envs, :func:`run_one` builds ``EnvWrapper`` over
``OneStepEconomyGpu`` (the env block of ``run_configs/one_step_economy.yaml`` with
``key=value`` overrides) and draws two sets of random allowed actions (the tax step's: rates,
no labour; the labour step's: hours, no rates), kept on the device. It warms up, then times
``--steps`` rounds of: copy the step's action set into the action buffers (as a trainer's
sampling writes them), ``step_all_envs``, ``reset_only_done_envs`` (an episode is 2 steps, so
every other step resets every env on the device), with ``torch.cuda.synchronize`` before and
after. The same loop is timed on the two CPU peers:

* the batched numpy array model (``OneStepEconomyBatchedEnv``) at
  ``min(num_envs, --baseline_envs)`` envs (its rate barely grows beyond that);
* the dict API (``OneStepEconomy.step`` with the same random actions, one env).

Prints env-steps/s, the state memory per env and the ratio to both peers, then the step
kernel and the reset of every env, each timed alone. Target (issue 23):
1e8 env-steps/s for the one-step economy on one H200.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))  # example_env_step

from example_env_step import env_kwargs, hardware  # noqa: E402

ENV_NAME = "one_step_economy"


def action_sets(masks: dict, seed: int) -> list[dict]:
    """Per step of the episode, one random allowed action per agent (``torch`` tensors on
    the masks' device): allowed means allowed on that step (tax step first)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    out = []
    for step in range(2):
        chosen = {}
        for tag, mask in masks.items():
            allowed = torch.ones(mask.shape) if (step == 0) == (tag == "p") else None
            if allowed is None:
                chosen[tag] = torch.zeros(mask.shape[:-1], dtype=torch.int32)
            else:
                scores = torch.rand(mask.shape, generator=gen)
                chosen[tag] = scores.argmax(-1).to(torch.int32)
            chosen[tag] = chosen[tag].to(mask.device)
        out.append(chosen)
    return out


def run_one(kwargs: dict, backend: str, num_envs: int, steps: int, warmup: int) -> dict:
    """Time ``steps`` steps of ``num_envs`` environments of ``OneStepEconomyGpu``."""
    import torch

    from ai_economist.foundation.scenarios.one_step_economy.gpu_env import OneStepEconomyGpu
    from ai_economist.warp_drive.env_wrapper import EnvWrapper
    from ai_economist.warp_drive.errors import cudasim_enabled

    env = OneStepEconomyGpu(**kwargs)
    on_gpu = backend in ("pycuda", "numba") and not cudasim_enabled()
    device = "cuda" if on_gpu else ("cpu" if backend != "numpy" else None)
    wrapper = EnvWrapper(env, num_envs=num_envs, env_backend=backend, device=device, seed=0)
    sync = torch.cuda.synchronize if on_gpu else (lambda: None)
    sets = action_sets({t: wrapper.action_masks(t) for t in wrapper.policy_specs}, 0)
    buffers = {t: wrapper.actions(t) for t in wrapper.policy_specs}

    def loop(n: int) -> None:
        for k in range(n):
            for tag, value in sets[k % 2].items():
                buffers[tag].copy_(value)
            wrapper.step_all_envs()
            wrapper.reset_only_done_envs()

    wrapper.reset_all_envs()
    loop(2 * warmup)
    wrapper.reset_all_envs()
    sync()
    start = time.perf_counter()
    loop(steps)
    sync()
    seconds = time.perf_counter() - start
    env.check_device_actions(wrapper.pull)  # every action was allowed
    parts = part_times(wrapper, sync, steps)
    return {
        **parts,
        "backend": backend,
        "num_envs": num_envs,
        "steps": steps,
        "seconds": seconds,
        "env_steps_per_s": steps * num_envs / seconds,
        "state_bytes_per_env": wrapper.backend.memory_bytes() / num_envs,
        "hardware": hardware(backend),
    }


def part_times(wrapper, sync, steps: int) -> dict:
    """Microseconds of one ``step_all_envs`` and of one ``reset_only_done_envs`` with every
    env done, each timed alone over ``steps`` calls (where the timed loop's time goes)."""
    done = wrapper.cuda_data_manager.data_on_device_via_torch("_done_")
    sync()
    start = time.perf_counter()
    for _ in range(steps):
        wrapper.step_all_envs()
    sync()
    step_us = (time.perf_counter() - start) / steps * 1e6
    total = 0.0
    for _ in range(steps):
        done.fill_(1)
        sync()
        start = time.perf_counter()
        wrapper.reset_only_done_envs()
        sync()
        total += time.perf_counter() - start
    return {"step_us": step_us, "reset_us": total / steps * 1e6}


def batched_model_rate(kwargs: dict, num_envs: int, steps: int, seed: int = 0) -> float:
    """Env-steps/s of ``OneStepEconomyBatchedEnv`` (numpy), the same action sets."""
    from ai_economist.foundation.scenarios.one_step_economy.batched_env import (
        OneStepEconomyBatchedEnv,
    )

    env = OneStepEconomyBatchedEnv(num_envs=num_envs, **kwargs)
    env.reset_all_envs()
    sets = action_sets({t: env.action_masks(t) for t in env.policy_specs}, seed)

    def loop(n: int) -> None:
        for k in range(n):
            for tag, value in sets[k % 2].items():
                env.actions(tag).copy_(value)
            env.step_all_envs()
            env.reset_only_done_envs()

    loop(2)
    start = time.perf_counter()
    loop(steps)
    return steps * num_envs / (time.perf_counter() - start)


def dict_api_rate(kwargs: dict, seconds: float = 1.0, seed: int = 0) -> float:
    """Env-steps/s of the dict-API ``OneStepEconomy`` (one env, random allowed actions)."""
    import numpy as np

    from ai_economist.foundation.scenarios.one_step_economy.one_step_economy import (
        OneStepEconomy,
    )

    env = OneStepEconomy(**kwargs)
    rng = np.random.default_rng(seed)
    env.reset()
    brackets = env.get_component("PeriodicBracketTax").n_brackets
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        first = env.world.timestep == 0  # the tax step: rates, no labour
        actions = {str(i): 0 if first else int(rng.integers(1, 101)) for i in range(env.n_agents)}
        actions["p"] = [int(a) if first else 0 for a in rng.integers(1, 22, brackets)]
        env.step(actions)
        steps += 1
        if env.world.timestep >= env.episode_length:
            env.reset()
    return steps / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", nargs="+", default=["numpy"])
    parser.add_argument("--num_envs", nargs="+", type=int, default=[1000])
    parser.add_argument("--steps", type=int, default=200, help="timed steps")
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps first")
    parser.add_argument("--baseline_envs", type=int, default=10000, help="batched-model envs")
    parser.add_argument("--dict_seconds", type=float, default=1.0, help="dict-API timing")
    parser.add_argument("overrides", nargs="*", help="env block entries, key=value")
    args = parser.parse_args(argv)

    kwargs = env_kwargs(ENV_NAME, "", args.overrides)
    dict_rate = dict_api_rate(kwargs, args.dict_seconds)
    print(f"dict API (OneStepEconomy, one env, {hardware('numpy')}): {dict_rate:.3e} env-steps/s")
    results = []
    for num_envs in args.num_envs:
        peer_envs = min(num_envs, args.baseline_envs)
        batched = batched_model_rate(kwargs, peer_envs, max(args.steps // 4, 2))
        print(f"batched numpy model, {peer_envs:,} envs: {batched:.3e} env-steps/s")
        for backend in args.backends:
            r = run_one(kwargs, backend, num_envs, args.steps, args.warmup)
            r.update(batched_model=batched, dict_api=dict_rate)
            results.append(r)
            print(
                f"{ENV_NAME} {backend:>6} {num_envs:>9,} envs on {r['hardware']}: "
                f"{r['env_steps_per_s']:.3e} env-steps/s "
                f"({r['seconds'] / r['steps'] * 1e6:.1f} us a step of all envs), state "
                f"{r['state_bytes_per_env'] / 1024:.1f} KiB per env; "
                f"{r['env_steps_per_s'] / batched:.1f}x the batched numpy model, "
                f"{r['env_steps_per_s'] / dict_rate:.0f}x the dict API; "
                f"{r['env_steps_per_s'] / 1e8:.2f}x the 1e8 target"
            )
            print(
                f"  alone: step_all_envs {r['step_us']:.1f} us, reset_only_done_envs with "
                f"every env done {r['reset_us']:.1f} us (the timed loop resets every other step)"
            )
    return results


if __name__ == "__main__":
    main()

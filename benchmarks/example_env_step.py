"""Environment-only stepping speed of any registered ``GpuEnvironment`` (no policy).

    python benchmarks/example_env_step.py --env tag_continuous --backends pycuda numba \\
        --num_envs 100 2000 --peer 276000 [--steps 500] [--config FILE] [key=value ...]

The environment is built from the ``env`` block of its run config (default
the env's packaged ``run_configs/<env>.yaml``) with ``key=value`` overrides of its
constructor arguments (e.g. ``num_runners=990``). For each backend and number of envs: builds
``EnvWrapper``, draws one random allowed action per agent (kept for the whole run), warms up
(compilation, caches), then times ``--steps`` consecutive ``step_all_envs`` +
``reset_only_done_envs`` calls, as a training loop makes them (``torch.cuda.synchronize``
before and after); on the kernel backends that is two launches a step (the step kernel and
the one-launch reset of ``fused_reset``), no host synchronisation. rl-warp-drive's env-only
loop calls the same two methods (its ``step_all_envs`` launches the step kernel, its
``reset_only_done_envs`` one reset kernel per array). Prints env-steps/s and agent-steps/s with the hardware, the state memory
per env (declared arrays and their reset snapshots; on a GPU also what torch allocated for the
run, per env) and, with ``--peer``, the ratio to the peer's env-steps/s.

Peer figure for continuous Tag: rl-warp-drive 1.7.0 steps 276,000 env-steps/s env-only at its
published 100 envs x 110 agents on one H200 (issue 9).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout


def env_kwargs(name: str, config: str, overrides: list[str]) -> dict:
    """The run config's ``env`` block (if any) with ``key=value`` overrides."""
    from ai_economist.training.config import (
        default_config_path,
        find_run_config,
        load_yaml,
        parse_override,
    )

    path = find_run_config(config) if config else default_config_path(name)
    kwargs = dict(load_yaml(path).get("env", {})) if (config or path.is_file()) else {}
    for text in overrides:
        keys, value = parse_override(text)
        if len(keys) != 1:
            raise SystemExit(f"override {text!r}: give constructor arguments as key=value")
        kwargs[keys[0]] = value
    return kwargs


def hardware(backend: str) -> str:
    """The GPU's name for kernel backends, the CPU otherwise."""
    if backend in ("pycuda", "numba"):
        import torch

        from ai_economist.warp_drive.errors import cudasim_enabled

        if torch.cuda.is_available():
            return torch.cuda.get_device_name()
        if cudasim_enabled():
            return "Numba CUDA simulator on the CPU"
    return f"CPU ({platform.processor() or platform.machine()})"


def fill_random_actions(wrapper, seed: int) -> None:
    """One random allowed action per agent (uniform among the allowed ones)."""
    import torch

    gen = torch.Generator(device="cpu").manual_seed(seed)
    for tag in wrapper.policy_specs:
        masks = wrapper.action_masks(tag).cpu()
        scores = torch.where(masks > 0, torch.rand(masks.shape, generator=gen), -1.0)
        wrapper.actions(tag).copy_(scores.argmax(-1).to(torch.int32))


def run_one(env_class, kwargs: dict, backend: str, num_envs: int, steps: int, warmup: int) -> dict:
    """Time ``steps`` steps of ``num_envs`` environments on ``backend``."""
    import torch

    from ai_economist.warp_drive.env_wrapper import EnvWrapper
    from ai_economist.warp_drive.errors import cudasim_enabled

    env = env_class(**kwargs)
    on_gpu = backend in ("pycuda", "numba") and not cudasim_enabled()
    device = "cuda" if on_gpu else ("cpu" if backend != "numpy" else None)
    allocated = torch.cuda.memory_allocated if on_gpu else (lambda: 0)
    before = allocated()
    wrapper = EnvWrapper(env, num_envs=num_envs, env_backend=backend, device=device, seed=0)
    sync = torch.cuda.synchronize if on_gpu else (lambda: None)
    wrapper.reset_all_envs()
    fill_random_actions(wrapper, 0)
    for _ in range(warmup):
        wrapper.step_all_envs()
        wrapper.reset_only_done_envs()
    wrapper.reset_all_envs()
    sync()
    start = time.perf_counter()
    for _ in range(steps):
        wrapper.step_all_envs()
        wrapper.reset_only_done_envs()
    sync()
    seconds = time.perf_counter() - start
    device_bytes = allocated() - before
    rate = steps * num_envs / seconds
    return {
        "env": env.name,
        "backend": backend,
        "num_envs": num_envs,
        "num_agents": env.num_agents,
        "steps": steps,
        "seconds": seconds,
        "env_steps_per_s": rate,
        "agent_steps_per_s": rate * env.num_agents,
        "state_bytes_per_env": wrapper.backend.memory_bytes() / num_envs,
        "device_bytes_per_env": device_bytes / num_envs,
        "hardware": hardware(backend),
    }


def describe(result: dict, peer: float | None) -> str:
    """One line of output."""
    text = (
        f"{result['env']} {result['backend']:>6} {result['num_envs']:>7,} envs x "
        f"{result['num_agents']} agents on {result['hardware']}: "
        f"{result['env_steps_per_s']:.3e} env-steps/s ({result['agent_steps_per_s']:.3e} "
        f"agent-steps/s, {result['seconds'] / result['steps'] * 1e6:.1f} us a step of all envs), "
        f"state {result['state_bytes_per_env'] / 1024:.1f} KiB per env"
    )
    if result["device_bytes_per_env"]:
        text += (
            f" ({result['device_bytes_per_env'] / 1024:.1f} KiB of GPU memory allocated per env)"
        )
    if peer:
        text += f", {result['env_steps_per_s'] / peer:.2f}x the peer ({peer:,.0f} env-steps/s)"
    return text


def run_backends(env_class, kwargs: dict, args, peer: float | None) -> list[dict]:
    """:func:`run_one` for every ``args.backends`` x ``args.num_envs``, each result printed."""
    results = []
    for backend in args.backends:
        for num_envs in args.num_envs:
            result = run_one(env_class, kwargs, backend, num_envs, args.steps, args.warmup)
            print(describe(result, peer), flush=True)
            results.append(result)
    return results


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="tag_continuous", help="registered environment name")
    parser.add_argument("--backends", nargs="+", default=["pycuda", "numba"])
    parser.add_argument("--num_envs", nargs="+", type=int, default=[100])
    parser.add_argument("--steps", type=int, default=500, help="timed steps")
    parser.add_argument("--warmup", type=int, default=20, help="untimed steps first")
    parser.add_argument("--peer", type=float, default=None, help="peer env-steps/s (ratio)")
    parser.add_argument("--config", default="", help="run config whose env block is used")
    parser.add_argument("overrides", nargs="*", help="constructor arguments, key=value")
    args = parser.parse_args(argv)

    from ai_economist.warp_drive.registrar import default_registrar

    env_class = default_registrar.get(args.env, env_backend="numpy")
    kwargs = env_kwargs(args.env, args.config, args.overrides)
    print(f"{args.env}: {' '.join(f'{k}={v}' for k, v in kwargs.items()) or '(defaults)'}")
    results = []
    for backend in args.backends:
        for num_envs in args.num_envs:
            result = run_one(env_class, kwargs, backend, num_envs, args.steps, args.warmup)
            print(describe(result, args.peer), flush=True)
            results.append(result)
    return results


if __name__ == "__main__":
    main()

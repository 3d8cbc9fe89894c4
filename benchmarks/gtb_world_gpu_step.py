"""Environment-only stepping speed of gather-trade-build's GPU world (Build, Gather, regrowth;
with ``--market`` also the ContinuousDoubleAuction; with ``--economy phase1|phase2`` the full
economy with the tax; no policy).

    python benchmarks/gtb_world_gpu_step.py --backends pycuda numba --num_envs 1000 10000 \\
        [--market | --economy phase2] [--steps 1000] [--warmup 20] [--threads_per_env 32]

The paper's config without the market and the tax (``gpu.env.WORLD_CONFIG``: 4 agents + the
planner, 25x25 quadrant map, 1,000-step episodes), with ``--market`` the paper's config
without the tax (``gpu.env.MARKET_WORLD_CONFIG``, ``GatherTradeBuildMarketWorldGpu``), with
``--economy`` the published phase-1 or phase-2 config (``GatherTradeBuildEconomyGpu``). Times
``step_all_envs`` + ``reset_only_done_envs`` with one random allowed action per agent kept for
the run, as ``example_env_step.py`` does for any registered env, and
prints env-steps/s, the state memory per env and the ratio to Foundation 1.7.1's dict env
(about 470 env-steps/s on one CPU core, issue 23). Issue 23's target for the full economy:
1e7 env-steps/s at 10,000 envs on one H200 (pycuda), Numba within 2x.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))

from example_env_step import run_backends  # noqa: E402

PEER = 470.0  # Foundation 1.7.1, env-steps/s on one CPU core


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", nargs="+", default=["pycuda", "numba"])
    parser.add_argument("--num_envs", nargs="+", type=int, default=[1000, 10000])
    parser.add_argument("--steps", type=int, default=1000, help="timed steps")
    parser.add_argument("--warmup", type=int, default=20, help="untimed steps first")
    parser.add_argument("--threads_per_env", type=int, default=None)
    parser.add_argument("--episode_length", type=int, default=None, help="override (tests)")
    parser.add_argument("--market", action="store_true", help="the world with the market")
    parser.add_argument("--economy", choices=("phase1", "phase2"), default=None,
                        help="the full economy of a published config")  # fmt: skip
    parser.add_argument(
        "--numba_max_registers",
        type=int,
        default=None,
        help="with --economy: cap the Numba step kernel's registers per thread",
    )
    args = parser.parse_args(argv)
    if args.numba_max_registers is not None:
        if args.economy is None:
            parser.error("--numba_max_registers needs --economy")
        cap_numba_step_registers(args.numba_max_registers)

    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import economy_env
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.env import (
        MARKET_WORLD_CONFIG,
        WORLD_CONFIG,
        GatherTradeBuildMarketWorldGpu,
        GatherTradeBuildWorldGpu,
    )

    cls = GatherTradeBuildMarketWorldGpu if args.market else GatherTradeBuildWorldGpu
    config = dict(MARKET_WORLD_CONFIG if args.market else WORLD_CONFIG)
    if args.economy is not None:
        cls = economy_env.GatherTradeBuildEconomyGpu
        config = dict(getattr(economy_env, f"{args.economy.upper()}_CONFIG"))
    if args.episode_length is not None:
        config["episode_length"] = args.episode_length
    kwargs = {"env_config": config, "threads_per_env": args.threads_per_env}
    return run_backends(cls, kwargs, args, PEER)


def cap_numba_step_registers(max_registers: int) -> None:
    """Rebuild the Numba economy step kernel with a register cap (before any env loads it):
    the module's own kernel and the one its ``make_numba_kernels`` builds for an env's
    shapes (the one the backend launches)."""
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import gtb_economy_numba as m
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.numba_kernels import (
        STEP,
        field_kernel,
    )

    m.gtb_economy_step = field_kernel("gtb_economy_step", m.economy_kernel, STEP, max_registers)
    m.make_numba_kernels = functools.partial(m.make_numba_kernels, max_registers=max_registers)
    print(f"Numba gtb_economy_step: at most {max_registers} registers a thread")


if __name__ == "__main__":
    main()

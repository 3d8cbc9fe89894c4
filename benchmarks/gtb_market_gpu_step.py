"""Environment-only stepping speed of gather-trade-build's market on the GPU, on its own
(``GatherTradeBuildMarketGpu``: place with escrow, match, expire, observations and masks; no
world, no tax, no policy).

    python benchmarks/gtb_market_gpu_step.py --backends pycuda numba --num_envs 1000 10000 \\
        [--steps 1000] [--warmup 20] [--threads_per_env 32]

The paper's market (4 agents, prices 0..10, 5 orders per agent and commodity lasting 50 steps)
with 1,000-step episodes. Times ``step_all_envs`` + ``reset_only_done_envs`` with one random
allowed action per agent kept for the run (as ``example_env_step.py`` does), and prints
env-steps/s, the state memory per env and the ratio to Foundation 1.7.1's whole dict env
(about 470 env-steps/s on one CPU core, issue 23): the market is one part of that step.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))

from example_env_step import run_backends  # noqa: E402

PEER = 470.0  # Foundation 1.7.1, env-steps/s on one CPU core (the whole economy)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", nargs="+", default=["pycuda", "numba"])
    parser.add_argument("--num_envs", nargs="+", type=int, default=[1000, 10000])
    parser.add_argument("--steps", type=int, default=1000, help="timed steps")
    parser.add_argument("--warmup", type=int, default=20, help="untimed steps first")
    parser.add_argument("--threads_per_env", type=int, default=None)
    parser.add_argument("--episode_length", type=int, default=1000)
    args = parser.parse_args(argv)

    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.market_env import (
        GatherTradeBuildMarketGpu,
    )

    kwargs = {"episode_length": args.episode_length, "threads_per_env": args.threads_per_env}
    return run_backends(GatherTradeBuildMarketGpu, kwargs, args, PEER)


if __name__ == "__main__":
    main()

"""Step gather-trade-build's dict API as ``dict_api_vs_original.py`` does (paper config, random
valid actions, sampling included), untimed: for instruction counts under callgrind, which do
not move with the load of a shared machine the way CPU time does.

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        python benchmarks/gtb_dict_steps.py --steps 150
    (again with --steps 450; instructions per step = the difference of the two totals / 300)

Run with ``PYTHONHASHSEED=0`` and this checkout on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dict_api_vs_original as bench  # noqa: E402

from ai_economist import foundation  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=450)
    args = parser.parse_args()
    spec = bench.scenario_spec("gtb")
    env = foundation.make_env_instance(spec["scenario"], **spec["kwargs"])
    rng = np.random.default_rng(0)
    sizes = {
        str(a.idx): (list(a.action_spaces) if a.multi_action_mode else None) for a in env.all_agents
    }
    obs = env.reset()
    for _ in range(args.steps):
        acts = {
            k: bench._random_valid_action(np, obs[k]["action_mask"], rng, multi)
            for k, multi in sizes.items()
        }
        obs, _, done, _ = env.step(acts)
        if done["__all__"]:
            obs = env.reset()
    print(f"{args.steps} steps")


if __name__ == "__main__":
    main()

"""Gather-trade-build's taxes with the agents' behaviour held fixed: equality, productivity and
taxes collected under several tax-protocol schedules when every schedule's agents follow the
same random policy (uniform over their valid actions, one torch generator seeded alike; the
draws part ways where coin changes the market's masks). A check of the mechanics (the rebate
in equal shares raises equality) apart from any trained agents' response.

    python benchmarks/gtb_tax_mechanics.py --schedules free-market fixed:0.1 fixed:0.5 fixed:1.0

On the CPU, with the packaged phase-2 config (1,000-step episodes) on the dict-API model
(``GatherTradeBuildBatch``), evaluation settings (no annealing); the planner does not act.
"""

from __future__ import annotations

import argparse
import copy

import torch

from ai_economist.foundation.scenarios.simple_wood_and_stone.batched import GatherTradeBuildBatch
from ai_economist.training.config import find_run_config, load_yaml
from ai_economist.training.tax_protocol.gtb_eval import episode_values, eval_env_block, summarise
from ai_economist.training.tax_protocol.plan import set_tax_schedule
from ai_economist.warp_drive.training.models import sample_masked


def run(schedule: str, envs: int, env_seed: int, action_seed: int) -> dict:
    """Mean equality, productivity and taxes of one episode per env under ``schedule``."""
    config = load_yaml(find_run_config("gather_trade_build_phase2"))
    block = copy.deepcopy(config["env"])
    set_tax_schedule(block, schedule)
    batch = GatherTradeBuildBatch(eval_env_block(block), envs, env_seed)
    generator = torch.Generator().manual_seed(action_seed)
    batch.reset_all_envs()
    for _ in range(batch.episode_length):
        masks = batch.action_masks("a")
        batch.actions("a").copy_(sample_masked(torch.zeros(masks.shape), masks, generator)[0])
        batch.step_all_envs()
    return summarise([episode_values(env) for env in batch.envs])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schedules", nargs="+", default=["free-market", "fixed:0.1", "fixed:0.5"])
    parser.add_argument("--envs", type=int, default=8, help="episodes (one per env)")
    parser.add_argument("--env_seed", type=int, default=123)
    parser.add_argument("--action_seed", type=int, default=5)
    args = parser.parse_args()
    print(f"{'schedule':14s} {'equality':>9s} {'productivity':>13s} {'taxes':>9s}")
    for schedule in args.schedules:
        out = run(schedule, args.envs, args.env_seed, args.action_seed)
        print(f"{schedule:14s} {out['equality']:9.3f} {out['productivity']:13.1f} "
              f"{out['taxes_collected']:9.1f}")  # fmt: skip


if __name__ == "__main__":
    main()

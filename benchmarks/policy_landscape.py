"""How good can a fixed policy be? A grid of simple uniform policies on the training config.

    python benchmarks/policy_landscape.py [--top 10]

Every state follows the same schedule: stringency level ``close`` for the first ``days`` days,
then level ``open``; the planner keeps one subsidy level throughout.  All schedules of the grid
run side by side as one batch of the float64 array model (``CovidSimulation``) on the
540-day training configuration (``run_configs/covid_and_economy_environment.yaml``), and the
script prints the best schedules by the planner's episode reward sum and by the states' mean
episode reward sum, next to the three fixed policies of the learning check
(``learning_vs_fixed_policies.py``).  It shows how much room there is above those baselines
for a trained policy; then the states' best schedule at each subsidy level of the grid (their
best response, within the grid); then any schedules given with ``--schedules`` (level 0 is the
NO-OP action: the states keep their reset levels).  CPU only, about 10 s.

    python benchmarks/policy_landscape.py --schedules 6,540,6,20 6,540,6,0 0,540,0,20
    python benchmarks/policy_landscape.py --discounts 0.98 0.99 0.995 1 --random_states

``--discounts`` shows which constant level the states' and the planner's *discounted* returns
prefer (what a policy-gradient learner with that gamma optimises), and ``--random_states`` what
full subsidies cost the planner when the states act at random.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ai_economist import foundation  # noqa: E402
from ai_economist.foundation.scenarios.covid19.model.simulation import CovidSimulation  # noqa: E402
from ai_economist.foundation.scenarios.covid19.training.fixed_policies import (  # noqa: E402
    FIXED_POLICIES,
    schedule_returns,
)
from ai_economist.simulate.errors import UnknownPolicyError  # noqa: E402
from ai_economist.simulate.policies import parse_fixed_schedule  # noqa: E402
from ai_economist.training.config import default_config_path, load_yaml  # noqa: E402

CLOSE_LEVELS = (4, 5, 6, 7, 8, 9, 10)
CLOSE_DAYS = (0, 60, 120, 150, 180, 210, 240, 300, 360, 540)
OPEN_LEVELS = (1, 2, 3, 4, 5)
SUBSIDY_LEVELS = (0, 5, 10, 20)
BASELINES = FIXED_POLICIES  # the learning check's fixed policies, declared in the package


def parse_schedule(text: str) -> tuple[int, int, int, int]:
    """``"close,days,open,subsidy"`` -> a schedule tuple (clear error for bad input)."""
    try:
        return parse_fixed_schedule(text, "--schedules")
    except UnknownPolicyError as exc:
        raise SystemExit(str(exc)) from None


evaluate = schedule_returns  # planner and mean state sums of (close, days, open, subsidy) rows


def random_states_subsidy_cost(env, num_envs: int = 64, seed: int = 0) -> np.ndarray:
    """Planner episode sums at subsidy 0 minus at subsidy 20, per env, when every state draws
    a uniformly random action (0-10) every day (the same draws at both subsidy levels)."""
    sim = CovidSimulation(env.params, env.component_params(), 2 * num_envs)
    subsidy = np.repeat([0, 20], num_envs)
    rng = np.random.default_rng(seed)
    planner = np.zeros(2 * num_envs)
    for _ in range(env.episode_length):
        actions = rng.integers(0, 11, size=(num_envs, env.params.num_agents))
        planner += sim.step(np.concatenate([actions, actions]), subsidy.copy())[1]
    return planner[:num_envs] - planner[num_envs:]


def discounted_preferences(env, discounts: list[float]) -> None:
    """Print which constant level the states' (and the planner's) discounted return prefers."""
    levels = np.arange(1, 11)
    print("\nconstant schedules: the level preferred by the return from day 1, per discount")
    print(f"{'discount':>8} {'subsidy':>7} | {'states prefer':>13} {'planner prefers':>15}")
    for gamma in discounts:
        for subsidy in (0, 20):
            rows = np.array([[lv, 540, lv, subsidy] for lv in levels])
            planner, states = evaluate(env, rows, discount=gamma)
            print(f"{gamma:>8} {subsidy:>7} | {levels[np.argmax(states)]:>13} "
                  f"{levels[np.argmax(planner)]:>15}")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=10, help="schedules to list per ranking")
    parser.add_argument(
        "--schedules",
        nargs="*",
        default=[],
        metavar="CLOSE,DAYS,OPEN,SUBSIDY",
        help="extra schedules to evaluate (action 0 = NO-OP)",
    )
    parser.add_argument(
        "--discounts",
        nargs="*",
        type=float,
        default=[],
        metavar="GAMMA",
        help="also print the constant level each discount factor's return prefers",
    )
    parser.add_argument(
        "--random_states",
        action="store_true",
        help="also print what full subsidies cost the planner when the states act at random",
    )
    args = parser.parse_args(argv)
    extra = [parse_schedule(text) for text in args.schedules]
    config = load_yaml(default_config_path("covid_and_economy_environment"))
    env = foundation.make_env_instance("CovidAndEconomySimulation", **config["env"])
    grid = list(itertools.product(CLOSE_LEVELS, CLOSE_DAYS, OPEN_LEVELS, SUBSIDY_LEVELS))
    schedules = np.array(grid + list(BASELINES.values()) + extra, dtype=np.int64)
    start = time.perf_counter()
    planner, states = evaluate(env, schedules)
    print(f"{len(schedules)} schedules x {env.episode_length} days in "
          f"{time.perf_counter() - start:.1f} s (float64 array model, CPU)")  # fmt: skip
    header = f"{'close level':>11} {'for days':>8} {'then level':>10} {'subsidy':>7} | {'planner':>8} {'states':>8}"

    def show(k: int, name: str = "") -> None:
        c, d, o, s = schedules[k]
        print(f"{c:>11} {d:>8} {o:>10} {s:>7} | {planner[k]:8.2f} {states[k]:8.2f}  {name}")

    for title, key in (("planner reward sum", planner), ("states' mean reward sum", states)):
        print(f"\nbest {args.top} schedules by the {title}:\n{header}")
        for k in np.argsort(-key[: len(grid)])[: args.top]:
            show(int(k))
    print(f"\nthe states' best schedule at each subsidy level:\n{header}")
    for level in SUBSIDY_LEVELS:
        at_level = [k for k, row in enumerate(grid) if row[3] == level]
        show(max(at_level, key=lambda k: states[k]))
    print(f"\nthe fixed policies of the learning check:\n{header}")
    for i, name in enumerate(BASELINES):
        show(len(grid) + i, name)
    if extra:
        print(f"\nschedules asked for:\n{header}")
        for i in range(len(extra)):
            show(len(grid) + len(BASELINES) + i)

    if args.discounts:
        discounted_preferences(env, args.discounts)
    if args.random_states:
        cost = random_states_subsidy_cost(env)
        print(f"\nrandom states ({len(cost)} envs): subsidy 20 costs the planner {cost.mean():.2f} "
              f"(min {cost.min():.2f}, max {cost.max():.2f}) against subsidy 0")  # fmt: skip


if __name__ == "__main__":
    main()

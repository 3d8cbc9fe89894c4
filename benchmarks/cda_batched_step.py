"""Market steps/s of the batched ContinuousDoubleAuction against the dict component, one core.

    python benchmarks/cda_batched_step.py [--num_envs 1 100 1000] [--steps 2000] [--repeats 3]

The market of the paper's gather-trade-build config (4 agents, Stone and Wood, prices 0..10,
``max_num_orders`` 5, ``order_duration`` 50). Each step every agent places, with probability
0.4 each, a bid or an ask on a random commodity at a random price, else nothing (one order a
step at most, as single-action agents); inventories start large so that orders are limited by
``max_num_orders``, not by goods. The books are warmed up for 60 steps before timing.

* dict component: ``component_step`` of one env (the actions written into ``agent.action``),
  then with ``generate_observations`` and ``generate_masks``;
* batched: ``market_step`` of N envs, then with ``market_observations`` and ``action_masks``.

Rates are market env-steps/s (N x steps / time), best of ``--repeats``, wall clock and CPU
time; the ratio is to the dict component's rate of the same kind.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from cpu_machine import cpu_name, pin_to_one_core  # noqa: E402

from ai_economist import foundation  # noqa: E402
from ai_economist.foundation.components import cda_batched as cb  # noqa: E402
from ai_economist.foundation.components import cda_batched_views as views  # noqa: E402
from ai_economist.foundation.scenarios.simple_wood_and_stone import configs  # noqa: E402

WARMUP = 60
CLOCKS = (("wall clock", time.perf_counter), ("CPU time", time.process_time))


def random_orders(rng: np.random.Generator, n: int, steps: int, params: cb.MarketParams):
    """``(bids, asks)`` actions ``(steps, n, A, C)``: per agent and step one bid (p 0.4), one
    ask (p 0.4) or nothing, on a random commodity at a random price."""
    shape = (steps, n, params.n_agents)
    kind = rng.choice(3, size=shape, p=[0.2, 0.4, 0.4])
    commodity = rng.integers(params.n_commodities, size=shape)
    action = rng.integers(1, params.n_prices + 1, size=shape)
    onehot = np.eye(params.n_commodities, dtype=np.int64)[commodity] * action[..., None]
    return onehot * (kind == 1)[..., None], onehot * (kind == 2)[..., None]


def dict_env():
    """A phase-1 env with 1,000 coin, stone and wood per agent."""
    env = foundation.make_env_instance(
        configs.SCENARIO_NAME, seed=0, **configs.env_config(configs.PHASE1_ENV_CONFIG)
    )
    env.reset()
    for agent in env.world.agents:
        for r in ("Coin", "Stone", "Wood"):
            agent.state["inventory"][r] = 1000.0
    return env


def bench_dict(steps: int, repeats: int, with_views: bool, seed: int = 0) -> dict[str, float]:
    """Best market steps/s of the dict component of one env, per clock."""
    env = dict_env()
    cda = env.get_component("ContinuousDoubleAuction")
    params = cb.MarketParams.from_component(cda)
    bids, asks = random_orders(np.random.default_rng(seed), 1, WARMUP + steps * repeats, params)
    keys = [(cda._buy_names[c], cda._sell_names[c]) for c in params.commodities]

    def one_step(t: int) -> None:
        for a, agent in enumerate(env.world.agents):
            for c, (buy, sell) in enumerate(keys):
                agent.action[buy] = int(bids[t, 0, a, c])
                agent.action[sell] = int(asks[t, 0, a, c])
        cda.component_step()
        if with_views:
            cda.generate_observations()
            cda.generate_masks()

    for t in range(WARMUP):
        one_step(t)
    return _best(lambda r: [one_step(WARMUP + r * steps + t) for t in range(steps)], steps, repeats)


def bench_batched(
    num_envs: int, steps: int, repeats: int, with_views: bool, seed: int = 0
) -> dict[str, float]:
    """Best market env-steps/s of the batched market of ``num_envs`` envs, per clock."""
    params = cb.MarketParams.from_component(dict_env().get_component("ContinuousDoubleAuction"))
    state = cb.initial_state(params, num_envs)
    shape = (num_envs, params.n_agents, params.n_commodities + 1)
    inventory, escrow = np.full(shape, 1000.0), np.zeros(shape)
    labor = np.zeros(shape[:2])
    rng = np.random.default_rng(seed)
    bids, asks = random_orders(rng, num_envs, WARMUP + steps * repeats, params)

    def one_step(t: int) -> None:
        cb.market_step(params, state, bids[t], asks[t], inventory, escrow, labor)
        if with_views:
            views.market_observations(params, state)
            views.action_masks(params, state, inventory)

    for t in range(WARMUP):
        one_step(t)
    rates = _best(
        lambda r: [one_step(WARMUP + r * steps + t) for t in range(steps)], steps, repeats
    )
    return {k: v * num_envs for k, v in rates.items()}


def _best(run, steps: int, repeats: int) -> dict[str, float]:
    best = dict.fromkeys((name for name, _ in CLOCKS), 0.0)
    for r in range(repeats):
        start = [clock() for _, clock in CLOCKS]
        run(r)
        for (name, clock), t0 in zip(CLOCKS, start):
            best[name] = max(best[name], steps / max(clock() - t0, 1e-9))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--num_envs", type=int, nargs="+", default=[1, 100, 1000])
    parser.add_argument("--steps", type=int, default=2000, help="market steps of one env")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"CPU: {cpu_name()} ({pin_to_one_core()}), numpy {np.__version__}")
    for with_views in (False, True):
        what = "step + observations + masks" if with_views else "step"
        ref = bench_dict(args.steps, args.repeats, with_views)
        for clock, rate in ref.items():
            print(f"dict component, 1 env, {what}, {clock}: {rate:,.0f} env-steps/s")
        for n in args.num_envs:
            steps = max(50, args.steps // n)
            rates = bench_batched(n, steps, args.repeats, with_views)
            for clock, rate in rates.items():
                print(
                    f"batched, {n} envs x {steps} steps, {what}, {clock}: {rate:,.0f} "
                    f"env-steps/s ({rate / ref[clock]:.1f}x the dict component)"
                )
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

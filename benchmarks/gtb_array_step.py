"""Gather-trade-build: the batched array world against the dict API, env-steps/s on one core.

    python benchmarks/gtb_array_step.py [--num_envs 1 100 1000] [--env_steps 10000] [--repeats 2]
    python benchmarks/gtb_array_step.py --economy [--num_envs 1 100 1000] [--batches]

``--economy`` times the whole published phase-2 economy instead (``Build``,
``ContinuousDoubleAuction``, ``Gather``, ``PeriodicBracketTax`` with the planner's random
allowed rates): the dict API against :mod:`array_economy` (step + masks, then with every
observation: the flat vectors and the egocentric windows, as the trainer reads them);
``--batches`` adds the trainer's batches (``step_all_envs`` and the resets, needs torch):
``GatherTradeBuildBatch`` (dict envs one after the other) against ``ArrayGatherTradeBuildBatch``.

Both run the published phase-2 config with only ``Build`` and ``Gather`` (no market, no tax:
the array world covers those two), 1,000-step episodes, every agent taking a uniformly
random action among those its mask allows (the sampling is timed too). Rates are CPU time
of this process, the best of ``--repeats`` runs. The array world is timed twice: its step
with the action masks (what a policy needs to act), and with the observation pieces too
(scalars and the egocentric ``world-map``/``world-idx_map`` windows), which the dict API
builds at every step.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from cpu_machine import cpu_name  # noqa: E402

from ai_economist import foundation  # noqa: E402
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy as ae  # noqa: E402
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy_obs as aeo  # noqa: E402
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_obs  # noqa: E402
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_world as aw  # noqa: E402
from ai_economist.foundation.scenarios.simple_wood_and_stone.configs import (  # noqa: E402
    PHASE2_ENV_CONFIG,
    SCENARIO_NAME,
    env_config,
)


def world_config() -> dict:
    """Phase 2 with Build and Gather only."""
    config = env_config(PHASE2_ENV_CONFIG, without_tax=True)
    config["components"] = [c for c in config["components"] if "ContinuousDoubleAuction" not in c]
    config["dense_log_frequency"] = None
    return config


def sample(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random allowed action per row of ``masks`` (..., n_actions)."""
    return (rng.random(masks.shape) * masks).argmax(axis=-1)


def time_dict_env(env, env_steps: int, repeats: int, actions_of) -> float:
    """Best env-steps/s (CPU time) of one dict-API ``env`` over ``repeats`` runs of
    ``env_steps`` steps; ``actions_of(obs)`` gives each step's action dict."""
    best = 0.0
    for _ in range(repeats):
        obs = env.reset()
        start = time.process_time()
        for _ in range(env_steps):
            obs, _, done, _ = env.step(actions_of(obs))
            if done["__all__"]:
                obs = env.reset()
        best = max(best, env_steps / max(time.process_time() - start, 1e-9))
    return best


def agent_actions(obs: dict, n_agents: int, rng: np.random.Generator) -> dict:
    """A uniformly random allowed action of each mobile agent, as the dict API takes them."""
    masks = np.stack([obs[str(i)]["action_mask"] for i in range(n_agents)])
    return {str(i): int(a) for i, a in enumerate(sample(masks, rng))}


def bench_dict(env_steps: int, repeats: int) -> float:
    """Best env-steps/s of one dict-API env."""
    env = foundation.make_env_instance(SCENARIO_NAME, seed=0, **world_config())
    rng = np.random.default_rng(0)
    return time_dict_env(env, env_steps, repeats, lambda obs: agent_actions(obs, env.n_agents, rng))


def bench_array(num_envs: int, env_steps: int, repeats: int, with_obs: bool) -> float:
    """Best env-steps/s of the array world with ``num_envs`` envs."""
    env = foundation.make_env_instance(SCENARIO_NAME, seed=0, **world_config())
    params = aw.GTBWorldParams.from_env(env)
    rng = np.random.default_rng(0)
    steps = max(1, env_steps // num_envs)
    static = array_obs.static_windows(params)
    best = 0.0
    for _ in range(repeats):
        state = aw.initial_state(params, np.arange(num_envs))
        masks = array_obs.action_masks(state, params)
        start = time.process_time()
        for _ in range(steps):
            _, _, done = aw.step(state, params, sample(masks, rng))
            if done.any():
                aw.reset_envs(state, params, done)
            masks = array_obs.action_masks(state, params)
            if with_obs:
                array_obs.scalar_observations(state, params)
                array_obs.egocentric_maps(state, params, static)
        best = max(best, steps * num_envs / max(time.process_time() - start, 1e-9))
    return best


def economy_config() -> dict:
    """The published phase-2 config, dense logging off."""
    config = env_config(PHASE2_ENV_CONFIG)
    config["dense_log_frequency"] = None
    return config


def _planner_sample(masks: np.ndarray, n_brackets: int, rng: np.random.Generator) -> np.ndarray:
    """Per env, one allowed action per bracket from the flat planner masks (E, B * (R + 1))."""
    return sample(masks.reshape(masks.shape[0], n_brackets, -1), rng)


def bench_dict_economy(env_steps: int, repeats: int) -> float:
    """Best env-steps/s of one dict-API env of the whole phase-2 economy."""
    env = foundation.make_env_instance(SCENARIO_NAME, seed=0, **economy_config())
    n_brackets = len(env.world.planner.action_spaces)
    rng = np.random.default_rng(0)

    def actions_of(obs: dict) -> dict:
        actions = agent_actions(obs, env.n_agents, rng)
        actions["p"] = _planner_sample(obs["p"]["action_mask"][None], n_brackets, rng)[0].tolist()
        return actions

    return time_dict_env(env, env_steps, repeats, actions_of)


def bench_economy(num_envs: int, env_steps: int, repeats: int, with_obs: bool) -> float:
    """Best env-steps/s of the array economy with ``num_envs`` envs."""
    env = foundation.make_env_instance(SCENARIO_NAME, seed=0, **economy_config())
    params = ae.EconomyParams.from_env(env)
    n_brackets = params.tax.n_brackets
    rng = np.random.default_rng(0)
    steps = max(1, env_steps // num_envs)
    static = array_obs.static_windows(params.world)
    best = 0.0
    for _ in range(repeats):
        state = ae.initial_state(params, np.arange(num_envs))
        masks = aeo.agent_masks(state, params), aeo.planner_masks(state, params)
        start = time.process_time()
        for _ in range(steps):
            planner = _planner_sample(masks[1], n_brackets, rng)
            _, _, done = ae.step(state, params, sample(masks[0], rng), planner)
            if done.any():
                ae.reset_envs(state, params, done)
            if with_obs:
                o = aeo.observations(state, params, static)
                masks = o["agent_masks"], o["planner_masks"]
            else:
                masks = aeo.agent_masks(state, params), aeo.planner_masks(state, params)
        best = max(best, steps * num_envs / max(time.process_time() - start, 1e-9))
    return best


def bench_batch(cls: type, num_envs: int, env_steps: int) -> float:
    """Env-steps/s of a trainer batch ``cls`` (random allowed actions for every policy)."""
    import torch

    batch = cls(economy_config(), num_envs=num_envs, seed=0)
    rng = np.random.default_rng(0)
    steps = max(20, env_steps // num_envs)
    start = time.process_time()
    for _ in range(steps):
        for tag in ("a", "p"):
            masks = batch.action_masks(tag).numpy()
            batch.actions(tag)[:] = torch.from_numpy(sample(masks, rng).astype(np.int32))
        batch.step_all_envs()
        batch.reset_only_done_envs()
    return steps * num_envs / max(time.process_time() - start, 1e-9)


def main_batches(args: argparse.Namespace) -> None:
    """Print the trainer batches' rates."""
    import torch

    from ai_economist.foundation.scenarios.simple_wood_and_stone.array_batch import (
        ArrayGatherTradeBuildBatch,
    )
    from ai_economist.foundation.scenarios.simple_wood_and_stone.batched import (
        GatherTradeBuildBatch,
    )

    torch.set_num_threads(1)
    for n in args.num_envs:
        ref = bench_batch(GatherTradeBuildBatch, n, min(args.env_steps, 5000))
        arr = bench_batch(ArrayGatherTradeBuildBatch, n, args.env_steps)
        print(
            f"trainer batch, {n} envs: dict envs {ref:,.0f} env-steps/s, arrays {arr:,.0f} "
            f"({arr / ref:.1f}x)"
        )


def main_economy(args: argparse.Namespace) -> None:
    """Print the whole economy's rates and their ratios to the dict API."""
    dict_rate = bench_dict_economy(min(args.env_steps, 5000), args.repeats)
    print(f"phase-2 economy, dict API, 1 env: {dict_rate:,.0f} env-steps/s")
    for n in args.num_envs:
        bare = bench_economy(n, args.env_steps, args.repeats, with_obs=False)
        full = bench_economy(n, args.env_steps, args.repeats, with_obs=True)
        print(
            f"array economy, {n} envs: {bare:,.0f} env-steps/s step+masks "
            f"({bare / dict_rate:.1f}x the dict API); {full:,.0f} with observations "
            f"({full / dict_rate:.1f}x)"
        )


def main() -> None:
    """Print the rates and their ratios to the dict API."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num_envs", type=int, nargs="+", default=[1, 100, 1000])
    parser.add_argument("--env_steps", type=int, default=10000, help="env-steps per timed run")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--economy", action="store_true", help="the whole phase-2 economy")
    parser.add_argument("--batches", action="store_true", help="with --economy: trainer batches")
    args = parser.parse_args()
    print(f"CPU: {cpu_name()}; numpy {np.__version__}; CPU time of one process")
    if args.economy:
        main_economy(args)
        if args.batches:
            main_batches(args)
        if hasattr(os, "getloadavg"):
            print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}")
        return
    dict_rate = bench_dict(min(args.env_steps, 5000), args.repeats)
    print(f"dict API, 1 env: {dict_rate:,.0f} env-steps/s")
    for n in args.num_envs:
        bare = bench_array(n, args.env_steps, args.repeats, with_obs=False)
        full = bench_array(n, args.env_steps, args.repeats, with_obs=True)
        print(
            f"array world, {n} envs: {bare:,.0f} env-steps/s step+masks "
            f"({bare / dict_rate:.1f}x the dict API); {full:,.0f} with observations "
            f"({full / dict_rate:.1f}x)"
        )
    if hasattr(os, "getloadavg"):
        print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

"""Why does training settle on a constant stringency? The incentives of the COVID-19 learners,
computed on the CPU with the batched float64 array model.

    python benchmarks/learning_analysis.py [--sweeps 4] [--json FILE] [--scenario tutorial]

A state may change its stringency level only every 28 days (``action_cooldown_period``), so
a state's policy over one episode is a level per 28-day *epoch* (20 epochs in 540 days, the
first on day 1).  The states' rewards are independent of each other given the subsidies (each
state's epidemic and economy are its own), so all 51 states can search their best response at
once in one batch.  The script prints:

1. **Best responses by coordinate ascent over the epochs.** For each discount factor gamma of
   the states and each constant subsidy level, every state picks at each epoch the level that
   maximises *its own return discounted from that epoch's first day* (the later epochs fixed),
   epoch after epoch, until no state changes (or ``--sweeps``).  This is the fixed point
   of a policy-gradient learner whose advantage at a decision is its discounted return from
   there: gamma 1 gives the states' undiscounted best response, gamma < 1 what a learner with
   that gamma converges to at best.  Each row shows the states' mean level per 90 days, the
   states' mean (undiscounted) and the planner's episode sums under that response.
2. **The planner's best uniform schedule** (every state the same level per epoch, subsidy 0),
   by coordinate ascent on the planner's sum: the room above the 470.95 of two phases.
3. **The gradient at the learned constant** (every state at level 6, no subsidy, which
   training reaches): per epoch, what a state gains in its gamma-discounted return by its best
   one-epoch deviation, and which level that is.
4. With ``--value_fit``: how many Adam steps (lr 1e-4, gradient norm 10, minibatches of 4,096,
   as the states' PPO update) a fresh ``[256, 256]`` actor-critic needs before its value head
   fits the states' discounted returns-to-go of random-action episodes, per gamma (needs
   torch).  Until it does, GAE advantages see mostly the rewards of the next 1 / (1 - gamma
   lambda) days: the learner is more myopic than its gamma.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ai_economist import foundation  # noqa: E402
from ai_economist.foundation.scenarios.covid19.model.simulation import CovidSimulation  # noqa: E402
from ai_economist.training.config import default_config_path, load_yaml  # noqa: E402

LEVELS = np.arange(1, 11)
GAMMAS = (0.98, 0.99, 0.995, 0.998, 1.0)
SUBSIDIES = (0, 5, 20)


def epoch_starts(days: int, cooldown: int = 28) -> np.ndarray:
    """First day (0-based step) of each epoch between two possible level changes."""
    return np.arange(0, days, cooldown)


def play(
    env: Any, levels: np.ndarray, subsidy: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-day rewards of ``levels`` (N, K, A) epoch levels and ``subsidy`` (N,) levels:
    ``(agents (N, T, A), planner (N, T))``."""
    n, days = len(levels), env.episode_length
    sim = CovidSimulation(env.params, env.component_params(), n)
    epoch = np.searchsorted(starts, np.arange(days), side="right") - 1
    agents = np.empty((n, days, env.params.num_agents))
    planner = np.empty((n, days))
    for t in range(days):
        agents[:, t], planner[:, t] = sim.step(levels[:, epoch[t]], subsidy.copy())
    return agents, planner


def discounted_from(rewards: np.ndarray, start: int, gamma: float) -> np.ndarray:
    """Returns from day ``start`` discounted per day: (N, T, ...) -> (N, ...)."""
    weights = gamma ** np.arange(rewards.shape[1] - start)
    return np.tensordot(weights, np.moveaxis(rewards[:, start:], 1, 0), axes=1)


def best_responses(
    env: Any,
    variants: list[tuple[float, int]],
    starts: np.ndarray,
    sweeps: int,
    init_level: int = 6,
) -> tuple[np.ndarray, int, int]:
    """Per-state coordinate ascent for each ``(gamma, subsidy)`` variant, batched: returns
    ``(levels (V, K, A), sweeps used, (state, epoch) choices changed in the last sweep)``."""
    v, k, a = len(variants), len(starts), env.params.num_agents
    levels = np.full((v, k, a), init_level, dtype=np.int64)
    subsidy = np.repeat([s for _, s in variants], len(LEVELS))
    gammas = np.array([g for g, _ in variants])
    used, changed = 0, -1
    while used < sweeps and changed != 0:
        used, changed = used + 1, 0
        for e in range(k):
            trial = np.repeat(levels, len(LEVELS), axis=0)  # (V * 10, K, A)
            trial[:, e, :] = np.tile(LEVELS, v)[:, None]
            agents, _ = play(env, trial, subsidy, starts)
            agents = agents.reshape(v, len(LEVELS), *agents.shape[1:])
            for i, gamma in enumerate(gammas):
                value = discounted_from(agents[i], starts[e], gamma)  # (10, A)
                best = LEVELS[np.argmax(value, axis=0)]
                changed += int((best != levels[i, e]).sum())
                levels[i, e] = best
    return levels, used, changed


def planner_best_uniform(
    env: Any, starts: np.ndarray, sweeps: int, init_level: int = 6
) -> tuple[np.ndarray, float]:
    """Coordinate ascent of one level per epoch for all states on the planner's undiscounted
    sum (subsidy 0): ``(levels (K,), planner sum)``."""
    levels = np.full(len(starts), init_level, dtype=np.int64)
    a = env.params.num_agents
    best_total = -np.inf
    for _ in range(sweeps):
        improved = False
        for e in range(len(starts)):
            trial = np.repeat(levels[None], len(LEVELS), axis=0)
            trial[:, e] = LEVELS
            _, planner = play(env, np.repeat(trial[:, :, None], a, axis=2),
                              np.zeros(len(LEVELS), np.int64), starts)  # fmt: skip
            totals = planner.sum(axis=1)
            if totals.max() > best_total + 1e-9:
                improved = improved or LEVELS[np.argmax(totals)] != levels[e]
                levels[e], best_total = LEVELS[np.argmax(totals)], totals.max()
        if not improved:
            break
    return levels, float(best_total)


def deviation_gains(
    env: Any, starts: np.ndarray, gamma: float, level: int = 6, subsidy: int = 0
) -> list[tuple[int, float, int]]:
    """Per epoch: the states' mean gain in their gamma-discounted return (from the epoch's
    first day) of their best one-epoch deviation from a constant ``level``, and the most
    common best level."""
    k, a = len(starts), env.params.num_agents
    trial = np.full((k * len(LEVELS), k, a), level, dtype=np.int64)
    for e in range(k):
        trial[e * len(LEVELS) : (e + 1) * len(LEVELS), e, :] = LEVELS[:, None]
    agents, _ = play(env, trial, np.full(len(trial), subsidy), starts)
    rows = []
    for e in range(k):
        block = agents[e * len(LEVELS) : (e + 1) * len(LEVELS)]
        value = discounted_from(block, starts[e], gamma)  # (10, A)
        gain = value.max(axis=0) - value[level - 1]
        best = LEVELS[np.argmax(value, axis=0)]
        rows.append((int(starts[e]) + 1, float(gain.mean()), int(np.bincount(best).argmax())))
    return rows


def value_fit(
    gammas: Sequence[float], checkpoints: Sequence[int] = (100, 300, 1000, 3000), seed: int = 0
) -> dict:
    """``{gamma: [(step, mean value, mean return, explained variance), ...]}``: a fresh
    ``[256, 256]`` model's value head fitted by Adam to the states' discounted returns-to-go
    (8 episodes of uniformly random state actions, no subsidy)."""
    import torch

    from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
    from ai_economist.foundation.scenarios.covid19.configs import env_config
    from ai_economist.warp_drive.training.models import build_model

    torch.manual_seed(seed)
    env = foundation.make_env_instance("CovidAndEconomySimulation", **env_config())
    wrapper = FoundationEnvWrapper(env, num_envs=8, env_backend="numpy")
    wrapper.reset_all_envs()
    rng = np.random.default_rng(seed)
    observations, rewards = [], []
    for _ in range(env.episode_length):
        observations.append(wrapper.observations("a").clone())
        actions = rng.integers(0, 11, size=tuple(wrapper.actions("a").shape))
        wrapper.actions("a").copy_(torch.from_numpy(actions))
        wrapper.actions("p").zero_()
        wrapper.step_all_envs()
        rewards.append(wrapper.rewards("a").double().clone())
    x = torch.stack(observations).reshape(-1, observations[0].shape[-1])
    rewards = torch.stack(rewards)  # (T, E, A)
    out = {}
    for gamma in gammas:
        returns, running = torch.zeros_like(rewards), torch.zeros_like(rewards[0])
        for t in reversed(range(len(rewards))):
            running = rewards[t] + gamma * running
            returns[t] = running
        y = returns.reshape(-1).float()
        model = build_model({"fc_dims": [256, 256]}, x.shape[-1], 11)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, eps=1e-5)
        generator, rows = torch.Generator().manual_seed(seed + 1), []
        for step in range(1, max(checkpoints) + 1):
            idx = torch.randint(0, len(x), (4096,), generator=generator)
            loss = 0.5 * (model(x[idx])[1] - y[idx]).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            optimizer.step()
            if step in checkpoints:
                with torch.no_grad():
                    value, target = model(x[::7])[1], y[::7]
                explained = 1 - float((target - value).var() / target.var())
                rows.append((step, float(value.mean()), float(target.mean()), explained))
        out[gamma] = rows
    return out


def per_quarter(levels_ka: np.ndarray, starts: np.ndarray, days: int) -> list[float]:
    """The states' mean level per 90 days of a (K, A) epoch schedule."""
    epoch = np.searchsorted(starts, np.arange(days), side="right") - 1
    daily = levels_ka[epoch].mean(axis=1)
    return [float(daily[q : q + 90].mean()) for q in range(0, days, 90)]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sweeps", type=int, default=4, help="coordinate-ascent sweeps")
    parser.add_argument("--json", default="", help="also write the results to this file")
    parser.add_argument("--value_fit", action="store_true", help="also run part 4 (torch)")
    parser.add_argument("--gammas", type=float, nargs="+", default=list(GAMMAS))
    parser.add_argument("--subsidies", type=int, nargs="+", default=list(SUBSIDIES))
    parser.add_argument(
        "--scenario",
        choices=("training", "tutorial"),
        default="training",
        help="training: the 540-day run config (m_a 0.3, m_p 0.45); tutorial: 405 days, 1/1",
    )
    args = parser.parse_args(argv)
    if args.scenario == "tutorial":
        from ai_economist.foundation.scenarios.covid19.configs import (
            TUTORIAL_ENV_CONFIG,
            env_config,
        )

        env_kwargs = env_config(TUTORIAL_ENV_CONFIG)
    else:
        env_kwargs = load_yaml(default_config_path("covid_and_economy_environment"))["env"]
    env = foundation.make_env_instance("CovidAndEconomySimulation", **env_kwargs)
    starts = epoch_starts(env.episode_length)
    out: dict = {"epochs": len(starts)}
    t0 = time.perf_counter()
    variants = [(g, s) for s in args.subsidies for g in args.gammas]
    levels, used, changed = best_responses(env, variants, starts, args.sweeps)
    agents, planner = play(env, levels, np.array([s for _, s in variants]), starts)
    print(f"1. states' best responses ({used} sweeps; (state, epoch) choices changed in the "
          f"last: {changed} of {len(variants) * levels[0].size}; "
          f"{time.perf_counter() - t0:.0f} s)")  # fmt: skip
    print(
        f"{'gamma':>6} {'subsidy':>7} | mean level per 90 days        | {'states':>7} {'planner':>7}"
    )
    out["best_responses"] = []
    for i, (gamma, subsidy) in enumerate(variants):
        quarters = per_quarter(levels[i], starts, env.episode_length)
        states, plan = float(agents[i].sum(axis=0).mean()), float(planner[i].sum())
        print(f"{gamma:>6} {subsidy:>7} | {' '.join(f'{q:4.1f}' for q in quarters)} | "
              f"{states:7.2f} {plan:7.2f}")  # fmt: skip
        out["best_responses"].append({"gamma": gamma, "subsidy": subsidy, "quarters": quarters,
                                      "states": states, "planner": plan,
                                      "levels": levels[i].tolist()})  # fmt: skip
    best, total = planner_best_uniform(env, starts, args.sweeps)
    print(f"\n2. the planner's best uniform schedule (subsidy 0): {total:.2f}, levels per epoch "
          + " ".join(str(v) for v in best))  # fmt: skip
    out["planner_best_uniform"] = {"levels": best.tolist(), "planner": total}
    print("\n3. at the learned constant (level 6, subsidy 0): a state's best one-epoch deviation")
    print(f"{'day':>4} | " + " | ".join(f"gamma {g}: gain, level" for g in (0.99, 1.0)))
    gains = {g: deviation_gains(env, starts, g) for g in (0.99, 1.0)}
    for e in range(len(starts)):
        cells = " | ".join(f"{gains[g][e][1]:>14.3f} {gains[g][e][2]:>6d}" for g in (0.99, 1.0))
        print(f"{gains[0.99][e][0]:>4} | {cells}")
    out["deviation_gains"] = {str(g): rows for g, rows in gains.items()}
    if args.value_fit:
        print("\n4. Adam steps until the value head fits the states' returns-to-go")
        out["value_fit"] = value_fit((0.98, 0.99, 0.998))
        for gamma, rows in out["value_fit"].items():
            print(f"gamma {gamma}: " + "; ".join(
                f"step {s}: mean value {v:.1f} of {r:.1f}, explained variance {e:.2f}"
                for s, v, r, e in rows))  # fmt: skip
    if args.json:
        from learning_report import write_json

        print(f"written to {write_json(args.json, out)}")
    return out


if __name__ == "__main__":
    main()

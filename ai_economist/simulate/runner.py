"""Run one chunk of a sweep: up to ``chunk_size`` runs of one model group side by side in the
batched float64 array model (``CovidSimulation``), and their outcomes.

A chunk is plain data (picklable), so the same function runs in this process, in a local
worker process or on a Ray cluster.  Each run's numbers depend on its own policy and parameters
only, never on the other runs of its chunk (the model is elementwise over envs), so the table
is the same for any chunk size and any number of workers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ai_economist.simulate.model import ModelKey, build_model, env_kwargs

OUTCOMES = (
    "planner_reward",
    "states_reward",
    "deaths_thousands",
    "mean_unemployment_rate_pct",
    "peak_unemployment_rate_pct",
    "vaccinated_pct",
    "subsidy_trillions",
    "health_index",
    "economic_index",
)
"""Outcome columns: the planner's episode reward sum (social welfare), the states' mean reward
sum, US deaths at the end, US unemployment rate (% of the population, mean and peak over the
days), vaccinated % at the end, total subsidies paid, and the planner's health and economic
indices at the end of the episode."""


@dataclass
class Chunk:
    """Runs of one model group and one policy kind, stepped as one batch."""

    key: ModelKey
    kind: str  # "schedule", "real-world" or "checkpoint"
    runs: np.ndarray  # (E,) row numbers in the table
    modulations: np.ndarray  # (E, 3) infection intercept, infection slope, unemployment
    seeds: np.ndarray  # (E,)
    which: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # (E,) schedule
    stringency: np.ndarray | None = None  # (U, T, A) int8 actions of the chunk's schedules
    subsidy: np.ndarray | None = None  # (U, T) int8
    checkpoint: str | None = None
    greedy: bool = False


class _Tally:
    """Running outcome sums over the days of an episode."""

    def __init__(self, num_envs: int) -> None:
        self.planner = np.zeros(num_envs)
        self.states = np.zeros(num_envs)
        self.unemployed = np.zeros(num_envs)
        self.peak = np.zeros(num_envs)
        self.subsidy = np.zeros(num_envs)

    def add(self, sim, agent_rewards: np.ndarray, planner_rewards: np.ndarray) -> None:
        self.planner += planner_rewards
        self.states += agent_rewards.mean(axis=1)
        unemployed = sim.unemployed.sum(axis=1)
        self.unemployed += unemployed
        np.maximum(self.peak, unemployed, out=self.peak)
        self.subsidy += sim.subsidy.sum(axis=1)

    def outcomes(self, sim, days: int) -> dict[str, np.ndarray]:
        from ai_economist.foundation.scenarios.covid19.model.metrics import episode_metric_values

        us = float(sim.params.us_population)
        deaths, vaccinated, health, economic = episode_metric_values(
            sim.deaths, sim.vaccinated, sim.planner_health_index, sim.planner_economic_index, us
        )
        return {
            "planner_reward": self.planner,
            "states_reward": self.states,
            "deaths_thousands": deaths,
            "mean_unemployment_rate_pct": self.unemployed / days / us * 100,
            "peak_unemployment_rate_pct": self.peak / us * 100,
            "vaccinated_pct": vaccinated,
            "subsidy_trillions": self.subsidy / 1e12,
            "health_index": np.array(health, copy=True),
            "economic_index": np.array(economic, copy=True),
        }


def _modulate(sim, modulations: np.ndarray) -> None:
    sim.beta_intercept_modulation[:, 0] = modulations[:, 0]
    sim.beta_slope_modulation[:, 0] = modulations[:, 1]
    sim.unemployment_modulation[:, 0] = modulations[:, 2]


def run_chunk(chunk: Chunk) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``(row numbers, {outcome: (E,) values})`` of every run of ``chunk``."""
    if chunk.kind == "checkpoint":
        return chunk.runs, _run_checkpoint(chunk)
    from ai_economist.foundation.scenarios.covid19.model.simulation import CovidSimulation

    real = chunk.kind == "real-world"
    params, comps, levels = build_model(chunk.key, real)
    num_envs = len(chunk.runs)
    sim = CovidSimulation(params, comps, num_envs, real, levels)
    _modulate(sim, chunk.modulations)
    tally = _Tally(num_envs)
    no_actions = np.zeros((num_envs, params.num_agents), np.int64)
    for t in range(chunk.key.days):
        if real:
            agent_actions, planner_actions = no_actions, np.zeros(num_envs, np.int64)
        else:
            agent_actions = chunk.stringency[chunk.which, t].astype(np.int64)
            planner_actions = chunk.subsidy[chunk.which, t].astype(np.int64)
        agent_rewards, planner_rewards = sim.step(agent_actions, planner_actions)
        tally.add(sim, agent_rewards, planner_rewards)
    return chunk.runs, tally.outcomes(sim, chunk.key.days)


def _run_checkpoint(chunk: Chunk) -> dict[str, np.ndarray]:
    """The checkpoint's policies on the numpy backend of ``FoundationEnvWrapper`` (needs torch);
    sampled actions draw their noise from one generator per run (seeded by its ``seed``)."""
    from ai_economist.warp_drive.errors import require_torch

    torch = require_torch()  # an ImportError naming the extra to install
    from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
    from ai_economist.foundation.scenarios.covid19.covid19_env import CovidAndEconomyEnvironment
    from ai_economist.simulate.checkpoints import load_models, policy_inference

    num_envs = len(chunk.runs)
    env = CovidAndEconomyEnvironment(**env_kwargs(chunk.key))
    wrapper = FoundationEnvWrapper(env, num_envs=num_envs, env_backend="numpy")
    models = load_models(chunk.checkpoint, wrapper.policy_specs)
    wrapper.reset_all_envs()
    sim = wrapper.backend.sim
    _modulate(sim, chunk.modulations)
    generators = (
        None if chunk.greedy else [torch.Generator().manual_seed(int(s)) for s in chunk.seeds]
    )
    tally = _Tally(num_envs)
    with policy_inference():
        for _ in range(chunk.key.days):
            for tag, model in models.items():
                actions = _policy_actions(torch, model, wrapper, tag, generators)
                wrapper.actions(tag).copy_(actions.reshape(wrapper.actions(tag).shape))
            wrapper.step_all_envs()
            views = wrapper.backend.views  # the trainer-facing float32 reward buffers
            tally.add(sim, views["rewards_a"], views["rewards_p"][:, 0])
    return tally.outcomes(sim, chunk.key.days)


def _policy_actions(torch, model, wrapper, tag: str, generators: list | None):
    """Policy ``tag``'s actions: the most likely allowed one (``generators`` None), or a draw
    with Gumbel noise from each run's own generator."""
    from ai_economist.warp_drive.training.models import greedy_masked, sample_masked

    logits, _ = model(wrapper.observations(tag).float())
    mask = wrapper.action_masks(tag)
    if generators is None:
        return greedy_masked(logits, mask)
    shape = logits.shape[1:]
    noise = torch.stack([-torch.empty(shape).exponential_(generator=g).log() for g in generators])
    return sample_masked(logits, mask, gumbel=noise)[0]

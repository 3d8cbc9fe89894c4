"""Evaluate a trained gather-trade-build run: equality, productivity and the planner's rates.

The run's newest checkpoint plays one episode on each of ``episodes`` fresh dict-API envs
(:class:`~ai_economist.foundation.scenarios.simple_wood_and_stone.batched.GatherTradeBuildBatch`,
the reference model) under the run's own tax schedule, seeded apart from training
(:func:`eval_seed`). The agents' actions are **sampled** from their policies (one torch
generator seeded per run; argmax play of a PPO policy trained with an entropy bonus is not the
policy that was trained), or greedy with ``greedy=True``; the AI planner always acts greedily
(its rates are the schedule being scored). Tax annealing is a training device that caps every
schedule's rates: the evaluation holds the limit where the run's last training episodes had it
(:func:`trained_tax_limit`; no limit once the annealing had opened the whole range), so a
planner is never scored on rates it was never allowed to choose. The Saez model learns its
rates from the incomes it sees, so a Saez run's envs play warm-up episodes before the scored
one.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ai_economist.foundation.components.utils import annealed_tax_limit, held_tax_limit_schedule
from ai_economist.training.tax_protocol.plan import TAX_COMPONENT, tax_entry

EVAL_SEED_BASE = 1_000_000


def eval_seed(seed: int) -> int:
    """The first env seed of a protocol seed's evaluation episodes (training uses seed + i)."""
    return EVAL_SEED_BASE + 1000 * seed


def eval_env_block(env_block: dict[str, Any], rate_limit: float | None = None) -> dict[str, Any]:
    """``env_block`` without dense logs, its tax rates held below ``rate_limit`` (a share of
    the range: :func:`~ai_economist.foundation.components.utils.held_tax_limit_schedule`) or,
    with ``None``, without tax annealing."""
    block = copy.deepcopy(env_block)
    block["dense_log_frequency"] = None
    entry = tax_entry(block)
    if entry is not None:
        schedule = None if rate_limit is None else held_tax_limit_schedule(rate_limit)
        entry[TAX_COMPONENT] = {**entry[TAX_COMPONENT], "tax_annealing_schedule": schedule}
    return block


def trained_tax_limit(state: dict) -> float | None:
    """The share of the tax-rate range that a checkpoint's last training episodes allowed (its
    tax annealing's limit after each env's finished episodes but the last), or ``None`` where
    the run had no annealing, had opened the whole range or had not finished an episode."""
    config = state["config"]
    entry = tax_entry(config["env"])
    tax = entry[TAX_COMPONENT] if entry is not None else None
    schedule = tax.get("tax_annealing_schedule") if isinstance(tax, dict) else None
    if schedule is None:
        return None
    envs = int(config["trainer"]["num_envs"]) * max(1, int(state.get("world_size") or 1))
    per_episode = envs * int(config["env"]["episode_length"])
    episodes = int(state.get("env_steps") or 0) // max(per_episode, 1)
    if episodes < 1:
        return None
    limit = float(annealed_tax_limit(episodes - 1, float(schedule[0]), float(schedule[1]), 1.0))
    return limit if limit < 1.0 else None


@torch.no_grad()
def evaluate_gtb_run(
    train_dir: str | Path, seed: int, episodes: int, greedy: bool = False, saez_warmup: int = 0
) -> dict:
    """Mean metrics over ``episodes`` evaluation episodes of the run in ``train_dir``:
    ``equality``, ``productivity`` (total coin), ``equality_x_productivity``, ``welfare`` (the
    planner's objective, ``coin_eq_times_productivity``), ``taxes_collected`` and the mean
    applied rate of each bracket (``rates``), plus the per-episode values; for an AI planner
    also ``planner_entropy`` (:func:`decision_entropy` of the scored episode: near 1, its
    greedy rates are the argmax of an almost uniform policy, i.e. it has not learnt); with a
    held rate limit (:func:`trained_tax_limit`) ``tax_limit``, its share of the range.

    A Saez run's envs first play ``saez_warmup`` unscored episodes: a fresh Saez model draws
    random rates until its buffer holds 500 incomes (4 agents x 10 tax days = 40 an episode)
    and then smooths its rates slowly (running average, weight 0.01 a period)."""
    from ai_economist.foundation.scenarios.simple_wood_and_stone.batched import (
        GatherTradeBuildBatch,
    )
    from ai_economist.training.evaluate import load_policy_models
    from ai_economist.warp_drive.training.checkpoint import find_checkpoint, load_checkpoint

    state = load_checkpoint(find_checkpoint(train_dir))
    rate_limit = trained_tax_limit(state)
    env_block = eval_env_block(state["config"]["env"], rate_limit)
    batch = GatherTradeBuildBatch(env_block, episodes, eval_seed(seed))
    models = load_policy_models(state, batch.policy_specs)
    generator = torch.Generator().manual_seed(eval_seed(seed))
    is_saez = batch.envs[0].get_component(TAX_COMPONENT).tax_model == "saez"
    for _ in range(saez_warmup if is_saez else 0):
        play_episode(batch, models, generator, greedy)
    entropies = play_episode(batch, models, generator, greedy)
    out = summarise([episode_values(env) for env in batch.envs])
    if entropies:
        out["planner_entropy"] = float(np.mean(entropies))
    if rate_limit is not None:
        out["tax_limit"] = rate_limit
    return out


def decision_entropy(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """The entropy of each row's masked distribution over that of the uniform one on its
    allowed actions (1 = uniform, 0 = one action), for the rows with a choice (more than one
    allowed action: the planner's tax days); an empty tensor when no row has one."""
    from ai_economist.warp_drive.training.models import masked_log_prob_entropy

    allowed = (masks > 0).sum(-1)
    choice = allowed > 1
    if not choice.any():  # most steps: the planner acts on tax days only
        return logits.new_zeros(0)
    rows = logits[choice]
    _, entropy = masked_log_prob_entropy(rows, masks[choice], rows.new_zeros(len(rows)))
    return entropy / allowed[choice].float().log()


def play_episode(batch: Any, models: dict, generator: torch.Generator, greedy: bool) -> list[float]:
    """One episode in every env of ``batch``: agents sampled (or greedy), planner greedy.
    Returns the planner's :func:`decision_entropy` of each choice it made (none if it does not
    act)."""
    from ai_economist.warp_drive.training.models import greedy_masked, sample_masked

    planner_acts = batch.policy_specs["p"].num_actions > 1
    entropies: list[float] = []
    batch.reset_all_envs()
    for _ in range(batch.episode_length):
        logits, _ = models["a"](batch.observations("a").float())
        mask = batch.action_masks("a")
        act = greedy_masked(logits, mask) if greedy else sample_masked(logits, mask, generator)[0]
        batch.actions("a").copy_(act)
        if planner_acts:
            logits, _ = models["p"](batch.observations("p").float())
            masks = batch.action_masks("p")
            entropies += decision_entropy(logits, masks).tolist()
            batch.actions("p").copy_(greedy_masked(logits, masks))
        batch.step_all_envs()
    return entropies


def episode_values(env: Any) -> dict[str, Any]:
    """One finished episode's values (the env's metrics and its tax component's record)."""
    metrics = env.previous_episode_metrics
    tax = env.get_component(TAX_COMPONENT)
    equality = float(metrics["social/equality"])
    productivity = float(metrics["social/productivity"])
    prefix = "PeriodicTax/avg_bracket_rate/"  # nan for an episode without a tax day
    rates = {k[len(prefix) :]: float(v) for k, v in metrics.items() if k.startswith(prefix)}
    return {
        "equality": equality,
        "productivity": productivity,
        "equality_x_productivity": equality * productivity,
        "welfare": float(metrics["social_welfare/coin_eq_times_productivity"]),
        "taxes_collected": float(tax.total_collected_taxes),
        "rates": rates,
    }


def summarise(values: list[dict[str, Any]]) -> dict[str, Any]:
    """Means over the episodes (rates bracket by bracket) and the episodes themselves."""
    keys = ("equality", "productivity", "equality_x_productivity", "welfare", "taxes_collected")
    out: dict[str, Any] = {k: float(np.mean([v[k] for v in values])) for k in keys}
    out["rates"] = {b: float(np.mean([v["rates"][b] for v in values])) for b in values[0]["rates"]}
    out["episodes"] = values
    return out

"""Gather-trade-build runs with a checkpoint's planner or agents (``checkpoint:RUN``), on the
trainer's batch (:class:`~.array_batch.ArrayGatherTradeBuildBatch`): the same array economy
as the baseline runs, seeded per run, with the models acting on the trainer's observations."""

from __future__ import annotations

import numpy as np

from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy as ae
from ai_economist.simulate.economies import EconomyChunk, social_outcomes

TRAINED_ON = ("gather_trade_build_phase1", "gather_trade_build_phase2")


def _models(chunk: EconomyChunk, specs: dict, planner_state: dict | None) -> dict:
    from ai_economist.simulate.checkpoints import load_models

    models = {}
    if chunk.policy.kind == "checkpoint":
        spec = {"p": specs["p"]}
        models["p"] = load_models(chunk.policy.path, spec, TRAINED_ON, planner_state)["p"]
    if chunk.agents.kind == "checkpoint":
        models["a"] = load_models(chunk.agents.path, {"a": specs["a"]}, TRAINED_ON)["a"]
    return models


def planner_checkpoint(chunk: EconomyChunk) -> dict | None:
    """The checkpoint of a ``checkpoint:RUN`` tax policy (loaded once: it gives the planner's
    model and its rate limit), or None for other policies."""
    if chunk.policy.kind != "checkpoint":
        return None
    from ai_economist.simulate.checkpoints import load_state

    return load_state(chunk.policy.path, TRAINED_ON)


def planner_tax_limit(planner_state: dict | None) -> float | None:
    """The rate limit a checkpoint's planner was trained under at the end (``None``: the whole
    range, or no checkpoint planner): its replay keeps it, so it never picks a rate it was never
    allowed (:func:`~ai_economist.training.tax_protocol.gtb_eval.trained_tax_limit`)."""
    if planner_state is None:
        return None
    from ai_economist.training.tax_protocol.gtb_eval import trained_tax_limit

    return trained_tax_limit(planner_state)


def _batch(chunk: EconomyChunk, planner_state: dict | None):
    """The trainer's batch of the chunk's runs, each env reset from its run's seed."""
    from ai_economist.foundation.scenarios.simple_wood_and_stone.array_batch import (
        ArrayGatherTradeBuildBatch,
    )
    from ai_economist.foundation.scenarios.simple_wood_and_stone.simulate_env import env_config

    config = env_config(chunk.group, chunk.policy, planner_tax_limit(planner_state))
    batch = ArrayGatherTradeBuildBatch(config, len(chunk.runs))
    batch.state = ae.initial_state(batch.params, chunk.seeds)
    batch._write(batch._observe())
    batch._mirror.push("obs", "masks", "done")
    return batch


def _act(batch, models: dict, chunk: EconomyChunk, generators: list, torch_generators) -> None:
    """One step's actions; called inside ``policy_inference`` (no autograd, one thread)."""
    import torch

    from ai_economist.foundation.scenarios.simple_wood_and_stone.simulate_env import (
        baseline_actions,
    )
    from ai_economist.simulate.checkpoints import policy_actions

    for tag, model in models.items():
        actions = policy_actions(
            model, batch.observations(tag), batch.action_masks(tag), torch_generators
        )
        batch.actions(tag).copy_(actions.reshape(batch.actions(tag).shape))
    if "a" not in models:
        actions = baseline_actions(chunk, batch.state, batch.params, generators)
        batch.actions("a").copy_(torch.as_tensor(actions))
    if "p" not in models:
        batch.actions("p").zero_()


def run_group(chunk: EconomyChunk) -> dict[str, np.ndarray]:
    """The outcomes of a chunk's runs (``chunk.episodes`` episodes, the last measured)."""
    import torch

    from ai_economist.foundation.scenarios.simple_wood_and_stone.simulate_env import RATE_COLUMNS
    from ai_economist.simulate.checkpoints import policy_inference

    planner_state = planner_checkpoint(chunk)
    batch = _batch(chunk, planner_state)
    models = _models(chunk, batch.policy_specs, planner_state)
    generators = [np.random.default_rng([int(s), 2]) for s in chunk.seeds]
    torch_generators = (
        None if chunk.greedy else [torch.Generator().manual_seed(int(s)) for s in chunk.seeds]
    )
    state, period = batch.state, batch.params.tax.period
    e = len(chunk.runs)
    with policy_inference():  # one torch thread for the whole run, the batch's ops too
        for episode in range(chunk.episodes):
            if episode:
                batch.reset_all_envs()
                state = batch.state
            welfare = state.world.welfare.copy()
            rate_sum, periods = np.zeros((e, batch.params.tax.n_brackets)), np.zeros(e)
            done = np.zeros(e, dtype=bool)
            while not done.all():
                tax_day = state.tax.cycle_pos >= period
                _act(batch, models, chunk, generators, torch_generators)
                batch.step_all_envs()
                rate_sum[tax_day] += state.tax.rates_obs[tax_day]
                periods += tax_day
                done = batch.done().numpy().astype(bool)
    rates = np.where(
        (periods > 0)[:, None], rate_sum / np.maximum(periods, 1)[:, None], state.tax.rates_obs
    )
    return social_outcomes(
        ae.coin_endowment(state), state.world.labor, state.world.welfare - welfare,
        state.tax.total_collected, rates, RATE_COLUMNS,
    )  # fmt: skip

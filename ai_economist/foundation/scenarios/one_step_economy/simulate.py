"""The one-step economy for ``ai-economist-simulate --scenario one-step-economy``.

Each run is one env of the packaged run config ``run_configs/one_step_economy.yaml`` (10 agents, 7 US-federal
brackets, isoelastic utility) with its swept parameters, played on the batched numpy model
(:mod:`.array_model`): on step 1 the tax policy sets the rates, on step 2 the agents choose
their hours and are taxed, the revenue paid back as a lump sum.

Agents (``--agents``):

* ``best-response`` (default): every agent picks the hours (0..100) that maximise its own
  utility given the rates and the others' hours, until no one changes (a Nash equilibrium of
  the labour step, :func:`best_response_hours`): deterministic, and the behaviour the optimal
  tax theory assumes;
* ``random``: uniform hours 0..100, from a generator per run and episode (``seed``);
* ``checkpoint:RUN``: the agents of a checkpoint of ``training_script --env
  one_step_economy`` (they see the step-1 rates, as in training).

Outcomes with the baselines are those of scripted agents, not of the paper's trained ones.
The Saez policy learns over ``--episodes`` episodes (default 100; its buffer holds 500
incomes, 50 episodes of 10 agents); the outcomes are those of the last episode, taxed at the
rates the formula set in it, as the component does. ``saez-average`` (this scenario's own
policy) plays the last episode at the running average of the formula's rates instead
(``running_avg_tax_rates``, 0.99 old + 0.01 new each period), the settled schedule that
``schedules.saez_rates`` and ``benchmarks/one_step_tax_schedules.py`` compare (with 300
episodes, ``--episodes 300``).
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.foundation.components import tax_brackets as tb
from ai_economist.foundation.components.simple_labor import NUM_LABOR_HOURS
from ai_economist.foundation.scenarios.one_step_economy import array_model as am
from ai_economist.foundation.scenarios.one_step_economy import rules
from ai_economist.simulate.economies import (
    EconomyChunk,
    EconomySpec,
    economy_scenario,
    rate_columns,
    social_outcomes,
)
from ai_economist.simulate.errors import SimulateError
from ai_economist.simulate.sweep import SweepParameter

ENV_NAME = "one_step_economy"
RUN_CONFIG = Path(__file__).resolve().parent / "run_configs" / f"{ENV_NAME}.yaml"
"""The packaged run config whose ``env`` block every run starts from."""
BASELINES = ("best-response", "random")

PARAMETERS: dict[str, SweepParameter] = {
    p.name: p
    for p in (
        SweepParameter("isoelastic_eta", "shape of the agents' isoelastic utility of coin, in [0, 1]", 0.23, False, maximum=1.0),
        SweepParameter("labor_cost", "coefficient of the agents' labour cost", 0.7, False, minimum=1e-9),
        SweepParameter("pareto_param", "shape of the Pareto skill distribution (SimpleLabor)", 4.0, False, minimum=1e-9),
        SweepParameter("skill_multiplier", "highest skill (SimpleLabor payment_max_skill_multiplier, > 1)", 3.0, False, minimum=1.000001),
        SweepParameter("n_agents", "number of agents", 10, False, integer=True, minimum=2, maximum=1000),
        SweepParameter("seed", "env seed (the skills are drawn from it) and the random agents' seed", 0, False, integer=True),
    )
}  # fmt: skip
"""The one-step economy's sweep parameters."""


def env_config(group: dict[str, Any], tax_model: str = "fixed-bracket-rates") -> dict[str, Any]:
    """The env kwargs of a run group: the run config's ``env`` block with the group's values
    and ``tax_model`` (fixed rates: zeros, replaced per run)."""
    import yaml

    with RUN_CONFIG.open(encoding="utf-8") as handle:
        config = copy.deepcopy(yaml.safe_load(handle)["env"])
    for key in ("isoelastic_eta", "labor_cost", "n_agents", "seed"):
        config[key] = group[key]
    config["n_agents"], config["seed"] = int(group["n_agents"]), int(group["seed"])
    components = []
    for entry in config["components"]:
        ((name, kwargs),) = entry.items()
        kwargs = dict(kwargs)
        if name == "SimpleLabor":
            kwargs["pareto_param"] = group["pareto_param"]
            kwargs["payment_max_skill_multiplier"] = group["skill_multiplier"]
        if name == "PeriodicBracketTax" and tax_model != "model_wrapper":
            kwargs.update(tax_model=tax_model, fixed_bracket_rates=[0.0] * 7)
        components.append({name: kwargs})
    config["components"] = components
    return config


def model_params(group: dict[str, Any]) -> am.OneStepParams:
    """The batched model's parameters of a run group (a bad value is a SimulateError)."""
    from ai_economist.foundation.scenarios.one_step_economy.one_step_economy import (
        OneStepEconomy,
    )

    try:
        return am.OneStepParams.from_env(OneStepEconomy(**env_config(group)))
    except (TypeError, ValueError) as exc:
        raise SimulateError(f"one-step economy with {group}: {exc}") from None


def best_response_hours(
    params: am.OneStepParams, rates: np.ndarray, max_rounds: int = 100
) -> np.ndarray:
    """(E, N) hours where no agent gains by changing its own, given each env's rates (E, B)
    (agents move in index order; :func:`.schedules.best_response_hours` per env)."""
    rates = np.asarray(rates, dtype=np.float64)
    e, n = rates.shape[0], params.n_agents
    candidates = np.arange(NUM_LABOR_HOURS + 1, dtype=np.float64)
    hours = np.zeros((e, n))
    for _ in range(max_rounds):
        changed = np.zeros(e, dtype=bool)
        for i in range(n):
            trial = np.repeat(hours[:, None, :], candidates.size, axis=1)
            trial[:, :, i] = candidates
            income = trial * params.skills
            paid = tb.taxes_due(income, params.cutoffs, rates[:, None, :])
            coin = income - paid + paid.sum(axis=-1, keepdims=True) / n
            util = rules.agent_utilities(
                coin[:, :, i], candidates[None, :], params.agent_reward_type,
                params.isoelastic_eta, params.labor_exponent, params.labor_cost,
            )  # fmt: skip
            best = candidates[np.argmax(util, axis=1)]
            changed |= best != hours[:, i]
            hours[:, i] = best
        if not changed.any():
            return hours.astype(np.int64)
    raise SimulateError(f"best responses did not settle within {max_rounds} rounds")


def play(params: am.OneStepParams, rates: np.ndarray, hours: np.ndarray) -> am.OneStepState:
    """One episode of E envs with fixed rates (E, B) and hours (E, N); the final state."""
    fixed = dataclasses.replace(params, tax_model="fixed-bracket-rates", fixed_rates=rates)
    e = rates.shape[0]
    state = am.initial_state(fixed, e)
    no_op = np.zeros((e, params.n_brackets), dtype=np.int64)
    am.step(state, fixed, np.zeros((e, params.n_agents), dtype=np.int64), no_op)
    am.step(state, fixed, np.asarray(hours, dtype=np.int64), no_op)
    return state


def _agent_hours(chunk: EconomyChunk, params: am.OneStepParams, rates: np.ndarray, episode: int):
    if chunk.agents.kind == "best-response":
        return best_response_hours(params, rates)
    if chunk.agents.kind == "random":
        draws = [
            np.random.default_rng([int(s), episode]).integers(
                0, NUM_LABOR_HOURS + 1, params.n_agents
            )
            for s in chunk.seeds
        ]
        return np.stack(draws)
    return _checkpoint_hours(chunk, params, rates, episode)


def _generators(chunk: EconomyChunk, episode: int, salt: int) -> list | None:
    import torch

    if chunk.greedy:
        return None
    return [
        torch.Generator().manual_seed(int(s) * 1_000_003 + episode * 7 + salt) for s in chunk.seeds
    ]


def _checkpoint_hours(
    chunk: EconomyChunk, params: am.OneStepParams, rates: np.ndarray, episode: int
) -> np.ndarray:
    """The checkpoint agents' hours: they see the step-1 state under ``rates``."""
    import torch

    from ai_economist.simulate.checkpoints import load_models, policy_actions, policy_inference
    from ai_economist.warp_drive.env_protocol import PolicySpec

    fixed = dataclasses.replace(params, tax_model="fixed-bracket-rates", fixed_rates=rates)
    e, n, b = rates.shape[0], params.n_agents, params.n_brackets
    state = am.initial_state(fixed, e)
    am.step(state, fixed, np.zeros((e, n), dtype=np.int64), np.zeros((e, b), dtype=np.int64))
    spec = {"a": PolicySpec(n, b + n + 6, NUM_LABOR_HOURS + 1)}
    model = load_models(chunk.agents.path, spec, ENV_NAME)["a"]
    obs = torch.as_tensor(am.agent_observations(state, fixed), dtype=torch.float32)
    mask = torch.as_tensor(am.action_masks(state, fixed)[0])
    with policy_inference():
        actions = policy_actions(model, obs, mask, _generators(chunk, episode, 1))
    return actions.reshape(e, n).numpy().astype(np.int64)


def _checkpoint_rates(chunk: EconomyChunk, episode: int) -> np.ndarray:
    """(E, B): the rates the checkpoint planner sets on step 1."""

    from ai_economist.foundation.scenarios.one_step_economy.batched_env import (
        OneStepEconomyBatchedEnv,
    )
    from ai_economist.simulate.checkpoints import load_models, policy_actions, policy_inference

    e = len(chunk.runs)
    config = env_config(chunk.group, tax_model="model_wrapper")
    env = OneStepEconomyBatchedEnv(num_envs=e, device="cpu", **config)
    model = load_models(chunk.policy.path, {"p": env.policy_specs["p"]}, ENV_NAME)["p"]
    env.reset_all_envs()
    with policy_inference():
        actions = policy_actions(
            model, env.observations("p"), env.action_masks("p"), _generators(chunk, episode, 2)
        )
    env.actions("p").copy_(actions.reshape(env.actions("p").shape))
    env.actions("a").zero_()
    env.step_all_envs()
    return am.current_rates(env.state, env.params)


def _saez(chunk: EconomyChunk, params: am.OneStepParams) -> tuple[np.ndarray, np.ndarray]:
    """The Saez model's rates and the agents' hours in the last of ``chunk.episodes``
    episodes: each episode the formula (or, until 500 incomes, random rates) sets the rates,
    the agents respond, and their incomes and marginal rates enter the buffer."""
    from ai_economist.foundation.scenarios.simple_wood_and_stone.array_tax import (
        SaezTracker,
        TaxParams,
    )

    tax = TaxParams(
        tax_model="saez", disable_taxes=False, period=params.period, cutoffs=params.cutoffs,
        disc_rates=params.disc_rates, fixed_rates=np.zeros(params.n_brackets), rate_max=1.0,
        annealing=None,
    )  # fmt: skip
    trackers = [SaezTracker(tax, np.random.default_rng([int(s), 1])) for s in chunk.seeds]
    average = chunk.policy.kind == "saez-average"
    for episode in range(chunk.episodes):
        if average and episode == chunk.episodes - 1:
            rates = np.stack([t.running_avg_tax_rates for t in trackers])
            return rates, _agent_hours(chunk, params, rates, episode)
        for tracker in trackers:
            tracker.compute_and_set_new_period_rates_from_saez_formula()
        rates = np.stack([t.curr_bracket_tax_rates for t in trackers])
        hours = _agent_hours(chunk, params, rates, episode)
        state = play(params, rates, hours)
        for e, tracker in enumerate(trackers):
            tracker._update_saez_buffer(state.last_income[e], state.last_marginal_rate[e])
    return rates, hours


def run_group(chunk: EconomyChunk) -> dict[str, np.ndarray]:
    """The outcomes of a chunk's runs (see the module docstring)."""
    params = model_params(chunk.group)
    e, last = len(chunk.runs), chunk.episodes - 1
    if chunk.policy.kind in ("saez", "saez-average"):
        rates, hours = _saez(chunk, params)
    else:
        if chunk.policy.kind == "checkpoint":
            rates = _checkpoint_rates(chunk, last)
        else:
            rates = np.tile(np.asarray(chunk.policy.rates, dtype=np.float64), (e, 1))
        hours = _agent_hours(chunk, params, rates, last)
    state = play(params, rates, hours)
    return social_outcomes(
        state.coin, state.labor, state.welfare, state.total_collected_taxes, rates, RATE_COLUMNS
    )


RATE_COLUMNS = rate_columns(tb.US_FEDERAL_2018_CUTOFFS_USD[i] / 1000 for i in range(7))
SPEC = EconomySpec(
    name="one-step-economy",
    parameters=PARAMETERS,
    us_federal=tuple(tb.US_FEDERAL_2018_RATES),
    rate_columns=RATE_COLUMNS,
    baselines=BASELINES,
    default_agents="best-response",
    default_episodes=100,
    runner=run_group,
    extra_policies=("saez-average",),
)


SCENARIO = economy_scenario(
    SPEC,
    doc="the one-step economy (planner taxes, then 10 agents choose hours), batched numpy model",
    policies_doc="free-market, us-federal, saez, saez-average, fixed:RATES, checkpoint:RUN",
)
run = SCENARIO.run
""":func:`~ai_economist.simulate.economies.run_economy_sweep` on the one-step economy."""

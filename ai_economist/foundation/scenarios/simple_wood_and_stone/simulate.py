"""Gather-trade-build for ``ai-economist-simulate --scenario gather-trade-build``.

Each run is one env of the published phase-2 config (:data:`.configs.PHASE2_ENV_CONFIG`: 4
agents on the 25x25 quadrant map, Build, ContinuousDoubleAuction, Gather and
PeriodicBracketTax) with its swept parameters and the tax policy as the tax model
(``fixed-bracket-rates`` for free-market, us-federal and fixed rates; ``saez``), stepped on
the batched numpy array economy (:mod:`.array_economy`); env ``i`` of a chunk is seeded by
its run's ``seed``. The tax-rate annealing of training (``tax_annealing_schedule``) is off:
a schedule's rates apply from the first step (a checkpoint's planner keeps the rate limit its
training ended with, where that was below the whole range).

Agents (``--agents``), scripted baselines drawing from a generator per run (``seed``):

* ``builder`` (default): build a house whenever the mask allows, otherwise a uniform draw
  among the allowed moves (moving onto wood or stone gathers it); never trades;
* ``random``: a uniform draw among all the actions its mask allows (NO-OP and market orders
  included).

* ``checkpoint:RUN``: the agents of a ``gather_trade_build_phase1`` or ``_phase2`` run of our
  trainer (fully-connected models), on the trainer's batch (:mod:`.array_batch`).

The baselines are not trained agents, and they do not respond to taxes: their outcomes are a
baseline, not the paper's (which come from agents trained under each schedule).
``checkpoint:RUN`` as the tax policy replays a phase-2 run's planner (it picks each
bracket's rate on a period's first step, ``model_wrapper``).

The Saez policy learns over ``--episodes`` episodes (default 1; its buffer holds 500 incomes,
13 published episodes of 4 agents x 10 tax periods); the outcomes are those of the last.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.components import tax_brackets as tb
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_economy as ae
from ai_economist.foundation.scenarios.simple_wood_and_stone.simulate_env import (
    RATE_COLUMNS,
    baseline_actions,
    env_config,
)
from ai_economist.simulate.economies import (
    EconomyChunk,
    EconomySpec,
    economy_scenario,
    social_outcomes,
)
from ai_economist.simulate.errors import SimulateError
from ai_economist.simulate.sweep import SweepParameter

PARAMETERS: dict[str, SweepParameter] = {
    p.name: p
    for p in (
        SweepParameter("isoelastic_eta", "shape of the agents' isoelastic utility of coin, in [0, 1]", 0.23, False, maximum=1.0),
        SweepParameter("energy_cost", "labour cost weight of the agents' utility", 0.21, False),
        SweepParameter("skill_multiplier", "highest build skill (Build payment_max_skill_multiplier, > 1)", 3.0, False, minimum=1.000001),
        SweepParameter("episode_length", "steps per episode", 1000, False, integer=True, minimum=1),
        SweepParameter("tax_period", "steps per tax period (PeriodicBracketTax period)", 100, False, integer=True, minimum=1),
        SweepParameter("seed", "env seed (map draws, market order) and the random agents' seed", 0, True, integer=True),
    )
}  # fmt: skip
"""Gather-trade-build's sweep parameters."""


def economy_params(group: dict[str, Any], policy) -> ae.EconomyParams:
    """The array economy's parameters of a group (a bad value is a SimulateError)."""
    from ai_economist.foundation.scenarios.simple_wood_and_stone.array_batch import (
        economy_params as from_config,
    )

    try:
        return from_config(env_config(group, policy))
    except (TypeError, ValueError) as exc:
        if isinstance(exc, SimulateError):
            raise
        raise SimulateError(f"gather-trade-build with {group}: {exc}") from None


def run_group(chunk: EconomyChunk) -> dict[str, np.ndarray]:
    """The outcomes of a chunk's runs: ``chunk.episodes`` episodes, the last one measured."""
    if "checkpoint" in (chunk.policy.kind, chunk.agents.kind):
        from ai_economist.foundation.scenarios.simple_wood_and_stone import simulate_checkpoints

        return simulate_checkpoints.run_group(chunk)
    params = economy_params(chunk.group, chunk.policy)
    state = ae.initial_state(params, chunk.seeds)
    generators = [np.random.default_rng([int(s), 2]) for s in chunk.seeds]
    e = state.num_envs
    for episode in range(chunk.episodes):
        if episode:
            ae.reset_envs(state, params, np.ones(e, dtype=bool))
        welfare = np.zeros(e)
        rate_sum, periods = np.zeros((e, params.tax.n_brackets)), np.zeros(e)
        done = np.zeros(e, dtype=bool)
        while not done.all():
            tax_day = state.tax.cycle_pos >= params.tax.period
            actions = baseline_actions(chunk, state, params, generators)
            _, planner_rew, done = ae.step(state, params, actions)
            welfare += planner_rew
            rate_sum[tax_day] += state.tax.rates_obs[tax_day]
            periods += tax_day
    rates = np.where(
        (periods > 0)[:, None], rate_sum / np.maximum(periods, 1)[:, None], state.tax.rates_obs
    )
    return social_outcomes(
        ae.coin_endowment(state), state.world.labor, welfare, state.tax.total_collected, rates,
        RATE_COLUMNS,
    )  # fmt: skip


SPEC = EconomySpec(
    name="gather-trade-build",
    parameters=PARAMETERS,
    us_federal=tuple(tb.US_FEDERAL_2018_RATES),
    rate_columns=RATE_COLUMNS,
    baselines=("builder", "random"),
    default_agents="builder",
    default_episodes=1,
    runner=run_group,
)


SCENARIO = economy_scenario(
    SPEC,
    doc="gather-trade-build (published phase-2 config, 4 agents), batched numpy array economy",
    policies_doc="free-market, us-federal, saez, fixed:RATES, checkpoint:RUN",
)
run = SCENARIO.run
""":func:`~ai_economist.simulate.economies.run_economy_sweep` on gather-trade-build."""

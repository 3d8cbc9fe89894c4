"""The world of N gather-trade-build envs stepped together as arrays (numpy reference).

The batched twin of ``layout_from_file/simple_wood_and_stone`` with the components ``Build``
then ``Gather`` (the published phase-1/2 config without ``ContinuousDoubleAuction`` and
``PeriodicBracketTax``): every state array has the env on its first axis, every rule is a
function of :mod:`.array_rules` that a CUDA C or Numba kernel can mirror name for name.
Given the same seeds and actions it reproduces the dict env bit for bit (tests hold them
together), including the agents' rewards (isoelastic coin minus labour) and the planner's
``coin_eq_times_productivity``.

Randomness: each env keeps its own ``numpy.random.Generator`` and draws what the dict env
draws, in the same order: per step the build order (a permutation, only when some agent of
the env builds), the move order (a permutation), then one uniform per collection and one per
source cell in a single ``random`` call. The two permutations and that call run in a small
per-env Python loop (:func:`_draw_orders`, :func:`_draw_uniforms`); everything else is
vectorised over the envs. Resets loop over the envs they reset (:func:`reset_envs`).

Market hooks: :func:`step` is :func:`build_part` then :func:`gather_part` then the rewards;
the batched economy (:mod:`.array_economy`) runs its market on ``state.inventory`` and
``state.escrow`` ((E, A, 3): Coin, Stone, Wood) between the two parts and its tax after them;
coin endowments count inventory plus escrow, as in the dict env.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ai_economist.foundation.components.build import draw_build_skill
from ai_economist.foundation.components.move import draw_gather_bonus
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rewards as rewards
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rules as rules
from ai_economist.foundation.scenarios.simple_wood_and_stone.array_state import (  # noqa: F401
    COMPONENTS,  # (re-exported: the public names of the array world)
    REGROW_ORDER,
    GTBWorldParams,
    GTBWorldState,
)
from ai_economist.foundation.scenarios.simple_wood_and_stone.base import MAX_PLACEMENT_TRIES

N_ACTIONS = 6  # flat single-action mode: 0 NO-OP, 1 build, 2..5 left, right, up, down


def initial_state(params: GTBWorldParams, seeds: Any) -> GTBWorldState:
    """Every env reset from its own generator ``np.random.default_rng(seeds[e])`` (the dict
    env made with ``seed=seeds[e]`` then ``reset()``)."""
    seeds = [int(s) for s in np.atleast_1d(seeds)]
    e, a, (h, w) = len(seeds), params.n_agents, params.world_size
    state = GTBWorldState(
        rngs=[np.random.default_rng(s) for s in seeds],
        timestep=np.zeros(e, dtype=np.int64),
        resource_maps=np.zeros((e, 2, h, w)),
        house_owner=np.full((e, h, w), -1, dtype=np.int16),
        locs=np.full((e, a, 2), -1, dtype=np.int64),
        inventory=np.zeros((e, a, 3)),
        escrow=np.zeros((e, a, 3)),
        labor=np.zeros((e, a)),
        build_payment=np.zeros((e, a)),
        build_skill=np.zeros((e, a)),
        bonus_gather_prob=np.zeros((e, a)),
        coin_utility=np.zeros((e, a)),
        utility=np.zeros((e, a)),
        welfare=np.zeros(e),
        completions=np.zeros(e, dtype=np.int64),
        auto_integrator=np.zeros(e, dtype=np.int64),
    )
    reset_envs(state, params, np.ones(e, dtype=bool))
    return state


def reset_envs(state: GTBWorldState, params: GTBWorldParams, which: np.ndarray) -> None:
    """Reset the envs selected by the bool ``(E,)`` array ``which`` in place, drawing from
    each env's generator in the dict env's order: agent placement, Build's skills, Gather's
    bonus probabilities, then the fixed corners."""
    idx = np.flatnonzero(which)
    state.timestep[idx] = 0
    state.resource_maps[idx] = params.sources
    state.house_owner[idx] = -1
    state.inventory[idx] = 0.0
    state.inventory[idx, :, rules.COIN] = params.starting_agent_coin
    state.escrow[idx] = 0.0
    state.labor[idx] = 0.0
    for e in idx:
        _reset_env_draws(state, params, int(e))
    state.coin_utility[idx] = rewards.coin_utilities(state.inventory[idx, :, rules.COIN], params)
    state.utility[idx], state.welfare[idx] = rewards.optimization_metrics(state, params, idx)


def _reset_env_draws(state: GTBWorldState, params: GTBWorldParams, e: int) -> None:
    rng, (h, w) = state.rngs[e], params.world_size
    taken: set[tuple[int, int]] = set()
    for agent in rng.permutation(params.n_agents).tolist():
        for _ in range(MAX_PLACEMENT_TRIES + 2):
            r, c = int(rng.integers(h)), int(rng.integers(w))
            if not params.water[r, c] and (r, c) not in taken:
                state.locs[e, agent] = (r, c)
                taken.add((r, c))
                break
        else:
            raise TimeoutError(
                f"array world env {e}: no free accessible cell found for agent {agent} after "
                f"{MAX_PLACEMENT_TRIES} random tries; the map is too crowded"
            )
    pmsm = params.payment_max_skill_multiplier
    for agent in range(params.n_agents):
        skill, pay_rate = draw_build_skill(rng, params.build_skill_dist, pmsm)
        state.build_payment[e, agent] = float(pay_rate * params.payment)
        state.build_skill[e, agent] = skill
    for agent in range(params.n_agents):
        state.bonus_gather_prob[e, agent] = draw_gather_bonus(rng, params.gather_skill_dist)
    if params.fixed_four:
        for rank, agent in enumerate(rng.permutation(params.n_agents).tolist()):
            state.locs[e, agent] = params.ranked_locs[rank]
            state.build_payment[e, agent] = float(params.ranked_payments[rank])


# ----------------------------------------------------------------------- step
def _draw_orders(state: GTBWorldState, any_build: np.ndarray, n_agents: int) -> np.ndarray:
    """Per env: Build's random order (drawn and unused: see :func:`rules.build_step`) when
    an agent of the env builds, then Gather's move order, int64 (E, A)."""
    order = np.empty((state.num_envs, n_agents), dtype=np.int64)
    for e, rng in enumerate(state.rngs):
        if any_build[e]:
            rng.permutation(n_agents)
        order[e] = rng.permutation(n_agents)
    return order


# Draws of a component stepped after Gather (before the regrowth): the bool (E,) envs that
# draw, and the call that draws for env e from ``state.rngs[e]``.
Between = tuple[np.ndarray, Callable[[int], None]]


def _draw_uniforms(
    state: GTBWorldState, n_events: np.ndarray, n_cells: int, between: Between | None = None
) -> np.ndarray:
    """Per env, one ``random`` call: its collections' uniforms then the regrowth's,
    (E, max events + n_cells) with the regrowth draws moved to the columns after the
    largest event count (so one slice reads them in every env). In the envs of ``between``
    its call draws between the two (two ``random`` calls: the same numbers)."""
    most = int(n_events.max()) if n_events.size else 0
    draws = np.zeros((state.num_envs, most + n_cells))
    for e, rng in enumerate(state.rngs):
        k = int(n_events[e])
        if between is not None and between[0][e]:
            draws[e, :k] = rng.random(k)
            between[1](e)
            draws[e, most:] = rng.random(n_cells)
            continue
        u = rng.random(k + n_cells)
        draws[e, :k] = u[:k]
        draws[e, most:] = u[k:]
    return draws


def check_actions(state: GTBWorldState, params: GTBWorldParams, actions: Any, n: int) -> np.ndarray:
    """``actions`` as an array of ints in ``0..n-1`` of shape (E, A); raises ValueError
    (wrong shape or range) or RuntimeError (an env's episode is over)."""
    actions = np.asarray(actions)
    shape = (state.num_envs, params.n_agents)
    if actions.shape != shape or np.any((actions < 0) | (actions >= n)):
        raise ValueError(
            f"actions must be ints in 0..{n - 1} of shape {shape}, got shape "
            f"{actions.shape} with values {np.unique(actions).tolist()[:10]}"
        )
    if np.any(state.timestep >= params.episode_length):
        raise RuntimeError("an env's episode is over: reset it (reset_envs) before stepping")
    return actions


def build_part(state: GTBWorldState, params: GTBWorldParams, wants: np.ndarray) -> np.ndarray:
    """The step's start: the clock, then ``Build`` for the agents that ``wants`` (bool
    (E, A)); returns the bool (E, A) of the builds. Components listed between ``Build`` and
    ``Gather`` (a market) run after this and before :func:`gather_part`."""
    state.timestep += 1
    return rules.build_step(
        wants, state.inventory, state.labor, state.resource_maps, state.house_owner,
        params.landmarks, state.locs, state.build_payment, params.build_labor,
    )  # fmt: skip


def gather_part(
    state: GTBWorldState,
    params: GTBWorldParams,
    any_build: np.ndarray,
    moves: np.ndarray,
    between: Between | None = None,
) -> None:
    """``Gather`` (moves ``moves`` (E, A) in 0..4, then collections) and the scenario's
    regrowth, drawing Build's unused order first in the envs where ``any_build`` (E,) (an
    agent asked to build). A market that draws nothing may run between :func:`build_part`
    and this one; a component after Gather that draws (the Saez tax) passes ``between``."""
    order = _draw_orders(state, any_build, params.n_agents)
    for slot in range(params.n_agents):
        rules.move_agent_slot(
            order[:, slot], moves, state.locs, state.labor, state.house_owner,
            params.water, params.move_labor,
        )  # fmt: skip
    events = rules.gather_events(state.resource_maps, state.locs, order)
    cells = params.source_cells
    n_cells = sum(c.size for c in cells)
    draws = _draw_uniforms(state, events.sum(axis=(1, 2)), n_cells, between)
    rules.apply_gathers(
        events, draws, order, state.locs, state.inventory, state.labor,
        state.resource_maps, state.bonus_gather_prob, params.collect_labor,
    )  # fmt: skip
    rules.regrow_step(
        state.resource_maps, draws[:, draws.shape[1] - n_cells :], cells, params.source_values,
        REGROW_ORDER, params.regen_weight, params.max_health,
    )  # fmt: skip


def step(
    state: GTBWorldState, params: GTBWorldParams, actions: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Advance every env one step in place; return ``(agent_rewards (E, A),
    planner_reward (E,), done (E,))``.

    ``actions``: int (E, A), the agents' flat single-action indices (0 NO-OP, 1 build,
    2..5 move left, right, up, down). A build that is not possible and a move that is
    refused change nothing (Foundation 1.7.1's rule; the dict env raises on them instead
    unless ``check_action_masks=False``).
    """
    actions = check_actions(state, params, actions, N_ACTIONS)
    wants = actions == 1
    built = build_part(state, params, wants)
    gather_part(state, params, wants.any(axis=1), np.where(actions >= 2, actions - 1, 0))
    if built.any():
        rewards.refresh_coin_utility(state, params, built)
    return rewards.step_rewards(state, params)

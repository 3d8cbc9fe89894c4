"""The published gather-trade-build economy of N envs as arrays (numpy reference).

The batched twin of ``layout_from_file/simple_wood_and_stone`` with the components of the
published phase-1 and phase-2 configs (:mod:`.configs`), in the dict env's order:
``Build`` (:mod:`.array_world`), ``ContinuousDoubleAuction``
(:mod:`~ai_economist.foundation.components.cda_batched`), ``Gather`` with the scenario's
regrowth (:mod:`.array_world`) and ``PeriodicBracketTax`` (:mod:`.array_tax`), then the
rewards after the market and the tax moved coin (:mod:`.array_rewards`). Given the same
seeds and actions it equals N dict envs bit for bit: state, rewards, dones, masks and the
flat observations (:mod:`.array_economy_obs`).

Actions: the agents' flat single-action indices ``(E, A)`` as in the dict env (0 NO-OP,
1 build, then per commodity ``Buy`` then ``Sell`` at prices ``0..max_bid_ask``, then the
four moves); the planner's ``(E, B)`` bracket actions (phase 2: 0 keeps a bracket's rate,
k sets rate k - 1; None = all NO-OP).

Goods: the world keeps inventories and escrows in its order (Coin, Stone, Wood), the market
in its own (its commodities, then coin). No strided view maps one order onto the other, so
the market step works on a reordered copy of the two (E, A, 3) arrays and writes them back
(two gathers and two scatters a step).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ai_economist.foundation.components import cda_batched as market
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rewards as rewards
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rules as rules
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_tax as tax
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_world as world

COMPONENTS = ("Build", "ContinuousDoubleAuction", "Gather", "PeriodicBracketTax")
N_MOVES = 4


@dataclasses.dataclass(frozen=True)
class EconomyParams:
    """Constants of the batched economy: the world's, the market's and the tax's."""

    world: world.GTBWorldParams
    market: market.MarketParams
    tax: tax.TaxParams

    @classmethod
    def from_env(cls, env: Any) -> EconomyParams:
        """Parameters of a ``layout_from_file/simple_wood_and_stone`` dict env with the
        components :data:`COMPONENTS` in that order, single-action mobile agents and
        flattened observations and masks (the published configs).

        Raises:
            ValueError: other components or settings (the message names them).
        """
        wparams = world.GTBWorldParams.from_env(env, COMPONENTS)
        problems = []
        if env.world.agents[0].multi_action_mode:
            problems.append("multi_action_mode_agents=True (needs False)")
        if not (env._flatten_observations and env._flatten_masks):
            problems.append("flatten_observations/flatten_masks False (need True)")
        if env.collate_agent_step_and_reset_data:
            problems.append("collate_agent_step_and_reset_data=True (needs False)")
        if problems:
            raise ValueError("the gather-trade-build array economy needs " + "; ".join(problems))
        params = cls(
            world=wparams,
            market=market.MarketParams.from_component(env.get_component(COMPONENTS[1])),
            tax=tax.TaxParams.from_component(env.get_component(COMPONENTS[3])),
        )
        names = list(env.world.agents[0].action_names)
        if names != params.agent_action_names:
            raise ValueError(
                f"agent action sub-spaces {names} differ from the array economy's "
                f"{params.agent_action_names}"
            )
        return params

    @property
    def agent_action_names(self) -> list[str]:
        """The agents' action sub-spaces in the dict env's order."""
        trade = [
            f"ContinuousDoubleAuction.{side}_{c}"
            for c in self.market.commodities
            for side in ("Buy", "Sell")
        ]
        return ["Build", *trade, "Gather"]

    @property
    def move_start(self) -> int:
        """Flat index of the first move action (left)."""
        return 2 + 2 * self.market.n_commodities * self.market.n_prices

    @property
    def n_agent_actions(self) -> int:
        """Size of the agents' flat action space (NO-OP included)."""
        return self.move_start + N_MOVES

    @property
    def goods_order(self) -> list[int]:
        """World inventory indices of the market's goods (its commodities, then coin)."""
        return [rules.INVENTORY.index(c) for c in self.market.commodities] + [rules.COIN]


@dataclasses.dataclass
class EconomyState:
    """The world's, the market's and the tax's state of every env, and the episode counts
    the tax saw at the last masks (``rate_completions``: before this step's masks, which the
    annealed limit of a fixed schedule reads; ``mask_completions``: those masks')."""

    world: world.GTBWorldState
    market: market.MarketState
    tax: tax.TaxState
    rate_completions: np.ndarray
    mask_completions: np.ndarray

    @property
    def num_envs(self) -> int:
        """Number of envs."""
        return self.world.num_envs


def initial_state(params: EconomyParams, seeds: Any) -> EconomyState:
    """Every env reset from ``np.random.default_rng(seeds[e])`` (the dict env made with
    ``seed=seeds[e]``, then ``reset()``)."""
    wstate = world.initial_state(params.world, seeds)
    n = wstate.num_envs
    state = EconomyState(
        world=wstate,
        market=market.initial_state(params.market, n),
        tax=tax.initial_state(params.tax, n, params.world.n_agents, wstate.rngs),
        rate_completions=np.zeros(n, dtype=np.int64),
        mask_completions=np.zeros(n, dtype=np.int64),
    )
    _reset_components(state, params, np.ones(n, dtype=bool))
    return state


def reset_envs(state: EconomyState, params: EconomyParams, which: np.ndarray) -> None:
    """Reset the envs selected by the bool (E,) ``which`` in place (``env.reset()``)."""
    which = np.asarray(which, dtype=bool)
    world.reset_envs(state.world, params.world, which)
    _reset_components(state, params, which)


def _reset_components(state: EconomyState, params: EconomyParams, which: np.ndarray) -> None:
    market.reset_envs(state.market, params.market, which)
    state.rate_completions[which] = state.mask_completions[which]
    tax.reset_envs(state.tax, params.tax, which, coin_endowment(state), state.rate_completions)
    state.mask_completions[which] = state.world.completions[which]


def coin_endowment(state: EconomyState) -> np.ndarray:
    """(E, A): each agent's coin in inventory plus escrow (``total_endowment("Coin")``)."""
    w = state.world
    return w.inventory[..., rules.COIN] + w.escrow[..., rules.COIN]


def split_actions(
    params: EconomyParams, actions: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The flat agent actions (E, A) as ``(wants_build (E, A), bids (E, A, C), asks
    (E, A, C), moves (E, A))``: bids and asks 0 (none) or price + 1, moves 0 (stay) or 1..4."""
    p, n_c = params.market.n_prices, params.market.n_commodities
    bids = np.zeros((*actions.shape, n_c), dtype=np.int64)
    asks = np.zeros_like(bids)
    for c in range(n_c):
        start = 2 + 2 * c * p
        for out, lo in ((bids, start), (asks, start + p)):
            inside = (actions >= lo) & (actions < lo + p)
            out[..., c] = np.where(inside, actions - lo + 1, 0)
    moves = np.where(actions >= params.move_start, actions - params.move_start + 1, 0)
    return actions == 1, bids, asks, moves


def market_goods(params: EconomyParams, state: EconomyState) -> tuple[np.ndarray, np.ndarray]:
    """Copies of the inventories and escrows in the market's goods order (E, A, C + 1)."""
    order = params.goods_order
    return state.world.inventory[..., order], state.world.escrow[..., order]


def step(
    state: EconomyState, params: EconomyParams, actions: Any, planner_actions: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Advance every env one step in place; return ``(agent_rewards (E, A), planner_reward
    (E,), done (E,))``. Actions an agent's mask forbids are no-ops (1.7.1's rule; the dict
    env raises on them unless ``check_action_masks=False``).

    Raises:
        ValueError: actions of the wrong shape or range (named).
        RuntimeError: an env's episode is over (reset it first).
    """
    w, wp = state.world, params.world
    actions = world.check_actions(w, wp, actions, params.n_agent_actions)
    planner = tax.check_planner_actions(params.tax, planner_actions, state.num_envs)
    coin_before = coin_endowment(state)
    state.rate_completions[:] = state.mask_completions
    wants, bids, asks, moves = split_actions(params, actions)
    world.build_part(w, wp, wants)
    inventory, escrow = market_goods(params, state)
    market.market_step(params.market, state.market, bids, asks, inventory, escrow, w.labor)
    order = params.goods_order
    w.inventory[..., order] = inventory
    w.escrow[..., order] = escrow
    saez = tax.saez_between(params.tax, state.tax, state.rate_completions)
    world.gather_part(w, wp, wants.any(axis=1), moves, saez)
    tax.tax_step(
        params.tax, state.tax, planner, w.inventory[..., rules.COIN],
        w.escrow[..., rules.COIN], state.rate_completions,
    )  # fmt: skip
    changed = coin_endowment(state) != coin_before
    if changed.any():
        rewards.refresh_coin_utility(w, wp, changed)
    state.mask_completions[:] = w.completions
    return rewards.step_rewards(w, wp)

"""The numpy reference of the gather-trade-build GPU world: the truth its kernels mirror.

It runs the array model's rules (:mod:`..array_rules`, :mod:`..array_rewards`,
:mod:`..array_obs`) on the declared device arrays (a :class:`~..array_world.GTBWorldState`
whose arrays are views of them) and replaces only the array model's random generators by the
counter-based draws of :mod:`.rng`, which a kernel thread can compute on its own:

* :func:`reset_envs`   the layout from the map file, then per env: placement (or the fixed
  four corners by a random ranking), Build's and Gather's skills, coin, reward baselines;
* :func:`world_step`   ``Build``, ``Gather`` (moves in a random order, collections), the
  scenario's regrowth, the rewards (isoelastic coin minus labour; the planner's
  ``coin_eq_times_productivity``), the episode records;
* :func:`observe`      the agents' ``flat`` + ``world-map`` + ``world-idx_map`` vectors, the
  planner's ``flat`` + ``p<i>`` vector, the masks.

With a market (``market``: its ``MarketParams``) the step runs it between ``Build`` and
``Gather`` as the array economy does (:mod:`.market_reference`: the orders of the actions
``2 .. 2 + 2 C P - 1``, decay, place, match, expire; the moves follow at ``2 + 2 C P``), the
coin utility is refreshed wherever the coin endowment changed (``array_economy.step``), and
the market's blocks sit in the vectors where the dict env's sorted keys put them.

Given the same draws the world equals the array model's (``tests``: the array model stepped
with a generator that replays :class:`StepDraws`); the draws themselves follow the array
model's distributions (the same in distribution, not in value).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from ai_economist.foundation.components.cda_batched import MarketParams
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_obs
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rewards as rewards
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rules as rules
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_world as aw
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import market_reference as mr
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import rng
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import state as gs

State = dict[str, np.ndarray]
STREAM = rng.STREAMS


@dataclasses.dataclass(frozen=True)
class StepDraws:
    """What one step drew, in the array model's order: the move order (E, A) (slot ->
    agent), the collection uniforms by slot (E, A, 2), which (slot, resource) collected
    (E, A, 2) and the regrowth uniforms (E, n_regrow)."""

    order: np.ndarray
    gather_u: np.ndarray
    events: np.ndarray
    regrow_u: np.ndarray


def world_view(state: State, params: aw.GTBWorldParams) -> aw.GTBWorldState:
    """The array model's state object over the declared arrays (views, no copies)."""
    names = ("resource_maps", "house_owner", "locs", "inventory", "escrow", "labor",
             "build_payment", "build_skill", "bonus_gather_prob", "coin_utility", "utility",
             "welfare", "completions", "auto_integrator")  # fmt: skip
    return aw.GTBWorldState(rngs=[], timestep=state["_timestep_"], **{n: state[n] for n in names})


def zero_state(params: aw.GTBWorldParams, num_envs: int, seed: int,
               market: MarketParams | None = None) -> State:  # fmt: skip
    """Zeroed per-env arrays of ``num_envs`` envs (``env_seed`` = ``seed + e``) and the
    constants (with ``market``: the market's too)."""
    spec = {f.name: f for f in gs.state_fields(market is not None)}
    dims = gs.state_dims(params, market)
    out: State = {}
    for name, f in spec.items():
        if f.per_env:
            shape = tuple(d if isinstance(d, int) else dims[d] for d in f.shape)
            out[name] = np.zeros((num_envs, *shape), dtype=f.dtype)
    out["env_seed"][:] = (int(seed) + np.arange(num_envs)).astype(np.int32)
    out.update(gs.constant_values(params))
    if market is not None:
        out.update(market_constants(market))
    return out


def market_constants(market: MarketParams) -> dict[str, np.ndarray]:
    """The market's constant arrays in the world: actions from 2, blocks at
    :func:`.state.market_obs_offsets`."""
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import market_state as ms

    off_a, off_p = gs.market_obs_offsets()
    return ms.constant_values(market, action_offset=2, obs_offset_a=off_a, obs_offset_p=off_p)


def initial_state(params: aw.GTBWorldParams, num_envs: int, seed: int, static=None,
                  market: MarketParams | None = None) -> State:  # fmt: skip
    """Every env reset (episode 0) and observed."""
    state = zero_state(params, num_envs, seed, market)
    reset_envs(state, params, np.ones(num_envs, dtype=bool), static, market)
    return state


# ----------------------------------------------------------------------- reset
def place_agents(seed: np.ndarray, episode: np.ndarray, params: aw.GTBWorldParams) -> np.ndarray:
    """int32 (n, A, 2): each agent in index order takes the first of its
    :data:`rng.PLACEMENT_TRIES` random cells that is not water and not taken; after as many
    failures, the first such cell in row-major order (1.7.1 raised instead)."""
    (h, w), a, tries = params.world_size, params.n_agents, rng.PLACEMENT_TRIES
    index = 2 * (np.arange(a)[:, None] * tries + np.arange(tries))  # (A, T)
    key = (seed[:, None, None], episode[:, None, None], 0, STREAM["place"])
    rows = rng.below(rng.draw_bits(*key, index), h)
    cols = rng.below(rng.draw_bits(*key, index + 1), w)
    locs = np.full((seed.size, a, 2), -1, dtype=np.int64)
    env = np.arange(seed.size)
    for i in range(a):
        r, c = rows[:, i], cols[:, i]
        ok = ~params.water[r, c]
        for j in range(i):
            ok &= (r != locs[:, j, None, 0]) | (c != locs[:, j, None, 1])
        first = np.argmax(ok, axis=1)
        locs[:, i] = np.stack([r[env, first], c[env, first]], axis=1)
        for e in np.flatnonzero(~ok.any(axis=1)):
            locs[e, i] = first_free_cell(params.water, locs[e, :i])
    return locs.astype(np.int32)


def first_free_cell(water: np.ndarray, taken: np.ndarray) -> tuple[int, int]:
    """The first cell in row-major order that is not water and not in ``taken`` (K, 2)."""
    free = ~water.copy()
    free[taken[:, 0], taken[:, 1]] = False
    cell = int(np.argmax(free.ravel()))
    return divmod(cell, water.shape[1])


def skill_draws(seed, episode, stream: str, a: int, dist: str, pareto_shape: float,
                mean: float, sigma: float) -> np.ndarray:  # fmt: skip
    """float64 (n, A) skills of ``dist`` (``"none"``: NaN, the caller decides)."""
    key = (seed[:, None], episode[:, None], 0, STREAM[stream])
    u1 = rng.uniform(*key, 2 * np.arange(a))
    u2 = rng.uniform(*key, 2 * np.arange(a) + 1)
    if dist == "pareto":
        return rng.pareto(u1, pareto_shape)
    if dist == "lognormal":
        return rng.lognormal(u1, u2, mean, sigma)
    return np.full(u1.shape, np.nan)


def draw_skills(seed, episode, params: aw.GTBWorldParams) -> tuple[np.ndarray, ...]:
    """``(build_payment, build_skill, bonus_gather_prob)`` float64 (n, A), the array model's
    distributions: build skill Pareto(4) or LogN(-1, 0.5), pay rate
    ``min(pmsm, (pmsm - 1) skill + 1)``; bonus ``min(2, Pareto(3) or LogN(-2.022, 0.938)) / 2``."""
    a, pmsm = params.n_agents, params.payment_max_skill_multiplier
    skill = skill_draws(seed, episode, "build_skill", a, params.build_skill_dist, 4.0, -1.0, 0.5)
    if params.build_skill_dist == "none":
        skill = np.ones_like(skill)
        rate = np.ones_like(skill)
    else:
        rate = np.minimum(pmsm, (pmsm - 1) * skill + 1)
    bonus = skill_draws(seed, episode, "gather_skill", a, params.gather_skill_dist, 3.0,
                        -2.022, 0.938)  # fmt: skip
    bonus = (
        np.zeros_like(bonus) if params.gather_skill_dist == "none" else np.minimum(2.0, bonus) / 2
    )
    return rate * params.payment, skill, bonus


def fixed_four_ranks(seed, episode, n_agents: int) -> np.ndarray:
    """int (n, A): each agent's rank (0 worst) in the random ranking of the fixed four."""
    keys = rng.draw_bits(seed[:, None], episode[:, None], 0, STREAM["rank"], np.arange(n_agents))
    order = rng.rank_order(keys)  # rank -> agent
    return np.argsort(order, axis=1)


def reset_envs(state: State, params: aw.GTBWorldParams, which: np.ndarray, static=None,
               market: MarketParams | None = None) -> None:  # fmt: skip
    """Reset the envs selected by the bool (E,) ``which`` in place, drawing from each env's
    ``(env_seed, completions)`` (the array model's :func:`~.array_world.reset_envs` with the
    draws of :mod:`.rng`; the market emptied), then observe them."""
    idx = np.flatnonzero(which)
    if idx.size == 0:
        return
    reset_world(state, params, idx)
    if market is not None:
        mr.reset_market(state, market, which)
    observe(state, params, static, idx, market)


def reset_world(state: State, params: aw.GTBWorldParams, idx: np.ndarray) -> None:
    """The world's part of :func:`reset_envs` of the envs ``idx`` (int (n,)), without the
    market and the observations: layout, placement, skills, coin, the reward baselines."""
    seed, episode = state["env_seed"][idx], state["completions"][idx]
    state["resource_maps"][idx] = params.sources
    state["house_owner"][idx] = -1
    for name in ("inventory", "escrow", "labor"):
        state[name][idx] = 0.0
    state["inventory"][idx, :, rules.COIN] = params.starting_agent_coin
    payment, skill, bonus = draw_skills(seed, episode, params)
    if params.fixed_four:
        rank = fixed_four_ranks(seed, episode, params.n_agents)
        state["locs"][idx] = params.ranked_locs[rank]
        payment = params.ranked_payments[rank]
    else:
        state["locs"][idx] = place_agents(seed, episode, params)
    state["build_payment"][idx], state["build_skill"][idx] = payment, skill
    state["bonus_gather_prob"][idx] = bonus
    state["move_order"][idx] = np.arange(params.n_agents)
    view = world_view(state, params)
    coin = state["inventory"][idx, :, rules.COIN] + state["escrow"][idx, :, rules.COIN]
    state["coin_utility"][idx] = rewards.coin_utilities(coin, params)
    state["utility"][idx], state["welfare"][idx] = rewards.optimization_metrics(view, params, idx)


# ----------------------------------------------------------------------- step
def event_draws(events: np.ndarray, by_slot: np.ndarray) -> np.ndarray:
    """(E, max events): each env's collection uniforms in the order of its events
    (slot-major, then resource), as the array model's single ``random`` call lays them out."""
    n = events.shape[0]
    flat_ev, flat_u = events.reshape(n, -1), by_slot.reshape(n, -1)
    out = np.zeros((n, max(int(flat_ev.sum(axis=1).max(initial=0)), 1)))
    pos = np.cumsum(flat_ev, axis=1) - 1
    e, f = np.nonzero(flat_ev)
    out[e, pos[e, f]] = flat_u[e, f]
    return out


def step_keys(state: State) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(seed, episode, step)`` (E, 1) of this step's draws (after the clock moved)."""
    return state["env_seed"][:, None], state["completions"][:, None], state["_timestep_"][:, None]


def move_order(state: State, n_agents: int) -> np.ndarray:
    """(E, A) slot -> agent: the agents sorted by their ``move_order`` keys."""
    return rng.rank_order(rng.draw_bits(*step_keys(state), STREAM["move_order"],
                                        np.arange(n_agents)))  # fmt: skip


def gather_and_regrow(state: State, params: aw.GTBWorldParams, moves: np.ndarray) -> StepDraws:
    """``Gather`` (moves in a random order, collections) and the regrowth, in place."""
    view, a = world_view(state, params), params.n_agents
    order = move_order(state, a)
    state["move_order"][:] = order
    for slot in range(a):
        rules.move_agent_slot(order[:, slot], moves, view.locs, view.labor, view.house_owner,
                              params.water, params.move_labor)  # fmt: skip
    events = rules.gather_events(view.resource_maps, view.locs, order)
    index = 2 * np.arange(a)[:, None] + np.arange(len(rules.COLLECTIBLE))
    by_agent = rng.uniform(*(k[..., None] for k in step_keys(state)), STREAM["gather"], index)
    by_slot = np.take_along_axis(by_agent, order[..., None], axis=1)
    rules.apply_gathers(events, event_draws(events, by_slot), order, view.locs, view.inventory,
                        view.labor, view.resource_maps, view.bonus_gather_prob,
                        params.collect_labor)  # fmt: skip
    regrow_u = rng.uniform(*step_keys(state), STREAM["regrow"], state["regrow_cells"])
    rules.regrow_step(view.resource_maps, regrow_u, params.source_cells, params.source_values,
                      aw.REGROW_ORDER, params.regen_weight, params.max_health)  # fmt: skip
    return StepDraws(order, by_slot, events, regrow_u)


def coin_endowment(state: State) -> np.ndarray:
    """(E, A) coin in inventory plus escrow."""
    return state["inventory"][..., rules.COIN] + state["escrow"][..., rules.COIN]


def world_step(state: State, params: aw.GTBWorldParams, static=None,
               market: MarketParams | None = None) -> StepDraws:  # fmt: skip
    """One step of every env in place (the actions in ``sampled_actions_a``: 0 NO-OP,
    1 build, the market's orders (with a market), then left, right, up, down from
    :func:`.state.move_start`; refused actions change nothing); returns the draws."""
    draws = step_state(state, params, market)
    observe(state, params, static, market=market)
    return draws


def step_state(state: State, params: aw.GTBWorldParams, market: MarketParams | None = None,
               after_gather: Callable[[State], None] | None = None) -> StepDraws:  # fmt: skip
    """:func:`world_step` without the observations; ``after_gather(state)`` runs after
    Gather's collections and the regrowth, before the coin utility refresh (the tax's place
    in ``array_economy.step``)."""
    view = world_view(state, params)
    actions = state["sampled_actions_a"]
    coin_before = coin_endowment(state)
    aw.build_part(view, params, actions == 1)  # the clock, then Build
    if market is not None:
        state["market_bids"][:], state["market_asks"][:] = mr.split_actions(market, actions, 2)
        mr.market_step(state, market)
    start = gs.move_start(market)
    draws = gather_and_regrow(state, params, np.where(actions >= start, actions - start + 1, 0))
    if after_gather is not None:
        after_gather(state)
    changed = coin_endowment(state) != coin_before  # array_economy.step's refresh
    if changed.any():
        rewards.refresh_coin_utility(view, params, changed)
    agent_rew, planner_rew, done = rewards.step_rewards(view, params)
    state["utility"][:], state["welfare"][:] = view.utility, view.welfare
    state["rewards_a"][:] = agent_rew
    state["rewards_p"][:] = planner_rew[:, None]  # every planner row (bracket agent)
    state["_done_"][done] = 1
    coin = state["inventory"][..., rules.COIN] + state["escrow"][..., rules.COIN]
    state["episode_coin"][done] = coin[done]
    state["episode_labor"][done] = state["labor"][done]
    state["episode_utility"][done] = state["utility"][done]
    return draws


# ----------------------------------------------------------------------- observations
def agent_vectors(view: aw.GTBWorldState, params: aw.GTBWorldParams, static=None) -> np.ndarray:
    """float32 (E, A, obs_dim_a): ``flat`` (sorted keys), ``world-map``, ``world-idx_map``."""
    flat = array_obs.agent_flat_observations(view, params)
    maps, idx_maps = array_obs.egocentric_maps(view, params, static)
    n, a = flat.shape[:2]
    return np.concatenate([flat, maps.reshape(n, a, -1), idx_maps.reshape(n, a, -1)], axis=-1)


def planner_vector(view: aw.GTBWorldState, params: aw.GTBWorldParams) -> np.ndarray:
    """float32 (E, obs_dim_p): ``flat`` (time, its empty inventory), then each ``p<i>``."""
    flat, agentwise = array_obs.planner_observations(view, params)
    return np.concatenate([flat, agentwise.reshape(flat.shape[0], -1)], axis=-1)


def observe(state: State, params: aw.GTBWorldParams, static=None, idx: Any = slice(None),
            market: MarketParams | None = None) -> None:  # fmt: skip
    """Write the observations and masks of the envs ``idx`` (all by default); with a
    market, the world's parts around its blocks, then the blocks."""
    view = world_view(state, params)
    mk_a, mk_p, _ = gs.market_sizes(market)
    off_a, off_p = gs.market_obs_offsets()
    agents, planner = agent_vectors(view, params, static)[idx], planner_vector(view, params)[idx]
    state["observations_a"][idx, :, :off_a] = agents[..., :off_a]
    state["observations_a"][idx, :, off_a + mk_a :] = agents[..., off_a:]
    state["observations_p"][idx, 0, :off_p] = planner[..., :off_p]
    state["observations_p"][idx, 0, off_p + mk_p :] = planner[..., off_p:]
    masks, start = array_obs.action_masks(view, params)[idx], gs.move_start(market)
    state["action_mask_a"][idx, :, :2] = masks[..., :2]
    state["action_mask_a"][idx, :, start:] = masks[..., 2:]
    state["action_mask_p"][idx] = 1.0
    if market is not None:
        mr.observe_market(state, market, idx)

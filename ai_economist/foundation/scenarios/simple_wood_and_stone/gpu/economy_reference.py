"""The numpy reference of the full gather-trade-build economy on the GPU: the truth its
kernels mirror (``array_economy.step`` on the declared arrays, with the world's
counter-based draws, :mod:`.rng`, and the Saez model's, ``gpu_saez``).

* :func:`reset_envs`    the world's reset (:func:`.reference.reset_world`), the market
  emptied, the tax's new cycle (its rates' annealed limit at ``tax_rate_completions``, the
  episode count at the last step's start, as ``array_economy``), observed;
* :func:`economy_step`  the world's step with the market (:func:`.reference.step_state`)
  and, after Gather's collections and the regrowth, the Saez rates of a first day and the
  tax (:func:`.tax_reference.tax_step`: the planner's picks, a tax day's taxes and lump
  sums), then the coin-utility refresh, the rewards, the records; observed;
* :func:`observe`       the world's parts at the economy's positions
  (:mod:`.economy_state`), the market's and the tax's blocks, the masks (the planner's the
  tax's, annealed), the bracket one-hot.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.components.cda_batched import MarketParams
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_obs
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_world as aw
from ai_economist.foundation.scenarios.simple_wood_and_stone.array_tax import TaxParams
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import economy_state as es
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import market_reference as mr
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import reference
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import tax_reference as tr

State = dict[str, np.ndarray]
SAEZ_START_ELASTICITY = 0.5  # the Saez estimate before any sample (the component's)


def zero_state(params: aw.GTBWorldParams, market: MarketParams, tax: TaxParams, num_envs: int,
               seed: int) -> State:  # fmt: skip
    """Zeroed per-env arrays (``env_seed`` = ``seed + e``, the Saez estimate at its start
    value) and the constants (the Saez draws keyed by ``seed``)."""
    dims = es.state_dims(params, market, tax)
    out: State = {}
    for f in es.state_fields():
        if f.per_env:
            shape = tuple(d if isinstance(d, int) else dims[d] for d in f.shape)
            out[f.name] = np.zeros((num_envs, *shape), dtype=f.dtype)
    out["env_seed"][:] = (int(seed) + np.arange(num_envs)).astype(np.int32)
    out.update(es.constant_values(params, market, tax, seed))
    if "saez_elas" in out:
        out["saez_elas"][:] = SAEZ_START_ELASTICITY
    return out


def initial_state(params: aw.GTBWorldParams, market: MarketParams, tax: TaxParams,
                  num_envs: int, seed: int, static=None) -> State:  # fmt: skip
    """Every env reset (episode 0) and observed."""
    state = zero_state(params, market, tax, num_envs, seed)
    state["_timestep_"] = np.zeros(num_envs, np.int32)
    reset_envs(state, params, market, tax, np.ones(num_envs, dtype=bool), static)
    return state


def reset_envs(state: State, params: aw.GTBWorldParams, market: MarketParams, tax: TaxParams,
               which: np.ndarray, static=None) -> None:  # fmt: skip
    """Reset the envs ``which`` (bool (E,)) in place (``array_economy.reset_envs`` with the
    GPU's draws), then observe them."""
    idx = np.flatnonzero(which)
    if idx.size == 0:
        return
    reference.reset_world(state, params, idx)
    mr.reset_market(state, market, which)
    tr.reset_tax(state, tax, which)  # the rates' limit: the last step's episode count
    observe(state, params, market, tax, static, idx, state["completions"])


def economy_step(state: State, params: aw.GTBWorldParams, market: MarketParams,
                 tax: TaxParams, static=None) -> reference.StepDraws:  # fmt: skip
    """One step of every env in place (agents' actions in ``sampled_actions_a`` as the world
    with the market's; the planner's bracket picks in ``sampled_actions_p`` when it sets the
    rates: 0 keeps a rate, ``k`` picks ``disc_rates[k - 1]``); returns the world's draws."""
    state["tax_rate_completions"][:] = state["completions"]  # the episodes at the step's start

    def taxes(s: State) -> None:
        tr.saez_first_day(s, tax, int(s["rng_seed"]))
        picks = s["sampled_actions_p"].astype(np.int64) if tax.planner_sets_rates else None
        tr.tax_step(s, tax, picks)

    draws = reference.step_state(state, params, market, after_gather=taxes)
    observe(state, params, market, tax, static, slice(None), state["tax_rate_completions"])
    return draws


def observe(state: State, params: aw.GTBWorldParams, market: MarketParams, tax: TaxParams,
            static=None, idx: Any = slice(None), mask_completions: Any = None) -> None:  # fmt: skip
    """Write the observations and masks of the envs ``idx`` (all by default); the planner's
    masks anneal with ``mask_completions`` (E,) (``array_economy``'s: after a step the
    episode count at its start, after a reset the current one; default ``completions``)."""
    a = params.n_agents
    off = es.offsets(market, tax, a)
    view = reference.world_view(state, params)
    agents = reference.agent_vectors(view, params, static)[idx]
    planner = reference.planner_vector(view, params)[idx]
    n_flat = len(es.gs.AGENT_FLAT_KEYS)
    obs_a = state["observations_a"][idx]
    obs_a[..., es.agent_flat_positions(market, tax, a)] = agents[..., :n_flat]
    obs_a[..., off["flat_a"] :] = agents[..., n_flat:]
    state["observations_a"][idx] = obs_a
    obs_p = state["observations_p"][idx]
    obs_p[:, 0, es.planner_world_positions(market, tax, a)] = planner
    state["observations_p"][idx] = obs_p
    masks, start = array_obs.action_masks(view, params)[idx], es.gs.move_start(market)
    state["action_mask_a"][idx, :, :2] = masks[..., :2]
    state["action_mask_a"][idx, :, start:] = masks[..., 2:]
    mr.observe_market(state, market, idx)
    tr.observe_tax(state, tax, idx)
    shared = off["one_hot"]  # every planner row reads the same vector before its one-hot
    state["observations_p"][idx, 1:, :shared] = state["observations_p"][idx, :1, :shared]
    n_hot = es.one_hot_size(tax)
    if n_hot:
        state["observations_p"][idx, :, shared:] = np.eye(n_hot, dtype=np.float32)
    if mask_completions is None:
        mask_completions = state["completions"]
    state["action_mask_p"][idx] = tr.planner_masks(state, tax, mask_completions)[idx]

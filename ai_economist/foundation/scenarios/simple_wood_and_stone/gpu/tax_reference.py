"""The numpy truth of the GPU tax: :mod:`..array_tax` on the declared arrays (:mod:`.tax_state`).

Each function reads and writes the state dict of the host env (``tax_*``, ``last_*``, the
Saez fields; coin in ``inventory`` / ``escrow`` ``(E, A, 3)`` at :data:`~..array_rules.COIN`)
by calling ``array_tax`` on a :class:`~..array_tax.TaxState` built from those arrays. The
Saez model's buffer, estimate and draws are the one-step economy's (:mod:`gpu_saez`: a ring
of the last 500 samples; the component's formula; uniform draws hashed from ``(rng_seed, env,
draw counter)``), its rate limit the annealed one of the env (as ``array_tax.saez_between``).

* :func:`reset_tax`       ``array_tax.reset_envs`` of the envs whose ``_timestep_`` is 0
* :func:`saez_first_day`  the Saez model's rates on a period's first step
* :func:`tax_step`        ``array_tax.tax_step`` (+ the Saez samples of a tax day)
* :func:`observe_tax`     ``array_tax.tax_observations`` written at the offsets of the
  agents' and the planner's vectors; :func:`planner_masks` ``array_tax.planner_masks``
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ai_economist.foundation.scenarios.one_step_economy import gpu_saez
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rules as rules
from ai_economist.foundation.scenarios.simple_wood_and_stone import array_tax
from ai_economist.foundation.scenarios.simple_wood_and_stone.array_tax import TaxParams
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import tax_state as ts

_PAIRS = (("cycle_pos", "tax_cycle_pos"), ("rate_index", "tax_rate_index"),
          ("rates_obs", "tax_rates_obs"), ("last_coin", "last_coin"),
          ("last_income", "last_income"), ("last_marginal_rate", "last_marginal_rate"),
          ("total_collected", "total_collected"), ("last_lump_sum", "last_lump_sum"),
          ("saez_rates", "saez_rates"))  # fmt: skip


def tax_view(state: dict[str, np.ndarray]) -> array_tax.TaxState:
    """An ``array_tax.TaxState`` of copies of the declared arrays (its dtypes: int64 positions
    and indices); the Saez trackers stay out (the buffer is :mod:`gpu_saez`'s)."""
    out = {k: state[name].astype(np.int64 if k in ("cycle_pos", "rate_index") else np.float64)
           for k, name in _PAIRS}  # fmt: skip
    return array_tax.TaxState(**out, saez=None)


def write_back(state: dict[str, np.ndarray], view: array_tax.TaxState) -> None:
    """The view's arrays into the declared ones."""
    for k, name in _PAIRS:
        state[name][:] = getattr(view, k)


def coin_endowment(state: dict[str, np.ndarray]) -> np.ndarray:
    """(E, A): coin in inventory plus escrow."""
    return state["inventory"][..., rules.COIN] + state["escrow"][..., rules.COIN]


def reset_tax(state: dict[str, np.ndarray], params: TaxParams, which: np.ndarray) -> None:
    """``array_tax.reset_envs`` of the envs ``which`` (their rate completions already set):
    a new cycle, the coin endowments as ``last_coin``, the Saez rates from their running
    average."""
    view = tax_view(state)
    if params.tax_model == "saez":
        view.saez_rates[which] = state["saez_running_avg"][which]
    array_tax.reset_envs(view, params, which, coin_endowment(state),
                         state["tax_rate_completions"])  # fmt: skip
    write_back(state, view)


def saez_first_day(state: dict[str, np.ndarray], params: TaxParams, seed: int) -> None:
    """The Saez model's rates of the envs on a period's first step (``gpu_saez.saez_first_day``
    with the env's annealed limit as the highest rate, as ``array_tax.saez_between``)."""
    sp = ts.saez_params(params)
    if sp is None:
        return
    limit = array_tax.rate_limit(params, state["tax_rate_completions"])
    first = state["tax_cycle_pos"] == 1
    for e in np.flatnonzero(first):
        only = np.arange(first.size) == e
        gpu_saez.saez_first_day(state, dataclasses.replace(sp, rate_max=float(limit[e])), only,
                                seed)  # fmt: skip


def tax_step(state: dict[str, np.ndarray], params: TaxParams, planner_actions: Any) -> np.ndarray:
    """``array_tax.tax_step`` on the declared arrays (inventory coin in place) and the Saez
    samples of a tax day; returns the bool (E,) of the tax days."""
    view = tax_view(state)
    coin = state["inventory"][..., rules.COIN].copy()
    actions = array_tax.check_planner_actions(params, planner_actions, coin.shape[0])
    day = array_tax.tax_step(params, view, actions, coin, state["escrow"][..., rules.COIN],
                             state["tax_rate_completions"])  # fmt: skip
    state["inventory"][..., rules.COIN] = coin
    write_back(state, view)
    if params.tax_model == "saez":
        gpu_saez.saez_record(state, day)
    return day


def tax_fields(state: dict[str, np.ndarray], params: TaxParams) -> tuple[dict, dict]:
    """``array_tax.tax_observations`` of every env (agents' fields, planner's per-agent)."""
    return array_tax.tax_observations(params, tax_view(state), coin_endowment(state),
                                      state["tax_rate_completions"])  # fmt: skip


def observe_tax(state: dict[str, np.ndarray], params: TaxParams, idx: Any) -> None:
    """The tax's blocks of the envs ``idx``: each agent's (:data:`~.tax_state.AGENT_FIELDS` at
    ``obs_offset_a`` of ``observations_a``), the planner's flat fields (at ``obs_offset_p`` of
    every planner row of ``observations_p``) and per agent ``p<i>`` fields (at
    ``obs_offset_pa + i * obs_stride_pa``)."""
    ints = dict(zip(ts.INT_PARAMS, state["tax_iparams"].tolist()))
    common, per_agent = tax_fields(state, params)
    e, a = state["last_coin"].shape
    agent = {k: v[:, None].repeat(a, 1) if k != "marginal_rate" else v for k, v in common.items()}
    agent = {k: (v if v.ndim == 3 else v[..., None]) for k, v in agent.items()}
    block_a = np.concatenate([agent[k] for k in ts.AGENT_FIELDS], axis=-1).astype(np.float32)
    off = ints["obs_offset_a"]
    state["observations_a"][idx, :, off : off + block_a.shape[-1]] = block_a[idx]
    flat = np.concatenate([common[k].reshape(e, -1) for k in ts.PLANNER_FIELDS], axis=-1)
    off = ints["obs_offset_p"]
    state["observations_p"][idx, :, off : off + flat.shape[-1]] = flat.astype(np.float32)[idx, None]
    for i in range(a):
        off = ints["obs_offset_pa"] + i * ints["obs_stride_pa"]
        vals = np.stack([per_agent[k][:, i] for k in ts.PLANNER_AGENT_FIELDS], axis=-1)
        state["observations_p"][idx, :, off : off + 3] = vals.astype(np.float32)[idx, None]


def planner_masks(state: dict[str, np.ndarray], params: TaxParams, completions: Any) -> np.ndarray:
    """float32 (E, n_planner_agents, R + 1): ``array_tax.planner_masks`` per bracket agent."""
    masks = array_tax.planner_masks(params, tax_view(state), np.asarray(completions))
    return masks.reshape(masks.shape[0], ts.n_planner_agents(params), -1)

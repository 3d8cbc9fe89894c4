"""Action masks and observation pieces of the gather-trade-build array world (numpy).

Each function reads a :class:`~.array_world.GTBWorldState` and returns arrays with the env on
the first axis and the agent on the second, equal to what the dict env (components ``Build``
then ``Gather``) puts under the same keys:

* :func:`action_masks`      the flat mask ``[NO-OP, build, left, right, up, down]``
* :func:`scalar_observations` ``world-loc-row/col``, ``world-inventory-*``, ``Build-*``,
  ``Gather-bonus_gather_prob`` and ``time``
* :func:`map_layers` / :func:`egocentric_maps`  ``world-map`` and ``world-idx_map``
  (:func:`dynamics.padded_views` and :func:`dynamics.egocentric_views` for a batch)
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ai_economist.foundation.scenarios.simple_wood_and_stone import array_rules as rules
from ai_economist.foundation.scenarios.simple_wood_and_stone.array_world import (
    N_ACTIONS,
    GTBWorldParams,
    GTBWorldState,
)

# The dict env's map layers (``Maps.keys()``): Stone, Wood, House, Water, StoneSourceBlock,
# WoodSourceBlock; ``world-map`` adds a channel that is 1 on the map.
MAP_LAYERS = ("Stone", "Wood", "House", "Water", "StoneSourceBlock", "WoodSourceBlock")


def action_masks(state: GTBWorldState, params: GTBWorldParams) -> np.ndarray:
    """float32 (E, A, 6): 1 where the action is allowed (NO-OP always)."""
    masks = np.ones((state.num_envs, params.n_agents, N_ACTIONS), dtype=np.float32)
    masks[..., 1] = rules.build_masks(
        state.inventory, state.resource_maps, state.house_owner, params.landmarks, state.locs
    )
    masks[..., 2:] = rules.move_masks(state.locs, state.house_owner, params.water)
    return masks


def scalar_observations(state: GTBWorldState, params: GTBWorldParams) -> dict[str, np.ndarray]:
    """The agents' scalar observations keyed as in the dict env (each (E, A); ``time`` (E,))."""
    h, w = params.world_size
    scale = params.payment if params.payment > 0 else 1
    obs = {
        "world-loc-row": state.locs[..., 0] / h,
        "world-loc-col": state.locs[..., 1] / w,
    }
    for k, name in enumerate(rules.INVENTORY):
        obs[f"world-inventory-{name}"] = state.inventory[..., k] * params.inv_scale
    obs["Build-build_payment"] = state.build_payment / scale
    obs["Build-build_skill"] = state.build_skill.copy()
    obs["Gather-bonus_gather_prob"] = state.bonus_gather_prob.copy()
    obs["time"] = state.timestep / params.time_scale
    return obs


def map_layers(state: GTBWorldState, params: GTBWorldParams) -> np.ndarray:
    """float32 (E, 6, H, W): the maps in :data:`MAP_LAYERS` order (``Maps.state``)."""
    n = state.num_envs
    layers = np.empty((n, len(MAP_LAYERS), *params.world_size), dtype=np.float32)
    layers[:, :2] = state.resource_maps
    layers[:, 2] = state.house_owner >= 0
    layers[:, 3] = params.water
    layers[:, 4] = params.sources[0] > 0
    layers[:, 5] = params.sources[1] > 0
    return layers


def egocentric_maps(state: GTBWorldState, params: GTBWorldParams) -> tuple[np.ndarray, np.ndarray]:
    """``world-map`` float32 (E, A, 7, 2r+1, 2r+1) and ``world-idx_map`` int16
    (E, A, 2, 2r+1, 2r+1) of every agent (window half-width r = the observation range).

    Index channels: the house owners and the agents' locations, coded 0 nobody and k + 2
    agent k, with the observing agent's own code replaced by 1.
    """
    r = params.observation_range
    side = 2 * r + 1
    n, a = state.num_envs, params.n_agents
    h, w = params.world_size
    padded = np.zeros((n, len(MAP_LAYERS) + 1, h + 2 * r, w + 2 * r), dtype=np.float32)
    padded[:, :-1, r : r + h, r : r + w] = map_layers(state, params)
    padded[:, -1, r : r + h, r : r + w] = 1
    idx = np.zeros((n, 2, h + 2 * r, w + 2 * r), dtype=np.int16)
    owner = state.house_owner
    idx[:, 0, r : r + h, r : r + w] = np.where(owner >= 0, owner + 2, 0)
    env = np.arange(n)[:, None]
    idx[env, 1, state.locs[..., 0] + r, state.locs[..., 1] + r] = np.arange(a) + 2
    rows, cols = state.locs[..., 0], state.locs[..., 1]
    maps = sliding_window_view(padded, (side, side), axis=(2, 3))[env, :, rows, cols]
    idx_maps = sliding_window_view(idx, (side, side), axis=(2, 3))[env, :, rows, cols]
    own = (np.arange(a) + 2).astype(np.int16)[None, :, None, None, None]
    idx_maps = np.where(idx_maps == own, np.int16(1), idx_maps)
    return maps, idx_maps

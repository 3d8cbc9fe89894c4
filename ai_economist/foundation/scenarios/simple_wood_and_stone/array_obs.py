"""Action masks and observation pieces of the gather-trade-build array world (numpy).

Each function reads a :class:`~.array_world.GTBWorldState` and returns arrays with the env on
the first axis and the agent on the second, equal to what the dict env (components ``Build``
then ``Gather``) puts under the same keys:

* :func:`action_masks`      the flat mask ``[NO-OP, build, left, right, up, down]``
* :func:`scalar_observations` ``world-loc-row/col``, ``world-inventory-*``, ``Build-*``,
  ``Gather-bonus_gather_prob`` and ``time``
* :func:`map_layers` / :func:`egocentric_maps`  ``world-map`` and ``world-idx_map``
  (:func:`dynamics.padded_views` and :func:`dynamics.egocentric_views` for a batch)
* :func:`agent_flat_observations` / :func:`planner_observations`  the flattened vectors
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


def static_windows(params: GTBWorldParams) -> np.ndarray:
    """float32 (H * W, 4, 2r+1, 2r+1): for an agent at each cell (row-major), its window of
    the layers that never change (Water, StoneSourceBlock, WoodSourceBlock, on-map)."""
    r, (h, w) = params.observation_range, params.world_size
    static = np.zeros((4, h + 2 * r, w + 2 * r), dtype=np.float32)
    static[0, r : r + h, r : r + w] = params.water
    static[1, r : r + h, r : r + w] = params.sources[0] > 0
    static[2, r : r + h, r : r + w] = params.sources[1] > 0
    static[3, r : r + h, r : r + w] = 1
    windows = sliding_window_view(static, (2 * r + 1, 2 * r + 1), axis=(1, 2))
    return np.ascontiguousarray(np.moveaxis(windows[:, :h, :w], 0, 2)).reshape(
        h * w, 4, *windows.shape[-2:]
    )


def egocentric_maps(
    state: GTBWorldState, params: GTBWorldParams, static: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``world-map`` float32 (E, A, 7, 2r+1, 2r+1) and ``world-idx_map`` int16
    (E, A, 2, 2r+1, 2r+1) of every agent (window half-width r = the observation range;
    ``static``: :func:`static_windows`, computed when not given).

    Index channels: the house owners and the agents' locations, coded 0 nobody and k + 2
    agent k, with the observing agent's own code replaced by 1.
    """
    if static is None:
        static = static_windows(params)
    r, (h, w) = params.observation_range, params.world_size
    side, pw = 2 * r + 1, w + 2 * r
    n, a = state.num_envs, params.n_agents
    rows, cols = state.locs[..., 0], state.locs[..., 1]
    layer = (h + 2 * r) * pw
    dynamic = np.zeros((n, 4, h + 2 * r, pw), dtype=np.float32)
    dynamic[:, :2, r : r + h, r : r + w] = state.resource_maps
    owner = state.house_owner
    dynamic[:, 2, r : r + h, r : r + w] = owner >= 0
    dynamic[:, 3, r : r + h, r : r + w] = np.where(owner >= 0, owner + 2, 0)  # 0: nobody
    # flat index into ``dynamic`` of each window cell of channel 0 (a window starts at the
    # agent's (row, col) in the padded layers)
    start = (np.arange(n) * (4 * layer))[:, None] + rows * pw + cols
    window = start[..., None, None] + (np.arange(side)[:, None] * pw + np.arange(side))
    flat = dynamic.ravel()
    maps = np.empty((n, a, 7, side, side), dtype=np.float32)
    for c in range(3):
        maps[:, :, c] = flat.take(window + c * layer)
    maps[:, :, 3:] = static.take(rows * w + cols, axis=0)
    idx_maps = np.zeros((n, a, 2, side, side), dtype=np.int16)
    idx_maps[:, :, 0] = flat.take(window + 3 * layer)
    env = np.arange(n)
    for i in range(a):
        own = idx_maps[:, i, 0]
        own[own == i + 2] = 1
        for j in range(a):
            dr, dc = rows[:, j] - rows[:, i] + r, cols[:, j] - cols[:, i] + r
            seen = (dr >= 0) & (dr < side) & (dc >= 0) & (dc < side)
            idx_maps[env[seen], i, 1, dr[seen], dc[seen]] = 1 if i == j else j + 2
    return maps, idx_maps


def agent_flat_observations(state: GTBWorldState, params: GTBWorldParams) -> np.ndarray:
    """float32 (E, A, 9): each agent's ``flat`` (``flatten_observations=True``): the scalar
    observations in sorted key order, as the dict env packs them."""
    scalars = scalar_observations(state, params)
    n, a = state.num_envs, params.n_agents
    flat = np.empty((n, a, len(scalars)), dtype=np.float32)
    for k, key in enumerate(sorted(scalars)):
        value = scalars[key]
        flat[..., k] = value[:, None] if value.ndim == 1 else value
    return flat


def planner_observations(
    state: GTBWorldState, params: GTBWorldParams
) -> tuple[np.ndarray, np.ndarray]:
    """The planner's ``flat`` float32 (E, 4): time, then its own inventory (Coin, Stone,
    Wood; empty without tax or market) scaled; and its ``p<i>`` entries float32 (E, A, 3):
    each agent's scaled inventory (``planner_gets_spatial_info=False``, as published)."""
    flat = np.zeros((state.num_envs, 1 + len(rules.INVENTORY)), dtype=np.float32)
    flat[:, 0] = state.timestep / params.time_scale
    agentwise = (state.inventory * params.inv_scale).astype(np.float32)
    return flat, agentwise

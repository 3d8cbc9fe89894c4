"""Gather-trade-build's step rules on arrays whose first axis is the env (numpy reference).

The batched twin of ``Build.component_step``, ``Gather.component_step`` and the scenario's
regrowth (:func:`dynamics.regrow_all`), one function per rule, written so that a CUDA C or
Numba kernel can mirror them name for name (one thread per env, the agent loops inside):

* :func:`build_step`          wood + stone -> a house on the agent's cell, coin and labour
* :func:`move_agent_slot`     the agent at one position of the env's random order moves
* :func:`gather_events`       which (order slot, resource) pairs collect this step
* :func:`apply_gathers`       inventories, maps and labour of the collections
* :func:`regrow_step`         regrowth of the source cells from one uniform per cell
* :func:`move_masks` / :func:`build_masks`

Axes: ``E`` envs, ``A`` agents, ``(H, W)`` the map. Inventories are ``(E, A, 3)`` in the dict
env's order :data:`INVENTORY` (Coin, Stone, Wood); resource maps ``(E, 2, H, W)`` in its
collectible order :data:`COLLECTIBLE` (Stone, Wood); the house owner map ``(E, H, W)`` int16
holds -1 where there is no house.
"""

from __future__ import annotations

import numpy as np

from ai_economist.foundation.components.move import COL_OFFSETS, ROW_OFFSETS

INVENTORY = ("Coin", "Stone", "Wood")
COIN, STONE, WOOD = 0, 1, 2
COLLECTIBLE = ("Stone", "Wood")  # the maps' order, and the order of the gather draws
# Row and column offsets of the move actions 0..4 (0: stay).
MOVE_DR = np.concatenate([[0], ROW_OFFSETS]).astype(np.int64)
MOVE_DC = np.concatenate([[0], COL_OFFSETS]).astype(np.int64)


def cell_values(maps: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``maps[e, ..., rows[e, k], cols[e, k]]``: ``maps`` (E, [C,] H, W), ``rows`` (E, K)
    -> (E, K[, C])."""
    e = np.arange(maps.shape[0])[:, None]
    if maps.ndim == 3:
        return maps[e, rows, cols]
    return maps[e, :, rows, cols]  # advanced indices split by a slice: (E, K) first


def build_cell_free(
    resource_maps: np.ndarray, house_owner: np.ndarray, landmarks: np.ndarray, locs: np.ndarray
) -> np.ndarray:
    """bool (E, A): the agent's cell holds no resource (> 0), no house and no other landmark
    (``landmarks``: (H, W) bool, the layout's water and source blocks)."""
    rows, cols = locs[..., 0], locs[..., 1]
    no_resource = ~(cell_values(resource_maps, rows, cols) > 0).any(axis=-1)
    return no_resource & (cell_values(house_owner, rows, cols) < 0) & ~landmarks[rows, cols]


def build_masks(
    inventory: np.ndarray,
    resource_maps: np.ndarray,
    house_owner: np.ndarray,
    landmarks: np.ndarray,
    locs: np.ndarray,
) -> np.ndarray:
    """bool (E, A): ``Build.agent_can_build``: >= 1 wood and stone and a free cell."""
    has = (inventory[..., WOOD] >= 1) & (inventory[..., STONE] >= 1)
    return has & build_cell_free(resource_maps, house_owner, landmarks, locs)


def build_step(
    wants: np.ndarray,
    inventory: np.ndarray,
    labor: np.ndarray,
    resource_maps: np.ndarray,
    house_owner: np.ndarray,
    landmarks: np.ndarray,
    locs: np.ndarray,
    build_payment: np.ndarray,
    build_labor: float,
) -> np.ndarray:
    """Build for every agent that ``wants`` (bool (E, A)) and can, in place; returns the
    bool (E, A) of the builds. Agents build on distinct cells from their own inventories,
    so the dict env's random order does not change the outcome (only its draw remains)."""
    does = wants & build_masks(inventory, resource_maps, house_owner, landmarks, locs)
    if not does.any():
        return does
    e, a = np.nonzero(does)
    inventory[e, a, WOOD] -= 1
    inventory[e, a, STONE] -= 1
    inventory[e, a, COIN] += build_payment[e, a]
    labor[e, a] += build_labor
    house_owner[e, locs[e, a, 0], locs[e, a, 1]] = a
    return does


def move_agent_slot(
    agent: np.ndarray,
    moves: np.ndarray,
    locs: np.ndarray,
    labor: np.ndarray,
    house_owner: np.ndarray,
    water: np.ndarray,
    move_labor: float,
) -> None:
    """Move agent ``agent[e]`` of every env by its action ``moves[e, agent[e]]`` (0..4) in
    place: the target cell must be on the map, not water, not another agent's house and
    not occupied by an agent (at this point of the env's random order). A move that happens
    adds ``move_labor``."""
    n_envs = locs.shape[0]
    h, w = water.shape
    env = np.arange(n_envs)
    action = moves[env, agent]
    row = locs[env, agent, 0] + MOVE_DR[action]
    col = locs[env, agent, 1] + MOVE_DC[action]
    inside = (row >= 0) & (row < h) & (col >= 0) & (col < w)
    r, c = np.where(inside, row, 0), np.where(inside, col, 0)  # any cell on the map
    owner = house_owner[env, r, c]
    occupied = ((locs[..., 0] == row[:, None]) & (locs[..., 1] == col[:, None])).any(axis=1)
    ok = (action > 0) & inside & ~water[r, c] & ((owner < 0) | (owner == agent)) & ~occupied
    locs[env, agent, 0] = np.where(ok, row, locs[env, agent, 0])
    locs[env, agent, 1] = np.where(ok, col, locs[env, agent, 1])
    labor[env, agent] += np.where(ok, move_labor, 0.0)  # x + 0.0 == x


def gather_events(resource_maps: np.ndarray, locs: np.ndarray, order: np.ndarray) -> np.ndarray:
    """bool (E, A, 2): whether the agent at order slot k collects resource j (health >= 1
    at its cell), in the order of the dict env's draws (slot-major, then :data:`COLLECTIBLE`)."""
    env = np.arange(locs.shape[0])[:, None]
    ordered = locs[env, order]
    return cell_values(resource_maps, ordered[..., 0], ordered[..., 1]) >= 1


def apply_gathers(
    events: np.ndarray,
    draws: np.ndarray,
    order: np.ndarray,
    locs: np.ndarray,
    inventory: np.ndarray,
    labor: np.ndarray,
    resource_maps: np.ndarray,
    bonus_prob: np.ndarray,
    collect_labor: float,
) -> None:
    """Apply :func:`gather_events` in place: event i of an env (in its draw order) uses that
    env's uniform ``draws[e, i]`` and collects ``1 + (u < bonus_gather_prob)`` units; the
    cell loses one unit (floored at 0) and the agent gains ``collect_labor``."""
    if not events.any():
        return
    n_events = events.reshape(events.shape[0], -1)
    index = np.cumsum(n_events, axis=1) - 1  # position of each event among the env's draws
    e, flat = np.nonzero(n_events)
    slot, j = np.divmod(flat, events.shape[2])
    agent = order[e, slot]
    amount = 1 + (draws[e, index[e, flat]] < bonus_prob[e, agent])
    inventory[e, agent, STONE + j] += amount
    np.add.at(labor, (e, agent), collect_labor)  # an agent may collect stone and wood
    r, c = locs[e, agent, 0], locs[e, agent, 1]
    resource_maps[e, j, r, c] = np.maximum(resource_maps[e, j, r, c] - 1, 0.0)


def regrow_step(
    resource_maps: np.ndarray,
    draws: np.ndarray,
    cells: tuple[np.ndarray, ...],
    source_values: tuple[np.ndarray, ...],
    map_index: tuple[int, ...],
    weight: float,
    max_health: float,
) -> None:
    """:func:`dynamics.regrow_all` for every env in place: ``draws`` (E, sum of cells) are
    the uniforms of the resources' source cells (flat indices ``cells[k]``, resource k in
    ``resource_maps[:, map_index[k]]``), in that order."""
    n_envs = resource_maps.shape[0]
    flat = resource_maps.reshape(n_envs, resource_maps.shape[1], -1)
    start = 0
    for k, (idx, src) in enumerate(zip(cells, source_values)):
        stop = start + idx.size
        before = flat[:, map_index[k], idx]
        spawn = draws[:, start:stop] < np.maximum(before, src) * weight
        flat[:, map_index[k], idx] = np.minimum(before + spawn, max_health)
        start = stop


def move_masks(locs: np.ndarray, house_owner: np.ndarray, water: np.ndarray) -> np.ndarray:
    """bool (E, A, 4): ``Gather``'s mask: the target of each move (left, right, up, down) is
    on the map, unoccupied, not water and not another agent's house."""
    h, w = water.shape
    n_envs, n_agents = locs.shape[:2]
    row = locs[..., 0, None] + ROW_OFFSETS  # (E, A, 4)
    col = locs[..., 1, None] + COL_OFFSETS
    inside = (row >= 0) & (row < h) & (col >= 0) & (col < w)
    r, c = np.where(inside, row, 0), np.where(inside, col, 0)  # any cell on the map
    env = np.arange(n_envs)[:, None, None]
    owner = house_owner[env, r, c]
    agent = np.arange(n_agents)[None, :, None]
    occupied = np.zeros((n_envs, h, w), dtype=bool)
    occupied[np.arange(n_envs)[:, None], locs[..., 0], locs[..., 1]] = True
    return inside & ~water[r, c] & ((owner < 0) | (owner == agent)) & ~occupied[env, r, c]

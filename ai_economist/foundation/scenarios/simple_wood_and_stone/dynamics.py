"""Gather-trade-build world dynamics as pure numpy functions (the reference the scenarios call).

* :func:`convolve_same`: 2-D convolution, zero padded, output the size of the input
  (``scipy.signal.convolve2d(x, k, "same")`` for odd kernels).
* :func:`regrow`: stochastic resource regeneration on source cells (:func:`regrow_all`:
  several resources with one draw, from :func:`regrow_inputs`).
* :func:`agent_idx_maps`: owner and location channels coded 0 nobody / k + 2 agent k.
* :func:`egocentric_views`: each agent's (2w+1)^2 window of the maps.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def convolve_same(x: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """``out[i, j] = sum_{m, n} x[i - m + h, j - n + v] * kernel[m, n]`` (zero outside ``x``),
    with ``(h, v) = kernel.shape // 2``; the kernel's sides must be odd."""
    kh, kw = kernel.shape
    if kh % 2 == 0 or kw % 2 == 0:
        raise ValueError(f"convolve_same needs odd kernel sides, got {kernel.shape}")
    padded = np.pad(np.asarray(x, dtype=np.float64), ((kh // 2, kh // 2), (kw // 2, kw // 2)))
    windows = sliding_window_view(padded, (kh, kw))
    return np.einsum("ijmn,mn->ij", windows, np.asarray(kernel, dtype=np.float64)[::-1, ::-1])


def regrowth_probability(
    resource: np.ndarray, source: np.ndarray, weight: float, halfwidth: int
) -> np.ndarray:
    """P(one unit spawns) per cell: ``convolve_same(max(resource, source), K)`` with
    ``K = weight / d^2`` on a d x d square, ``d = 1 + 2 * halfwidth``."""
    health = np.maximum(resource, source)
    if halfwidth == 0:
        return health * weight
    d = 1 + 2 * halfwidth
    return convolve_same(health, np.full((d, d), weight / d**2))


def regrow(
    resource: np.ndarray,
    source: np.ndarray,
    weight: float,
    halfwidth: int,
    max_health: float,
    rng: np.random.Generator,
    cells: np.ndarray | None = None,
) -> np.ndarray:
    """The resource map after one step of regeneration.

    Only source cells (``source > 0``; ``cells``, their flat indices in row-major order, may
    be given to save finding them) spawn: each draws u ~ U[0, 1) in that order and gains one
    unit when u < the regrowth probability; the result is capped at ``max_health``. Returns
    ``resource`` itself (not a copy) when no cell changed.
    """
    if cells is None:
        cells = np.flatnonzero(source)
    if cells.size == 0:
        return resource
    before = resource.take(cells)
    if halfwidth == 0:
        prob = np.maximum(before, source.take(cells)) * weight
    else:
        prob = regrowth_probability(resource, source, weight, halfwidth).take(cells)
    spawn = rng.random(cells.size) < prob
    if not spawn.any():
        return resource
    after = np.minimum(before + spawn, max_health)
    if np.array_equal(after, before):
        return resource
    out = resource.copy()
    out.flat[cells] = after
    return out


def regrow_inputs(
    resource: np.ndarray, source_values: np.ndarray, cells: np.ndarray, weight: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(before, prob)`` at ``cells`` for :func:`regrow_all` (``halfwidth=0``):
    ``source_values`` is the source map at ``cells``."""
    before = resource.take(cells)
    return before, np.maximum(before, source_values) * weight


def regrow_all(
    resources: list[np.ndarray],
    cells: list[np.ndarray],
    inputs: list[tuple[np.ndarray, np.ndarray]],
    max_healths: list[float],
    rng: np.random.Generator,
) -> list[np.ndarray]:
    """:func:`regrow` with ``halfwidth=0`` for several resources at once, with one draw of
    u ~ U[0, 1) for all their source cells (the same numbers, in the same order, as one
    :func:`regrow` call per resource: ``Generator.random`` makes one double per 64-bit
    output). ``inputs[k]`` is :func:`regrow_inputs` of resource k (a caller may keep it while
    the resource map is unchanged). Returns each resource's map, the input array itself
    where no cell changed."""
    draws = rng.random(sum(c.size for c in cells))
    out, start = [], 0
    for resource, n_cells, (before, prob), max_health in zip(resources, cells, inputs, max_healths):
        stop = start + n_cells.size
        spawn = draws[start:stop] < prob
        start = stop
        if spawn.any():
            after = np.minimum(before + spawn, max_health)
            if (after != before).any():
                resource = resource.copy()
                resource.flat[n_cells] = after
        out.append(resource)
    return out


RegrowTable = tuple[np.ndarray, list[tuple[int, int]], list[np.ndarray], list[np.ndarray]]


def regrow_table(
    cells: list[np.ndarray], inputs: list[tuple[np.ndarray, np.ndarray]], max_healths: list[float]
) -> RegrowTable | None:
    """What :func:`regrow_all` needs of maps that stay unchanged, for :func:`regrow_from_table`:
    ``(thresholds, bounds, afters, cells)``, where ``thresholds`` (all resources' source
    cells, in :func:`regrow_all`'s order) is the spawn probability at the cells a spawn
    changes and -1 (no draw in [0, 1) is below it) elsewhere, ``bounds`` each resource's
    slice of it and ``afters`` each cell's value after a spawn. None where a value of
    ``inputs`` is above its max health, NaN or -0.0 (:func:`regrow_all` then also rewrites
    cells that did not spawn)."""
    thresholds, bounds, afters, start = [], [], [], 0
    for (before, prob), max_health in zip(inputs, max_healths):
        if not (before <= max_health).all() or np.signbit(before).any():
            return None
        after = np.minimum(before + 1.0, max_health)
        thresholds.append(np.where(after != before, prob, -1.0))
        afters.append(after)
        bounds.append((start, start + before.size))
        start += before.size
    return np.concatenate(thresholds) if thresholds else np.zeros(0), bounds, afters, cells


def regrow_from_table(
    resources: list[np.ndarray], table: RegrowTable, rng: np.random.Generator
) -> list[np.ndarray]:
    """:func:`regrow_all` from :func:`regrow_table` of the same maps: the same draws and
    the same results (a cell changes where its draw is below its threshold)."""
    thresholds, bounds, afters, cells = table
    hits = rng.random(thresholds.size) < thresholds
    if not np.count_nonzero(hits):  # = not hits.any(), without ndarray.any's Python wrapper
        return resources
    out = []
    for resource, (lo, hi), after, where in zip(resources, bounds, afters, cells):
        hit = hits[lo:hi]
        if np.count_nonzero(hit):
            resource = resource.copy()
            resource.flat[where[hit]] = after[hit]
        out.append(resource)
    return out


def code_agent_indices(idx_map: np.ndarray) -> np.ndarray:
    """int16 copy of an owner or location map coded 0 for nobody (-1) and ``k + 2`` for agent k."""
    idx = np.asarray(idx_map, dtype=np.int16)
    return np.where(idx >= 0, idx + np.int16(2), np.int16(0)).astype(np.int16, copy=False)


def agent_idx_maps(owner_maps: np.ndarray, loc_map: np.ndarray) -> np.ndarray:
    """int16 (n_owner + 1, H, W): each owner map, then the location map, coded by
    :func:`code_agent_indices`."""
    return code_agent_indices(np.concatenate([owner_maps, loc_map[None]], axis=0))


def padded_views(
    layers: list[np.ndarray], idx_maps: np.ndarray, w: int
) -> tuple[np.ndarray, np.ndarray]:
    """The maps padded by ``w`` cells on each side, ready for :func:`egocentric_views`.

    Returns ``(padded, padded_idx)``: float32 (C + 1, H + 2w, W + 2w), the C layers then a
    channel that is 1 on the map and 0 outside it (as 1.7.1's padding produced), zero outside
    the map; int16 (K, H + 2w, W + 2w) of ``idx_maps``, zero outside.
    """
    h, wd = idx_maps.shape[1:]
    padded = np.zeros((len(layers) + 1, h + 2 * w, wd + 2 * w), dtype=np.float32)
    for i, layer in enumerate(layers):
        padded[i, w : w + h, w : w + wd] = layer
    padded[len(layers), w : w + h, w : w + wd] = 1
    padded_idx = np.zeros((idx_maps.shape[0], h + 2 * w, wd + 2 * w), dtype=np.int16)
    padded_idx[:, w : w + h, w : w + wd] = idx_maps
    return padded, padded_idx


def egocentric_views(
    padded: np.ndarray, padded_idx: np.ndarray, locs: list[list[int]], w: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every agent's window of half-width ``w`` around its location.

    Args:
        padded, padded_idx: from :func:`padded_views` (same ``w``).
        locs: each agent's ``[row, column]``.
        w: half-width.

    Returns:
        Per agent ``(map, idx)``: float32 (C + 1, 2w+1, 2w+1) (a view of ``padded``) and
        int16 (K, 2w+1, 2w+1) (a copy) where agent i's own code ``i + 2`` is replaced by 1.
    """
    out = []
    side = 2 * w + 1
    for i, (r, c) in enumerate(locs):
        idx = padded_idx[:, r : r + side, c : c + side].copy()
        idx[idx == i + 2] = 1
        out.append((padded[:, r : r + side, c : c + side], idx))
    return out


def own_code_tables(n_agents: int) -> list[np.ndarray]:
    """Per agent i, an int16 lookup table of the codes ``0..n_agents + 1`` that maps i's own
    code ``i + 2`` to 1 and every other code to itself (for :func:`egocentric_views_table`);
    static for a number of agents, built once."""
    tables = []
    for i in range(n_agents):
        table = np.arange(n_agents + 2, dtype=np.int16)
        table[i + 2] = 1
        tables.append(table)
    return tables


def egocentric_views_table(
    padded: np.ndarray,
    padded_idx: np.ndarray,
    locs: list[list[int]],
    w: int,
    tables: list[np.ndarray],
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`egocentric_views` where the last index channel holds each agent's own code
    only at its location (the window's centre): the same arrays, each index window copied
    and recoded by one ``take`` of the agent's table from :func:`own_code_tables` (its code
    becomes 1 in every channel, which at the centre of the last is the location)."""
    out = []
    side = 2 * w + 1
    for table, (r, c) in zip(tables, locs):
        idx = table.take(padded_idx[:, r : r + side, c : c + side])
        out.append((padded[:, r : r + side, c : c + side], idx))
    return out

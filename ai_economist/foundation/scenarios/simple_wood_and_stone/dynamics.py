"""Gather-trade-build world dynamics as pure numpy functions (the reference the scenarios call).

* :func:`convolve_same`: 2-D convolution, zero padded, output the size of the input
  (``scipy.signal.convolve2d(x, k, "same")`` for odd kernels).
* :func:`regrow`: stochastic resource regeneration on source cells.
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
) -> np.ndarray:
    """The resource map after one step of regeneration.

    Only source cells (``source > 0``) spawn: each draws u ~ U[0, 1) (in row-major order of
    the source cells) and gains one unit when u < the regrowth probability; the result is
    capped at ``max_health``.
    """
    rows, cols = np.nonzero(source > 0)
    out = resource.copy()
    if rows.size == 0:
        return out
    prob = regrowth_probability(resource, source, weight, halfwidth)[rows, cols]
    spawn = rng.random(rows.size) < prob
    out[rows, cols] = np.minimum(resource[rows, cols] + spawn, max_health)
    return out


def agent_idx_maps(owner_maps: np.ndarray, loc_map: np.ndarray) -> np.ndarray:
    """int16 (n_owner + 1, H, W): each owner map, then the location map, coded 0 for nobody
    (-1 in the inputs) and ``k + 2`` for agent k."""
    maps = np.concatenate([owner_maps, loc_map[None]], axis=0).astype(np.int16) + 2
    maps[maps == 1] = 0
    return maps


def egocentric_views(
    state: np.ndarray, idx_maps: np.ndarray, locs: np.ndarray, w: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every agent's window of half-width ``w`` around its location.

    Args:
        state: float32 (C, H, W) maps.
        idx_maps: int (K, H, W) from :func:`agent_idx_maps`.
        locs: int (n_agents, 2) rows and columns.
        w: half-width.

    Returns:
        ``(maps, idx)``: float32 (n_agents, C + 1, 2w+1, 2w+1), whose last channel is 1 on
        the map and 0 outside it (as 1.7.1's padding produced), and int16
        (n_agents, K, 2w+1, 2w+1) where the agent's own code ``i + 2`` is replaced by 1.
    """
    c, h, wd = state.shape
    padded = np.zeros((c + 1, h + 2 * w, wd + 2 * w), dtype=np.float32)
    padded[:c, w : w + h, w : w + wd] = state
    padded[c, w : w + h, w : w + wd] = 1
    padded_idx = np.zeros((idx_maps.shape[0], h + 2 * w, wd + 2 * w), dtype=np.int16)
    padded_idx[:, w : w + h, w : w + wd] = idx_maps
    span = np.arange(2 * w + 1)
    rows = locs[:, 0, None] + span  # (n, 2w+1) rows of the padded maps
    cols = locs[:, 1, None] + span
    views = padded[:, rows[:, :, None], cols[:, None, :]].transpose(1, 0, 2, 3)
    idx = padded_idx[:, rows[:, :, None], cols[:, None, :]].transpose(1, 0, 2, 3)
    own = (np.arange(locs.shape[0], dtype=np.int16) + 2)[:, None, None, None]
    idx = np.where(idx == own, np.int16(1), idx)
    return np.ascontiguousarray(views), idx

"""Social metrics over agents' endowments: Gini index, equality and productivity.

Every function reads the agent axis as the **last** axis, so batched arrays of shape
``(num_envs, n_agents)`` give one value per env (the batched array models use this).
"""

from __future__ import annotations

import numpy as np

#: Below this number of agents the exact pairwise Gini formula is used.
EXACT_GINI_MAX_AGENTS = 30


def _as_endowments(endowments: np.ndarray | list[float], name: str) -> np.ndarray:
    arr = np.asarray(endowments, dtype=np.float64)
    if arr.ndim == 0 or arr.shape[-1] < 1:
        raise ValueError(f"{name} must have at least one agent on its last axis, got {arr.shape}")
    return arr


def get_gini(endowments: np.ndarray | list[float]) -> np.ndarray | float:
    """The normalised Gini index of ``endowments`` (agents on the last axis).

    For ``n < 30`` agents the exact form
    ``G = sum_ij |x_i - x_j| / (2 n sum_i x_i + 1e-10) / ((n - 1) / n)``;
    for more agents the sorted-cumsum approximation
    ``G = 1 - 2 / (n + 1) * sum_k cumsum(sort(x))_k / (sum x + 1e-10)``.
    One agent has Gini 0 (the original divided by zero there).
    """
    x = _as_endowments(endowments, "endowments")
    n = x.shape[-1]
    if n == 1:
        return np.zeros(x.shape[:-1])[()] if x.ndim > 1 else 0.0
    if n < EXACT_GINI_MAX_AGENTS:
        diff = np.abs(x[..., :, None] - x[..., None, :]).sum(axis=(-2, -1))
        unscaled = diff / (2 * n * x.sum(axis=-1) + 1e-10)
        gini = unscaled / ((n - 1) / n)
    else:
        s = np.sort(x, axis=-1)
        total = s.sum(axis=-1, keepdims=True)
        gini = 1 - (2 / (n + 1)) * np.sum(np.cumsum(s, axis=-1) / (total + 1e-10), axis=-1)
    return gini[()] if np.ndim(gini) == 0 else gini


def get_equality(endowments: np.ndarray | list[float]) -> np.ndarray | float:
    """Equality = 1 - Gini index (1 = perfectly equal, 0 = one agent owns everything)."""
    return 1 - get_gini(endowments)


def get_productivity(coin_endowments: np.ndarray | list[float]) -> np.ndarray | float:
    """Productivity = the sum of the agents' coin endowments."""
    total = _as_endowments(coin_endowments, "coin_endowments").sum(axis=-1)
    return total[()] if np.ndim(total) == 0 else total

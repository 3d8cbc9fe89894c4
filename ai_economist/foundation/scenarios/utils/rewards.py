"""Agent utility functions and planner social-welfare functions.

Agent utilities are elementwise (any shape). Social-welfare functions read the agent axis
as the **last** axis, so ``(num_envs, n_agents)`` arrays give one value per env.
"""

from __future__ import annotations

import numpy as np

from ai_economist.foundation.scenarios.utils import social_metrics


def _check_non_negative(name: str, values: np.ndarray) -> None:
    if np.any(values < 0):
        raise ValueError(f"{name} must be >= 0 everywhere, got minimum {values.min()!r}")


def isoelastic_coin_minus_labor(
    coin_endowment: np.ndarray | float,
    total_labor: np.ndarray | float,
    isoelastic_eta: float,
    labor_coefficient: float,
) -> np.ndarray | float:
    """Isoelastic utility of coin minus a linear labour cost.

    ``u = (c^(1 - eta) - 1) / (1 - eta) - k L`` for ``0 <= eta < 1`` and
    ``u = log(max(1, c)) - k L`` for ``eta = 1``.

    Raises:
        ValueError: a negative coin endowment, or ``isoelastic_eta`` outside [0, 1].
    """
    coin = np.asarray(coin_endowment, dtype=np.float64)
    _check_non_negative("coin_endowment", coin)
    if not 0.0 <= float(isoelastic_eta) <= 1.0:
        raise ValueError(f"isoelastic_eta must be in [0, 1], got {isoelastic_eta!r}")
    if isoelastic_eta == 1.0:
        util_c = np.log(np.maximum(1.0, coin))
    else:
        util_c = (coin ** (1 - isoelastic_eta) - 1) / (1 - isoelastic_eta)
    util = util_c - np.asarray(total_labor, dtype=np.float64) * labor_coefficient
    return util[()] if np.ndim(util) == 0 else util


def coin_minus_labor_cost(
    coin_endowment: np.ndarray | float,
    total_labor: np.ndarray | float,
    labor_exponent: float,
    labor_coefficient: float,
) -> np.ndarray | float:
    """Linear utility of coin minus a convex labour cost: ``u = c - k L^exp``.

    Raises:
        ValueError: a negative coin endowment, or ``labor_exponent <= 1``.
    """
    coin = np.asarray(coin_endowment, dtype=np.float64)
    _check_non_negative("coin_endowment", coin)
    if not float(labor_exponent) > 1:
        raise ValueError(f"labor_exponent must be > 1, got {labor_exponent!r}")
    labor = np.asarray(total_labor, dtype=np.float64)
    util = coin - labor**labor_exponent * labor_coefficient
    return util[()] if np.ndim(util) == 0 else util


def coin_eq_times_productivity(
    coin_endowments: np.ndarray | list[float], equality_weight: float
) -> np.ndarray | float:
    """Equality times per-agent productivity: ``(w eq + 1 - w) * sum(c) / n``.

    ``equality_weight`` = 0 gives plain average coin; 1 gives equality times average coin.
    """
    if not 0.0 <= float(equality_weight) <= 1.0:
        raise ValueError(f"equality_weight must be in [0, 1], got {equality_weight!r}")
    coin = np.asarray(coin_endowments, dtype=np.float64)
    n_agents = coin.shape[-1]
    prod = social_metrics.get_productivity(coin) / n_agents
    equality = equality_weight * social_metrics.get_equality(coin) + (1 - equality_weight)
    return equality * prod


def inverse_income_weights(coin_endowments: np.ndarray | list[float]) -> np.ndarray:
    """Pareto weights proportional to ``1 / max(c, 1)``, normalised to sum to 1 per env."""
    coin = np.asarray(coin_endowments, dtype=np.float64)
    weights = 1.0 / np.maximum(coin, 1.0)
    return weights / weights.sum(axis=-1, keepdims=True)


def inv_income_weighted_coin_endowments(
    coin_endowments: np.ndarray | list[float],
) -> np.ndarray | float:
    """Coin endowments weighted by inverse income: ``sum_i c_i w_i``, ``w ~ 1 / max(c, 1)``."""
    coin = np.asarray(coin_endowments, dtype=np.float64)
    value = np.sum(coin * inverse_income_weights(coin), axis=-1)
    return value[()] if np.ndim(value) == 0 else value


def inv_income_weighted_utility(
    coin_endowments: np.ndarray | list[float], utilities: np.ndarray | list[float]
) -> np.ndarray | float:
    """Utilities weighted by inverse income: ``sum_i u_i w_i``, ``w ~ 1 / max(c, 1)``."""
    weights = inverse_income_weights(coin_endowments)
    value = np.sum(np.asarray(utilities, dtype=np.float64) * weights, axis=-1)
    return value[()] if np.ndim(value) == 0 else value

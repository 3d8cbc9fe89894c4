"""The one-step economy's reward rules as plain array functions (agents on the last axis).

Shared by the Foundation env (:mod:`one_step_economy`) and the batched array model
(:mod:`array_model`), so both compute the same utilities and social welfare.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.foundation.components.tax_brackets import check_choice
from ai_economist.foundation.scenarios.utils import rewards, social_metrics

AGENT_REWARD_TYPES = ("coin_minus_labor_cost", "isoelastic_coin_minus_labor")
PLANNER_REWARD_TYPES = ("inv_income_weighted_utility", "coin_eq_times_productivity")


def check_reward_params(
    agent_reward_type: str,
    isoelastic_eta: float,
    labor_exponent: float,
    planner_reward_type: str,
    mixing_weight_gini_vs_coin: float,
) -> None:
    """ValueError naming the parameter if a reward type is unknown or a value out of range."""
    check_choice("agent_reward_type", agent_reward_type, AGENT_REWARD_TYPES)
    check_choice("planner_reward_type", planner_reward_type, PLANNER_REWARD_TYPES)
    if not 0.0 <= float(isoelastic_eta) <= 1.0:
        raise ValueError(f"isoelastic_eta must be in [0, 1], got {isoelastic_eta!r}")
    if agent_reward_type == "coin_minus_labor_cost" and not float(labor_exponent) > 1:
        raise ValueError(f"labor_exponent must be > 1, got {labor_exponent!r}")
    if not 0.0 <= float(mixing_weight_gini_vs_coin) <= 1.0:
        raise ValueError(
            f"mixing_weight_gini_vs_coin must be in [0, 1], got {mixing_weight_gini_vs_coin!r}"
        )


def agent_utilities(
    coin: Any,
    labor: Any,
    agent_reward_type: str,
    isoelastic_eta: float,
    labor_exponent: float,
    labor_cost: float,
) -> np.ndarray:
    """Each agent's utility of its total coin and labour (elementwise)."""
    if agent_reward_type == "isoelastic_coin_minus_labor":
        return np.asarray(
            rewards.isoelastic_coin_minus_labor(coin, labor, isoelastic_eta, labor_cost)
        )
    return np.asarray(rewards.coin_minus_labor_cost(coin, labor, labor_exponent, labor_cost))


def planner_welfare(
    coin: Any,
    production: Any,
    utilities: Any,
    planner_reward_type: str,
    mixing_weight_gini_vs_coin: float,
) -> np.ndarray | float:
    """The planner's social welfare, one value per env.

    ``inv_income_weighted_utility`` weighs utilities by inverse **pre-tax** income
    (``production``); ``coin_eq_times_productivity`` uses equality weight
    ``1 - mixing_weight_gini_vs_coin``.
    """
    if planner_reward_type == "coin_eq_times_productivity":
        return rewards.coin_eq_times_productivity(coin, 1 - mixing_weight_gini_vs_coin)
    return rewards.inv_income_weighted_utility(production, utilities)


def planner_observations(coin: Any) -> dict[str, np.ndarray | float]:
    """``normalized_per_capita_productivity`` (sum / n / 1000) and ``equality`` of coin."""
    coin = np.asarray(coin, dtype=np.float64)
    productivity = social_metrics.get_productivity(coin)
    return {
        "normalized_per_capita_productivity": productivity / coin.shape[-1] / 1000,
        "equality": social_metrics.get_equality(coin),
    }

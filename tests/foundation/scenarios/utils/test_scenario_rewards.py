"""Utility and social-welfare functions on hand-computed values."""

import numpy as np
import pytest

from ai_economist.foundation.scenarios.utils import rewards, social_metrics


def test_isoelastic_utility_by_hand():
    # c = 4, eta = 0.5: (4^0.5 - 1) / 0.5 = 2; labour 3 * 0.1 = 0.3.
    assert rewards.isoelastic_coin_minus_labor(4.0, 3.0, 0.5, 0.1) == pytest.approx(1.7)
    # eta = 0: linear utility c - 1.
    assert rewards.isoelastic_coin_minus_labor(10.0, 0.0, 0.0, 1.0) == pytest.approx(9.0)
    # eta = 1: log(max(1, c)) elementwise (the original's np.max(1, c) was a bug).
    got = rewards.isoelastic_coin_minus_labor(
        np.array([0.5, np.e**2]), np.array([1.0, 0.0]), 1.0, 2
    )
    np.testing.assert_allclose(got, [-2.0, 2.0])


def test_isoelastic_paper_eta():
    c, eta = 100.0, 0.23
    expected = (100.0**0.77 - 1) / 0.77 - 0.21 * 5
    assert rewards.isoelastic_coin_minus_labor(c, 5, eta, 0.21) == pytest.approx(expected)


def test_utilities_reject_bad_input():
    with pytest.raises(ValueError, match="coin_endowment"):
        rewards.isoelastic_coin_minus_labor(np.array([1.0, -1.0]), 0.0, 0.23, 1.0)
    with pytest.raises(ValueError, match="isoelastic_eta"):
        rewards.isoelastic_coin_minus_labor(1.0, 0.0, 1.5, 1.0)
    with pytest.raises(ValueError, match="labor_exponent"):
        rewards.coin_minus_labor_cost(1.0, 1.0, 1.0, 1.0)


def test_coin_minus_labor_cost_by_hand():
    got = rewards.coin_minus_labor_cost(np.array([10.0, 5.0]), np.array([3.0, 0.0]), 2.0, 0.5)
    np.testing.assert_allclose(got, [10 - 4.5, 5.0])


def test_social_welfare_functions_by_hand():
    coin = np.array([1.0, 3.0])
    # Gini of [1, 3]: sum|xi - xj| = 4, / (2 * 2 * 4) = 0.25, / (1/2) = 0.5; equality 0.5.
    assert social_metrics.get_gini(coin) == pytest.approx(0.5)
    # w = 1: 0.5 * mean 2 = 1; w = 0: the mean, 2.
    assert rewards.coin_eq_times_productivity(coin, 1.0) == pytest.approx(1.0)
    assert rewards.coin_eq_times_productivity(coin, 0.0) == pytest.approx(2.0)
    # weights 1/1 and 1/3 -> [0.75, 0.25]: 0.75 * 1 + 0.25 * 3 = 1.5
    assert rewards.inv_income_weighted_coin_endowments(coin) == pytest.approx(1.5)
    assert rewards.inv_income_weighted_utility(coin, [4.0, 8.0]) == pytest.approx(5.0)
    # Incomes below 1 weigh like 1: weights [0.5, 0.5].
    assert rewards.inv_income_weighted_utility([0.0, 0.5], [2.0, 4.0]) == pytest.approx(3.0)


def test_batched_equals_per_env():
    rng = np.random.default_rng(0)
    coin = rng.uniform(0, 50, size=(5, 4))
    util = rng.normal(size=(5, 4))
    for fn, args in [
        (rewards.coin_eq_times_productivity, (0.7,)),
        (rewards.inv_income_weighted_coin_endowments, ()),
    ]:
        batched = fn(coin, *args)
        np.testing.assert_allclose(batched, [fn(row, *args) for row in coin])
    batched = rewards.inv_income_weighted_utility(coin, util)
    np.testing.assert_allclose(
        batched, [rewards.inv_income_weighted_utility(c, u) for c, u in zip(coin, util)]
    )

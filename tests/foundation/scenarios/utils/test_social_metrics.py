"""Gini, equality and productivity on hand-made endowments."""

import numpy as np
import pytest

from ai_economist.foundation.scenarios.utils import social_metrics as sm


def test_equal_and_concentrated_endowments():
    assert sm.get_gini(np.full(4, 7.0)) == pytest.approx(0.0, abs=1e-9)
    assert sm.get_equality(np.full(4, 7.0)) == pytest.approx(1.0, abs=1e-9)
    # One agent of n owns everything: exact Gini = 1 (normalised by (n-1)/n).
    assert sm.get_gini(np.array([0.0, 0.0, 0.0, 8.0])) == pytest.approx(1.0, abs=1e-9)
    assert sm.get_equality(np.array([0.0, 0.0, 0.0, 8.0])) == pytest.approx(0.0, abs=1e-9)


def test_gini_by_hand_three_agents():
    # [0, 1, 2]: sum|xi-xj| = 2 * (1 + 2 + 1) = 8; / (2*3*3) = 4/9; / (2/3) = 2/3.
    assert sm.get_gini([0.0, 1.0, 2.0]) == pytest.approx(2 / 3)


def test_gini_approximation_from_30_agents():
    x = np.zeros(40)
    x[-1] = 10.0
    # cumsum/sum is 0 except the last entry (1): 1 - 2/41.
    assert sm.get_gini(x) == pytest.approx(1 - 2 / 41)
    assert sm.get_gini(np.ones(30)) == pytest.approx(0.0, abs=1e-9)


def test_all_zero_and_batched():
    assert sm.get_gini(np.zeros(3)) == pytest.approx(0.0, abs=1e-9)
    batch = np.array([[1.0, 3.0], [2.0, 2.0]])
    np.testing.assert_allclose(sm.get_gini(batch), [0.5, 0.0])
    np.testing.assert_allclose(sm.get_productivity(batch), [4.0, 4.0])
    assert sm.get_productivity([1.0, 2.5]) == pytest.approx(3.5)

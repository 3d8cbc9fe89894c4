"""Tax annealing schedule (components/utils)."""

import numpy as np
import pytest

from ai_economist.foundation.components import utils


def test_annealed_limit_by_hand():
    assert utils.annealed_tax_limit(10, 20, 0.1) == 0.0
    assert utils.annealed_tax_limit(25, 20, 0.1, 0.8) == pytest.approx(0.4)
    assert utils.annealed_tax_limit(100, 20, 0.1) == 1.0


def test_annealed_mask_by_hand():
    rates = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    np.testing.assert_array_equal(utils.annealed_tax_mask(0, 5, 0.1, rates), [1, 0, 0, 0, 0])
    np.testing.assert_array_equal(utils.annealed_tax_mask(10, 5, 0.1, rates), [1, 1, 1, 0, 0])
    batched = utils.annealed_tax_mask(np.array([0, 10]), 5, 0.1, rates)
    assert batched.shape == (2, 5)
    np.testing.assert_array_equal(batched[1], [1, 1, 1, 0, 0])


def test_mask_dtype_and_zero_always_allowed_after_warmup():
    mask = utils.annealed_tax_mask(150, 100, 0.01, [0.0, 0.25, 0.5, 0.75, 1.0])
    assert mask.dtype == np.float32
    np.testing.assert_array_equal(mask, [1, 1, 1, 0, 0])


@pytest.mark.parametrize("limit", [0.1, 0.2, 0.19888888888888887, 0.4, 1 / 3])
def test_a_held_limit_is_exact_in_a_fresh_env_and_stays_put(limit):
    schedule = utils.held_tax_limit_schedule(limit)
    assert utils.annealed_tax_limit(0, *schedule) == limit  # bit for bit
    assert limit <= utils.annealed_tax_limit(31, *schedule) <= limit * (1 + 32 / 2**40)
    rates = np.round(np.arange(0.0, 1.0001, 0.05), 2)  # the published discrete rates
    np.testing.assert_array_equal(
        utils.annealed_tax_mask(0, *schedule, rates), (rates <= limit).astype(np.float32)
    )


@pytest.mark.parametrize("limit", [0.0, 1.0, 1.5, -0.2])
def test_a_held_limit_must_lie_inside_the_range(limit):
    with pytest.raises(ValueError, match=r"strictly between 0 and 1, got"):
        utils.held_tax_limit_schedule(limit)

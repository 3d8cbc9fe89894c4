"""Numbers and piecewise-linear schedules of hyper-parameters."""

from __future__ import annotations

import pytest

from ai_economist.warp_drive.training.schedules import Schedule


def test_constant():
    s = Schedule(0.05)
    assert s.is_constant and s(0) == 0.05 and s(10**9) == 0.05


def test_published_entropy_schedule_interpolates_and_clamps():
    s = Schedule([[0, 0.5], [50_000_000, 0.05]])
    assert s(0) == 0.5
    assert s(25_000_000) == pytest.approx(0.275)
    assert s(50_000_000) == pytest.approx(0.05)
    assert s(10**10) == pytest.approx(0.05)


def test_value_before_first_point():
    s = Schedule([[100, 1.0], [200, 3.0]])
    assert s(0) == 1.0 and s(150) == pytest.approx(2.0)


@pytest.mark.parametrize("bad", [[], [[0, 1], [0, 2]], [[5, 1], [2, 2]], [[0, 1, 2]], True])
def test_invalid_schedules(bad):
    with pytest.raises(ValueError):
        Schedule(bad, "policy.p.entropy_coeff")

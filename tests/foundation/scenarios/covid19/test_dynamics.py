"""Each numpy dynamics function against hand-computed values and invariants."""

import numpy as np
import pytest

from ai_economist.foundation.scenarios.covid19.model import dynamics as d


def test_sir_step_hand_computed():
    s, i, r, v = np.array([900.0]), np.array([50.0]), np.array([50.0]), np.array([0.0])
    pop = np.array([1000.0])
    out_s, out_i, out_r, out_v, deaths, beta = d.sir_step(
        s,
        i,
        r,
        v,
        np.array([0.0]),
        np.array([2.0]),
        np.array([0.3]),
        np.array([-0.05]),
        1.0,
        1.0,
        pop,
        0.1,
        0.02,
    )
    beta_expected = 0.3 - 0.05 * 2  # 0.2
    new_inf = beta_expected * 900 / 1000 * 50  # 9
    assert beta[0] == pytest.approx(beta_expected)
    assert out_s[0] == pytest.approx(900 - new_inf)
    assert out_r[0] == pytest.approx(50 + 5)
    assert out_i[0] == pytest.approx(50 + new_inf - 5)
    assert deaths[0] == pytest.approx(0.02 * 55)
    # S + I + R is conserved without vaccines.
    assert (out_s + out_i + out_r)[0] == pytest.approx(1000.0)


def test_sir_vaccines_move_susceptible_to_recovered_and_conserve_population():
    rng = np.random.default_rng(0)
    s = rng.uniform(1e5, 1e6, 51)
    i = rng.uniform(1e3, 1e4, 51)
    r = rng.uniform(1e3, 1e5, 51)
    v = rng.uniform(0, 1e3, 51)
    vac = rng.uniform(0, 1e4, 51)
    pop = s + i + r + 10
    out = d.sir_step(
        s,
        i,
        r,
        v,
        vac,
        np.full(51, 5.0),
        np.full(51, 0.15),
        np.full(51, -0.01),
        1.0,
        1.0,
        pop,
        1 / 14,
        0.02,
    )
    np.testing.assert_allclose(out[0] + out[1] + out[2], s + i + r, rtol=1e-12)
    np.testing.assert_allclose(out[3] - v, np.minimum(vac, s))
    np.testing.assert_allclose(out[4], 0.02 * (out[2] - out[3]))


def test_sir_vaccines_capped_by_susceptible():
    s = np.array([10.0])
    out = d.sir_step(
        s,
        np.array([5.0]),
        np.array([0.0]),
        np.array([0.0]),
        np.array([100.0]),
        np.array([1.0]),
        np.array([0.2]),
        np.array([0.0]),
        1.0,
        1.0,
        np.array([100.0]),
        0.1,
        0.02,
    )
    assert out[0][0] == 0.0  # everybody susceptible got vaccinated, nobody infected
    assert out[3][0] == 10.0


def test_softplus_matches_definition_and_threshold():
    x = np.array([-30.0, -1.0, 0.0, 1.0, 19.9, 20.5, 100.0])
    expected = np.where(x > 20, x, np.log1p(np.exp(x)))
    np.testing.assert_allclose(d.softplus(x), expected)
    assert d.softplus(np.array([0.0]))[0] == pytest.approx(np.log(2))


def test_recursive_filter_equals_direct_convolution():
    rng = np.random.default_rng(1)
    lambdas = np.array([27.7, 62.9, 129.2, 264.4, 542.1])
    filter_len = 600
    history = list(rng.integers(1, 11, size=filter_len + 1))
    ages = np.arange(filter_len)[::-1]

    def direct(h):
        deltas = np.diff(np.asarray(h[-(filter_len + 1) :], dtype=float))
        return (deltas[:, None] * np.exp(-ages[:, None] / lambdas)).sum(0)

    state = direct(history)
    for _ in range(700):  # more than a full window, so old deltas really drop out
        new = int(rng.integers(1, 11))
        dropped = history[-filter_len] - history[-filter_len - 1]
        history.append(new)
        state = d.unemployment_filter_update(
            state[None],
            np.array([new - history[-2]], float),
            np.array([dropped], float),
            np.exp(-1 / lambdas),
            np.exp(-filter_len / lambdas),
        )[0]
    np.testing.assert_allclose(state, direct(history), rtol=1e-9, atol=1e-9)


def test_unemployment_and_economy_hand_computed():
    filt = np.array([[1.0, 2.0]])
    weights = np.array([[0.5, -0.25]])  # signal = 0.5 - 0.5 = 0
    unemployed = d.unemployment_step(filt, weights, np.array([3.0]), 1.0, np.array([1000.0]))
    assert unemployed[0] == pytest.approx((np.log(2) + 3.0) * 10)
    prod = d.economy_step(
        np.array([1000.0]), np.array([100.0]), np.array([5.0]), np.array([50.0]), 0.1, 0.6, 2.0
    )
    # can work = 1000*0.6 - ((0.1*100 + 5) * 0.6 + 50) = 600 - 59 = 541
    assert prod[0] == pytest.approx(541 * 2.0)


def test_economy_never_negative():
    prod = d.economy_step(
        np.array([100.0]), np.array([1e6]), np.array([0.0]), np.array([0.0]), 0.1, 0.6, 2.0
    )
    assert prod[0] == 0.0


def test_crra_values_and_clipping():
    # 365 x = 1 -> utility (1 - 1)/(1 - eta) = 0 -> (1 + 0) / 365
    assert d.crra_nonlinearity(np.array([1 / 365]), 2.0)[0] == pytest.approx(1 / 365)
    # eta = 2: u(x) = (x^-1 - 1)/(-1) = 1 - 1/x; x=2 -> 0.5
    assert d.crra_nonlinearity(np.array([2 / 365]), 2.0)[0] == pytest.approx(1.5 / 365)
    # clipped below at 0.1 and above at 3
    assert d.crra_nonlinearity(np.array([0.0]), 2.0)[0] == pytest.approx((1 + (1 - 10)) / 365)
    assert d.crra_nonlinearity(np.array([1.0]), 2.0)[0] == pytest.approx((1 + (1 - 1 / 3)) / 365)
    # eta = 1 is the log limit (the original divided by zero)
    assert d.crra_nonlinearity(np.array([2 / 365]), 1.0)[0] == pytest.approx((1 + np.log(2)) / 365)
    near = d.crra_nonlinearity(np.array([2 / 365]), 1.0 + 1e-7)[0]
    assert near == pytest.approx((1 + np.log(2)) / 365, rel=1e-6)


def test_rewards_and_priority_scaling():
    assert d.min_max_normalization(np.array([3.0]), 1.0, 5.0)[0] == pytest.approx(0.5)
    assert d.get_rew(np.array([1.0]), np.array([0.0]), np.array([0.25]))[0] == pytest.approx(0.25)
    # m z / (1 + m z): alpha 0.685 with m 0.3 -> 0.3948 (spec, Alabama)
    assert d.scale_health_priority(np.array([0.685]), 0.3)[0] == pytest.approx(0.3948, abs=1e-4)
    assert d.scale_health_priority(np.array([0.4]), 1.0)[0] == pytest.approx(0.4)


def test_planner_pays_subsidy_with_interest():
    prod = np.array([[100.0, 200.0]])
    subsidy = np.array([[10.0, 20.0]])
    _, econ = d.planner_indices(
        np.zeros((1, 2)), prod, subsidy, 1e7, 0.03, 1.0, 300 * 365, 2.0, 0.0, 1.0, 0.0, 1.0
    )
    net = 300 - 1.03 * 30
    expected = d.crra_nonlinearity(np.array([net / (300 * 365)]), 2.0)
    np.testing.assert_allclose(econ, expected / (1.0 + 1e-10))


def test_open_close_cooldown_cycle():
    level, until = np.array([5]), np.array([0])
    level, until = d.open_close_step(np.array([3]), level, until, 1, 28, 10)
    assert level[0] == 3 and until[0] == 28
    assert (
        d.open_close_action_mask(27, until)[0] == 0 and d.open_close_action_mask(28, until)[0] == 1
    )
    level, until = d.open_close_step(
        np.array([0]), level, until, 29, 28, 10
    )  # NO-OP at decision day
    assert level[0] == 3 and until[0] == 29
    level, until = d.open_close_step(np.array([10]), level, until, 30, 28, 10)
    assert level[0] == 10 and until[0] == 57


def test_subsidy_and_vaccination_timing():
    assert d.subsidy_step(7, 3, 1, 90) == 7  # first day of an interval reads the decision
    assert d.subsidy_step(7, 3, 2, 90) == 3
    assert d.subsidy_step(0, 3, 91, 90) == 0  # NO-OP means level 0
    assert d.subsidy_action_mask(90, 90) == 1 and d.subsidy_action_mask(89, 90) == 0
    np.testing.assert_allclose(
        d.subsidy_amounts(np.array([5]), 20, np.array([[100.0, 40.0]])), [[25.0, 10.0]]
    )
    per = np.array([3.0, 4.0])
    np.testing.assert_array_equal(d.vaccination_step(9, 10, 1, per), [0, 0])
    np.testing.assert_array_equal(d.vaccination_step(10, 10, 1, per), per)
    np.testing.assert_array_equal(d.vaccination_step(11, 10, 2, per), [0, 0])
    np.testing.assert_array_equal(d.vaccination_step(12, 10, 2, per), per)
    assert d.time_until_next_vaccines(5, 10, 1) == 1.0
    assert d.time_until_next_vaccines(9, 10, 1) == 0.0
    # (interval - (t + 1) % interval) / interval, as the original CPU code
    assert d.time_until_next_vaccines(12, 10, 4) == pytest.approx(3 / 4)

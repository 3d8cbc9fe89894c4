"""Bracket tax arithmetic by hand (tax_brackets) and the component's rule methods."""

import re
from pathlib import Path

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.components import tax_brackets as tb

US_CUTOFFS = np.array(tb.US_FEDERAL_2018_CUTOFFS_USD) / 1000.0


def make_env(n_agents=3, **tax):
    tax.setdefault("period", 2)
    return foundation.make_env_instance(
        "one-step-economy",
        components=[("SimpleLabor", {}), ("PeriodicBracketTax", tax)],
        n_agents=n_agents,
        world_size=[1, 1],
        episode_length=2,
        seed=0,
    )


def test_us_federal_bill_by_hand():
    # $50,000 in 2018: $4,543 + 22% of the amount over $39,475 = $6,858.50 (scaled by 1000).
    rates = tb.US_FEDERAL_2018_RATES
    assert tb.taxes_due(50.0, US_CUTOFFS, rates) == pytest.approx(6.8585)
    # Each bracket by hand: 0.10 * 9.7 + 0.12 * 29.775 + 0.22 * 10.525
    assert 0.97 + 0.12 * 29.775 + 0.22 * 10.525 == pytest.approx(6.8585)
    # Over the top cutoff: $153,798 + 37% of the amount over $510,300.
    assert tb.taxes_due(600.0, US_CUTOFFS, rates) == pytest.approx(153.798 + 0.37 * 89.7, abs=1e-3)


def test_linear_brackets_bill_and_marginal_rate():
    cutoffs = tb.make_bracket_cutoffs("linear", 5, 100, 1000)
    np.testing.assert_allclose(cutoffs, [0, 25, 50, 75, 100])
    rates = [0.0, 0.1, 0.2, 0.3, 0.5]
    incomes = np.array([[-5.0, 0.0, 25.0, 120.0]])
    np.testing.assert_allclose(
        tb.taxes_due(incomes, cutoffs, rates), [[0, 0, 0, 2.5 + 5 + 7.5 + 10]]
    )
    np.testing.assert_allclose(tb.marginal_rate(incomes, cutoffs, rates), [[0.0, 0.0, 0.1, 0.5]])
    np.testing.assert_array_equal(tb.bracket_index(incomes, cutoffs), [[0, 0, 1, 4]])


def test_log_brackets():
    np.testing.assert_allclose(tb.make_bracket_cutoffs("log", 5, 100, 1000), [0, 12.5, 25, 50, 100])


def test_enact_taxes_spares_escrow_and_returns_revenue():
    out = tb.enact_taxes([1.0, 100.0], [50.0, 0.0], [0.0, 0.0], np.array([0.0, 1000.0]), [0.5, 0.5])
    np.testing.assert_allclose(out.income, [51.0, 100.0])
    np.testing.assert_allclose(out.tax_paid, [1.0, 50.0])  # only the inventory coin is taxed
    assert out.lump_sum == pytest.approx(25.5)
    np.testing.assert_allclose(out.inventory_coin, [25.5, 75.5])
    np.testing.assert_allclose(out.last_coin, [75.5, 75.5])
    assert out.inventory_coin.sum() == pytest.approx(101.0)  # coin conserved


def test_batched_taxes_equal_per_env():
    rng = np.random.default_rng(1)
    income = rng.uniform(-10, 600, size=(6, 4))
    rates = rng.uniform(0, 1, size=(6, 7))
    batched = tb.taxes_due(income, US_CUTOFFS, rates)
    for e in range(6):
        np.testing.assert_allclose(batched[e], tb.taxes_due(income[e], US_CUTOFFS, rates[e]))
        np.testing.assert_allclose(
            tb.marginal_rate(income, US_CUTOFFS, rates)[e],
            tb.marginal_rate(income[e], US_CUTOFFS, rates[e]),
        )


def test_component_methods_by_hand():
    env = make_env(tax_model="us-federal-single-filer-2018-scaled")
    env.reset()
    tax = env.get_component("PeriodicTax")
    np.testing.assert_allclose(tax.bracket_cutoffs, US_CUTOFFS)
    np.testing.assert_allclose(tax.curr_marginal_rates, tb.US_FEDERAL_2018_RATES)
    assert tax.taxes_due(50.0) == pytest.approx(6.8585)
    assert tax.marginal_rate(50.0) == pytest.approx(0.22)
    assert tax.marginal_rate(-1.0) == 0.0
    assert tax.income_bin(50.0) == pytest.approx(39.475)
    assert tax.income_bin(9.7) == pytest.approx(9.7)
    assert tax.income_bin(-3.0) == 0.0


def test_model_wrapper_actions_set_rates_and_masks():
    env = make_env(n_agents=2)
    obs = env.reset()
    tax = env.get_component("PeriodicTax")
    assert tax.n_disc_rates == 21
    assert obs["p"]["action_mask"].shape == (7 * 22,)
    assert obs["p"]["action_mask"].sum() == 7 * 22  # NO-OPs plus every rate on the first day
    # actions: NO-OP keeps bracket 0 at index 0 (rate 0); k picks disc_rates[k - 1]
    obs, *_ = env.step({"p": [0, 1, 2, 3, 4, 5, 21]})
    np.testing.assert_allclose(tax.curr_marginal_rates, [0.0, 0.0, 0.05, 0.10, 0.15, 0.20, 1.0])
    # second day: every rate masked, only the NO-OPs remain
    assert obs["p"]["action_mask"].sum() == 7


def test_annealing_masks_and_limit():
    env = make_env(n_agents=2, tax_annealing_schedule=[10, 0.1])
    obs = env.reset()
    tax = env.get_component("PeriodicTax")
    assert tax.curr_rate_max == 0.0
    # before the warm-up ends only rate 0 (index 1 of each sub-space) is allowed
    mask = obs["p"]["action_mask"].reshape(7, 22)
    np.testing.assert_array_equal(mask[:, :3], [[1, 1, 0]] * 7)
    masks = tax.generate_masks(completions=15)["p"]
    assert masks["TaxIndexBracket_000"].sum() == 11  # |rate| <= 0.5: 0, 0.05, ..., 0.5
    assert tax.curr_rate_max == pytest.approx(0.5)


def test_fixed_rates_and_disable_taxes():
    rates = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    env = make_env(tax_model="fixed-bracket-rates", fixed_bracket_rates=rates)
    env.reset()
    np.testing.assert_allclose(env.get_component("PeriodicTax").curr_marginal_rates, rates)
    on = make_env().reset()
    off_env = make_env(disable_taxes=True)
    off = off_env.reset()
    assert off["0"]["flat"].shape == on["0"]["flat"].shape  # same observation space
    assert off["p"]["flat"].shape == on["p"]["flat"].shape
    assert off_env.world.planner.action_spaces == 1  # no tax actions
    assert np.all(off_env.get_component("PeriodicTax").curr_marginal_rates == 0)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"tax_model": "model-wrapper"}, ValueError, "Did you mean 'model_wrapper'"),
        ({"tax_model": "saes"}, ValueError, "Did you mean 'saez'"),
        ({"bracket_spacing": "lienar"}, ValueError, "Did you mean 'linear'"),
        ({"bracket_cutoffs": [0, 50, 20]}, ValueError, "strictly increasing"),
        ({"bracket_cutoffs": [5, 50, 80]}, ValueError, "first bracket cutoff must be 0"),
        ({"bracket_cutoffs": [0, 0.5, 2]}, ValueError, "distinct integer parts"),
        (
            {"tax_model": "fixed-bracket-rates", "fixed_bracket_rates": [0.1] * 6 + [1.2]},
            ValueError,
            r"fixed_bracket_rates must lie in \[0, 1\]; got \[1.2\] at index \[6\]",
        ),
        (
            {"tax_model": "fixed-bracket-rates", "fixed_bracket_rates": [0.1] * 3},
            ValueError,
            "one rate per bracket",
        ),
        ({"rate_max": 1.5}, ValueError, "rate_max must be in"),
        ({"rate_min": 0.6, "rate_max": 0.5}, ValueError, "rate_min"),
        (
            {"tax_model": "us-federal-single-filer-2018-scaled", "bracket_spacing": "linear"},
            ValueError,
            "needs bracket_spacing 'us-federal'",
        ),
        ({"perod": 3}, TypeError, "perod"),
    ],
)
def test_bad_tax_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_env(**kwargs)


def test_annealing_follows_completed_episodes():
    env = make_env(n_agents=2, tax_annealing_schedule=[1, 0.5])
    tax = env.get_component("PeriodicTax")
    limits = []
    for _ in range(4):
        obs = env.reset()
        limits.append(tax.curr_rate_max)
        allowed = obs["p"]["action_mask"].reshape(7, 22)[0, 1:]
        assert allowed.sum() == int(round(limits[-1] / 0.05)) + 1  # rates 0 .. limit
        env.step({})
        env.step({})
    assert limits == [0.0, 0.0, 0.5, 1.0]


def test_a_rounding_residue_below_zero_is_no_negative_income():
    # locking half of 14.19125 coin in escrow (12.6475 there) leaves inventory + escrow
    # -3.55e-15 below the 26.83875 it was: an income of 0, taxed at bracket 0's rate
    cutoffs = np.array([0.0, 9.7, 39.475])
    rates = np.array([0.25, 0.3, 0.35])
    half = 0.5 * 14.19125
    residue = (14.19125 - half) + (12.6475 + half) - (14.19125 + 12.6475)
    assert -1e-14 < residue < 0.0
    assert tb.marginal_rate(residue, cutoffs, rates) == 0.25
    assert tb.marginal_rate(-2 * tb.NEGATIVE_INCOME_ATOL, cutoffs, rates) == 0.0
    assert tb.marginal_rate(np.array([[-1.0, residue, 10.0]]), cutoffs, rates).tolist() == [
        [0.0, 0.25, 0.3]
    ]


def test_the_kernels_use_the_same_negative_income_tolerance():
    cuh = (
        Path(tb.__file__).resolve().parents[1]
        / "scenarios/one_step_economy/kernels/bracket_tax.cuh"
    )
    defined = re.search(r"#define TAX_NEGATIVE_INCOME_ATOL (\S+)", cuh.read_text())
    assert defined and float(defined.group(1)) == tb.NEGATIVE_INCOME_ATOL

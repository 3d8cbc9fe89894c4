"""The Saez formula's pieces on hand-made income distributions."""

import numpy as np
import pytest

from ai_economist import foundation
from ai_economist.foundation.components import saez

EDGES = np.array([0.0, 10.0, 20.0])  # two bins and the open top bin above 20
INCOMES = np.array([5.0, 5.0, 15.0, 30.0])


def test_pareto_params_by_hand():
    # p(z) = [2, 1, 1] / 4; P(z' <= z) = [0.5, 0.75, 1]; P(z' >= z) = 1 - P + p/2 = [.75, .375, .125]
    # A = z p / P(z' >= z) / width: 5 * .5 / .75 / 10 and 15 * .25 / .375 / 10; top: 30 / (30 - 20)
    np.testing.assert_allclose(
        saez.binned_pareto_params(INCOMES, EDGES), [1 / 3, 1.0, 3.0], rtol=1e-6
    )
    az = saez.binned_pareto_params(np.array([5.0, 30.0]), EDGES)
    assert np.isnan(az[1])  # an empty bin


def test_welfare_weights_by_hand():
    # uniform weights: the average weight at or above any income is 1
    np.testing.assert_allclose(
        saez.binned_welfare_weights(INCOMES, EDGES, "uniform"), [1, 1, 1], rtol=1e-6
    )
    # inverse income at bin midpoints 5, 15 and the income 30: [2/5, 1/15, 1/30], total 0.5
    # -> G at the edges [1, 0.4, 4/15], averaged between edges: [0.7, 1/3], top 4/15
    gz = saez.binned_welfare_weights(INCOMES, EDGES, "inverse_income")
    np.testing.assert_allclose(gz, [0.7, 1 / 3, 4 / 15], rtol=1e-6)


def test_saez_rates_from_hand_made_distribution():
    gz = saez.binned_welfare_weights(INCOMES, EDGES, "inverse_income")
    az = saez.binned_pareto_params(INCOMES, EDGES)
    taus = saez.saez_marginal_rates(gz, az, elas=1.0)
    # tau = (1 - G) / (1 - G + A e): 0.3 / (0.3 + 1/3), (2/3) / (2/3 + 1), (11/15) / (11/15 + 3)
    np.testing.assert_allclose(
        taus, [0.3 / (0.3 + 1 / 3), 0.4, (11 / 15) / (11 / 15 + 3)], rtol=1e-6
    )


def test_saez_gaps_are_interpolated():
    gz = np.array([0.0, 0.5, 0.0, 0.0, 0.5])
    az = np.array([np.nan, 1.0, np.nan, np.nan, 1.0])
    taus = saez.saez_marginal_rates(gz, az, elas=1.0)
    # real rates 1/3 at 1 and 4; index 0 on the line from 0, indices 2, 3 on the flat line
    np.testing.assert_allclose(taus, [1 / 6, 1 / 3, 1 / 3, 1 / 3, 1 / 3], rtol=1e-6)


def test_bracketize_schedule_by_hand():
    bin_rates = np.array([0.1, 0.3, 0.5])
    sizes = np.array([10.0, 10.0, np.inf])
    cutoffs = np.array([0.0, 15.0])
    # bracket [0, 15): 0.1 * 10 + 0.3 * 5 = 2.5 over 15; the top bracket takes the top bin's rate
    got = saez.bracketize_schedule(bin_rates, EDGES, sizes, cutoffs, np.array([15.0, np.inf]))
    np.testing.assert_allclose(got, [2.5 / 15, 0.5])


def test_elasticity_estimate():
    taus = np.linspace(0.0, 0.8, 20)
    zs = np.exp(2.0) * (1 - taus) ** 0.4  # log z = 2 + 0.4 log(1 - tau)
    elas, log_z0 = saez.estimate_uniform_income_elasticity(np.stack([zs, taus], 1), 0.98, 0.5, 0.0)
    assert elas == pytest.approx(0.02 * 0.4 + 0.98 * 0.5)
    assert log_z0 == pytest.approx(2.0)
    # fewer than 10 usable samples, or no variation in the rates: the previous values
    assert saez.estimate_uniform_income_elasticity(np.stack([zs, taus], 1)[:9], 0.98, 0.3, 1.5) == (
        0.3,
        1.5,
    )
    flat = np.stack([zs, np.full(20, 0.2)], 1)
    assert saez.estimate_uniform_income_elasticity(flat, 0.98, 0.3, 1.5) == (0.3, 1.5)
    # a negative slope is clipped to 0
    falling = np.stack([np.exp(2.0) * (1 - taus) ** -1.0, taus], 1)
    assert saez.estimate_uniform_income_elasticity(falling, 0.98, 0.5, 0.0)[0] == pytest.approx(
        0.49
    )


def _saez_env(**kw):
    return foundation.make_env_instance(
        "one-step-economy",
        components=[
            ("SimpleLabor", {}),
            ("PeriodicBracketTax", {"period": 2, "tax_model": "saez", **kw}),
        ],
        n_agents=10,
        world_size=[1, 1],
        episode_length=2,
        seed=4,
    )


def test_saez_component_random_then_formula():
    env = _saez_env()
    tax = env.get_component("PeriodicTax")
    rng = np.random.default_rng(0)
    for _ in range(50):  # 50 episodes x 10 agents = the 500 samples the formula needs
        env.reset()
        env.step({})
        rates = tax.curr_marginal_rates
        assert np.all((rates >= 0) & (rates <= 1))
        env.step({str(i): int(rng.integers(1, 101)) for i in range(10)})
    assert len(tax.saez_buffer) == 500
    buffer = np.array(tax.saez_buffer)
    env.reset()
    env.step({})
    gz, az = tax.get_binned_saez_welfare_weight_and_pareto_params(buffer[:, 0])
    expected = tax.bracketize_schedule(
        tax.get_saez_marginal_rates(gz, az, tax.elas_t),
        tax._saez_income_bin_edges,
        tax._saez_income_bin_sizes,
    )
    np.testing.assert_allclose(tax.curr_marginal_rates, np.clip(expected, 0, 1))
    assert "PeriodicTax/saez/estimated_elasticity" in env.metrics


def test_global_saez_buffer():
    env = _saez_env()
    tax = env.get_component("PeriodicTax")
    env.reset()
    env.step({})
    env.step({str(i): 10 for i in range(10)})
    assert len(tax.get_local_saez_buffer()) == 10
    with pytest.raises(ValueError, match="fewer than the local buffer"):
        tax.set_global_saez_buffer([[1.0, 0.1]])
    merged = tax.get_local_saez_buffer() + [[5.0, 0.2]] * 10
    tax.set_global_saez_buffer(merged)
    assert len(tax.saez_buffer) == 20

"""The re-calibration on the synthetic fixture (always runs): each fit recovers the known
truth, the pieces agree with the simulator, the command writes the original schema."""

import json

import numpy as np
import pytest
from covid19_fit_helpers import FIXTURE, fixture_module, fixture_settings

from ai_economist.datasets.covid19 import fit as fit_cli
from ai_economist.datasets.covid19.fit_beta import (
    fit_beta_delay,
    fit_beta_regression,
    pooled_correlation,
    solve_box_qp,
)
from ai_economist.datasets.covid19.fit_data import FitError, load_fit_inputs
from ai_economist.datasets.covid19.fit_unemployment import (
    fit_unemployment,
    predict_unemployment,
)
from ai_economist.datasets.covid19.fit_weightages import fit_frontier_power, infer_alpha
from ai_economist.datasets.covid19.loader import default_calibration_path

TRUTH = json.loads((FIXTURE / "truth.json").read_text())


@pytest.fixture(scope="module")
def inputs():
    return load_fit_inputs(FIXTURE)


def test_committed_fixture_equals_its_generator(inputs):
    series, constants, truth = fixture_module().synthetic_source()
    assert json.loads((FIXTURE / "model_constants.json").read_text()) == constants
    assert TRUTH == json.loads(json.dumps(truth))
    for key, values in series.items():
        np.testing.assert_array_equal(inputs.series[key], values, err_msg=key)


def test_pooled_correlation_hand_values():
    assert pooled_correlation([1, 2, 3, np.nan], [2, 4, 6, 1]) == pytest.approx(1.0)
    assert pooled_correlation([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert np.isnan(pooled_correlation([1, 2], [1, 2]))  # fewer than 3 pairs


def test_box_qp_exact_with_and_without_active_bounds():
    hessian = np.array([[2.0, 0.0], [0.0, 4.0]])
    # unconstrained optimum (1, -0.5): the bound z2 >= 0 binds, z1 stays at 1
    z = solve_box_qp(hessian, np.array([-2.0, 2.0]), np.array([-np.inf, 0.0]), np.full(2, np.inf))
    np.testing.assert_allclose(z, [1.0, 0.0], atol=1e-12)
    z = solve_box_qp(hessian, np.array([-2.0, -2.0]), np.full(2, -np.inf), np.full(2, np.inf))
    np.testing.assert_allclose(z, [1.0, 0.5], atol=1e-12)


def test_beta_delay_and_regression_recover_the_truth(inputs):
    policy, beta = inputs.series["policy"], inputs.series["beta"]
    delay, r = fit_beta_delay(policy[:170], beta[:170])
    assert delay == TRUTH["BETA_DELAY"] and r.shape == (180,)
    fit = fit_beta_regression(policy, beta, delay, 139, 169, lam=1.0)
    np.testing.assert_allclose(fit.slopes, TRUTH["BETA_SLOPES"], atol=1e-3)
    np.testing.assert_allclose(fit.intercepts, TRUTH["BETA_INTERCEPTS"], atol=5e-3)
    assert fit.errors["train_r2"] > 0.95 and fit.errors["val_r2"] > 0.9
    assert (fit.slopes <= 0).all() and (fit.intercepts >= 0).all()


def test_beta_regression_holds_the_sign_bounds():
    """A state whose beta rises with stringency gets slope 0 (the bound), not a positive one."""
    policy = np.tile(np.arange(1, 11, dtype=float).repeat(5)[:, None], (1, 2))
    beta = np.full_like(policy, np.nan)  # beta one day after the policy
    beta[1:] = np.stack([0.3 - 0.02 * policy[:-1, 0], 0.1 + 0.01 * policy[:-1, 1]], axis=1)
    fit = fit_beta_regression(policy, beta, 1, 40, 48, lam=0.0)
    assert fit.slopes[0] == pytest.approx(-0.02, abs=1e-9)
    assert fit.slopes[1] == 0.0
    assert fit.intercepts[1] == pytest.approx(np.mean(beta[1:42, 1]), abs=1e-9)


def test_unemployment_prediction_equals_the_simulator():
    """The fit's model and the simulator's unemployment step give the same rates."""
    from ai_economist.foundation.scenarios.covid19.model import dynamics
    from ai_economist.foundation.scenarios.covid19.model.params import exact_filter_state

    rng = np.random.default_rng(0)
    policy = rng.integers(1, 11, size=(90, 3))
    weights, lambdas, bias = (
        rng.normal(size=(3, 2)),
        np.array([10.0, 50.0]),
        np.array([3.0, 4.0, 5.0]),
    )
    rates = predict_unemployment(policy, weights, lambdas, bias, filter_len=60)
    day = 80
    history = np.vstack([np.ones((1, 3)), policy])[day + 1 - 60 : day + 2]  # 61 rows to day 80
    state = exact_filter_state(history, lambdas)
    population = np.full(3, 100.0)
    unemployed = dynamics.unemployment_step(state, weights, bias, 1.0, population)
    np.testing.assert_allclose(rates[day], unemployed, rtol=1e-12)


def test_unemployment_fit_is_seeded_and_improves(inputs):
    policy, rate = inputs.series["policy"], inputs.series["unemployment"]
    kwargs = dict(filter_len=120, steps=25, lr=0.05)
    first = fit_unemployment(policy, rate, 139, 169, seed=3, **kwargs)
    again = fit_unemployment(policy, rate, 139, 169, seed=3, **kwargs)
    other = fit_unemployment(policy, rate, 139, 169, seed=4, **kwargs)
    np.testing.assert_array_equal(first.weights, again.weights)
    assert not np.array_equal(first.weights, other.weights)
    assert first.errors["train_mse"] < first.loss_history[0] / 2
    assert np.isfinite(first.errors["val_mse"])
    prediction = predict_unemployment(policy[:170], first.weights, first.lambdas, first.bias, 120)
    train_mse = np.nanmean((prediction[:140] - rate[:140]) ** 2)
    assert train_mse == pytest.approx(first.errors["train_mse"], rel=1e-9)


def test_fit_settings_defaults_are_the_notebook_ones():
    """The unemployment-fit defaults (taken from fit_unemployment's) and the other settings."""
    s = fit_cli.FitSettings().as_json()
    keys = ("FILTER_SIZE_UNEMPLOYMENT", "SIMILARITY_REGULARIZATION_UNEMPLOYMENT",
            "SIMILARITY_REGULARIZATION_SIR", "UNEMPLOYMENT_STEPS", "UNEMPLOYMENT_LR", "SEED",
            "DEVICE", "LAST_DATE_IN_TRAIN_SET", "LAST_DATE_IN_VAL_SET")  # fmt: skip
    assert [s[k] for k in keys] == [600, 0.5, 1.0, 350, 0.01, 0, "cpu", "2020-11-30", "2020-12-31"]


def test_frontier_and_alpha_hand_values():
    # the point (1/sqrt 2, 1/sqrt 2) lies on the circle (p = 2), whose optimum for alpha
    # is (alpha, 1 - alpha) / norm: alpha = 0.5 reaches it
    point = 2**-0.5
    assert fit_frontier_power(point, point) == pytest.approx(2.0, rel=1e-6)
    opened, closed = (0.0, 1.0), (1.0, 0.0)
    assert infer_alpha((point, point), closed, opened) == pytest.approx(0.5)
    # more health than economy on the frontier -> more weight on health
    assert infer_alpha((0.9, 0.3), closed, opened) > 0.5 > infer_alpha((0.3, 0.9), closed, opened)
    with pytest.raises(FitError, match="fully closed policy must give more health"):
        infer_alpha((0.5, 0.5), (0.0, 0.0), (1.0, 1.0))


def test_fit_calibration_writes_the_original_schema(inputs):
    fitted = fit_cli.fit_calibration(inputs, fixture_settings())
    keys = set(json.loads(json.dumps(fitted)))
    assert keys >= {
        "settings", "BETA_DELAY", "BETA_SLOPES", "BETA_INTERCEPTS", "POLICY_START_DATE",
        "FILTER_LEN", "CONV_LAMBDAS", "UNEMPLOYMENT_BIAS", "GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS",
        "VALUE_OF_LIFE", "INFERRED_WEIGHTAGE_ON_AGENT_HEALTH_INDEX",
        "INFERRED_WEIGHTAGE_ON_PLANNER_HEALTH_INDEX", "MAX_MARGINAL_AGENT_ECONOMIC_INDEX",
        "MIN_MARGINAL_AGENT_ECONOMIC_INDEX", "MAX_MARGINAL_AGENT_HEALTH_INDEX",
        "MIN_MARGINAL_AGENT_HEALTH_INDEX", "MAX_MARGINAL_PLANNER_ECONOMIC_INDEX",
        "MIN_MARGINAL_PLANNER_ECONOMIC_INDEX", "MAX_MARGINAL_PLANNER_HEALTH_INDEX",
        "MIN_MARGINAL_PLANNER_HEALTH_INDEX", "fit_report",
    }  # fmt: skip
    assert (
        fitted["BETA_DELAY"] == TRUTH["BETA_DELAY"] and fitted["POLICY_START_DATE"] == "2020-01-01"
    )
    assert np.shape(fitted["GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS"]) == (6 * 5, 1, 1)
    assert fitted["settings"]["LAST_DATE_IN_TRAIN_SET"] == "2020-05-19"
    assert fitted["settings"]["env"]["start_date"] == "2020-03-01"
    report = fitted["fit_report"]
    assert report["input_sha256"] == inputs.input_sha256
    assert set(report["unemployment"]) == {"train_mse", "val_mse"}
    assert {"train_r2", "val_r2", "train_mse", "val_mse"} <= set(report["beta_regression"])
    alphas = np.array(fitted["INFERRED_WEIGHTAGE_ON_AGENT_HEALTH_INDEX"])
    assert ((alphas >= 0) & (alphas <= 1)).all()
    # closed is healthier and poorer than open in every state
    assert (
        np.array(fitted["MAX_MARGINAL_AGENT_HEALTH_INDEX"])
        > fitted["MIN_MARGINAL_AGENT_HEALTH_INDEX"]
    ).all()
    assert (
        np.array(fitted["MAX_MARGINAL_AGENT_ECONOMIC_INDEX"])
        > fitted["MIN_MARGINAL_AGENT_ECONOMIC_INDEX"]
    ).all()


def test_command_writes_json_and_refuses_the_package(tmp_path, capsys):
    args = ["--source", str(FIXTURE), "--last_train_date", "2020-05-19", "--last_val_date",
            "2020-06-18", "--start_date", "2020-03-01", "--unemployment_steps", "30"]  # fmt: skip
    inside = default_calibration_path().parent / "fitted_params.json"
    assert fit_cli.main([*args, "--out", str(inside)]) == 2
    assert "never overwrites the packaged calibration" in capsys.readouterr().err
    assert not inside.exists()
    assert fit_cli.main([*args, "--out", str(FIXTURE / "fitted_params.json")]) == 2
    assert "overwrite the fitted_params.json of --source" in capsys.readouterr().err
    out = tmp_path / "fit" / "fitted_params.json"
    # the default 600-day filter is longer than the fixture's 200 days: allowed
    assert fit_cli.main([*args, "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["BETA_DELAY"] == TRUTH["BETA_DELAY"]
    assert written["settings"]["UNEMPLOYMENT_STEPS"] == 30
    assert f"wrote {out}" in capsys.readouterr().out


def _original_layout(folder):
    """The packaged calibration's data written out in the original layout (no ../shared)."""
    from ai_economist.datasets.covid19 import load_calibration

    cal = load_calibration("")
    folder.mkdir()
    np.savez(folder / "real_world_data.npz", **cal.real_world_data)
    constants = {
        k: v.tolist() if hasattr(v, "tolist") else v for k, v in cal.model_constants.items()
    }
    (folder / "model_constants.json").write_text(json.dumps(constants))
    return folder


def test_build_packages_a_fit_and_an_env_runs_on_it(tmp_path):
    from ai_economist import foundation
    from ai_economist.datasets.covid19 import load_calibration
    from ai_economist.datasets.covid19.build import build
    from ai_economist.datasets.covid19.loader import CalibrationError
    from ai_economist.foundation.scenarios.covid19.configs import TUTORIAL_ENV_CONFIG, env_config

    source = _original_layout(tmp_path / "data")
    refit = FIXTURE / "refit_of_original.json"
    with pytest.raises(CalibrationError, match="is the packaged calibration"):
        build(source, default_calibration_path(), fitted_params=refit)
    out = build(source, tmp_path / "my_calibration.npz", fitted_params=refit)
    cal = load_calibration(out)
    expected = json.loads(refit.read_text())
    np.testing.assert_array_equal(cal.fitted_params["CONV_LAMBDAS"], expected["CONV_LAMBDAS"])
    assert cal.provenance["fitted_params"] == str(refit)
    config = env_config(
        TUTORIAL_ENV_CONFIG, path_to_data_and_fitted_params=str(out), episode_length=5
    )
    env = foundation.make_env_instance("CovidAndEconomySimulation", **config)
    env.reset()
    _, rew, _, _ = env.step({"a": np.full(51, 3), "p": 0})
    assert np.isfinite(rew["a"]).all()
    np.testing.assert_array_equal(env.params.unemployment_bias, expected["UNEMPLOYMENT_BIAS"])


@pytest.mark.skipif(
    __import__("torch").cuda.is_available(),
    reason="a GPU is visible: test_covid19_fit_gpu.py runs the fit there",
)
def test_asking_for_a_gpu_without_one_is_an_error(inputs):
    with pytest.raises(FitError, match="device='cuda' was asked for, but PyTorch sees no CUDA GPU"):
        fit_unemployment(
            inputs.series["policy"], inputs.series["unemployment"], 139, 169, device="cuda", steps=1
        )

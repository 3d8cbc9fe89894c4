"""Bad input to the re-calibration: each error names the file, the series or the state, and
what was expected (on copies of the synthetic fixture)."""

import json

import numpy as np
import pytest
from covid19_fit_helpers import copy_fixture, fixture_settings

from ai_economist.datasets.covid19.fit import fit_calibration
from ai_economist.datasets.covid19.fit_data import FitError, load_fit_inputs


@pytest.fixture
def source(tmp_path):
    return copy_fixture(tmp_path / "data")


def edit_series(folder, edit):
    path = folder / "real_world_data.npz"
    with np.load(path) as npz:
        arrays = {k: npz[k] for k in npz.files}
    edit(arrays)
    np.savez(path, **arrays)


def fit(folder, **settings):
    return fit_calibration(load_fit_inputs(folder), fixture_settings(**settings))


def test_missing_series_names_file_and_series(source):
    edit_series(source, lambda a: a.pop("beta"))
    with pytest.raises(
        FitError, match=r"real_world_data.npz: missing series 'beta'.*\(num_days, 6\)"
    ):
        load_fit_inputs(source)


def test_renamed_series_is_pointed_out(source):
    edit_series(source, lambda a: a.update(Unemployment=a.pop("unemployment")))
    with pytest.raises(
        FitError, match=r"missing series 'unemployment' \(found \['Unemployment'\]: renamed\?\)"
    ):
        load_fit_inputs(source)


def test_missing_constant_names_the_key(source):
    path = source / "model_constants.json"
    constants = json.loads(path.read_text())
    del constants["SIR_GAMMA"]
    path.write_text(json.dumps(constants))
    with pytest.raises(FitError, match=r"model_constants.json: missing key\(s\) \['SIR_GAMMA'\]"):
        load_fit_inputs(source)


def test_dates_that_do_not_line_up(source):
    edit_series(source, lambda a: a.update(unemployment=a["unemployment"][5:]))
    with pytest.raises(
        FitError,
        match="dates do not line up: series 'unemployment' has 195 days but 'policy' has 200",
    ):
        load_fit_inputs(source)


def test_dates_outside_the_data_or_in_the_wrong_order(source):
    with pytest.raises(
        FitError,
        match=r"--last_val_date=2021-01-01 is outside the data .* 2020-01-01 \.\. 2020-07-18",
    ):
        fit(source, last_val_date="2021-01-01")
    with pytest.raises(
        FitError, match="--last_val_date=2020-05-01 must be after --last_train_date=2020-05-19"
    ):
        fit(source, last_val_date="2020-05-01")
    with pytest.raises(
        FitError, match="--last_train_date='19/05/2020' is not a date in the format '%Y-%m-%d'"
    ):
        fit(source, last_train_date="19/05/2020")


def test_a_state_without_data_is_named(source):
    def drop_state(arrays):
        arrays["beta"][:, 2] = np.nan

    edit_series(source, drop_state)
    with pytest.raises(FitError, match=r"series 'beta' has no data for state\(s\) \['Cockaigne'\]"):
        fit(source)


def test_nan_only_window(source):
    def blank(arrays):
        arrays["unemployment"][:150] = np.nan

    edit_series(source, blank)
    with pytest.raises(
        FitError,
        match="series 'unemployment' is NaN on every day of 2020-01-01 .. 2020-05-19 for every state",
    ):
        fit(source)


def test_training_window_shorter_than_the_delay_search(source):
    with pytest.raises(
        FitError,
        match=r"training window 2020-01-01 \.\. 2020-03-01 has 61 days; it must be longer than the beta-delay search \(delays -90\.\.89\)",
    ):
        fit(source, last_train_date="2020-03-01", last_val_date="2020-04-01")


def test_a_fit_that_does_not_converge(source):
    with pytest.raises(
        FitError,
        match=r"unemployment fit did not converge: the training MSE went from .* in 10 steps \(lr=1000000.0\)",
    ):
        fit(source, unemployment_lr=1e6, unemployment_steps=10)


def test_policy_with_gaps_names_the_state(source):
    def gap(arrays):
        arrays["policy"] = arrays["policy"].astype(float)
        arrays["policy"][10, 4] = np.nan

    edit_series(source, gap)
    with pytest.raises(FitError, match="series 'policy' has NaN days for Erewhon"):
        load_fit_inputs(source)


def test_a_broken_previous_fit_beside_the_data_is_named(source):
    (source / "fitted_params.json").write_text("{not json")
    with pytest.raises(FitError, match=r"fitted_params.json: not valid JSON"):
        load_fit_inputs(source)


def test_command_reports_an_alpha_start_without_data(source, tmp_path, capsys):
    from ai_economist.datasets.covid19.fit import main

    def blank(arrays):
        arrays["infected"][50:70] = np.nan

    edit_series(source, blank)
    args = ["--source", str(source), "--out", str(tmp_path / "fit.json"), "--last_train_date",
            "2020-05-19", "--last_val_date", "2020-06-18", "--start_date", "2020-03-01",
            "--unemployment_steps", "20"]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "infected" in err and "2020-03-01" in err
    assert not (tmp_path / "fit.json").exists()

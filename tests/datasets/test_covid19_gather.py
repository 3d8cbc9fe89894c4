"""The gather notebook's processing steps: hand values, the packaged data's derived arrays
reproduced from its raw series, and the readers of the four sources' CSV layouts."""

from datetime import date

import numpy as np
import pytest
from covid19_sources import write_sources

from ai_economist.datasets.covid19 import load_calibration
from ai_economist.datasets.covid19.fit_data import FitError, load_fit_inputs
from ai_economist.datasets.covid19.gather import (
    discretize_stringency,
    forward_fill,
    gaussian_kernel,
    gaussian_smooth,
    infer_sir,
    monthly_to_daily,
)
from ai_economist.datasets.covid19.gather_build import build_real_world_data, main
from ai_economist.datasets.covid19.gather_sources import read_bls_unemployment, read_oxcgrt


@pytest.fixture(scope="module")
def packaged():
    cal = load_calibration("")
    return cal.real_world_data, np.asarray(cal.model_constants["US_STATE_POPULATION"], float)


def test_discretize_hand_values():
    # edges 0, 11.1, ..., 100: the nearer edge's level; a tie (5.5 is not one) goes down
    values = np.array([0.0, 5.0, 5.6, 11.11, 50.0, 94.5, 100.0])
    np.testing.assert_array_equal(discretize_stringency(values), [1, 1, 2, 2, 5, 10, 10])
    tie = 100 / 9 / 2
    assert discretize_stringency(np.array([tie]))[0] == 1
    with pytest.raises(ValueError, match="forward_fill it first"):
        discretize_stringency(np.array([np.nan]))


def test_forward_fill_and_kernel():
    filled = forward_fill(np.array([[np.nan, 1.0], [2.0, np.nan], [np.nan, np.nan], [4.0, 5.0]]))
    np.testing.assert_array_equal(filled, [[np.nan, 1.0], [2.0, 1.0], [2.0, 1.0], [4.0, 5.0]])
    kernel = gaussian_kernel(10)
    assert kernel.shape == (61,) and kernel[30] == pytest.approx(1 / (10 * np.sqrt(2 * np.pi)))
    np.testing.assert_array_equal(kernel, kernel[::-1])
    assert kernel[0] == pytest.approx(kernel[30] * np.exp(-4.5))  # 3 std out


def test_smoothing_keeps_a_line_and_blanks_the_edges():
    line = np.arange(100.0)[:, None]
    smoothed = gaussian_smooth(line, std=10)
    assert np.isnan(smoothed[:30]).all() and np.isnan(smoothed[70:]).all()
    np.testing.assert_allclose(smoothed[30:70], line[30:70], atol=1e-9)  # symmetric kernel


def test_packaged_smoothed_deaths_and_sir_are_reproduced(packaged):
    real, population = packaged
    smoothed = gaussian_smooth(real["deaths"])
    np.testing.assert_array_equal(np.isnan(smoothed), np.isnan(real["smoothed_deaths"]))
    np.testing.assert_allclose(smoothed, real["smoothed_deaths"], rtol=1e-12)
    sir = infer_sir(real["smoothed_deaths"], real["vaccinated"], population)
    for key in ("susceptible", "infected", "recovered", "beta"):
        np.testing.assert_array_equal(np.isnan(sir[key]), np.isnan(real[key]), err_msg=key)
        np.testing.assert_allclose(sir[key], real[key], rtol=1e-12, atol=1e-9, err_msg=key)
    # straight from the raw deaths (smoothing included): beta within rounding
    beta = infer_sir(smoothed, real["vaccinated"], population)["beta"]
    np.testing.assert_allclose(beta, real["beta"], atol=1e-8)


def test_packaged_daily_unemployment_is_monthly(packaged):
    real, population = packaged
    days = [date.fromordinal(date(2020, 1, 1).toordinal() + n) for n in range(len(real["policy"]))]
    rate = real["unemployment"][:, 4]  # California
    monthly = {(d.year, d.month): rate[i] for i, d in enumerate(days) if np.isfinite(rate[i])}
    np.testing.assert_array_equal(monthly_to_daily(monthly, days), rate)
    np.testing.assert_allclose(
        real["unemployed"], real["unemployment"] * population / 100, rtol=1e-12
    )


def test_readers_and_build_from_the_four_layouts(tmp_path):
    folder = write_sources(tmp_path)
    stringency = read_oxcgrt(folder / "ox.csv")
    assert sorted(stringency) == ["Alabama", "District of Columbia", "New York"]  # NAT_GOV dropped
    rates = read_bls_unemployment(folder / "bls.txt")
    assert rates["New York"] == {(2020, 1): 4.6, (2020, 2): 5.6, (2020, 3): 6.6}  # M13, rate only
    series, constants = build_real_world_data(
        folder / "ox.csv", folder / "jhu.csv", folder / "owid.csv", folder / "bls.txt"
    )
    assert constants["US_STATE_POPULATION"] == [3000, 700, 5000]
    assert constants["POLICY_START_DATE"] == "2020-01-01" and series["policy"].shape == (70, 3)
    assert series["policy"][5, 0] == series["policy"][4, 0]  # the blank day forward-filled
    np.testing.assert_array_equal(
        series["policy"][:, 1], discretize_stringency(np.minimum(100, np.arange(70) * 1.5))
    )
    assert (
        np.isnan(series["deaths"][:21]).all() and series["deaths"][30, 0] == 9 * 3
    )  # counties summed
    vaccinated = series["vaccinated"][:, 2]  # New York: 0 on 02-01, 100 on 02-11, 0 outside
    assert (
        vaccinated[30] == 0
        and vaccinated[35] == pytest.approx(40)
        and vaccinated[41] == 100
        and vaccinated[42] == 0
    )
    assert series["unemployment"][45, 1] == pytest.approx(3.1)  # DC, February
    assert series["subsidy"].sum() == 0  # no payment day in range
    out = tmp_path / "built"
    assert main(["--oxcgrt", str(folder / "ox.csv"), "--jhu", str(folder / "jhu.csv"), "--owid",
                 str(folder / "owid.csv"), "--bls", str(folder / "bls.txt"), "--out", str(out)]) == 0  # fmt: skip
    inputs = load_fit_inputs(out)  # a fit's --source
    assert inputs.date(0) == "2020-01-01" and inputs.state_names[1] == "District of Columbia"


def test_a_missing_column_names_the_file_and_column(tmp_path):
    folder = write_sources(tmp_path)
    path = folder / "ox.csv"
    path.write_text(path.read_text().replace("StringencyIndex", "Stringency"))
    with pytest.raises(FitError, match=r"ox.csv: missing column\(s\) \['StringencyIndex'\]"):
        read_oxcgrt(path)


def test_a_state_missing_from_a_source_is_named(tmp_path):
    folder = write_sources(tmp_path)
    path = folder / "bls.txt"
    path.write_text(
        "\n".join(line for line in path.read_text().splitlines() if "LASST36" not in line) + "\n"
    )
    with pytest.raises(FitError, match=r"bls.txt: no unemployment for state\(s\) \['New York'\]"):
        build_real_world_data(folder / "ox.csv", folder / "jhu.csv", folder / "owid.csv", path)

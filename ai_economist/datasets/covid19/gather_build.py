"""Build ``real_world_data.npz`` and ``model_constants.json`` from local source files.

    python -m ai_economist.datasets.covid19.gather_build --oxcgrt OxCGRT_US_latest.csv \\
        --jhu time_series_covid19_deaths_US.csv --owid us_state_vaccinations.csv \\
        --bls bls_state_unemployment.csv --out DIR

the original ``gather_real_world_data.ipynb`` without downloads: the day index and the state
order (alphabetical) come from the OxCGRT file; then deaths, smoothing, vaccinations, the
SIR inference and the daily unemployment. ``DIR`` is then the ``--source`` of
``python -m ai_economist.datasets.covid19.fit``.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date, timedelta
from pathlib import Path

import numpy as np

from ai_economist.datasets.covid19 import gather, gather_sources
from ai_economist.datasets.covid19.fit_data import FitError

DIRECT_PAYMENTS = {date(2020, 4, 15): 274e9, date(2020, 12, 27): 142e9, date(2021, 3, 11): 386e9}
GDP_PER_CAPITA = 65300  # 2019, World Bank (as the original)


def _matrix(per_state: dict[str, dict], states: list[str], days: list, fill: float) -> np.ndarray:
    return np.array([[per_state.get(s, {}).get(d, fill) for s in states] for d in days])


def _interpolated_vaccinations(
    per_state: dict[str, dict], states: list[str], days: list
) -> np.ndarray:
    """Linear interpolation between each state's reported days; 0 outside them."""
    out = np.zeros((len(days), len(states)))
    ordinal = np.array([d.toordinal() for d in days])
    for i, state in enumerate(states):
        known = sorted(per_state.get(state, {}).items())
        if not known:
            continue
        x = np.array([d.toordinal() for d, _ in known])
        y = np.array([v for _, v in known])
        inside = (ordinal >= x[0]) & (ordinal <= x[-1])
        out[inside, i] = np.interp(ordinal[inside], x, y)
    return out


def build_real_world_data(oxcgrt: Path, jhu: Path, owid: Path, bls: Path) -> tuple[dict, dict]:
    """(real_world_data arrays, model_constants) from the four local files."""
    stringency = gather_sources.read_oxcgrt(oxcgrt)
    deaths, population = gather_sources.read_jhu_deaths(jhu)
    vaccinations = gather_sources.read_owid_vaccinations(owid)
    unemployment = gather_sources.read_bls_unemployment(bls)
    states = sorted(stringency)
    all_days = sorted({d for series in stringency.values() for d in series})
    days = [all_days[0] + timedelta(n) for n in range((all_days[-1] - all_days[0]).days + 1)]
    for name, source, per_state in (("deaths", jhu, deaths), ("unemployment", bls, unemployment)):
        missing = [s for s in states if s not in per_state]
        if missing:
            raise FitError(f"{source}: no {name} for state(s) {missing} (named as in {oxcgrt})")
    index = gather.forward_fill(_matrix(stringency, states, days, np.nan))
    if not np.isfinite(index).all():
        state = states[int(np.flatnonzero(~np.isfinite(index).all(axis=0))[0])]
        raise FitError(f"{oxcgrt}: no StringencyIndex on the first day(s) for {state}")
    pop = np.array([population[s] for s in states], dtype=np.float64)
    raw_deaths = _matrix(deaths, states, days, np.nan)
    smoothed = gather.gaussian_smooth(raw_deaths)
    vaccinated = _interpolated_vaccinations(vaccinations, states, days)
    rates = np.stack([gather.monthly_to_daily(unemployment[s], days) for s in states], axis=1)
    series = {
        "policy": gather.discretize_stringency(index),
        "subsidy": np.array([[DIRECT_PAYMENTS.get(d, 0.0)] for d in days]),
        "deaths": raw_deaths,
        "vaccinated": vaccinated,
        "smoothed_deaths": smoothed,
        **gather.infer_sir(smoothed, vaccinated, pop),
        "unemployment": rates,
        "unemployed": rates * pop / 100.0,
    }
    constants = {
        "DATE_FORMAT": "%Y-%m-%d",
        "STRINGENCY_POLICY_KEY": "StringencyIndex",
        "NUM_STRINGENCY_LEVELS": 10,
        "SIR_SMOOTHING_STD": gather.SIR_SMOOTHING_STD,
        "SIR_MORTALITY": gather.SIR_MORTALITY,
        "SIR_GAMMA": gather.SIR_GAMMA,
        "US_STATE_IDX_TO_STATE_NAME": {str(i): s for i, s in enumerate(states)},
        "US_STATE_POPULATION": [int(p) for p in pop],
        "US_POPULATION": int(pop.sum()),
        "GDP_PER_CAPITA": GDP_PER_CAPITA,
        "POLICY_START_DATE": days[0].isoformat(),
    }
    return series, constants


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("oxcgrt", "jhu", "owid", "bls"):
        parser.add_argument(f"--{name}", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path, help="folder to write")
    args = parser.parse_args(argv)
    try:
        series, constants = build_real_world_data(args.oxcgrt, args.jhu, args.owid, args.bls)
    except FitError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    np.savez(args.out / "real_world_data.npz", **series)
    (args.out / "model_constants.json").write_text(json.dumps(constants, indent=1) + "\n")
    print(f"wrote {args.out}: {len(series['policy'])} days from {constants['POLICY_START_DATE']}, "
          f"{len(constants['US_STATE_POPULATION'])} states")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

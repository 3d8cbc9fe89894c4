"""Readers of local CSV files in the four public sources' column layouts (no network).

Download the files yourself (the README's data section lists the URLs):

* OxCGRT ``OxCGRT_US_latest.csv``: ``RegionName``, ``Jurisdiction``, ``Date`` (YYYYMMDD),
  ``StringencyIndex`` (national rows, ``Jurisdiction == "NAT_GOV"``, are dropped;
  "Washington DC" becomes "District of Columbia");
* JHU CSSE ``time_series_covid19_deaths_US.csv``: ``Province_State``, ``Population`` and one
  column per day named ``m/d/yy`` (counties are summed per state);
* OWID ``us_state_vaccinations.csv``: ``date`` (YYYY-MM-DD), ``location``,
  ``people_fully_vaccinated`` ("New York State" becomes "New York");
* BLS LAU, one file for all states: ``series_id`` (``LASST{FIPS:02d}0000000000003``, the
  unemployment rate), ``year``, ``period`` (``M01``..``M12``; ``M13``, the annual average, is
  skipped), ``value`` (comma or tab separated, as the BLS flat files and downloads).

Each reader returns plain dictionaries keyed by state name; a missing column raises a
``FitError`` naming the file, the column and the columns found.
"""

from __future__ import annotations

import csv
from datetime import date, datetime
from pathlib import Path

from ai_economist.datasets.covid19.fit_data import FitError

# State FIPS codes (U.S. Census Bureau) of the 50 states and DC.
STATE_FIPS = {
    "Alabama": 1, "Alaska": 2, "Arizona": 4, "Arkansas": 5, "California": 6, "Colorado": 8,
    "Connecticut": 9, "Delaware": 10, "District of Columbia": 11, "Florida": 12, "Georgia": 13,
    "Hawaii": 15, "Idaho": 16, "Illinois": 17, "Indiana": 18, "Iowa": 19, "Kansas": 20,
    "Kentucky": 21, "Louisiana": 22, "Maine": 23, "Maryland": 24, "Massachusetts": 25,
    "Michigan": 26, "Minnesota": 27, "Mississippi": 28, "Missouri": 29, "Montana": 30,
    "Nebraska": 31, "Nevada": 32, "New Hampshire": 33, "New Jersey": 34, "New Mexico": 35,
    "New York": 36, "North Carolina": 37, "North Dakota": 38, "Ohio": 39, "Oklahoma": 40,
    "Oregon": 41, "Pennsylvania": 42, "Rhode Island": 44, "South Carolina": 45,
    "South Dakota": 46, "Tennessee": 47, "Texas": 48, "Utah": 49, "Vermont": 50,
    "Virginia": 51, "Washington": 53, "West Virginia": 54, "Wisconsin": 55, "Wyoming": 56,
}  # fmt: skip
RENAMES = {"Washington DC": "District of Columbia", "New York State": "New York"}


def _rows(path: Path, required: tuple[str, ...]) -> tuple[list[dict], list[str]]:
    path = Path(path)
    if not path.is_file():
        raise FitError(f"{path}: file not found")
    with path.open(newline="", encoding="utf-8-sig") as handle:
        sample = handle.read(4096)
        handle.seek(0)
        delimiter = "\t" if sample.count("\t") > sample.count(",") else ","
        reader = csv.DictReader(handle, delimiter=delimiter)
        columns = [c.strip() for c in (reader.fieldnames or [])]
        missing = [c for c in required if c not in columns]
        if missing:
            raise FitError(
                f"{path}: missing column(s) {missing}; expected {list(required)}, found {columns}"
            )
        rows = [{k.strip(): (v or "").strip() for k, v in row.items() if k} for row in reader]
    return rows, columns


def _number(path: Path, column: str, text: str) -> float:
    try:
        return float(text) if text else float("nan")
    except ValueError:
        raise FitError(f"{path}: column '{column}' has {text!r}; expected a number") from None


def read_oxcgrt(path: Path, key: str = "StringencyIndex") -> dict[str, dict[date, float]]:
    """State -> {day: stringency index} (NaN where the index is blank)."""
    rows, _ = _rows(path, ("RegionName", "Jurisdiction", "Date", key))
    out: dict[str, dict[date, float]] = {}
    for row in rows:
        if row["Jurisdiction"] == "NAT_GOV" or not row["RegionName"]:
            continue
        state = RENAMES.get(row["RegionName"], row["RegionName"])
        try:
            day = datetime.strptime(row["Date"], "%Y%m%d").date()
        except ValueError:
            raise FitError(
                f"{path}: column 'Date' has {row['Date']!r}; expected YYYYMMDD"
            ) from None
        out.setdefault(state, {})[day] = _number(path, key, row[key])
    return out


def read_jhu_deaths(path: Path) -> tuple[dict[str, dict[date, float]], dict[str, int]]:
    """(state -> {day: cumulative deaths}, state -> population), counties summed."""
    rows, columns = _rows(path, ("Province_State", "Population"))
    day_columns = {}
    for column in columns:
        try:
            day_columns[column] = datetime.strptime(column, "%m/%d/%y").date()
        except ValueError:
            continue
    if not day_columns:
        raise FitError(f"{path}: no day columns named m/d/yy (e.g. '1/22/20') among {columns[:12]}")
    deaths: dict[str, dict[date, float]] = {}
    population: dict[str, int] = {}
    for row in rows:
        state = row["Province_State"]
        population[state] = population.get(state, 0) + int(
            _number(path, "Population", row["Population"]) or 0
        )
        series = deaths.setdefault(state, {})
        for column, day in day_columns.items():
            series[day] = series.get(day, 0.0) + _number(path, column, row[column])
    return deaths, population


def read_owid_vaccinations(path: Path) -> dict[str, dict[date, float]]:
    """State -> {day: people fully vaccinated} (blank values left out)."""
    rows, _ = _rows(path, ("date", "location", "people_fully_vaccinated"))
    out: dict[str, dict[date, float]] = {}
    for row in rows:
        state = RENAMES.get(row["location"], row["location"])
        value = _number(path, "people_fully_vaccinated", row["people_fully_vaccinated"])
        if value == value:  # not NaN
            day = datetime.strptime(row["date"], "%Y-%m-%d").date()
            out.setdefault(state, {})[day] = value
    return out


def read_bls_unemployment(path: Path) -> dict[str, dict[tuple[int, int], float]]:
    """State -> {(year, month): unemployment rate in %} from LAU state rate series."""
    rows, _ = _rows(path, ("series_id", "year", "period", "value"))
    by_fips = {fips: state for state, fips in STATE_FIPS.items()}
    out: dict[str, dict[tuple[int, int], float]] = {}
    for row in rows:
        series = row["series_id"]
        if not (series.startswith("LASST") and series.endswith("03") and len(series) == 20):
            continue
        state = by_fips.get(int(series[5:7]))
        period = row["period"]
        if state is None or not period.startswith("M") or period == "M13":
            continue
        out.setdefault(state, {})[(int(row["year"]), int(period[1:]))] = _number(
            path, "value", row["value"]
        )
    return out

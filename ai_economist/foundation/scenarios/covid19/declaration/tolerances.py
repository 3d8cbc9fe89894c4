"""The COVID-19 scenario's parity tolerances: GPU kernels (float32) against the float64 model.

Float32 tolerances (a value passes when |gpu - ref| <= atol + rtol * |ref|; the pairs are in
``TOLERANCES``). The device stores every value in float32 (relative rounding 6e-8) and carries
that rounding forward through running sums over up to 540 days, e.g. S_t = S_0 - sum of daily
infections and vaccinations: relative errors stay below ~1e-5 (rtol = 1e-4), but the ABSOLUTE
error of such a sum is set by its largest past value, not by its current one. Hence:

* people counts: atol = 1e-5 x the state's population (S can fall from 4e7 to a few hundred
  while keeping the +-20 people of float32 rounding it accumulated on the way); new deaths
  (= death_rate x gamma x I_{t-1}): 1e-7 x population;
* observations: atol 1e-5 (they include people / population);
* per-step rewards: atol 1e-4 (min-max normalisation divides by spreads as small as 2e-4);
* episode sums of the normalised indices (health/economic index): atol 5e-3, i.e. 1e-5 per
  day over 540 days; a small state's marginal health index is its new deaths x 2.5e-4 / 1e-3,
  so the float32 error of I (a few people) shifts it by ~1e-5 per day, with a steady sign;
* unemployment filter states: atol 1e-4 (sums of integer level changes that can cancel to 0).

Integer fields, masks, time and done must match exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

PEOPLE = ("susceptible", "infected", "recovered", "vaccinated", "deaths", "unemployed")
#: field -> (rtol, atol); a string atol "<x> * population" scales with each state's population.
TOLERANCES: dict[str, tuple[float, float | str]] = {
    **{name: (1e-4, "1e-5 * population") for name in PEOPLE},
    "new_deaths": (1e-4, "1e-7 * population"),
    "productivity": (1e-4, 1.0),
    "postsubsidy_productivity": (1e-4, 1.0),
    "subsidy": (1e-5, 1.0),
    "vaccines_available": (1e-6, 0.0),
    "filter_state": (1e-4, 1e-4),
    "health_index": (1e-4, 5e-3),
    "economic_index": (1e-4, 5e-3),
    "planner_health_index": (1e-4, 5e-3),
    "planner_economic_index": (1e-4, 5e-3),
    "rewards_a": (1e-4, 1e-4),
    "rewards_p": (1e-4, 1e-4),
    "observations_a": (1e-4, 1e-5),
    "observations_p": (1e-4, 1e-5),
    # set from float64 host values: float32 rounding only
    "beta_intercept_modulation": (1e-7, 0.0),
    "beta_slope_modulation": (1e-7, 0.0),
    "unemployment_modulation": (1e-7, 0.0),
}
DEFAULT_TOLERANCE = (1e-4, 1e-6)
EXACT = (
    "stringency_level", "cooldown_until", "stringency_history", "subsidy_level",
    "action_mask_a", "action_mask_p", "_timestep_", "_done_",
)  # fmt: skip


def field_tolerance(name: str, population=None, tolerance=None) -> tuple[float, Any]:
    """``(rtol, atol)`` of field ``name``: ``(0, 0)`` for the exact fields, else ``tolerance``
    or its ``TOLERANCES`` entry (default ``DEFAULT_TOLERANCE``), a ``"<x> * population"`` atol
    resolved to ``x * population`` (per state)."""
    if name in EXACT:
        return 0.0, 0.0
    rtol, atol = tolerance or TOLERANCES.get(name, DEFAULT_TOLERANCE)
    if isinstance(atol, str):
        if population is None:
            raise ValueError(f"{name}: the tolerance {atol!r} needs the population")
        atol = float(atol.split("*")[0]) * np.asarray(population, dtype=np.float64)
    return rtol, atol

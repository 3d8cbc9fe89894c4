"""COVID-19's own evaluation plots, offered to ``ai_economist.training.evaluate`` through the
scenario's hooks (``evaluation_snapshot``, ``evaluation_level_plots``,
``write_evaluation_plots``): the stringency and subsidy levels in effect each day instead of
action indices, and the US totals of infections, deaths, unemployment, vaccinations,
stringency and subsidies (``covid_state.png``)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ai_economist.plotting import LevelPlot, pyplot

COVID_PANELS = ("Infected", "Deaths", "Unemployed", "Vaccinated", "Stringency Level", "Subsidy")
COVID_UNITS = {
    "Infected": "people",
    "Deaths": "people",
    "Unemployed": "people",
    "Vaccinated": "people",
    "Stringency Level": "level (1 = open, 10 = closed)",
    "Subsidy": "USD per day",
}


def scenario_global_state(scenario: Any) -> dict | None:
    """A copy of the scenario's global state (per-day arrays), if it has one."""
    state = getattr(getattr(scenario, "world", None), "global_state", None)
    keys = (*COVID_PANELS, "Subsidy Level")
    if not isinstance(state, dict) or not all(k in state for k in keys):
        return None
    return {k: copy.deepcopy(state[k]) for k in keys}


def covid_level_plots(scenario: Any, state: dict | None) -> dict[str, LevelPlot] | None:
    """The states' stringency level and the planner's subsidy level in effect each day (day 0
    is the reset), with their ranges, for ``evaluate.write_plots``; None without a state."""
    if state is None:
        return None
    import numpy as np

    levels = scenario.params.num_stringency_levels
    subsidies = scenario.component_params().num_subsidy_levels
    names = list(getattr(scenario.params, "state_names", []) or []) or None
    return {
        "a": LevelPlot(np.asarray(state["Stringency Level"]),
                       f"stringency level (1 = open, {levels} = closed)", 1, levels, names,
                       "stringency level of every state each day (policy a)"),
        "p": LevelPlot(np.asarray(state["Subsidy Level"])[:, :1],
                       f"subsidy level (0 = none, {subsidies} = full)", 0, subsidies,
                       title="federal subsidy level each day (policy p)"),
    }  # fmt: skip


def write_state_plots(state: dict | None, out_dir: Path) -> list[Path]:
    """US totals (means for levels) of the global state over the episode just played
    (``covid_state.png``); nothing without matplotlib."""
    if state is None:
        return []
    plt = pyplot()
    if plt is None:
        return []
    import numpy as np

    fig, axes = plt.subplots(2, 3, figsize=(14, 7))
    for ax, key in zip(axes.flat, COVID_PANELS, strict=True):
        values = np.asarray(state[key], dtype=float)
        series = values.mean(-1) if "Level" in key else values.sum(-1)
        ax.plot(series)
        ax.set(title=f"{key} ({'mean' if 'Level' in key else 'sum'} over states)", xlabel="day",
               ylabel=COVID_UNITS[key])  # fmt: skip
        if "Level" in key:
            ax.set_ylim(0.5, 10.5)
    fig.tight_layout()
    path = out_dir / "covid_state.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]

"""Agent states and episode metrics of the COVID-19 scenario (the Foundation-facing view)."""

from __future__ import annotations

from typing import Any

import numpy as np

#: The per-env end-of-episode metrics, in the order of the ``episode_metrics`` device array.
EPISODE_METRIC_NAMES = (
    "usa/deaths (thousands)",
    "usa/vaccinated (% of population)",
    "usa/health_index_at_end_of_episode",
    "usa/economic_index_at_end_of_episode",
)


def episode_metric_values(
    deaths: Any,
    vaccinated: Any,
    planner_health_index: Any,
    planner_economic_index: Any,
    us_population: float,
) -> list[Any]:
    """The end-of-episode metrics (``EPISODE_METRIC_NAMES``) per env, from the state arrays.

    ``deaths`` and ``vaccinated`` have the states on the last axis; leading (env) axes are
    kept. Works on numpy arrays and torch tensors alike (the host definition every backend
    uses; the kernels' ``record_episode_end`` in ``covid19_env_step.cu`` and
    ``kernels/covid19_numba_scenario.py`` mirrors it, on the step that ends an episode).
    """
    return [
        deaths.sum(-1) / 1e3,
        vaccinated.sum(-1) / us_population * 100.0,
        planner_health_index,
        planner_economic_index,
    ]


AGENT_TOTALS = (
    ("Total Susceptible", "susceptible"),
    ("Total Infected", "infected"),
    ("Total Recovered", "recovered"),
    ("Total Deaths", "deaths"),
    ("Total Vaccinated", "vaccinated"),
    ("Total Unemployed", "unemployed"),
)


class LiveAgentState(dict):
    """An agent's ``state`` dict whose COVID-19 keys read the simulation when accessed.

    The original wrote ~12 values into each of the 52 agents' dicts every step; here those
    keys (``Total Infected``, ``Health Index``, ``Date``, ...) are computed on access from the
    simulation arrays, so stepping costs nothing for them.  ``copy``/``deepcopy`` (used by
    dense logs) return a plain dict snapshot.  Other keys behave as in a normal dict.
    """

    def __init__(self, base: dict, read, live_keys: tuple[str, ...]) -> None:
        super().__init__(base)
        self._read = read
        self._live = frozenset(live_keys)
        for key in live_keys:
            dict.__setitem__(self, key, None)

    def __getitem__(self, key):
        if key in self._live:
            return self._read(key)
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def items(self):
        return [(key, self[key]) for key in self]

    def values(self):
        return [self[key] for key in self]

    def copy(self) -> dict:
        return {key: self[key] for key in self}

    def __deepcopy__(self, memo) -> dict:
        import copy

        return copy.deepcopy(self.copy(), memo)

    def __reduce__(self):
        return (dict, (self.copy(),))

    def __repr__(self) -> str:
        return repr(self.copy())

    def __eq__(self, other) -> bool:
        return self.copy() == other

    __hash__ = None


AGENT_LIVE_KEYS = tuple(key for key, _ in AGENT_TOTALS) + (
    "New Infections",
    "New Deaths",
    "New Subsidy Received",
    "Postsubsidy Productivity",
    "Health Index",
    "Economic Index",
    "Vaccines Available",
    "Current Open Close Stringency Level",
    "Date",
)
PLANNER_LIVE_KEYS = AGENT_LIVE_KEYS[:-3] + ("New Subsidy Provided", "Date")


def _agent_reader(env, i: int):
    totals = dict(AGENT_TOTALS)

    def read(key: str):
        sim = env.world.simulation
        if key in totals:
            return int(getattr(sim, totals[key])[0, i])
        if key == "Date":
            return env.date_strings[env.world.timestep]
        if key == "Current Open Close Stringency Level":
            return int(sim.stringency_level[0, i])
        return float(
            {
                "New Infections": lambda: env._new_infections[i],
                "New Deaths": lambda: env._new_deaths[i],
                "New Subsidy Received": lambda: sim.subsidy[0, i],
                "Postsubsidy Productivity": lambda: sim.postsubsidy_productivity[0, i],
                "Health Index": lambda: sim.health_index[0, i],
                "Economic Index": lambda: sim.economic_index[0, i],
                "Vaccines Available": lambda: sim.vaccines_available[0, i],
            }[key]()
        )

    return read


def _planner_reader(env):
    totals = dict(AGENT_TOTALS)

    def read(key: str):
        sim = env.world.simulation
        if key in totals:
            return int(np.floor(getattr(sim, totals[key])[0]).sum())
        if key == "Date":
            return env.date_strings[env.world.timestep]
        return float(
            {
                "New Infections": lambda: np.sum(env._new_infections),
                "New Deaths": lambda: np.sum(env._new_deaths),
                "New Subsidy Received": lambda: sim.subsidy[0].sum(),
                "New Subsidy Provided": lambda: sim.subsidy[0].sum(),
                "Postsubsidy Productivity": lambda: sim.postsubsidy_productivity[0].sum(),
                "Health Index": lambda: sim.planner_health_index[0],
                "Economic Index": lambda: sim.planner_economic_index[0],
            }[key]()
        )

    return read


def install_live_states(env) -> None:
    """Give every agent and the planner a :class:`LiveAgentState` (once)."""
    for i, agent in enumerate(env.world.agents):
        if not isinstance(agent.state, LiveAgentState):
            agent.state = LiveAgentState(agent.state, _agent_reader(env, i), AGENT_LIVE_KEYS)
    planner = env.world.planner
    if not isinstance(planner.state, LiveAgentState):
        planner.state = LiveAgentState(planner.state, _planner_reader(env), PLANNER_LIVE_KEYS)


def scenario_metrics(env) -> dict[str, float]:
    """Per-state and US-wide metrics of the episode so far (415 keys for 51 states)."""
    gs, t = env.world.global_state, env.world.timestep
    p = env.params
    sim = env.world.simulation
    population = p.population
    metrics: dict[str, float] = {}
    steps = slice(1, t + 1) if t > 0 else slice(0, 1)
    unemployment_rate = gs["Unemployed"][steps] / population * 100
    stringency = gs["Stringency Level"][steps]
    productivity = gs["Postsubsidy Productivity"][steps]
    for i, name in enumerate(p.state_names):
        metrics[f"{name}/infected (millions)"] = float(gs["Infected"][t, i]) / 1e6
        metrics[f"{name}/recovered (millions)"] = float(gs["Recovered"][t, i]) / 1e6
        metrics[f"{name}/deaths (millions)"] = float(gs["Deaths"][t, i]) / 1e6
        metrics[f"{name}/mean_unemployment_rate (%)"] = float(unemployment_rate[:, i].mean())
        metrics[f"{name}/mean_open_close_stringency_level"] = float(stringency[:, i].mean())
        metrics[f"{name}/total_productivity (billion $)"] = float(productivity[:, i].sum()) / 1e9
        metrics[f"{name}/health_index_at_end_of_episode"] = float(sim.health_index[0, i])
        metrics[f"{name}/economic_index_at_end_of_episode"] = float(sim.economic_index[0, i])
    us_unemployed = gs["Unemployed"][steps].astype(np.float64).sum(axis=1)
    episode = episode_metric_values(
        gs["Deaths"][t].astype(np.float64),
        gs["Vaccinated"][t].astype(np.float64),
        sim.planner_health_index[0],
        sim.planner_economic_index[0],
        p.us_population,
    )
    metrics.update((name, float(v)) for name, v in zip(EPISODE_METRIC_NAMES, episode))
    metrics["usa/mean_unemployment_rate (%)"] = (
        float((us_unemployed / p.us_population).mean()) * 100
    )
    metrics["usa/total_amount_subsidized (trillion $)"] = (
        float(gs["Subsidy"][steps].astype(np.float64).sum()) / 1e12
    )
    metrics["usa/total_productivity (trillion $)"] = (
        float(productivity.astype(np.float64).sum()) / 1e12
    )
    return metrics

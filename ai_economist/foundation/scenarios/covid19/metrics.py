"""Agent states and episode metrics of the COVID-19 scenario (the Foundation-facing view)."""

from __future__ import annotations

import numpy as np

AGENT_TOTALS = (
    ("Total Susceptible", "susceptible"),
    ("Total Infected", "infected"),
    ("Total Recovered", "recovered"),
    ("Total Deaths", "deaths"),
    ("Total Vaccinated", "vaccinated"),
    ("Total Unemployed", "unemployed"),
)


def publish_agent_states(env, reset: bool = False) -> None:
    """Write the simulation state into every agent's and the planner's ``state`` dict."""
    sim = env.world.simulation
    agents, planner = env.world.agents, env.world.planner
    date = env.current_date.strftime("%Y-%m-%d")
    columns = {key: getattr(sim, attr)[0].astype(np.int64) for key, attr in AGENT_TOTALS}
    columns["New Infections"] = np.asarray(env._new_infections, dtype=np.float64)
    columns["New Deaths"] = np.asarray(env._new_deaths, dtype=np.float64)
    columns["New Subsidy Received"] = sim.subsidy[0]
    columns["Postsubsidy Productivity"] = sim.postsubsidy_productivity[0]
    if reset:
        columns["Health Index"] = np.zeros(len(agents))
        columns["Economic Index"] = np.zeros(len(agents))
    for key, values in columns.items():
        for agent, value in zip(agents, values.tolist()):
            agent.state[key] = value
        planner.state[key] = (
            float(np.sum(values)) if key not in ("Health Index", "Economic Index") else 0.0
        )
    for agent in agents:
        agent.state["Date"] = date
        agent.state["Vaccines Available"] = 0
    planner.state["Date"] = date
    planner.state["New Subsidy Provided"] = float(sim.subsidy[0].sum())


def publish_indices(env) -> None:
    """Accumulated normalised health and economic indices into the agents' states."""
    sim = env.world.simulation
    for agent, health, economic in zip(
        env.world.agents, sim.health_index[0].tolist(), sim.economic_index[0].tolist()
    ):
        agent.state["Health Index"] = health
        agent.state["Economic Index"] = economic
    env.world.planner.state["Health Index"] = float(sim.planner_health_index[0])
    env.world.planner.state["Economic Index"] = float(sim.planner_economic_index[0])


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
    metrics["usa/vaccinated (% of population)"] = (
        float(gs["Vaccinated"][t].sum()) / p.us_population * 100
    )
    metrics["usa/deaths (thousands)"] = float(gs["Deaths"][t].astype(np.float64).sum()) / 1e3
    metrics["usa/mean_unemployment_rate (%)"] = (
        float((us_unemployed / p.us_population).mean()) * 100
    )
    metrics["usa/total_amount_subsidized (trillion $)"] = (
        float(gs["Subsidy"][steps].astype(np.float64).sum()) / 1e12
    )
    metrics["usa/total_productivity (trillion $)"] = (
        float(productivity.astype(np.float64).sum()) / 1e12
    )
    metrics["usa/health_index_at_end_of_episode"] = float(sim.planner_health_index[0])
    metrics["usa/economic_index_at_end_of_episode"] = float(sim.planner_economic_index[0])
    return metrics

"""How a COVID-19 policy responds to the epidemic: a day-by-day trace of one episode, a
monthly table, "is it a constant?" measures and plots.

A :class:`PolicyTrace` holds what was in effect each day of one episode (every state's
stringency level, the planner's subsidy level) beside the epidemic it met (infected,
vaccinated and dead fractions of each state's population, unemployment) and the rewards.
:func:`record_trace` plays trained policy models (greedy or sampled) on the batched numpy
model of one env; :func:`trace_from_schedule` plays a fixed schedule, which is how the tests
get traces with known answers.  Everything else is numpy over the trace:

* :func:`constancy`: per state, the number of distinct stringency levels and of level changes;
  for the planner, the same for subsidy levels.  A policy is *constant* when every state holds
  one level and the planner one subsidy level all episode.
* :func:`response`: how the stringency moves with infections and vaccinations (the Pearson
  correlation over days, per state, where the state changed its level).
* :func:`monthly_table` / :func:`format_report`: means per 30 days, as text.
* :func:`write_response_plots`: ``policy_response.png`` (matplotlib, the ``plot`` extra).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.plotting import pyplot


@dataclass(frozen=True)
class PolicyTrace:
    """One episode, day by day (row ``t`` is the state after day ``t + 1``'s step).

    Arrays are ``(T, A)`` per state or ``(T,)``; fractions are of each state's population.
    """

    stringency: np.ndarray  # (T, A) level in effect, 1 (open) .. 10 (closed)
    subsidy: np.ndarray  # (T,) planner's subsidy level in effect, 0 .. num_subsidy_levels
    infected: np.ndarray  # (T, A) fraction currently infected
    vaccinated: np.ndarray  # (T, A) fraction vaccinated
    deaths: np.ndarray  # (T, A) fraction dead (cumulative)
    unemployed: np.ndarray  # (T, A) fraction unemployed
    planner_reward: np.ndarray  # (T,)
    state_rewards: np.ndarray  # (T, A)
    population: np.ndarray  # (A,)
    state_names: tuple[str, ...] = ()

    @property
    def days(self) -> int:
        return len(self.subsidy)

    def us(self, field: str) -> np.ndarray:
        """(T,) the US fraction of ``field`` (infected, vaccinated, deaths, unemployed)."""
        return (getattr(self, field) * self.population).sum(axis=1) / self.population.sum()


def _snapshot(sim, env: int = 0) -> tuple[np.ndarray, ...]:
    population = np.asarray(sim.params.population, dtype=np.float64)
    return (
        np.array(sim.stringency_level[env], dtype=np.int64),
        int(np.asarray(sim.subsidy_level).reshape(-1)[env]),
        *(np.asarray(getattr(sim, k)[env], dtype=np.float64) / population
          for k in ("infected", "vaccinated", "deaths", "unemployed")),
    )  # fmt: skip


def _trace(
    rows: list[tuple], planner: list[float], states: list[np.ndarray], params
) -> PolicyTrace:
    columns = list(zip(*rows, strict=True))
    return PolicyTrace(
        stringency=np.stack(columns[0]),
        subsidy=np.array(columns[1], dtype=np.int64),
        infected=np.stack(columns[2]),
        vaccinated=np.stack(columns[3]),
        deaths=np.stack(columns[4]),
        unemployed=np.stack(columns[5]),
        planner_reward=np.array(planner, dtype=np.float64),
        state_rewards=np.stack(states).astype(np.float64),
        population=np.asarray(params.population, dtype=np.float64),
        state_names=tuple(getattr(params, "state_names", ()) or ()),
    )


def trace_from_schedule(env: Any, stringency: np.ndarray, subsidy: np.ndarray) -> PolicyTrace:
    """The trace of a fixed schedule on the float64 array model of ``env`` (a
    ``CovidAndEconomyEnvironment``): ``stringency`` (T, A) actions (0 keeps the level),
    ``subsidy`` (T,) planner actions."""
    from ai_economist.foundation.scenarios.covid19.model.simulation import CovidSimulation

    stringency, subsidy = np.asarray(stringency, np.int64), np.asarray(subsidy, np.int64)
    if stringency.shape != (env.episode_length, env.params.num_agents) or subsidy.shape != (
        env.episode_length,
    ):
        raise ValueError(
            f"schedule shapes {stringency.shape} and {subsidy.shape}: expected "
            f"({env.episode_length}, {env.params.num_agents}) and ({env.episode_length},)"
        )
    sim = CovidSimulation(env.params, env.component_params(), 1)
    rows, planner, states = [], [], []
    for t in range(env.episode_length):
        agent_rewards, planner_rewards = sim.step(stringency[t][None], subsidy[t : t + 1].copy())
        rows.append(_snapshot(sim))
        planner.append(float(planner_rewards[0]))
        states.append(agent_rewards[0])
    return _trace(rows, planner, states, env.params)


def record_trace(models: dict, env_config: dict, greedy: bool = True, seed: int = 0) -> PolicyTrace:
    """The trace of trained policy models (``{tag: model}``, CPU) on one env of the numpy
    backend: the most likely allowed actions (``greedy``) or draws from a generator seeded
    with ``seed``.  Needs torch."""
    import torch

    from ai_economist import foundation
    from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
    from ai_economist.warp_drive.training.models import greedy_masked, sample_masked

    env = foundation.make_env_instance("CovidAndEconomySimulation", **env_config)
    wrapper = FoundationEnvWrapper(env, num_envs=1, env_backend="numpy")
    wrapper.reset_all_envs()
    sim, generator = wrapper.backend.sim, torch.Generator().manual_seed(seed)
    rows, planner, states = [], [], []
    with torch.no_grad():
        for _ in range(wrapper.episode_length):
            for tag, model in models.items():
                logits, _ = model(wrapper.observations(tag).float())
                mask = wrapper.action_masks(tag)
                if greedy:
                    actions = greedy_masked(logits, mask)
                else:
                    actions = sample_masked(logits, mask, generator)[0]
                wrapper.actions(tag).copy_(actions.to(wrapper.actions(tag).dtype))
            wrapper.step_all_envs()
            rows.append(_snapshot(sim))
            planner.append(float(wrapper.rewards("p")[0, 0]))
            states.append(wrapper.rewards("a")[0].numpy().copy())
    return _trace(rows, planner, states, env.params)


def _changes(levels: np.ndarray) -> np.ndarray:
    """Number of day-to-day changes along axis 0."""
    return (np.diff(levels, axis=0) != 0).sum(axis=0)


def _distinct(levels: np.ndarray) -> np.ndarray:
    """Number of distinct values along axis 0 (per column)."""
    ordered = np.sort(levels, axis=0)
    return 1 + (np.diff(ordered, axis=0) != 0).sum(axis=0)


def constancy(trace: PolicyTrace) -> dict[str, Any]:
    """ "Is it a constant?": distinct levels and changes per state and for the subsidy.

    Returns a JSON-ready dict: per state ``distinct_levels`` and ``changes`` (lists in state
    order), their means and maxima, ``constant_states`` (states holding one level all
    episode), the subsidy's ``subsidy_distinct_levels`` and ``subsidy_changes``, and
    ``is_constant`` (every state and the planner hold one level)."""
    distinct, changes = _distinct(trace.stringency), _changes(trace.stringency)
    subsidy_distinct = int(_distinct(trace.subsidy[:, None])[0])
    constant_states = int((distinct == 1).sum())
    return {
        "distinct_levels": distinct.tolist(),
        "changes": changes.tolist(),
        "mean_distinct_levels": float(distinct.mean()),
        "max_distinct_levels": int(distinct.max()),
        "mean_changes": float(changes.mean()),
        "max_changes": int(changes.max()),
        "constant_states": constant_states,
        "levels_used": sorted({int(v) for v in np.unique(trace.stringency)}),
        "subsidy_distinct_levels": subsidy_distinct,
        "subsidy_changes": int(_changes(trace.subsidy[:, None])[0]),
        "is_constant": constant_states == trace.stringency.shape[1] and subsidy_distinct == 1,
    }


def _correlation(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson correlation along axis 0 of (T, A) arrays; NaN where either is constant."""
    x, y = x - x.mean(axis=0), y - y.mean(axis=0)
    denominator = np.sqrt((x * x).sum(axis=0) * (y * y).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (x * y).sum(axis=0) / denominator, np.nan)


def response(trace: PolicyTrace) -> dict[str, Any]:
    """How the stringency moves with infections and vaccinations over the episode.

    ``corr_*_states``: per state, the correlation over days of its stringency level with its
    infected (vaccinated) fraction, averaged over the states that changed their level (None
    when none did); ``corr_*_mean``: the same for the states' mean level against the US
    fractions.  Positive with infections and negative with vaccinations is the expected
    response (close when infections rise, open as vaccines arrive)."""
    level = trace.stringency.astype(np.float64)
    out: dict[str, Any] = {}
    for name in ("infected", "vaccinated"):
        per_state = _correlation(level, getattr(trace, name))
        out[f"corr_{name}_states"] = (
            float(np.nanmean(per_state)) if np.isfinite(per_state).any() else None
        )
        mean = _correlation(level.mean(axis=1)[:, None], trace.us(name)[:, None])[0]
        out[f"corr_{name}_mean"] = float(mean) if np.isfinite(mean) else None
    return out


def monthly_table(trace: PolicyTrace, days: int = 30) -> list[dict[str, float]]:
    """One row per ``days`` days: the first day, the states' mean, lowest and highest
    stringency level, the mean subsidy level, US infected, vaccinated and unemployed % (means
    over the days) and deaths % at the end, and the planner's reward over those days."""
    rows = []
    us = {k: trace.us(k) * 100 for k in ("infected", "vaccinated", "deaths", "unemployed")}
    for start in range(0, trace.days, days):
        part = slice(start, min(start + days, trace.days))
        levels = trace.stringency[part]
        rows.append({
            "day": start + 1,
            "stringency_mean": float(levels.mean()),
            "stringency_min": int(levels.min()),
            "stringency_max": int(levels.max()),
            "subsidy_mean": float(trace.subsidy[part].mean()),
            "infected_pct": float(us["infected"][part].mean()),
            "vaccinated_pct": float(us["vaccinated"][part].mean()),
            "unemployed_pct": float(us["unemployed"][part].mean()),
            "deaths_pct": float(us["deaths"][part][-1]),
            "planner_reward": float(trace.planner_reward[part].sum()),
        })  # fmt: skip
    return rows


def summary(trace: PolicyTrace, days: int = 30) -> dict[str, Any]:
    """A JSON-ready summary: episode sums, :func:`constancy`, :func:`response` and the
    :func:`monthly_table`."""
    return {
        "planner_reward_sum": float(trace.planner_reward.sum()),
        "states_mean_reward_sum": float(trace.state_rewards.sum(axis=0).mean()),
        "constancy": constancy(trace),
        "response": response(trace),
        "monthly": monthly_table(trace, days),
    }


def format_report(trace: PolicyTrace, days: int = 30) -> str:
    """The monthly table and the constancy and response measures, as text."""
    info = summary(trace, days)
    lines = [
        f"{'day':>4} {'string. mean':>12} {'min':>3} {'max':>3} {'subsidy':>7} "
        f"{'infected%':>9} {'vacc.%':>6} {'unempl.%':>8} {'deaths%':>7} {'planner':>8}"
    ]
    for r in info["monthly"]:
        lines.append(
            f"{r['day']:>4} {r['stringency_mean']:>12.2f} {r['stringency_min']:>3} "
            f"{r['stringency_max']:>3} {r['subsidy_mean']:>7.1f} {r['infected_pct']:>9.3f} "
            f"{r['vaccinated_pct']:>6.1f} {r['unemployed_pct']:>8.2f} {r['deaths_pct']:>7.3f} "
            f"{r['planner_reward']:>8.2f}"
        )
    c, resp = info["constancy"], info["response"]
    lines.append(
        f"constant? {'YES' if c['is_constant'] else 'no'}: {c['constant_states']} of "
        f"{len(c['changes'])} states hold one level; distinct levels per state mean "
        f"{c['mean_distinct_levels']:.2f} (max {c['max_distinct_levels']}), changes per state "
        f"mean {c['mean_changes']:.2f} (max {c['max_changes']}); levels used {c['levels_used']}; "
        f"subsidy: {c['subsidy_distinct_levels']} level(s), {c['subsidy_changes']} change(s)"
    )
    lines.append(
        "response (correlation over days of the stringency with): infections "
        f"{_fmt(resp['corr_infected_states'])} per state, {_fmt(resp['corr_infected_mean'])} "
        f"US mean; vaccinations {_fmt(resp['corr_vaccinated_states'])} per state, "
        f"{_fmt(resp['corr_vaccinated_mean'])} US mean"
    )
    return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f}"


def write_response_plots(trace: PolicyTrace, out_dir: str | Path, title: str = "") -> list[Path]:
    """``policy_response.png``: every state's stringency level (thin) and their mean (thick),
    the subsidy level, and US infected and vaccinated %, against the day; nothing (and one
    warning) without matplotlib."""
    plt = pyplot()
    if plt is None:
        return []
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    day = np.arange(1, trace.days + 1)
    fig, axes = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    axes[0].plot(day, trace.stringency, color="tab:gray", alpha=0.25, linewidth=0.7)
    axes[0].plot(day, trace.stringency.mean(axis=1), color="tab:red", linewidth=2, label="mean")
    axes[0].set(ylabel="stringency level", ylim=(0.5, 10.5), title=title or "policy response")
    axes[0].legend(loc="upper right")
    axes[1].step(day, trace.subsidy, where="post", color="tab:green")
    axes[1].set(ylabel="subsidy level")
    axes[2].plot(day, trace.us("infected") * 100, color="tab:orange", label="infected %")
    twin = axes[2].twinx()
    twin.plot(day, trace.us("vaccinated") * 100, color="tab:blue", label="vaccinated %")
    axes[2].set(xlabel="day", ylabel="US infected %")
    twin.set_ylabel("US vaccinated %")
    fig.tight_layout()
    path = out / "policy_response.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]

"""Tax policy research on the economies (the one-step economy, gather-trade-build): the named
tax policies, the agents' behaviour, the sweep plan and the tidy table, shared by both.

Tax policies (``--policy``):

* ``free-market``: no taxes (every bracket at 0);
* ``us-federal``: the 2018 US federal single-filer rates (10% ... 37%, scaled brackets);
* ``saez``: the Saez formula of ``PeriodicBracketTax`` (``tax_model="saez"``): random rates
  until its buffer holds 500 incomes, then the formula with the estimated elasticity; the
  buffer carries over the episodes of a run (``--episodes``);
* ``fixed:RATES``: one rate for every bracket (``fixed:0.1``) or one per bracket
  (``fixed:0,0.1,0.2,0.3,0.4,0.5,0.6``; 7 US-federal brackets), each in [0, 1];
* ``checkpoint:RUN``: the planner of a checkpoint of our trainer (a file or a run folder).

Agents (``--agents``): ``checkpoint:RUN`` (the agents of a trained run) or a scenario's
baseline (see its module). Outcomes without trained agents are not the paper's.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.simulate.errors import SimulateError, UnknownPolicyError
from ai_economist.simulate.parallel import check_workers, progress_bar, run_chunks
from ai_economist.simulate.plots import write_economy_plots
from ai_economist.simulate.scenarios import SimulateScenario
from ai_economist.simulate.sweep import (
    MAX_RUNS,
    SweepParameter,
    check_max_runs,
    check_size,
    grid,
    parse_sweeps,
)
from ai_economist.simulate.table import SweepTable
from ai_economist.warp_drive.data_manager import close_matches_message

TAX_NAMES = ("free-market", "us-federal", "saez")
TAX_PREFIXES = ("fixed:", "checkpoint:")
OUTCOMES = (
    "equality",
    "productivity",
    "equality_x_productivity",
    "mean_coin",
    "mean_labor",
    "planner_welfare",
    "tax_revenue",
)
"""Outcome columns of every economy run (then one ``rate_<bracket>`` column per bracket):
equality (1 - Gini) and productivity (sum) of the agents' coin at the end, their product,
the agents' mean coin and labour, the planner's objective at the end (its episode reward sum),
and the taxes collected in the episode."""
SUMMARY = ("equality", "productivity", "equality_x_productivity", "tax_revenue")


@dataclass(frozen=True)
class Choice:
    """A resolved tax policy or agent behaviour: ``kind`` and its ``rates`` or ``path``."""

    name: str
    kind: str  # tax: "rates", "saez", "checkpoint"; agents: a baseline's name or "checkpoint"
    rates: tuple[float, ...] | None = None
    path: str | None = None


def _checkpoint(name: str, what: str) -> Choice:
    path = name[len("checkpoint:") :]
    if not path or not Path(path).exists():
        raise UnknownPolicyError(
            f"{what} {name!r}: checkpoint or run folder {path!r} does not exist"
        )
    return Choice(name, "checkpoint", path=path)


def parse_rates(name: str, text: str, n_brackets: int) -> tuple[float, ...]:
    """``"R"`` (every bracket) or ``"R1,...,RB"`` -> ``n_brackets`` rates in [0, 1]."""
    parts = [p.strip() for p in text.split(",")]
    try:
        rates = [float(p) for p in parts]
    except ValueError:
        raise UnknownPolicyError(
            f"policy {name!r}: expected fixed:R or fixed:R1,...,R{n_brackets} (numbers), got {text!r}"
        ) from None
    if len(rates) not in (1, n_brackets):
        raise UnknownPolicyError(
            f"policy {name!r}: {len(rates)} rates; the tax has {n_brackets} brackets (give 1 rate "
            f"for all of them or {n_brackets})"
        )
    bad = [r for r in rates if not (math.isfinite(r) and 0.0 <= r <= 1.0)]
    if bad:
        raise UnknownPolicyError(f"policy {name!r}: rate {bad[0]!r} is outside [0, 1]")
    return tuple(rates * n_brackets if len(rates) == 1 else rates)


def resolve_tax_policy(name: str, us_federal: Sequence[float], extra: Sequence[str] = ()) -> Choice:
    """The :class:`Choice` of tax policy ``name`` (``us_federal``: the scenario's rates;
    ``extra``: the scenario's own policy names, resolved to ``Choice(name, name)``)."""
    if not isinstance(name, str):
        raise UnknownPolicyError(f"policy {name!r} is not a string")
    n = len(us_federal)
    if name in extra:
        return Choice(name, name)
    if name == "free-market":
        return Choice(name, "rates", rates=(0.0,) * n)
    if name == "us-federal":
        return Choice(name, "rates", rates=tuple(float(r) for r in us_federal))
    if name == "saez":
        return Choice(name, "saez")
    if name.startswith("fixed:"):
        return Choice(name, "rates", rates=parse_rates(name, name[len("fixed:") :], n))
    if name.startswith("checkpoint:"):
        return _checkpoint(name, "policy")
    known = [*TAX_NAMES, *extra, *(p + "..." for p in TAX_PREFIXES)]
    raise UnknownPolicyError(close_matches_message(name, known, "tax policy"))


def resolve_agents(name: str, baselines: Sequence[str]) -> Choice:
    """The :class:`Choice` of ``--agents name``: one of ``baselines`` or ``checkpoint:RUN``."""
    if isinstance(name, str) and name.startswith("checkpoint:"):
        return _checkpoint(name, "agents")
    if name in baselines:
        return Choice(name, name)
    raise UnknownPolicyError(
        close_matches_message(str(name), [*baselines, "checkpoint:..."], "agents")
    )


@dataclass
class EconomyChunk:
    """Runs of one parameter group under one tax policy, stepped as one batch (picklable:
    ``runner`` is a module-level function of the scenario's adapter)."""

    runner: Callable[[EconomyChunk], dict[str, np.ndarray]]
    group: dict[str, Any]  # the group parameters' values
    policy: Choice
    agents: Choice
    runs: np.ndarray  # (E,) row numbers
    seeds: np.ndarray  # (E,)
    per_run: dict[str, np.ndarray] = field(default_factory=dict)  # per-run parameters (E,)
    episodes: int = 1
    greedy: bool = False
    backend: str = "numpy"


def run_economy_chunk(chunk: EconomyChunk) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``(row numbers, {outcome: (E,) values})`` of a chunk (any process, or Ray)."""
    return chunk.runs, chunk.runner(chunk)


@dataclass(frozen=True)
class EconomySpec:
    """What an economy adapter gives the shared sweep code."""

    name: str
    parameters: Mapping[str, SweepParameter]
    us_federal: tuple[float, ...]
    rate_columns: tuple[str, ...]
    baselines: tuple[str, ...]
    default_agents: str
    default_episodes: int
    runner: Callable[[EconomyChunk], dict[str, np.ndarray]]
    extra_policies: tuple[str, ...] = ()  # the scenario's own tax policy names
    backends: tuple[str, ...] = ("numpy",)  # the models a chunk can run on (chunk.backend)


def check_backend(spec: EconomySpec, backend: object) -> str:
    """``backend`` when ``spec`` runs on it, else :class:`SimulateError` naming the choices."""
    if backend not in spec.backends:
        raise SimulateError(
            f"backend={backend!r}: {spec.name} runs on {', '.join(map(repr, spec.backends))}"
        )
    return str(backend)


def check_episodes(episodes: object) -> int:
    """``episodes`` when it is an integer >= 1, else :class:`SimulateError`."""
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise SimulateError(f"episodes={episodes!r}: expected an integer >= 1")
    return episodes


def plan_economy(
    spec: EconomySpec,
    policies: Sequence[str],
    sweeps: Mapping[str, Sequence] | Sequence[str],
    agents: str | None,
    episodes: int | None,
    chunk_size: int,
    greedy: bool,
    max_runs: int,
    backend: str = "numpy",
) -> tuple[list[dict], list[EconomyChunk]]:
    """The rows of a sweep and the chunks that compute them (checked before any run)."""
    backend = check_backend(spec, backend)
    if isinstance(policies, str):
        policies = [policies]
    policies = list(policies)
    if not policies:
        raise SimulateError("no policies given (expected at least one, e.g. 'free-market')")
    duplicates = sorted({p for p in policies if policies.count(p) > 1})
    if duplicates:
        raise SimulateError(f"policies given more than once: {duplicates}")
    resolved = {p: resolve_tax_policy(p, spec.us_federal, spec.extra_policies) for p in policies}
    behaviour = resolve_agents(spec.default_agents if agents is None else agents, spec.baselines)
    episodes = check_episodes(spec.default_episodes if episodes is None else episodes)
    max_runs = check_max_runs(max_runs)
    sweeps = parse_sweeps(sweeps, max_runs, spec.parameters)
    check_size(len(policies), sweeps, max_runs)
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise SimulateError(f"chunk_size={chunk_size!r}: expected an integer >= 1")
    defaults = {n: p.default for n, p in spec.parameters.items()}
    rows = grid(policies, sweeps, defaults, spec.parameters)
    group_names = [n for n, p in spec.parameters.items() if not p.per_run]
    run_names = [n for n, p in spec.parameters.items() if p.per_run and n != "seed"]
    groups: dict[tuple, list[int]] = {}
    for i, row in enumerate(rows):
        row.update(run=i, agents=behaviour.name, scenario=spec.name, episodes=episodes)
        groups.setdefault((row["policy"], *(row[n] for n in group_names)), []).append(i)
    chunks = []
    for members in groups.values():
        first = rows[members[0]]
        for start in range(0, len(members), chunk_size):
            part = [rows[i] for i in members[start : start + chunk_size]]
            chunks.append(
                EconomyChunk(
                    runner=spec.runner,
                    group={n: first[n] for n in group_names},
                    policy=resolved[first["policy"]],
                    agents=behaviour,
                    runs=np.array([r["run"] for r in part], dtype=np.int64),
                    seeds=np.array([r.get("seed", 0) for r in part], dtype=np.int64),
                    per_run={n: np.array([r[n] for r in part]) for n in run_names},
                    episodes=episodes,
                    greedy=greedy,
                    backend=backend,
                )
            )
    return rows, chunks


def run_economy_sweep(
    spec: EconomySpec,
    policies: Sequence[str],
    sweeps: Mapping[str, Sequence] | Sequence[str] = (),
    *,
    agents: str | None = None,
    episodes: int | None = None,
    workers: int = 1,
    ray_address: str | None = None,
    chunk_size: int = 64,
    greedy: bool = False,
    progress: bool = False,
    max_runs: int = MAX_RUNS,
    backend: str = "numpy",
) -> SweepTable:
    """Every tax policy under every combination of the swept parameters; one row per run:
    ``run``, ``policy``, ``agents``, ``scenario``, ``episodes``, the parameters, then
    :data:`OUTCOMES` and the rates used (``rate_<bracket>``; the mean over the tax periods
    of the last episode). ``backend``: the model the runs step on (:attr:`EconomySpec.backends`;
    today the batched numpy model only)."""
    if not ray_address:
        check_workers(workers)
    rows, chunks = plan_economy(
        spec, policies, sweeps, agents, episodes, chunk_size, greedy, max_runs, backend
    )
    names = (*OUTCOMES, *spec.rate_columns)
    outcomes = {n: np.full(len(rows), np.nan) for n in names}
    advance = progress_bar(len(rows), progress)
    for runs, values in run_chunks(chunks, workers, ray_address, runner=run_economy_chunk):
        for n in names:
            outcomes[n][runs] = values[n]
        advance(len(runs))
    columns: dict[str, np.ndarray] = {
        "run": np.arange(len(rows), dtype=np.int64),
        **{
            k: np.array([r[k] for r in rows], dtype=object)
            for k in ("policy", "agents", "scenario")
        },
        "episodes": np.array([r["episodes"] for r in rows], dtype=np.int64),
    }
    for n, p in spec.parameters.items():
        columns[n] = np.array([r[n] for r in rows], dtype=np.int64 if p.integer else np.float64)
    columns.update(outcomes)
    return SweepTable(columns)


def economy_scenario(spec: EconomySpec, doc: str, policies_doc: str) -> SimulateScenario:
    """The ``ai-economist-simulate`` scenario of an economy: :func:`run_economy_sweep` on
    ``spec``, the :data:`SUMMARY` columns and the economy plots."""
    return SimulateScenario(
        name=spec.name,
        doc=doc,
        parameters=spec.parameters,
        policies_doc=policies_doc,
        summary=SUMMARY,
        run=functools.partial(run_economy_sweep, spec),
        plots=write_economy_plots,
        options=("agents", "episodes", "backend"),
    )


def social_outcomes(
    coin: np.ndarray,
    labor: np.ndarray,
    welfare: np.ndarray,
    revenue: np.ndarray,
    rates: np.ndarray,
    rate_columns: Sequence[str],
) -> dict[str, np.ndarray]:
    """The outcome columns of E runs from the agents' coin and labour (E, N), the planner's
    objective and the taxes collected (E,) and the rates used (E, B)."""
    from ai_economist.foundation.scenarios.utils import social_metrics

    coin = np.asarray(coin, dtype=np.float64)
    equality = np.asarray(social_metrics.get_equality(coin), dtype=np.float64)
    productivity = coin.sum(axis=-1)
    out = {
        "equality": equality,
        "productivity": productivity,
        "equality_x_productivity": equality * productivity,
        "mean_coin": coin.mean(axis=-1),
        "mean_labor": np.asarray(labor, dtype=np.float64).mean(axis=-1),
        "planner_welfare": np.asarray(welfare, dtype=np.float64),
        "tax_revenue": np.asarray(revenue, dtype=np.float64),
    }
    out.update({c: np.asarray(rates, dtype=np.float64)[:, b] for b, c in enumerate(rate_columns)})
    return out


def rate_columns(cutoffs: Sequence[float]) -> tuple[str, ...]:
    """``rate_000``, ``rate_009``, ...: one column per bracket, named by its lower edge."""
    return tuple(f"rate_{int(c):03d}" for c in cutoffs)

"""``run_sweep``: the Python API of ``ai-economist-simulate``.

Example::

    from ai_economist.simulate import run_sweep

    table = run_sweep(["open", "closed", "closed-180-then-open"],
                      {"infection_intercept": [0.8, 1.0, 1.2]}, workers=2)
    table.to_csv("sweep.csv")
    print(table.where(policy="open")["deaths_thousands"])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ai_economist.simulate.errors import SimulateError
from ai_economist.simulate.model import ModelKey, build_model, scenario_defaults, state_names
from ai_economist.simulate.parallel import check_workers, progress_bar, run_chunks
from ai_economist.simulate.policies import Policy, check_policy_name, resolve_policy
from ai_economist.simulate.runner import OUTCOMES, Chunk
from ai_economist.simulate.sweep import (
    GROUP_PARAMETERS,
    MAX_RUNS,
    PARAMETERS,
    check_max_runs,
    check_size,
    grid,
    parse_sweeps,
)
from ai_economist.simulate.table import SweepTable

DEFAULT_CHUNK_SIZE = 250  # envs per batch: small enough to stay in cache, large enough to amortise


def _check_policies(policies: Sequence[str]) -> list[str]:
    if isinstance(policies, str):
        policies = [policies]
    policies = [check_policy_name(name) for name in policies]
    if not policies:
        raise SimulateError("no policies given (expected at least one, e.g. 'open')")
    duplicates = sorted({p for p in policies if policies.count(p) > 1})
    if duplicates:
        raise SimulateError(f"policies given more than once: {duplicates}")
    return policies


def plan(
    policies: Sequence[str],
    sweeps: Mapping[str, Sequence] | Sequence[str] = (),
    scenario: str = "training",
    days: int | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    greedy: bool = False,
    max_runs: int = MAX_RUNS,
) -> tuple[list[dict], list[Chunk]]:
    """The runs of a sweep (one dict per table row) and the chunks that compute them; a sweep
    of more than ``max_runs`` runs is refused before any run is built."""
    policies = _check_policies(policies)
    max_runs = check_max_runs(max_runs)
    sweeps = parse_sweeps(sweeps, max_runs)
    check_size(len(policies), sweeps, max_runs)
    base = scenario_defaults(scenario, days)
    if base["days"] < 1:
        raise SimulateError(f"days={base['days']}: expected an episode of at least 1 day")
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise SimulateError(f"chunk_size={chunk_size!r}: expected an integer >= 1")
    defaults = {name: p.default for name, p in PARAMETERS.items()}
    defaults.update({k: v for k, v in base.items() if k in PARAMETERS})
    names = state_names()
    resolved = {name: resolve_policy(name, base["days"], names) for name in policies}
    rows = grid(policies, sweeps, defaults)
    groups: dict[tuple, list[int]] = {}
    for i, row in enumerate(rows):
        row.update(run=i, scenario=scenario, days=base["days"])
        key = ModelKey(scenario, base["days"], *(float(row[n]) for n in GROUP_PARAMETERS))
        policy = resolved[row["policy"]]
        kind_key = policy.name if policy.kind == "checkpoint" else policy.kind
        groups.setdefault((key, kind_key), []).append(i)
    chunks = []
    for (key, _), members in groups.items():
        policy = resolved[rows[members[0]]["policy"]]
        if policy.kind == "real-world":
            build_model(key, True)  # checks the episode fits the real-world data
        for start in range(0, len(members), chunk_size):
            part = members[start : start + chunk_size]
            chunks.append(_chunk(key, policy, [rows[i] for i in part], resolved, greedy))
    return rows, chunks


def _chunk(
    key: ModelKey, policy: Policy, rows: list[dict], resolved: dict[str, Policy], greedy: bool
) -> Chunk:
    chunk = Chunk(
        key=key,
        kind=policy.kind,
        runs=np.array([r["run"] for r in rows], dtype=np.int64),
        modulations=np.array(
            [[r["infection_intercept"], r["infection_slope"], r["unemployment"]] for r in rows]
        ),
        seeds=np.array([r["seed"] for r in rows], dtype=np.int64),
        checkpoint=policy.path,
        greedy=greedy,
    )
    if policy.kind == "schedule":
        used = list(dict.fromkeys(r["policy"] for r in rows))
        chunk.which = np.array([used.index(r["policy"]) for r in rows], dtype=np.int64)
        chunk.stringency = np.stack([resolved[n].stringency for n in used]).astype(np.int8)
        chunk.subsidy = np.stack([resolved[n].subsidy for n in used]).astype(np.int8)
    return chunk


def run_sweep(
    policies: Sequence[str],
    sweeps: Mapping[str, Sequence] | Sequence[str] = (),
    *,
    scenario: str = "training",
    days: int | None = None,
    workers: int = 1,
    ray_address: str | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    greedy: bool = False,
    progress: bool = False,
    max_runs: int = MAX_RUNS,
) -> SweepTable:
    """Run every policy under every combination of the swept parameters; one row per run.

    Args:
        policies: policy names (see :mod:`ai_economist.simulate.policies`).
        sweeps: ``{name: values}`` or ``"NAME=V1,V2"`` / ``"NAME=START:STOP:NUM"`` strings
            (names in :data:`ai_economist.simulate.sweep.PARAMETERS`).
        scenario: ``training`` (540 days) or ``tutorial`` (405 days).
        days: episode length (default: the scenario's).
        workers: local processes (1: this process).
        ray_address: run the chunks on this Ray cluster instead (``local`` starts one here).
        chunk_size: runs stepped together as one batch.
        greedy: checkpoint policies take their most likely action instead of sampling.
        progress: show a progress bar on stderr (tqdm).
        max_runs: refuse a sweep of more runs than this (policies x swept combinations),
            before any work (default :data:`ai_economist.simulate.sweep.MAX_RUNS`).

    Returns:
        A :class:`SweepTable`: ``run``, ``policy``, ``scenario``, ``days``, every sweep
        parameter, then the outcomes (:data:`ai_economist.simulate.runner.OUTCOMES`).
    """
    if not ray_address:
        check_workers(workers)
    rows, chunks = plan(policies, sweeps, scenario, days, chunk_size, greedy, max_runs)
    outcomes = {name: np.full(len(rows), np.nan) for name in OUTCOMES}
    advance = progress_bar(len(rows), progress)
    for runs, values in run_chunks(chunks, workers, ray_address):
        for name in OUTCOMES:
            outcomes[name][runs] = values[name]
        advance(len(runs))
    columns: dict[str, np.ndarray] = {
        "run": np.arange(len(rows), dtype=np.int64),
        "policy": np.array([r["policy"] for r in rows], dtype=object),
        "scenario": np.array([scenario] * len(rows), dtype=object),
        "days": np.array([r["days"] for r in rows], dtype=np.int64),
    }
    for name, spec in PARAMETERS.items():
        dtype = np.int64 if spec.integer else np.float64
        columns[name] = np.array([r[name] for r in rows], dtype=dtype)
    columns.update(outcomes)
    return SweepTable(columns)

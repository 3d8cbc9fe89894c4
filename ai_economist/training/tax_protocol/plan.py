"""The protocol's runs: which run configs, which tax schedules, one folder per run.

Every run (phase 1 of a seed, or phase 2 of a schedule and a seed) gets the folder
``<results_dir>/<run name>/`` holding ``run.json`` (what it is), ``config.yaml`` (the
resolved run config it trains), ``train/`` (the trainer's run directory), ``log.txt`` and,
once evaluated, ``result.json``. ``<results_dir>/manifest.json`` records the protocol's
settings and each run's status, so a rerun with the same settings skips the finished runs.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path
from typing import Any

import yaml

from ai_economist.training.config import ConfigError, find_run_config, load_yaml

TAX_COMPONENT = "PeriodicBracketTax"
AI_PLANNER = "ai-planner"
# The env count that the packaged per-env schedules were written for: the original's
# 15 RLlib workers x 2 envs (tutorials/rllib/phase1 and phase2/config.yaml).
PUBLISHED_NUM_ENVS = 30
# The published annealing [-100, 0.001] allows 10% of the rate range before the first episode.
PUBLISHED_START_LIMIT = 0.1

# PeriodicBracketTax settings of each schedule, on top of the phase-2 run config.
SCHEDULES: dict[str, dict[str, Any]] = {
    AI_PLANNER: {"disable_taxes": False, "tax_model": "model_wrapper"},
    "saez": {"disable_taxes": False, "tax_model": "saez"},
    "us-federal": {"disable_taxes": False, "tax_model": "us-federal-single-filer-2018-scaled"},
    "free-market": {"disable_taxes": True},
}
FIXED_PREFIX = "fixed:"
N_BRACKETS = 7  # the phase-2 config's US-federal brackets


def schedule_settings(schedule: str) -> dict[str, Any]:
    """The ``PeriodicBracketTax`` settings of ``schedule``: one of :data:`SCHEDULES` or
    ``fixed:R`` / ``fixed:R1,...,R7`` (one rate for every bracket, or one per bracket).

    Raises:
        ConfigError: an unknown name or rates that are not 1 or 7 numbers in [0, 1].
    """
    if schedule in SCHEDULES:
        return dict(SCHEDULES[schedule])
    if not schedule.startswith(FIXED_PREFIX):
        raise ConfigError(f"schedule {schedule!r}: expected one of {list(SCHEDULES)} or "
                          f"{FIXED_PREFIX}R / {FIXED_PREFIX}R1,...,R{N_BRACKETS}")  # fmt: skip
    from ai_economist.simulate.economies import UnknownPolicyError, parse_rates

    try:
        rates = parse_rates(schedule, schedule[len(FIXED_PREFIX) :], N_BRACKETS)
    except UnknownPolicyError as err:
        raise ConfigError(f"schedule {schedule!r}: {err}") from None
    return {"disable_taxes": False, "tax_model": "fixed-bracket-rates",
            "fixed_bracket_rates": list(rates)}  # fmt: skip


def schedule_slug(schedule: str) -> str:
    """``schedule`` as a folder-name part: ``fixed:0.1,0.2`` -> ``fixed-0.1_0.2``."""
    return schedule.replace(":", "-").replace(",", "_")


@dataclasses.dataclass(frozen=True)
class Scenario:
    """A scenario's packaged run configs (``phase1`` None: no phase 1) and its schedules
    trained as runs (the one-step economy trains only the planner: it scores the fixed
    schedules with best-responding workers instead), and the column ranking them (the
    planner's objective: GTB equality x productivity, the one-step economy's welfare)."""

    phase1: str | None
    phase2: str
    trained_schedules: tuple[str, ...]
    score: str  # the column the schedules are ranked by
    fixed_schedules: bool = False  # also trains fixed:RATES schedules (agents retrained)


SCENARIOS: dict[str, Scenario] = {
    "gather-trade-build": Scenario(
        "gather_trade_build_phase1",
        "gather_trade_build_phase2",
        tuple(SCHEDULES),
        "equality_x_productivity",
        fixed_schedules=True,
    ),
    "one-step-economy": Scenario(None, "one_step_economy", (AI_PLANNER,), "welfare"),
}


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One training run of the protocol."""

    name: str
    phase: int
    schedule: str
    seed: int
    config_name: str
    steps: int
    depends_on: str | None = None

    def folder(self, results_dir: str | Path) -> Path:
        """``<results_dir>/<name>``."""
        return Path(results_dir) / self.name


def plan_runs(
    scenario: str,
    seeds: list[int],
    phase1_steps: int,
    phase2_steps: int,
    schedules: list[str] | None = None,
) -> list[RunSpec]:
    """Phase 1 per seed (when the scenario has one), then phase 2 per schedule and seed,
    each phase-2 run depending on its seed's phase-1 run. ``schedules``: the trained
    schedules to run (default all of the scenario's, in their order, then any
    ``fixed:RATES`` ones of ``schedules`` in the order given)."""
    spec = SCENARIOS[scenario]
    chosen = [s for s in spec.trained_schedules if schedules is None or s in schedules]
    chosen += [s for s in schedules or [] if s.startswith(FIXED_PREFIX) and s not in chosen]
    runs: list[RunSpec] = []
    for seed in seeds:
        first = None
        if spec.phase1 is not None:
            first = f"phase1_seed{seed}"
            runs.append(RunSpec(first, 1, "free-market", seed, spec.phase1, phase1_steps))
        for schedule in chosen:
            runs.append(
                RunSpec(
                    f"phase2_{schedule_slug(schedule)}_seed{seed}",
                    2,
                    schedule,
                    seed,
                    spec.phase2,
                    phase2_steps,
                    first,
                )  # fmt: skip
            )
    return runs


def tax_entry(env_block: dict[str, Any]) -> dict[str, Any] | None:
    """The ``{PeriodicBracketTax: block}`` entry of ``env_block["components"]``, or None."""
    for entry in env_block.get("components", []):
        if isinstance(entry, dict) and TAX_COMPONENT in entry:
            return entry
    return None


def set_tax_schedule(env_block: dict[str, Any], schedule: str) -> None:
    """Configure the tax component's model for ``schedule`` in place.

    Raises:
        ConfigError: the env has no ``PeriodicBracketTax``.
    """
    entry = tax_entry(env_block)
    if entry is None:
        raise ConfigError(f"env.components: no {TAX_COMPONENT}; the tax protocol needs one")
    entry[TAX_COMPONENT] = {**(entry[TAX_COMPONENT] or {}), **schedule_settings(schedule)}


def rescale_per_env_schedules(env_block: dict[str, Any], num_envs: int, schedule_envs: int) -> None:
    """Make the schedules counted per env progress with the *total* env-steps as they did with
    ``schedule_envs`` envs, in place (``schedule_envs`` 0: leave them per env).

    The labour-cost warm-up (``energy_warmup_constant``, per env's steps or episodes) and the
    tax annealing (``tax_annealing_schedule`` ``[warmup, slope]``, per env's finished episodes)
    advance once per env: with 1,000 envs instead of the original's 30 they would take 33x the
    env-steps (the published annealing would open the full rate range after 900M env-steps
    instead of 27M). With ``f = schedule_envs / num_envs`` the constant becomes ``c * f`` and the
    annealing ``[warmup * f, slope / f]``, so that ``n`` episodes per env here count as
    ``n / f`` there."""
    if schedule_envs <= 0 or num_envs == schedule_envs:
        return
    factor = schedule_envs / num_envs
    constant = env_block.get("energy_warmup_constant")
    if isinstance(constant, (int, float)) and constant > 0:
        env_block["energy_warmup_constant"] = float(constant) * factor
    entry = tax_entry(env_block)
    tax = entry[TAX_COMPONENT] if entry is not None else None
    schedule = tax.get("tax_annealing_schedule") if isinstance(tax, dict) else None
    if isinstance(schedule, (list, tuple)) and len(schedule) == 2:
        warmup, slope = schedule
        tax["tax_annealing_schedule"] = [float(warmup) * factor, float(slope) / factor]


def compress_tax_annealing(
    env_block: dict[str, Any], episodes_per_env: int, fraction: float
) -> None:
    """Anneal the planner's rate limit from the published start (10% of the range) to the whole
    range over the first ``fraction`` of a run of ``episodes_per_env`` episodes per env, in
    place (a tax component without annealing is left as it is). A ``fraction`` above 1 ends the
    run with the limit at ``10% + 90% / fraction`` of the range (agents trained against a random
    planner's rates over a low range only)."""
    entry = tax_entry(env_block)
    tax = entry[TAX_COMPONENT] if entry is not None else None
    if isinstance(tax, dict) and tax.get("tax_annealing_schedule") is not None:
        slope = (1.0 - PUBLISHED_START_LIMIT) / max(fraction * episodes_per_env, 1e-9)
        tax["tax_annealing_schedule"] = [-PUBLISHED_START_LIMIT / slope, slope]


def build_run_config(
    run: RunSpec, device: str, overrides: list[str], workers: int,
    schedule_envs: int = 0, tax_annealing_fraction: float | None = None,
) -> dict:  # fmt: skip
    """The packaged config of ``run`` (found through :func:`find_run_config`) with the seed,
    the env-step budget, the device, the schedule and ``overrides`` applied, and its per-env
    schedules rescaled to its env count (:func:`rescale_per_env_schedules`) or, given
    ``tax_annealing_fraction``, the tax annealing compressed into that share of the run
    (:func:`compress_tax_annealing`); not yet validated (the trainer does, naming the file)."""
    from ai_economist.training.overrides import apply_overrides

    config = load_yaml(find_run_config(run.config_name))
    quiet = ["saving.tensorboard=false", "trainer.progress_bar=false",
             "saving.model_params_save_freq=1000000000", f"trainer.seed={run.seed}"]  # fmt: skip
    if device == "cpu":
        quiet.append(f"trainer.num_threads={max(1, (os.cpu_count() or 1) // max(workers, 1))}")
    config = apply_overrides(config, [*quiet, f"trainer.device={device}", *overrides])
    env = config["env"]
    if "seed" in env:  # the one-step economy draws its skills from env.seed
        env["seed"] = run.seed
    config["trainer"]["num_episodes"] = max(1, math.ceil(run.steps / int(env["episode_length"])))
    num_envs = int(config["trainer"]["num_envs"])
    rescale_per_env_schedules(env, num_envs, schedule_envs)
    if tax_annealing_fraction is not None and run.phase == 2:  # phase 1 has no taxes
        episodes_per_env = math.ceil(config["trainer"]["num_episodes"] / num_envs)
        compress_tax_annealing(env, episodes_per_env, tax_annealing_fraction)
    if run.phase == 2:
        set_tax_schedule(env, run.schedule)
        if run.schedule != AI_PLANNER:  # a fixed schedule: the planner does not act
            config["policy"]["p"]["to_train"] = False
    return config


def write_yaml(path: Path, data: dict) -> None:
    """``data`` as YAML, written to a temporary name and moved into place."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False))
    os.replace(tmp, path)


def write_json(path: Path, data: Any) -> None:
    """``data`` as indented JSON, written to a temporary name and moved into place."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1, default=str) + "\n")
    os.replace(tmp, path)

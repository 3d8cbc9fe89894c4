"""The tax protocol's command line.

    python -m ai_economist.training.tax_protocol --scenario gather-trade-build \\
        --seeds 0 1 2 --phase1_steps 2000000 --phase2_steps 2000000 --device cuda \\
        --workers 15 --results_dir runs/tax_protocol [phase1:trainer.num_envs=30 ...]
    python -m ai_economist.training.tax_protocol --scenario one-step-economy \\
        --seeds 0 1 2 3 4 --phase2_steps 600000 --device cpu --results_dir runs/one_step

Gather-trade-build: per seed, phase 1 (``gather_trade_build_phase1``, free market, labour
cost annealed in) for ``--phase1_steps`` env-steps; then per seed and schedule (the AI planner,
Saez, US federal 2018, free market) phase 2 (``gather_trade_build_phase2`` with the schedule
set through ``PeriodicBracketTax``'s ``tax_model`` / ``disable_taxes``) for ``--phase2_steps``
env-steps, the agents starting from their seed's phase-1 weights and re-trained under the
schedule (the planner trains only under ``ai-planner``). Each trained phase-2 run is scored on
``--eval_episodes`` fresh episodes (:mod:`.gtb_eval`). ``--schedules`` trains a subset of
the schedules (e.g. ``ai-planner`` alone, to tune the planner at a quarter of the cost) and
adds fixed ones, ``fixed:R`` (every bracket at rate R) or ``fixed:R1,...,R7``, whose agents are
re-trained under those rates like the other fixed schedules' (run folder ``phase2_fixed-R_seedS``).
The one-step economy: the planner trained per seed for ``--phase2_steps`` env-steps (no
phase 1), scored with best-responding workers against the fixed schedules, the settled Saez
schedule and the grid optimum (:mod:`.one_step_eval`). The schedules that the packaged configs count per env (the
labour-cost warm-up, the tax annealing) advance per iteration as in the original (every env
runs 200 steps an iteration there and here); ``--schedule_envs 30`` instead makes them advance
with the total env-steps as with the original's 30 envs, and ``--tax_annealing_fraction``
fits the tax annealing to a budget shorter than the paper's.

Overrides ``key.path=value`` go to every run; ``phase1:key=value`` / ``phase2:key=value`` to
one phase (``trainer.seed``, ``trainer.num_episodes`` and ``trainer.device`` come from the
options). Writes ``<results_dir>/results.csv``, the plot ``equality_vs_productivity.png`` and
``manifest.json`` (a rerun with the same options skips the finished runs and resumes the
interrupted ones). Exit status: 0 all runs done, 1 some run failed (the table shows the
others), 2 bad input (before any work), 130 interrupted (Ctrl-C or SIGTERM: the table of the
runs scored so far is printed and written, the running runs checkpoint; rerun the same
command to resume). Each run's scores are printed as soon as it finishes.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ai_economist.extras import MissingExtraError, is_installed, require_modules
from ai_economist.training.config import ConfigError
from ai_economist.training.tax_protocol import report
from ai_economist.training.tax_protocol.launch import Stopped, raise_on_sigterm, run_all
from ai_economist.training.tax_protocol.manifest import Manifest
from ai_economist.training.tax_protocol.plan import (
    AI_PLANNER,
    FIXED_PREFIX,
    PUBLISHED_NUM_ENVS,
    SCENARIOS,
    SCHEDULES,
    RunSpec,
    build_run_config,
    plan_runs,
    schedule_settings,
    write_json,
    write_yaml,
)

FROM_OPTIONS = ("trainer.seed", "trainer.num_episodes", "trainer.device")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m ai_economist.training.tax_protocol",
        description=__doc__.split("\n\n")[0],
        epilog="See the module docstring (python -m pydoc ai_economist.training.tax_protocol.cli).",
    )
    parser.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--phase1_steps", type=int, help="env-steps of phase 1 (GTB only)")
    parser.add_argument("--phase2_steps", type=int, required=True, help="env-steps per phase-2 run")
    parser.add_argument("--schedules", nargs="+", metavar="SCHEDULE",
                        help="the trained schedules to run (default all: "
                             f"{', '.join(SCHEDULES)}; the one-step economy trains "
                             f"{AI_PLANNER} only), e.g. {AI_PLANNER} alone to tune the planner; "
                             "gather-trade-build also trains fixed:R or fixed:R1,...,R7 (agents "
                             "retrained under those rates)")  # fmt: skip
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--results_dir", required=True)
    parser.add_argument("--workers", type=int, default=4, help="runs at a time (default 4)")
    parser.add_argument("--eval_episodes", type=int, default=4, help="GTB episodes per run")
    parser.add_argument("--greedy_agents", action="store_true",
                        help="GTB evaluation: agents act greedily (default: sampled)")  # fmt: skip
    parser.add_argument("--saez_warmup_episodes", type=int, default=30,
                        help="GTB: unscored episodes of a Saez run's evaluation envs first")  # fmt: skip
    parser.add_argument("--saez_episodes", type=int, default=300,
                        help="one-step: episodes of the Saez model before its rates are read")  # fmt: skip
    parser.add_argument("--optimum_sweeps", type=int, default=4,
                        help="one-step: coordinate-ascent sweeps of the grid optimum (0: none)")  # fmt: skip
    parser.add_argument("--schedule_envs", type=int, default=0,
                        help="rescale the per-env labour-cost warm-up and tax annealing to run "
                             "with the total env-steps as with this many envs (e.g. "
                             f"{PUBLISHED_NUM_ENVS}, the original's); default 0: per env as "
                             "packaged, i.e. per iteration of 200-step rollouts")  # fmt: skip
    parser.add_argument("--tax_annealing_fraction", type=float,
                        help="open the planner's rate limit from 10%% to the whole range over "
                             "this share of each phase-2 run; above 1 the range is still partly "
                             "closed at the end (limit 10%% + 90%% / share: e.g. 3 ends at 40%%) "
                             "(default: the published annealing, rescaled by --schedule_envs)")  # fmt: skip
    parser.add_argument("--no_plot", action="store_true", help="no plot (no matplotlib needed)")
    parser.add_argument("overrides", nargs="*", metavar="[phase1:|phase2:]key.path=value")
    args = parser.parse_args(argv)
    problems = check_args(args)
    if problems:
        parser.error("; ".join(problems))  # exit 2
    return args


def schedule_problems(scenario: str, schedules: Sequence[str]) -> list[str]:
    """What is wrong with ``--schedules`` for ``scenario`` (an unknown name, bad rates)."""
    spec = SCENARIOS[scenario]
    trained = list(spec.trained_schedules)
    problems = []
    for name in schedules:
        if name in trained:
            continue
        if spec.fixed_schedules and name.startswith(FIXED_PREFIX):
            try:
                schedule_settings(name)
            except ConfigError as err:
                problems.append(f"--schedules {name}: {err}")
            continue
        extra = f" or {FIXED_PREFIX}R / {FIXED_PREFIX}R1,...,R7" if spec.fixed_schedules else ""
        problems.append(f"--schedules {name}: {scenario} trains {', '.join(trained)}{extra}")
    return problems


def check_args(args: argparse.Namespace) -> list[str]:
    """Every problem of the options, each naming the option and what is expected."""
    problems = []
    has_phase1 = SCENARIOS[args.scenario].phase1 is not None
    if has_phase1 and (args.phase1_steps is None or args.phase1_steps < 1):
        problems.append(f"--phase1_steps {args.phase1_steps}: {args.scenario} needs a phase-1 "
                        "budget of at least 1 env-step")  # fmt: skip
    if not has_phase1 and args.phase1_steps:
        problems.append(f"--phase1_steps {args.phase1_steps}: {args.scenario} has no phase 1 "
                        "(its planner trains from scratch); leave it out")  # fmt: skip
    problems += schedule_problems(args.scenario, args.schedules or [])
    if args.phase2_steps < 1:
        problems.append(f"--phase2_steps {args.phase2_steps}: expected at least 1 env-step")
    if len(set(args.seeds)) != len(args.seeds) or min(args.seeds) < 0:
        problems.append(f"--seeds {args.seeds}: expected distinct non-negative integers")
    for key in ("workers", "eval_episodes", "saez_episodes"):
        if getattr(args, key) < 1:
            problems.append(f"--{key} {getattr(args, key)}: expected at least 1")
    for key in ("optimum_sweeps", "saez_warmup_episodes", "schedule_envs"):
        if getattr(args, key) < 0:
            problems.append(f"--{key} {getattr(args, key)}: expected 0 or more")
    fraction = args.tax_annealing_fraction
    if fraction is not None and not 0 < fraction < float("inf"):
        problems.append(f"--tax_annealing_fraction {fraction}: expected a positive number")
    for text in args.overrides:
        phase, _, body = text.partition(":") if ":" in text.split("=")[0] else ("", "", text)
        if phase not in ("", "phase1", "phase2") or "=" not in body:
            problems.append(f"override {text!r}: expected [phase1:|phase2:]key.path=value")
        elif body.split("=")[0] in FROM_OPTIONS:
            problems.append(f"override {text!r}: {body.split('=')[0]} comes from the options")
    return problems


def phase_overrides(overrides: list[str], phase: int) -> list[str]:
    """The overrides of one phase: unprefixed ones and ``phase<k>:`` ones, prefix removed."""
    out = []
    for text in overrides:
        prefix, _, body = text.partition(":") if ":" in text.split("=")[0] else ("", "", text)
        if prefix in ("", f"phase{phase}"):
            out.append(body)
    return out


def settings_of(args: argparse.Namespace) -> dict[str, Any]:
    """What a resumed protocol must share with the first attempt (not ``--workers``)."""
    keys = ("scenario", "seeds", "schedules", "phase1_steps", "phase2_steps", "device", "overrides",
            "eval_episodes", "greedy_agents", "saez_warmup_episodes", "saez_episodes",
            "optimum_sweeps", "schedule_envs", "tax_annealing_fraction")  # fmt: skip
    return {k: getattr(args, k) for k in keys}


def prepare_runs(args: argparse.Namespace, runs: list[RunSpec], manifest: Manifest) -> None:
    """Write each pending run's ``run.json`` and ``config.yaml``; check one config per phase
    and schedule before any work (:func:`training_script.prepare`, ``--dry_run``).

    Raises:
        ConfigError: naming the run's config file and the bad key.
    """
    from ai_economist.training import training_script

    results_dir = Path(args.results_dir)
    checked: set[tuple[int, str]] = set()
    evaluation = {"episodes": args.eval_episodes, "greedy": args.greedy_agents,
                  "saez_warmup": args.saez_warmup_episodes,
                  "saez_episodes": args.saez_episodes, "optimum_sweeps": args.optimum_sweeps,
                  "threads": max(1, (os.cpu_count() or 1) // args.workers)}  # fmt: skip
    for run in runs:
        if manifest.status(run.name) == "done":
            continue
        folder = run.folder(results_dir)
        folder.mkdir(parents=True, exist_ok=True)
        overrides = phase_overrides(args.overrides, run.phase)
        write_yaml(folder / "config.yaml",
                   build_run_config(run, args.device, overrides, args.workers,
                                    args.schedule_envs, args.tax_annealing_fraction))  # fmt: skip
        phase1 = str(run.folder(results_dir).with_name(run.depends_on)) if run.depends_on else None
        info = {"name": run.name, "scenario": args.scenario, "phase": run.phase,
                "schedule": run.schedule, "seed": run.seed, "steps": run.steps,
                "config_name": run.config_name, "phase1_folder": phase1,
                "evaluation": evaluation}  # fmt: skip
        write_json(folder / "run.json", info)
        if (run.phase, run.schedule) not in checked:
            checked.add((run.phase, run.schedule))
            argv = ["--config", str(folder / "config.yaml"), "--dry_run"]
            if not (folder / "train").exists():  # else the worker sets it aside first
                argv += ["--results_dir", str(folder / "train")]
            training_script.prepare(training_script.parse_args(argv))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    results_dir = Path(args.results_dir)
    runs = plan_runs(args.scenario, args.seeds, args.phase1_steps or 0, args.phase2_steps,
                     args.schedules)  # fmt: skip
    try:
        if not args.no_plot:
            require_modules(["matplotlib"], "the tax protocol's plot (or pass --no_plot)")
        if args.device == "cuda":
            import torch

            if not torch.cuda.is_available():
                raise ConfigError(
                    "--device cuda: no CUDA GPU is visible to torch; use --device cpu"
                )
        results_dir.mkdir(parents=True, exist_ok=True)
        manifest = Manifest(results_dir, settings_of(args), runs)
        prepare_runs(args, runs, manifest)
    except (ConfigError, MissingExtraError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"tax protocol: {args.scenario}, seeds {args.seeds}, {len(runs)} runs, "
          f"{args.workers} at a time on {args.device}; results in {results_dir}", flush=True)  # fmt: skip
    start = time.perf_counter()
    old_handler = raise_on_sigterm()
    try:
        statuses = run_all(runs, manifest, results_dir, args.workers,
                           lambda line: print(line, flush=True),
                           lambda name: report.run_summary(results_dir / name))  # fmt: skip
    except (KeyboardInterrupt, Stopped):
        print_results(args, runs, partial=True)
        print("interrupted: rerun the same command to resume", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, old_handler)
    if not print_results(args, runs, partial=False):
        print("error: no run finished; see the runs' log.txt", file=sys.stderr)
        return 1
    print(f"wall clock {(time.perf_counter() - start) / 60:.1f} min")
    failed = [n for n, s in statuses.items() if s != "done"]
    if failed:
        print(f"not done: {', '.join(f'{n} ({statuses[n]})' for n in failed)}", file=sys.stderr)
        return 1
    return 0


def print_results(args: argparse.Namespace, runs: list[RunSpec], partial: bool) -> bool:
    """Write the CSV and print the table (and the plot) of the scored runs; ``partial``: after
    an interruption, with the finished runs only, said so. False when no run has scores."""
    results_dir = Path(args.results_dir)
    rows = report.collect_rows(results_dir, args.scenario, [r.name for r in runs])
    if not rows:
        return False
    if partial:
        print(f"partial table: the {len(rows)} scored runs finished before the interruption")
    print(f"table: {report.write_csv(results_dir / report.CSV_NAME, rows)}")
    print(report.format_table(rows, SCENARIOS[args.scenario].score), flush=True)
    if not partial and not args.no_plot and is_installed("matplotlib"):
        title = f"{args.scenario}: {len(args.seeds)} seeds"
        print(f"plot: {report.plot_frontier(results_dir / report.PLOT_NAME, rows, title)}")
    return True

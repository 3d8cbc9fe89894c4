"""``ai-economist-simulate``: a scenario under named policies over parameter sweeps.

Examples::

    ai-economist-simulate --policy open closed closed-180-then-open --out runs/sweep
    ai-economist-simulate --policy open closed --sweep infection_intercept=0.5:1.5:11 \\
        --sweep unemployment=0.8,1.0,1.2 --workers 2 --out runs/sweep
    ai-economist-simulate --scenario tutorial --policy real-world schedule:my_policy.csv
    ai-economist-simulate --policy checkpoint:runs/covid/default/<run> --sweep seed=0:9:10
    ai-economist-simulate --policy open --ray_address 10.0.0.1:6379     # on a Ray cluster
    ai-economist-simulate --scenario one-step-economy --policy free-market us-federal saez \
        fixed:0.1 --sweep isoelastic_eta=0.1:0.5:5 --sweep seed=0:4:5 --out runs/taxes
    ai-economist-simulate --scenario gather-trade-build --policy free-market us-federal \
        --sweep energy_cost=0.1,0.21,0.4 --sweep episode_length=200 --out runs/gtb

The scenarios: ``training`` and ``tutorial`` (COVID-19, the default ``training``),
``one-step-economy`` and ``gather-trade-build`` (tax policies: ``free-market``,
``us-federal``, ``saez``, ``fixed:RATES``, ``checkpoint:RUN``; ``--agents`` picks the agents'
behaviour, ``--episodes`` the episodes per run; see ``ai_economist.simulate.economies``).

Writes ``<out>/sweep.csv`` (one row per run: its parameters and outcomes) and, with
matplotlib, ``<out>/frontier.png`` (deaths vs unemployment; equality vs productivity for the
economies) and ``<out>/welfare.png``; prints the mean outcomes per
policy.  Bad input (unknown policy, bad schedule CSV, bad sweep, a sweep of more than
``--max_runs`` runs, ``--workers`` below 1, unreachable Ray cluster) exits with status 2
and a message saying what was expected.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ai_economist.extras import MissingExtraError
from ai_economist.simulate.api import DEFAULT_CHUNK_SIZE
from ai_economist.simulate.errors import SimulateError
from ai_economist.simulate.policies import NAMES, PREFIXES
from ai_economist.simulate.scenarios import SCENARIOS, get_scenario
from ai_economist.simulate.sweep import MAX_RUNS, PARAMETERS
from ai_economist.simulate.table import SweepTable
from ai_economist.warp_drive.training.schema import ConfigError

SUMMARY = ("planner_reward", "deaths_thousands", "mean_unemployment_rate_pct")
OPTIONS = ("days", "agents", "episodes", "backend", "chunk_size")  # passed only when given


def build_parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    sweeps = "; ".join(f"{n}: {p.doc}" for n, p in PARAMETERS.items())
    parser = argparse.ArgumentParser(
        prog="ai-economist-simulate",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"COVID-19 sweep parameters: {sweeps}. The economies': --scenario NAME "
        "--list_parameters",
    )
    parser.add_argument(
        "--policy",
        nargs="+",
        metavar="POLICY",
        help=f"policies: {', '.join(NAMES)}, or {', '.join(p + '...' for p in PREFIXES)} "
        "(COVID-19); free-market, us-federal, saez, fixed:RATES, checkpoint:RUN (economies)",
    )
    parser.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="NAME=VALUES",
        help="NAME=V1,V2,... or NAME=START:STOP:NUM (repeat for more parameters)",
    )
    parser.add_argument(
        "--scenario",
        default="training",
        choices=sorted(SCENARIOS),
        help="COVID-19 training: 540 days, m_a 0.3, m_p 0.45; tutorial: 405 days, 1, 1; "
        "one-step-economy, gather-trade-build: the economies (their sweep parameters: "
        "--scenario NAME --list_parameters)",
    )
    parser.add_argument(
        "--days", type=int, help="COVID-19 episode length (default: the scenario's)"
    )
    parser.add_argument(
        "--agents",
        help="economies: the agents' behaviour, checkpoint:RUN or a baseline (one-step-economy: "
        "best-response (default) or random; gather-trade-build: builder (default) or random)",
    )
    parser.add_argument(
        "--episodes",
        type=int,
        help="economies: episodes per run, the last measured (the Saez model learns over "
        "them; default 100 one-step-economy, 1 gather-trade-build)",
    )
    parser.add_argument(
        "--backend",
        help="economies: the model the runs step on (numpy, the batched numpy model: the default "
        "and, today, the only one)",
    )
    parser.add_argument(
        "--list_parameters", action="store_true", help="print the scenario's sweep parameters"
    )
    parser.add_argument("--workers", type=int, default=1, help="local processes")
    parser.add_argument(
        "--max_runs",
        type=int,
        default=MAX_RUNS,
        help=f"refuse a sweep of more runs than this, before any work (default {MAX_RUNS:,})",
    )
    parser.add_argument(
        "--ray_address", help="run on this Ray cluster (HOST:PORT, ray://..., auto, local)"
    )
    parser.add_argument(
        "--chunk_size",
        type=int,
        help=f"runs stepped together as one batch (default {DEFAULT_CHUNK_SIZE} COVID-19, "
        "64 economies)",
    )
    parser.add_argument(
        "--greedy", action="store_true", help="checkpoint policies take their most likely action"
    )
    parser.add_argument("--out", default="simulate_out", help="output folder")
    parser.add_argument("--no_plots", action="store_true", help="write the CSV only")
    parser.add_argument("--no_progress", action="store_true", help="no progress bar")
    return parser


def summarize(table: SweepTable, columns: Sequence[str] = SUMMARY) -> str:
    """Mean outcomes per policy, one line each."""
    lines = [f"{'policy':<32} {'runs':>6} " + " ".join(f"{n:>26}" for n in columns)]
    for policy in dict.fromkeys(table["policy"]):
        rows = table.where(policy=policy)
        means = " ".join(f"{rows[n].mean():>26.2f}" for n in columns)
        lines.append(f"{str(policy):<32} {len(rows):>6} {means}")
    return "\n".join(lines)


def _output_dir(path: str) -> Path:
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise SimulateError(f"--out {path!r} is a file; expected a folder (created if missing)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SimulateError(f"--out {path!r} cannot be created: {exc}") from None
    return out


def _options(args: argparse.Namespace, accepted: Sequence[str], scenario: str) -> dict:
    """The scenario options given on the command line; one it does not take is an error."""
    given = {k: getattr(args, k) for k in OPTIONS if getattr(args, k) is not None}
    extra = sorted(set(given) - set(accepted) - {"chunk_size"})
    if extra:
        raise SimulateError(
            f"--{extra[0]} does not apply to --scenario {scenario} (it takes "
            f"{', '.join('--' + o for o in accepted) or 'none of --days/--agents/--episodes'})"
        )
    return given


def _parameters(scenario) -> str:
    def default(p) -> str:
        return "the scenario's" if p.default is None else f"{p.default}"

    return "\n".join(f"{n}: {p.doc} (default {default(p)})" for n, p in scenario.parameters.items())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; 0 on success, 2 for bad input."""
    parser = build_parser()
    args = parser.parse_args(argv)
    scenario = get_scenario(args.scenario)
    if args.list_parameters:
        print(_parameters(scenario))
        return 0
    if not args.policy:
        parser.error("the following arguments are required: --policy")
    try:
        out = _output_dir(args.out)
        start = time.perf_counter()
        table = scenario.run(
            args.policy, args.sweep, workers=args.workers, ray_address=args.ray_address,
            greedy=args.greedy, progress=not args.no_progress, max_runs=args.max_runs,
            **_options(args, scenario.options, args.scenario),
        )  # fmt: skip
    except (ConfigError, FileNotFoundError, MissingExtraError) as exc:
        print(f"ai-economist-simulate: error: {exc}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - start
    csv_path = table.to_csv(out / "sweep.csv")
    plots = [] if args.no_plots else scenario.plots(table, out)
    print(summarize(table, scenario.summary))
    length = f" of {table['days'][0]} days" if "days" in table.names else ""
    print(f"{len(table)} runs{length} in {seconds:.1f} s; wrote {csv_path}"
          + "".join(f", {p}" for p in plots))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

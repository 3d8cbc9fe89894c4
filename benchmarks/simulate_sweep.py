"""How fast does ``ai-economist-simulate`` sweep?  Target: 10,000 540-day runs in under a minute.

    python benchmarks/simulate_sweep.py [--runs 10000] [--days 540] [--workers 2]

Runs the policy-research sweep (``ai_economist.simulate.run_sweep``) of four fixed policies
(open; closed with full subsidy; closed 180 days then open; level 6 all episode) over a grid of
infection-rate and unemployment modulations, on the batched float64 numpy model, with
``--workers`` local processes.  Prints the wall time, the runs per second, the CPU seconds all
processes used, and the runs per CPU second (the per-core rate, which does not depend on how
busy the machine's other cores are), next to the machine (CPU model, cores, load average).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ai_economist.simulate import run_sweep  # noqa: E402

POLICIES = ("open", "closed", "closed-180-then-open", "fixed:6,540,6,0")
TARGET_SECONDS = 60.0


def cpu_model() -> str:
    """The CPU's model name (Linux), else the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def sweep_for(runs: int) -> list[str]:
    """A square grid of the two modulations giving at least ``runs`` runs over the policies."""
    side = max(1, math.ceil(math.sqrt(runs / len(POLICIES))))
    return [f"infection_intercept=0.5:1.5:{side}", f"unemployment=0.5:1.5:{side}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10_000, help="runs (rounded up to the grid)")
    parser.add_argument("--days", type=int, default=540, help="days per run")
    parser.add_argument("--workers", type=int, default=2, help="local processes")
    parser.add_argument("--chunk_size", type=int, default=250, help="runs per batch")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; load average before "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (other users' processes share the cores)")  # fmt: skip
    cpu0, start = cpu_seconds(), time.perf_counter()
    table = run_sweep(
        POLICIES, sweep_for(args.runs), days=args.days, workers=args.workers,
        chunk_size=args.chunk_size,
    )  # fmt: skip
    wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu0
    n = len(table)
    print(f"{n} runs x {args.days} days with {args.workers} worker(s): {wall:.1f} s wall, "
          f"{n / wall:,.0f} runs/s, {n * args.days / wall:,.0f} env-days/s")  # fmt: skip
    print(f"CPU time of all processes {cpu:.1f} s: {n / cpu:,.0f} runs per CPU second "
          f"({n * args.days / cpu:,.0f} env-days per CPU second, per core)")  # fmt: skip
    if args.days == 540 and n >= 10_000:
        verdict = "meets" if wall < TARGET_SECONDS else "misses"
        print(f"target: 10,000 540-day runs in under {TARGET_SECONDS:.0f} s: {verdict} it "
              f"({wall / TARGET_SECONDS:.2f}x of the budget)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

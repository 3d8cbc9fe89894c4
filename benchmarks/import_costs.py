"""What each import costs at start-up: every statement in a fresh ``python -c`` process.

    python benchmarks/import_costs.py [--repeats 2] [--statements "import torch" ...] [--pycache_prefix DIR] [--importtime 12]

Prints, per statement, the best wall time of ``--repeats`` fresh processes (and each run) with
the CPU seconds (user + system) of the fastest: wall well above CPU means the process waited
(on the disk, for shared libraries), not computed,
so the start-up of the published command (``startup_profile.py``) can be split into torch,
``torch._dynamo``, Numba, pycuda, Triton and this package. With ``--pycache_prefix DIR`` the
statements run a second time with ``PYTHONPYCACHEPREFIX=DIR`` (bytecode caches written there:
tells whether a slow import comes from a site-packages whose ``__pycache__`` cannot be written).
With ``--importtime N`` each statement runs once more under ``python -X importtime`` and the N
modules with the largest own (self) import time are printed.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

DEFAULT_STATEMENTS = (
    "pass",
    "import numpy",
    "import torch",
    "import torch; torch.zeros(1, device='cuda')",
    "import torch, torch._dynamo",
    "import torch; torch.optim.Adam([torch.zeros(1, requires_grad=True)])",
    "import numba",
    "from numba import cuda",
    "import pycuda.driver",
    "import pycuda.autoprimaryctx",
    "import triton",
    "import torch.utils.tensorboard",
    "import ai_economist.training.training_script",
)


def children_cpu_seconds() -> float:
    """User plus system CPU seconds of every finished child process so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_statement(
    statement: str, repeats: int, env: dict[str, str]
) -> tuple[list[float], list[float], int]:
    """Wall and CPU seconds of ``repeats`` fresh processes running ``statement``; the last
    exit code."""
    times, cpus, code = [], [], 0
    for _ in range(repeats):
        cpu0, start = children_cpu_seconds(), time.perf_counter()
        done = subprocess.run([sys.executable, "-c", statement], capture_output=True, env=env)
        times.append(time.perf_counter() - start)
        cpus.append(children_cpu_seconds() - cpu0)
        code = done.returncode
    return times, cpus, code


def report(statements: list[str], repeats: int, env: dict[str, str], label: str) -> None:
    """One line per statement: best wall time, its CPU time, every run, exit code (non-zero:
    not installed)."""
    print(label, flush=True)
    for statement in statements:
        times, cpus, code = time_statement(statement, repeats, env)
        runs = " ".join(f"{t:.2f}" for t in times)
        cpu = cpus[times.index(min(times))]
        print(f"{min(times):6.2f} s wall, {cpu:5.2f} s CPU (runs {runs}) rc={code} :: {statement}",
              flush=True)  # fmt: skip


def parse_importtime(stderr: str) -> list[tuple[int, int, str]]:
    """``(self_us, cumulative_us, module)`` rows of ``python -X importtime`` output."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        fields = line[len("import time:") :].split("|")
        if len(fields) == 3 and fields[0].strip().isdigit():
            rows.append((int(fields[0]), int(fields[1]), fields[2].strip()))
    return rows


def report_importtime(statements: list[str], top: int, env: dict[str, str]) -> None:
    """The ``top`` modules by own import time of each statement, under ``-X importtime``."""
    for statement in statements:
        done = subprocess.run([sys.executable, "-X", "importtime", "-c", statement],
                              capture_output=True, text=True, env=env)  # fmt: skip
        rows = parse_importtime(done.stderr)
        total = sum(r[0] for r in rows) / 1e6
        print(f"-X importtime :: {statement}: {len(rows)} modules, {total:.2f} s in all; "
              f"largest own times:", flush=True)  # fmt: skip
        for own, cumulative, module in sorted(rows, reverse=True)[:top]:
            print(f"  {own / 1e6:6.3f} s own {cumulative / 1e6:6.3f} s cumulative  {module}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2, help="fresh processes per statement")
    parser.add_argument("--statements", nargs="+", default=list(DEFAULT_STATEMENTS))
    parser.add_argument(
        "--pycache_prefix", default="", help="also run with this PYTHONPYCACHEPREFIX"
    )
    parser.add_argument("--importtime", type=int, default=0, metavar="N",
                        help="also print the N modules with the largest own import time")  # fmt: skip
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats}: needs at least 1")
    if args.importtime < 0:
        parser.error(f"--importtime {args.importtime}: expected 0 or more modules")
    env = dict(os.environ)
    report(
        args.statements,
        args.repeats,
        env,
        f"{sys.executable}, fresh processes, best of {args.repeats}:",
    )
    if args.pycache_prefix:
        prefixed = dict(env, PYTHONPYCACHEPREFIX=args.pycache_prefix)
        report(args.statements, args.repeats, prefixed,
               f"the same with PYTHONPYCACHEPREFIX={args.pycache_prefix}:")  # fmt: skip
    if args.importtime:
        report_importtime(args.statements, args.importtime, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())

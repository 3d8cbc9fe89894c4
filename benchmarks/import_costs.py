"""What each import costs at start-up: every statement in a fresh ``python -c`` process.

    python benchmarks/import_costs.py [--repeats 2] [--statements "import torch" ...] [--pycache_prefix DIR]

Prints, per statement, the best wall time of ``--repeats`` fresh processes (and each run),
so the start-up of the published command (``startup_profile.py``) can be split into torch,
``torch._dynamo``, Numba, pycuda, Triton and this package. With ``--pycache_prefix DIR`` the
statements run a second time with ``PYTHONPYCACHEPREFIX=DIR`` (bytecode caches written there:
tells whether a slow import comes from a site-packages whose ``__pycache__`` cannot be written).
"""

from __future__ import annotations

import argparse
import os
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


def time_statement(statement: str, repeats: int, env: dict[str, str]) -> tuple[list[float], int]:
    """Wall seconds of ``repeats`` fresh processes running ``statement``; the last exit code."""
    times, code = [], 0
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", statement], capture_output=True, env=env)
        times.append(time.perf_counter() - start)
        code = done.returncode
    return times, code


def report(statements: list[str], repeats: int, env: dict[str, str], label: str) -> None:
    """One line per statement: best wall time, every run, exit code (non-zero: not installed)."""
    print(label, flush=True)
    for statement in statements:
        times, code = time_statement(statement, repeats, env)
        runs = " ".join(f"{t:.2f}" for t in times)
        print(f"{min(times):6.2f} s (runs {runs}) rc={code} :: {statement}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2, help="fresh processes per statement")
    parser.add_argument("--statements", nargs="+", default=list(DEFAULT_STATEMENTS))
    parser.add_argument(
        "--pycache_prefix", default="", help="also run with this PYTHONPYCACHEPREFIX"
    )
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats}: needs at least 1")
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
    return 0


if __name__ == "__main__":
    sys.exit(main())

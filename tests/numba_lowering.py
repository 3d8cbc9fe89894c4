"""Lowering Numba CUDA kernels with the real compiler on a machine without a GPU: a script run in
a fresh interpreter (``NUMBA_ENABLE_CUDASIM=0``) that fakes an sm_90 device, shared by the
lowering tests."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SKIP = 77
PREAMBLE = textwrap.dedent(
    f"""
    import re, sys, types as pytypes
    try:
        import numba
        from numba import types
        from numba.cuda import compiler
        import numba.cuda.dispatcher as dispatcher
        compiler.compile_cuda, dispatcher.get_current_device
    except Exception as exc:
        print(f"numba-cuda internals unavailable: {{exc!r}}")
        sys.exit({SKIP})
    # Device functions are compiled for the current device's compute capability: fake sm_90.
    dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=(9, 0))
    """
)
REPO_ROOT = Path(__file__).resolve().parents[1]


def lower_in_subprocess(body: str, *argv: str) -> str:
    """Run ``PREAMBLE`` + ``body`` (which lowers kernels with ``compiler.compile_cuda``) from the
    repository root; its standard output. Skips when this numba-cuda lacks the internals."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", PREAMBLE + textwrap.dedent(body), *argv],
        capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=600,
    )  # fmt: skip
    if proc.returncode == SKIP:
        pytest.skip(proc.stdout.strip())
    assert proc.returncode == 0, f"numba lowering failed:\n{proc.stdout}\n{proc.stderr[-6000:]}"
    return proc.stdout

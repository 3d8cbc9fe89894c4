"""Helpers of the first-hour tests: which optional packages an install line leaves out, and
running code in a fresh interpreter that cannot import them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

# distribution name in pyproject.toml -> module name(s) it installs
MODULES = {
    "torch": ["torch"],
    "tqdm": ["tqdm"],
    "tensorboard": ["tensorboard"],
    "matplotlib": ["matplotlib"],
    "numba": ["numba"],
    "numba-cuda": ["numba_cuda"],
    "pycuda": ["pycuda"],
    "lz4": ["lz4"],
    "pytest": ["pytest"],
    "ruff": ["ruff"],
    "setuptools": ["setuptools"],  # dev: builds the entry-point test's fixture package offline
    "pettingzoo": ["pettingzoo"],
    "ray": ["ray"],
    "lightning": ["lightning", "pytorch_lightning"],  # installs both import names
    "gymnasium": [],  # a base dependency too (extras only raise its minimum): never hidden
}


def pyproject() -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import pytest

        tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml needs Python >= 3.11")
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def _dist_name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].strip().lower()


def modules_outside(extras: list[str]) -> list[str]:
    """Modules of the optional dependencies that ``pip install ".[extras]"`` does not install."""
    optional = pyproject()["project"]["optional-dependencies"]
    installed = {_dist_name(r) for extra in extras for r in optional[extra]}
    every = {_dist_name(r) for reqs in optional.values() for r in reqs}
    unknown = every - set(MODULES)
    if unknown:
        raise AssertionError(f"add the module names of {sorted(unknown)} to tests/first_hour.py")
    return sorted(m for dist in every - installed for m in MODULES[dist])


def run_without(modules: list[str], code: str, timeout: float = 300) -> str:
    """Run ``code`` in a fresh interpreter where importing any of ``modules`` fails; return
    its stdout (AssertionError with the output when it fails)."""
    prelude = f"import sys\nfor _m in {modules!r}:\n    sys.modules[_m] = None\n"
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=str(REPO_ROOT))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    result = subprocess.run(
        [sys.executable, "-c", prelude + code],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if result.returncode != 0:
        raise AssertionError(
            f"failed without {modules}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return result.stdout


def last_json_line(stdout: str):
    """The JSON value printed on the last line of ``stdout``."""
    return json.loads(stdout.strip().splitlines()[-1])

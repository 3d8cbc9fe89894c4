"""Shared fixtures of the benchmark scripts' tests."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
"""The repository's ``benchmarks/`` folder (scripts, not a package)."""


@pytest.fixture
def import_benchmark(monkeypatch):
    """``import_benchmark("name")``: the script ``benchmarks/name.py`` as a module, with
    ``benchmarks/`` on ``sys.path`` for the test (spawned workers inherit it)."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module

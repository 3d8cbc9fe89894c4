"""``<results_dir>/manifest.json``: the protocol's settings and each run's status.

A status is ``pending``, ``running``, ``done`` (trained and evaluated: ``result.json``
exists), ``failed`` (the exit status is kept), ``interrupted`` (stopped by Ctrl-C or SIGTERM;
its checkpoint is resumed) or ``skipped`` (its phase-1 run did not finish). A rerun with the
same settings keeps the ``done`` runs and runs the others again; other
settings in the same folder are refused (they would mix two protocols in one table).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from ai_economist.training.config import ConfigError
from ai_economist.training.tax_protocol.plan import RunSpec, write_json

MANIFEST = "manifest.json"
RESULT = "result.json"


class Manifest:
    """The manifest of one results folder (kept on disk after every change)."""

    def __init__(self, results_dir: Path, settings: dict[str, Any], runs: list[RunSpec]) -> None:
        self.path = results_dir / MANIFEST
        self.results_dir = results_dir
        self.data: dict[str, Any] = {"settings": settings, "runs": {}}
        if self.path.exists():
            self._take_over(settings)
        for run in runs:
            entry = self.data["runs"].setdefault(run.name, {})
            entry.update(phase=run.phase, schedule=run.schedule, seed=run.seed,
                         steps=run.steps, depends_on=run.depends_on,
                         folder=str(run.folder(results_dir)))  # fmt: skip
            if entry.get("status") != "done" or not self.has_result(run):
                entry["status"] = "pending"
        self.save()

    def _take_over(self, settings: dict[str, Any]) -> None:
        try:
            old = json.loads(self.path.read_text())
        except (OSError, ValueError) as exc:
            raise ConfigError(f"--results_dir: {self.path} cannot be read ({exc})") from exc
        # a setting missing from an older manifest counts as None (an option added since,
        # at its default of None)
        diff = sorted(k for k in {**settings, **old.get("settings", {})}
                      if settings.get(k) != old.get("settings", {}).get(k))  # fmt: skip
        if diff:
            raise ConfigError(
                f"--results_dir {self.results_dir}: holds a protocol run with other settings "
                f"(differing: {', '.join(diff)}); rerun with the same options to resume it, "
                "or give another --results_dir"
            )
        self.data = old

    def has_result(self, run: RunSpec) -> bool:
        """The run's ``result.json`` exists."""
        return (run.folder(self.results_dir) / RESULT).is_file()

    def status(self, name: str) -> str:
        return self.data["runs"][name]["status"]

    def set(self, name: str, status: str, **info: Any) -> None:
        """Record ``status`` (and ``info``) of run ``name`` and save."""
        entry = self.data["runs"][name]
        entry.update(status=status, **info)
        entry["updated"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        self.save()

    def save(self) -> None:
        write_json(self.path, self.data)

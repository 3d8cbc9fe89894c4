"""Run the protocol's runs side by side: at most ``workers`` worker processes at a time.

Each run is one ``python -m ai_economist.training.tax_protocol.worker RUN_FOLDER`` process
(its output in ``RUN_FOLDER/log.txt``); on ``--device cuda`` they all share the visible GPU
(the env steps on the host, so several processes keep one GPU busy), on ``--device cpu``
they share the cores (each with ``trainer.num_threads`` = cores / workers). A phase-2 run
starts once its seed's phase-1 run is done; when that failed, the phase-2 runs are
``skipped``. The manifest is saved after every change, so an interrupted protocol resumes.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ai_economist.training.tax_protocol.manifest import Manifest
from ai_economist.training.tax_protocol.plan import RunSpec

POLL_S = 0.2


def worker_command(folder: Path) -> list[str]:
    """The command line of one run's worker process."""
    return [sys.executable, "-m", "ai_economist.training.tax_protocol.worker", str(folder)]


def run_all(
    runs: list[RunSpec],
    manifest: Manifest,
    results_dir: Path,
    workers: int,
    report: Callable[[str], None] = print,
) -> dict[str, str]:
    """Run every pending run (dependencies first, ``workers`` at a time); ``{name: status}``."""
    pending = [r for r in runs if manifest.status(r.name) != "done"]
    for run in runs:
        if manifest.status(run.name) == "done":
            report(f"{run.name}: done earlier, skipped")
    running: dict[str, tuple[subprocess.Popen, float, object]] = {}
    try:
        while pending or running:
            for run in list(pending):
                dep = run.depends_on and manifest.status(run.depends_on)
                if dep in ("failed", "skipped"):
                    pending.remove(run)
                    manifest.set(run.name, "skipped", reason=f"{run.depends_on} {dep}")
                    report(f"{run.name}: skipped ({run.depends_on} {dep})")
                elif len(running) < workers and dep in (None, "done"):
                    pending.remove(run)
                    running[run.name] = start(run, results_dir, manifest)
                    report(f"{run.name}: started (log {run.folder(results_dir) / 'log.txt'})")
            for name, (proc, started, log) in list(running.items()):
                code = proc.poll()
                if code is None:
                    continue
                log.close()
                del running[name]
                status = "done" if code == 0 else "failed"
                wall = time.perf_counter() - started
                manifest.set(name, status, exit_status=code, wall_s=round(wall, 1))
                report(
                    f"{name}: {status} in {wall:.1f} s" + ("" if code == 0 else f" (exit {code})")
                )
            time.sleep(POLL_S)
    finally:
        for name, (proc, _, log) in running.items():  # interrupted: stop our own workers
            proc.terminate()
            proc.wait()
            log.close()
            manifest.set(name, "failed", exit_status=proc.returncode, reason="interrupted")
    return {r.name: manifest.status(r.name) for r in runs}


def start(run: RunSpec, results_dir: Path, manifest: Manifest) -> tuple:
    """Start one run's worker; ``(process, start time, open log file)``."""
    folder = run.folder(results_dir)
    log = open(folder / "log.txt", "a")  # noqa: SIM115 (closed when the process ends)
    proc = subprocess.Popen(worker_command(folder), stdout=log, stderr=subprocess.STDOUT)
    manifest.set(run.name, "running", pid=proc.pid)
    return proc, time.perf_counter(), log

"""Run the protocol's runs side by side: at most ``workers`` worker processes at a time.

Each run is one ``python -m ai_economist.training.tax_protocol.worker RUN_FOLDER`` process
(its output in ``RUN_FOLDER/log.txt``); on ``--device cuda`` they all share the visible GPU
(the env steps on the host, so several processes keep one GPU busy), on ``--device cpu``
they share the cores (each with ``trainer.num_threads`` = cores / workers). A phase-2 run
starts once its seed's phase-1 run is done; when that failed, the phase-2 runs are
``skipped``. The manifest is saved after every change. Ctrl-C or SIGTERM: each running worker
gets one SIGTERM, writes a checkpoint after its current iteration and is marked
``interrupted``; a rerun resumes those runs from their checkpoints.
"""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ai_economist.training.tax_protocol.manifest import Manifest
from ai_economist.training.tax_protocol.plan import RunSpec

POLL_S = 0.2
STOP_WAIT_S = 300  # a worker finishing its iteration and writing its checkpoint
PR_SET_PDEATHSIG = 1


def worker_command(folder: Path) -> list[str]:
    """The command line of one run's worker process."""
    return [sys.executable, "-m", "ai_economist.training.tax_protocol.worker", str(folder)]


def run_all(
    runs: list[RunSpec],
    manifest: Manifest,
    results_dir: Path,
    workers: int,
    report: Callable[[str], None] = print,
    describe: Callable[[str], str] = lambda name: "",
) -> dict[str, str]:
    """Run every pending run (dependencies first, ``workers`` at a time); ``{name: status}``.
    ``describe(name)`` is added to a finished run's line (its scores, as soon as it has
    them)."""
    # phase-1 runs first: every seed's phase 2 can then start as soon as possible
    pending = sorted((r for r in runs if manifest.status(r.name) != "done"), key=lambda r: r.phase)
    for run in runs:
        if manifest.status(run.name) == "done":
            report(f"{run.name}: done earlier, skipped")
    running: dict[str, tuple[subprocess.Popen, float, object]] = {}
    try:
        while pending or running:
            for run in list(pending):
                dep = run.depends_on and manifest.status(run.depends_on)
                if dep in ("failed", "skipped", "interrupted"):
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
                tail = describe(name) if code == 0 else f" (exit {code})"
                report(f"{name}: {status} in {wall:.1f} s{tail}")
            time.sleep(POLL_S)
    finally:
        stop_workers(running, manifest, report)
    return {r.name: manifest.status(r.name) for r in runs}


def stop_workers(running: dict, manifest: Manifest, report: Callable[[str], None]) -> None:
    """Interrupted: one SIGTERM to each running worker (its trainer finishes the iteration and
    writes a checkpoint, which the next attempt resumes), then wait for them."""
    for proc, _, _ in running.values():
        proc.send_signal(signal.SIGTERM)
    for name, (proc, _, log) in running.items():
        try:
            proc.wait(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        manifest.set(name, "interrupted", exit_status=proc.returncode)
        report(f"{name}: interrupted (exit {proc.returncode}); a rerun resumes it")


def _die_with_parent() -> None:  # pragma: no cover (runs in the child before exec)
    """Linux: the worker gets SIGTERM when the protocol process dies, even by SIGKILL."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
    except (OSError, AttributeError):
        pass


def start(run: RunSpec, results_dir: Path, manifest: Manifest) -> tuple:
    """Start one run's worker in its own session (a Ctrl-C or a signal to the protocol's
    process group reaches the protocol only; it forwards one SIGTERM); ``(process, start
    time, open log file)``."""
    folder = run.folder(results_dir)
    log = open(folder / "log.txt", "a")  # noqa: SIM115 (closed when the process ends)
    proc = subprocess.Popen(
        worker_command(folder), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
    )  # fmt: skip
    manifest.set(run.name, "running", pid=proc.pid)
    return proc, time.perf_counter(), log


class Stopped(Exception):
    """SIGTERM reached the protocol process."""


def raise_on_sigterm() -> Any:
    """Make SIGTERM raise :class:`Stopped` in the main thread; returns the old handler."""

    def handler(signum: int, frame: Any) -> None:
        raise Stopped(signum)

    return signal.signal(signal.SIGTERM, handler)

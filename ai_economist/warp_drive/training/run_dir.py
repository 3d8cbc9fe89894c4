"""Run folders that never collide: exclusive creation, refusal of folders holding a run, a lock.

* :func:`create_run_dir` makes a new run folder with ``os.mkdir`` (never ``exist_ok``); when the
  name is taken (two runs started in the same second), ``-2``, ``-3``, ... is appended.
* :func:`holds_run` says whether a folder already holds a run (``config.yaml``,
  ``checkpoints/``, ``metrics.csv`` or ``metrics.jsonl``); the command line refuses such a
  folder as ``--results_dir`` unless ``--resume`` is given (:func:`check_fresh_run_dir`).
* :class:`RunLock` is a lock file ``<run_dir>/run.lock`` naming the process (PID and host)
  that trains in the folder; a second process is refused with :class:`RunDirLocked`, and a
  lock whose process is gone (same host) is taken over with a note.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

from ai_economist.warp_drive.training.schema import ConfigError

LOCK_NAME = "run.lock"
RUN_MARKERS = ("config.yaml", "checkpoints", "metrics.csv", "metrics.jsonl")
MAX_SUFFIX = 1000


class RunDirInUse(ConfigError):
    """The run folder already holds another run (exit status 2, nothing touched)."""


class RunDirLocked(ConfigError):
    """Another live process trains in this run folder; the message names its PID and host."""


def holds_run(path: str | Path) -> list[str]:
    """The run files found in ``path`` (empty when it holds no run or does not exist)."""
    path = Path(path)
    return [name for name in RUN_MARKERS if (path / name).exists()] if path.is_dir() else []


def check_fresh_run_dir(path: str | Path, key: str) -> None:
    """Refuse a folder that holds another run as the folder of a new run.

    Raises:
        RunDirInUse: naming ``key``, the folder and the run files found in it.
    """
    found = holds_run(path)
    if found:
        raise RunDirInUse(
            f"{key} {path}: holds another run ({', '.join(found)}); a new run never writes "
            f"into it. Give a new folder, or continue that run with --resume {path}"
        )


def create_run_dir(parent: str | Path, name: str) -> Path:
    """Create ``parent/name`` exclusively, or ``parent/name-2``, ``-3``, ... when it exists.

    Raises:
        FileExistsError: after :data:`MAX_SUFFIX` taken names.
    """
    parent = Path(parent)
    parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, MAX_SUFFIX + 1):
        candidate = parent / (name if n == 1 else f"{name}-{n}")
        try:
            os.mkdir(candidate)
        except FileExistsError:
            continue
        return candidate
    raise FileExistsError(f"{parent / name}: {MAX_SUFFIX} run folders of that name exist")


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host (one we may not signal counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: the process exists
        return True
    return True


def _read_lock(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class RunLock:
    """``<run_dir>/run.lock``: held by one process while it trains in the folder.

    The file holds ``{"pid", "host", "since"}``.  Taking a lock held by a live process raises
    :class:`RunDirLocked`; a lock of a process that no longer runs on this host is taken over,
    with a note on stderr.  A lock of another host cannot be checked and is refused.  A second
    trainer of the same process shares the lock (only the one that took it releases it).
    """

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / LOCK_NAME
        self.owned = False

    def acquire(self) -> RunLock:
        """Take the lock (see the class docstring); returns ``self``."""
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                if not self._free_or_stale(me):
                    return self  # this process holds it already
                continue
            with os.fdopen(fd, "w") as f:
                json.dump(me, f)
            self.owned = True
            return self
        raise RunDirLocked(f"run folder {self.path.parent}: cannot take the lock {self.path}")

    def _free_or_stale(self, me: dict) -> bool:
        """True after removing a stale lock; False when this process holds it; raises when a
        live process (or one on another host) holds it."""
        holder = _read_lock(self.path)
        if not holder:  # perhaps being written by a process that just created it
            time.sleep(0.2)
            holder = _read_lock(self.path)
        pid, host = holder.get("pid"), holder.get("host")
        if pid == me["pid"] and host == me["host"]:
            return False
        if isinstance(pid, int) and host == me["host"] and not pid_alive(pid):
            print(
                f"note: taking over the lock {self.path} of process {pid} on {host}, "
                "which no longer runs",
                file=sys.stderr,
            )
        elif not holder:
            print(f"note: replacing the unreadable lock file {self.path}", file=sys.stderr)
        else:
            where = "this host" if host == me["host"] else f"host {host}"
            raise RunDirLocked(
                f"run folder {self.path.parent} is in use: process {pid} on {where} trains in "
                f"it (lock file {self.path}). Wait for it to finish or stop it; if it is "
                "certainly gone, delete the lock file"
            )
        self.path.unlink(missing_ok=True)
        return True

    def release(self) -> None:
        """Remove the lock file if this object took it (safe to call more than once)."""
        if self.owned:
            holder = _read_lock(self.path)
            if holder.get("pid") == os.getpid():
                self.path.unlink(missing_ok=True)
            self.owned = False

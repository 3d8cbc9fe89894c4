"""Verified, atomic full-state checkpoints: models, optimizers, RNG streams, counters, config, env.

A checkpoint ``<run_dir>/checkpoints/ckpt_<N>.pt`` is one ``torch.save`` file made only of
tensors and plain Python containers, so it loads with ``torch.load(weights_only=True)``.  Beside
it, ``ckpt_<N>.pt.sha256`` holds the SHA-256 of its bytes (``sha256sum -c`` format); a file
whose bytes differ is never loaded, and a run directory resumes from its newest checkpoint that
verifies.  Both files are written to temporary names and moved into place with ``os.replace``,
so a crash never leaves a truncated checkpoint behind; leftovers of a killed save are removed
at the next save and on resume.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import re
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ai_economist.warp_drive.training.durable import OutputWriteError, write_atomic
from ai_economist.warp_drive.training.run_dir import pid_alive
from ai_economist.warp_drive.training.schema import ConfigError

FORMAT_VERSION = 2
"""Format 2 adds the SHA-256 sidecar; format 1 (no checksum) still loads, with a warning."""
READABLE_VERSIONS = (1, 2)
CHECKPOINT_DIR = "checkpoints"
CHECKSUM_SUFFIX = ".sha256"
_NAME = re.compile(r"^ckpt_(\d+)\.pt$")
_TEMPORARY = re.compile(r"^\.ckpt_\d+\.pt(?:\.sha256)?\.tmp(\d+)$")
_REQUIRED_KEYS = ("iteration", "env_steps", "config", "policies", "ranks")
_EXPECTED = (
    "expected a checkpoint written by the trainer (<run_dir>/checkpoints/ckpt_<N>.pt) "
    "or a run directory holding checkpoints/"
)


class CheckpointError(ConfigError):
    """A checkpoint that cannot be used: damaged, not a checkpoint, or not fitting the run.

    A :class:`~ai_economist.warp_drive.training.schema.ConfigError`, so the command line
    reports it with exit status 2.
    """


class CheckpointNotFound(CheckpointError, FileNotFoundError):
    """The path names no checkpoint (missing, or a folder without ``checkpoints/ckpt_*.pt``)."""


def checkpoint_path(run_dir: str | Path, iteration: int) -> Path:
    """``<run_dir>/checkpoints/ckpt_<iteration>.pt``."""
    return Path(run_dir) / CHECKPOINT_DIR / f"ckpt_{iteration:08d}.pt"


def checksum_path(checkpoint: str | Path) -> Path:
    """The SHA-256 sidecar of a checkpoint: ``ckpt_<N>.pt.sha256`` (``sha256sum -c`` format)."""
    checkpoint = Path(checkpoint)
    return checkpoint.with_name(checkpoint.name + CHECKSUM_SUFFIX)


def file_sha256(path: str | Path) -> str:
    """The hex SHA-256 digest of a file's bytes."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> Path:
    """Write ``state`` to ``path`` and its SHA-256 to ``path.sha256``, both atomically.

    The state is serialised in memory first; each file then goes to a temporary name, is
    flushed to disk and moved into place with ``os.replace``, the sidecar first, so an
    interrupted save leaves either no checkpoint or one whose checksum verifies.  Temporary
    files left by an earlier, killed save are removed first.

    Raises:
        OutputWriteError: an OS error (e.g. ``ENOSPC``, a full disk) while writing; the
            earlier checkpoints are untouched and the message names the newest of them.
    """
    path = Path(path)
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputWriteError(folder, "checkpoint folder", exc) from exc
    clean_temporary_files(folder)
    buffer = io.BytesIO()
    torch.save(state, buffer)
    data = buffer.getvalue()
    sidecar = checksum_path(path)
    newest = [p for p in sorted(folder.iterdir()) if _NAME.match(p.name) and p != path]
    advice = (
        f"The last good checkpoint, {newest[-1]}, is intact: resume from it."
        if newest
        else "No earlier checkpoint exists."
    )
    try:
        digest = hashlib.sha256(data).hexdigest()
        write_atomic(sidecar, f"{digest}  {path.name}\n".encode(), "checkpoint checksum", advice)
        write_atomic(path, data, "checkpoint", advice)
    except OutputWriteError:
        if not path.exists():
            sidecar.unlink(missing_ok=True)
        raise
    return path


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process saves one checkpoint at a time: a leftover is stale
    return pid_alive(pid)


def clean_temporary_files(folder: str | Path) -> list[Path]:
    """Remove what interrupted saves left in a checkpoint folder; return the removed paths.

    That is temporary files (``.ckpt_<N>.pt.tmp<pid>``) of processes that no longer run, and
    checksum files whose checkpoint was never moved into place.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    removed = []
    for entry in folder.iterdir():
        match = _TEMPORARY.match(entry.name)
        orphan = entry.name.endswith(".pt" + CHECKSUM_SUFFIX) and not entry.with_suffix("").exists()
        if (match and not _pid_alive(int(match.group(1)))) or (orphan and entry.is_file()):
            entry.unlink(missing_ok=True)
            removed.append(entry)
    return sorted(removed)


def verify_checkpoint(path: str | Path) -> bool:
    """Check a checkpoint's bytes against its SHA-256 sidecar.

    Returns:
        True when the checksum verifies; False for a file without a sidecar (a format-1
        checkpoint, or a plain state dict), whose bytes cannot be verified.

    Raises:
        CheckpointNotFound: the file does not exist.
        CheckpointError: the file is empty, or its digest differs from the recorded one.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointNotFound(f"checkpoint {path} does not exist; {_EXPECTED}")
    size = path.stat().st_size
    if size == 0:
        raise CheckpointError(f"checkpoint {path} is empty (0 bytes): its save was interrupted")
    sidecar = checksum_path(path)
    if not sidecar.exists():
        return False
    expected = sidecar.read_text(errors="replace").split(maxsplit=1)
    if not expected or not re.fullmatch(r"[0-9a-f]{64}", expected[0]):
        raise CheckpointError(
            f"checkpoint {path}: its checksum file {sidecar.name} does not hold a SHA-256 "
            f"digest (expected '<64 hex digits>  {path.name}')"
        )
    actual = file_sha256(path)
    if actual != expected[0]:
        raise CheckpointError(
            f"checkpoint {path} is damaged: the SHA-256 of its {size} bytes is {actual[:16]}..., "
            f"{sidecar.name} records {expected[0][:16]}... (altered or truncated after saving)"
        )
    return True


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict:
    """Load a checkpoint written by :func:`save_checkpoint`, after verifying its checksum.

    Raises:
        CheckpointError: naming the file and what is wrong (damaged, unreadable, not a
            trainer checkpoint, a format-2 file without its checksum).
    """
    path = Path(path)
    verified = verify_checkpoint(path)
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # torch reports damaged files with many exception types
        raise CheckpointError(f"{path} cannot be read ({_load_failure(exc)}); {_EXPECTED}") from exc
    version = state.get("format_version") if isinstance(state, dict) else None
    if version not in READABLE_VERSIONS:
        raise CheckpointError(
            f"{path} is not a trainer checkpoint (format_version {version!r}, readable: "
            f"{list(READABLE_VERSIONS)}); {_EXPECTED}"
        )
    missing = [k for k in _REQUIRED_KEYS if k not in state]
    if missing:
        raise CheckpointError(f"checkpoint {path} lacks {missing}; {_EXPECTED}")
    if not verified and version >= 2:
        raise CheckpointError(
            f"checkpoint {path} has no checksum file {checksum_path(path).name}, so its bytes "
            f"cannot be verified; copy it along with the checkpoint"
        )
    if not verified:
        warnings.warn(
            f"checkpoint {path} predates checksums (format 1): loaded without verifying its bytes",
            stacklevel=2,
        )
    return state


def _load_failure(exc: Exception) -> str:
    """A one-line reason for a failed ``torch.load`` (torch's own messages run to pages)."""
    if isinstance(exc, pickle.UnpicklingError):
        return "not a torch.save file of tensors and plain containers"
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first[:120]}"


def list_checkpoints(run_dir: str | Path) -> list[Path]:
    """The run's checkpoints, oldest first."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _NAME.match(p.name))]
    return [p for _, p in sorted(found)]


def find_checkpoint(
    path_or_run_dir: str | Path, report: Callable[[str], None] | None = None
) -> Path:
    """A checkpoint file, or the newest checkpoint of a run directory that verifies.

    A run directory's damaged, empty or unreadable checkpoints are skipped, newest first;
    each one skipped is reported (``report(message)``, default: a warning) with the reason.

    Raises:
        CheckpointNotFound: the path does not exist, or is a folder without checkpoints.
        CheckpointError: a damaged file, or a run directory with no usable checkpoint.
    """
    path = Path(path_or_run_dir)
    if path.is_file():
        verify_checkpoint(path)
        return path
    if not path.is_dir():
        raise CheckpointNotFound(f"checkpoint or run directory {path} does not exist")
    candidates = list_checkpoints(path)
    if not candidates and path.name == CHECKPOINT_DIR:
        candidates = list_checkpoints(path.parent)
    if not candidates:
        raise CheckpointNotFound(
            f"no checkpoint (checkpoints/ckpt_<N>.pt) in run directory {path}; {_EXPECTED}"
        )
    report = report or (lambda message: warnings.warn(message, stacklevel=3))
    reasons = []
    for candidate in reversed(candidates):
        try:
            if not verify_checkpoint(candidate):
                load_checkpoint(candidate)  # unverifiable: at least check that it loads
            return candidate
        except CheckpointError as exc:
            reasons.append(f"{candidate.name}: {exc}")
            report(f"skipping checkpoint {candidate.name}: {exc}")
    raise CheckpointError(
        f"no usable checkpoint in run directory {path}:\n  - " + "\n  - ".join(reasons)
    )


def run_dir_of(checkpoint: str | Path) -> Path:
    """The run directory that holds ``checkpoint`` (``<run_dir>/checkpoints/ckpt_N.pt``)."""
    checkpoint = Path(checkpoint).resolve()
    if checkpoint.parent.name == CHECKPOINT_DIR:
        return checkpoint.parent.parent
    return checkpoint.parent


def _with_checksum(path: Path) -> list[Path]:
    sidecar = checksum_path(path)
    return [path, sidecar] if sidecar.exists() else [path]


def prune_checkpoints(run_dir: str | Path, keep: int) -> None:
    """Delete all but the ``keep`` newest checkpoints (``keep == 0`` keeps everything)."""
    if keep > 0:
        for old in list_checkpoints(run_dir)[:-keep]:
            for path in _with_checksum(old):
                path.unlink(missing_ok=True)


def set_aside_newer(run_dir: str | Path, iteration: int) -> Path | None:
    """Move the checkpoints written after ``iteration`` into ``checkpoints/superseded_<time>/``.

    Resuming from an older checkpoint starts a new branch of the curve; the old branch's later
    checkpoints (damaged ones included) are kept, but no longer count as the run's newest.
    """
    newer = [p for p in list_checkpoints(run_dir) if int(_NAME.match(p.name).group(1)) > iteration]
    if not newer:
        return None
    folder = Path(run_dir) / CHECKPOINT_DIR / f"superseded_{int(time.time())}"
    folder.mkdir(parents=True, exist_ok=True)
    for path in newer:
        for file in _with_checksum(path):
            os.replace(file, folder / file.name)
    return folder

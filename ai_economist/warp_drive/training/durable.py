"""Writes that a full disk cannot half-do: whole files replaced atomically, rows appended whole.

* :func:`write_atomic` writes a file to a temporary name, flushes it to disk (``fsync``) and
  moves it into place with ``os.replace``: the old file stays intact until the new one is
  complete.
* :func:`append_whole` appends one block of text; if the write fails part-way, the file is cut
  back to its previous length, so a metrics row is never half-written.
* Both raise :class:`OutputWriteError` for ``ENOSPC`` and every other OS error, naming the
  file, the reason and what to do; the command line exits with :data:`EXIT_WRITE_ERROR`.
"""

from __future__ import annotations

import errno as errno_codes
import os
from pathlib import Path

EXIT_WRITE_ERROR = 74
"""Exit status of a failed write of the run's files (``EX_IOERR`` of ``sysexits.h``); 1 means
"training diverged" and 2 "configuration error"."""

_write = os.write  # the one place bytes reach the file system (tests inject faults here)


class OutputWriteError(RuntimeError):
    """Writing a run file (checkpoint, metrics, config) failed with an OS error.

    Attributes:
        path: the file being written.
        errno: the OS error number (``errno.ENOSPC`` for a full disk).
    """

    def __init__(self, path: str | Path, what: str, exc: OSError, advice: str = "") -> None:
        self.path, self.errno = Path(path), exc.errno
        name = errno_codes.errorcode.get(exc.errno, "?") if exc.errno else "?"
        reason = exc.strerror or str(exc)
        full = exc.errno == errno_codes.ENOSPC
        hint = " Free some space (or move the run folder to a disk with room)." if full else ""
        super().__init__(f"writing {what} {path} failed: {reason} ({name}).{hint} {advice}".strip())


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = _write(fd, view[: 1 << 20])
        view = view[written:]


def write_atomic(path: str | Path, data: bytes, what: str = "file", advice: str = "") -> Path:
    """Replace ``path`` by ``data`` atomically (temporary file, ``fsync``, ``os.replace``).

    Raises:
        OutputWriteError: on any OS error; ``path`` is then unchanged and the temporary file
            removed.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputWriteError(path, what, exc, advice) from exc
    finally:
        tmp.unlink(missing_ok=True)
    return path


def append_whole(path: str | Path, text: str, what: str = "file", advice: str = "") -> None:
    """Append ``text`` to ``path`` entirely or not at all (cut back on a failed write).

    Raises:
        OutputWriteError: on any OS error; the file then has its previous length.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError as exc:
        raise OutputWriteError(path, what, exc, advice) from exc
    try:
        size = os.fstat(fd).st_size
        try:
            _write_all(fd, text.encode("utf-8"))
        except OSError as exc:
            os.ftruncate(fd, size)
            raise OutputWriteError(path, what, exc, advice) from exc
    finally:
        os.close(fd)

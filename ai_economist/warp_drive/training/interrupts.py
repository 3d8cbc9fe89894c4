"""Stopping on SIGINT / SIGTERM without losing work.

While :meth:`~ai_economist.warp_drive.training.trainer.Trainer.train` runs (one process, main
thread), the first SIGINT (Ctrl-C) or SIGTERM only sets a flag: the trainer finishes the
current iteration, logs its metrics, writes a checkpoint and raises
:class:`TrainingInterrupted`, which the command line reports with the command that resumes
the run and exit status ``128 + signal`` (130 for SIGINT, 143 for SIGTERM).  A second signal
stops at once, without a new checkpoint.
"""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class TrainingInterrupted(RuntimeError):
    """Training stopped on a signal.

    Attributes:
        signum: the signal number (``exit_status`` is ``128 + signum``).
        iteration: the last finished iteration.
        checkpoint: the checkpoint to resume from (None when none was written).
        immediate: True when a second signal stopped mid-iteration (no new checkpoint).
    """

    def __init__(self, signum: int, iteration: int, checkpoint: Path | None, immediate: bool):
        self.signum, self.iteration = signum, iteration
        self.checkpoint, self.immediate = checkpoint, immediate
        what = "stopped at once" if immediate else f"checkpoint of iteration {iteration} written"
        super().__init__(f"{signal.Signals(signum).name} received: {what} ({checkpoint})")

    @property
    def exit_status(self) -> int:
        """``128 + signum``, the shell's convention: 130 for SIGINT, 143 for SIGTERM."""
        return 128 + self.signum


class StopSignals:
    """Context manager: SIGINT and SIGTERM set :attr:`signum` instead of stopping the process.

    Installed only in the main thread (Python delivers signals there) and when ``enabled``;
    the previous handlers come back on exit.  ``on_second(signum)`` is called for a second
    signal (it raises to stop at once).
    """

    def __init__(self, on_second: Any, enabled: bool = True) -> None:
        self.signum: int | None = None
        self._on_second = on_second
        self._enabled = enabled and threading.current_thread() is threading.main_thread()
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:
            self._on_second(signum)
            return
        self.signum = signum
        print(
            f"\n{signal.Signals(signum).name} received: finishing this iteration, then writing a "
            "checkpoint (send it again to stop at once, without one)",
            file=sys.stderr,
            flush=True,
        )

    def __enter__(self) -> StopSignals:
        if self._enabled:
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()


def resume_hint(run_dir: Path | str) -> str:
    """The command that continues a run from its newest checkpoint."""
    import shlex

    return f"python -m ai_economist.training.training_script --resume {shlex.quote(str(run_dir))}"

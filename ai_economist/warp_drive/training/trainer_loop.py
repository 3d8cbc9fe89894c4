"""The loop half of :class:`~ai_economist.warp_drive.training.trainer.Trainer`: iterations,
then the NaN checks, metrics and checkpoints due after each, and stopping on a signal, a
wall-clock budget or the end of the run.

Several processes (``torch.distributed``) must agree on when to checkpoint and stop, since a
checkpoint gathers every rank's state: their clocks, budgets and signals are combined in one
small collective every ``trainer.nan_check_freq`` iterations (:meth:`TrainerLoop._poll`), and
they all act at that iteration.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from ai_economist.warp_drive.training.interrupts import StopSignals, TrainingInterrupted
from ai_economist.warp_drive.training.metrics_logger import Progress


class TrainerLoop:
    """Mixin: ``train`` over the Trainer's attributes and ``train_iteration``."""

    def train(self, max_seconds: float | None = None) -> dict[str, Any]:
        """Run the remaining iterations; return the last logged metrics.

        Metrics are logged after the first iteration of the call, every
        ``saving.metrics_log_freq`` iterations and after the last one. A checkpoint is written every ``saving.model_params_save_freq`` iterations, after the
        first iteration that ends ``saving.checkpoint_interval_s`` seconds after the previous
        one, and at the end.  The first SIGINT or SIGTERM (main thread) finishes the iteration
        (with several processes: up to the next ``trainer.nan_check_freq`` multiple, where
        they agree), logs, writes a checkpoint and raises :class:`TrainingInterrupted`.

        Args:
            max_seconds: optional wall-clock budget; training stops after the first iteration
                that ends past it, logging metrics and writing a checkpoint there.
        """
        deadline = None if max_seconds is None else time.perf_counter() + max_seconds
        enabled = self.verbose and self.config["trainer"]["progress_bar"]
        self._progress = Progress(self.num_iterations, self.iteration, enabled)
        self._window_start = self._last_save = time.perf_counter()
        self._first_iteration = self.iteration + 1  # logged: metrics from the first iteration
        stop = StopSignals(self._stop_at_once)
        signum = None
        try:
            with stop:
                while self.iteration < self.num_iterations:
                    self.train_iteration()
                    due, signum, past_deadline = self._poll(stop, deadline)
                    last = self.iteration == self.num_iterations or past_deadline or bool(signum)
                    self._after_iteration(last, due)
                    if last:
                        break
        finally:
            self._progress.close()
        if signum and self.iteration < self.num_iterations:
            raise TrainingInterrupted(signum, self.iteration, self.last_checkpoint, False)
        return self.last_metrics

    def _poll(self, stop: StopSignals, deadline: float | None) -> tuple[bool, int, bool]:
        """``(checkpoint due on the clock, signal received or 0, past the budget)``, the same
        on every process: the longest time and any signal of any rank."""
        ended = time.perf_counter()
        local = [
            ended - self._last_save,
            float(stop.signum or 0),
            float(deadline is not None and ended >= deadline),
        ]
        if self.dist.enabled:
            if self.iteration % self.config["trainer"]["nan_check_freq"] and (
                self.iteration != self.num_iterations
            ):
                return False, 0, False
            values = torch.tensor(local, dtype=torch.float64, device=self.device)
            local = (-self.dist.min(-values)).tolist()  # the maximum over the ranks
        elapsed, signum, past_deadline = local
        interval = self.config["saving"]["checkpoint_interval_s"]
        return interval > 0 and elapsed >= interval, int(signum), bool(past_deadline)

    def _after_iteration(self, last: bool, due: bool) -> None:
        """The NaN check, the metrics and the checkpoints due after an iteration."""
        tcfg, saving = self.config["trainer"], self.config["saving"]
        if self.iteration % tcfg["nan_check_freq"] == 0:
            self._check_finite()
        first = self.iteration == getattr(self, "_first_iteration", None)
        if self.iteration % saving["metrics_log_freq"] == 0 or last or first:
            self._check_finite()
            self._log_metrics()
        if self.iteration % saving["model_params_save_freq"] == 0 or last or due:
            self.save_checkpoint()
            self._last_save = time.perf_counter()
        shown = ("episode_reward", "entropy")
        postfix = {k: v for k, v in self.last_metrics.items() if k.endswith(shown)}
        self._progress.update(self.iteration, postfix)

    def _stop_at_once(self, signum: int) -> None:
        """A second signal: stop now, without a new checkpoint."""
        raise TrainingInterrupted(signum, self.iteration, self.last_checkpoint, True)

"""The metrics half of :class:`~ai_economist.warp_drive.training.trainer.Trainer`: the NaN
check and the metrics row of a logging window (one host synchronisation each)."""

from __future__ import annotations

import math
import time
from typing import Any

import torch

from ai_economist.warp_drive.training.algorithms import STAT_NAMES
from ai_economist.warp_drive.training.metrics_logger import format_table


class TrainingDiverged(RuntimeError):
    """A loss became NaN or infinite; the message names the policy and the iteration."""


class TrainerMetrics:
    """Mixin: ``_check_finite``, ``_log_metrics`` and ``metrics_row`` over the Trainer's
    attributes."""

    def _check_finite(self) -> None:
        """Stop with :class:`TrainingDiverged` if any loss has been NaN/inf (one host sync)."""
        bad = self.dist.min(self._nan_iteration).cpu().tolist()
        for tag, it in zip(self.policies, bad, strict=True):
            if math.isfinite(it):
                where = self.last_checkpoint or "none was saved yet"
                raise TrainingDiverged(
                    f"the loss of policy '{tag}' became NaN or infinite at iteration {int(it)}; "
                    f"training stopped. Last good checkpoint: {where}"
                )

    def _log_metrics(self) -> None:
        """Sync the window's device metrics to the host once and write them everywhere."""
        row = self.metrics_row()
        if self.dist.is_main and self.logger is not None:
            self.logger.log(row)
            if self.verbose:
                self._progress.write(format_table(row, list(self.policies)))

    def metrics_row(self) -> dict[str, Any]:
        """The metrics of the iterations since the last call, averaged over them (one host
        sync); the window restarts.  Also kept as ``last_metrics``."""
        n = max(self._window_iterations, 1)
        episode_sums, episode_count = self.tracker.pop()
        parts = [episode_count.reshape(1)]
        for p in self.policies.values():
            parts += [episode_sums[p.tag].reshape(1), p.window_reward.reshape(1) / n,
                      p.window_stats / n]  # fmt: skip
        flat = self.dist.sum(torch.cat(parts)).cpu().tolist()
        now = time.perf_counter()
        elapsed = now - self._window_start
        count = flat[0]
        row: dict[str, Any] = {
            "iteration": self.iteration,
            "env_steps": self.env_steps,
            "episodes": int(count),
            "env_steps_per_s": self.steps_per_iteration * n / max(elapsed, 1e-9),
        }
        offset, w = 1, self.dist.world_size
        for p in self.policies.values():
            row[f"{p.tag}/episode_reward"] = flat[offset] / count if count else float("nan")
            row[f"{p.tag}/reward_per_step"] = flat[offset + 1] / w
            if p.config["to_train"]:
                for j, name in enumerate(STAT_NAMES):
                    row[f"{p.tag}/{name}"] = flat[offset + 2 + j] / w
                row.update({f"{p.tag}/{k}": v for k, v in p.hyper.items()})
            offset += 2 + len(STAT_NAMES)
            p.window_stats.zero_()
            p.window_reward.zero_()
        for phase, seconds in self.timer.pop().items():
            row[f"time/{phase}"] = seconds / n
        if self.dist.is_main:
            row.update({f"env/{k}": float(v) for k, v in self.env.episode_metrics().items()})
        self.last_metrics = row
        self._window_iterations = 0
        self._window_start = time.perf_counter()
        return row

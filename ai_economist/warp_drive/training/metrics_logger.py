"""Where the metrics go: metrics.csv, metrics.jsonl, TensorBoard, a table and a progress bar.

Rows are plain dictionaries of host floats, produced once per logging period (the only time
the trainer synchronises its device metrics to the host).
"""

from __future__ import annotations

import csv
import json
import math
import sys
import time
import warnings
from pathlib import Path
from typing import Any

TABLE_ENV_METRICS = 12
"""At most this many environment metrics appear in the printed table (all go to the files)."""


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _truncate_rows(path: Path, last_iteration: int, fmt: str) -> None:
    """Drop the rows logged after ``last_iteration`` (a resumed run rewrites them)."""
    if not path.exists():
        return
    if fmt == "jsonl":
        lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
        keep = [ln for ln in lines if json.loads(ln).get("iteration", 0) <= last_iteration]
        path.write_text("".join(ln + "\n" for ln in keep))
    else:
        with path.open(newline="") as f:
            reader = csv.DictReader(f)
            header, rows = reader.fieldnames or [], list(reader)
        rows = [r for r in rows if int(float(r.get("iteration") or 0)) <= last_iteration]
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=header)
            writer.writeheader()
            writer.writerows(rows)


class MetricsLogger:
    """Append metric rows to ``run_dir/metrics.{csv,jsonl}`` and TensorBoard event files.

    Args:
        run_dir: the run directory.
        tensorboard: write TensorBoard events (skipped with one warning if unavailable).
        resume_iteration: when resuming, rows after this iteration are removed first so the
            curve continues without duplicates.
    """

    def __init__(
        self, run_dir: str | Path, tensorboard: bool = True, resume_iteration: int | None = None
    ):
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.csv_path = self.run_dir / "metrics.csv"
        self.jsonl_path = self.run_dir / "metrics.jsonl"
        if resume_iteration is not None:
            _truncate_rows(self.jsonl_path, resume_iteration, "jsonl")
            _truncate_rows(self.csv_path, resume_iteration, "csv")
        self._header: list[str] = []
        if self.csv_path.exists():
            with self.csv_path.open(newline="") as f:
                self._header = next(csv.reader(f), [])
        self._tb = None
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter

                purge = None if resume_iteration is None else resume_iteration + 1
                self._tb = SummaryWriter(str(self.run_dir / "tensorboard"), purge_step=purge)
            except ImportError as exc:
                warnings.warn(
                    f"TensorBoard logging is off: {exc}. Install it with "
                    f"'pip install tensorboard' (part of the 'train' extra).",
                    stacklevel=2,
                )

    def log(self, row: dict[str, Any]) -> None:
        """Write one row (must contain ``iteration``)."""
        row = {k: _clean(v) for k, v in row.items()}
        with self.jsonl_path.open("a") as f:
            f.write(json.dumps(row) + "\n")
        self._write_csv(row)
        if self._tb is not None:
            step = int(row["iteration"])
            for key, value in row.items():
                if key != "iteration" and isinstance(value, int | float):
                    self._tb.add_scalar(key, value, step)
            self._tb.flush()

    def _write_csv(self, row: dict[str, Any]) -> None:
        new_keys = [k for k in row if k not in self._header]
        if (
            new_keys
        ):  # a metric appeared (e.g. after the first episode): rewrite with a wider header
            rows: list[dict[str, Any]] = []
            if self.csv_path.exists():
                with self.csv_path.open(newline="") as f:
                    rows = list(csv.DictReader(f))
            self._header = self._header + new_keys
            with self.csv_path.open("w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=self._header)
                writer.writeheader()
                writer.writerows(rows)
        with self.csv_path.open("a", newline="") as f:
            csv.DictWriter(f, fieldnames=self._header).writerow(row)

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()
            self._tb = None


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def format_table(row: dict[str, Any], policy_tags: list[str]) -> str:
    """A compact text table: one column per policy, then timings and environment metrics."""
    per_policy = ["episode_reward", "reward_per_step", "loss", "policy_loss", "value_loss",
                  "entropy", "approx_kl", "clip_frac", "grad_norm", "lr", "entropy_coeff"]  # fmt: skip
    lines = [
        f"iteration {row.get('iteration')}  env_steps {row.get('env_steps')}  "
        f"episodes {_fmt(row.get('episodes'))}  env-steps/s {_fmt(row.get('env_steps_per_s'))}"
    ]
    width = max(len(k) for k in per_policy) + 2
    lines.append("".ljust(width) + "".join(f"{t:>12}" for t in policy_tags))
    for key in per_policy:
        cells = [_fmt(row.get(f"{t}/{key}")) for t in policy_tags]
        if any(c != "-" for c in cells):
            lines.append(key.ljust(width) + "".join(f"{c:>12}" for c in cells))
    times = {k[5:]: v for k, v in row.items() if k.startswith("time/")}
    if times:
        lines.append("time (s): " + "  ".join(f"{k} {_fmt(v)}" for k, v in times.items()))
    env = {k[4:]: v for k, v in row.items() if k.startswith("env/")}
    if env:
        preferred = sorted(env, key=lambda k: (not k.startswith("usa/"), k))[:TABLE_ENV_METRICS]
        lines.append("env: " + "  ".join(f"{k} {_fmt(env[k])}" for k in preferred))
    return "\n".join(lines)


class Progress:
    """A tqdm progress bar over iterations, or plain prints when tqdm is missing/disabled."""

    def __init__(self, total: int, initial: int = 0, enabled: bool = True) -> None:
        self._bar = None
        self._start = time.perf_counter()
        self._total = total
        if enabled:
            try:
                from tqdm.auto import tqdm

                self._bar = tqdm(total=total, initial=initial, unit="it", dynamic_ncols=True)
            except ImportError:
                warnings.warn("tqdm is not installed: no progress bar", stacklevel=2)

    def update(self, iteration: int, postfix: dict[str, Any] | None = None) -> None:
        if self._bar is not None:
            self._bar.update(1)
            if postfix:
                self._bar.set_postfix({k: _fmt(v) for k, v in postfix.items()}, refresh=False)

    def write(self, text: str) -> None:
        if self._bar is not None:
            self._bar.write(text)
        else:
            print(text, file=sys.stdout, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

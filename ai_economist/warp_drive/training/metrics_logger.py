"""Where the metrics go: metrics.csv, metrics.jsonl, TensorBoard, a table and a progress bar.

Rows are plain dictionaries of host floats, produced once per logging period (the only time
the trainer synchronises its device metrics to the host).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from ai_economist.warp_drive.training.durable import OutputWriteError, append_whole, write_atomic
from ai_economist.warp_drive.training.event_writer import ScalarEventWriter
from ai_economist.warp_drive.training.tensorboard_resume import set_aside_events

TABLE_ENV_METRICS = 12
"""At most this many environment metrics appear in the printed table (all go to the files)."""


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _unique(path: Path) -> Path:
    """``path``, or ``path`` with ``.1``, ``.2``, ... before its suffix if it exists."""
    candidate, n = path, 0
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}.{n}{path.suffix}")
    return candidate


def _write_lines(path: Path, lines: list[str], atomic: bool = False) -> None:
    """Write ``lines`` (each followed by ``\\n``) back byte for byte; ``atomic``: through a
    temporary file and ``os.replace``."""
    data = "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape")
    target = path.with_name(f".{path.name}.tmp{os.getpid()}") if atomic else path
    target.write_bytes(data)
    if atomic:
        os.replace(target, path)


def _jsonl_iteration(line: str) -> int:
    """The row's iteration; ValueError for a damaged line (cut short, not a row)."""
    row = json.loads(line)
    if not isinstance(row, dict) or type(row.get("iteration")) is not int:
        raise ValueError(f"not a metrics row: {line[:60]!r}")
    return row["iteration"]


def _split_jsonl(lines: list[str], last_iteration: int) -> tuple[list[str], ...]:
    """``(kept, later, damaged)`` lines of a metrics.jsonl file."""
    kept, later, damaged = [], [], []
    for line in lines:
        if not line.strip():
            continue
        try:
            (kept if _jsonl_iteration(line) <= last_iteration else later).append(line)
        except ValueError:
            damaged.append(line)
    return kept, later, damaged


def _csv_iteration(line: str, header: list[str]) -> int | None:
    """The row's iteration, or None when the row is damaged (field count, not a number)."""
    fields = next(csv.reader([line]), [])
    if "iteration" not in header or len(fields) != len(header):
        return None
    try:
        return int(float(fields[header.index("iteration")]))
    except (ValueError, OverflowError):
        return None


def _split_csv(lines: list[str], last_iteration: int) -> tuple[list[str], ...]:
    """``(kept, later, damaged)`` lines of a metrics.csv file; ``kept[0]`` is the header."""
    if not lines:
        return [], [], []
    header = next(csv.reader([lines[0]]), [])
    kept, later, damaged = [lines[0]], [], []
    for line in lines[1:]:
        if line.strip():
            iteration = _csv_iteration(line, header)
            if iteration is None:
                damaged.append(line)
            else:
                (kept if iteration <= last_iteration else later).append(line)
    return kept, later, damaged


def set_aside_rows(path: Path, last_iteration: int, stamp: str) -> list[Path]:
    """Keep the rows up to ``last_iteration`` in ``path``; move the others aside, never delete.

    Rows after ``last_iteration`` go to ``metrics.after_iter_<N>.<stamp>.<ext>`` and damaged
    lines to ``metrics.damaged.<stamp>.<ext>``, byte for byte; CSV files keep their header.
    A damaged line is one that is not a row, or a last line without its line end (a crash
    during an append) that is not a complete JSON row.  Returns the files written.
    """
    if not path.exists():
        return []
    lines = path.read_bytes().decode("utf-8", "surrogateescape").split("\n")
    partial = lines.pop()  # "" when the file ends with a line end
    is_csv = path.suffix == ".csv"
    kept, later, damaged = (_split_csv if is_csv else _split_jsonl)(lines, last_iteration)
    if partial:
        if is_csv and kept:
            damaged.append(partial)
        else:  # a JSON row cut short does not parse; a complete one only lacks its line end
            extra = (_split_csv if is_csv else _split_jsonl)([partial], last_iteration)
            kept, later, damaged = kept + extra[0], later + extra[1], damaged + extra[2]
    if not later and not damaged and not partial:
        return []
    head = kept[:1] if is_csv else []
    written = []
    for name, rows in ((f"after_iter_{last_iteration}", later), ("damaged", damaged)):
        if rows:
            aside = _unique(path.with_name(f"{path.stem}.{name}.{stamp}{path.suffix}"))
            _write_lines(aside, head + rows)
            written.append(aside)
    _write_lines(path, kept, atomic=True)
    return written


def _tensorboard_available() -> bool:
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        return False
    return True


class MetricsLogger:
    """Append metric rows to ``run_dir/metrics.{csv,jsonl}`` and TensorBoard event files.

    Args:
        run_dir: the run directory.
        tensorboard: write TensorBoard event files (:mod:`.event_writer`: no TensorBoard
            import; viewing them needs ``pip install tensorboard``, part of the ``train`` extra).
        resume_iteration: when resuming, rows after this iteration (and damaged lines) are
            first moved aside into named files (:func:`set_aside_rows`, listed in
            ``set_aside``), so the curve continues without duplicates and nothing is lost.
    """

    def __init__(
        self, run_dir: str | Path, tensorboard: bool = True, resume_iteration: int | None = None
    ):
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.csv_path = self.run_dir / "metrics.csv"
        self.jsonl_path = self.run_dir / "metrics.jsonl"
        self.set_aside: list[Path] = []
        self._advice = (
            f"The rows written before are whole; continue with --resume {self.run_dir} (from its "
            "last checkpoint)."
        )
        if resume_iteration is not None:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            for path in (self.jsonl_path, self.csv_path):
                self.set_aside += set_aside_rows(path, resume_iteration, stamp)
            if tensorboard and _tensorboard_available():
                self.set_aside += set_aside_events(self.run_dir, resume_iteration, stamp)
        self._header: list[str] = []
        if self.csv_path.exists():
            with self.csv_path.open(newline="") as f:
                self._header = next(csv.reader(f), [])
        self._tb = None
        if tensorboard:
            purge = None if resume_iteration is None else resume_iteration + 1
            logdir = self.run_dir / "tensorboard"
            try:
                self._tb = ScalarEventWriter(logdir, purge_step=purge)
            except OSError as exc:
                raise OutputWriteError(logdir, "TensorBoard events", exc, self._advice) from None

    def log(self, row: dict[str, Any]) -> None:
        """Write one row (must contain ``iteration``); each file gets the whole row or none.

        Raises:
            OutputWriteError: an OS error (e.g. a full disk); the files keep their earlier rows.
        """
        row = {k: _clean(v) for k, v in row.items()}
        append_whole(self.jsonl_path, json.dumps(row) + "\n", "metrics", self._advice)
        self._write_csv(row)
        if self._tb is not None:
            scalars = {
                key: value
                for key, value in row.items()
                if key != "iteration" and isinstance(value, int | float)
            }
            try:
                self._tb.add_scalars(scalars, int(row["iteration"]))
                self._tb.flush()
            except OSError as exc:
                raise OutputWriteError(
                    self._tb.path, "TensorBoard events", exc, self._advice
                ) from None

    def _write_csv(self, row: dict[str, Any]) -> None:
        new_keys = [k for k in row if k not in self._header]
        if (
            new_keys
        ):  # a metric appeared (e.g. after the first episode): rewrite with a wider header
            rows: list[dict[str, Any]] = []
            if self.csv_path.exists():
                with self.csv_path.open(newline="") as f:
                    rows = list(csv.DictReader(f))
            header = self._header + new_keys
            text = io.StringIO()
            writer = csv.DictWriter(text, fieldnames=header)
            writer.writeheader()
            writer.writerows(rows)
            write_atomic(self.csv_path, text.getvalue().encode("utf-8"), "metrics", self._advice)
            self._header = header
        text = io.StringIO()
        csv.DictWriter(text, fieldnames=self._header).writerow(row)
        append_whole(self.csv_path, text.getvalue(), "metrics", self._advice)

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

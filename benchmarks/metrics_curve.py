"""Print a training run's learning curve from its ``metrics.csv``: a few columns at evenly
spaced iterations, and the first iteration at which a column reaches a threshold.

    python benchmarks/metrics_curve.py runs/<run>/metrics.csv [more.csv ...] \\
        [--columns env_steps env/social/productivity] [--rows 10] \\
        [--reach env/social/productivity=1500]

Works for any run of ``training_script`` (and for the trimmed curves kept under
``docs/results/``): the columns are looked up by name and a missing or empty value prints as
``-``. Used for the gather-trade-build phase-1 scan of session 14
(``docs/results/h200-2026-12-02-session14.md``).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

DEFAULT_COLUMNS = ["env_steps", "env_steps_per_s", "a/episode_reward", "a/entropy"]


def read_rows(path: Path) -> list[dict[str, str]]:
    """The rows of ``path``; a clear error when it is missing or holds no rows."""
    try:
        with open(path, newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as exc:
        raise SystemExit(f"error: {path}: cannot be read ({exc.strerror})") from exc
    if not rows or "iteration" not in rows[0]:
        raise SystemExit(f"error: {path}: expected a metrics.csv with an 'iteration' column")
    return rows


def value(row: dict[str, str], column: str) -> float | None:
    """``row[column]`` as a float, None when missing or empty."""
    text = row.get(column)
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def first_reaching(rows: list[dict[str, str]], column: str, threshold: float) -> dict | None:
    """The first row whose ``column`` is at least ``threshold``, or None."""
    for row in rows:
        number = value(row, column)
        if number is not None and number >= threshold:
            return row
    return None


def format_curve(rows: list[dict[str, str]], columns: list[str], count: int) -> str:
    """``count`` evenly spaced rows (the last included) of ``columns``, as a text table."""
    step = max(1, len(rows) // max(count, 1))
    picked = rows[::step]
    if picked[-1] is not rows[-1]:
        picked.append(rows[-1])
    lines = [" ".join(f"{c.split('/')[-1][:12]:>12}" for c in ["iteration", *columns])]
    for row in picked:
        cells = [row["iteration"]] + [
            "-" if value(row, c) is None else f"{value(row, c):.4g}" for c in columns
        ]
        lines.append(" ".join(f"{cell:>12}" for cell in cells))
    return "\n".join(lines)


def parse_reach(text: str) -> tuple[str, float]:
    column, sep, threshold = text.rpartition("=")
    try:
        if not (sep and column):
            raise ValueError(text)
        return column, float(threshold)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--reach {text!r}: expected COLUMN=NUMBER") from exc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", nargs="+", type=Path)
    parser.add_argument("--columns", nargs="+", default=DEFAULT_COLUMNS)
    parser.add_argument("--rows", type=int, default=10, help="rows printed per run")
    parser.add_argument("--reach", type=parse_reach, action="append", default=[],
                        metavar="COLUMN=NUMBER", help="first iteration reaching a value")  # fmt: skip
    args = parser.parse_args(argv)
    for path in args.csv:
        rows = read_rows(path)
        print(f"== {path} ({len(rows)} rows, last iteration {rows[-1]['iteration']})")
        print(format_curve(rows, args.columns, args.rows))
        for column, threshold in args.reach:
            row = first_reaching(rows, column, threshold)
            where = (f"iteration {row['iteration']}, env-step {row.get('env_steps', '?')}"
                     if row else "never")  # fmt: skip
            print(f"{column} >= {threshold:g}: {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The result of a sweep: one row per run, its parameters and outcomes (a tidy table)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ai_economist.simulate.errors import SimulateError

TEXT_COLUMNS = ("policy", "scenario", "agents")
INT_COLUMNS = ("run", "days", "seed", "episodes", "n_agents", "episode_length", "tax_period")


def _plain(value):
    """A numpy scalar as the Python value (strings as they are)."""
    return value.item() if isinstance(value, np.generic) else value


class SweepTable:
    """Columns of equal length by name: ``table["deaths_thousands"]`` is a numpy array."""

    def __init__(self, columns: dict[str, np.ndarray]) -> None:
        lengths = {len(v) for v in columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths {sorted(lengths)}")
        self.columns = {name: np.asarray(values) for name, values in columns.items()}

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    @property
    def names(self) -> list[str]:
        """Column names in order."""
        return list(self.columns)

    def rows(self) -> Iterator[dict]:
        """One dict per run."""
        for i in range(len(self)):
            yield {name: _plain(values[i]) for name, values in self.columns.items()}

    def where(self, **equal) -> SweepTable:
        """The rows whose columns equal the given values, e.g. ``where(policy="open")``."""
        keep = np.ones(len(self), dtype=bool)
        for name, value in equal.items():
            keep &= self.columns[name] == value
        return SweepTable({n: v[keep] for n, v in self.columns.items()})

    def equals(self, other: SweepTable) -> bool:
        """Same columns in the same order with identical values."""
        return self.names == other.names and all(
            np.array_equal(self[n], other[n]) for n in self.names
        )

    def to_csv(self, path: str | Path) -> Path:
        """Write the table (floats with 17 significant digits: reading it back is exact)."""
        path = Path(path)
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(self.names)
            for row in self.rows():
                writer.writerow([repr(v) if isinstance(v, float) else v for v in row.values()])
        return path

    @classmethod
    def from_csv(cls, path: str | Path) -> SweepTable:
        """Read a table written by :meth:`to_csv`."""
        path = Path(path)
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        if not rows:
            raise SimulateError(f"table {str(path)!r} is empty (expected a header row)")
        header, body = rows[0], rows[1:]
        columns = {}
        for j, name in enumerate(header):
            cells = [row[j] for row in body]
            if name in TEXT_COLUMNS:
                columns[name] = np.array(cells, dtype=object)
            elif name in INT_COLUMNS:
                columns[name] = np.array([int(c) for c in cells], dtype=np.int64)
            else:
                columns[name] = np.array([float(c) for c in cells], dtype=np.float64)
        return cls(columns)

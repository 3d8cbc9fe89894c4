"""Standard plots of a sweep: the deaths-unemployment frontier and welfare per policy.

Needs matplotlib (the ``plot`` extra); without it :func:`write_plots` warns once and writes
nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.plotting import pyplot
from ai_economist.simulate.table import SweepTable


def pareto_front(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the runs no other run beats on both ``x`` and ``y`` (lower is better),
    sorted by ``x``."""
    order = np.lexsort((y, x))
    front, best = [], np.inf
    for i in order:
        if y[i] < best:
            front.append(i)
            best = y[i]
    return np.array(front, dtype=np.int64)


def frontier_plot(plt: Any, table: SweepTable, path: Path) -> Path:
    """US deaths against mean unemployment, one colour per policy, the Pareto front drawn."""
    x, y = table["mean_unemployment_rate_pct"], table["deaths_thousands"]
    return _policy_scatter(plt, table, path, x, y, pareto_front(x, y), size=12,
                           xlabel="mean US unemployment rate (% of population)",
                           ylabel="US deaths at the end (thousands)",
                           title=f"deaths vs unemployment, {len(table)} runs")  # fmt: skip


def _policy_scatter(plt: Any, table: SweepTable, path: Path, x: np.ndarray, y: np.ndarray,
                    front: np.ndarray, size: int, **labels: str) -> Path:  # fmt: skip
    """``y`` against ``x``, one colour per policy, the runs ``front`` joined as the frontier;
    ``labels`` go to ``ax.set``. Saved in ``path``."""
    fig, ax = plt.subplots(figsize=(8, 6))
    for policy in dict.fromkeys(table["policy"]):
        rows = table["policy"] == policy
        ax.scatter(x[rows], y[rows], s=size, alpha=0.7, label=str(policy))
    ax.plot(x[front], y[front], color="black", linewidth=1, label="frontier (no run beats it)")
    ax.set(**labels)
    ax.legend(fontsize=7)
    return _save(plt, fig, path)


def _save(plt: Any, fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def welfare_plot(plt: Any, table: SweepTable, path: Path, column: str = "planner_reward") -> Path:
    """The planner's episode reward sum (social welfare) per policy, over the sweep's runs."""
    policies = list(dict.fromkeys(table["policy"]))
    values = [table[column][table["policy"] == p] for p in policies]
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(policies)), 5))
    ax.boxplot(values, showmeans=True)
    ax.set_xticks(range(1, len(policies) + 1), [str(p) for p in policies], rotation=20,
                  ha="right", fontsize=8)  # fmt: skip
    ax.set(ylabel="planner episode reward sum (welfare)", title="welfare per policy")
    return _save(plt, fig, path)


def equality_productivity_plot(plt: Any, table: SweepTable, path: Path) -> Path:
    """Equality against productivity of the agents' coin, one colour per tax policy, the
    frontier (runs no other run beats on both, higher is better) drawn."""
    x, y = table["productivity"], table["equality"]
    return _policy_scatter(plt, table, path, x, y, pareto_front(-x, -y), size=14,
                           xlabel="productivity (agents' total coin)",
                           ylabel="equality (1 - Gini of coin)",
                           title=f"equality vs productivity, {len(table)} runs")  # fmt: skip


def write_economy_plots(table: SweepTable, out_dir: str | Path) -> list[Path]:
    """``frontier.png`` (equality vs productivity) and ``welfare.png`` (planner welfare per
    policy) of an economy sweep in ``out_dir``; [] without matplotlib (a warning names the
    ``plot`` extra)."""
    return _write_frontier_and_welfare(
        table, out_dir, equality_productivity_plot, "planner_welfare"
    )


def write_plots(table: SweepTable, out_dir: str | Path) -> list[Path]:
    """``frontier.png`` and ``welfare.png`` in ``out_dir``; [] without matplotlib."""
    return _write_frontier_and_welfare(table, out_dir, frontier_plot, "planner_reward")


def _write_frontier_and_welfare(
    table: SweepTable, out_dir: str | Path, frontier: Callable[..., Path], welfare_column: str
) -> list[Path]:
    """``frontier(plt, table, path)`` into ``frontier.png`` and the welfare per policy
    (``welfare_column``) into ``welfare.png``; [] without matplotlib or without runs."""
    plt = pyplot()
    if plt is None or len(table) == 0:
        return []
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [
        frontier(plt, table, out / "frontier.png"),
        welfare_plot(plt, table, out / "welfare.png", welfare_column),
    ]

"""The protocol's outputs: a tidy CSV, the per-seed table with means, and the frontier plot.

One CSV row per (scenario, schedule, seed): :data:`COLUMNS`, then ``rate_<cutoff>`` per tax
bracket (the mean rate applied over the evaluation's tax periods). ``productivity`` is the
agents' total coin, ``equality`` is 1 - Gini of the coin, ``equality_x_productivity`` is
their product (the paper's trade-off), ``welfare`` the planner's own objective (GTB:
``coin_eq_times_productivity``, equality x coin per agent; one-step: the run config's),
``planner_entropy`` (GTB's AI planner only) how close its policy still is to uniform on its
tax days (1 = uniform: its greedy rates mean little), ``tax_limit`` (GTB, where the run's tax
annealing had not opened the whole range) the share of the rate range its training ended with,
which its evaluation kept.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.training.tax_protocol.manifest import RESULT

COLUMNS = ["scenario", "schedule", "seed", "equality", "productivity", "equality_x_productivity",
           "welfare", "taxes_collected", "planner_entropy", "tax_limit", "train_env_steps",
           "run"]  # fmt: skip
CSV_NAME = "results.csv"
#: A planner whose entropy on its tax days is at least this share of the uniform one has not
#: learnt a schedule: its greedy rates are the argmax of an almost flat policy.
UNLEARNT_ENTROPY = 0.8
PLOT_NAME = "equality_vs_productivity.png"


def collect_rows(results_dir: Path, scenario: str, run_names: list[str]) -> list[dict[str, Any]]:
    """The CSV rows of every evaluated run (runs without ``result.json`` give none)."""
    rows = []
    for name in run_names:
        path = results_dir / name / RESULT
        if not path.is_file():
            continue
        result = json.loads(path.read_text())
        for schedule, m in result["schedules"].items():
            row = {"scenario": scenario, "schedule": schedule, "seed": result["seed"],
                   "train_env_steps": result["train_env_steps"], "run": name}  # fmt: skip
            row.update({k: m[k] for k in COLUMNS if k in m})
            row.update({f"rate_{b}": r for b, r in m["rates"].items()})
            rows.append(row)
    return rows


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    """The tidy CSV (columns: :data:`COLUMNS`, then the rate columns in bracket order)."""
    rate_cols = sorted({k for r in rows for k in r if k.startswith("rate_")})
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS + rate_cols)
        writer.writeheader()
        writer.writerows(rows)
    return path


def means(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per schedule (in first-seen order): the mean of every numeric column over the seeds."""
    out: dict[str, dict[str, float]] = {}
    for schedule in dict.fromkeys(r["schedule"] for r in rows):
        mine = [r for r in rows if r["schedule"] == schedule]
        keys = [k for k in mine[0] if isinstance(mine[0][k], float)]
        out[schedule] = {k: float(np.mean([r[k] for r in mine])) for k in keys}
        out[schedule]["seeds"] = len(mine)
    return out


def _line(name: str, seed: str, r: dict[str, Any]) -> str:
    rates = " ".join(f"{r[k]:.2f}" for k in sorted(r) if k.startswith("rate_"))
    entropy = f"{r['planner_entropy']:5.2f}" if "planner_entropy" in r else "    -"
    return (f"{name:27s} {seed:>5s} {r['equality']:8.3f} {r['productivity']:10.1f} "
            f"{r['equality_x_productivity']:10.1f} {r['welfare']:9.3f} {entropy}  "
            f"{rates}")  # fmt: skip


def run_summary(folder: Path) -> str:
    """A finished run's scores in one line (from its ``result.json``): for one schedule
    ``": equality 0.891, productivity 545.1, eq x prod 485.2, welfare 121.299"`` (and the
    planner's entropy where scored), for several (the one-step economy) each schedule's
    welfare; ``""`` for a run without scores (phase 1) or without the file."""
    path = folder / RESULT
    if not path.is_file():
        return ""
    schedules = json.loads(path.read_text())["schedules"]
    if not schedules:
        return ""
    if len(schedules) > 1:
        return ": welfare " + ", ".join(f"{n} {m['welfare']:.3f}" for n, m in schedules.items())
    (m,) = schedules.values()
    text = (f": equality {m['equality']:.3f}, productivity {m['productivity']:.1f}, "
            f"eq x prod {m['equality_x_productivity']:.1f}, welfare {m['welfare']:.3f}")  # fmt: skip
    if "planner_entropy" in m:
        text += f", planner entropy {m['planner_entropy']:.2f}"
    return text


def format_table(
    rows: list[dict[str, Any]],
    score: str = "equality_x_productivity",
    reference: str = "ai-planner",
) -> str:
    """Per-seed rows, then one mean row per schedule, and ``reference``'s mean ``score``
    over every other schedule's."""
    head = (f"{'schedule':27s} {'seed':>5s} {'equality':>8s} {'product.':>10s} "
            f"{'eq x prod':>10s} {'welfare':>9s} {'p.ent':>5s}  "
            "rates (lowest bracket first)")  # fmt: skip
    lines = [head]
    lines += [_line(r["schedule"], str(r["seed"]), r) for r in rows]
    avg = means(rows)
    lines.append("means over the seeds:")
    lines += [_line(name, f"n={int(m['seeds'])}", m) for name, m in avg.items()]
    if reference in avg:
        ref = avg[reference][score]
        ratios = [f"{n}: {ref / m[score]:.2f}x" for n, m in avg.items()
                  if n != reference and m[score] > 0]  # fmt: skip
        if ratios:
            lines.append(f"{reference}'s mean {score} over that of " + ", ".join(ratios))
    lines += unlearnt_planner_notes(rows) + held_limit_notes(rows)
    return "\n".join(lines)


def unlearnt_planner_notes(rows: list[dict[str, Any]]) -> list[str]:
    """One line per row whose planner entropy is at least :data:`UNLEARNT_ENTROPY`: its
    rates are not a learnt schedule."""
    return [
        f"note: {r['schedule']} seed {r['seed']}: the planner's entropy on its tax days is "
        f"{r['planner_entropy']:.2f} of the uniform one: it has not learnt a schedule (its "
        "greedy rates are the argmax of an almost flat policy)"
        for r in rows
        if r.get("planner_entropy", 0.0) >= UNLEARNT_ENTROPY
    ]


def held_limit_notes(rows: list[dict[str, Any]]) -> list[str]:
    """One line per row whose rates were held below the whole range (``tax_limit``)."""
    return [
        f"note: {r['schedule']} seed {r['seed']}: rates at most {r['tax_limit']:.1%} of the range, "
        "in training (the tax annealing had not opened the whole range) and in the evaluation"
        for r in rows
        if r.get("tax_limit") not in (None, "")
    ]


def plot_frontier(path: Path, rows: list[dict[str, Any]], title: str) -> Path:
    """Equality against productivity: one point per seed, a larger marker for the mean.

    Raises:
        MissingExtraError: matplotlib is not installed (names the ``plot`` extra).
    """
    from ai_economist.extras import require_modules

    require_modules(["matplotlib"], "the tax protocol's plot")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    for i, (name, m) in enumerate(means(rows).items()):
        mine = [r for r in rows if r["schedule"] == name]
        color = f"C{i}"
        ax.scatter([r["productivity"] for r in mine], [r["equality"] for r in mine],
                   color=color, alpha=0.5, s=20)  # fmt: skip
        ax.scatter([m["productivity"]], [m["equality"]], color=color, s=90, marker="D",
                   edgecolor="black", label=name)  # fmt: skip
    ax.set_xlabel("productivity (total coin)")
    ax.set_ylabel("equality (1 - Gini)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path

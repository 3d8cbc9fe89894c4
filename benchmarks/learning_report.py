"""What a trained COVID-19 run is worth: the pieces of the learning check's report.

Used by ``learning_vs_fixed_policies.py`` (one seed) and ``learning_seeds.py`` (many):

* :func:`verdicts`: the greedy planner's sum against every fixed policy (margin, beats?);
* :func:`sampled_planner_sums`: planner sums of sampled (stochastic) episodes on the CPU;
* :func:`policy_response_section`: the greedy policies' response to the epidemic (monthly
  table, "is it a constant?", plots), from ``covid19.policy_response``;
* :func:`last_sampled_training_reward`: the sampled policies' mean planner episode reward of
  the last metrics row of the training run.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.foundation.scenarios.covid19.model import policy_response as pr


def verdicts(greedy: float, fixed: dict[str, float]) -> dict[str, dict[str, Any]]:
    """``{fixed policy: {"fixed": sum, "margin": greedy - sum, "beats": greedy > sum}}``."""
    return {
        name: {"fixed": total, "margin": greedy - total, "beats": bool(greedy > total)}
        for name, total in fixed.items()
    }


def sampled_planner_sums(models: dict, config: dict, episodes: int, seed: int = 0) -> list[float]:
    """Planner sums of ``episodes`` sampled episodes (action noise seeded ``seed``, ``seed +
    1``, ...) on one env of the numpy backend."""
    return [
        float(
            pr.record_trace(models, config["env"], greedy=False, seed=seed + k).planner_reward.sum()
        )
        for k in range(episodes)
    ]


def policy_response_section(
    models: dict, config: dict, out_dir: Path | None, title: str = ""
) -> tuple[pr.PolicyTrace, dict[str, Any]]:
    """The greedy trace, its printed report and plot (into ``out_dir``), and its summary."""
    trace = pr.record_trace(models, config["env"], greedy=True)
    print("greedy policies' response to the epidemic (means per 30 days):")
    print(pr.format_report(trace))
    info = pr.summary(trace)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        info["plots"] = [str(p) for p in pr.write_response_plots(trace, out_dir, title)]
    return trace, info


def last_sampled_training_reward(run_dir: Path | None) -> float | None:
    """The last ``p/episode_reward`` of ``run_dir/metrics.csv`` (None when there is none)."""
    if run_dir is None or not (Path(run_dir) / "metrics.csv").is_file():
        return None
    with open(Path(run_dir) / "metrics.csv") as f:
        values = [row.get("p/episode_reward") for row in csv.DictReader(f)]
    values = [v for v in values if v not in (None, "")]
    return float(values[-1]) if values else None


def write_json(path: str | Path, result: dict) -> Path:
    """Write ``result`` (numpy scalars allowed) as indented JSON; return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, default=_jsonable))
    return path


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")

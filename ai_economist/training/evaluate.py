"""Run a saved policy for one episode on the CPU and write a dense log with plots.

Example::

    python -m ai_economist.training.evaluate --run_dir runs/toy/default/<run> --greedy

Writes ``<run_dir>/eval/<checkpoint>/dense_log.json`` (per step: every agent's action and
reward, plus the episode's metrics and, for scenarios that keep them, the scenario's own dense
log and metrics) and ``rewards.png``, ``actions_<tag>.png`` (matplotlib, the ``plot`` extra:
action indices, or the levels a scenario's ``evaluation_level_plots`` hook offers instead,
e.g. COVID-19's stringency level 1..10 of every state and subsidy level 0..20 each day) and
the scenario's own plots (its ``write_evaluation_plots`` hook; COVID-19: ``covid_state.png``).

The episode runs through the same ``BatchedPolicyEnv`` interface as training (one env, CPU
backend), so the observations the policy sees have exactly the layout it was trained on.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ai_economist.plotting import LevelPlot, pyplot
from ai_economist.training.training_script import ENVIRONMENTS
from ai_economist.warp_drive.backend_names import EnvBackend
from ai_economist.warp_drive.training.checkpoint import (
    CheckpointError,
    find_checkpoint,
    load_checkpoint,
    run_dir_of,
)
from ai_economist.warp_drive.training.models import (  # noqa: F401  (load_policy_models re-exported)
    greedy_masked,
    load_policy_models,
    sample_masked,
)


def build_eval_env(config: dict) -> tuple[Any, Any]:
    """``(batched env with one replica on the CPU, underlying scenario object or None)``: the
    registered environment's own ``build_eval`` when it has one, else its ``build`` with one
    env on the ``cpu`` backend (``numpy`` for an env without Python objects)."""
    entry = ENVIRONMENTS[config["name"]]
    if entry.build_eval is not None:
        return entry.build_eval(config)
    one = copy.deepcopy(config)
    one["trainer"]["num_envs"] = 1
    return entry.make(one, torch.device("cpu"), EnvBackend.CPU), None


def scenario_dense_log(scenario: Any) -> Any:
    """The scenario's own dense log of the episode just played, when it keeps one."""
    if scenario is None:
        return None
    log = getattr(scenario, "dense_log", None) or getattr(
        scenario, "previous_episode_dense_log", None
    )
    try:
        json.dumps(log, default=_jsonable)
    except (TypeError, ValueError):
        return None
    return log


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(type(value).__name__)


@torch.no_grad()
def run_episode(env: Any, models: dict[str, torch.nn.Module], greedy: bool, seed: int = 0) -> dict:
    """One episode of the first env replica; returns per-step actions/rewards per policy."""
    generator = torch.Generator().manual_seed(seed)
    env.reset_all_envs()
    steps: list[dict[str, Any]] = []
    memory = {  # recurrent models (conv_lstm) carry their state from step to step
        tag: model.initial_state(*env.observations(tag).shape[:-1])
        for tag, model in models.items()
        if getattr(model, "recurrent", False)
    }
    for t in range(env.episode_length):
        record: dict[str, Any] = {"t": t, "actions": {}, "rewards": {}}
        for tag, model in models.items():
            obs = env.observations(tag).float()
            mask = env.action_masks(tag)
            if tag in memory:
                logits, _, memory[tag] = model.step(obs, memory[tag])
            else:
                logits, _ = model(obs)
            if greedy:
                actions = greedy_masked(logits, mask)
            else:
                actions, _ = sample_masked(logits, mask, generator)
            env.actions(tag).copy_(actions)
            record["actions"][tag] = actions[0].tolist()
        env.step_all_envs()
        for tag in models:
            record["rewards"][tag] = env.rewards(tag)[0].tolist()
        steps.append(record)
        if bool(env.done()[0]):
            break
    returns = {
        tag: [
            sum(s["rewards"][tag][i] for s in steps) for i in range(len(steps[0]["rewards"][tag]))
        ]
        for tag in models
    }
    return {"steps": steps, "episode_returns": returns}


def write_plots(log: dict, out_dir: Path, levels: dict[str, LevelPlot] | None = None) -> list[Path]:
    """Reward curves and one plot per policy; skipped if matplotlib is missing.

    A policy with an entry in ``levels`` is plotted as that level (e.g. the COVID-19 states'
    stringency level 1..10, the planner's subsidy level 0..20); others as action indices.
    """
    plt = pyplot()
    if plt is None:
        return []
    steps = log["steps"]
    tags = list(steps[0]["rewards"])
    paths = []
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for tag in tags:
        per_step = [sum(s["rewards"][tag]) / len(s["rewards"][tag]) for s in steps]
        cumulative = [sum(per_step[: i + 1]) for i in range(len(per_step))]
        axes[0].plot(per_step, label=f"policy {tag}")
        axes[1].plot(cumulative, label=f"policy {tag}")
    axes[0].set(title="reward per step (mean over agents)", xlabel="step", ylabel="reward")
    axes[1].set(title="cumulative reward (mean over agents)", xlabel="step", ylabel="reward")
    axes[0].legend()
    fig.tight_layout()
    paths.append(out_dir / "rewards.png")
    fig.savefig(paths[-1], dpi=100)
    plt.close(fig)
    for tag in tags:
        plot = (levels or {}).get(tag)
        if plot is None:
            plot = LevelPlot([s["actions"][tag] for s in steps], "action index", 0, 0)
            fig = _heat_map(plt, plot, f"actions of policy {tag}", "step")
        else:
            fig = _level_plot(plt, plot, plot.title or f"policy {tag}: {plot.label}")
        paths.append(out_dir / f"actions_{tag}.png")
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
    return paths


def _heat_map(plt: Any, plot: LevelPlot, title: str, xlabel: str) -> Any:
    """Agents (rows) x steps (columns), one colour per value, the colour bar labelled."""
    import numpy as np

    values = np.asarray(plot.values, dtype=float).T  # (agents, steps)
    fig, ax = plt.subplots(figsize=(11, 3 + 0.05 * len(values)))
    bounds = {"vmin": plot.low, "vmax": plot.high} if plot.high > plot.low else {}
    image = ax.imshow(values, aspect="auto", interpolation="nearest", **bounds)
    ax.set(title=title, xlabel=xlabel, ylabel="agent")
    if plot.agent_names and len(plot.agent_names) == len(values):
        ax.set_yticks(range(len(values)), plot.agent_names, fontsize=5)
        ax.set_ylabel("state")
    bar = fig.colorbar(image, ax=ax, label=plot.label)
    if plot.high > plot.low:
        bar.set_ticks(list(range(plot.low, plot.high + 1, max(1, (plot.high - plot.low) // 10))))
    fig.tight_layout()
    return fig


def _level_plot(plt: Any, plot: LevelPlot, title: str) -> Any:
    """A heat map for many agents, a step line for one (the planner)."""
    import numpy as np

    values = np.asarray(plot.values, dtype=float)
    if values.ndim == 2 and values.shape[1] > 1:
        return _heat_map(plt, plot, title, "day")
    fig, ax = plt.subplots(figsize=(11, 3.5))
    ax.step(range(len(values)), values.reshape(len(values), -1)[:, 0], where="post")
    ax.set(title=title, xlabel="day", ylabel=plot.label, ylim=(plot.low - 0.5, plot.high + 0.5))
    ax.set_yticks(list(range(plot.low, plot.high + 1, max(1, (plot.high - plot.low) // 10))))
    fig.tight_layout()
    return fig


def scenario_snapshot(scenario: Any) -> Any:
    """What the scenario keeps of the episode just played for its own plots (its
    ``evaluation_snapshot()`` hook), taken before the reset starts a new episode; else None."""
    hook = getattr(scenario, "evaluation_snapshot", None)
    return hook() if callable(hook) else None


def scenario_level_plots(scenario: Any, snapshot: Any) -> dict[str, LevelPlot] | None:
    """Per-policy level plots the scenario offers instead of action indices (its
    ``evaluation_level_plots(snapshot)`` hook), or None."""
    hook = getattr(scenario, "evaluation_level_plots", None)
    return hook(snapshot) if callable(hook) and snapshot is not None else None


def write_scenario_plots(scenario: Any, snapshot: Any, out_dir: Path) -> list[Path]:
    """The scenario's own plots of the episode (its ``write_evaluation_plots(snapshot,
    out_dir)`` hook); nothing for scenarios without one."""
    hook = getattr(scenario, "write_evaluation_plots", None)
    return hook(snapshot, out_dir) if callable(hook) and snapshot is not None else []


def evaluate(run_dir: str | None, checkpoint: str | None = None, greedy: bool = False,
             out_dir: str | None = None, seed: int = 0) -> Path:  # fmt: skip
    """Evaluate a checkpoint (default: the newest of ``run_dir``); return the output folder."""
    path = find_checkpoint(checkpoint or run_dir)
    state = load_checkpoint(path)
    config = state["config"]
    env, scenario = build_eval_env(config)
    models = load_policy_models(state, env.policy_specs)
    log = run_episode(env, models, greedy, seed)
    log.update({"checkpoint": str(path), "iteration": state["iteration"], "greedy": greedy,
                "env": config["name"]})  # fmt: skip
    dense = scenario_dense_log(scenario)  # before the reset below starts a new episode
    snapshot = scenario_snapshot(scenario)
    env.reset_only_done_envs()  # some backends publish an episode's metrics at its reset
    log["metrics"] = env.episode_metrics()
    if dense is not None:
        log["scenario_dense_log"] = dense
    scenario_metrics = getattr(scenario, "previous_episode_metrics", None)
    if scenario_metrics:
        log["scenario_metrics"] = {k: float(v) for k, v in scenario_metrics.items()}
    out = Path(out_dir) if out_dir else run_dir_of(path) / "eval" / path.stem
    out.mkdir(parents=True, exist_ok=True)
    (out / "dense_log.json").write_text(json.dumps(log, default=_jsonable))
    write_plots(log, out, scenario_level_plots(scenario, snapshot))
    write_scenario_plots(scenario, snapshot, out)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ai_economist.training.evaluate", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--run_dir", help="a training run directory (its newest checkpoint is used)"
    )
    parser.add_argument("--checkpoint", help="a checkpoint file (instead of the newest)")
    parser.add_argument("--greedy", action="store_true", help="take the most likely action")
    parser.add_argument("--out", help="output folder (default <run_dir>/eval/<checkpoint>)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sampled actions")
    args = parser.parse_args(argv)
    if not args.run_dir and not args.checkpoint:
        parser.error("give --run_dir or --checkpoint")
    try:
        out = evaluate(args.run_dir, args.checkpoint, args.greedy, args.out, args.seed)
    except (FileNotFoundError, CheckpointError) as exc:  # missing, damaged, not a checkpoint
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = json.loads((out / "dense_log.json").read_text())
    returns = {t: sum(r) / len(r) for t, r in summary["episode_returns"].items()}
    print(f"wrote {out}: mean episode return per policy {returns}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run a saved policy for one episode on the CPU and write a dense log with plots.

Example::

    python -m ai_economist.training.evaluate --run_dir runs/toy/default/<run> --greedy

Writes ``<run_dir>/eval/<checkpoint>/dense_log.json`` (per step: every agent's action and
reward, plus the episode's metrics and, for the COVID-19 scenario, the scenario's own dense
log and all its metrics) and ``rewards.png``, ``actions_<tag>.png`` (matplotlib, the ``plot``
extra; for COVID-19 the actions are the states' stringency levels and the subsidy level) and
``covid_state.png`` (infections, deaths, unemployment, vaccinations, stringency, subsidies).

The episode runs through the same ``BatchedPolicyEnv`` interface as training (one env, CPU
backend), so the observations the policy sees have exactly the layout it was trained on.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ai_economist.training.training_script import ENVIRONMENTS
from ai_economist.warp_drive.training.checkpoint import find_checkpoint, load_checkpoint, run_dir_of
from ai_economist.warp_drive.training.models import build_policy_model, greedy_masked, sample_masked


def build_covid_eval_env(config: dict) -> tuple[Any, Any]:
    """One COVID-19 env on the CPU backend, dense-logging every episode (untested until the
    scenario and its wrapper exist)."""
    from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
    from ai_economist.foundation.scenarios.covid19.covid19_env import CovidAndEconomyEnvironment

    kwargs = dict(config["env"])
    kwargs.setdefault("dense_log_frequency", 1)
    env = CovidAndEconomyEnvironment(**kwargs)
    return FoundationEnvWrapper(env, num_envs=1, env_backend="cpu"), env


def build_eval_env(config: dict) -> tuple[Any, Any]:
    """``(batched env with one replica on the CPU, underlying scenario object or None)``."""
    if config["name"] == "covid_and_economy_environment":
        return build_covid_eval_env(config)
    one = copy.deepcopy(config)
    one["trainer"]["num_envs"] = 1
    return ENVIRONMENTS[config["name"]].build(one, torch.device("cpu"), "cpu"), None


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


def load_policy_models(state: dict, policy_specs: dict) -> dict[str, torch.nn.Module]:
    """The policy models of a loaded checkpoint, on the CPU, in eval mode."""
    config = state["config"]
    models = {}
    for tag, spec in policy_specs.items():
        pcfg = copy.deepcopy(config["policy"][tag])
        pcfg["model"]["model_ckpt_filepath"] = ""
        model = build_policy_model(tag, pcfg, spec, torch.device("cpu"))
        model.load_state_dict(state["policies"][tag]["model"])
        models[tag] = model.eval()
    return models


@torch.no_grad()
def run_episode(env: Any, models: dict[str, torch.nn.Module], greedy: bool, seed: int = 0) -> dict:
    """One episode of the first env replica; returns per-step actions/rewards per policy."""
    generator = torch.Generator().manual_seed(seed)
    env.reset_all_envs()
    steps: list[dict[str, Any]] = []
    for t in range(env.episode_length):
        record: dict[str, Any] = {"t": t, "actions": {}, "rewards": {}}
        for tag, model in models.items():
            obs = env.observations(tag).float()
            mask = env.action_masks(tag)
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


def write_plots(log: dict, out_dir: Path) -> list[Path]:
    """Reward curves and per-agent action heat maps; skipped if matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        warnings.warn("matplotlib is not installed (the 'plot' extra): no plots", stacklevel=2)
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
    axes[0].set(title="reward per step (mean over agents)", xlabel="step")
    axes[1].set(title="cumulative reward (mean over agents)", xlabel="step")
    axes[0].legend()
    fig.tight_layout()
    paths.append(out_dir / "rewards.png")
    fig.savefig(paths[-1], dpi=100)
    plt.close(fig)
    for tag in tags:
        actions = [s["actions"][tag] for s in steps]  # (T, N)
        fig, ax = plt.subplots(figsize=(11, 3 + 0.05 * len(actions[0])))
        image = ax.imshow(
            list(map(list, zip(*actions, strict=True))), aspect="auto", interpolation="nearest"
        )
        ax.set(title=f"actions of policy {tag}", xlabel="step", ylabel="agent")
        fig.colorbar(image, ax=ax, label="action index")
        fig.tight_layout()
        paths.append(out_dir / f"actions_{tag}.png")
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
    return paths


COVID_PANELS = ("Infected", "Deaths", "Unemployed", "Vaccinated", "Stringency Level", "Subsidy")


def scenario_global_state(scenario: Any) -> dict | None:
    """A copy of the COVID-19 scenario's global state (per-day arrays), if it has one."""
    state = getattr(getattr(scenario, "world", None), "global_state", None)
    if not isinstance(state, dict) or not all(k in state for k in COVID_PANELS):
        return None
    return {k: copy.deepcopy(state[k]) for k in COVID_PANELS}


def write_scenario_plots(state: dict | None, out_dir: Path) -> list[Path]:
    """For the COVID-19 scenario: US totals (means for levels) of its global state over the
    episode just played.  Nothing for other envs or without matplotlib."""
    if state is None:
        return []
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
    except ImportError:
        return []
    fig, axes = plt.subplots(2, 3, figsize=(14, 7))
    for ax, key in zip(axes.flat, COVID_PANELS, strict=True):
        values = np.asarray(state[key], dtype=float)
        series = values.mean(-1) if "Level" in key else values.sum(-1)
        ax.plot(series)
        ax.set(title=f"{key} ({'mean' if 'Level' in key else 'sum'} over states)", xlabel="day")
    fig.tight_layout()
    path = out_dir / "covid_state.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]


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
    global_state = scenario_global_state(scenario)
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
    write_plots(log, out)
    write_scenario_plots(global_state, out)
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
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = json.loads((out / "dense_log.json").read_text())
    returns = {t: sum(r) / len(r) for t, r in summary["episode_returns"].items()}
    print(f"wrote {out}: mean episode return per policy {returns}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

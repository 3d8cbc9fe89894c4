"""A trained planner against the simulated real-world policies, as the AI Economist paper does.

    python benchmarks/real_world_comparison.py --checkpoint RUN_DIR_OR_CKPT [--out DIR]
    python benchmarks/real_world_comparison.py --models SEED_DIR/models.pt \
        --run_config SEED_DIR/config.yaml      # learning_seeds.py's files, no checkpoint

Plays the checkpoint's policies (greedy: the most likely allowed action) on the COVID-19
tutorial configuration (``TUTORIAL_ENV_CONFIG``: 405 days from 2020-03-22, health priority
scalings 1 for the states and 1 for the planner; ``ai-economist-simulate --scenario
tutorial``), beside the real-world stringency and subsidy policies of 2020-2021 (planner
reward sum 349.06) and the learning check's fixed policies, on the batched numpy model
(``ai_economist.simulate``).  Prints one row per policy: the planner's reward sum, the states'
mean reward sum, deaths (thousands), mean and peak unemployment (% of the US population),
vaccinated % and subsidies paid, then how the trained stringency and subsidy move over the
tutorial's months.  CPU, a few seconds.

The checkpoint is evaluated as trained: a planner trained on the 540-day configuration (m_a
0.3, m_p 0.45) meets different priorities and a shorter episode here (its ``time``
observation is the day over 405 instead of over 540).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ai_economist.simulate import run_sweep  # noqa: E402

REAL_WORLD_PLANNER_SUM = 349.06
"""The real-world policies' planner reward sum on the tutorial configuration (golden value)."""
CONTEXT = ("real-world", "closed-180-then-open", "open", "closed", "fixed:7,405,7,0")
"""Policies shown beside the trained one (``fixed:7,405,7,0``: every state at level 7, no
subsidy, the best constant schedule of the tutorial configuration)."""
COLUMNS = (
    ("planner_reward", "planner", 2),
    ("states_reward", "states", 2),
    ("deaths_thousands", "deaths (k)", 1),
    ("mean_unemployment_rate_pct", "unempl. mean %", 2),
    ("peak_unemployment_rate_pct", "peak %", 2),
    ("vaccinated_pct", "vacc. %", 1),
    ("subsidy_trillions", "subsidy $T", 3),
)
"""(outcome of ``ai_economist.simulate``, column label, decimals)."""


def against_real_world(checkpoint: str, greedy: bool = True) -> dict[str, Any]:
    """``{"rows": {policy: {outcome: value}}, "trained": name, "beats_real_world": bool,
    "margin": trained - real-world planner sum}`` on the tutorial configuration."""
    trained = f"checkpoint:{checkpoint}"
    table = run_sweep([trained, *CONTEXT], scenario="tutorial", greedy=greedy)
    rows = {}
    for i, policy in enumerate(table["policy"]):
        name = "trained (greedy)" if policy == trained and greedy else str(policy)
        name = "trained (sampled)" if policy == trained and not greedy else name
        rows[name] = {key: float(table[key][i]) for key, _, _ in COLUMNS}
    name = next(iter(rows))
    margin = rows[name]["planner_reward"] - rows["real-world"]["planner_reward"]
    return {"rows": rows, "trained": name, "beats_real_world": bool(margin > 0), "margin": margin}


def format_comparison(result: dict[str, Any]) -> str:
    """The comparison as a table and a verdict line."""
    widths = [max(len(label), 7) for _, label, _ in COLUMNS]
    lines = [
        f"{'policy (tutorial: 405 days, m_a 1, m_p 1)':42s} "
        + " ".join(f"{label:>{w}}" for (_, label, _), w in zip(COLUMNS, widths, strict=True))
    ]
    for name, row in result["rows"].items():
        cells = " ".join(
            f"{row[key]:>{w}.{decimals}f}"
            for (key, _, decimals), w in zip(COLUMNS, widths, strict=True)
        )
        lines.append(f"{name:42s} {cells}")
    verdict = "beats" if result["beats_real_world"] else "does NOT beat"
    lines.append(
        f"the trained planner {verdict} the real-world policies "
        f"({result['rows'][result['trained']]['planner_reward']:.2f} vs "
        f"{result['rows']['real-world']['planner_reward']:.2f}, margin {result['margin']:+.2f})"
    )
    return "\n".join(lines)


def tutorial_trace(checkpoint: str):
    """The greedy trace (``covid19.policy_response.PolicyTrace``) of the checkpoint's policies
    on the tutorial configuration."""
    from ai_economist import foundation
    from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
    from ai_economist.foundation.scenarios.covid19.configs import TUTORIAL_ENV_CONFIG, env_config
    from ai_economist.foundation.scenarios.covid19.model import policy_response as pr
    from ai_economist.simulate.checkpoints import load_models

    config = env_config(TUTORIAL_ENV_CONFIG)
    env = foundation.make_env_instance("CovidAndEconomySimulation", **config)
    models = load_models(checkpoint, FoundationEnvWrapper(env, 1, "numpy").policy_specs)
    return pr.record_trace(models, config, greedy=True)


def report(checkpoint: str, out_dir: Path | None = None) -> dict[str, Any]:
    """Print the comparison and the trained policies' monthly response on the tutorial
    configuration (plot into ``out_dir``); return the comparison with the response summary."""
    from ai_economist.foundation.scenarios.covid19.model import policy_response as pr

    result = against_real_world(checkpoint)
    print(format_comparison(result))
    trace = tutorial_trace(checkpoint)
    print("the trained policies on the tutorial configuration (means per 30 days):")
    print(pr.format_report(trace))
    result["response"] = pr.summary(trace)
    if out_dir is not None:
        plots = pr.write_response_plots(trace, out_dir, "trained policies, tutorial config")
        result["plots"] = [str(p) for p in plots]
    return result


def checkpoint_from_models(models: str | Path, run_config: str | Path, out_dir: Path) -> Path:
    """A trainer checkpoint (models only) in ``out_dir`` from a ``--save_models`` file
    (``{tag: state_dict}``) and the run's resolved ``config.yaml``."""
    import torch
    import yaml

    from ai_economist.warp_drive.training.checkpoint import FORMAT_VERSION, save_checkpoint

    config = yaml.safe_load(Path(run_config).read_text())
    state_dicts = torch.load(models, map_location="cpu", weights_only=True)
    missing = sorted(set(config.get("policy", {})) - set(state_dicts))
    if missing:
        raise SystemExit(f"--models {str(models)!r} has no state dict for policies {missing}")
    state = {"format_version": FORMAT_VERSION, "iteration": 0, "env_steps": 0, "config": config,
             "policies": {t: {"model": sd} for t, sd in state_dicts.items()}, "ranks": 1}  # fmt: skip
    return save_checkpoint(out_dir / "checkpoints" / "ckpt_00000000.pt", state)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default="", help="a checkpoint file or run folder")
    parser.add_argument("--models", default="", help="a --save_models file (with --run_config)")
    parser.add_argument("--run_config", default="", help="the run's resolved config.yaml")
    parser.add_argument("--out", default="", help="folder for the plot and result.json")
    args = parser.parse_args(argv)
    out = Path(args.out) if args.out else None
    if args.models:
        for flag, path in (("--models", args.models), ("--run_config", args.run_config)):
            if not path or not Path(path).is_file():
                raise SystemExit(f"{flag} {path!r}: no such file (give --models and --run_config)")
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="real_world_"))
        args.checkpoint = str(checkpoint_from_models(args.models, args.run_config, folder))
    if not args.checkpoint or not Path(args.checkpoint).exists():
        raise SystemExit(f"--checkpoint {args.checkpoint!r}: no such file or folder")
    result = report(args.checkpoint, out)
    if out is not None:
        from learning_report import write_json

        print(f"wrote {write_json(out / 'real_world.json', result)}")


if __name__ == "__main__":
    main()

"""Train the policies of an environment with the GPU-resident trainer.

Examples::

    # the published COVID-19 run (GPU), and a short CPU demo
    python -m ai_economist.training.training_script --env covid_and_economy_environment
    python -m ai_economist.training.training_script --env covid_and_economy_environment \\
        --device cpu --config ai_economist/training/run_configs/covid_and_economy_cpu_demo.yaml
    # a GPU run whose planner beats the fixed policies (docs/differences.md, "Training")
    python -m ai_economist.training.training_script --device cuda \\
        --config ai_economist/training/run_configs/covid_and_economy_gpu_learning.yaml
    # the toy env, with overrides, then resumed
    python -m ai_economist.training.training_script --env toy --device cpu \\
        trainer.num_envs=4 trainer.train_batch_size=40 saving.basedir=/tmp/run
    python -m ai_economist.training.training_script --resume /tmp/run/toy/default/<run>

Exit status: 0 on success, 1 if training diverged (NaN loss), 2 for configuration errors.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ai_economist.training.config import (
    ConfigError,
    check_env_kwargs,
    default_config_path,
    describe_schema,
    load_run_config,
)
from ai_economist.training.environments import (  # noqa: F401  (re-exported)
    ENVIRONMENTS,
    EnvEntry,
    build_env_wrapper,
    build_toy_env,
)


def policy_tag_to_agent_id_map(env: Any) -> dict[str, list]:
    """``{"a": ["0", ..., "N-1"], "p": ["p"]}`` from the env's policy specs, or the env's own
    ``policy_tag_to_agent_id_map`` when it has one (``EnvWrapper``)."""
    own = getattr(env, "policy_tag_to_agent_id_map", None)
    if own is not None:
        return dict(own)
    return {
        tag: ["p"] if tag == "p" else [str(i) for i in range(spec.num_agents)]
        for tag, spec in env.policy_specs.items()
    }


def resolve_device(requested: str) -> str:
    """``auto`` -> ``cuda`` if a GPU is visible, else ``cpu``; ``cuda`` without one is an error."""
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise ConfigError("--device cuda: no CUDA GPU is visible to torch; use --device cpu")
    return requested


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m ai_economist.training.training_script",
        description=__doc__.split("\n\n")[0],
        epilog="Overrides: key.path=value arguments, e.g. trainer.num_envs=4 "
        "saving.basedir=/tmp/run policy.a.lr=0.001 (values are read as YAML).",
    )
    parser.add_argument("--env", help=f"environment name: {', '.join(ENVIRONMENTS)}")
    parser.add_argument("--config", help="run config YAML (default run_configs/<env>.yaml)")
    parser.add_argument(
        "--device", choices=("auto", "cpu", "cuda"), help="overrides trainer.device"
    )
    parser.add_argument(
        "--num_gpus", type=int, help="GPUs to train on (overrides trainer.num_gpus)"
    )
    parser.add_argument("--resume", metavar="PATH_OR_RUN_DIR", help="continue from a checkpoint")
    parser.add_argument("--results_dir", help="run directory (default basedir/name/tag/<time>)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or tables")
    parser.add_argument("--describe_config", action="store_true", help="list every config key")
    parser.add_argument("overrides", nargs="*", metavar="key.path=value")
    return parser.parse_args(argv)


def prepare(args: argparse.Namespace) -> tuple[str, dict, str | None]:
    """Resolve ``(env name, validated run config, checkpoint to resume)`` before any work."""
    overrides = list(args.overrides)
    if args.device:
        overrides.append(f"trainer.device={args.device}")
    if args.num_gpus is not None:
        overrides.append(f"trainer.num_gpus={args.num_gpus}")
    resume = None
    if args.resume:
        from ai_economist.warp_drive.training.checkpoint import find_checkpoint, load_checkpoint

        resume = str(find_checkpoint(args.resume))
    if args.config or not resume:
        if not args.config and not args.env:
            raise ConfigError("give --env NAME (or --config PATH, or --resume RUN_DIR)")
        path = Path(args.config) if args.config else default_config_path(args.env)
        config = load_run_config(path, overrides)
    else:  # resume with the checkpoint's own resolved config
        base = load_checkpoint(resume)["config"]
        config = load_run_config(base=base, overrides=overrides, source=f"{resume} (saved config)")
    env_name = args.env or config["name"]
    if env_name != config["name"]:
        raise ConfigError(f"--env {env_name} but the run config's 'name' is {config['name']!r}")
    if env_name not in ENVIRONMENTS:
        raise ConfigError(f"unknown environment {env_name!r}; known: {', '.join(ENVIRONMENTS)}")
    entry = ENVIRONMENTS[env_name]
    check_env_kwargs(
        config["env"], entry.env_class() if entry.env_class else None, args.config or env_name
    )
    config["trainer"]["device"] = resolve_device(config["trainer"]["device"])
    if config["trainer"]["num_gpus"] > 1 and config["trainer"]["device"] != "cuda":
        raise ConfigError("--num_gpus > 1 needs --device cuda")
    return env_name, config, resume


def train_process(ctx: Any, env_name: str, config: dict, resume: str | None, results_dir: str | None,
                  verbose: bool) -> dict:  # fmt: skip
    """Build the env and the trainer in this process (one per GPU) and train."""
    import torch

    from ai_economist.warp_drive.training.trainer import Trainer

    rank, world = (ctx.rank, ctx.world_size) if ctx is not None else (0, 1)
    device = (
        torch.device("cuda", rank) if config["trainer"]["device"] == "cuda" else torch.device("cpu")
    )
    entry = ENVIRONMENTS[env_name]
    env = entry.build(config, device, None)
    trainer = Trainer(
        env,
        config,
        policy_tag_to_agent_id_map(env),
        create_separate_placeholders_for_each_policy=True,
        obs_dim_corresponding_to_num_agents=entry.obs_dim_corresponding_to_num_agents,
        num_devices=world,
        device_id=rank,
        results_directory=results_dir,
        verbose=verbose,
        resume_from=resume,
    )
    try:
        if verbose and rank == 0:
            print(f"run directory: {trainer.run_dir}  ({trainer.num_iterations} iterations, "
                  f"{trainer.num_steps} steps x {trainer.num_envs} envs each, device {device})")  # fmt: skip
        if trainer.iteration >= trainer.num_iterations and verbose and rank == 0:
            print(f"nothing to train: iteration {trainer.iteration} of {trainer.num_iterations} "
                  f"is done (raise trainer.num_episodes to continue)")  # fmt: skip
        return trainer.train()
    finally:
        trainer.graceful_close()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.describe_config:
        print("\n".join(describe_schema()))
        return 0
    try:
        env_name, config, resume = prepare(args)
    except (ConfigError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from ai_economist.warp_drive.training.trainer import TrainingDiverged

    num_gpus = config["trainer"]["num_gpus"]
    try:
        if num_gpus > 1:
            from ai_economist.warp_drive.training.distributed import launch

            launch(
                train_process,
                num_gpus,
                (env_name, config, resume, args.results_dir, not args.quiet),
            )
        else:
            train_process(None, env_name, config, resume, args.results_dir, not args.quiet)
    except TrainingDiverged as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # a diverged worker process surfaces as a wrapped exception
        if "TrainingDiverged" in f"{type(exc).__name__}: {exc}":
            print(f"error: {exc}", file=sys.stderr)
            return 1
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Train the policies of an environment with the GPU-resident trainer.

Examples::

    # the published COVID-19 run (GPU), and a short CPU demo (a packaged config, by name)
    python -m ai_economist.training.training_script --env covid_and_economy_environment
    python -m ai_economist.training.training_script --device cpu \\
        --config covid_and_economy_cpu_demo
    # a GPU run whose planner beats the fixed policies (docs/differences.md, "Training")
    python -m ai_economist.training.training_script --device cuda \\
        --config ai_economist/training/run_configs/covid_and_economy_gpu_learning.yaml
    # the toy env, with overrides, then resumed
    python -m ai_economist.training.training_script --env toy --device cpu \\
        trainer.num_envs=4 trainer.train_batch_size=40 saving.basedir=/tmp/run
    python -m ai_economist.training.training_script --resume /tmp/run/toy/default/<run>

Data-parallel: ``trainer.num_gpus=N`` (or ``--num_gpus N``) starts N processes on this
machine's GPUs; under ``torchrun`` (one host or several, e.g. ``torchrun --nnodes 2
--nproc-per-node 8 --rdzv-backend c10d --rdzv-id RUN --rdzv-endpoint HOST:29500 -m
ai_economist.training.training_script ...`` on each host) each process joins torchrun's group
instead (NCCL on GPUs, gloo with ``--device cpu``).
Rank 0 alone writes the run directory.

Exit status: 0 on success, 1 if training diverged (NaN loss), 2 for configuration errors
(every one is reported before any work starts, naming the key, the value and what was
expected).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from ai_economist.training.config import (
    ConfigError,
    default_config_path,
    describe_schema,
    find_run_config,
    load_run_config,
)
from ai_economist.training.environments import (  # noqa: F401  (re-exported)
    ENVIRONMENTS,
    EnvEntry,
    build_toy_env,
)
from ai_economist.training.preflight import check_env_block, check_model_files, check_output_dir
from ai_economist.warp_drive.backend_names import GPU_BACKENDS
from ai_economist.warp_drive.training.schema import check_episode_budget


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


def build_trainer(config: dict, device: Any, **trainer_options: Any) -> Any:
    """The registered env of ``config["name"]`` built on ``device``, and a ``Trainer`` around
    it (what each training process does); ``trainer_options`` go to ``Trainer``
    (``results_directory``, ``verbose``, ``num_devices``, ``device_id``, ``resume_from``)."""
    from ai_economist.warp_drive.training.trainer import Trainer

    entry = ENVIRONMENTS[config["name"]]
    env = entry.build(config, device, None)
    return Trainer(
        env,
        config,
        policy_tag_to_agent_id_map(env),
        create_separate_placeholders_for_each_policy=True,
        obs_dim_corresponding_to_num_agents=entry.obs_dim_corresponding_to_num_agents,
        **trainer_options,
    )


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
    parser.add_argument(
        "--config",
        help="run config: a YAML file or the name of a packaged one, e.g. "
        "covid_and_economy_cpu_demo (default run_configs/<env>.yaml)",
    )
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


def open_resume(path: str) -> tuple[str, dict]:
    """The checkpoint to resume (``path``, or the newest of a run directory that verifies),
    loaded; each damaged checkpoint skipped is reported on stderr with the reason."""
    from ai_economist.warp_drive.training.checkpoint import find_checkpoint, load_checkpoint

    def report(message: str) -> None:
        print(f"warning: --resume {path}: {message}", file=sys.stderr)

    found = find_checkpoint(path, report=report)
    return str(found), load_checkpoint(found)


def check_before_work(
    entry: EnvEntry, config: dict, source: str, results_dir: str | None, resume: str | None
) -> None:
    """Everything a run config can get wrong beyond its schema, checked before any work: the
    env block (one env is built on the CPU), the episode budget, device and backend, model
    files and the output directory.  Resolves ``trainer.device`` in place.

    Raises:
        ConfigError: naming the key, the value and what was expected.
    """
    env_class = entry.env_class() if entry.env_class else None
    one = check_env_block(config["env"], env_class, entry.build_one, source)
    if one is not None:
        check_episode_budget(config, one.episode_length, source)
    trainer = config["trainer"]
    trainer["device"] = resolve_device(trainer["device"])
    if trainer["num_gpus"] > 1 and trainer["device"] != "cuda":
        raise ConfigError("--num_gpus > 1 needs --device cuda")
    if trainer["env_backend"] in {b.value for b in GPU_BACKENDS} and trainer["device"] != "cuda":
        raise ConfigError(
            f"run config {source}: 'trainer.env_backend' = {trainer['env_backend']!r} steps the "
            f"env on the GPU and needs trainer.device cuda, got {trainer['device']!r}; on the "
            "CPU use 'numpy' (batched arrays), 'cpu' (Python envs) or 'auto'"
        )
    check_model_files(config, source)
    if results_dir:
        check_output_dir(results_dir, "--results_dir")
    elif not resume:
        check_output_dir(config["saving"]["basedir"], "saving.basedir")


def prepare(args: argparse.Namespace) -> tuple[str, dict, str | None]:
    """Resolve ``(env name, validated run config, checkpoint to resume)`` before any work."""
    overrides = list(args.overrides)
    if args.device:
        overrides.append(f"trainer.device={args.device}")
    if args.num_gpus is not None:
        overrides.append(f"trainer.num_gpus={args.num_gpus}")
    resume, saved = None, None
    if args.resume:
        resume, saved = open_resume(args.resume)
    if args.config or not resume:
        if not args.config and not args.env:
            raise ConfigError("give --env NAME (or --config PATH, or --resume RUN_DIR)")
        path = find_run_config(args.config) if args.config else default_config_path(args.env)
        config, source = load_run_config(path, overrides), str(path)
    else:  # resume with the checkpoint's own resolved config
        source = f"{resume} (saved config)"
        config = load_run_config(base=saved["config"], overrides=overrides, source=source)
    env_name = args.env or config["name"]
    if env_name != config["name"]:
        raise ConfigError(f"--env {env_name} but the run config's 'name' is {config['name']!r}")
    if env_name not in ENVIRONMENTS:
        raise ConfigError(f"unknown environment {env_name!r}; known: {', '.join(ENVIRONMENTS)}")
    if saved is not None:
        from ai_economist.warp_drive.training.checkpoint_state import check_checkpoint_fits

        check_checkpoint_fits(saved, config, resume)
    torchrun_launch(config)  # trainer.num_gpus and torchrun together: refused before the rest
    check_before_work(ENVIRONMENTS[env_name], config, source, args.results_dir, resume)
    return env_name, config, resume


def train_process(ctx: Any, env_name: str, config: dict, resume: str | None, results_dir: str | None,
                  verbose: bool) -> dict:  # fmt: skip
    """Build the env and the trainer in this process (one per GPU) and train."""
    import torch

    rank, world = (ctx.rank, ctx.world_size) if ctx is not None else (0, 1)
    gpu = ctx.device_index if ctx is not None else 0
    device = (
        torch.device("cuda", gpu) if config["trainer"]["device"] == "cuda" else torch.device("cpu")
    )
    trainer = build_trainer(
        config,
        device,
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


def train_under_torchrun(found: dict, env_name: str, config: dict, resume: str | None,
                         results_dir: str | None, verbose: bool) -> None:  # fmt: skip
    """Join the process group ``torchrun`` set up (NCCL on GPUs, gloo on the CPU) and train
    this process's share: the data-parallel path of ``trainer.num_gpus``, across hosts."""
    from ai_economist.warp_drive.training.distributed import init_from_torchrun, shutdown

    backend = "nccl" if config["trainer"]["device"] == "cuda" else "gloo"
    ctx = init_from_torchrun(found, backend)
    try:
        train_process(ctx, env_name, config, resume, results_dir, verbose)
        ctx.barrier()  # every rank is done with the group before any rank tears it down
    finally:
        shutdown()


def torchrun_launch(config: dict) -> dict | None:
    """The ``torchrun`` rendezvous of this process (None when not started by torchrun).

    Raises:
        ConfigError: ``trainer.num_gpus`` > 1 as well (torchrun starts the processes), or a
            malformed torchrun environment.
    """
    from ai_economist.warp_drive.training.distributed import torchrun_environment

    try:
        found = torchrun_environment()
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if found is not None and config["trainer"]["num_gpus"] > 1:
        raise ConfigError(
            f"trainer.num_gpus={config['trainer']['num_gpus']} under torchrun: torchrun starts "
            "one process per GPU; give torchrun --nproc-per-node N and leave trainer.num_gpus at 1"
        )
    return found


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.describe_config:
        print("\n".join(describe_schema()))
        return 0
    try:
        env_name, config, resume = prepare(args)
        torchrun = torchrun_launch(config)
    except (ConfigError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from ai_economist.warp_drive.training.trainer import TrainingDiverged

    num_gpus = config["trainer"]["num_gpus"]
    run_args = (env_name, config, resume, args.results_dir, not args.quiet)
    try:
        if torchrun is not None:
            train_under_torchrun(torchrun, *run_args)
        elif num_gpus > 1:
            from ai_economist.warp_drive.training.distributed import launch

            launch(train_process, num_gpus, run_args)
        else:
            train_process(None, *run_args)
    except TrainingDiverged as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except ConfigError as exc:  # e.g. a checkpoint whose models do not fit the env
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a worker process's error surfaces as a wrapped exception
        text = f"{type(exc).__name__}: {exc}"
        if "TrainingDiverged" in text or "CheckpointError" in text:
            print(f"error: {exc}", file=sys.stderr)
            return 1 if "TrainingDiverged" in text else 2
        raise
    return 0


def exit_without_teardown(code: int) -> None:
    """End the process with ``code`` after the atexit handlers and a flush of stdout and
    stderr, skipping the interpreter's teardown of every loaded module (about 1.6 s of CPU
    time for torch, tensorboard and sympy on a 2-core machine,
    ``benchmarks/startup_profile.py``); the ordinary ``sys.exit`` while another non-daemon
    thread still runs (the interpreter would wait for it)."""
    import atexit
    import os
    import threading

    if any(
        t.is_alive() and not t.daemon
        for t in threading.enumerate()
        if t is not threading.current_thread()
    ):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more to write
            pass
    os._exit(code)


if __name__ == "__main__":
    exit_without_teardown(main())

"""Train the policies of an environment with the GPU-resident trainer.

Examples::

    # the published COVID-19 run (GPU), and a short CPU demo (a packaged config, by name)
    python -m ai_economist.training.training_script --env covid_and_economy_environment
    python -m ai_economist.training.training_script --device cpu \\
        --config covid_and_economy_cpu_demo
    # a GPU run whose planner beats the fixed policies (docs/differences.md, "Training")
    python -m ai_economist.training.training_script --device cuda \\
        --config covid_and_economy_gpu_learning
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

``--dry_run`` makes every check below and trains nothing (also for ``--device cuda`` on a
machine without a GPU).  Exit status: 0 on success, 1 if training diverged (NaN loss), 2 for configuration errors
(every one is reported before any work starts, naming the key, the value and what was
expected; also a run folder in use), 130 / 143 when SIGINT (Ctrl-C) / SIGTERM stopped
training (after the current iteration and a checkpoint; the resume command is printed),
74 when writing a checkpoint or the metrics failed (a full disk: ENOSPC, or another OS error;
the earlier checkpoints are intact).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ai_economist.extras import MissingExtraError, require_modules
from ai_economist.training.config import (
    ConfigError,
    default_config_path,
    describe_schema,
    find_run_config,
    load_run_config,
    load_yaml,
)
from ai_economist.training.preflight import check_env_block, check_model_files, check_output_dir
from ai_economist.warp_drive.backend_names import BackendUnavailableError
from ai_economist.warp_drive.errors import UnknownNameError
from ai_economist.warp_drive.registry import ENVIRONMENTS, EnvEntry, EnvironmentImportError
from ai_economist.warp_drive.registry import default_policy_mapping as policy_tag_to_agent_id_map
from ai_economist.warp_drive.training.run_dir import check_fresh_run_dir
from ai_economist.warp_drive.training.schema import check_episode_budget
from ai_economist.warp_drive.training.toy_registration import build_toy_env  # noqa: F401

__all__ = ["ENVIRONMENTS", "EnvEntry", "build_trainer", "main", "policy_tag_to_agent_id_map"]


def build_trainer(config: dict, device: Any, **trainer_options: Any) -> Any:
    """The registered env of ``config["name"]`` built on ``device``, and a ``Trainer`` around
    it (what each training process does); ``trainer_options`` go to ``Trainer``
    (``results_directory``, ``verbose``, ``num_devices``, ``device_id``, ``resume_from``)."""
    from ai_economist.warp_drive.training.trainer import Trainer

    entry = ENVIRONMENTS[config["name"]]
    env = entry.make(config, device)  # trainer.env_backend: resolved by check_before_work
    return Trainer(
        env,
        config,
        entry.policy_mapping(env),
        create_separate_placeholders_for_each_policy=True,
        obs_dim_corresponding_to_num_agents=entry.obs_dim_corresponding_to_num_agents,
        **trainer_options,
    )


def resolve_device(requested: str, dry_run: bool = False) -> str:
    """``auto`` -> ``cuda`` if a GPU is visible, else ``cpu``; ``cuda`` without one is an error
    (a note on stderr with ``dry_run``: the config is still checked for a GPU run)."""
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        if dry_run:
            print("note: --dry_run: no CUDA GPU is visible here; the config is checked for a "
                  "GPU run all the same", file=sys.stderr)  # fmt: skip
            return requested
        raise ConfigError("--device cuda: no CUDA GPU is visible to torch; use --device cpu")
    return requested


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m ai_economist.training.training_script",
        description=__doc__.split("\n\n")[0],
        epilog="Overrides: key.path=value arguments, e.g. trainer.num_envs=4 "
        "saving.basedir=/tmp/run policy.a.lr=0.001 (values are read as YAML).",
    )
    parser.add_argument("--env", help="a registered environment name (see --list_envs)")
    parser.add_argument(
        "--config",
        help="run config: a YAML file or the name of a packaged one, e.g. "
        "covid_and_economy_cpu_demo (default: the env's packaged <env>.yaml)",
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
    parser.add_argument(
        "--dry_run",
        action="store_true",
        help="check the run config, device, backend and output folder, print the run, train nothing",
    )
    parser.add_argument(
        "--list_envs", action="store_true", help="list the registered environments and exit"
    )
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
    entry: EnvEntry,
    config: dict,
    source: str,
    results_dir: str | None,
    resume: str | None,
    dry_run: bool = False,
    overrides: Sequence[str] = (),
    file_env: dict | None = None,
) -> None:
    """Everything a run config can get wrong beyond its schema, checked before any work: the
    env block (one env is built on the CPU), the episode budget, device and backend, model
    files and the output directory.  Resolves ``trainer.device`` and, by the registry's one
    rule, ``trainer.env_backend`` in place (the run's ``config.yaml`` records both).

    Raises:
        ConfigError: naming the key, the value and what was expected.
    """
    env_class = entry.env_class() if entry.env_class else None
    one = check_env_block(config["env"], env_class, entry.build_one, source, overrides, file_env)
    if overrides:  # the values below may come from the command line
        source += f" (with command-line overrides {' '.join(overrides)})"
    if one is not None:
        check_episode_budget(config, one.episode_length, source)
    trainer = config["trainer"]
    trainer["device"] = resolve_device(trainer["device"], dry_run)
    if trainer["num_gpus"] > 1 and trainer["device"] != "cuda":
        raise ConfigError("--num_gpus > 1 needs --device cuda")
    try:
        trainer["env_backend"] = entry.resolve_backend(config, trainer["device"]).value
    except BackendUnavailableError as exc:
        raise ConfigError(f"run config {source}: {exc}") from exc
    check_model_files(config, source)
    if results_dir:
        check_output_dir(results_dir, "--results_dir")
    elif not resume:
        check_output_dir(config["saving"]["basedir"], "saving.basedir")
    check_run_dir_free(config["saving"], results_dir, resume)


def check_run_dir_free(saving: dict, results_dir: str | None, resume: str | None) -> None:
    """A new run never writes into a folder holding another run (``--results_dir`` or
    ``saving.run_name``), unless it resumes; nothing is touched before the refusal.

    Raises:
        RunDirInUse: naming the option, the folder and the run files found in it.
    """
    if resume:
        return
    if results_dir:
        check_fresh_run_dir(results_dir, "--results_dir")
    elif saving["run_name"]:
        folder = Path(saving["basedir"]) / saving["name"] / saving["tag"] / saving["run_name"]
        check_fresh_run_dir(folder, "saving.run_name")


def check_env_name(name: str, where: str | None = None) -> None:
    """``ConfigError`` for a name that is not registered: the registered names, with close
    matches (or the package whose registration failed to import); ``where`` names the source
    (default ``--env NAME``)."""
    try:
        ENVIRONMENTS[name]
    except (UnknownNameError, EnvironmentImportError) as exc:
        raise ConfigError(f"{where or f'--env {name}'}: {exc}") from exc


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
    if args.env:
        check_env_name(args.env)
    if args.config or not resume:
        if not args.config and not args.env:
            raise ConfigError("give --env NAME (or --config PATH, or --resume RUN_DIR)")
        path = find_run_config(args.config) if args.config else default_config_path(args.env)
        config, source = load_run_config(path, overrides), str(path)
        file_env = load_yaml(path).get("env") if overrides else None  # the file's own values
    else:  # resume with the checkpoint's own resolved config
        source = f"{resume} (saved config)"
        config = load_run_config(base=saved["config"], overrides=overrides, source=source)
        file_env = saved["config"]["env"]
    env_name = args.env or config["name"]
    if env_name != config["name"]:
        raise ConfigError(f"--env {env_name} but the run config's 'name' is {config['name']!r}")
    check_env_name(env_name, f"run config {source}: 'name' = {env_name!r}")
    if saved is not None:
        from ai_economist.warp_drive.training.checkpoint_state import check_checkpoint_fits

        check_checkpoint_fits(saved, config, resume)
    torchrun_launch(config)  # trainer.num_gpus and torchrun together: refused before the rest
    check_before_work(
        ENVIRONMENTS[env_name], config, source, args.results_dir, resume, args.dry_run,
        overrides, file_env,
    )  # fmt: skip
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
    except Exception as exc:  # a worker process reports its interrupt itself (rank 0)
        if type(exc).__name__ == "TrainingInterrupted" and ctx is not None and rank == 0:
            print(interrupted_message(exc), file=sys.stderr)
        raise
    finally:
        trainer.graceful_close()


def dry_run_summary(env_name: str, config: dict) -> str:
    """What ``--dry_run`` prints: the checked run, in one line."""
    t, saving = config["trainer"], config["saving"]
    return (
        f"dry run: the run config of {env_name} is valid ({t['num_episodes']} episodes, "
        f"{t['num_envs']} envs, train batch {t['train_batch_size']}, device {t['device']}, "
        f"env backend {t['env_backend']}; runs under {saving['basedir']}); nothing trained"
    )


def interrupted_message(exc: Any) -> str:
    """What a signal stopped, what was saved and the exact command that resumes the run."""
    from ai_economist.warp_drive.training.checkpoint import run_dir_of
    from ai_economist.warp_drive.training.interrupts import resume_hint

    name = signal.Signals(exc.signum).name
    if exc.checkpoint is None:
        return f"{name}: training stopped at iteration {exc.iteration}; no checkpoint was written"
    saved = (
        f"stopped at once; the last checkpoint is {exc.checkpoint}"
        if exc.immediate
        else f"iteration {exc.iteration} finished and saved to {exc.checkpoint}"
    )
    return f"{name}: {saved}\nresume with:\n  {resume_hint(run_dir_of(exc.checkpoint))}"


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
    if args.list_envs:
        for name in sorted(ENVIRONMENTS):
            print(f"{name}  ({ENVIRONMENTS[name].origin})")
        return 0
    try:
        require_modules(["torch"], "ai-economist-train")
        env_name, config, resume = prepare(args)
        torchrun = torchrun_launch(config)
    except (ConfigError, FileNotFoundError, MissingExtraError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted before training started: nothing to save", file=sys.stderr)
        return 130
    if args.dry_run:
        print(dry_run_summary(env_name, config))
        return 0
    from ai_economist.warp_drive.training.durable import EXIT_WRITE_ERROR, OutputWriteError
    from ai_economist.warp_drive.training.trainer import TrainingDiverged, TrainingInterrupted

    num_gpus = config["trainer"]["num_gpus"]
    run_args = (env_name, config, resume, args.results_dir, not args.quiet)
    try:
        if torchrun is not None:
            train_under_torchrun(torchrun, *run_args)
        elif num_gpus > 1:
            from ai_economist.warp_drive.training.distributed import launch

            # Ctrl-C reaches every process: the workers stop together and rank 0 reports
            ignored = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                launch(train_process, num_gpus, run_args)
            finally:
                signal.signal(signal.SIGINT, ignored)
        else:
            train_process(None, *run_args)
    except TrainingDiverged as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OutputWriteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_WRITE_ERROR
    except TrainingInterrupted as exc:
        print(interrupted_message(exc), file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:  # Ctrl-C before training started (building the env, ...)
        print("interrupted before training started: nothing to save", file=sys.stderr)
        return 130
    except OSError as exc:  # e.g. a full disk under TensorBoard's writer, or on resume
        print(f"error: reading or writing the run's files failed: {exc}", file=sys.stderr)
        return EXIT_WRITE_ERROR
    except ConfigError as exc:  # e.g. a checkpoint whose models do not fit the env
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a worker process's error surfaces as a wrapped exception
        text = f"{type(exc).__name__}: {exc}"
        if any(name in text for name in ("TrainingDiverged", "CheckpointError", "RunDirLocked")):
            print(f"error: {exc}", file=sys.stderr)
            return 1 if "TrainingDiverged" in text else 2
        if "OutputWriteError" in text:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_WRITE_ERROR
        if "TrainingInterrupted" in text:  # rank 0 printed what was saved and how to resume
            return 130 if "SIGINT received" in text else 143
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

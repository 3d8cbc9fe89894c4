"""Atomic full-state checkpoints: models, optimizers, RNG streams, counters, config and env.

A checkpoint is one ``torch.save`` file made only of tensors and plain Python containers, so
it loads with ``torch.load(weights_only=True)``.  Files are written to a temporary name and
moved into place with ``os.replace``, so a crash never leaves a truncated checkpoint behind.

The environment's own state (mid-episode simulation arrays, time steps, done flags,
observations, random streams) is included when the env implements
:class:`~ai_economist.warp_drive.env_protocol.StatefulEnv` (:func:`capture_env_state`), so a
resume continues the interrupted episodes; otherwise, and for checkpoints written without it,
the envs restart from a reset, with a warning (:func:`restore_env_state`).
"""

from __future__ import annotations

import os
import random
import re
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ai_economist.warp_drive.env_protocol import StatefulEnv
from ai_economist.warp_drive.env_state import EnvStateMismatch, to_checkpoint

FORMAT_VERSION = 1
CHECKPOINT_DIR = "checkpoints"
_NAME = re.compile(r"^ckpt_(\d+)\.pt$")


def checkpoint_path(run_dir: str | Path, iteration: int) -> Path:
    return Path(run_dir) / CHECKPOINT_DIR / f"ckpt_{iteration:08d}.pt"


def save_checkpoint(path: str | Path, state: dict[str, Any]) -> Path:
    """Write ``state`` to ``path`` atomically (temporary file, then ``os.replace``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        torch.save(state, tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def list_checkpoints(run_dir: str | Path) -> list[Path]:
    """The run's checkpoints, oldest first."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _NAME.match(p.name))]
    return [p for _, p in sorted(found)]


def find_checkpoint(path_or_run_dir: str | Path) -> Path:
    """A checkpoint file, or the newest checkpoint of a run directory.

    Raises:
        FileNotFoundError: with a message saying what was looked for.
    """
    path = Path(path_or_run_dir)
    if path.is_file():
        return path
    if path.is_dir():
        candidates = list_checkpoints(path)
        if not candidates and path.name == CHECKPOINT_DIR:
            candidates = list_checkpoints(path.parent)
        if candidates:
            return candidates[-1]
        raise FileNotFoundError(f"no checkpoint (checkpoints/ckpt_*.pt) in run directory {path}")
    raise FileNotFoundError(f"checkpoint or run directory {path} does not exist")


def run_dir_of(checkpoint: str | Path) -> Path:
    """The run directory that holds ``checkpoint`` (``<run_dir>/checkpoints/ckpt_N.pt``)."""
    checkpoint = Path(checkpoint).resolve()
    if checkpoint.parent.name == CHECKPOINT_DIR:
        return checkpoint.parent.parent
    return checkpoint.parent


def prune_checkpoints(run_dir: str | Path, keep: int) -> None:
    """Delete all but the ``keep`` newest checkpoints (``keep == 0`` keeps everything)."""
    if keep > 0:
        for old in list_checkpoints(run_dir)[:-keep]:
            old.unlink(missing_ok=True)


def set_aside_newer(run_dir: str | Path, iteration: int) -> Path | None:
    """Move the checkpoints written after ``iteration`` into ``checkpoints/superseded_<time>/``.

    Resuming from an older checkpoint starts a new branch of the curve; the old branch's later
    checkpoints are kept, but no longer count as the run's newest.
    """
    newer = [p for p in list_checkpoints(run_dir) if int(_NAME.match(p.name).group(1)) > iteration]
    if not newer:
        return None
    folder = Path(run_dir) / CHECKPOINT_DIR / f"superseded_{int(time.time())}"
    folder.mkdir(parents=True, exist_ok=True)
    for path in newer:
        os.replace(path, folder / path.name)
    return folder


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict:
    """Load a checkpoint written by :func:`save_checkpoint`."""
    state = torch.load(Path(path), map_location=map_location, weights_only=True)
    version = state.get("format_version")
    if version != FORMAT_VERSION:
        raise ValueError(f"{path}: unsupported checkpoint format {version!r}")
    return state


def global_rng_states() -> dict[str, Any]:
    """The global torch, CUDA, numpy and Python random states (weights_only-safe types)."""
    np_state = np.random.get_state()
    states: dict[str, Any] = {
        "torch": torch.get_rng_state(),
        "numpy": {
            "keys": torch.from_numpy(np_state[1].astype(np.int64)),
            "pos": int(np_state[2]),
            "has_gauss": int(np_state[3]),
            "cached_gaussian": float(np_state[4]),
        },
        "python": _to_lists(random.getstate()),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def restore_global_rng_states(states: dict[str, Any]) -> None:
    """Undo :func:`global_rng_states`."""
    torch.set_rng_state(states["torch"].cpu())
    np_state = states["numpy"]
    np.random.set_state(
        (
            "MT19937",
            np_state["keys"].numpy().astype(np.uint32),
            np_state["pos"],
            np_state["has_gauss"],
            np_state["cached_gaussian"],
        )
    )
    random.setstate(_to_tuples(states["python"]))
    if "cuda" in states and torch.cuda.is_available():
        cuda_states = [s.cpu() for s in states["cuda"]]
        if len(cuda_states) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(cuda_states)


def _to_lists(value: Any) -> Any:
    return [_to_lists(v) for v in value] if isinstance(value, tuple | list) else value


def _to_tuples(value: Any) -> Any:
    return tuple(_to_tuples(v) for v in value) if isinstance(value, list) else value


def to_cpu(value: Any) -> Any:
    """A copy of nested dicts/lists/tuples with every tensor moved to the CPU."""
    if torch.is_tensor(value):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {k: to_cpu(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(to_cpu(v) for v in value)
    return value


def capture_env_state(env: Any) -> dict[str, Any] | None:
    """The env's state in checkpoint form (CPU tensors and plain values), or None with a
    warning when the env cannot provide one (a resume then restarts its episodes)."""
    if not isinstance(env, StatefulEnv):
        warnings.warn(
            f"{type(env).__name__} has no state_dict(): checkpoints do not include the env "
            f"state, and a resume restarts the envs from a reset",
            stacklevel=2,
        )
        return None
    try:
        state = env.state_dict()
    except NotImplementedError as err:
        warnings.warn(
            f"checkpoints do not include the env state ({err}); a resume restarts the envs "
            f"from a reset",
            stacklevel=2,
        )
        return None
    return to_checkpoint(state)


def restore_env_state(env: Any, state: dict[str, Any] | None) -> bool:
    """Load a saved env state; False (with a warning) when there is none or it does not fit,
    in which case the env keeps its fresh reset and the caller restarts its episode tracking."""
    if state is None:
        reason = "the checkpoint has no env state (older checkpoint, or an env without one)"
    elif not isinstance(env, StatefulEnv):
        reason = f"{type(env).__name__} has no load_state_dict()"
    else:
        try:
            env.load_state_dict(state)
            return True
        except (NotImplementedError, EnvStateMismatch) as err:
            reason = f"the saved env state cannot be loaded: {err}"
    warnings.warn(
        f"{reason}; the envs restart from a reset, so the resumed run is not bit for bit the "
        f"uninterrupted one",
        stacklevel=2,
    )
    return False
